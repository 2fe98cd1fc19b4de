//! Forming a table: the owner creates a room and waits until three others have joined; the
//! others wait for the owner's room number and join it. The four players of a table are tasks
//! of one worker, so the owner hands the room number over through a shared [`Table`] rather
//! than across threads; a member that could not log in or connect marks the table broken, so
//! the others stop waiting for it and skip the table's games.

use std::cell::{Cell, RefCell};

use tokio::sync::futures::Notified;
use tokio::sync::Notify;

use super::retry::SHUTDOWN_GRACE;
use super::serve::Wait;
use super::{Interrupt, Player};
use crate::mahjong::messages;
use crate::stats::mahjong::{ErrorKind, Step};
use crate::timing::clock::{self, Nanos};

/// The four players of a table share this: the owner publishes the room number here.
#[derive(Default)]
pub struct Table {
    room_no: RefCell<Option<String>>,
    /// A member could not log in or connect, or the table failed to form: skip its games.
    broken: Cell<bool>,
    changed: Notify,
    /// `--stages`: the players that arrived at it, those connected, those gone (logged out).
    arrived: Cell<usize>,
    ready: Cell<usize>,
    gone: Cell<usize>,
    /// `--stages`: its players are to leave after the game they play (the profile falls).
    leave: Cell<bool>,
    /// `--stages`: its owner ended it (its games played, or asked to leave): no more games.
    closed: Cell<bool>,
}

/// A table under `--stages`, as the arrivals see it.
impl Table {
    /// A player arrived to sit at it.
    pub fn arrive(&self) {
        self.arrived.set(self.arrived.get() + 1);
    }

    pub fn arrived(&self) -> usize {
        self.arrived.get()
    }

    /// Its players are to leave after their game; those still to come are not sent.
    pub fn ask_to_leave(&self) {
        self.leave.set(true);
        self.changed.notify_waiters();
    }

    /// Asked to leave, or ended by its owner: its players no longer count as staying.
    pub fn is_leaving(&self) -> bool {
        self.leave.get() || self.closed.get()
    }

    /// Every player that arrived at it is gone.
    pub fn is_empty(&self) -> bool {
        self.gone.get() >= self.arrived.get()
    }

    pub(super) fn set_ready(&self) {
        self.ready.set(self.ready.get() + 1);
        self.changed.notify_waiters();
    }

    pub(super) fn ready(&self) -> usize {
        self.ready.get()
    }

    pub(super) fn set_gone(&self) {
        self.gone.set(self.gone.get() + 1);
    }

    pub(super) fn close(&self) {
        self.closed.set(true);
        self.changed.notify_waiters();
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed.get()
    }
}

impl Table {
    pub(super) fn set_room(&self, room_no: &str) {
        *self.room_no.borrow_mut() = Some(room_no.to_string());
        self.changed.notify_waiters();
    }

    pub(super) fn clear_room(&self) {
        *self.room_no.borrow_mut() = None;
    }

    pub(super) fn room(&self) -> Option<String> {
        self.room_no.borrow().clone()
    }

    /// Whether the room published here is `room_no`.
    pub(super) fn has_room(&self, room_no: &str) -> bool {
        self.room_no.borrow().as_deref() == Some(room_no)
    }

    pub(super) fn set_broken(&self) {
        self.broken.set(true);
        self.changed.notify_waiters();
    }

    /// Whether it is broken (for good: the session's coordinator counts tables that can play).
    pub fn is_broken(&self) -> bool {
        self.broken.get()
    }

    /// Completes at the next room number or breakage.
    pub(super) fn changed(&self) -> Notified<'_> {
        self.changed.notified()
    }
}

impl Player {
    /// Serves the socket until `done` holds or `deadline` passes, checking `done` again
    /// whenever the table changes.
    async fn serve_table(
        &mut self,
        deadline: Nanos,
        done: impl Fn(&Player) -> bool,
    ) -> Result<(), Interrupt> {
        let wait = Wait {
            done,
            deadline: Some(deadline),
            table: true,
        };
        self.serve(wait, None).await
    }

