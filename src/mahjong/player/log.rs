//! `--requests` for a mahjong session: each timed reply of the bots is one row of the HTTP
//! mode's log (`stats::requests`), the same replies `reply_lateness` times. `conn` is the
//! player's number (its name's, `tsumoN`), `stream` the reply's number in the player's session,
//! from 0. `intended_ns` is when the reply was due (the request's arrival, plus the think time
//! for an own-turn action), `sent_ns` when it went out, `received_ns` when the request it
//! answers arrived; `corrected_ns` and `tsumo_ns` are its lateness (sent − due), `server_ns` 0,
//! `bytes_in` the length of the request's frame, `bytes_out` its own. A reply held back for the think time that never went out is
//! a row with its error: `superseded` (the server sent the next request first) or `unsent` (the
//! game or the player's socket ended first), `sent_ns` and `received_ns` then when it was
//! given up.

use std::cell::RefCell;

use super::Player;
use crate::stats::requests::writer::{Place, Rows};
use crate::timing::clock::{self, Nanos};

/// A worker's rows, shared by its players; `None` without `--requests`.
pub type Log = Option<RefCell<Rows>>;

/// A worker's rows, started at the run's start `t0` (the wall clock's reading of that instant
/// in the log's header).
pub fn started(rows: Option<Rows>, t0: Nanos) -> Log {
    let mut rows = rows?;
    let since = clock::now().saturating_sub(t0);
    let unix_ns = crate::sys::wallclock::unix_now_ns().saturating_sub(since);
    rows.start(t0, unix_ns);
    Some(RefCell::new(rows))
}

impl Player {
    /// The next reply's place in the log: this player's number, and the reply's.
    fn next_place(&mut self) -> Place {
        let seq = self.replies;
        self.replies += 1;
        Place {
            conn: (self.ctx.first_name + self.index) as u32,
            stream: Some(seq),
            seq,
        }
    }

    /// A reply due at `intended` (for the request that arrived at `received`) goes out at
    /// `sent`: `bytes` the request's frame length and its own.
    pub(super) fn log_reply(
        &mut self,
        intended: Nanos,
        received: Nanos,
        sent: Nanos,
        bytes: (u64, u64),
    ) {
        if self.ctx.log.is_none() {
            return;
        }
        let place = self.next_place();
        let Some(rows) = &self.ctx.log else { return };
        let late = sent.saturating_sub(intended);
        rows.borrow_mut()
            .answered(&place, (intended, sent, received), (late, 0, late), bytes);
    }

    /// A reply due at `intended` was given up now (`error`: `superseded` or `unsent`).
    pub(super) fn log_unsent(&mut self, intended: Nanos, error: &str) {
        if self.ctx.log.is_none() {
            return;
        }
        let place = self.next_place();
        let Some(rows) = &self.ctx.log else { return };
        let now = clock::now();
        rows.borrow_mut()
            .ended(&place, (intended, now, now), None, error);
    }
}
