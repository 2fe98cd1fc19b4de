//! The per-connection schedule of an open-loop run.
//!
//! Connection `g` of `C` (numbered across all threads) sends its `k`-th request at
//! `t0 + (g + k·C) / R`: each connection runs at `R / C`, and the connections are phase-shifted by
//! `1 / R` so that together they send one request every `1 / R` — no start-up burst (wrk2 fires
//! every connection at once). Integer arithmetic on absolute times: no drift over long runs.

use super::clock::Nanos;

/// When a connection's requests are due.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// Start of the run.
    pub t0: Nanos,
    /// This connection's global index `g`.
    pub index: u64,
    /// Total connections `C`.
    pub connections: u64,
    /// Total rate `R`, requests per second.
    pub rate: u64,
}

impl Schedule {
    /// Intended send time of this connection's `k`-th request (0-based).
    #[inline]
    pub fn intended(&self, k: u64) -> Nanos {
        let slot = self.index as u128 + k as u128 * self.connections as u128;
        self.t0 + (slot * 1_000_000_000 / self.rate as u128) as Nanos
    }

    /// How many of this connection's requests fall due before `end`.
    pub fn due_before(&self, end: Nanos) -> u64 {
        // intended(k) < end  ⟺  (index + k·C)·1e9 / R < end − t0  ⟺  slot < ⌈(end − t0)·R / 1e9⌉.
        let span = end.saturating_sub(self.t0) as u128;
        let slots = (span * self.rate as u128).div_ceil(1_000_000_000);
        let index = self.index as u128;
        if index >= slots {
            return 0;
        }
        ((slots - 1 - index) / self.connections as u128 + 1) as u64
    }

    /// Time between two requests of one connection, in ns.
    pub fn interval(&self) -> Nanos {
        (self.connections as u128 * 1_000_000_000 / self.rate as u128) as Nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_interleave_evenly() {
        // 2000 req/s over 10 connections: each connection every 5 ms, all together every 0.5 ms.
        let mut all: Vec<Nanos> = (0..10)
            .flat_map(|g| {
                let s = Schedule {
                    t0: 1_000,
                    index: g,
                    connections: 10,
                    rate: 2000,
                };
                (0..100).map(move |k| s.intended(k))
            })
            .collect();
        all.sort_unstable();
        for pair in all.windows(2) {
            assert_eq!(pair[1] - pair[0], 500_000);
        }
        assert_eq!(all[0], 1_000);
    }

    #[test]
    fn per_connection_interval() {
        let s = Schedule {
            t0: 0,
            index: 3,
            connections: 10,
            rate: 2000,
        };
        assert_eq!(s.interval(), 5_000_000);
        assert_eq!(s.intended(1) - s.intended(0), 5_000_000);
        assert_eq!(s.intended(0), 1_500_000);
    }

    #[test]
    fn no_drift_with_uneven_division() {
        // 3 req/s on one connection: 333_333_333.33 ns apart; after 3 requests exactly 1 s.
        let s = Schedule {
            t0: 0,
            index: 0,
            connections: 1,
            rate: 3,
        };
        assert_eq!(s.intended(3), 1_000_000_000);
        assert_eq!(s.intended(3_000_000), 1_000_000 * 1_000_000_000);
    }

    #[test]
    fn due_before_counts_the_intended_times_before_the_end() {
        for (index, connections, rate) in [(0, 1, 3), (3, 10, 2000), (2, 4, 1), (9, 10, 7)] {
            let s = Schedule {
                t0: 1_000,
                index,
                connections,
                rate,
            };
            for end in [
                0,
                1_000,
                1_001,
                5_000_000,
                999_999_999,
                3_000_000_000,
                3_000_001_000,
            ] {
                let expected = (0..10_000).filter(|&k| s.intended(k) < end).count() as u64;
                assert_eq!(s.due_before(end), expected, "{s:?} end {end}");
            }
        }
    }

    #[test]
    fn rate_below_connections() {
        // 1 req/s over 4 connections: each connection every 4 s, staggered by 1 s.
        let s = Schedule {
            t0: 0,
            index: 2,
            connections: 4,
            rate: 1,
        };
        assert_eq!(s.intended(0), 2_000_000_000);
        assert_eq!(s.intended(1), 6_000_000_000);
    }
}
