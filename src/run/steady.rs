//! Whether a capacity step's server answered steadily, read from its runs' intervals: a
//! server that stopped answering (a frozen process whose kernel still accepts connections,
//! so that the pre-flight check finds it alive), and errors that came in a burst and went
//! while the load stayed the same (a server that fails now and then, whatever its load).
//! Neither is a load's verdict: the first is a failed search, the second an unstable server.

use crate::capacity::STALL_US;
use crate::report::http::saved::SavedRun;
use crate::report::timeline::SavedInterval;
use crate::slo::Verdict;

/// An interval where at least this share of the requests answered failed is a burst of errors.
const BURST_SHARE: f64 = 0.5;

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
/// stall) followed by an interval without errors, over the warm-up's intervals and then the
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
    let warm = warm_up.map_or(&[][..], |w| w.intervals.as_slice());
    let all: Vec<(&str, usize, &SavedInterval)> = warm
        .iter()
        .enumerate()
        .map(|(i, interval)| ("warm-up", i, interval))
        .chain(
            judged
                .intervals
                .iter()
                .enumerate()
                .map(|(i, interval)| ("judged run", i, interval)),
        )
        .collect();
    let failed = |i: &SavedInterval| i.errors.status + i.errors.socket_total();
    let answered = |i: &SavedInterval| i.completed + i.errors.socket_total();
    for (k, (phase, number, interval)) in all.iter().enumerate().skip(1) {
        let asked = answered(interval);
        if asked < BURST_MIN || interval.send_lateness.max > STALL_US {
            continue;
        }
        let share = failed(interval) as f64 / asked as f64;
        if share < BURST_SHARE || share * 100.0 <= errors_limit {
            continue;
        }
        let clean_after = all[k + 1..]
            .iter()
            .any(|(_, _, later)| later.completed > 0 && failed(later) == 0);
        if clean_after {
            return Some(format!(
                "errors came and went at a steady load: {:.0}% of requests failed in second {} \
                 of the {phase}, none after",
                share * 100.0,
                number + 1
            ));
        }
    }
    None
}
