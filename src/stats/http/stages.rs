//! Each `--stages` stage's own record, kept beside the whole run's in a worker's recorder.
//!
//! A request belongs to the stage its *intended* send time falls in (a jump, `0s:A-B`, holds
//! none). The worker names that time before it counts a send or a response
//! ([`Recorder::at_intended`](super::Recorder::at_intended)); the histograms go to that stage
//! directly, and the counts (responses, errors by kind, bytes, sends due on a busy connection)
//! are the whole run's counters' difference since the stage last changed: exact, with one
//! comparison per event and no cost at all without `--stages` (the recorder holds `None`).
//! A count with no request of its own (a connect error) goes to the stage of the worker's
//! latest request. Requests never sent are counted once the run ends, each in the stage its
//! intended time falls in ([`Stages::add_unsent`]).

use hdrhistogram::Histogram;

use super::counters::{Counters, Errors, Unsent};
use super::split::Split;
use super::timeline::errors_since;
use crate::plan::{Shard, Stage};
use crate::stats::new_histogram;

/// Nanoseconds (CLOCK_MONOTONIC, or from the start of the run).
type Nanos = u64;

/// The counts of a stage (or, in [`Stages`], the run's at the last change of stage).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StageCounts {
    /// Complete responses.
    pub requests: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub errors: Errors,
    /// Paced sends due while their connection was still busy (the server held them back).
    pub due_while_busy: u64,
    /// Requests due in the stage but never sent, by why (counted at the run's end, not from the
    /// whole run's counters).
    pub unsent: Unsent,
}

impl StageCounts {
    fn of(c: &Counters) -> StageCounts {
        StageCounts {
            requests: c.requests,
            bytes_read: c.bytes_read,
            bytes_written: c.bytes_written,
            errors: c.errors,
            due_while_busy: c.due_while_busy,
            unsent: Unsent::default(),
        }
    }

    fn since(&self, was: &StageCounts) -> StageCounts {
        StageCounts {
            requests: self.requests - was.requests,
            bytes_read: self.bytes_read - was.bytes_read,
            bytes_written: self.bytes_written - was.bytes_written,
            errors: errors_since(&self.errors, &was.errors),
            due_while_busy: self.due_while_busy - was.due_while_busy,
            unsent: Unsent::default(),
        }
    }

    pub fn add(&mut self, other: &StageCounts) {
        self.requests += other.requests;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.errors.add(&other.errors);
        self.due_while_busy += other.due_while_busy;
        self.unsent.add(&other.unsent);
    }
}

/// One stage's record. Values in µs.
#[derive(Debug, Clone)]
pub struct StageRecord {
    /// Corrected latency.
    pub latency: Histogram<u64>,
    pub uncorrected: Histogram<u64>,
    /// What the server caused of the corrected latency.
    pub server: Histogram<u64>,
    pub send_lateness: Histogram<u64>,
    pub counts: StageCounts,
}

impl Default for StageRecord {
    fn default() -> Self {
        StageRecord {
            latency: new_histogram(),
            uncorrected: new_histogram(),
            server: new_histogram(),
            send_lateness: new_histogram(),
            counts: StageCounts::default(),
        }
    }
}

impl StageRecord {
    /// Adds `other` in (exact: the histograms share one layout).
    pub fn add(&mut self, other: &StageRecord) {
        let _ = self.latency.add(&other.latency);
        let _ = self.uncorrected.add(&other.uncorrected);
        let _ = self.server.add(&other.server);
        let _ = self.send_lateness.add(&other.send_lateness);
        self.counts.add(&other.counts);
    }
}

/// A recorder's stages: one record per stage as written (a jump's stays empty).
#[derive(Debug, Clone)]
pub struct Stages {
    /// Where each stage ends (CLOCK_MONOTONIC ns).
    ends: Vec<Nanos>,
    /// The stage counts go to now.
    current: usize,
    /// The run's counts when `current` last changed.
    at_change: StageCounts,
    pub records: Vec<StageRecord>,
}

impl Stages {
    /// Stages of the given lengths (ns) from `t0`, the counts starting from `counters`.
    pub fn new(t0: Nanos, lengths: impl IntoIterator<Item = Nanos>, counters: &Counters) -> Self {
        let mut end = t0;
        let ends: Vec<Nanos> = lengths
            .into_iter()
            .map(|length| {
                end = end.saturating_add(length);
                end
            })
            .collect();
        Stages {
            records: vec![StageRecord::default(); ends.len()],
            current: ends.iter().position(|&e| e > t0).unwrap_or(0),
            at_change: StageCounts::of(counters),
            ends,
        }
    }

    /// The stage holding `intended` (the last for a time past the end).
    #[inline]
    fn index(&self, intended: Nanos) -> usize {
        self.ends
            .partition_point(|&end| end <= intended)
            .min(self.ends.len().saturating_sub(1))
    }

    /// Counts from now on go to the stage holding `intended`.
    #[inline]
    pub fn at(&mut self, intended: Nanos, counters: &Counters) {
        let current = self.current;
        if self.ends.get(current).is_some_and(|&end| intended < end)
            && (current == 0 || self.ends[current - 1] <= intended)
        {
            return;
        }
        self.change(self.index(intended), counters);
    }

