//! A judged step that ends before its `--step` is over, its verdict settled: read once a second
//! from the run's live counts (issue 43: 37.5 % errors against `errors<1%` ran its whole step
//! before, and so did a step far under every objective). Judged time follows the samples its
//! objectives need; the shortened run is then judged as any other.
//!
//! Broken beyond doubt, on errors, means three things at once:
//! - the failed share of the requests answered so far is at least [`FAR`] times the limit (so
//!   that the step's verdict, from the whole shortened run, breaks beyond doubt as well and
//!   needs no second trial), and its lower bound ([`SIGMAS`] standard errors below) is over
//!   the limit, from [`MIN_ANSWERED`] requests answered at least;
//! - the errors are steady: every second of the judged run so far failed at least [`FAR`]
//!   times the limit, and so did the warm-up's last seconds, together [`STEADY_S`] seconds
//!   at least. A server failing for a moment (issue 43's every 13th second) touches two
//!   seconds at most: its step runs on, and its errors are seen to go;
//! - at least [`MIN_TICKS`] of the judged run's own seconds were seen.
//!
//! Broken beyond doubt, on a latency objective (`p99<X`, the share `q` = 1 % of responses
//! allowed to reach X): the same on the share of responses that reached [`FAR`] times X (so
//! that the run's p99 is at least 2X, beyond doubt in its verdict too): at least [`far_share`]
//! of the responses (2 % for p99) and its lower bound over `q`, every judged second with
//! [`MIN_ANSWERED`] responses over `q` too, [`STEADY_S`] steady seconds with the warm-up's,
//! and [`LATENCY_TICKS`] judged seconds at least (a stall of tsumo's or the server's of a
//! tenth of a second can fill two seconds' p99, not three). `max<X`: one response at 2X.
//!
//! Held beyond doubt ([`HeldEnd`], in `held`): every objective far under its limit.

use crate::slo::{Measure, Objective, Percentile, FAR};
use crate::stats::over::OVER_LIMITS;

/// The seconds of steady errors, the warm-up's last ones with the judged run's first ones,
/// before a step ends early: a failing moment of up to a second touches two at most.
pub const STEADY_S: u32 = 3;

/// A judged run's own seconds seen before it ends early on its errors, whatever its warm-up
/// showed.
pub const MIN_TICKS: u32 = 1;

/// A judged run's own seconds seen before it ends early on a latency objective.
pub const LATENCY_TICKS: u32 = 2;

/// A second counts as steady from this many requests answered in it.
pub const MIN_ANSWERED: u64 = 20;

/// The failed share's lower bound is this many standard errors below it.
pub const SIGMAS: f64 = 3.0;

/// The latency objectives a watch counts live (two limits each).
pub const MAX_LATENCY: usize = OVER_LIMITS / 2;

pub use crate::plan::{EndEarly, HeldEnd, LatencyEnd};

impl EndEarly {
    /// The rule for a step judged on `objectives`: `None` when none can end a step early.
    /// `held`: how a step far under all of them ends (`held_end`; `None`: never).
    pub fn of(objectives: &[Objective], held: Option<HeldEnd>) -> Option<EndEarly> {
        let errors_limit = objectives
            .iter()
            .filter(|o| o.measure == Measure::ErrorShare && o.below)
            .map(|o| o.limit)
            .reduce(f64::min);
        let latency: Vec<LatencyEnd> = objectives
            .iter()
            .filter_map(|o| match o.measure {
                Measure::Latency(p) if o.below => Some(LatencyEnd {
                    over_share: over_share(p),
                    limit_us: o.limit.ceil() as u64,
                    warm_up_s: 0,
                }),
                _ => None,
            })
            .take(MAX_LATENCY)
            .collect();
        if errors_limit.is_none() && latency.is_empty() {
            return None;
        }
        Some(EndEarly {
            errors_limit,
            warm_up_s: 0,
            latency,
            held: held.filter(|_| super::held::judged_live(objectives)),
        })
    }

    /// The latencies the workers count live, µs: each objective's limit over [`FAR`] (held
    /// far under), then times [`FAR`] (broken far beyond).
    pub fn over_limits(&self) -> Vec<u64> {
        self.latency
            .iter()
            .flat_map(|l| [half_of(l.limit_us), far_of(l.limit_us)])
            .collect()
    }

    /// The failed share, in %, a second must reach to count as steady.
    pub fn steady_share(&self) -> f64 {
        self.errors_limit.map_or(f64::INFINITY, |l| l * FAR)
    }

    /// Whether `failed` of `answered` (one second's) fail steadily beyond the limit.
    pub fn steady(&self, answered: u64, failed: u64) -> bool {
        answered >= MIN_ANSWERED && share(answered, failed) >= self.steady_share()
    }

    /// The judged run's own seconds needed after the warm-up's.
    fn ticks_needed(&self) -> u32 {
        STEADY_S.saturating_sub(self.warm_up_s).max(MIN_TICKS)
    }

