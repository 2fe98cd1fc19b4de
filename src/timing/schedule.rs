//! The per-connection schedule of an open-loop run.
//!
//! Connection `g` of `C` (numbered across all threads) sends its `k`-th request at
//! `t0 + (g + k·C) / R`: each connection runs at `R / C`, and the connections are phase-shifted by
//! `1 / R` so that together they send one request every `1 / R` — no start-up burst (wrk2 fires
//! every connection at once). Integer arithmetic on absolute times: no drift over long runs.
//!
//! A run split into shards (`--shard I/N`) keeps the whole run's numbering: shard `I` runs the
//! connections `I, I + N, I + 2N, …` of the whole run with the whole run's `C` and `R`, so its
//! sends are every `N`-th slot — evenly spaced at `R / N` — and the `N` shards together fill
//! every slot exactly once: the one-process schedule, with no burst and no gap.

use super::clock::Nanos;
use crate::plan::Shard;

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
    /// The schedule of this process's `local`-th connection, of `connections` at `rate`
    /// requests/s in this process, when the process runs `shard`: the whole run's connection
    /// `shard.global(local)` of `connections × N` at `rate × N`.
    pub fn of_shard(t0: Nanos, shard: Shard, local: usize, connections: usize, rate: u64) -> Self {
        let n = shard.count as u64;
        Schedule {
            t0,
            index: shard.global(local) as u64,
            connections: connections as u64 * n,
            rate: rate * n,
        }
    }

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

    /// Every send time of `connections` connections at `rate` in one process, or in shard `shard`.
    fn send_times(shard: Shard, connections: usize, rate: u64, end: Nanos) -> Vec<Nanos> {
        let t0 = 1_000_000_007;
        (0..connections)
            .flat_map(|local| {
                let s = Schedule::of_shard(t0, shard, local, connections, rate);
                (0..s.due_before(end)).map(move |k| s.intended(k))
            })
            .collect()
    }

    #[test]
    fn shards_together_send_exactly_the_one_process_schedule() {
        let end = 1_000_000_007 + 3_000_000_000;
        // (connections, rate) of the whole run; the rates include ones whose interval is not a
        // whole number of ns (12 connections at 36/s: 333_333_333.3 ns).
        for (connections, rate) in [(12, 2400), (12, 36), (24, 2000), (60, 420), (12, 1200)] {
            let mut whole = send_times(Shard::WHOLE, connections, rate, end);
            whole.sort_unstable();
            // Splits the command line accepts: connections and rate divide by the count.
            let counts = [2, 3, 4, 6, 12].into_iter();
            for count in counts.filter(|&n| connections % n == 0 && rate % n as u64 == 0) {
                let mut union = Vec::new();
                for index in 0..count {
                    let shard = Shard { index, count };
                    let mut mine = send_times(shard, connections / count, rate / count as u64, end);
                    // Each shard on its own is evenly spaced (up to 1 ns of rounding).
                    mine.sort_unstable();
                    let gaps: Vec<u64> = mine.windows(2).map(|w| w[1] - w[0]).collect();
                    if let (Some(lo), Some(hi)) = (gaps.iter().min(), gaps.iter().max()) {
                        assert!(hi - lo <= 1, "{connections}c {rate}/s {index}/{count}");
                    }
                    union.extend(mine);
                }
                union.sort_unstable();
                assert_eq!(union, whole, "{connections}c {rate}/s in {count} shards");
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