    #[cold]
    fn change(&mut self, to: usize, counters: &Counters) {
        self.settle(counters);
        self.current = to;
    }

    /// Moves the counts since the last change into the current stage.
    pub fn settle(&mut self, counters: &Counters) {
        let now = StageCounts::of(counters);
        if let Some(record) = self.records.get_mut(self.current) {
            record.counts.add(&now.since(&self.at_change));
        }
        self.at_change = now;
    }

    #[inline]
    pub fn record_latency(&mut self, split: &Split) {
        if let Some(record) = self.records.get_mut(self.current) {
            record.latency.saturating_record(split.corrected);
            record.uncorrected.saturating_record(split.uncorrected);
            record.server.saturating_record(split.server);
        }
    }

    #[inline]
    pub fn record_send_lateness(&mut self, lateness_us: u64) {
        if let Some(record) = self.records.get_mut(self.current) {
            record.send_lateness.saturating_record(lateness_us);
        }
    }

    /// These stages with nothing recorded, counting from `counters`.
    pub fn emptied(&self, counters: &Counters) -> Stages {
        Stages {
            ends: self.ends.clone(),
            current: self.current,
            at_change: StageCounts::of(counters),
            records: vec![StageRecord::default(); self.ends.len()],
        }
    }

    /// Adds `other`'s records in (with what `other_counters` counted since its last change),
    /// after settling this one's on `counters`; afterwards call [`Stages::rebase`].
    pub fn merge(&mut self, counters: &Counters, other: &Stages, other_counters: &Counters) {
        self.settle(counters);
        for (mine, theirs) in self.records.iter_mut().zip(&other.records) {
            mine.add(theirs);
        }
        let pending = StageCounts::of(other_counters).since(&other.at_change);
        if let Some(record) = self.records.get_mut(other.current) {
            record.counts.add(&pending);
        }
    }

    /// After a merge added counts into the run's counters: none of them is pending.
    pub fn rebase(&mut self, counters: &Counters) {
        self.at_change = StageCounts::of(counters);
    }

    /// Counts one connection's requests `[from, to)` (numbered from 0), never sent for `why`, in
    /// the stages their intended times fall in: `due_before(t)` is how many of the connection's
    /// requests are due before `t` (CLOCK_MONOTONIC).
    pub fn add_unsent(
        &mut self,
        (from, to): (u64, u64),
        due_before: impl Fn(Nanos) -> u64,
        why: fn(&mut Unsent) -> &mut u64,
    ) {
        let mut counted = from;
        for (record, &end) in self.records.iter_mut().zip(&self.ends) {
            let upto = due_before(end).clamp(counted, to.max(counted));
            *why(&mut record.counts.unsent) += upto - counted;
            counted = upto;
        }
        // Past the last stage's end (none are due there): the last stage's.
        if let Some(last) = self.records.last_mut() {
            *why(&mut last.counts.unsent) += to.saturating_sub(counted);
        }
    }

    /// Every stage's record, with the counts since the last change in the current one.
    pub fn settled(&self, counters: &Counters) -> Vec<StageRecord> {
        let mut records = self.records.clone();
        let pending = StageCounts::of(counters).since(&self.at_change);
        if let Some(record) = records.get_mut(self.current) {
            record.counts.add(&pending);
        }
        records
    }
}

/// One stage of a finished run: where it lay, what was due in it and what it recorded.
#[derive(Debug, Clone)]
pub struct StageResult {
    /// 1-based, as the user counts the stages written (a jump keeps its number).
    pub index: usize,
    /// Start and length as written, ns from the start of the run.
    pub start_ns: Nanos,
    pub duration_ns: Nanos,
    pub from: u64,
    pub to: u64,
    /// How much of the stage ran, ns (less than its length in a run cut short).
    pub ran_ns: Nanos,
    /// Requests due in the part of the stage that ran, in this process (its shard's share):
    /// the integral of the rate, exactly as the schedule counts it.
    pub target: u64,
    pub record: StageRecord,
}

/// A `--stages` run's stages: those that lasted and were reached, in order.
#[derive(Debug, Clone)]
pub struct RunStages {
    pub stages: Vec<StageResult>,
    /// The stage a run cut short (Ctrl-C, a script) stopped in; `None` when it ran its course.
    pub stopped_in: Option<usize>,
}

