//! A judged run's watch: fed its gauges' counts once a second, it says when the run may end, its
//! verdict settled: broken beyond doubt on its errors or a latency objective (`early`), or held
//! far under them all (`held`).

use std::time::Duration;

use super::early::{Counts, EndEarly, LATENCY_TICKS, MIN_ANSWERED, STEADY_S};

/// Steady seconds of one rule since the judged run's start.
#[derive(Debug, Clone, Copy, Default)]
struct Steady {
    ticks: u32,
    /// A second that was not steady: the rule waits for the run's end.
    spoilt: bool,
}

impl Steady {
    /// Counts a second, steady or not (`None`: too few samples to say); the steady seconds.
    fn second(&mut self, steady: Option<bool>) -> Option<u32> {
        match steady {
            Some(false) => self.spoilt = true,
            Some(true) if !self.spoilt => self.ticks += 1,
            _ => {}
        }
        (!self.spoilt).then_some(self.ticks)
    }
}

/// A judged run's watch: fed its counts once a second, it says when the run may end.
#[derive(Debug, Clone)]
pub struct Watch {
    rule: EndEarly,
    errors: Steady,
    latency: Vec<Steady>,
    /// The judged run's seconds seen.
    ticks: u32,
    /// The counts and the run's elapsed time at the previous second.
    last: (Counts, Duration),
}

impl Watch {
    pub fn new(rule: EndEarly) -> Watch {
        Watch {
            latency: vec![Steady::default(); rule.latency.len()],
            rule,
            errors: Steady::default(),
            ticks: 0,
            last: (Counts::default(), Duration::ZERO),
        }
    }

