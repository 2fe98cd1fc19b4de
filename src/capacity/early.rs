//! A judged step that ends before its `--step` is over, because its errors objective broke
//! beyond doubt: read once a second from the run's live counts (issue 43: 37.5 % errors
//! against `errors<1%` ran its whole step before).
//!
//! Beyond doubt means three things at once:
//! - the failed share of the requests answered so far is at least [`FAR`] times the limit (so
//!   that the step's verdict, from the whole shortened run, breaks beyond doubt as well and
//!   needs no second trial), and its lower bound ([`SIGMAS`] standard errors below) is over
//!   the limit, from [`MIN_ANSWERED`] requests answered at least;
//! - the errors are steady: every second of the judged run so far failed at least [`FAR`]
//!   times the limit, and so did the warm-up's last seconds, together [`STEADY_S`] seconds
//!   at least. A server failing for a moment (issue 43's every 13th second) touches two
//!   seconds at most: its step runs on, and its errors are seen to go;
//! - at least [`MIN_TICKS`] of the judged run's own seconds were seen.

use crate::slo::FAR;

/// The seconds of steady errors, the warm-up's last ones with the judged run's first ones,
/// before a step ends early: a failing moment of up to a second touches two at most.
pub const STEADY_S: u32 = 3;

/// A judged run's own seconds seen before it ends early, whatever its warm-up showed.
pub const MIN_TICKS: u32 = 1;

/// A second counts as steady from this many requests answered in it.
pub const MIN_ANSWERED: u64 = 20;

/// The failed share's lower bound is this many standard errors below it.
pub const SIGMAS: f64 = 3.0;

pub use crate::plan::EndEarly;

impl EndEarly {
    /// The failed share, in %, a second must reach to count as steady.
    pub fn steady_share(&self) -> f64 {
        self.errors_limit * FAR
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
        if answered < MIN_ANSWERED {
            return false;
        }
        let p = failed as f64 / answered as f64;
        let error = (p * (1.0 - p) / answered as f64).sqrt();
        p * 100.0 >= self.steady_share() && (p - SIGMAS * error) * 100.0 > self.errors_limit
    }
}

/// `failed` of `answered` in %.
fn share(answered: u64, failed: u64) -> f64 {
    failed as f64 * 100.0 / answered.max(1) as f64
}

/// A judged run's watch: fed its counts once a second, it says when the run may end.
#[derive(Debug, Clone)]
pub struct Watch {
    rule: EndEarly,
    /// Steady seconds of the judged run since its start.
    ticks: u32,
    /// A second that was not steady: the run goes to its end.
    spoilt: bool,
    /// The counts at the previous second: requests answered (responses and socket errors),
    /// and failed (4xx/5xx responses and socket errors).
    last: (u64, u64),
}

impl Watch {
    pub fn new(rule: EndEarly) -> Watch {
        Watch {
            rule,
            ticks: 0,
            spoilt: false,
            last: (0, 0),
        }
    }

    /// The run's counts so far at a second's end (answered, failed: both counted from the
    /// run's start); `true`: its errors broke beyond doubt, end it now.
    pub fn tick(&mut self, answered: u64, failed: u64) -> bool {
        let (last_answered, last_failed) = self.last;
        self.last = (answered, failed);
        if self.spoilt {
            return false;
        }
        let this = (
            answered.saturating_sub(last_answered),
            failed.saturating_sub(last_failed),
        );
        if !self.rule.steady(this.0, this.1) {
            self.spoilt = true;
            return false;
        }
        self.ticks += 1;
        self.ticks >= self.rule.ticks_needed() && self.rule.beyond_doubt(answered, failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(limit: f64, warm_up_s: u32) -> Watch {
        Watch::new(EndEarly {
            errors_limit: limit,
            warm_up_s,
        })
    }

    /// Feeds a second at a time (answered, failed in that second); the second it ends in.
    fn ends_at(mut w: Watch, seconds: &[(u64, u64)]) -> Option<usize> {
        let (mut answered, mut failed) = (0, 0);
        seconds.iter().position(|&(a, f)| {
            answered += a;
            failed += f;
            w.tick(answered, failed)
        })
    }

    #[test]
    fn steady_errors_far_beyond_end_the_step_after_the_warm_up_and_two_seconds() {
        // 37.5 % of 8,000 a second against errors<1%, after a 1-second warm-up that failed so.
        let second = (8_000, 3_000);
        assert_eq!(ends_at(watch(1.0, 1), &[second; 5]), Some(1));
        // No warm-up: three seconds of its own.
        assert_eq!(ends_at(watch(1.0, 0), &[second; 5]), Some(2));
        // A warm-up of three steady seconds: one of its own is enough.
        assert_eq!(ends_at(watch(1.0, 3), &[second; 5]), Some(0));
    }

    #[test]
    fn a_break_near_its_limit_runs_to_the_end() {
        // 1.5 % against errors<1%: broken, but not twice the limit (it may be run again).
        assert_eq!(ends_at(watch(1.0, 3), &[(4_000, 60); 5]), None);
        // 2.5 %: far beyond.
        assert_eq!(ends_at(watch(1.0, 1), &[(4_200, 105); 5]), Some(1));
    }

    #[test]
    fn a_failing_moment_is_not_a_break_beyond_doubt() {
        // A failing second split over two, then none: the step runs on to see them go.
        let seconds = [(200, 100), (200, 100), (200, 0), (200, 0), (200, 0)];
        assert_eq!(ends_at(watch(1.0, 0), &seconds), None);
        // Even when the warm-up ended failing: the second judged second is clean.
        assert_eq!(ends_at(watch(1.0, 1), &[(200, 100), (200, 0)]), None);
        // Once a second was clean, later errors do not end it either.
        let late = [(200, 0), (200, 100), (200, 100), (200, 100), (200, 100)];
        assert_eq!(ends_at(watch(1.0, 3), &late), None);
    }

    #[test]
    fn too_few_requests_say_nothing() {
        // 5 failed of 10 a second: seconds below MIN_ANSWERED do not count as steady.
        assert_eq!(ends_at(watch(1.0, 3), &[(10, 5); 5]), None);
        // 32 % of 25 against 10 %: over twice the limit, but its lower bound (3 standard
        // errors below, 4 %) is not over 10 %.
        assert_eq!(ends_at(watch(10.0, 3), &[(25, 8)]), None);
        // The same share over 2 seconds (lower bound 12 %): beyond doubt.
        assert_eq!(ends_at(watch(10.0, 3), &[(25, 8); 4]), Some(1));
    }
}