impl RunStages {
    /// The `stages` written as this process (`shard`) ran them, from the merged `records`,
    /// over `ran_ns` from the start (`cut_short`: before the profile's end); `due(t)` is the
    /// whole run's requests due before `t` ns from the start (the profile's integral).
    pub fn of(
        stages: &[Stage],
        due: impl Fn(Nanos) -> u64,
        shard: Shard,
        records: Vec<StageRecord>,
        ran_ns: Nanos,
        cut_short: bool,
    ) -> RunStages {
        let ran = if cut_short { ran_ns } else { Nanos::MAX };
        // The requests due before `t` of this shard: slots `n ≡ shard.index (mod count)`.
        let due = |t: Nanos| {
            let all = due(t);
            let (index, count) = (shard.index as u64, shard.count.max(1) as u64);
            (all + count - 1 - index.min(count - 1)) / count
        };
        let mut start = 0u64;
        let mut results = Vec::new();
        let mut stopped_in = None;
        for (i, (stage, record)) in stages.iter().zip(records).enumerate() {
            let end = start.saturating_add(stage.duration_ns);
            if stage.duration_ns > 0 && start < ran {
                let until = end.min(ran);
                if cut_short && ran < end {
                    stopped_in = Some(i + 1);
                }
                results.push(StageResult {
                    index: i + 1,
                    start_ns: start,
                    duration_ns: stage.duration_ns,
                    from: stage.from,
                    to: stage.to,
                    ran_ns: until - start,
                    target: due(until) - due(start),
                    record,
                });
            }
            start = end;
        }
        RunStages {
            stages: results,
            stopped_in,
        }
    }
}

impl RunStages {
    /// The rate the run was due over `elapsed`: its stages' targets over it (a run cut short
    /// was not due the rest of the profile), requests/s.
    pub fn due_rate(&self, elapsed: std::time::Duration) -> u64 {
        let due: u64 = self.stages.iter().map(|stage| stage.target).sum();
        (due as f64 / elapsed.as_secs_f64().max(1e-9)).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Nanos = 1_000_000_000;

    fn split(us: u64) -> Split {
        Split {
            corrected: us,
            uncorrected: us,
            server: us,
            own_send: 0,
            own_read: 0,
            user: us,
        }
    }

    /// Responses interleaved across a boundary land in their own stage by intended time; a
    /// jump holds none; two workers merged add up exactly.
    #[test]
    fn counts_follow_the_intended_time_and_merge_exactly() {
        let t0 = 5 * S;
        let lengths = [S, 0, 2 * S];
        let mut merged: Option<Stages> = None;
        let mut total = Counters::default();
        for worker in 0..2u64 {
            let mut c = Counters::default();
            let mut stages = Stages::new(t0, lengths, &c);
            // Stage 1, stage 3, stage 1 again (a late response), stage 3.
            for (i, (at, us)) in [(0, 10), (S, 3000), (S - 1, 20), (2 * S, 4000)]
                .into_iter()
                .enumerate()
            {
                stages.at(t0 + at, &c);
                c.requests += 1;
                c.bytes_read += 100;
                if i == 3 {
                    c.errors.status += 1 + worker;
                }
                stages.record_latency(&split(us));
                stages.record_send_lateness(us / 10);
            }
            // A time past the end counts in the last stage.
            stages.at(t0 + 9 * S, &c);
            c.errors.timeout += 1;
            match merged.as_mut() {
                None => {
                    let mut m = stages.emptied(&total);
                    m.merge(&total, &stages, &c);
                    merged = Some(m);
                }
                Some(m) => m.merge(&total, &stages, &c),
            }
            total.add(&c);
            if let Some(m) = merged.as_mut() {
                m.rebase(&total);
            }
        }
        let records = merged.unwrap().settled(&total);
        let counts: Vec<_> = records.iter().map(|r| r.counts.requests).collect();
        assert_eq!(counts, [4, 0, 4]);
        assert_eq!(records[2].counts.errors.status, 3);
        assert_eq!(records[2].counts.errors.timeout, 2);
        assert_eq!(records[0].counts.bytes_read, 400);
        assert_eq!(records[0].latency.max(), 20);
        assert_eq!(records[2].latency.min(), 3000);
        assert_eq!(records[2].send_lateness.len(), 4);
        assert_eq!(records[1].latency.len(), 0);
    }
    /// Requests never sent go to the stages they were due in (a jump gets none; none are lost
    /// past the last stage), and two workers' add up.
    #[test]
    fn unsent_requests_count_in_the_stage_they_were_due_in() {
        let t0 = 5 * S;
        let c = Counters::default();
        let mut merged = Stages::new(t0, [S, 0, 2 * S], &c);
        for _ in 0..2 {
            let mut stages = Stages::new(t0, [S, 0, 2 * S], &c);
            // One request every 100 ms: requests 0..10 in stage 1, 10..30 in stage 3.
            let due_before = |t: Nanos| (t.saturating_sub(t0)).div_ceil(S / 10).min(30);
            stages.add_unsent((7, 12), due_before, |u| &mut u.busy);
            stages.add_unsent((12, 30), due_before, |u| &mut u.connect_failed);
            stages.add_unsent((30, 30), due_before, |u| &mut u.late);
            merged.merge(&c, &stages, &c);
        }
        let records = merged.settled(&c);
        let unsent: Vec<_> = records.iter().map(|r| r.counts.unsent).collect();
        let (busy, failed): (Vec<_>, Vec<_>) =
            unsent.iter().map(|u| (u.busy, u.connect_failed)).unzip();
        assert_eq!(busy, [6, 0, 4]);
        assert_eq!(failed, [0, 0, 36]);
        assert!(unsent.iter().all(|u| u.late == 0 && u.connect_timeout == 0));
    }
}
