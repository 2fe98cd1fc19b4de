//! A judged step that ends before its `--step` is over because it held beyond doubt: every
//! objective far under its limit, with the samples each needs, after a least judged time.
//!
//! Far under means, from the run's counts so far:
//! - errors: the failed share's upper bound ([`SIGMAS`] standard errors above) at most the
//!   limit over [`FAR`] (`errors<1%`: 0.5 %);
//! - a latency objective `pNN<X` (a share `q` of responses allowed to reach X): at least
//!   [`HELD_SAMPLES`] / `q` responses (p99: 1,000; p99.9: 10,000), the share of them that
//!   reached X / [`FAR`] at most `q` in its upper bound, and in the last second too (a
//!   latency on its way up is not far under). `max<X` never holds before the end: any later
//!   response may break it;
//! - the requests due so far answered, in the whole run and in its last second, at least
//!   [`ANSWERED_SHARE`] (or nearer all with `rate>N%`): a server that answers late or not at
//!   all is not far under;
//! - at least [`HeldEnd::min_judged`]: [`MIN_JUDGED`], or [`MIN_JUDGED_PART`] of `--step`,
//!   the longer. A server that degrades over time (a queue that fills: nginx's `limit_req`
//!   with a `burst`) can look far under for a while; a step ends no sooner than this, and
//!   `--whole-steps` runs every step whole.
//!
//! Any other objective (the search's mahjong measures) cannot be read as the step runs: no step
//! ends held.

use std::time::Duration;

use super::early::{upper_bound, Counts, EndEarly, HeldEnd};
use crate::slo::{Measure, Objective, Percentile, FAR};

/// A held step's least judged time.
pub const MIN_JUDGED: Duration = Duration::from_secs(2);

/// A held step's least judged time, as a part of `--step`.
pub const MIN_JUDGED_PART: f64 = 0.4;

/// A latency objective `pNN` holds early from this many responses over its share `q`.
pub const HELD_SAMPLES: f64 = 10.0;

/// The share of the requests due that must have been answered, without a `rate>` objective.
pub const ANSWERED_SHARE: f64 = 0.9;

/// How a step at `rate` of `--step` long ends held, with `objectives`; `None` with
/// `--whole-steps` (`whole`), or with an objective that cannot be read as the step runs.
pub fn held_end(
    objectives: &[Objective],
    rate: u64,
    step: Duration,
    whole: bool,
) -> Option<HeldEnd> {
    if whole || !judged_as_it_runs(objectives) {
        return None;
    }
    // `rate>95%`: answered far nearer all than the limit (97.5 %).
    let answered_share = objectives
        .iter()
        .filter(|o| o.measure == Measure::RateShare && !o.below)
        .map(|o| 1.0 - (1.0 - o.limit / 100.0) / FAR)
        .fold(ANSWERED_SHARE, f64::max);
    Some(HeldEnd {
        rate,
        min_judged: MIN_JUDGED.max(step.mul_f64(MIN_JUDGED_PART)),
        answered_share,
    })
}

/// Whether every objective can be read as the step runs, far under its limit.
pub fn judged_as_it_runs(objectives: &[Objective]) -> bool {
    objectives.iter().all(|o| match o.measure {
        Measure::ErrorShare => o.below,
        Measure::Latency(p) => o.below && p != Percentile::Max,
        Measure::RateShare => !o.below,
        _ => false,
    }) && objectives
        .iter()
        .filter(|o| matches!(o.measure, Measure::Latency(_)))
        .count()
        <= super::early::MAX_LATENCY
}

/// Whether a run held far under every objective: its counts so far at `elapsed`, and those of
/// its last second, `span` long.
pub fn held(
    rule: &EndEarly,
    (elapsed, total): (Duration, &Counts),
    last: (Duration, &Counts),
) -> bool {
    let Some(end) = rule.held else {
        return false;
    };
    if elapsed < end.min_judged {
        return false;
    }
    let answered = |span: Duration, counts: &Counts| {
        counts.answered as f64 >= end.answered_share * end.rate as f64 * span.as_secs_f64()
    };
    if !answered(elapsed, total) || !answered(last.0, last.1) {
        return false;
    }
    let errors_under = rule
        .errors_limit
        .is_none_or(|limit| upper_bound(total.answered, total.failed) * 100.0 <= limit / FAR);
    errors_under
        && rule.latency.iter().enumerate().all(|(k, l)| {
            let (over, over_last) = (total.over[2 * k], last.1.over[2 * k]);
            total.responses as f64 >= HELD_SAMPLES / l.over_share
                && upper_bound(total.responses, over) <= l.over_share
                && over_last as f64 <= l.over_share * last.1.responses as f64
        })
}

