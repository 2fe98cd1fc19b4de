//! WebSocket runs side by side merged into one ([`SavedResult::merge`](crate::report::result::SavedResult::merge)),
//! exactly: the messages, connections, failures and closes added; every histogram decoded,
//! added and encoded again; the intervals aligned on the wall clock; the objectives judged
//! again on the sums. Elapsed time is the longest (the runs went on side by side).

use std::collections::BTreeMap;

use super::intervals::SavedWsInterval;
use super::saved::{SavedWsBreakdown, SavedWsMessages, SavedWsPings, SavedWsRun};
use crate::error::Error;
use crate::report::histogram::SavedHistogram;
use crate::report::objectives;
use crate::report::result::add_encoded;
use crate::report::timeline::{add_histograms, merge_aligned, Addable, IntervalSpan};
use crate::slo::{self, Objective};
use crate::stats::new_histogram;

/// The sum of the histograms `pick` finds in every run, saved again.
fn add_all<'a>(
    runs: &[(&'a SavedWsRun, &str)],
    what: &str,
    pick: impl Fn(&'a SavedWsRun) -> Option<&'a SavedHistogram>,
) -> Result<SavedHistogram, Error> {
    let mut sum = new_histogram();
    for (run, source) in runs {
        if let Some(saved) = pick(run) {
            add_encoded(&mut sum, &saved.histogram, source, what)?;
        }
    }
    Ok(SavedHistogram::of(&sum))
}

/// Counts by kind (failures, closes) added.
fn add_kinds(sum: &mut BTreeMap<String, u64>, part: &BTreeMap<String, u64>) {
    for (kind, n) in part {
        *sum.entry(kind.clone()).or_default() += n;
    }
}

pub(super) fn merge(runs: &[(&SavedWsRun, &str)], label: &str) -> Result<SavedWsRun, Error> {
    let judged: Vec<_> = runs.iter().map(|(r, s)| (&r.objectives[..], *s)).collect();
    objectives::refuse_different(&judged)?;
    // Every field not added below is the first run's (the same tool wrote them all).
    let mut merged = runs[0].0.clone();
    // The first part's log is not the merge's (`tsumo merge --requests` writes that).
    merged.requests_log = None;
    let all = || runs.iter().map(|(r, _)| *r);
    let sum = |f: fn(&SavedWsRun) -> u64| all().map(f).sum::<u64>();

    merged.messages = SavedWsMessages {
        due: all().map(|r| r.messages.due).sum(),
        sent: sum(|r| r.messages.sent),
        answered: sum(|r| r.messages.answered),
        timed_out: sum(|r| r.messages.timed_out),
        unanswered: sum(|r| r.messages.unanswered),
        late: sum(|r| r.messages.late),
        pushed: sum(|r| r.messages.pushed),
        bytes_sent: sum(|r| r.messages.bytes_sent),
        bytes_received: sum(|r| r.messages.bytes_received),
    };
    merged.round_trip = add_all(runs, "round_trip", |r| Some(&r.round_trip))?;
    merged.round_trip_uncorrected = add_all(runs, "round_trip_uncorrected", |r| {
        Some(&r.round_trip_uncorrected)
    })?;
    merged.per_second = add_all(runs, "per_second", |r| Some(&r.per_second))?;
    merged.breakdown = breakdown(runs)?;

    let c = &mut merged.connections;
    c.opened = sum(|r| r.connections.opened);
    c.connect = add_all(runs, "connections/connect", |r| {
        Some(&r.connections.connect)
    })?;
    (c.failures, c.closes) = (BTreeMap::new(), BTreeMap::new());
    for run in all() {
        add_kinds(&mut c.failures, &run.connections.failures);
        add_kinds(&mut c.closes, &run.connections.closes);
    }
    c.pings = match all().all(|r| r.connections.pings.is_some()) {
        true => Some(SavedWsPings {
            sent: all()
                .filter_map(|r| r.connections.pings.as_ref())
                .map(|p| p.sent)
                .sum(),
            answered: (all().filter_map(|r| r.connections.pings.as_ref()))
                .map(|p| p.answered)
                .sum(),
            round_trip: add_all(runs, "connections/pings/round_trip", |r| {
                r.connections.pings.as_ref().map(|p| &p.round_trip)
            })?,
        }),
        false => None,
    };

    let plan = &mut merged.plan;
    plan.threads = all().map(|r| r.plan.threads).sum();
    plan.connections = all().map(|r| r.plan.connections).sum();
    plan.rate = all().map(|r| r.plan.rate).sum();
    plan.duration_s = all().map(|r| r.plan.duration_s).fold(0.0, f64::max);
    // Separate processes: CPU adds up, and so do their peaks of memory.
    merged.tsumo.cpu_seconds = all().map(|r| r.tsumo.cpu_seconds).sum();
    merged.tsumo.peak_rss_bytes = sum(|r| r.tsumo.peak_rss_bytes);
    merged.elapsed_s = all().map(|r| r.elapsed_s).fold(0.0, f64::max);
    let ends: Vec<_> = all().map(|r| (r.ended_by, None)).collect();
    merged.ended_by = crate::stats::end::merged(&ends).0;
    let failures: Vec<String> = all().filter_map(|r| r.failure.clone()).collect();
    merged.failure = (!failures.is_empty()).then(|| failures.join("; "));

    let intervals: Vec<_> = runs.iter().map(|(r, s)| (&r.intervals[..], *s)).collect();
    merged.intervals = merge_aligned(&intervals)?;
    // The first part's objectives, judged on the whole.
    let objectives: Vec<Objective> = (merged.objectives.iter())
        .filter_map(|v| slo::parse_ws(&v.expr).ok())
        .collect();
    merged.objectives = slo::judge(&objectives, &merged);
    merged.label = label.to_string();
    Ok(merged)
}

/// The breakdown added, where every run has one (files of older tsumos have none), timed
/// alike (kernel stamps or not: the first run's word, as the rest of its fields).
fn breakdown(runs: &[(&SavedWsRun, &str)]) -> Result<Option<SavedWsBreakdown>, Error> {
    let Some(first) = runs.first().and_then(|(r, _)| r.breakdown.as_ref()) else {
        return Ok(None);
    };
    if runs.iter().any(|(r, _)| r.breakdown.is_none()) {
        return Ok(None);
    }
    type Pick = fn(&SavedWsBreakdown) -> &SavedHistogram;
    let add = |what: &str, pick: Pick| {
        add_all(runs, &format!("breakdown/{what}"), |r| {
            r.breakdown.as_ref().map(pick)
        })
    };
    Ok(Some(SavedWsBreakdown {
        timestamps: first.timestamps.clone(),
        server: add("server", |b| &b.server)?,
        own: add("own", |b| &b.own)?,
        own_send: add("own_send", |b| &b.own_send)?,
        own_read: add("own_read", |b| &b.own_read)?,
        send_late: add("send_late", |b| &b.send_late)?,
    }))
}

impl Addable for SavedWsInterval {
    fn span(&self) -> IntervalSpan {
        self.span
    }

    fn span_mut(&mut self) -> &mut IntervalSpan {
        &mut self.span
    }

    fn add(&mut self, other: &Self, source: &str) -> Result<(), Error> {
        self.sent += other.sent;
        self.answered += other.answered;
        self.unanswered += other.unanswered;
        self.pushed += other.pushed;
        self.disconnects += other.disconnects;
        add_histograms(&mut self.round_trip, &other.round_trip, source)
    }
}

#[cfg(test)]
mod tests {
    use super::super::saved::tests::run;
    use super::*;
    use crate::report::timeline::IntervalHistogram;

    const S: u64 = 1_000_000_000;

    fn part(sent: u64, at_us: u64, start_unix_ns: u64) -> SavedWsRun {
        let mut r = run();
        let mut h = new_histogram();
        h.record_n(at_us, sent).unwrap();
        r.round_trip = SavedHistogram::of(&h);
        r.messages = SavedWsMessages {
            due: Some(sent),
            sent,
            answered: sent,
            ..SavedWsMessages::default()
        };
        r.connections.closes.insert("close 1001".into(), 1);
        r.intervals = (0..2)
            .map(|k| SavedWsInterval {
                span: IntervalSpan {
                    start_s: k as f64,
                    start_unix_ns: start_unix_ns + k * S,
                    duration_s: 1.0,
                },
                sent: sent / 2,
                answered: sent / 2,
                unanswered: 0,
                pushed: 0,
                disconnects: 0,
                round_trip: IntervalHistogram::of(&h),
            })
            .collect();
        r
    }

    #[test]
    fn counts_and_histograms_add_exactly_and_intervals_line_up() {
        let (a, b) = (part(100, 1_000, 10 * S), part(300, 5_000, 10 * S));
        let merged = merge(&[(&a, "a.json"), (&b, "b.json")], "both").unwrap();
        let m = &merged.messages;
        assert_eq!((m.due, m.sent, m.answered), (Some(400), 400, 400));
        assert_eq!(merged.round_trip.count, 400);
        assert_eq!(merged.round_trip.max, b.round_trip.max);
        assert_eq!(merged.connections.closes["close 1001"], 2);
        assert_eq!((merged.plan.connections, merged.plan.rate), (2, Some(200)));
        assert_eq!(merged.intervals.len(), 2);
        assert_eq!(merged.intervals[1].sent, 200);
        assert_eq!(merged.intervals[1].round_trip.count, 400);
        assert_eq!(merged.label, "both");
    }
}
