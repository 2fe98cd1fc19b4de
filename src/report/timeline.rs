//! The run over time as saved, whatever the kind: an interval's histogram, span and server
//! samples, and the merge of a kind's `intervals` (each kind's own intervals are in its
//! folder's `intervals`).
//!
//! Each interval says where it lies twice: `start_s` from the run's start, and `start_unix_ns`
//! on the wall clock (with `--start-at`, interval `k` of every shard is the same wall-clock span).
//! Its histograms are whole, in the run's codec ([`encode_histogram`]), beside the figures read
//! from them, so `tsumo merge` adds shards' intervals exactly: lined up by wall clock, decoded,
//! added, encoded again.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::report::schema::{decode_histogram, encode_histogram};
use crate::stats::hdr;
use crate::stats::live::LiveRun;
use crate::stats::new_histogram;
use crate::stats::timeline::{ServerInterval, Timeline};

/// One histogram of an interval: the figures, and the whole histogram (base64 HdrHistogram
/// compressed V2, as the run's own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalHistogram {
    pub count: u64,
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
    pub histogram: String,
}

impl IntervalHistogram {
    pub fn of(h: &Histogram<u64>) -> IntervalHistogram {
        IntervalHistogram {
            count: h.len(),
            p50: hdr::value_at_percentile(h, 50.0),
            p99: hdr::value_at_percentile(h, 99.0),
            max: hdr::max(h),
            histogram: encode_histogram(h),
        }
    }

    pub fn decode(&self) -> Result<Histogram<u64>, Error> {
        decode_histogram(&self.histogram)
    }
}

/// The server's samples in one interval (`--server-pid`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedServerInterval {
    pub samples: u64,
    /// The mean of the samples' CPU, percent of one core.
    pub cpu_percent: f64,
    /// The highest resident memory sampled, bytes.
    pub rss_bytes: u64,
}

impl SavedServerInterval {
    pub(crate) fn of(server: &ServerInterval) -> SavedServerInterval {
        SavedServerInterval {
            samples: server.samples,
            cpu_percent: server.cpu_percent,
            rss_bytes: server.rss_bytes,
        }
    }

    pub(crate) fn add(&mut self, other: &SavedServerInterval) {
        let samples = self.samples + other.samples;
        if samples > 0 {
            self.cpu_percent = (self.cpu_percent * self.samples as f64
                + other.cpu_percent * other.samples as f64)
                / samples as f64;
        }
        self.samples = samples;
        self.rss_bytes = self.rss_bytes.max(other.rss_bytes);
    }
}

/// Where an interval lies.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IntervalSpan {
    /// From the run's start, seconds.
    pub start_s: f64,
    /// On the wall clock, Unix ns.
    pub start_unix_ns: u64,
    /// Its length, seconds (the last one ends with the run).
    pub duration_s: f64,
}

/// The spans of `count` intervals of `length` ns from a start, the last one ending at `elapsed_s`.
pub(crate) fn spans(
    count: usize,
    length: u64,
    start_unix_ns: u64,
    elapsed_s: f64,
) -> Vec<IntervalSpan> {
    let length_s = length as f64 / 1e9;
    (0..count)
        .map(|k| {
            let start_s = k as f64 * length_s;
            let duration_s = if k + 1 == count {
                (elapsed_s - start_s).clamp(0.0, length_s)
            } else {
                length_s
            };
            IntervalSpan {
                start_s,
                start_unix_ns: start_unix_ns.saturating_add(length.saturating_mul(k as u64)),
                duration_s,
            }
        })
        .collect()
}

/// The whole intervals of a live run already laid out as saved, kept between the dashboard's
/// renders: each is laid out (its histograms encoded) once, not at every render of a long run.
#[derive(Debug)]
pub struct Laid<T> {
    pub intervals: Vec<T>,
}

impl<T> Default for Laid<T> {
    fn default() -> Self {
        Laid {
            intervals: Vec::new(),
        }
    }
}

impl<T> Laid<T> {
    /// How many of the `whole` intervals are laid out already: none once the run `ended` (its
    /// intervals were replaced by the merged timeline's, laid out again, once).
    pub fn kept(&mut self, ended: bool, whole: usize) -> usize {
        if ended || self.intervals.len() > whole {
            self.intervals.clear();
        }
        self.intervals.len()
    }

    /// Lays out a run's whole intervals not laid out yet (from the first on, stopping at the
    /// first that is not whole) with `saved`, the kind's timeline → saved intervals (given the
    /// new intervals, their wall-clock start and their span in seconds), each moved to its place
    /// in the run by `start_s`; returns the seconds the whole intervals span.
    pub fn lay<I: Clone>(
        &mut self,
        run: &LiveRun,
        handed: &BTreeMap<u64, (usize, I)>,
        saved: impl FnOnce(&Timeline<I>, u64, f64) -> Vec<T>,
        start_s: impl Fn(&mut T) -> &mut f64,
    ) -> f64 {
        let whole = run.whole(handed);
        let done = self.kept(run.ended, whole);
        let length_s = run.length as f64 / 1e9;
        let timeline = Timeline {
            length: Some(run.length),
            intervals: handed
                .values()
                .skip(done)
                .take(whole - done)
                .enumerate()
                .map(|(k, (_, interval))| (k as u64, interval.clone()))
                .collect(),
        };
        let start = run
            .start_unix_ns
            .unwrap_or_default()
            .saturating_add(run.length.saturating_mul(done as u64));
        let count = timeline.intervals.len();
        for mut interval in saved(&timeline, start, count as f64 * length_s) {
            *start_s(&mut interval) += done as f64 * length_s;
            self.intervals.push(interval);
        }
        whole as f64 * length_s
    }
}
/// How saved intervals are added: spans aside, every count and histogram.
pub(crate) trait Addable: Clone {
    fn span(&self) -> IntervalSpan;
    fn span_mut(&mut self) -> &mut IntervalSpan;
    fn add(&mut self, other: &Self, source: &str) -> Result<(), Error>;
}

