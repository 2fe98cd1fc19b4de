//! An HTTP run over time as saved: the `intervals` array of its JSON, and their merge.

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::report::timeline::{
    add_histograms, merge_aligned, spans, Addable, IntervalHistogram, IntervalSpan,
    SavedServerInterval,
};
use crate::stats::http::RunTimeline;
use crate::stats::http::{Errors, Unsent};
use crate::timing::stages::Target;

/// One interval of an HTTP run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedInterval {
    #[serde(flatten)]
    pub span: IntervalSpan,
    /// The target over the interval, requests/s: `-R`, or with `--stages` the profile's integral
    /// over it divided by its length; absent in a closed loop and in files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate: Option<f64>,
    /// Requests written.
    pub sent: u64,
    /// Complete responses.
    pub completed: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub errors: Errors,
    /// Requests due but never sent (counted at the end: in the last interval).
    pub unsent: Unsent,
    /// Corrected latency, µs.
    pub latency: IntervalHistogram,
    /// Send lateness, µs.
    pub send_lateness: IntervalHistogram,
    /// What the server caused of the corrected latency, µs; absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_latency: Option<IntervalHistogram>,
    /// tsumo's own delay (send and read) per response, µs; absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_delay: Option<IntervalHistogram>,
    /// The server's CPU and memory (`--server-pid`); absent without samples in the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<SavedServerInterval>,
}
/// An HTTP run's intervals as saved (`elapsed_s`: the run's, where the last one ends).
pub fn http_intervals(timeline: &RunTimeline, elapsed_s: f64) -> Vec<SavedInterval> {
    let spans = spans(
        timeline.intervals.len(),
        timeline.length,
        timeline.start_unix_ns,
        elapsed_s,
    );
    timeline
        .intervals
        .iter()
        .zip(spans)
        .map(|((interval, server), span)| SavedInterval {
            span,
            target_rate: None,
            sent: interval.sent,
            completed: interval.completed,
            bytes_read: interval.bytes_read,
            bytes_written: interval.bytes_written,
            errors: interval.errors,
            unsent: interval.unsent,
            latency: IntervalHistogram::of(&interval.latency.unpack()),
            send_lateness: IntervalHistogram::of(&interval.send_lateness.unpack()),
            server_latency: Some(IntervalHistogram::of(&interval.server_latency.unpack())),
            own_delay: Some(IntervalHistogram::of(&interval.own_delay.unpack())),
            server: server.as_ref().map(SavedServerInterval::of),
        })
        .collect()
}

/// Sets each interval's target from where it lies (`span.start_s` from the run's start).
pub fn set_targets(intervals: &mut [SavedInterval], target: &Target) {
    let ns = |s: f64| (s * 1e9).round().max(0.0) as u64;
    for interval in intervals {
        let start = ns(interval.span.start_s);
        let end = start + ns(interval.span.duration_s);
        interval.target_rate = target.over(start, end);
    }
}

impl Addable for SavedInterval {
    fn span(&self) -> IntervalSpan {
        self.span
    }

    fn span_mut(&mut self) -> &mut IntervalSpan {
        &mut self.span
    }

    fn add(&mut self, other: &Self, source: &str) -> Result<(), Error> {
        // Shards' shares add up to the whole run's target (kept only where every part has one).
        self.target_rate = self.target_rate.zip(other.target_rate).map(|(a, b)| a + b);
        self.sent += other.sent;
        self.completed += other.completed;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.errors.add(&other.errors);
        self.unsent.add(&other.unsent);
        add_histograms(&mut self.latency, &other.latency, source)?;
        add_histograms(&mut self.send_lateness, &other.send_lateness, source)?;
        // Split only where every part has it (older files have none).
        for (sum, other) in [
            (&mut self.server_latency, &other.server_latency),
            (&mut self.own_delay, &other.own_delay),
        ] {
            match (sum.as_mut(), other) {
                (Some(sum), Some(other)) => add_histograms(sum, other, source)?,
                _ => *sum = None,
            }
        }
        match (&mut self.server, &other.server) {
            (Some(sum), Some(server)) => sum.add(server),
            (None, Some(server)) => self.server = Some(server.clone()),
            _ => {}
        }
        Ok(())
    }
}

/// The intervals of HTTP runs made side by side (see
/// [`merge_aligned`](crate::report::timeline::merge_aligned)).
pub fn merge_http(parts: &[(&[SavedInterval], &str)]) -> Result<Vec<SavedInterval>, Error> {
    merge_aligned(parts)
}

#[cfg(test)]
mod tests {
    use hdrhistogram::Histogram;

    use super::*;
    use crate::stats::http::Interval;
    use crate::stats::new_histogram;
    use crate::stats::timeline::Packed;

