//! Forming a table: the owner creates a room and waits until three others have joined; the
//! others wait for the owner's room number and join it. The four players of a table are tasks
//! of one worker, so the owner hands the room number over through a shared [`Table`] rather
//! than across threads; a member that could not log in or connect marks the table broken, so
//! the others stop waiting for it and skip the table's games.

use std::cell::{Cell, RefCell};

use tokio::sync::futures::Notified;
use tokio::sync::Notify;

use super::serve::Wait;
use super::{Interrupt, Player};
use crate::mahjong::messages;
use crate::timing::clock::{self, Nanos};

/// The four players of a table share this: the owner publishes the room number here.
#[derive(Default)]
pub struct Table {
    room_no: RefCell<Option<String>>,
    /// A member could not log in or connect, or the table failed to form: skip its games.
    broken: Cell<bool>,
    changed: Notify,
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

    pub(super) fn is_broken(&self) -> bool {
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

    /// Owner: creates the room and waits for three members; the others join it.
    pub(super) async fn form_table(&mut self) -> Result<bool, Interrupt> {
        let plan = std::sync::Arc::clone(&self.ctx.plan);
        let started = clock::now();
        let deadline = started + plan.connect_timeout.as_nanos() as u64;
        self.start_event_at = None;
        self.ended = None;
        if self.owner {
            self.room = None;
            self.members = 0;
            self.send(&messages::create_room()).await?;
            self.serve_table(deadline, |p| p.members >= 4 || p.table.is_broken())
                .await?;
        } else {
            self.serve_table(deadline, |p| {
                p.table.room().is_some() || p.table.is_broken()
            })
            .await?;
            if let Some(room_no) = self.table.room() {
                self.room_seen = false;
                self.send(&messages::join_room(&room_no)).await?;
                self.serve_table(deadline, |p| p.room_seen || p.table.is_broken())
                    .await?;
            }
        }
        let formed = !self.table.is_broken()
            && if self.owner {
                self.members >= 4
            } else {
                self.room_seen
            };
        let mut rec = self.ctx.recorder.borrow_mut();
        if formed {
            rec.phase("formed")
                .success(clock::to_us(clock::now() - started));
        } else {
            rec.phase("formed").failure();
            drop(rec);
            self.table.set_broken();
        }
        Ok(formed)
    }
}
