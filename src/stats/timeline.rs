//! The run over time, for every kind: where the intervals of `--interval` (1 s by default)
//! fall, a histogram kept small until the run ends, the intervals of a run by index (a
//! [`Timeline`] generic over its kind's [`Interval`]), and the server's samples by
//! interval. Each kind's own interval is in
//! its folder (`stats::http::timeline`, `stats::mahjong::timeline`).
//!
//! Interval `k` is `[t0 + k·length, t0 + (k+1)·length)` from the run's start instant `t0` (with
//! `--start-at`, the same wall-clock span in every shard). Each worker keeps its own intervals
//! (share-nothing, as its recorder); the engine's merge adds them index by index, exactly: a
//! closed interval's histograms are kept V2-serialized (small, and cheap enough on the worker's
//! thread once an interval), and every sample lands in exactly one interval, so the intervals
//! add up to the whole run's histograms and counters.
//!
//! Times here are CLOCK_MONOTONIC nanoseconds (the `timing` clock, which this layer sits below).

use std::collections::BTreeMap;
use std::io::Cursor;
use std::time::Duration;

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;

use super::new_histogram;
pub use crate::sys::procstat::ServerSample;

/// `--interval`'s default.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// The shortest `--interval`.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// Where the intervals of a run fall on CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalClock {
    /// The run's start instant.
    pub t0: u64,
    /// One interval, ns (at least 1).
    pub length: u64,
}

impl IntervalClock {
    pub fn new(t0: u64, length: Duration) -> IntervalClock {
        IntervalClock {
            t0,
            length: (length.as_nanos().min(u128::from(u64::MAX)) as u64).max(1),
        }
    }

    /// The interval holding instant `at` (0 for instants before the start).
    pub fn index(&self, at: u64) -> u64 {
        at.saturating_sub(self.t0) / self.length
    }

    /// Where interval `index` ends (the next one begins).
    pub fn end_of(&self, index: u64) -> u64 {
        self.t0
            .saturating_add(index.saturating_add(1).saturating_mul(self.length))
    }
}

/// A histogram kept small while it waits for the end of the run: V2-serialized (without
/// deflate, so packing costs little on a worker's thread); empty for an empty histogram.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packed(Vec<u8>);

impl Packed {
    pub fn pack(h: &Histogram<u64>) -> Packed {
        if h.is_empty() {
            return Packed::default();
        }
        let mut bytes = Vec::new();
        // Fails only for counts beyond i64, which no interval reaches.
        match V2Serializer::new().serialize(h, &mut bytes) {
            Ok(_) => Packed(bytes),
            Err(_) => Packed::default(),
        }
    }

    /// The histogram, with the run's bounds (an unreadable one, which `pack` never makes, is
    /// empty).
    pub fn unpack(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        if self.0.is_empty() {
            return h;
        }
        let read: Result<Histogram<u64>, _> =
            Deserializer::new().deserialize(&mut Cursor::new(&self.0));
        if let Ok(read) = read {
            let _ = h.add(&read);
        }
        h
    }

    /// Adds `other` into this one, exactly.
    pub fn add(&mut self, other: &Packed) {
        if other.0.is_empty() {
            return;
        }
        if self.0.is_empty() {
            self.0 = other.0.clone();
            return;
        }
        let mut sum = self.unpack();
        let _ = sum.add(other.unpack());
        *self = Packed::pack(&sum);
    }
}

/// One interval of a kind: what it recorded, added to another of its kind exactly.
pub trait Interval: Clone + Default {
    fn add(&mut self, other: &Self);
}

/// A run's intervals by index (one worker's, or once merged the run's), of any kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline<I> {
    /// One interval, ns, once known.
    pub length: Option<u64>,
    pub intervals: BTreeMap<u64, I>,
}

impl<I> Default for Timeline<I> {
    fn default() -> Self {
        Timeline {
            length: None,
            intervals: BTreeMap::new(),
        }
    }
}

