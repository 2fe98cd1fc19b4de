//! A `--stages` profile: the rate over time, and the exact schedule it makes.
//!
//! The requests due by time `t` are the integral of the rate up to `t`; request `n` (0-based,
//! numbered over the whole run) is due at [`Profile::at`]`(n)`, the first instant the integral
//! exceeds `n` — for a constant rate `R` that is `n / R`, today's `-R` schedule. Stage starts and
//! the integral up to each stage are kept in integer nanoseconds and exact fractions, so nothing
//! drifts across stages; inside a ramp the quadratic is solved in `f64` (to about a nanosecond).

use super::clock::Nanos;
use super::pacer::Pacing;
use crate::plan::{Plan, Stage};

/// Nanoseconds per second.
const NS: u128 = 1_000_000_000;

/// One stage that lasts (a jump lasts nothing and is left out), where it starts.
#[derive(Debug, Clone)]
struct Part {
    /// Start, ns from the start of the run.
    start: Nanos,
    /// Length, ns (> 0).
    length: Nanos,
    from: u64,
    to: u64,
    /// The integral before this stage, in requests × 2·10⁹ (exact: `Σ (from + to) · length`).
    before: u128,
}

impl Part {
    /// The integral up to the stage's end, in requests × 2·10⁹.
    fn after(&self) -> u128 {
        self.before + (self.from as u128 + self.to as u128) * self.length as u128
    }

    /// Offset in this stage, in ns (rounded down), at which the integral from the stage's start
    /// reaches `twice` / 2·10⁹ requests; `twice` is less than the stage's own integral.
    fn offset(&self, twice: u128) -> Nanos {
        let last = self.length - 1;
        if self.from == self.to {
            // A hold: exact, as `-R` is.
            return ((twice / (2 * self.from as u128)) as Nanos).min(last);
        }
        // from·s + (to − from)·s² / (2·length) = m, with m = twice / 2 (requests × 10⁹) and s
        // in ns; the root in the form without cancellation, for a ramp up or down.
        let m = twice as f64 / 2.0;
        let (r0, r1, length) = (self.from as f64, self.to as f64, self.length as f64);
        let discriminant = (r0 * r0 + 2.0 * (r1 - r0) * m / length).max(0.0);
        let denominator = r0 + discriminant.sqrt();
        if denominator <= 0.0 {
            return 0;
        }
        ((2.0 * m / denominator) as Nanos).min(last)
    }

    /// The integral from the stage's start to `offset` ns into it, in requests (approximate).
    fn integral(&self, offset: Nanos) -> f64 {
        let (r0, r1, length, s) = (
            self.from as f64,
            self.to as f64,
            self.length as f64,
            offset as f64,
        );
        (r0 * s + (r1 - r0) * s * s / (2.0 * length)) / NS as f64
    }
}

/// A run's rate over time, from its stages.
#[derive(Debug, Clone)]
pub struct Profile {
    parts: Vec<Part>,
    total: Nanos,
    peak: u64,
    /// The stages as written (jumps included).
    stages: Vec<Stage>,
}

impl Profile {
    /// The profile of `stages`, in order.
    pub fn new(stages: &[Stage]) -> Profile {
        let (mut parts, mut start, mut before) = (Vec::new(), 0u64, 0u128);
        for stage in stages {
            let part = Part {
                start,
                length: stage.duration_ns,
                from: stage.from,
                to: stage.to,
                before,
            };
            start = start.saturating_add(stage.duration_ns);
            before = part.after();
            if part.length > 0 && part.after() > part.before {
                parts.push(part);
            }
        }
        Profile {
            parts,
            total: start,
            peak: peak(stages).unwrap_or(0),
            stages: stages.to_vec(),
        }
    }

    /// The stages as written, jumps included.
    pub fn stages(&self) -> &[Stage] {
        &self.stages
    }

