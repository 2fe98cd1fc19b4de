//! Playing one game: the owner sends `START`, then every player answers each `GAME` request
//! (the bot decides what), holding its own-turn replies back for the think time, until `END`.
//! The owner also times the table's steps — the interval between successive requests, split
//! by the kind of step that opened it — since the server's pace is what the run measures.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;

use serde_json::Value;

use super::{serve, Interrupt, Player};
use crate::mahjong::bot::StepKind;
use crate::mahjong::messages;
use crate::stats::mahjong::ErrorKind;
use crate::timing::clock::{self, Nanos};

/// The server's minimum time per step (`speed * 200` ms with speed 2).
pub const STEP_MINIMUM: Nanos = 400_000_000;

/// The server's pause after an announcement (`say`: a riichi, a kan, a tsumo win, a call)
/// before the request it announces: majiang-core's `delay` with no timeout, `max(500, dwell)`.
const SAY_PAUSE: Nanos = 500_000_000;

/// A reply held back for the think time.
pub(super) struct PendingReply {
    due: Nanos,
    /// When the request it answers arrived.
    received: Nanos,
    /// The request's frame length.
    bytes_in: u64,
    /// Completes at `due` (the worker's pacer); the event loop waits on it.
    pub(super) timer: Pin<Box<dyn Future<Output = ()>>>,
    frame: String,
}

impl Player {
    /// Owner sends `START`; everyone plays until `END`.
    pub(super) async fn play_game(&mut self) -> Result<(), Interrupt> {
        // In lockstep every table starts as the play phase opens; a joiner may even get its
        // START before its own task saw the phase change, so time from the opening.
        let started = if self.ctx.plan.lockstep {
            self.ctx.board.opened_at()
        } else {
            clock::now()
        };
        // The room of this game: only it is cleared at the end (the owner may already have
        // published the next game's).
        let played = self.room.clone().or_else(|| self.table.room());
        if self.owner {
            if let Some(room_no) = self.room.clone() {
                let plan = std::sync::Arc::clone(&self.ctx.plan);
                let timer = plan.timer.clone().unwrap_or_default();
                self.start_sent = Some(clock::now());
                self.kaiju_at = None;
                self.last_request = None;
                self.said = false;
                self.send(&messages::start(&room_no, &plan.rule, &timer))
                    .await?;
            }
        }
        // Until END; or, before any START, until the table breaks (its owner could not start).
        let until_end = serve::Wait {
            done: |p: &Player| {
                p.ended.is_some() || (p.start_event_at.is_none() && p.table.is_broken())
            },
            deadline: None,
            table: true,
        };
        let result = self.serve(until_end, None).await;
        self.fold_play();
        let mut rec = self.ctx.recorder.borrow_mut();
        match self.start_event_at {
            Some(at) => rec
                .phase("started")
                .success(clock::to_us(at.saturating_sub(started))),
            None => rec.phase("started").failure(),
        }
        match (&result, self.ended) {
            (Ok(()), Some(true)) if self.owner => {
                rec.games_completed += 1;
                if let Some(kaiju) = self.kaiju_at {
                    rec.game_time
                        .saturating_record(clock::to_us(clock::now() - kaiju));
                }
                self.ctx
                    .gauges
                    .games_completed
                    .fetch_add(1, Ordering::Relaxed);
            }
            // Still being played when the session ended: cut, not aborted.
            (Err(Interrupt::Shutdown), None) if self.owner && self.kaiju_at.is_some() => {
                rec.games_cut += 1;
            }
            (_, Some(false)) | (Err(_), _) if self.owner && self.kaiju_at.is_some() => {
                rec.games_aborted += 1;
            }
            _ => {}
        }
        drop(rec);
        self.playing = false;
        if played.is_some_and(|room| self.table.has_room(&room)) {
            self.table.clear_room();
        }
        result
    }

    /// What the player did since the last fold (its hands, wins, calls), into the recorder: at
    /// each hand's end, so that a hand counts in the interval it ended, and at the game's end.
    fn fold_play(&mut self) {
        let played = self.bot.take_stats();
        self.ctx
            .recorder
            .borrow_mut()
            .bots
            .entry(self.ctx.plan.bot.as_str())
            .or_default()
            .merge(&played);
    }

    /// Answers a `GAME` message: a request gets its reply, now or after the think time.
    pub(super) async fn on_game(&mut self, msg: &Value, received: Nanos) -> Result<(), Interrupt> {
        if self.owner && msg.get("say").is_some() {
            self.said = true;
        }
        let reply = match self.bot.on_game(msg) {
            Ok(Some(reply)) => reply,
            Ok(None) => return Ok(()),
            Err(e) => {
                self.note_error(ErrorKind::MalformedGame, e.to_string());
                return Ok(());
            }
        };
        if self.owner {
            self.time_step(reply.step, received);
        }
        if matches!(reply.step, StepKind::Hule | StepKind::Pingju) {
            self.fold_play();
        }
        let frame = messages::game_reply(reply.seq, &reply.action);
        if reply.think {
            let think = self.think_time();
            if think > 0 {
                let due = received + think;
                let held = self.pending.replace(PendingReply {
                    due,
                    received,
                    bytes_in: self.frame_in,
                    timer: Box::pin(self.ctx.pacer.sleep_until(due)),
                    frame,
                });
                if let Some(held) = held {
                    self.log_unsent(held.due, "superseded");
                }
                return Ok(());
            }
        }
        self.record_reply_lateness(received, received, (self.frame_in, frame.len()));
        self.send(&frame).await
    }

