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
//!
//! A run of duration `d` ends its schedule at `t0 + d`: the slots due in `[t0, t0 + d)`, which
//! are exactly `R·d` over all connections (slot `R·d` falls on `t0 + d` itself, and is not sent).
//!
//! With `--stages` the rate changes over time: connection `g` follows its own layer of the
//! profile ([`Layer`]: the band `[g·ρ, (g + 1)·ρ)` of the rate, `ρ` the peak over `C`), its
//! `k`-th request due when the layer's integral exceeds `k + g / C`, and the schedule ends at
//! the profile's end. The same numbering over threads and shards: the shards' connections
//! together are the one process's.

use std::sync::Arc;

use super::clock::Nanos;
use super::layers::Layer;
use super::stages::Profile;
use crate::plan::Shard;

/// The whole run's rate: one (`-R`), or this connection's layer of a profile (`--stages`).
#[derive(Debug, Clone)]
pub enum Rate {
    /// Requests per second, all run long: integer arithmetic only.
    Constant(u64),
    /// This connection's share of the rate over time.
    Stages(Arc<Layer>),
}

/// When a connection's requests are due.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// Start of the run.
    pub t0: Nanos,
    /// This connection's global index `g`.
    pub index: u64,
    /// Total connections `C`.
    pub connections: u64,
    /// The whole run's rate: `R` requests per second, or a profile.
    pub rate: Rate,
    /// The end of the run's schedule (`t0 + d`): no request of this connection falls due at or
    /// after it. `Nanos::MAX`: none (a run without a duration).
    pub end: Nanos,
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
            rate: Rate::Constant(rate * n),
            end: Nanos::MAX,
        }
    }

    /// This schedule following its connection's layer of `profile` (the whole run's) instead
    /// of a constant rate, and ending at the profile's end.
    pub fn following(self, profile: &Profile) -> Self {
        let layer = Layer::new(profile, self.index, self.connections);
        Schedule {
            end: self.t0.saturating_add(profile.total()),
            rate: Rate::Stages(Arc::new(layer)),
            ..self
        }
    }

    /// This schedule ending after `duration` from its start: see [`Schedule::end`].
    pub fn lasting(self, duration: std::time::Duration) -> Self {
        let d = duration.as_nanos().min(Nanos::MAX as u128) as Nanos;
        Schedule {
            end: self.t0.saturating_add(d),
            ..self
        }
    }

    /// Whether request `k` falls due before the schedule's end (it is one of the run's).
    #[inline]
    pub fn in_run(&self, k: u64) -> bool {
        self.intended(k) < self.end
    }

    /// Intended send time of this connection's `k`-th request (0-based).
    #[inline]
    pub fn intended(&self, k: u64) -> Nanos {
        match &self.rate {
            Rate::Constant(rate) => {
                let slot = self.index as u128 + k as u128 * self.connections as u128;
                self.t0 + (slot * 1_000_000_000 / *rate as u128) as Nanos
            }
            Rate::Stages(layer) => self.t0.saturating_add(layer.at(k)),
        }
    }

    /// How many of this connection's requests fall due before `end` (and before the
    /// schedule's own end).
    pub fn due_before(&self, end: Nanos) -> u64 {
        let end = end.min(self.end);
        // intended(k) < end  ⟺  (index + k·C)·1e9 / R < end − t0  ⟺  slot < ⌈(end − t0)·R / 1e9⌉.
        let span = end.saturating_sub(self.t0);
        let slots = match &self.rate {
            Rate::Constant(rate) => (span as u128 * *rate as u128).div_ceil(1_000_000_000),
            Rate::Stages(layer) => return layer.due(span),
        };
        let index = self.index as u128;
        if index >= slots {
            return 0;
        }
        ((slots - 1 - index) / self.connections as u128 + 1) as u64
    }

    /// Time between two requests of one connection, in ns: with a profile, the smallest (at
    /// its peak rate).
    pub fn interval(&self) -> Nanos {
        let rate = match &self.rate {
            Rate::Constant(rate) => *rate,
            Rate::Stages(layer) => layer.peak().max(1),
        };
        (self.connections as u128 * 1_000_000_000 / rate as u128) as Nanos
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
                    rate: Rate::Constant(2000),
                    end: Nanos::MAX,
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
            rate: Rate::Constant(2000),
            end: Nanos::MAX,
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
            rate: Rate::Constant(3),
            end: Nanos::MAX,
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
                rate: Rate::Constant(rate),
                end: Nanos::MAX,
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
    fn a_run_of_duration_d_has_exactly_r_times_d_requests_over_all_connections() {
        use std::time::Duration;
        // (connections, rate, duration ms): one connection, several, more than the rate.
        for (connections, rate, ms) in [
            (1, 10, 1000),
            (4, 200, 2000),
            (10, 7, 3000),
            (3, 1000, 1500),
        ] {
            let t0 = 1_000_000_007;
            let d = Duration::from_millis(ms);
            let mut total = 0;
            for g in 0..connections {
                let s = Schedule::of_shard(t0, Shard::WHOLE, g, connections, rate).lasting(d);
                let due = s.due_before(Nanos::MAX);
                // The same count as the requests the connection sends: those `in_run`.
                assert_eq!(
                    due,
                    (0..100_000).take_while(|&k| s.in_run(k)).count() as u64
                );
                assert!(s.intended(due.saturating_sub(1)) < t0 + ms * 1_000_000 || due == 0);
                total += due;
            }
            assert_eq!(total, rate * ms / 1000, "{connections}c {rate}/s {ms} ms");
        }
    }

    #[test]
    fn a_profile_over_connections_and_shards_sends_its_integral_once() {
        use crate::plan::Stage;
        let s = 1_000_000_000;
        let stage = |duration_ns, from, to| Stage {
            duration_ns,
            from,
            to,
        };
        // 0 → 400 over 1 s, 400 for 1 s, a jump to 800, 800 → 0 over 1.5 s: 200 + 400 + 600.
        let stages = [
            stage(s, 0, 400),
            stage(s, 400, 400),
            stage(0, 400, 800),
            stage(s + s / 2, 800, 0),
        ];
        let profile = Profile::new(&stages);
        let t0 = 1_000_000_007;
        let mut one_process = Vec::new();
        for (connections, count) in [(1, 1), (4, 1), (12, 1), (12, 3), (12, 4)] {
            let mut union = Vec::new();
            for index in 0..count {
                let shard = Shard { index, count };
                for local in 0..connections / count {
                    let s = Schedule::of_shard(t0, shard, local, connections / count, 1)
                        .lasting(std::time::Duration::from_secs(99))
                        .following(&profile);
                    let due = s.due_before(Nanos::MAX);
                    assert_eq!(due, (0..10_000).take_while(|&k| s.in_run(k)).count() as u64);
                    assert_eq!(s.interval(), connections as u64 * 1_250_000);
                    let mine: Vec<Nanos> = (0..due).map(|k| s.intended(k)).collect();
                    // Never faster than the layer's height, the peak over C (1 ns of rounding).
                    assert!(mine.windows(2).all(|w| w[1] - w[0] + 1 >= s.interval()));
                    union.extend(mine);
                }
            }
            union.sort_unstable();
            // The integral, to a request per connection.
            assert!(
                union.len().abs_diff(1200) <= connections,
                "{connections}c in {count}"
            );
            assert!(union.iter().all(|&t| t < t0 + profile.total()));
            if count == 1 {
                one_process = union;
            } else {
                assert_eq!(union, one_process, "{connections}c in {count}");
            }
        }
    }

    #[test]
    fn a_ramp_opens_its_connections_as_the_rate_passes_their_layers() {
        use crate::plan::Stage;
        // 0 → 200 over 2 s, then 200 for 1 s, on 20 connections: connection j starts once the
        // rate passes 10·j, at j / 10 s, and sends its first request once its layer's integral
        // passes its phase j / 20 (at most 0.15 s later); at 200 every connection runs at 10/s.
        let profile = Profile::new(&[
            Stage {
                duration_ns: 2_000_000_000,
                from: 0,
                to: 200,
            },
            Stage {
                duration_ns: 1_000_000_000,
                from: 200,
                to: 200,
            },
        ]);
        let mut total = 0;
        for j in 0..20 {
            let s = Schedule::of_shard(0, Shard::WHOLE, j, 20, 1).following(&profile);
            let first = s.intended(0);
            let passes = j as u64 * 100_000_000;
            assert!(
                (passes..passes + 150_000_000).contains(&first),
                "{j}: {first}"
            );
            total += s.due_before(Nanos::MAX);
        }
        assert!(total.abs_diff(400) <= 20, "{total}");
    }

    #[test]
    fn rate_below_connections() {
        // 1 req/s over 4 connections: each connection every 4 s, staggered by 1 s.
        let s = Schedule {
            t0: 0,
            index: 2,
            connections: 4,
            rate: Rate::Constant(1),
            end: Nanos::MAX,
        };
        assert_eq!(s.intended(0), 2_000_000_000);
        assert_eq!(s.intended(1), 6_000_000_000);
    }
}
