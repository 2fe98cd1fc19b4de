//! Recording what happened: histograms and counters, knowing nothing about the network. One
//! folder per kind of load, as `report/` has: `http` (an HTTP run's recorder, counters,
//! intervals, the split of latency, the shortfall, the protocols' counters) and `mahjong` (a
//! session's). At the root only what knows no kind: `hdr`, the arithmetic that reproduces the
//! C HdrHistogram used by wrk2 (percentiles, mean, stdev), so printed numbers match wrk2's for
//! the same samples; `format`, the numbers as wrk2 prints them; `start` and `end`, when a run
//! started and why it ended; `timeline`, the interval clock, packed histograms and a timeline
//! generic over its kind's interval; `sink`, the trait a recorder hands each closed interval
//! to; `requests`, the format of `--requests`' per-request log; and `live`, what `--dashboard`
//! shows, with its one dispatcher over the kinds.
//!
//! Every worker owns one recorder of its kind (no locks on the hot path); the engine merges
//! them once at the end into the kind's run result.

pub mod end;
pub mod format;
pub mod hdr;
pub mod http;
pub mod live;
pub mod mahjong;
pub mod requests;
pub mod sink;
pub mod start;
pub mod timeline;
pub mod ws;

use hdrhistogram::Histogram;

/// Highest value a histogram holds: one day in µs, wrk2's `MAX_LATENCY`.
pub const HIST_MAX_US: u64 = 86_400_000_000;

/// Converts a nanosecond span to whole microseconds (the histograms' unit), rounding to nearest.
#[inline]
pub fn to_us(ns: u64) -> u64 {
    (ns + 500) / 1000
}

/// A histogram with wrk2's parameters: 1 µs to 1 day, 3 significant figures.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, 3).expect("constant histogram bounds are valid")
}
