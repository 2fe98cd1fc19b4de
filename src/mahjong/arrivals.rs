//! `tsumo mahjong --stages`: players arrive so that the number online follows the profile. Each
//! worker follows its share of it (tables dealt round the workers as without a profile; over
//! shards, round every shard's workers, so shard I of N has the tables `t mod N == I`): while
//! fewer of its players stay than its share, one more arrives — into the table filling up, or a
//! new one — and while more stay than its share by a whole table, a table is asked to leave
//! after its game (the one still filling first, else the oldest). A table that ended its
//! `--stay` games no longer counts, so others arrive in its place; a broken one (a member that
//! could not log in or connect) still counts, so a failing server is not flooded with
//! replacements. While the profile falls nobody arrives: the players leave at the end of their
//! game and are not replaced. At most [`ARRIVALS_AT_ONCE`] of a worker's arrivals are in flight
//! (their login not answered yet), so an overloaded server is not flooded with logins:
//! the others wait, and each arrival's lateness (from the instant the profile called for it to
//! its login's start) is recorded in its stage. At the profile's end (the engine's `-d`) or on
//! Ctrl-C the arrivals stop and every player logs out.

use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::player::{Player, Table, WorkerCtx};
use crate::timing::clock::{self, Nanos};
use crate::timing::stages::Profile;

/// How often the arrivals look at the profile: an arrival is at most this late.
const TICK: Duration = Duration::from_millis(2);

/// A worker's arrivals in flight at once (their login not answered yet): as many as the
/// logouts it has in flight at once.
pub const ARRIVALS_AT_ONCE: usize = super::player::LOGOUTS_AT_ONCE;

/// One worker's part of the profile: it is lane `lane` of `lanes` (every shard's workers; shard
/// I's worker w is lane I + N·w).
pub struct Arrivals {
    pub profile: Profile,
    pub lane: usize,
    pub lanes: usize,
    pub seats: usize,
}

impl Arrivals {
    /// This worker's players of `level` online: tables of `seats` are dealt round the workers,
    /// the one filling up to the worker whose turn it is.
    pub fn share(&self, level: u64) -> usize {
        let level = usize::try_from(level).unwrap_or(usize::MAX);
        let (seats, lanes) = (self.seats.max(1), self.lanes.max(1));
        let (full, partial) = (level / seats, level % seats);
        let tables = full / lanes + usize::from(self.lane < full % lanes);
        tables * seats
            + if full % lanes == self.lane {
                partial
            } else {
                0
            }
    }

    /// How many of this worker's players are due to arrive at `t` with `online` staying: those
    /// missing from its share, none while the profile falls (the players leaving then are
    /// not replaced).
    pub fn wanted(&self, t: Nanos, online: usize) -> usize {
        let stages = self.profile.stages();
        let falling = stages
            .get(crate::timing::stages::stage_at(stages, t))
            .is_some_and(|stage| stage.to < stage.from);
        if falling {
            return 0;
        }
        self.share(self.profile.level(t)).saturating_sub(online)
    }

    /// Sends players in and tables out until the profile's end or shutdown; the players' tasks,
    /// still running (they log out on the shutdown).
    pub async fn run(
        &self,
        ctx: &Rc<WorkerCtx>,
        t0: Nanos,
        mut shutdown: watch::Receiver<bool>,
    ) -> Vec<JoinHandle<()>> {
        let mut tasks = Vec::new();
        let mut tables: Vec<Rc<Table>> = Vec::new();
        let mut arrivals = 0usize;
        let in_flight = Arc::new(Semaphore::new(ARRIVALS_AT_ONCE));
        // When each arrival still to send was first due (oldest first): its lateness.
        let mut due: VecDeque<Nanos> = VecDeque::new();
        loop {
            if *shutdown.borrow_and_update() {
                break;
            }
            let now = clock::now();
            let t = now.saturating_sub(t0);
            if t >= self.profile.total() {
                break;
            }
            tables.retain(|table| !(table.is_leaving() && table.is_empty()));
            let target = self.share(self.profile.level(t));
            let staying = |tables: &[Rc<Table>]| -> usize {
                tables
                    .iter()
                    .filter(|table| !table.is_leaving())
                    .map(|table| table.arrived())
                    .sum()
            };
            let mut online = staying(&tables);
            let wanted = self.wanted(t, online);
            due.resize(wanted, now);
            while let Some(&since) = due.front() {
                let Ok(permit) = Arc::clone(&in_flight).try_acquire_owned() else {
                    break;
                };
                due.pop_front();
                let filling = tables.last().filter(|table| {
                    table.arrived() < self.seats && !table.is_leaving() && !table.is_broken()
                });
                let table = match filling {
                    Some(table) => Rc::clone(table),
                    None => {
                        tables.push(Rc::new(Table::default()));
                        Rc::clone(&tables[tables.len() - 1])
                    }
                };
                let owner = table.arrived() == 0;
                table.arrive();
                // Names unique over the run: the workers' arrivals interleaved.
                let index = arrivals * self.lanes + self.lane;
                arrivals += 1;
                if let Some(stages) = &ctx.stages {
                    let late = clock::to_us(now.saturating_sub(since));
                    ctx.recorder
                        .borrow_mut()
                        .stage(stages.index(now))
                        .arrival_lateness
                        .saturating_record(late);
                }
                let player = Player::new(Rc::clone(ctx), index, index, table, owner);
                tasks.push(tokio::task::spawn_local(player.run_staged(now, permit)));
                online += 1;
            }
            self.send_out(&tables, online, target);
            tokio::select! {
                _ = tokio::time::sleep(TICK) => {}
                _ = shutdown.changed() => {}
            }
        }
        tasks
    }

