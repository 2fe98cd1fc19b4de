//! tsumo's connections in an HTTP capacity search, opened as the search needs them, as k6's
//! arrival-rate executors open VUs up to `maxVUs`: a step at R requests/sec against a server
//! that answers in T keeps R × T connections busy (Little's law), so a step gets
//! `max(-c, R × T × HEADROOM)` of them, up to `--max-connections`, T being the response time
//! of the step run nearest below it. A step that broke while its requests waited for a busy
//! connection, with fewer connections than Little's law asks for, is run again with that many
//! (a bounded number of times); at the cap, or when the tries run out, tsumo's pool is the
//! step's limit, never the server's. More connections that carried no more requests show the
//! server's own limit (a server that answers one request at a time only queues them), even
//! when fewer requests then wait on a busy connection: the server's queue holds them instead.

use crate::capacity::PoolLimit;
use crate::report::http::saved::SavedRun;

/// Connections beyond Little's law's count, for the spread of response times and sends: at
/// R × T exactly, every response later than the mean makes the next request wait.
pub const HEADROOM: f64 = 2.0;

/// A step is run at most this many times for its connections (the first and two more).
pub const MAX_TRIES: usize = 3;

/// Below this share of requests due on a busy connection, the pool delayed too few to matter.
const BUSY_MIN: f64 = 0.01;

/// More connections helped when they carried this much more, or cut the busy share to this
/// share of what it was while carrying near the step's load: well beyond what a busy machine
/// moves a server's throughput between two steps, so a saturated server is not taken for a
/// pool that keeps helping.
const CARRIED_MORE: f64 = 1.15;
const BUSY_CUT: f64 = 0.5;

/// A busy share that fell counts only when the try carried at least this share of its load.
/// Against a saturated server more connections move the waiting from tsumo's pool into the
/// server's queue: the busy share falls and the server carries what it carried before (CI
/// measured 455–459 req/s at 488 with 15, 40 and 66 connections).
const NEAR_LOAD: f64 = 0.97;

/// Connections per step: at least `-c`, at most the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool {
    /// `-c`: every step opens at least these.
    pub floor: usize,
    /// `--max-connections`.
    pub cap: usize,
}

/// One try of a step, as the pool reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Try {
    pub load: u64,
    pub connections: usize,
    /// An objective broke, and neither tsumo's CPU nor the machine was the limit.
    pub broke: bool,
    /// Requests/sec completed.
    pub achieved: f64,
    /// The share of requests that fell due (sent or not) while their connection was busy.
    pub busy_share: f64,
    /// Mean response time, from the actual send (uncorrected), µs.
    pub response_us: f64,
}

impl Try {
    pub fn of_run(run: &SavedRun, broke: bool) -> Try {
        let c = &run.counters;
        let fell_due = run.send_lateness.count + c.unsent.total();
        let busy = c.due_while_busy + c.unsent.busy;
        Try {
            load: run.plan.rate.unwrap_or_default(),
            connections: run.plan.connections,
            broke,
            achieved: run.requests_per_sec,
            busy_share: if fell_due == 0 {
                0.0
            } else {
                busy as f64 / fell_due as f64
            },
            response_us: run.uncorrected.mean,
        }
    }

    /// What Little's law asks for at this try's load and response time.
    pub fn needed(&self) -> usize {
        little(self.load, self.response_us)
    }
}

/// What to do after a try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The step's verdict stands.
    Judged,
    /// The step's verdict stands, and more connections did not carry more: the server, not
    /// the pool, held the rate back at this load (and so above it).
    ServerBound,
    /// Run the step again with this many connections.
    Again(usize),
    /// tsumo's pool was the step's limit.
    Limit(PoolLimit),
}

/// `load × response time × HEADROOM` connections, at least one.
pub fn little(load: u64, response_us: f64) -> usize {
    let busy = load as f64 * response_us.max(0.0) / 1e6;
    ((busy * HEADROOM).ceil() as usize).max(1)
}

