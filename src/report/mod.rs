//! Renderers of a finished run: wrk2's text layout (`text`), JSON (`json`).
//!
//! A [`RunResult`] is everything a renderer needs; renderers never look at the engine.

pub mod compare;
pub mod format;
pub mod hgrm;
pub mod json;
pub mod merge;
pub mod plot;
pub mod saved;
pub mod text;

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::plan::Plan;
use crate::stats::Counters;
use crate::sys::procstat::ServerUsage;

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
    /// Requests completed per second per thread: one sample per thread per second of the run.
    pub req_per_sec: Histogram<u64>,
    /// Explanations of conditions met during the run (EMFILE, EADDRNOTAVAIL, the generator
    /// falling behind), each printed once after the totals.
    pub notes: Vec<String>,
    /// CPU and memory of the server processes sampled during the run (`--server-pid`).
    pub server: Option<ServerUsage>,
}
