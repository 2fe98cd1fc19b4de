//! Errors that stop tsumo before or instead of a run. Each renders as one line for stderr;
//! `main` prints it and exits with its [`Error::exit_status`]. Failures during a run are not
//! errors: they are counted.

use thiserror::Error;

/// What tsumo's exit status tells a script (docs/exit-status.md, the README's "Exit status",
/// and `--help`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: the run ran (or the tool did its work); the report says how it went.
    Ran,
    /// 1: the run failed: errors (no response at all, a script error, output lost), sessions
    /// left on the server, a failed doctor check, or the target or the machine failing it
    /// (nothing answers, TLS refused, no thread).
    Failed,
    /// 2: bad command line or input, found before any traffic: an option or value, a file
    /// named on the command line (a script, a rule file, a saved run, `--cacert`), an output
    /// path, a `--bind` address, a limit the command line does not fit. Fix it and run again.
    BadInput,
    /// 99: the run ran and an objective (`--slo`) broke; the report and the JSON say which
    /// (k6's status for a threshold crossed). A run that failed stays 1.
    ObjectiveBroken,
}

impl ExitStatus {
    /// The process's exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Ran => 0,
            ExitStatus::Failed => 1,
            ExitStatus::BadInput => 2,
            ExitStatus::ObjectiveBroken => 99,
        }
    }
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(status: ExitStatus) -> Self {
        std::process::ExitCode::from(status.code())
    }
}

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
    /// The open-file limit cannot hold `-c` connections.
    #[error("{0}")]
    Limits(String),
    /// An input file (a saved run, `--cacert`) that cannot be read or does not parse.
    #[error("{path}: {reason}")]
    File { path: String, reason: String },
    /// An output (`--json`, `--hgrm`, `-o`) that could not be written after the work was done.
    #[error("{path}: {reason}")]
    Write { path: String, reason: String },
    /// An output file that cannot be written, found before any traffic.
    #[error("{flag} {path}: cannot write there: {reason} (checked before the run)")]
    Output {
        flag: String,
        path: String,
        reason: String,
    },
    #[error("cannot start worker thread: {0}")]
    Thread(String),
    /// A `--script` that does not load: no file, a Lua error, a bad `request()`, an error in
    /// `setup()` or `init()`; all before any traffic.
    #[error("{0}")]
    Script(String),
    /// The script's `done()` failed, after the run and its report.
    #[error("{0}")]
    ScriptDone(String),
    /// The run was stopped before it started (a signal while waiting for `--start-at`).
    #[error("{0}")]
    Stopped(String),
}

impl Error {
    /// The exit status this error ends tsumo with: bad input (2) when the user must fix the
    /// command line or a file it names; a failed run (1) when the target, the machine or the
    /// run itself failed.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            Error::Usage(_)
            | Error::Bind(_)
            | Error::Limits(_)
            | Error::File { .. }
            | Error::Output { .. }
            | Error::Script(_) => ExitStatus::BadInput,
            // The command line was sound; the network, the server or the machine said no.
            Error::Resolve { .. }
            | Error::Connect { .. }
            | Error::Tls { .. }
            | Error::NoH2c { .. }
            | Error::Thread(_)
            | Error::Stopped(_)
            | Error::Write { .. }
            | Error::ScriptDone(_) => ExitStatus::Failed,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_says_its_exit_status() {
        let bad = [
            Error::Usage("x".into()),
            Error::Bind("x".into()),
            Error::Limits("x".into()),
            Error::Script("x".into()),
            Error::File {
                path: "p".into(),
                reason: "r".into(),
            },
        ];
        for e in &bad {
            assert_eq!(e.exit_status(), ExitStatus::BadInput, "{e:?}");
        }
        let failed = [
            Error::Connect {
                addr: "127.0.0.1:9".into(),
                reason: "refused".into(),
            },
            Error::ScriptDone("x".into()),
            Error::Write {
                path: "p".into(),
                reason: "r".into(),
            },
            Error::Stopped("x".into()),
        ];
        for e in &failed {
            assert_eq!(e.exit_status(), ExitStatus::Failed, "{e:?}");
        }
        let codes = [
            ExitStatus::Ran,
            ExitStatus::Failed,
            ExitStatus::BadInput,
            ExitStatus::ObjectiveBroken,
        ]
        .map(ExitStatus::code);
        assert_eq!(codes, [0, 1, 2, 99]);
    }
}
