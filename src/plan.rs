//! The validated, immutable description of a run, shared by every mode.
//!
//! `cli` turns argv into a `Plan`; everything after that (engine, report) reads it and never
//! re-validates. Keeping it plain data makes it easy to print in the report and store in JSON.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    Http,
    Https,
}

impl Scheme {
    /// The default port for the scheme, used when the URL has none.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// The URL under test, split the way the engine and the Lua API need it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    /// The URL exactly as typed (printed in the report header, as wrk2 does).
    pub url: String,
    pub scheme: Scheme,
    /// Host without IPv6 brackets.
    pub host: String,
    /// The port as written in the URL, if any (wrk's `wrk.port` is nil without one).
    pub explicit_port: Option<u16>,
    /// Path + query, `/` when the URL has none. The fragment is not sent.
    pub path: String,
}

impl Target {
    /// The port to connect to.
    pub fn port(&self) -> u16 {
        self.explicit_port
            .unwrap_or_else(|| self.scheme.default_port())
    }

    /// The default `Host` header value: host (bracketed for IPv6), plus `:port` only if the URL
    /// gave one — as wrk does.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.explicit_port {
            Some(p) => format!("{host}:{p}"),
            None => host,
        }
    }
}

/// Where `--json` writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum JsonOut {
    Stdout,
    File(PathBuf),
}

/// Everything a run needs, validated.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub target: Target,
    /// Worker threads (`-t`), at least 1.
    pub threads: usize,
    /// Total connections (`-c`), at least `threads`; the remainder of `c / t` is spread over the
    /// first threads, never dropped.
    pub connections: usize,
    /// Run length (`-d`).
    pub duration: Duration,
    /// Total target rate in requests/s (`-R`). `None` means closed loop at full speed.
    pub rate: Option<u64>,
    /// Lua script (`-s`).
    pub script: Option<PathBuf>,
    /// Extra headers (`-H`), in command-line order; a later duplicate name replaces an earlier one.
    pub headers: Vec<(String, String)>,
    /// `-L`: print the latency distribution and spectrum.
    pub latency: bool,
    /// `-U`: also print the uncorrected distribution (implies `latency`).
    pub u_latency: bool,
    /// `-B`: with pipelining, record only the last response of each batch.
    pub batch_latency: bool,
    /// Per-request timeout (`-T/--timeout`).
    pub timeout: Duration,
    /// `-k/--insecure`: do not verify the server certificate.
    pub insecure: bool,
    /// `--cacert FILE`: extra trusted roots (PEM).
    pub cacert: Option<PathBuf>,
    /// `--json FILE|-`.
    pub json: Option<JsonOut>,
    /// `--quiet`: no text report on stdout.
    pub quiet: bool,
    /// `--progress`: live status line on stderr even when it is not a terminal.
    pub progress: bool,
    /// Positional arguments after the URL (and after `--`), for the script's `init(args)`.
    pub script_args: Vec<String>,
}

impl Plan {
    /// Connections owned by worker `thread`: `c / t`, plus one for the first `c % t` threads.
    pub fn connections_for_thread(&self, thread: usize) -> usize {
        let base = self.connections / self.threads;
        base + usize::from(thread < self.connections % self.threads)
    }
}