impl Pool {
    /// The connections of a step at `load`, from the steps run before (each its load and mean
    /// response time, µs): the response time of the highest load at or below this one (the
    /// latest of equals), none before the first step.
    pub fn for_load(&self, load: u64, earlier: &[(u64, f64)]) -> usize {
        let nearest = earlier.iter().filter(|(l, _)| *l <= load).fold(
            None,
            |best: Option<(u64, f64)>, &(l, t)| match best {
                Some((b, _)) if b > l => best,
                _ => Some((l, t)),
            },
        );
        let wanted = nearest.map_or(0, |(_, t)| little(load, t));
        self.bound(wanted)
    }

    /// `-c` at least, the cap at most.
    fn bound(&self, connections: usize) -> usize {
        connections.max(self.floor).min(self.cap.max(self.floor))
    }

    /// After the `tries`-th try of a step (`before`: the try before it, with fewer
    /// connections): its verdict stands, it runs again with more connections, or the pool was
    /// its limit.
    pub fn next(&self, tried: &Try, before: Option<&Try>, tries: usize) -> Next {
        let needed = tried.needed();
        let short = tried.broke && tried.busy_share >= BUSY_MIN && needed > tried.connections;
        if !short {
            return Next::Judged;
        }
        if let Some(before) = before {
            let carried_more = tried.achieved >= before.achieved * CARRIED_MORE;
            let near_load = tried.achieved >= tried.load as f64 * NEAR_LOAD;
            let less_busy = near_load && tried.busy_share <= before.busy_share * BUSY_CUT;
            if !carried_more && !less_busy {
                // The server held the extra connections as long as it held the others.
                return Next::ServerBound;
            }
        }
        let at_cap = tried.connections >= self.cap;
        if at_cap || tries >= MAX_TRIES {
            return Next::Limit(PoolLimit {
                connections: tried.connections,
                busy_permille: (tried.busy_share * 1000.0).round() as u32,
                needed,
                at_cap,
            });
        }
        // At least half as many again: a count barely above the last one would not tell.
        let more = needed.max(tried.connections + tried.connections.div_ceil(2));
        Next::Again(self.bound(more))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tried(connections: usize, achieved: f64, busy_share: f64, response_us: f64) -> Try {
        Try {
            load: 800,
            connections,
            broke: true,
            achieved,
            busy_share,
            response_us,
        }
    }

    #[test]
    fn littles_law_with_headroom() {
        // 800 req/s × 43 ms = 34.4 busy, × 2 = 68.8.
        assert_eq!(little(800, 43_000.0), 69);
        assert_eq!(little(100, 1_000.0), 1);
        assert_eq!(little(0, 5_000.0), 1);
        assert_eq!(little(30_000, 1_000.0), 60);
    }

    #[test]
    fn a_step_gets_what_the_nearest_step_below_needed() {
        let pool = Pool {
            floor: 10,
            cap: 1_000,
        };
        // The first step: -c.
        assert_eq!(pool.for_load(200, &[]), 10);
        let earlier = [(200, 5_000.0), (400, 17_000.0), (800, 65_000.0)];
        // 400 × 5 ms × 2 = 4: -c is more.
        assert_eq!(pool.for_load(400, &earlier[..1]), 10);
        // 800 × 17 ms × 2 = 27.2.
        assert_eq!(pool.for_load(800, &earlier[..2]), 28);
        // A bisection at 600 goes by 400's, not by 800's above it.
        assert_eq!(pool.for_load(600, &earlier), 21);
        // The latest of two runs at one load.
        assert_eq!(pool.for_load(400, &[(400, 17_000.0), (400, 20_000.0)]), 16);
        // At most the cap.
        let capped = Pool { floor: 10, cap: 50 };
        assert_eq!(capped.for_load(10_000, &earlier), 50);
        // A cap at -c: always -c.
        let fixed = Pool { floor: 10, cap: 10 };
        assert_eq!(fixed.for_load(10_000, &earlier), 10);
    }

    /// The growing server at 800 req/s: 27 connections carried 690 at 43 ms with every request
    /// due on a busy connection; Little's law asks for 69.
    #[test]
    fn a_pool_too_small_runs_the_step_again() {
        let pool = Pool {
            floor: 10,
            cap: 1_000,
        };
        let first = tried(27, 690.0, 0.99, 43_000.0);
        assert_eq!(pool.next(&first, None, 1), Next::Again(69));
        // Barely short: half as many again at least.
        let barely = tried(60, 790.0, 0.05, 40_000.0);
        assert_eq!(pool.next(&barely, None, 1), Next::Again(90));
        // Again, up to the cap.
        let capped = Pool { floor: 10, cap: 40 };
        assert_eq!(capped.next(&first, None, 1), Next::Again(40));
    }

    #[test]
    fn the_server_keeps_its_verdicts() {
        let pool = Pool {
            floor: 10,
            cap: 1_000,
        };
        // Held: nothing to judge.
        let held = Try {
            broke: false,
            ..tried(10, 455.0, 0.999, 22_000.0)
        };
        assert_eq!(pool.next(&held, None, 1), Next::Judged);
        // Connections free when requests fell due: the server's verdict.
        assert_eq!(
            pool.next(&tried(69, 800.0, 0.002, 65_000.0), None, 1),
            Next::Judged
        );
        // Busy, but Little's law says the connections were enough (a slow tail).
        assert_eq!(
            pool.next(&tried(100, 800.0, 0.2, 20_000.0), None, 1),
            Next::Judged
        );
        // A server that answers one request at a time: 4 connections and then 10 carried the
        // same 500 req/s, every request due on a busy connection.
        let four = tried(4, 500.0, 0.99, 8_000.0);
        let ten = tried(10, 505.0, 0.99, 20_000.0);
        assert_eq!(pool.next(&four, None, 1), Next::Again(13));
        assert_eq!(pool.next(&ten, Some(&four), 2), Next::ServerBound);
    }

    /// CI's one-at-a-time server at 488 req/s: 15, 40 and 66 connections carried 455–459, and
    /// the share of requests due on a busy connection fell each time, as the waiting moved into
    /// the server's queue.
    #[test]
    fn a_busy_share_that_falls_without_more_carried_is_the_servers_limit() {
        let pool = Pool {
            floor: 4,
            cap: 1_000,
        };
        let at = |connections, achieved, busy_share| Try {
            load: 488,
            ..tried(connections, achieved, busy_share, 100_000.0)
        };
        let fifteen = at(15, 455.0, 0.9);
        let forty = at(40, 458.0, 0.4);
        assert_eq!(pool.next(&forty, Some(&fifteen), 2), Next::ServerBound);
        let sixty_six = at(66, 459.0, 0.15);
        assert_eq!(pool.next(&sixty_six, Some(&forty), 3), Next::ServerBound);
        // The same fall in the busy share while carrying the load: the pool helped.
        let carried = at(40, 480.0, 0.4);
        assert_eq!(pool.next(&carried, Some(&fifteen), 2), Next::Again(98));
    }

    #[test]
    fn the_pool_is_the_limit_at_the_cap_or_when_the_tries_run_out() {
        let at_cap = Pool { floor: 10, cap: 10 };
        let first = tried(10, 455.0, 0.999, 22_000.0);
        assert_eq!(
            at_cap.next(&first, None, 1),
            Next::Limit(PoolLimit {
                connections: 10,
                busy_permille: 999,
                needed: 36,
                at_cap: true,
            })
        );
        let pool = Pool {
            floor: 10,
            cap: 1_000,
        };
        let before = tried(28, 620.0, 0.99, 40_000.0);
        let last = tried(64, 760.0, 0.9, 60_000.0);
        assert_eq!(
            pool.next(&last, Some(&before), MAX_TRIES),
            Next::Limit(PoolLimit {
                connections: 64,
                busy_permille: 900,
                needed: 96,
                at_cap: false,
            })
        );
        assert_eq!(
            PoolLimit {
                connections: 10,
                busy_permille: 999,
                needed: 36,
                at_cap: true,
            }
            .describe(500),
            "tsumo's pool of 10 connections was the limit at 500 (99.9 % of requests fell due \
             on a busy connection): raise --max-connections"
        );
    }
}