#[cfg(test)]
mod tests {
    use super::super::early::{latency, objectives};
    use super::*;

    /// p99<10ms and errors<1% at 4,000 requests/sec, steps of 5 s.
    fn rule() -> EndEarly {
        let all = objectives(&["p99<10ms", "errors<1%"]);
        let held = held_end(&all, 4_000, Duration::from_secs(5), false);
        EndEarly::of(&all, held).expect("a rule")
    }

    /// Seconds of 4,000 answered, `failed` of them failed, `half` at 5 ms or more: held when?
    fn held_at(rule: &EndEarly, seconds: &[(u64, u64)]) -> Option<usize> {
        let mut total = Counts::default();
        seconds.iter().enumerate().position(|(k, &(failed, half))| {
            let this = Counts {
                answered: 4_000,
                failed,
                responses: 4_000,
                over: [half, 0, 0, 0, 0, 0],
            };
            total.answered += this.answered;
            total.failed += this.failed;
            total.responses += this.responses;
            total.over[0] += half;
            let second = Duration::from_secs(1);
            held(rule, (second * (k as u32 + 1), &total), (second, &this))
        })
    }

    #[test]
    fn a_step_far_under_ends_held_after_its_least_judged_time() {
        // 2 s, or 2/5 of a 5 s step: after the second second.
        assert_eq!(held_at(&rule(), &[(0, 0); 5]), Some(1));
        // A 10 s step: after 4 s.
        let all = objectives(&["p99<10ms"]);
        let ten = held_end(&all, 4_000, Duration::from_secs(10), false);
        assert_eq!(
            held_at(&EndEarly::of(&all, ten).unwrap(), &[(0, 0); 9]),
            Some(3)
        );
        // A few at half the limit and an error now and then: still far under.
        assert_eq!(held_at(&rule(), &[(2, 10); 5]), Some(1));
    }

    #[test]
    fn a_step_near_its_limits_runs_whole() {
        // 1.2 % at half the p99's limit: the p99 may be near it.
        assert_eq!(held_at(&rule(), &[(0, 48); 5]), None);
        // 0.8 %: the p99 is under half its limit, beyond doubt after 5 s.
        assert_eq!(held_at(&rule(), &[(0, 32); 5]), Some(4));
        // Errors at 0.6 % against errors<1%: not under half of it.
        assert_eq!(held_at(&rule(), &[(24, 0); 5]), None);
        // A latency on its way up: the last second's share over half the limit.
        assert_eq!(
            held_at(&rule(), &[(0, 0), (0, 50), (0, 50), (0, 0)]),
            Some(3)
        );
    }

    #[test]
    fn a_step_behind_its_rate_or_too_short_runs_whole() {
        // Half the requests due answered.
        let mut r = rule();
        if let Some(h) = r.held.as_mut() {
            h.rate = 8_000;
        }
        assert_eq!(held_at(&r, &[(0, 0); 5]), None);
        // p99.9 needs 10,000 responses: the third second.
        let all = objectives(&["p99.9<10ms"]);
        let h = held_end(&all, 4_000, Duration::from_secs(5), false);
        assert_eq!(
            held_at(&EndEarly::of(&all, h).unwrap(), &[(0, 0); 5]),
            Some(2)
        );
    }

    #[test]
    fn whole_steps_max_and_other_measures_never_end_held() {
        let all = objectives(&["p99<10ms", "errors<1%"]);
        assert!(held_end(&all, 4_000, Duration::from_secs(5), true).is_none());
        let with_max = objectives(&["max<100ms", "p99<10ms"]);
        let h = held_end(&with_max, 4_000, Duration::from_secs(5), false);
        let rule = EndEarly::of(&with_max, h).unwrap();
        assert!(rule.held.is_none());
        assert_eq!(rule.latency[0], latency(Percentile::Max, 100_000, 0));
    }
}