    /// Owner: the time since the previous request of this table, credited to the kind of step
    /// that opened it. A draw is due after the think time, and after the server's pause too
    /// when it announced something (a riichi, a kan, a tsumo win) in between: that pause is
    /// the protocol's, so it is not counted as overshoot.
    fn time_step(&mut self, step: StepKind, received: Nanos) {
        let said = std::mem::take(&mut self.said);
        let mut rec = self.ctx.recorder.borrow_mut();
        if step == StepKind::Kaiju {
            if let Some(start) = self.start_sent.take() {
                rec.start_burst
                    .saturating_record(clock::to_us(received - start));
            }
            self.kaiju_at = Some(received);
            rec.games_started += 1;
        }
        if let Some((previous, kind)) = self.last_request.replace((received, step)) {
            let interval = received.saturating_sub(previous);
            rec.step(kind.as_str(), clock::to_us(interval));
            let think = self.ctx.plan.think.as_nanos() as u64;
            match kind {
                StepKind::Zimo | StepKind::Gangzimo if think >= STEP_MINIMUM => {
                    let over = clock::to_us(draw_overshoot(interval, think, said));
                    rec.draw_overshoot.saturating_record(over);
                    if let Some(stages) = &self.ctx.stages {
                        let stage = rec.stage(stages.index(received));
                        stage.draw_overshoot.saturating_record(over);
                    }
                    let gauges = &self.ctx.gauges;
                    gauges
                        .draw_over_think_max_us
                        .fetch_max(over, Ordering::Relaxed);
                    gauges.draws.fetch_add(1, Ordering::Relaxed);
                }
                StepKind::Qipai => {
                    rec.deal_overshoot
                        .saturating_record(clock::to_us(interval.saturating_sub(STEP_MINIMUM)));
                }
                _ => {}
            }
        }
    }

    /// The think time of one own-turn action: `--think` plus a random `0..--think-jitter`.
    fn think_time(&mut self) -> Nanos {
        let plan = &self.ctx.plan;
        let base = plan.think.as_nanos() as u64;
        let jitter = plan.think_jitter.as_nanos() as u64;
        if jitter == 0 {
            return base;
        }
        base + self.rng.below(jitter)
    }

    /// A reply due at `intended` (for the request that arrived at `received`) goes out now.
    fn record_reply_lateness(&mut self, intended: Nanos, received: Nanos, bytes: (u64, usize)) {
        let now = clock::now();
        self.log_reply(intended, received, now, (bytes.0, bytes.1 as u64));
        let lateness = clock::to_us(now.saturating_sub(intended));
        self.ctx
            .recorder
            .borrow_mut()
            .reply_lateness
            .saturating_record(lateness);
        self.in_stage(now, |stage| {
            stage.reply_lateness.saturating_record(lateness)
        });
    }

    /// The player's session is over: a reply still held back never goes out (`--requests`).
    pub(super) fn give_up_pending(&mut self) {
        if let Some(held) = self.pending.take() {
            self.log_unsent(held.due, "unsent");
        }
    }

    /// Sends the reply held back for the think time, now that it is due.
    pub(super) async fn send_pending(&mut self) -> Result<(), Interrupt> {
        if let Some(pending) = self.pending.take() {
            self.record_reply_lateness(
                pending.due,
                pending.received,
                (pending.bytes_in, pending.frame.len()),
            );
            self.send(&pending.frame).await?;
        }
        Ok(())
    }
}

/// How much later than due a draw's step ended: due after the think time, plus the server's
/// pause when it announced something (`said`) before the next request.
fn draw_overshoot(interval: Nanos, think: Nanos, said: bool) -> Nanos {
    let due = think + if said { SAY_PAUSE } else { 0 };
    interval.saturating_sub(due)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    #[test]
    fn an_announced_draw_is_due_after_the_servers_pause_too() {
        // A riichi discard: 1 s think, `say`, then the server's 500 ms pause, 3 ms late.
        assert_eq!(draw_overshoot(1_503 * MS, 1_000 * MS, true), 3 * MS);
        // Without an announcement the same interval is half a second over.
        assert_eq!(draw_overshoot(1_503 * MS, 1_000 * MS, false), 503 * MS);
        // Early is zero, never negative.
        assert_eq!(draw_overshoot(999 * MS, 1_000 * MS, false), 0);
    }
}