    /// Owner: creates the room and waits until it is full; the others join it and wait the
    /// same. A table counts as formed for a player only once its room holds four: a member
    /// that saw only its own join would otherwise wait in the play phase for a `START` that
    /// never comes.
    pub(super) async fn form_table(&mut self) -> Result<bool, Interrupt> {
        let plan = std::sync::Arc::clone(&self.ctx.plan);
        let started = clock::now();
        let deadline = started + plan.connect_timeout.as_nanos() as u64;
        self.start_event_at = None;
        self.ended = None;
        let waited = self.wait_for_full_room(deadline).await;
        if self.table.is_closed() {
            // `--stages`: its owner ended the table between two games; no failure.
            return waited.map(|()| false);
        }
        // Broken by another member, who said why (or by the owner giving up first).
        let broken = self.table.is_broken();
        let formed = !broken && self.members >= 4 && self.room_seen;
        if formed {
            self.seated = true;
            self.ctx
                .recorder
                .borrow_mut()
                .phase("formed")
                .success(clock::to_us(clock::now() - started));
            return waited.map(|()| true);
        }
        let when = match waited {
            Ok(()) => Some("within --connect-timeout"),
            // The end of the run cut a wait that had already lasted: a failure too (a healthy
            // server fills a room in milliseconds), but not a wait it cut as it began.
            Err(Interrupt::Shutdown)
                if clock::now() - started >= SHUTDOWN_GRACE.as_nanos() as u64 =>
            {
                Some("by the end of the run")
            }
            Err(_) => None,
        };
        if let Some(when) = when {
            self.form_failed(when, broken);
        }
        if self.owner {
            // Only the owner gives the table up: a member's own deadline passing first must not
            // end the owner's wait before it has said why.
            self.table.set_broken();
        }
        waited.map(|()| false)
    }

    /// Owner: `ROOM` (create), then serve until four are in it. The others: wait for the
    /// owner's room number, join, and serve until four are in it. Ends early when the table
    /// breaks.
    async fn wait_for_full_room(&mut self, deadline: Nanos) -> Result<(), Interrupt> {
        self.members = 0;
        self.room_seen = false;
        if self.owner {
            self.room = None;
            self.send(&messages::create_room()).await?;
        } else {
            self.serve_table(deadline, |p| {
                p.table.room().is_some() || p.table.is_broken() || p.table.is_closed()
            })
            .await?;
            let Some(room_no) = self.table.room() else {
                return Ok(());
            };
            self.send(&messages::join_room(&room_no)).await?;
        }
        self.serve_table(deadline, |p| {
            (p.room_seen && p.members >= 4) || p.table.is_broken()
        })
        .await
    }

    /// Counts a failed form and says why: the owner for its room (not answered, or not full),
    /// a member only for its own join not answered. A player whose table never formed failed
    /// before it could play.
    fn form_failed(&mut self, when: &str, broken: bool) {
        let mut rec = self.ctx.recorder.borrow_mut();
        rec.phase("formed").failure();
        if !self.seated {
            rec.never_seated += 1;
        }
        drop(rec);
        let joined = self.owner || self.table.room().is_some();
        if broken || !joined {
            return;
        }
        let asked = if self.owner {
            "create a room"
        } else {
            "join a room"
        };
        if !self.room_seen {
            self.note_error(
                ErrorKind::Failed(Step::Form, format!("no answer to ROOM ({asked}) {when}")),
                format!("{}: no answer to ROOM ({asked}) {when}", self.name()),
            );
        } else if self.owner {
            let seats = self.ctx.plan.seats;
            let outside = if seats < 4 {
                format!(
                    " (--seats {seats}: the other {} seats wait for players from outside)",
                    4 - seats
                )
            } else {
                String::new()
            };
            self.note_error(
                ErrorKind::Failed(Step::Form, format!("room not full {when}{outside}")),
                format!(
                    "{}: room {} not full {when}: {} of 4 seats taken",
                    self.name(),
                    self.room.as_deref().unwrap_or("?"),
                    self.members
                ),
            );
        }
    }
}
