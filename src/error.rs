//! Errors that stop tsumo before or instead of a run. Each renders as one line for stderr;
//! `main` prints it and exits 1. Failures during a run are not errors: they are counted.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    /// Bad command line (message already says what is wrong and how to fix it).
    #[error("{0}")]
    Usage(String),
    #[error("unable to resolve {host}:{port}: {reason}")]
    Resolve {
        host: String,
        port: u16,
        reason: String,
    },
    #[error("unable to connect to {addr}: {reason}")]
    Connect { addr: String, reason: String },
    #[error("TLS handshake with {host} failed: {reason}")]
    Tls { host: String, reason: String },
    /// `--http2` on an http:// URL whose server does not answer HTTP/2's preface.
    #[error("{addr} does not speak h2c (HTTP/2 with prior knowledge over http://): {reason}")]
    NoH2c { addr: String, reason: String },
    /// A `--bind` source address that cannot be used.
    #[error("--bind: {0}")]
    Bind(String),
    #[error("{0}")]
    Limits(String),
    #[error("{path}: {reason}")]
    File { path: String, reason: String },
    /// An output file that cannot be written, found before any traffic.
    #[error("{flag} {path}: cannot write there: {reason} (checked before the run)")]
    Output {
        flag: String,
        path: String,
        reason: String,
    },
    #[error("cannot start worker thread: {0}")]
    Thread(String),
    #[error("{0}")]
    Script(String),
    /// The run was stopped before it started (a signal while waiting for `--start-at`).
    #[error("{0}")]
    Stopped(String),
}

pub type Result<T> = std::result::Result<T, Error>;
