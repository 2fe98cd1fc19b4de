//! Live progress: per-worker atomic counters that the main thread reads once a second, both for
//! the status line on stderr and for the per-second Req/Sec samples of the report.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::stats::format::format_metric;

/// Counters a worker updates as it goes (relaxed atomics: read for display only).
#[derive(Debug, Default)]
pub struct LiveCounters {
    pub requests: AtomicU64,
    pub errors: AtomicU64,
}

impl LiveCounters {
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
}

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
    /// A live line when stderr is a terminal (unless quiet), or with `--progress`.
    pub fn choose(requested: bool, quiet: bool) -> ProgressMode {
        let tty = std::io::stderr().is_terminal();
        match (tty, requested, quiet) {
            (true, _, false) | (true, true, true) => ProgressMode::Terminal,
            (false, true, _) => ProgressMode::Lines,
            _ => ProgressMode::Off,
        }
    }

    /// Shows one status update.
    pub fn show(self, elapsed: Duration, total: Duration, rate: f64, requests: u64, errors: u64) {
        self.show_line(&format!(
            "[{:>5.1}s / {:.0}s] {} req/s, {} requests, {} errors",
            elapsed.as_secs_f64(),
            total.as_secs_f64(),
            format_metric(rate),
            requests,
            errors
        ));
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

    /// Clears the live line before the report.
    pub fn finish(self) {
        if self == ProgressMode::Terminal {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[K");
            let _ = err.flush();
        }
    }
}