impl<I: Interval> Timeline<I> {
    /// Adds `interval` into the one at `index`.
    pub fn add(&mut self, index: u64, interval: &I) {
        self.intervals.entry(index).or_default().add(interval);
    }

    /// Adds another timeline of the kind into this one, index by index.
    pub fn merge(&mut self, other: &Timeline<I>) {
        self.length = self.length.or(other.length);
        for (index, interval) in &other.intervals {
            self.add(*index, interval);
        }
    }

    /// Every index from 0 to the last (empty ones included).
    pub fn dense(&self) -> Vec<I> {
        let Some(&last) = self.intervals.keys().next_back() else {
            return Vec::new();
        };
        (0..=last)
            .map(|k| self.intervals.get(&k).cloned().unwrap_or_default())
            .collect()
    }
}

/// The server's samples that fell in one interval (by the middle of the span each covers).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServerInterval {
    pub samples: u64,
    /// The mean of the samples' CPU figures, percent of one core.
    pub cpu_percent: f64,
    /// The highest resident memory sampled.
    pub rss_bytes: u64,
}

/// The server's samples by interval; samples from before the start are left out.
pub fn server_by_interval(
    samples: &[ServerSample],
    clock: IntervalClock,
) -> BTreeMap<u64, ServerInterval> {
    let mut by_index: BTreeMap<u64, ServerInterval> = BTreeMap::new();
    for sample in samples {
        let middle = sample.at.saturating_sub(sample.span / 2);
        if middle < clock.t0 {
            continue;
        }
        let interval = by_index.entry(clock.index(middle)).or_default();
        let n = interval.samples as f64;
        interval.cpu_percent = (interval.cpu_percent * n + sample.cpu_percent) / (n + 1.0);
        interval.samples += 1;
        interval.rss_bytes = interval.rss_bytes.max(sample.rss_bytes);
    }
    by_index
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_clock_places_instants_in_intervals_from_the_start() {
        let clock = IntervalClock::new(5_000 * MS, Duration::from_secs(1));
        assert_eq!(clock.index(4_000 * MS), 0);
        assert_eq!(clock.index(5_999 * MS), 0);
        assert_eq!(clock.index(6_000 * MS), 1);
        assert_eq!(clock.end_of(2), 8_000 * MS);
    }

    #[test]
    fn packed_histograms_add_exactly() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for v in 1..=1000u64 {
            a.record(v * 7).unwrap();
            b.record(v * 13 + 5).unwrap();
        }
        let mut packed = Packed::pack(&a);
        packed.add(&Packed::pack(&b));
        packed.add(&Packed::default());
        let mut sum = a.clone();
        sum.add(&b).unwrap();
        assert_eq!(packed.unpack(), sum);
        assert_eq!(Packed::pack(&new_histogram()), Packed::default());
        assert!(Packed::default().unpack().is_empty());
    }

    #[test]
    fn server_samples_fall_in_the_interval_their_span_is_mostly_in() {
        let t0 = 10_000 * MS;
        let clock = IntervalClock::new(t0, Duration::from_secs(1));
        let sample = |at: u64, cpu: f64, rss: u64| ServerSample {
            at,
            span: 1_000 * MS,
            cpu_percent: cpu,
            rss_bytes: rss,
        };
        let samples = [
            sample(t0 - 100 * MS, 99.0, 1),
            sample(t0 + 900 * MS, 20.0, 10),
            sample(t0 + 1_900 * MS, 40.0, 30),
            sample(t0 + 2_100 * MS, 60.0, 20),
        ];
        let by = server_by_interval(&samples, clock);
        assert_eq!(by.len(), 2);
        assert_eq!(by[&0].samples, 1);
        assert_eq!(by[&0].cpu_percent, 20.0);
        assert_eq!(by[&1].samples, 2);
        assert_eq!(by[&1].cpu_percent, 50.0);
        assert_eq!(by[&1].rss_bytes, 30);
    }
}