    /// Asks tables to leave while a whole table more than `target` stay: the one filling up
    /// first (its players have not played), then the oldest.
    fn send_out(&self, tables: &[Rc<Table>], mut online: usize, target: usize) {
        let filling = tables
            .last()
            .filter(|table| table.arrived() < self.seats && !table.is_leaving());
        let order = filling
            .into_iter()
            .chain(tables.iter().filter(|table| !table.is_leaving()));
        for table in order {
            if table.is_leaving() || online.saturating_sub(table.arrived()) < target {
                continue;
            }
            online -= table.arrived();
            table.ask_to_leave();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Stage;

    #[test]
    fn the_workers_shares_add_up_to_the_level_in_whole_tables() {
        let profile = Profile::new(&[Stage {
            duration_ns: 1,
            from: 1,
            to: 1,
        }]);
        let lane = |lane| Arrivals {
            profile: profile.clone(),
            lane,
            lanes: 3,
            seats: 4,
        };
        let lanes = [lane(0), lane(1), lane(2)];
        for level in 0..100 {
            let shares: Vec<usize> = lanes.iter().map(|a| a.share(level)).collect();
            assert_eq!(shares.iter().sum::<usize>(), level as usize, "{shares:?}");
        }
        // 14 players: tables 0 and 3 (filling: 2 of 4) on worker 0, 1 on 1, 2 on 2.
        let shares: Vec<usize> = lanes.iter().map(|a| a.share(14)).collect();
        assert_eq!(shares, [6, 4, 4]);
    }

    /// Over shards, the lanes are every shard's workers (shard I's worker w is lane
    /// I + N·w): each shard takes the tables `t mod N == I`, whatever its own threads.
    #[test]
    fn the_shards_lanes_take_the_tables_t_mod_n_and_add_up_to_the_level() {
        let profile = Profile::new(&[Stage {
            duration_ns: 1,
            from: 1,
            to: 1,
        }]);
        let shards = 2;
        // Shard 0 with 2 workers (lanes 0 and 2 of 4), shard 1 with 1 (lane 1 of 2).
        let lane = |lane, lanes| Arrivals {
            profile: profile.clone(),
            lane,
            lanes,
            seats: 4,
        };
        let (shard0, shard1) = ([lane(0, 4), lane(2, 4)], [lane(1, 2)]);
        for level in 0..64u64 {
            let first: usize = shard0.iter().map(|a| a.share(level)).sum();
            let second: usize = shard1.iter().map(|a| a.share(level)).sum();
            assert_eq!(first + second, level as usize);
            // The tables t mod 2 == 0, the one filling up when it is theirs.
            let (full, partial) = (level as usize / 4, level as usize % 4);
            let mine = |i: usize| {
                (0..full).filter(|t| t % shards == i).count() * 4
                    + if full % shards == i { partial } else { 0 }
            };
            assert_eq!((first, second), (mine(0), mine(1)), "level {level}");
        }
    }

    #[test]
    fn a_falling_profile_sends_out_the_filling_table_first_then_the_oldest() {
        let arrivals = Arrivals {
            profile: Profile::new(&[Stage {
                duration_ns: 1,
                from: 1,
                to: 1,
            }]),
            lane: 0,
            lanes: 1,
            seats: 4,
        };
        let table = |players| {
            let table = Rc::new(Table::default());
            (0..players).for_each(|_| table.arrive());
            table
        };
        let tables = [table(4), table(4), table(2)];
        let leaving =
            |tables: &[Rc<Table>]| tables.iter().map(|t| t.is_leaving()).collect::<Vec<_>>();
        // 10 online, 9 due: nobody leaves (a whole table more is not online).
        arrivals.send_out(&tables, 10, 9);
        assert_eq!(leaving(&tables), [false, false, false]);
        // 8 due: the table still filling goes.
        arrivals.send_out(&tables, 10, 8);
        assert_eq!(leaving(&tables), [false, false, true]);
        // 4 due: then the oldest.
        arrivals.send_out(&tables, 8, 4);
        assert_eq!(leaving(&tables), [true, false, true]);
        arrivals.send_out(&tables, 4, 0);
        assert_eq!(leaving(&tables), [true, true, true]);
    }

    /// While the profile rises or holds, the players missing from the share are due; while it
    /// falls, none (a table that ended its stay is not replaced), whatever is online.
    #[test]
    fn nobody_is_due_while_the_profile_falls() {
        let second = 1_000_000_000;
        let arrivals = Arrivals {
            profile: Profile::new(&[
                Stage {
                    duration_ns: second,
                    from: 0,
                    to: 8,
                },
                Stage {
                    duration_ns: second,
                    from: 8,
                    to: 8,
                },
                Stage {
                    duration_ns: 10 * second,
                    from: 8,
                    to: 0,
                },
            ]),
            lane: 0,
            lanes: 1,
            seats: 4,
        };
        assert_eq!(arrivals.wanted(second / 2, 0), 4);
        assert_eq!(arrivals.wanted(second / 2, 3), 1);
        assert_eq!(arrivals.wanted(3 * second / 2, 4), 4);
        assert_eq!(arrivals.wanted(3 * second / 2, 9), 0);
        // Falling: 7 due at 3 s, 4 online (a table left after its game) — none arrive.
        assert_eq!(arrivals.wanted(3 * second, 4), 0);
        assert_eq!(arrivals.wanted(3 * second, 0), 0);
    }
}
