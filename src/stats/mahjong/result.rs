//! A finished mahjong session: what the report, the JSON and the judgement read.

use std::time::Duration;

use super::Recorder;
use crate::plan::MahjongPlan;
use crate::sys::procstat::ServerUsage;

/// A finished session.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub plan: MahjongPlan,
    pub elapsed: Duration,
    /// Ctrl-C.
    pub interrupted: bool,
    /// What ended it: `done` (every game played), `duration`, `SIGINT`, `SIGTERM`, `SIGHUP`.
    pub ended_by: crate::stats::end::EndReason,
    /// The `-d` limit ended the session before every game was over.
    pub timed_out: bool,
    /// Signals caught while the players logged out (besides one that ended the session).
    pub signals_in_logout: Vec<String>,
    pub record: Recorder,
    /// tsumo's own CPU time (user + system) and peak resident memory.
    pub cpu_seconds: f64,
    pub peak_rss_bytes: u64,
    /// CPU and memory of the `--server-pid` processes during the session.
    pub server: Option<ServerUsage>,
    /// When the session started, and when it was meant to (`--start-at`).
    pub start: crate::stats::start::StartRecord,
    /// `--requests`: where the replies' log went; `None` without it.
    pub requests_log: Option<crate::stats::requests::RequestsLog>,
}