    /// The run's counts so far at a second's end (all counted from the run's start), at
    /// `elapsed` into it; `true`: its verdict is settled, broken or held beyond doubt: end it.
    pub fn tick(&mut self, elapsed: Duration, now: Counts) -> bool {
        let (last, last_elapsed) = std::mem::replace(&mut self.last, (now, elapsed));
        let this = now.since(&last);
        self.ticks += 1;
        let mut settled = false;
        if self.rule.errors_limit.is_some() {
            let steady = self.rule.steady(this.answered, this.failed);
            let ticks = self.errors.second(Some(steady));
            settled |= ticks.is_some_and(|t| t >= self.rule.ticks_needed())
                && self.rule.beyond_doubt(now.answered, now.failed);
        }
        for (k, (rule, steady)) in self.rule.latency.iter().zip(&mut self.latency).enumerate() {
            let (far_now, far_this) = (now.over[2 * k + 1], this.over[2 * k + 1]);
            let seen = (this.responses >= MIN_ANSWERED || rule.over_share == 0.0)
                .then(|| rule.over_share == 0.0 || rule.steady(this.responses, far_this));
            let ticks = steady.second(seen).map_or(0, |t| t + rule.warm_up_s);
            settled |= self.ticks >= LATENCY_TICKS
                && (ticks >= STEADY_S || rule.over_share == 0.0)
                && rule.beyond_doubt(now.responses, far_now);
        }
        let span = elapsed.saturating_sub(last_elapsed);
        settled || super::held::held(&self.rule, (elapsed, &now), (span, &this))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::early::{latency, objectives};
    use crate::slo::Percentile;

    fn errors(limit: f64, warm_up_s: u32) -> EndEarly {
        EndEarly {
            errors_limit: Some(limit),
            warm_up_s,
            latency: Vec::new(),
            held: None,
        }
    }

    fn p99(limit_us: u64, warm_up_s: u32) -> EndEarly {
        EndEarly {
            errors_limit: None,
            warm_up_s: 0,
            latency: vec![latency(Percentile::P99, limit_us, warm_up_s)],
            held: None,
        }
    }

    /// Feeds a second at a time (answered, failed in that second); the second it ends in.
    fn ends_at(rule: EndEarly, seconds: &[(u64, u64)]) -> Option<usize> {
        let with_latency: Vec<(u64, u64, [u64; 2])> =
            seconds.iter().map(|&(a, f)| (a, f, [0, 0])).collect();
        ends_at_over(rule, &with_latency)
    }

    /// Feeds a second at a time (answered, failed, and the responses that reached the first
    /// objective's half and twice its limit in that second; every answer a response).
    fn ends_at_over(rule: EndEarly, seconds: &[(u64, u64, [u64; 2])]) -> Option<usize> {
        let mut w = Watch::new(rule);
        let mut now = Counts::default();
        seconds
            .iter()
            .enumerate()
            .position(|(k, &(a, f, [half, far]))| {
                now.answered += a;
                now.failed += f;
                now.responses += a;
                now.over[0] += half;
                now.over[1] += far;
                w.tick(std::time::Duration::from_secs(k as u64 + 1), now)
            })
    }

    #[test]
    fn steady_errors_far_beyond_end_the_step_after_the_warm_up_and_two_seconds() {
        // 37.5 % of 8,000 a second against errors<1%, after a 1-second warm-up that failed so.
        let second = (8_000, 3_000);
        assert_eq!(ends_at(errors(1.0, 1), &[second; 5]), Some(1));
        // No warm-up: three seconds of its own.
        assert_eq!(ends_at(errors(1.0, 0), &[second; 5]), Some(2));
        // A warm-up of three steady seconds: one of its own is enough.
        assert_eq!(ends_at(errors(1.0, 3), &[second; 5]), Some(0));
    }

    #[test]
    fn a_break_near_its_limit_runs_to_the_end() {
        // 1.5 % against errors<1%: broken, but not twice the limit (it may be run again).
        assert_eq!(ends_at(errors(1.0, 3), &[(4_000, 60); 5]), None);
        // 2.5 %: far beyond.
        assert_eq!(ends_at(errors(1.0, 1), &[(4_200, 105); 5]), Some(1));
    }

    #[test]
    fn a_failing_moment_is_not_a_break_beyond_doubt() {
        // A failing second split over two, then none: the step runs on to see them go.
        let seconds = [(200, 100), (200, 100), (200, 0), (200, 0), (200, 0)];
        assert_eq!(ends_at(errors(1.0, 0), &seconds), None);
        // Even when the warm-up ended failing: the second judged second is clean.
        assert_eq!(ends_at(errors(1.0, 1), &[(200, 100), (200, 0)]), None);
        // Once a second was clean, later errors do not end it either.
        let late = [(200, 0), (200, 100), (200, 100), (200, 100), (200, 100)];
        assert_eq!(ends_at(errors(1.0, 3), &late), None);
    }

    #[test]
    fn too_few_requests_say_nothing() {
        // 5 failed of 10 a second: seconds below MIN_ANSWERED do not count as steady.
        assert_eq!(ends_at(errors(1.0, 3), &[(10, 5); 5]), None);
        // 32 % of 25 against 10 %: over twice the limit, but its lower bound (3 standard
        // errors below, 4 %) is not over 10 %.
        assert_eq!(ends_at(errors(10.0, 3), &[(25, 8)]), None);
        // The same share over 2 seconds (lower bound 12 %): beyond doubt.
        assert_eq!(ends_at(errors(10.0, 3), &[(25, 8); 4]), Some(1));
    }

    #[test]
    fn a_p99_far_beyond_ends_after_two_judged_seconds_and_three_steady() {
        // 4,000 a second, 5 % of them at twice the limit: after a steady warm-up second, the
        // second judged second ends it.
        let second = (4_000, 0, [400, 200]);
        assert_eq!(ends_at_over(p99(10_000, 1), &[second; 5]), Some(1));
        // No warm-up: three judged seconds.
        assert_eq!(ends_at_over(p99(10_000, 0), &[second; 5]), Some(2));
        // Never before two judged seconds, whatever the warm-up.
        assert_eq!(ends_at_over(p99(10_000, 5), &[second; 5]), Some(1));
        // The rule reads the counts at twice the limit, its second limit.
        assert_eq!(p99(10_000, 0).over_limits(), [5_000, 20_000]);
    }

    #[test]
    fn a_p99_near_its_limit_or_a_moment_over_runs_to_the_end() {
        // 1.5 % at twice the limit: the p99 is, but not far enough (under 2 %).
        assert_eq!(
            ends_at_over(p99(10_000, 1), &[(4_000, 0, [100, 60]); 5]),
            None
        );
        // A stall over two seconds, then a second under the limit: the step runs on.
        let stall = [
            (4_000, 0, [400, 200]),
            (4_000, 0, [400, 200]),
            (4_000, 0, [0, 0]),
        ];
        assert_eq!(ends_at_over(p99(10_000, 0), &stall), None);
        // 2.5 % of 200 a second: over 2 %, but its lower bound is not over 1 % in two
        // seconds; in five it is.
        assert_eq!(ends_at_over(p99(10_000, 3), &[(200, 0, [5, 5]); 2]), None);
        assert_eq!(
            ends_at_over(p99(10_000, 3), &[(200, 0, [5, 5]); 6]),
            Some(4)
        );
    }

    #[test]
    fn a_max_reached_twice_its_limit_ends_after_two_judged_seconds() {
        let rule = EndEarly {
            latency: vec![latency(Percentile::Max, 10_000, 0)],
            ..p99(0, 0)
        };
        assert_eq!(
            ends_at_over(rule.clone(), &[(4_000, 0, [1, 1]); 3]),
            Some(1)
        );
        assert_eq!(ends_at_over(rule, &[(4_000, 0, [9, 0]); 3]), None);
    }

    #[test]
    fn the_rule_reads_the_objectives() {
        let all = objectives(&["p99<10ms", "errors<1%", "p50<2ms"]);
        let rule = EndEarly::of(&all, None).expect("a rule");
        assert_eq!(rule.errors_limit, Some(1.0));
        assert_eq!(rule.over_limits(), [5_000, 20_000, 1_000, 4_000]);
        assert_eq!(rule.latency[1].over_share, 0.5);
        assert!(EndEarly::of(&objectives(&["rate>95%"]), None).is_none());
    }
}
