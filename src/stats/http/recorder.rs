//! One HTTP worker's record of a run: the latency histograms (corrected, uncorrected, the
//! split) and the send lateness, the counters, and the timeline interval by interval. Every
//! worker owns one (no locks on the hot path); the engine merges them once at the end.

use std::sync::Arc;

use hdrhistogram::Histogram;

use super::counters::{Counters, TlsFailure};
use super::split;
use super::stages::Stages;
use super::timeline::{Interval, Timeline, WholeMut};
use crate::stats::new_histogram;
use crate::stats::sink::Sink;
use crate::stats::timeline::IntervalClock;

/// One worker's record of a run. Values are in µs.
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Response time − intended send time (coordinated-omission corrected).
    pub latency: Histogram<u64>,
    /// Response time − actual send time.
    pub uncorrected: Histogram<u64>,
    /// Actual send time − intended send time: how late tsumo itself was.
    pub send_lateness: Histogram<u64>,
    /// The corrected latency split into what the server caused and what tsumo added.
    pub split: split::SplitHistograms,
    pub counters: Counters,
    /// The first few distinct TLS handshake failures of the run, in words, to quote in the report.
    pub tls_failure_quotes: Vec<String>,
    /// The same, interval by interval (`--interval`), once [`Recorder::start_timeline`] ran.
    pub timeline: Timeline,
    /// Where each closed interval is handed over too (`--dashboard`'s live state; a worker's
    /// own; none in a merged recorder).
    pub sink: Option<Arc<dyn Sink<Interval>>>,
    /// Each `--stages` stage's own record, once [`Recorder::start_stages`] ran; `None` without
    /// stages (then nothing is kept, nor checked, per stage).
    pub stages: Option<Box<Stages>>,
}

