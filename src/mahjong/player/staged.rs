//! A player under `--stages`: it arrives when the profile calls for it (see `arrivals`), logs
//! in, opens its socket and waits for its table to fill; the table then plays game after game
//! until `--stay` games are played or the table is asked to leave (the profile falls), and
//! every player logs out — also when the run ends (the profile's end or Ctrl-C: a game still
//! being played is cut) or anything fails.

use tokio::sync::OwnedSemaphorePermit;

use super::{Interrupt, Player};
use crate::plan::Stage;
use crate::stats::mahjong::StageRecord;
use crate::timing::clock::{self, Nanos};
use crate::timing::stages::stage_at;

/// Which stage an instant of the run falls in: the run's start and its stages.
pub struct StageClock {
    pub t0: Nanos,
    pub stages: Vec<Stage>,
}

impl StageClock {
    /// The stage (0-based) holding instant `at`.
    pub fn index(&self, at: Nanos) -> usize {
        stage_at(&self.stages, at.saturating_sub(self.t0))
    }
}

impl Player {
    /// Runs a player that arrived at `arrived` to the end of its stay: always logged out. It
    /// holds `in_flight`, its place among the worker's arrivals in flight, until its login is
    /// answered (or failed).
    pub async fn run_staged(mut self, arrived: Nanos, in_flight: OwnedSemaphorePermit) {
        self.arrived_at = Some(arrived);
        self.in_stage(arrived, |stage| stage.arrivals += 1);
        let _ = self.stay(in_flight).await;
        self.log_out().await;
        self.give_up_pending();
        self.in_stage(clock::now(), |stage| stage.departures += 1);
        self.table.set_gone();
    }

    /// Counts into the stage holding `at`, under `--stages`.
    pub(super) fn in_stage(&self, at: Nanos, count: impl FnOnce(&mut StageRecord)) {
        if let Some(stages) = &self.ctx.stages {
            count(self.ctx.recorder.borrow_mut().stage(stages.index(at)));
        }
    }

    /// Login, socket, the table filling, then its games; returns when the player is to leave.
    async fn stay(&mut self, in_flight: OwnedSemaphorePermit) -> Result<(), Interrupt> {
        let logged_in = self.log_in().await;
        drop(in_flight);
        if !logged_in {
            self.table.set_broken();
            return Ok(());
        }
        if !self.connect().await? {
            self.table.set_broken();
            return Ok(());
        }
        self.table.set_ready();
        let seats = self.ctx.plan.seats;
        let stay = self.ctx.plan.stay;
        // The others of the table arrive as the profile says: no deadline.
        self.serve_until_table(|p| {
            p.table.ready() >= seats || p.table.is_broken() || p.table.is_leaving()
        })
        .await?;
        let mut games = 0;
        loop {
            if self.table.is_broken() || self.table.is_closed() {
                return Ok(());
            }
            if self.owner {
                // The owner decides for the table, between two games.
                if self.table.is_leaving() || stay.is_some_and(|stay| games >= stay) {
                    self.table.close();
                    return Ok(());
                }
            }
            // The others join the owner's next room, or leave once it closes the table.
            if !self.form_table().await? {
                return Ok(());
            }
            self.play_game().await?;
            games += 1;
        }
    }

    /// Serves the socket until `done` holds, checking it whenever the table changes.
    async fn serve_until_table(&mut self, done: impl Fn(&Player) -> bool) -> Result<(), Interrupt> {
        let wait = super::serve::Wait {
            done,
            deadline: None,
            table: true,
        };
        self.serve(wait, None).await
    }
}