pub(crate) fn add_histograms(
    sum: &mut IntervalHistogram,
    other: &IntervalHistogram,
    source: &str,
) -> Result<(), Error> {
    let read = |h: &IntervalHistogram| {
        h.decode().map_err(|e| Error::File {
            path: source.to_string(),
            reason: format!("an interval's histogram: {e}"),
        })
    };
    let mut total = new_histogram();
    // Same bounds on both sides: adding cannot fail.
    let _ = total.add(read(sum)?);
    let _ = total.add(read(other)?);
    *sum = IntervalHistogram::of(&total);
    Ok(())
}

/// The length of a run's intervals, ns: the longest (only a last interval is shorter); `None`
/// without intervals, or with only one (its length says nothing of `--interval`).
pub(crate) fn length_ns<T: Addable>(intervals: &[T]) -> Option<u64> {
    if intervals.len() < 2 {
        return None;
    }
    intervals
        .iter()
        .map(|i| (i.span().duration_s * 1e9).round() as u64)
        .max()
        .filter(|&n| n > 0)
}

/// The common interval of parts whose interval lengths are `lengths` (with their sources): the
/// longest, when every other divides it (1 s and 500 ms: 1 s); else the error naming two parts.
pub fn common_length(lengths: &[(u64, &str)]) -> Result<Option<u64>, Error> {
    let Some(&(longest, long_source)) = lengths.iter().max_by_key(|(n, _)| *n) else {
        return Ok(None);
    };
    for &(n, source) in lengths {
        if longest % n != 0 {
            return Err(Error::Usage(format!(
                "merge: {source} has intervals of {} but {long_source} of {}: their timelines do \
                 not add up (give every part the same --interval, or ones that divide each other)",
                seconds(n),
                seconds(longest)
            )));
        }
    }
    Ok(Some(longest))
}

/// ns as seconds for a message: `1 s`, `0.5 s`.
pub fn seconds(ns: u64) -> String {
    format!("{} s", ns as f64 / 1e9)
}

/// The intervals of runs made side by side, added where they cover the same wall-clock span.
///
/// The interval length is the longest any part has; a part with shorter intervals that divide
/// it is resampled (1 s from 500 ms: two intervals added into one, histograms exactly), and
/// parts whose lengths do not divide are refused. Each interval goes to the slot its wall-clock
/// start falls in (to the nearest of its own length), counted from the earliest start. With
/// `--start-at` every shard's interval `k` starts on the same nanosecond, so they line up
/// exactly; without it, shards that started apart are lined up to the nearest interval. Parts
/// without intervals (files of older tsumos) leave the merge without them.
pub(crate) fn merge_aligned<T: Addable>(parts: &[(&[T], &str)]) -> Result<Vec<T>, Error> {
    if parts.is_empty() || parts.iter().any(|(intervals, _)| intervals.is_empty()) {
        return Ok(Vec::new());
    }
    let lengths: Vec<(u64, &str)> = parts
        .iter()
        .filter_map(|(intervals, source)| Some((length_ns(intervals)?, *source)))
        .collect();
    let length = match common_length(&lengths)? {
        Some(length) => length,
        // One interval each: its longest.
        None => parts
            .iter()
            .filter_map(|(intervals, _)| intervals.first())
            .map(|i| (i.span().duration_s * 1e9).round() as u64)
            .max()
            .unwrap_or(0),
    };
    if length == 0 {
        return Ok(Vec::new());
    }
    let origin = parts
        .iter()
        .filter_map(|(intervals, _)| intervals.first().map(|i| i.span().start_unix_ns))
        .min()
        .unwrap_or(0);
    let mut slots: BTreeMap<u64, T> = BTreeMap::new();
    for (intervals, source) in parts {
        let own = length_ns(intervals).unwrap_or(length);
        let same_origin = intervals.first().map(|i| i.span().start_unix_ns) == Some(origin);
        for interval in *intervals {
            let from_origin = interval.span().start_unix_ns.saturating_sub(origin);
            // To the nearest of its own length: a 500 ms interval at 0.5 s is in slot 0.
            let slot = (from_origin + own / 2) / length;
            let duration_ns = (interval.span().duration_s * 1e9).round() as u64;
            // How far into its slot it reaches (a resampled slot is as long as its parts).
            let reach = (from_origin + duration_ns)
                .saturating_sub(slot * length)
                .min(length)
                .max(duration_ns);
            let reach_s = reach as f64 / 1e9;
            match slots.get_mut(&slot) {
                Some(sum) => {
                    sum.add(interval, source)?;
                    let span = sum.span_mut();
                    span.duration_s = span.duration_s.max(reach_s);
                }
                None => {
                    let mut first = interval.clone();
                    let start_unix_ns = origin + slot * length;
                    // An interval that is its slot keeps its own figures: through ns they
                    // could come back a bit off (a merge of one run is that run exactly).
                    let own_span = same_origin
                        && interval.span().start_unix_ns == start_unix_ns
                        && reach == duration_ns;
                    if !own_span {
                        *first.span_mut() = IntervalSpan {
                            start_s: slot as f64 * length as f64 / 1e9,
                            start_unix_ns,
                            duration_s: reach_s,
                        };
                    }
                    slots.insert(slot, first);
                }
            }
        }
    }
    Ok(slots.into_values().collect())
}
