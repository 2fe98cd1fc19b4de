//! An HTTP run as it goes (`--dashboard`): the answer so far from the intervals its workers
//! handed over, and the report's charts over time of the whole ones, laid out as the intervals
//! of the saved run are: the same figures as the final page, so far.

use super::intervals::{http_intervals, set_targets, SavedInterval};
use super::page::over_time;
use crate::report::result::{figure, Figure, PageContent};
use crate::report::timeline::{self, IntervalHistogram};
use crate::stats::format::format_time_us;
use crate::stats::hdr;
use crate::stats::http::live;
use crate::stats::http::RunTimeline;
use crate::stats::live::LiveRun;
use crate::stats::timeline::{server_by_interval, IntervalClock};
use crate::timing::clock;
use crate::timing::stages::Target;
use std::time::Duration;

/// The whole intervals of the current run laid out so far.
pub type Laid = timeline::Laid<SavedInterval>;

/// The live page's content of an HTTP run (`laid`: what earlier renders of it laid out).
pub fn content(run: &LiveRun, h: &live::Data, laid: &mut Laid) -> PageContent {
    let whole = lay_out(run, h, laid);
    let elapsed_s = whole as f64 * (run.length as f64 / 1e9);
    let intervals = &laid.intervals;
    let mut figures = rate_figures(h, target_now(run, h), intervals, elapsed_s);
    figures.extend(latency_figures(h, intervals.last()));
    PageContent {
        kind: if run.ended {
            "HTTP run (ended)".to_string()
        } else {
            "HTTP run (live)".to_string()
        },
        figures,
        lines: lines(&h.totals),
        calm: Vec::new(),
        facts: vec![(
            "Ran".to_string(),
            format!("{elapsed_s:.0}s of whole intervals"),
        )],
        charts: over_time(intervals, h.rate, &h.stages),
    }
}

/// Lays out the whole intervals not laid out yet (from the first on, stopping at the first that
/// is not whole), each with the server's samples of its time; returns how many are whole.
fn lay_out(run: &LiveRun, h: &live::Data, laid: &mut Laid) -> usize {
    let mut server = match run.t0 {
        Some(t0) => server_by_interval(
            &run.server,
            IntervalClock::new(t0, Duration::from_nanos(run.length)),
        ),
        None => Default::default(),
    };
    let whole = run.whole(&h.intervals);
    let done = laid.kept(run.ended, whole);
    let length_s = run.length as f64 / 1e9;
    let new: Vec<_> = h
        .intervals
        .iter()
        .skip(done)
        .take(whole - done)
        .map(|(index, (_, interval))| (interval.clone(), server.remove(index)))
        .collect();
    let timeline = RunTimeline {
        length: run.length,
        start_unix_ns: run
            .start_unix_ns
            .unwrap_or_default()
            .saturating_add(run.length.saturating_mul(done as u64)),
        intervals: new,
    };
    let count = timeline.intervals.len();
    let target = target(h);
    for mut interval in http_intervals(&timeline, count as f64 * length_s) {
        interval.span.start_s += done as f64 * length_s;
        set_targets(std::slice::from_mut(&mut interval), &target);
        laid.intervals.push(interval);
    }
    whole
}

/// The run's target over time.
fn target(h: &live::Data) -> Target {
    Target::new(h.rate, &h.stages, h.shards)
}

/// The target now, requests/s: `-R`, or the profile's rate at this moment of the run (at its
/// start before it started); none in a closed loop.
pub fn target_now(run: &LiveRun, h: &live::Data) -> Option<f64> {
    let since = run.t0.map_or(0, |t0| clock::now().saturating_sub(t0));
    target(h).at(since)
}

/// The target, the requests, and the rate in the last interval and so far.
fn rate_figures(
    h: &live::Data,
    target: Option<f64>,
    intervals: &[SavedInterval],
    elapsed_s: f64,
) -> Vec<Figure> {
    let t = &h.totals;
    let mut figures: Vec<Figure> = vec![
        figure(
            "target",
            "Target rate",
            target.map_or("closed loop".to_string(), |r| format!("{r:.0} req/s")),
            target,
        ),
        figure(
            "requests",
            "Requests",
            t.counts.completed.to_string(),
            Some(t.counts.completed as f64),
        ),
    ];
    let rate_last = intervals
        .last()
        .filter(|i| i.span.duration_s > 0.0)
        .map(|i| i.completed as f64 / i.span.duration_s);
    figures.push(figure(
        "rate-last",
        "Rate, last interval",
        rate_last.map_or("-".to_string(), |r| format!("{r:.1} req/s")),
        rate_last,
    ));
    let whole_completed: u64 = intervals.iter().map(|i| i.completed).sum();
    let rate = (elapsed_s > 0.0).then(|| whole_completed as f64 / elapsed_s);
    figures.push(figure(
        "rate",
        "Rate so far",
        rate.map_or("-".to_string(), |r| format!("{r:.1} req/s")),
        rate,
    ));
    figures
}