    const S: u64 = 1_000_000_000;

    /// A run of `n` intervals starting at `start`, interval k holding `per` latencies from
    /// `base` up, and its whole latency histogram.
    fn run(start: u64, n: usize, base: u64, per: u64) -> (Vec<SavedInterval>, Histogram<u64>) {
        let mut whole = new_histogram();
        let intervals = (0..n)
            .map(|k| {
                let mut h = new_histogram();
                for i in 0..per {
                    h.record(base + 13 * i + 1000 * k as u64).unwrap();
                }
                whole.add(&h).unwrap();
                let interval = Interval {
                    sent: per,
                    completed: per,
                    latency: Packed::pack(&h),
                    ..Interval::default()
                };
                (interval, None)
            })
            .collect();
        let timeline = RunTimeline {
            length: S,
            start_unix_ns: start,
            intervals,
        };
        (http_intervals(&timeline, n as f64 - 0.5), whole)
    }

    /// A last interval whose length in seconds does not survive a trip through ns (2.001468734 s
    /// less 2 s) is merged alone to the last bit.
    #[test]
    fn a_merge_of_one_run_keeps_its_spans_to_the_bit() {
        let (mut saved, _) = run(1_800_000_000 * S, 3, 100, 10);
        saved[2].span.duration_s = 2.001468734 - 2.0;
        assert_ne!(
            ((saved[2].span.duration_s * 1e9).round() as u64) as f64 / 1e9,
            saved[2].span.duration_s
        );
        let merged = merge_http(&[(&saved, "a.json")]).unwrap();
        assert_eq!(merged, saved);
    }

    #[test]
    fn intervals_say_where_they_lie_and_the_last_ends_with_the_run() {
        let (saved, _) = run(1_800_000_000 * S, 3, 100, 10);
        assert_eq!(saved.len(), 3);
        assert_eq!(saved[1].span.start_s, 1.0);
        assert_eq!(saved[1].span.start_unix_ns, 1_800_000_001 * S);
        assert_eq!(saved[1].span.duration_s, 1.0);
        assert_eq!(saved[2].span.duration_s, 0.5);
        assert_eq!(saved[0].latency.count, 10);
        assert!(saved[0].latency.histogram.starts_with("HISTF"));
        let v = serde_json::to_value(&saved[0]).unwrap();
        assert_eq!(v["start_s"], 0.0);
        assert_eq!(v["latency"]["p50"], saved[0].latency.p50);
        assert!(v.get("server").is_none());
    }

    /// Two shards started on the same instant (`--start-at`), one a second longer: their
    /// intervals line up by wall clock and add exactly, interval by interval and in all.
    #[test]
    fn shards_merge_by_wall_clock_exactly() {
        let start = 1_800_000_000 * S;
        let (a, whole_a) = run(start, 4, 100, 50);
        let (b, whole_b) = run(start, 5, 3000, 20);
        let merged = merge_http(&[(&a, "a.json"), (&b, "b.json")]).unwrap();
        assert_eq!(merged.len(), 5);
        assert_eq!(merged[3].completed, 70);
        assert_eq!(merged[4].completed, 20);
        assert_eq!(merged[2].span.start_unix_ns, start + 2 * S);
        let mut sum = new_histogram();
        for (k, interval) in merged.iter().enumerate() {
            let h = interval.latency.decode().unwrap();
            let mut expected = a
                .get(k)
                .map_or_else(new_histogram, |i| i.latency.decode().unwrap());
            if let Some(i) = b.get(k) {
                expected.add(i.latency.decode().unwrap()).unwrap();
            }
            assert_eq!(h, expected, "interval {k}");
            assert_eq!(interval.latency.count, h.len());
            sum.add(&h).unwrap();
        }
        let mut whole = whole_a;
        whole.add(&whole_b).unwrap();
        assert_eq!(sum, whole);
    }

    /// A shard that started 2 s after the other (its own start, no `--start-at`) lines up 2
    /// intervals later.
    #[test]
    fn a_later_shard_lines_up_later() {
        let start = 1_800_000_000 * S;
        let (a, _) = run(start, 3, 100, 10);
        let (b, _) = run(start + 2 * S + 1_000, 3, 100, 7);
        let merged = merge_http(&[(&b, "b.json"), (&a, "a.json")]).unwrap();
        let completed: Vec<u64> = merged.iter().map(|i| i.completed).collect();
        assert_eq!(completed, [10, 10, 17, 7, 7]);
        // A part without intervals (an older file) leaves the merge without them.
        assert!(merge_http(&[(&a, "a.json"), (&[], "old.json")])
            .unwrap()
            .is_empty());
    }
}
