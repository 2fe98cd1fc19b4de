//! Whether a capacity step's server answered steadily, read from its runs' intervals: a
//! server that stopped answering (a frozen process whose kernel still accepts connections,
//! so that the pre-flight check finds it alive), and errors that came in a burst and went
//! while the load stayed the same (a server that fails now and then, whatever its load).
//! Neither is a load's verdict: the first is a failed search, the second an unstable server.

use crate::capacity::{EndEarly, STALL_US};
use crate::report::http::intervals::SavedInterval;
use crate::report::http::saved::SavedRun;
use crate::slo::Verdict;

/// An interval where at least this share of the requests answered failed is a burst of errors
/// (a failing second split over two intervals leaves half of it, or less, in each).
const BURST_SHARE: f64 = 0.2;

/// A burst counts from this many requests answered in its interval.
const BURST_MIN: u64 = 5;

/// A server answering nothing for this long (or `--timeout`, if longer) at a step's end has
/// stopped answering.
const SILENT_S: f64 = 1.0;

/// `no response in the last 8.0s of the step`: the judged run's tail answered nothing while
/// requests were due (and the server answered in the search before, or never did at all).
pub fn stopped_answering(run: &SavedRun) -> Option<String> {
    let mut silent_s = 0.0;
    let mut due = 0;
    let mut intervals = 0;
    for interval in run.intervals.iter().rev() {
        if interval.completed > 0 {
            break;
        }
        silent_s += interval.span.duration_s;
        due += interval.sent + interval.errors.socket_total() + interval.unsent.total();
        intervals += 1;
    }
    let whole = intervals == run.intervals.len();
    let bound = run.plan.timeout_s.max(SILENT_S);
    (intervals > 0 && due > 0 && silent_s >= bound && run.counters.errors.timeout > 0).then(|| {
        if whole {
            format!(
                "no response in the whole step ({silent_s:.1}s), {} requests timed out",
                run.counters.errors.timeout
            )
        } else {
            format!(
                "no response in the last {silent_s:.1}s of the step, {} requests timed out",
                run.counters.errors.timeout
            )
        }
    })
}

/// `errors came and went at 400: 96% of requests failed in second 3 of the warm-up, none
/// after`: a burst of errors beyond an errors objective (in an interval where tsumo did not
/// stall) followed by an interval where they were gone ([`GONE`]), over the warm-up's intervals and then the
/// judged run's (the first interval left out: connections open there). `None` without an
/// errors objective, or when the judged run broke another objective as well (its break is
/// then the load's).
pub fn error_burst(warm_up: Option<&SavedRun>, judged: &SavedRun) -> Option<String> {
    let errors_limit = judged
        .objectives
        .iter()
        .filter(|v| v.name() == "errors")
        .filter_map(Verdict::limit)
        .reduce(f64::min)?;
    if judged
        .objectives
        .iter()
        .any(|v| !v.held && v.name() != "errors")
    {
        return None;
    }
    let all = timeline(warm_up, judged);
    for (k, (phase, number, interval)) in all.iter().enumerate().skip(1) {
        let Some(share) = share_of(interval) else {
            continue;
        };
        if interval.send_lateness.max > STALL_US || share < BURST_SHARE {
            continue;
        }
        if share * 100.0 <= errors_limit {
            continue;
        }
        let went = all[k + 1..]
            .iter()
            .any(|(_, _, later)| gone_from(later, share));
        if went {
            return Some(format!(
                "errors came and went at a steady load: {:.0}% of requests failed in second {} \
                 of the {phase}, then they stopped",
                share * 100.0,
                number + 1
            ));
        }
    }
    None
}

/// Errors that began during the judged run, after an interval (not the warm-up's first)
/// without them, and lasted to its end (a burst in its last interval): whether they go again
/// cannot be seen in it, so the step is run again to tell a failing moment from a load that
/// broke.
pub fn errors_at_end(warm_up: Option<&SavedRun>, judged: &SavedRun) -> bool {
    let mut all = timeline(warm_up, judged);
    // A run may end with a sliver of an interval that answered next to nothing.
    while all.last().is_some_and(|(_, _, i)| share_of(i).is_none()) {
        all.pop();
    }
    let Some(((_, _, last), before)) = all.split_last() else {
        return false;
    };
    let Some(share) = share_of(last).filter(|&share| share >= BURST_SHARE) else {
        return false;
    };
    before.iter().skip(1).any(|(_, _, i)| gone_from(i, share))
}

/// The warm-up's last whole seconds whose errors were steady beyond doubt
/// ([`EndEarly::steady`]): what a judged run that ends early counts with its own. A sliver of an
/// interval at the end is left out.
pub fn steady_errors_s(warm_up: &SavedRun, rule: &EndEarly) -> u32 {
    let mut seconds = 0.0;
    let intervals = warm_up.intervals.iter().rev();
    for (k, interval) in intervals.enumerate() {
        if k == 0 && interval.span.duration_s < SLIVER_S {
            continue;
        }
        let socket = interval.errors.socket_total();
        let answered = interval.completed + socket;
        if !rule.steady(answered, interval.errors.status + socket) {
            break;
        }
        seconds += interval.span.duration_s;
    }
    // A 1-second warm-up's interval is a little under a second.
    (seconds + SLIVER_S).floor() as u32
}

/// An interval shorter than this at a run's end is a sliver.
const SLIVER_S: f64 = 0.25;

/// The warm-up's intervals, then the judged run's, each with its phase and its place in it.
fn timeline<'a>(
    warm_up: Option<&'a SavedRun>,
    judged: &'a SavedRun,
) -> Vec<(&'static str, usize, &'a SavedInterval)> {
    let phase = |name: &'static str, run: &'a SavedRun| {
        run.intervals
            .iter()
            .enumerate()
            .map(move |(i, interval)| (name, i, interval))
    };
    warm_up
        .into_iter()
        .flat_map(|w| phase("warm-up", w))
        .chain(phase("judged run", judged))
        .collect()
}

/// The share of the requests answered in an interval that failed; `None` below
/// [`BURST_MIN`] answered.
fn share_of(interval: &SavedInterval) -> Option<f64> {
    let failed = interval.errors.status + interval.errors.socket_total();
    let answered = interval.completed + interval.errors.socket_total();
    (answered >= BURST_MIN).then(|| failed as f64 / answered as f64)
}

/// An interval where the errors of a burst of `share` were gone: at most [`GONE`] of it (a
/// failing second mostly in the interval before, the rest in this one, leaves a few).
fn gone_from(interval: &SavedInterval, share: f64) -> bool {
    share_of(interval).is_some_and(|s| s <= share * GONE)
}

/// A burst's errors are gone from an interval with at most this share of the burst's: a
/// server that breaks under its load fails steadily, or more and more, never so much less.
const GONE: f64 = 0.25;
