//! The merged outcome of one HTTP run: what the report, the JSON and the judgement read.

use std::time::Duration;

use hdrhistogram::Histogram;

use super::counters::Counters;
use super::shortfall::{self, Shortfall};
use super::split;
use super::stages::RunStages;
use super::timeline::RunTimeline;
use crate::plan::Plan;
use crate::stats::{end, start};
use crate::sys::procstat::ServerUsage;
use crate::sys::usage::OwnUsage;

/// The merged outcome of one run.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub plan: Plan,
    /// Wall time from the start of traffic to the stop (duration end, Ctrl-C or script stop).
    pub elapsed: Duration,
    /// Stopped by Ctrl-C before the planned duration.
    pub interrupted: bool,
    pub counters: Counters,
    /// Corrected latency, µs (with no `-R`, the same samples as `uncorrected`).
    pub latency: Histogram<u64>,
    /// Uncorrected latency, µs.
    pub uncorrected: Histogram<u64>,
    /// Send lateness (actual − intended send time), µs.
    pub send_lateness: Histogram<u64>,
    /// The corrected latency split into what the server caused and what tsumo added, µs.
    pub split: split::SplitHistograms,
    /// Where the receive times came from.
    pub timestamps: split::Timestamps,
    /// User-space stamps because `TSUMO_TIMESTAMPS=user` asked for them.
    pub timestamps_asked: bool,
    /// Requests completed per second per thread: one sample per thread per second of the run.
    pub req_per_sec: Histogram<u64>,
    /// Explanations of conditions met during the run (EMFILE, EADDRNOTAVAIL, the generator
    /// falling behind), each printed once after the totals.
    pub notes: Vec<String>,
    /// CPU and memory of the server processes sampled during the run (`--server-pid`).
    pub server: Option<ServerUsage>,
    /// What ended the run: the duration, a signal, every script thread stopped, a script
    /// error, or a capacity step's settled errors.
    pub ended_by: end::EndReason,
    /// tsumo's own CPU time and peak memory.
    pub usage: OwnUsage,
    /// Set when a fixed-rate run did not reach its rate.
    pub shortfall: Option<Shortfall>,
    /// Set when tsumo sent behind its own schedule, with the cause.
    pub behind: Option<shortfall::Behind>,
    /// When the run started, and when it was meant to (`--start-at`).
    pub start: start::StartRecord,
    /// The run interval by interval (`--interval`); `None` where not recorded.
    pub timeline: Option<RunTimeline>,
    /// Each `--stages` stage's own results; `None` without stages.
    pub stages: Option<RunStages>,
}