    /// Whether the whole run's `failed` of `answered` broke the limit beyond doubt.
    fn beyond_doubt(&self, answered: u64, failed: u64) -> bool {
        let Some(limit) = self.errors_limit else {
            return false;
        };
        answered >= MIN_ANSWERED
            && share(answered, failed) >= self.steady_share()
            && lower_bound(answered, failed) * 100.0 > limit
    }
}

impl LatencyEnd {
    /// Whether `over` of `responses` (one second's) reached [`FAR`] times the limit steadily.
    pub fn steady(&self, responses: u64, over: u64) -> bool {
        responses >= MIN_ANSWERED && over as f64 / responses as f64 > self.over_share
    }

    /// Whether the whole run's `over` of `responses` reached [`FAR`] times the limit beyond
    /// doubt.
    fn beyond_doubt(&self, responses: u64, over: u64) -> bool {
        if self.over_share == 0.0 {
            return over > 0;
        }
        responses >= MIN_ANSWERED
            && over as f64 / responses as f64 >= far_share(self.over_share)
            && lower_bound(responses, over) > self.over_share
    }
}

/// The share of responses a percentile lets reach its limit: 0.01 for p99.
pub fn over_share(p: Percentile) -> f64 {
    (100.0 - p.value()) / 100.0
}

/// The share of responses at [`FAR`] times the limit that breaks beyond doubt when `over_share`
/// may reach the limit: [`FAR`] times it (2 % for p99), or halfway to all for p50 and below.
pub fn far_share(over_share: f64) -> f64 {
    (over_share * FAR).min((1.0 + over_share) / 2.0)
}

/// A limit over [`FAR`], µs, rounded up.
pub fn half_of(limit_us: u64) -> u64 {
    (limit_us as f64 / FAR).ceil() as u64
}

/// A limit times [`FAR`], µs.
pub fn far_of(limit_us: u64) -> u64 {
    (limit_us as f64 * FAR).ceil() as u64
}

/// `failed` of `answered` in %.
fn share(answered: u64, failed: u64) -> f64 {
    failed as f64 * 100.0 / answered.max(1) as f64
}

/// The share `count` of `n` is, [`SIGMAS`] standard errors below (0 to 1).
pub fn lower_bound(n: u64, count: u64) -> f64 {
    let p = count as f64 / n.max(1) as f64;
    p - SIGMAS * (p * (1.0 - p) / n.max(1) as f64).sqrt()
}

/// The share `count` of `n` is, [`SIGMAS`] standard errors above (0 to 1); none counted of
/// `n` reads as one, so that a few samples never say "none" beyond doubt.
pub fn upper_bound(n: u64, count: u64) -> f64 {
    let n = n.max(1) as f64;
    let p = count as f64 / n;
    p + SIGMAS * (p.max(1.0 / n) * (1.0 - p) / n).sqrt()
}

/// A judged run's counts so far, as its watch reads them once a second.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    /// Requests answered: responses and socket errors.
    pub answered: u64,
    /// Failed: 4xx/5xx responses and socket errors.
    pub failed: u64,
    /// Responses (each one's latency counted).
    pub responses: u64,
    /// Responses that reached each of [`EndEarly::over_limits`], in its order.
    pub over: [u64; OVER_LIMITS],
}

impl Counts {
    /// What came since `last`.
    fn since(&self, last: &Counts) -> Counts {
        Counts {
            answered: self.answered.saturating_sub(last.answered),
            failed: self.failed.saturating_sub(last.failed),
            responses: self.responses.saturating_sub(last.responses),
            over: std::array::from_fn(|i| self.over[i].saturating_sub(last.over[i])),
        }
    }
}

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
    last: (Counts, std::time::Duration),
}

impl Watch {
    pub fn new(rule: EndEarly) -> Watch {
        Watch {
            latency: vec![Steady::default(); rule.latency.len()],
            rule,
            errors: Steady::default(),
            ticks: 0,
            last: (Counts::default(), std::time::Duration::ZERO),
        }
    }

    /// The run's counts so far at a second's end (all counted from the run's start), at
    /// `elapsed` into it; `true`: its verdict is settled, broken or held beyond doubt: end it.
    pub fn tick(&mut self, elapsed: std::time::Duration, now: Counts) -> bool {
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

/// The share of responses a percentile lets reach its limit, from an objective.
#[cfg(test)]
pub(super) fn latency(p: Percentile, limit_us: u64, warm_up_s: u32) -> LatencyEnd {
    LatencyEnd {
        over_share: over_share(p),
        limit_us,
        warm_up_s,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::capacity) fn objectives(exprs: &[&str]) -> Vec<Objective> {
        exprs
            .iter()
            .map(|e| crate::slo::parse_http(e).expect("an objective"))
            .collect()
    }

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
