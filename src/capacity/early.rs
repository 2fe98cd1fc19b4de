//! A judged step that ends before its `--step` is over, its verdict settled: read once a second
//! from the run's gauges (issue 43: 37.5 % errors against `errors<1%` ran its whole step
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
//! Held beyond doubt ([`HeldEnd`], in `held`): every objective far under its limit. The watch
//! that reads the counts once a second is in `watch`.

use crate::slo::{Measure, Objective, Percentile, FAR};
use crate::stats::http::over::OVER_LIMITS;

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

/// The latency objectives a watch counts as the run goes (two limits each).
pub const MAX_LATENCY: usize = OVER_LIMITS / 2;

pub use crate::plan::{EndEarly, HeldEnd, LatencyEnd};

impl EndEarly {
    /// The rule for a step judged on `objectives`: `None` when none can end a step early.
    /// `held`: how a step far under all of them ends (`None`: never).
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
            held,
        })
    }

    /// The latencies the workers count in their gauges, µs: each objective's limit over
    /// [`FAR`] (held far under), then times [`FAR`] (broken far beyond).
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
    pub fn ticks_needed(&self) -> u32 {
        STEADY_S.saturating_sub(self.warm_up_s).max(MIN_TICKS)
    }

    /// Whether the whole run's `failed` of `answered` broke the limit beyond doubt.
    pub fn beyond_doubt(&self, answered: u64, failed: u64) -> bool {
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
    pub fn beyond_doubt(&self, responses: u64, over: u64) -> bool {
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
    pub fn since(&self, last: &Counts) -> Counts {
        Counts {
            answered: self.answered.saturating_sub(last.answered),
            failed: self.failed.saturating_sub(last.failed),
            responses: self.responses.saturating_sub(last.responses),
            over: std::array::from_fn(|i| self.over[i].saturating_sub(last.over[i])),
        }
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

/// The objectives parsed from `exprs`.
#[cfg(test)]
pub(super) fn objectives(exprs: &[&str]) -> Vec<Objective> {
    exprs
        .iter()
        .map(|e| crate::slo::parse_http(e).expect("an objective"))
        .collect()
}