    /// The stages that last and carry requests, each as its start and length (ns) and its rate
    /// from and to (requests/s): the profile's linear pieces.
    pub(super) fn pieces(&self) -> impl Iterator<Item = (Nanos, Nanos, u64, u64)> + '_ {
        self.parts
            .iter()
            .map(|part| (part.start, part.length, part.from, part.to))
    }

    /// How long the profile lasts, ns.
    pub fn total(&self) -> Nanos {
        self.total
    }

    /// The highest rate anywhere in it, requests/s.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// All the requests of the run: those due before its end.
    pub fn requests(&self) -> u64 {
        let twice = self.parts.last().map_or(0, Part::after);
        twice.div_ceil(2 * NS).min(u64::MAX as u128) as u64
    }

    /// The instant, ns from the start, request `n` is due: the first at which the integral
    /// exceeds `n`. At or after [`Profile::total`] for a request beyond the run's.
    pub fn at(&self, n: u64) -> Nanos {
        let twice = n as u128 * 2 * NS;
        // The stage whose integral passes `twice`: the first that ends beyond it.
        let i = self.parts.partition_point(|part| part.after() <= twice);
        match self.parts.get(i) {
            Some(part) => part.start + part.offset(twice - part.before),
            None => self.total,
        }
    }

    /// How many requests are due before `t` ns from the start (those with `at(n) < t`): the
    /// integral up to `t`, rounded up.
    pub fn due(&self, t: Nanos) -> u64 {
        if t >= self.total {
            return self.requests();
        }
        let i = self
            .parts
            .partition_point(|part| part.start + part.length <= t);
        let Some(part) = self.parts.get(i) else {
            return self.requests();
        };
        let before = part.before as f64 / (2 * NS) as f64;
        let inside = part.integral(t.saturating_sub(part.start));
        // The estimate, then corrected so that it counts exactly the `n` with at(n) < t.
        let mut n = (before + inside).ceil().max(0.0) as u64;
        while n > 0 && self.at(n - 1) >= t {
            n -= 1;
        }
        while self.at(n) < t {
            n += 1;
        }
        n
    }

    /// The part (a stage that lasts) holding `t` ns from the start, if any.
    fn part_at(&self, t: Nanos) -> Option<&Part> {
        let i = self
            .parts
            .partition_point(|part| part.start + part.length <= t);
        self.parts.get(i).filter(|part| part.start <= t)
    }

    /// The rate at `t` ns from the start, requests/s: 0 outside the profile (and in a hold at 0).
    pub fn rate_at(&self, t: Nanos) -> f64 {
        self.part_at(t).map_or(0.0, |part| {
            let (r0, r1) = (part.from as f64, part.to as f64);
            r0 + (r1 - r0) * (t - part.start) as f64 / part.length as f64
        })
    }

    /// The rate at `t` ns from the start, a ramp's rounded up (as [`Profile::due`] counts the
    /// requests due once the integral exceeds them): for `tsumo mahjong --stages`, the players
    /// online then — on a ramp from 0 to N, player `k` (from 1) arrives once the line passes
    /// `k − 1`, the last inside the ramp. 0 outside the profile.
    pub fn level(&self, t: Nanos) -> u64 {
        self.part_at(t).map_or(0, |part| {
            let into = (t - part.start) as u128;
            let (from, to, length) = (part.from as u128, part.to as u128, part.length as u128);
            let level = if to >= from {
                from + ((to - from) * into).div_ceil(length)
            } else {
                from - (from - to) * into / length
            };
            level as u64
        })
    }

    /// The mean rate over the whole profile, requests/s, rounded, at least 1.
    pub fn mean(&self) -> u64 {
        let twice = self.parts.last().map_or(0, Part::after);
        let mean = (twice + self.total as u128) / (2 * self.total.max(1) as u128);
        mean.clamp(1, u64::MAX as u128) as u64
    }
}

/// A run's target over time, as its reports show it: none (closed loop), `-R`'s rate, or a
/// profile's (this process's share of it: each of `shards` runs an equal part of the schedule).
#[derive(Debug, Clone, Default)]
pub enum Target {
    #[default]
    None,
    Constant(u64),
    Profile {
        profile: Profile,
        shards: u64,
    },
}

