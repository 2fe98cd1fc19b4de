//! A live count of responses whose server's latency (the corrected latency less tsumo's own
//! delay: what a latency objective is judged on) reached given limits, read once a second
//! from outside the worker (a capacity step's watch on its latency objectives: issue 43, "a
//! step's judged time follows the samples its objectives need"). One comparison per response
//! while no limit is set or the latency is under the lowest; an atomic add only over it.

use std::sync::atomic::{AtomicU64, Ordering};

/// The most limits counted at once (two per latency objective: three objectives).
pub const OVER_LIMITS: usize = 6;

/// The limits, µs, a worker counts its responses against; `u64::MAX`: unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverLimits {
    limits: [u64; OVER_LIMITS],
    /// The lowest limit: a response under it is counted nowhere.
    lowest: u64,
}

impl Default for OverLimits {
    fn default() -> OverLimits {
        OverLimits::NONE
    }
}

impl OverLimits {
    /// Nothing counted.
    pub const NONE: OverLimits = OverLimits {
        limits: [u64::MAX; OVER_LIMITS],
        lowest: u64::MAX,
    };

    /// The first [`OVER_LIMITS`] of `limits`, µs.
    pub fn new(limits: &[u64]) -> OverLimits {
        let mut all = [u64::MAX; OVER_LIMITS];
        for (slot, &limit) in all.iter_mut().zip(limits) {
            *slot = limit;
        }
        OverLimits {
            limits: all,
            lowest: all.iter().copied().min().unwrap_or(u64::MAX),
        }
    }

    /// Counts a response whose server's latency was `server_us` in `counts` against each limit
    /// it reached.
    #[inline]
    pub fn count(&self, server_us: u64, counts: &OverCounts) {
        if server_us < self.lowest {
            return;
        }
        for (limit, count) in self.limits.iter().zip(&counts.0) {
            if server_us >= *limit {
                count.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// Responses at or over each of [`OverLimits`]' limits so far, in their order.
#[derive(Debug, Default)]
pub struct OverCounts([AtomicU64; OVER_LIMITS]);

impl OverCounts {
    /// The counts, in the limits' order.
    pub fn read(&self) -> [u64; OVER_LIMITS] {
        std::array::from_fn(|i| self.0[i].load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_counted_against_each_limit_they_reach() {
        let limits = OverLimits::new(&[5_000, 20_000]);
        let counts = OverCounts::default();
        for us in [100, 4_999, 5_000, 19_999, 20_000, 1_000_000] {
            limits.count(us, &counts);
        }
        assert_eq!(counts.read()[..3], [4, 2, 0]);
        OverLimits::NONE.count(u64::MAX - 1, &counts);
        assert_eq!(counts.read()[..3], [4, 2, 0]);
    }
}