/// p50 and p99 in the last interval and so far, the errors, and the send lateness.
fn latency_figures(h: &live::Data, last: Option<&SavedInterval>) -> Vec<Figure> {
    let t = &h.totals;
    let time = |us: u64| format_time_us(us as f64);
    let latency = |id, name: &str, hist: Option<&IntervalHistogram>| match hist {
        Some(hist) if hist.count > 0 => figure(id, name, time(hist.p99), Some(hist.p99 as f64)),
        _ => figure(id, name, "-".to_string(), None),
    };
    let run_p = |p: f64| (!t.latency.is_empty()).then(|| hdr::value_at_percentile(&t.latency, p));
    let shown = |us: Option<u64>| us.map_or("-".to_string(), time);
    let errors = t.counts.errors.socket_total() + t.counts.errors.status;
    let mut figures = Vec::new();
    let mut last_p50 = latency("p50-last", "p50, last interval", last.map(|i| &i.latency));
    if let Some(hist) = last.map(|i| &i.latency).filter(|h| h.count > 0) {
        last_p50.shown = time(hist.p50);
        last_p50.value = Some(hist.p50 as f64);
    }
    figures.push(last_p50);
    figures.push(latency(
        "p99-last",
        "p99, last interval",
        last.map(|i| &i.latency),
    ));
    let (p50, p99) = (run_p(50.0), run_p(99.0));
    figures.push(figure(
        "p50",
        "p50 so far",
        shown(p50),
        p50.map(|v| v as f64),
    ));
    figures.push(figure(
        "p99",
        "p99 so far",
        shown(p99),
        p99.map(|v| v as f64),
    ));
    figures.push(figure(
        "errors",
        "Errors",
        format!(
            "{errors} of {}",
            t.counts.completed + t.counts.errors.socket_total()
        ),
        Some(errors as f64),
    ));
    let lateness =
        (!t.send_lateness.is_empty()).then(|| hdr::value_at_percentile(&t.send_lateness, 99.0));
    figures.push(figure(
        "lateness-p99",
        "Send lateness p99",
        shown(lateness),
        lateness.map(|v| v as f64),
    ));
    figures
}

/// The sentences under the figures: the server's latency, the requests never sent.
fn lines(t: &live::Totals) -> Vec<String> {
    let time = |us: u64| format_time_us(us as f64);
    let mut lines = Vec::new();
    if !t.server_latency.is_empty() {
        lines.push(format!(
            "Server's latency so far: p50 {}, p99 {}",
            time(hdr::value_at_percentile(&t.server_latency, 50.0)),
            time(hdr::value_at_percentile(&t.server_latency, 99.0))
        ));
    }
    let never_sent = t.counts.unsent.total();
    if never_sent > 0 {
        lines.push(format!("{never_sent} requests due were never sent"));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::http::Interval;
    use crate::stats::live::LiveData;
    use crate::stats::new_histogram;
    use crate::stats::timeline::Packed;

    fn run(intervals: u64) -> (LiveRun, live::Data) {
        let mut h = live::Data {
            rate: Some(10),
            ..Default::default()
        };
        for k in 0..intervals {
            let mut latency = new_histogram();
            latency.record(100 * (k + 1)).unwrap();
            h.intervals.insert(
                k,
                (
                    1,
                    Interval {
                        sent: k + 1,
                        completed: k + 1,
                        latency: Packed::pack(&latency),
                        ..Interval::default()
                    },
                ),
            );
        }
        let run = LiveRun {
            labels: Default::default(),
            workers: 1,
            length: 1_000_000_000,
            start_unix_ns: Some(5_000_000_000),
            t0: None,
            server: Vec::new(),
            ended: false,
            data: LiveData::Http(Box::new(h.clone())),
        };
        (run, h)
    }

    /// Laid out a few at a time over renders, the intervals are those laid out at once.
    #[test]
    fn intervals_laid_out_render_by_render_are_those_laid_out_at_once() {
        let mut laid = Laid::default();
        let (one, h1) = run(1);
        content(&one, &h1, &mut laid);
        let (three, h3) = run(3);
        let by_renders = content(&three, &h3, &mut laid);
        let mut fresh = Laid::default();
        let at_once = content(&three, &h3, &mut fresh);
        assert_eq!(laid.intervals, fresh.intervals);
        assert_eq!(laid.intervals.len(), 3);
        assert_eq!(laid.intervals[2].span.start_s, 2.0);
        assert_eq!(laid.intervals[2].latency.p99, 300);
        assert_eq!(
            laid.intervals[1].span.start_unix_ns, 6_000_000_000,
            "{:?}",
            laid.intervals[1].span
        );
        assert_eq!(by_renders.figures.len(), at_once.figures.len());
    }
}