/// How many distinct TLS failures a run quotes.
pub const TLS_FAILURE_QUOTES: usize = 3;

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    pub fn new() -> Self {
        Recorder {
            latency: new_histogram(),
            uncorrected: new_histogram(),
            send_lateness: new_histogram(),
            split: split::SplitHistograms::default(),
            counters: Counters::default(),
            tls_failure_quotes: Vec::new(),
            timeline: Timeline::default(),
            sink: None,
            stages: None,
        }
    }

    /// Starts keeping each stage's record: stages of `lengths` ns from `t0`.
    pub fn start_stages(&mut self, t0: u64, lengths: impl IntoIterator<Item = u64>) {
        self.stages = Some(Box::new(Stages::new(t0, lengths, &self.counters)));
    }

    /// Counts from now on (a send's lateness, a response, its errors) belong to the stage
    /// holding `intended`, the request's intended send time (CLOCK_MONOTONIC ns).
    #[inline]
    pub fn at_intended(&mut self, intended: u64) {
        if let Some(stages) = self.stages.as_mut() {
            stages.at(intended, &self.counters);
        }
    }

    /// Starts recording interval by interval, at the run's start, handing each interval it
    /// closes to `sink` as well (if any).
    pub fn start_timeline(&mut self, clock: IntervalClock, sink: Option<Arc<dyn Sink<Interval>>>) {
        self.sink = sink;
        self.timeline.start(clock, &self.counters);
    }

    /// Moves on to the interval holding `at` (CLOCK_MONOTONIC ns) if it is past the current
    /// one: called before counting what happened at `at` (one comparison, no clock read).
    #[inline]
    pub fn roll_to(&mut self, at: u64) {
        if self.timeline.is_due(at) {
            let whole = WholeMut {
                latency: &mut self.latency,
                send_lateness: &mut self.send_lateness,
                server_latency: &mut self.split.server,
                own_delay: &mut self.split.own,
            };
            let sink = self.sink.as_deref();
            self.timeline
                .roll(at, &self.counters, whole, |index, interval| {
                    if let Some(sink) = sink {
                        sink.closed(index, interval);
                    }
                });
        }
    }

    /// Counts requests written (for the intervals; the totals count responses).
    #[inline]
    pub fn count_sent(&mut self, requests: u64) {
        self.timeline.count_sent(requests);
    }

    /// Counts a failed TLS handshake by reason and keeps its words if they are among the first
    /// few distinct ones (`describe` runs only then).
    pub fn record_tls_failure(&mut self, failure: TlsFailure, describe: impl FnOnce() -> String) {
        self.counters.tls_failures.count(failure);
        if self.tls_failure_quotes.len() < TLS_FAILURE_QUOTES {
            let words = describe();
            if !self.tls_failure_quotes.contains(&words) {
                self.tls_failure_quotes.push(words);
            }
        }
    }

    /// Records one response's latency and its split.
    #[inline]
    pub fn record_latency(&mut self, split: &split::Split) {
        self.counters
            .latency_sums
            .get_or_insert_with(Default::default)
            .add_one(split);
        self.uncorrected.saturating_record(split.uncorrected);
        self.split.record_beside_timeline(split);
        if let Some(stages) = self.stages.as_mut() {
            stages.record_latency(split);
        }
        // Once the timeline runs, these go to its open interval only, which adds them into the
        // run's histograms as it closes (and a merge adds the open one's): one record each.
        let own = split.own_send + split.own_read;
        if !self
            .timeline
            .record_latency(split.corrected, split.server, own)
        {
            self.latency.saturating_record(split.corrected);
            self.split.server.saturating_record(split.server);
            self.split.own.saturating_record(own);
        }
    }

    /// Records how late a send was against its schedule, in µs (0 allowed: on time).
    #[inline]
    pub fn record_send_lateness(&mut self, lateness_us: u64) {
        if let Some(stages) = self.stages.as_mut() {
            stages.record_send_lateness(lateness_us);
        }
        if !self.timeline.record_send_lateness(lateness_us) {
            self.send_lateness.saturating_record(lateness_us);
        }
    }

    /// Where the run's histograms of what the timeline records are kept (a merge adds a
    /// worker's timeline into them).
    fn whole_mut(&mut self) -> WholeMut<'_> {
        WholeMut {
            latency: &mut self.latency,
            send_lateness: &mut self.send_lateness,
            server_latency: &mut self.split.server,
            own_delay: &mut self.split.own,
        }
    }

    /// Adds another recorder into this one (exact: histograms have the same layout). `other`'s
    /// timeline goes into this one's intervals and into its histograms, so a total that never
    /// recorded itself (as the engine's) holds the whole run in its histograms.
    pub fn merge(&mut self, other: &Recorder) {
        // Same bounds on both sides, so add() cannot fail; saturate rather than panic if it does.
        let _ = self.latency.add(&other.latency);
        let _ = self.uncorrected.add(&other.uncorrected);
        let _ = self.send_lateness.add(&other.send_lateness);
        self.split.add(&other.split);
        other.timeline.add_open_to(self.whole_mut());
        self.timeline.merge(&other.timeline, &other.counters);
        if let Some(theirs) = &other.stages {
            let counters = &self.counters;
            self.stages
                .get_or_insert_with(|| Box::new(theirs.emptied(counters)))
                .merge(counters, theirs, &other.counters);
        }
        self.counters.add(&other.counters);
        if let Some(stages) = self.stages.as_mut() {
            stages.rebase(&self.counters);
        }
        for words in &other.tls_failure_quotes {
            if self.tls_failure_quotes.len() < TLS_FAILURE_QUOTES
                && !self.tls_failure_quotes.contains(words)
            {
                self.tls_failure_quotes.push(words.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn tls_failures_are_counted_merged_and_quoted_a_few_times() {
        let mut a = Recorder::new();
        let mut b = Recorder::new();
        for i in 0..5 {
            a.record_tls_failure(TlsFailure::WrongName, || format!("name {}", i % 2));
        }
        b.record_tls_failure(TlsFailure::Expired, || "expired".to_string());
        b.record_tls_failure(TlsFailure::PlainHttp, || "plain".to_string());
        a.merge(&b);
        let f = a.counters.tls_failures;
        assert_eq!(
            (f.wrong_name, f.expired, f.plain_http, f.total()),
            (5, 1, 1, 7)
        );
        assert_eq!(a.tls_failure_quotes, ["name 0", "name 1", "expired"]);
    }

    /// Two workers record over four intervals (a gap in one): merged, the intervals add up to
    /// the whole run's histograms and counts exactly.
    #[test]
    fn worker_intervals_merge_and_add_up_to_the_run() {
        let t0 = 1_000 * MS;
        let clock = IntervalClock::new(t0, Duration::from_secs(1));
        let mut whole = Recorder::new();
        let mut merged = Recorder::new();
        for worker in 0..2u64 {
            let mut rec = Recorder::new();
            rec.start_timeline(clock, None);
            for i in 0..400u64 {
                // Worker 1 is idle in interval 2.
                let at = t0 + i * 10 * MS;
                if worker == 1 && clock.index(at) == 2 {
                    continue;
                }
                rec.roll_to(at);
                rec.counters.requests += 1;
                rec.count_sent(1);
                let corrected = 100 + (i * 37 + worker) % 5000;
                rec.record_latency(&split::Split {
                    corrected,
                    uncorrected: 50,
                    server: corrected - 3,
                    own_send: 3,
                    own_read: 1,
                    user: corrected + 1,
                });
                rec.record_send_lateness(i % 7);
                if i % 50 == 0 {
                    rec.counters.errors.timeout += 1;
                }
            }
            rec.counters.unsent.busy += 3;
            whole.merge(&rec);
            merged.merge(&rec);
        }
        let intervals = merged.timeline.intervals(&merged.counters);
        assert_eq!(intervals.keys().copied().collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(intervals[&2].completed, 100);
        assert_eq!(intervals[&3].unsent.busy, 6);
        let mut latency = new_histogram();
        let mut lateness = new_histogram();
        let (mut completed, mut sent, mut timeouts) = (0, 0, 0);
        for interval in intervals.values() {
            latency.add(interval.latency.unpack()).unwrap();
            lateness.add(interval.send_lateness.unpack()).unwrap();
            completed += interval.completed;
            sent += interval.sent;
            timeouts += interval.errors.timeout;
            assert_eq!(interval.latency.unpack().len(), interval.completed);
        }
        assert_eq!(latency, whole.latency);
        assert_eq!(lateness, whole.send_lateness);
        assert_eq!(completed, whole.counters.requests);
        assert_eq!(sent, 700);
        assert_eq!(timeouts, whole.counters.errors.timeout);
    }
}
