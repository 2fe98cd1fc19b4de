//! The progress line on stderr: rewritten in place on a terminal, one line a second with
//! `--progress` otherwise; each mode writes its own line.

use std::io::{IsTerminal, Write};

/// How progress is shown on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    Off,
    /// Rewrites one line in place.
    Terminal,
    /// One line per second (stderr is a file or pipe and `--progress` was given).
    Lines,
}

impl ProgressMode {
    /// A progress line when stderr is a terminal (unless quiet), or with `--progress`.
    pub fn choose(requested: bool, quiet: bool) -> ProgressMode {
        let tty = std::io::stderr().is_terminal();
        match (tty, requested, quiet) {
            (true, _, false) | (true, true, true) => ProgressMode::Terminal,
            (false, true, _) => ProgressMode::Lines,
            _ => ProgressMode::Off,
        }
    }

    /// Shows one status line (any mode).
    pub fn show_line(self, line: &str) {
        let mut err = std::io::stderr().lock();
        let _ = match self {
            ProgressMode::Off => Ok(()),
            ProgressMode::Terminal => write!(err, "\r\x1b[K{line}"),
            ProgressMode::Lines => writeln!(err, "{line}"),
        };
        let _ = err.flush();
    }

    /// Clears the progress line before the report.
    pub fn finish(self) {
        if self == ProgressMode::Terminal {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}