impl Target {
    /// The target of a run with `rate` (this process's `-R`), `stages` (the whole run's) and
    /// `shards` parts.
    pub fn new(rate: Option<u64>, stages: &[Stage], shards: u64) -> Target {
        match (stages.is_empty(), rate) {
            (false, _) => Target::Profile {
                profile: Profile::new(stages),
                shards: shards.max(1),
            },
            (true, Some(rate)) => Target::Constant(rate),
            (true, None) => Target::None,
        }
    }

    /// The target of `plan`'s run in this process.
    pub fn of(plan: &Plan) -> Target {
        let shards = plan.options.part.shard.count as u64;
        Target::new(plan.rate, &plan.stages, shards)
    }

    /// The mean target over `[from, to)` ns from the start, requests/s: the requests due in it
    /// ([`Profile::due`]) over its length.
    pub fn over(&self, from: Nanos, to: Nanos) -> Option<f64> {
        match self {
            Target::None => None,
            Target::Constant(rate) => Some(*rate as f64),
            Target::Profile { profile, shards } => {
                let length = to.saturating_sub(from);
                let due = profile.due(to) - profile.due(from.min(to));
                Some(match length {
                    0 => profile.rate_at(from) / *shards as f64,
                    _ => due as f64 * 1e9 / length as f64 / *shards as f64,
                })
            }
        }
    }

    /// The target at `t` ns from the start, requests/s.
    pub fn at(&self, t: Nanos) -> Option<f64> {
        match self {
            Target::None => None,
            Target::Constant(rate) => Some(*rate as f64),
            Target::Profile { profile, shards } => Some(profile.rate_at(t) / *shards as f64),
        }
    }
}

/// How often [`pacings`] looks at the profile's rate: a ramp's pacing changes at most this
/// often.
pub const PACING_STEP: Nanos = 100_000_000;

/// The pacing `--slack auto` picks over `profile` for a worker thread that carries `share` of
/// the run's rate (its connections over all the run's), as the rate changes: each change from
/// its offset (ns from the start) on. Each step of [`PACING_STEP`] is paced for the higher rate
/// at its two ends, so a ramp is paced precisely while a thread's share is low and in slots
/// once it is high.
pub fn pacings(profile: &Profile, share: f64) -> Vec<(Nanos, Pacing)> {
    let mut changes: Vec<(Nanos, Pacing)> = Vec::new();
    let mut t: Nanos = 0;
    while t < profile.total() {
        let end = t.saturating_add(PACING_STEP).min(profile.total());
        let high = profile
            .rate_at(t)
            .max(profile.rate_at(end.saturating_sub(1)));
        let pacing = Pacing::auto(Some((high * share).ceil() as u64));
        if changes.last().is_none_or(|(_, last)| *last != pacing) {
            changes.push((t, pacing));
        }
        t = end;
    }
    changes
}

/// The rate a run's pacing is chosen for: `-R`'s, or with `--stages` the peak rate (this
/// process's share of it).
pub fn pacing_rate(plan: &Plan) -> Option<u64> {
    let shards = plan.options.part.shard.count.max(1) as u64;
    peak(&plan.stages).map_or(plan.rate, |peak| Some(peak / shards))
}

/// Which of `stages` (0-based) holds the instant `t` ns from the start: the one that lasts
/// past `t` (a jump holds none); at or after the end, the last that lasts.
pub fn stage_at(stages: &[Stage], t: Nanos) -> usize {
    let mut start: Nanos = 0;
    let mut last = 0;
    for (i, stage) in stages.iter().enumerate() {
        if stage.duration_ns == 0 {
            continue;
        }
        last = i;
        start = start.saturating_add(stage.duration_ns);
        if t < start {
            return i;
        }
    }
    last
}

/// The highest rate of `stages`, requests/s (`None`: no stage).
pub fn peak(stages: &[Stage]) -> Option<u64> {
    stages.iter().map(|stage| stage.from.max(stage.to)).max()
}

#[cfg(test)]
#[path = "stages_tests.rs"]
mod tests;
