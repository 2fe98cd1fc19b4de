//! One connection's share of a `--stages` profile: its layer.
//!
//! The profile's rate `r(t)` is cut into horizontal layers of height `ρ = peak / C`, one per
//! connection: connection `j` (0-based, numbered over threads and shards as the schedule numbers
//! them) carries `min(ρ, max(0, r(t) − j·ρ))`. The layers sum to `r(t)`; each is piecewise linear
//! (a stage clipped at the layer's two levels, cut where the stage crosses them). Connection
//! `j`'s request `k` is due the first instant its layer's integral exceeds `k + j / C` (the phase
//! `-R` gives it), so a connection runs at most `ρ`, as all do at the peak, and starts only once
//! the rate passes `j·ρ`: a ramp from 0 opens its connections as the rate comes to need them. On
//! a ramp down the top layers go idle (their connections stay open). A hold at the peak is the
//! `-R` schedule.

use super::clock::Nanos;
use super::stages::Profile;

/// Nanoseconds per second.
const NS: f64 = 1e9;

/// One linear piece of a layer that carries requests.
#[derive(Debug, Clone)]
struct Piece {
    /// Start and length, ns from the start of the run (a level crossing falls between two ns).
    start: f64,
    length: f64,
    /// The layer's rate at its start and end, requests/s.
    from: f64,
    to: f64,
    /// The layer's integral before it and up to its end, requests.
    before: f64,
    after: f64,
}

impl Piece {
    /// Offset in the piece, ns, at which its own integral reaches `m` requests (less than all).
    fn offset(&self, m: f64) -> f64 {
        let m = m * NS;
        if self.from == self.to {
            return m / self.from;
        }
        // from·s + (to − from)·s² / (2·length) = m, in the form without cancellation.
        let slope = (self.to - self.from) / self.length;
        let discriminant = (self.from * self.from + 2.0 * slope * m).max(0.0);
        let denominator = self.from + discriminant.sqrt();
        if denominator <= 0.0 {
            return 0.0;
        }
        2.0 * m / denominator
    }

    /// The piece's own integral over its first `s` ns, requests.
    fn integral(&self, s: f64) -> f64 {
        (self.from * s + (self.to - self.from) * s * s / (2.0 * self.length)) / NS
    }
}

/// Connection `index`'s layer of a profile, of `connections` in the whole run.
#[derive(Debug, Clone)]
pub struct Layer {
    pieces: Vec<Piece>,
    /// The profile's end, ns from the start.
    total: Nanos,
    /// The fraction of a request this connection's requests are shifted by: `index / C`.
    phase: f64,
    /// The profile's highest rate, requests/s.
    peak: u64,
}

impl Layer {
    /// Connection `index`'s layer of `profile`, shared among `connections`.
    pub fn new(profile: &Profile, index: u64, connections: u64) -> Layer {
        let c = connections.max(1) as i128;
        let peak = profile.peak();
        // The layer's levels, in requests/s × C: whole numbers, so the crossings are exact
        // fractions.
        let (low, high) = (
            index as i128 * peak as i128,
            (index as i128 + 1) * peak as i128,
        );
        let mut pieces = Vec::new();
        let mut before = 0.0;
        for (start, length, from, to) in profile.pieces() {
            let (r0, r1) = (from as i128 * c, to as i128 * c);
            let mut cuts = vec![0.0, length as f64];
            for level in [low, high] {
                if r0.min(r1) < level && level < r0.max(r1) {
                    let numerator = (level - r0) * length as i128;
                    cuts.push(numerator as f64 / (r1 - r0) as f64);
                }
            }
            cuts.sort_by(f64::total_cmp);
            // The layer's rate at `s` ns into the stage, requests/s.
            let rate = |s: f64| {
                let scaled = r0 as f64 + (r1 - r0) as f64 * s / length as f64;
                (scaled - low as f64).clamp(0.0, (high - low) as f64) / c as f64
            };
            for cut in cuts.windows(2) {
                let (a, b) = (cut[0], cut[1]);
                // Between two cuts the stage is below, inside or above the layer throughout.
                let (from, to) = if rate((a + b) / 2.0) > 0.0 {
                    (rate(a), rate(b))
                } else {
                    (0.0, 0.0)
                };
                if b <= a || from + to <= 0.0 {
                    continue;
                }
                let length = b - a;
                let after = before + (from + to) * length / (2.0 * NS);
                pieces.push(Piece {
                    start: start as f64 + a,
                    length,
                    from,
                    to,
                    before,
                    after,
                });
                before = after;
            }
        }
        Layer {
            pieces,
            total: profile.total(),
            phase: index as f64 / c as f64,
            peak,
        }
    }

    /// The profile's highest rate, requests/s.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// The instant, ns from the start, this connection's request `k` is due: the first at which
    /// the layer's integral exceeds `k` and the phase. The profile's end for one beyond its run.
    pub fn at(&self, k: u64) -> Nanos {
        let x = k as f64 + self.phase;
        let i = self.pieces.partition_point(|piece| piece.after <= x);
        let Some(piece) = self.pieces.get(i) else {
            return self.total;
        };
        let s = piece.offset(x - piece.before).clamp(0.0, piece.length);
        // Inside the piece: before its end, and before the profile's.
        let last = ((piece.start + piece.length).ceil() - 1.0).max(piece.start.floor());
        ((piece.start + s).floor().min(last) as Nanos).min(self.total.saturating_sub(1))
    }

    /// The layer's integral up to `t` ns from the start, requests.
    fn integral(&self, t: Nanos) -> f64 {
        let t = t as f64;
        let i = self
            .pieces
            .partition_point(|piece| piece.start + piece.length <= t);
        match self.pieces.get(i) {
            None => self.pieces.last().map_or(0.0, |piece| piece.after),
            Some(piece) if t <= piece.start => piece.before,
            Some(piece) => piece.before + piece.integral(t - piece.start),
        }
    }

    /// How many of this connection's requests are due before `t` ns from the start (those with
    /// `at(k) < t`).
    pub fn due(&self, t: Nanos) -> u64 {
        let t = t.min(self.total);
        let estimate = (self.integral(t) - self.phase).ceil().max(0.0) as u64;
        // Corrected so that it counts exactly the `k` with at(k) < t.
        let mut n = estimate;
        while n > 0 && self.at(n - 1) >= t {
            n -= 1;
        }
        while self.at(n) < t {
            n += 1;
        }
        n
    }
}

/// The requests due before `t` ns from the start on this process's connections: `local` of
/// them, connection `l` the whole run's `shard.global(l)` of `local × N`.
pub fn due_in_process(
    profile: &Profile,
    shard: crate::plan::Shard,
    local: usize,
) -> impl Fn(Nanos) -> u64 {
    let connections = (local * shard.count.max(1)) as u64;
    let layers: Vec<Layer> = (0..local)
        .map(|l| Layer::new(profile, shard.global(l) as u64, connections))
        .collect();
    move |t| layers.iter().map(|layer| layer.due(t)).sum()
}

#[cfg(test)]
#[path = "layers_tests.rs"]
mod tests;
