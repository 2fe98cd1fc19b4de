//! The event loop under every step of a player: whatever the player waits for — the next
//! phase, its table's room number, a `HELLO`, the end of a game, its think time — its socket
//! stays served (pings answered, game requests handled), and shutdown or a lost socket ends
//! the wait. Each frame is decoded and dispatched here to the step it concerns.

use std::rc::Rc;
use std::sync::atomic::Ordering;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;

use super::{Interrupt, Player};
use crate::mahjong::messages::{self, ServerEvent};
use crate::mahjong::phase::Phase;
use crate::timing::clock::{self, Nanos};
use crate::timing::pacer::Pacer;
use crate::ws::socketio::{self, Packet};

impl Player {
    pub(super) async fn wait_phase(&mut self, phase: Phase) -> Result<(), Interrupt> {
        let mut phases = self.ctx.phases.clone();
        loop {
            if *phases.borrow_and_update() >= phase {
                return Ok(());
            }
            if self.ws.is_some() {
                // Keep the socket served while waiting (pings, late messages).
                let result = self.serve_until_changed(&mut phases).await;
                result?;
            } else {
                let mut shutdown = self.ctx.shutdown.clone();
                if *shutdown.borrow_and_update() {
                    return Err(Interrupt::Shutdown);
                }
                tokio::select! {
                    changed = phases.changed() => if changed.is_err() { return Err(Interrupt::Shutdown) },
                    _ = shutdown.changed() => return Err(Interrupt::Shutdown),
                }
            }
        }
    }

    /// Serves the socket until the phase changes.
    async fn serve_until_changed(
        &mut self,
        phases: &mut watch::Receiver<Phase>,
    ) -> Result<(), Interrupt> {
        let mut shutdown = self.ctx.shutdown.clone();
        loop {
            if *shutdown.borrow_and_update() {
                return Err(Interrupt::Shutdown);
            }
            let pending_due = self.pending.as_ref().map(|p| p.due);
            let pacer = Rc::clone(&self.ctx.pacer);
            let Some(ws) = self.ws.as_mut() else {
                return Err(Interrupt::Disconnected);
            };
            tokio::select! {
                changed = phases.changed() => {
                    if changed.is_err() { return Err(Interrupt::Shutdown); }
                    return Ok(());
                }
                _ = shutdown.changed() => return Err(Interrupt::Shutdown),
                frame = ws.next() => self.on_frame(frame).await?,
                _ = sleep_opt(&pacer, pending_due) => self.send_pending().await?,
            }
        }
    }

    /// Serves the socket until `done(self)` holds, `deadline` passes (Ok), shutdown or
    /// disconnect (Err).
    pub(super) async fn serve_until(
        &mut self,
        deadline: Option<Nanos>,
        done: impl Fn(&Player) -> bool,
    ) -> Result<(), Interrupt> {
        let mut shutdown = self.ctx.shutdown.clone();
        let table = Rc::clone(&self.table);
        loop {
            if *shutdown.borrow_and_update() {
                return Err(Interrupt::Shutdown);
            }
            if done(self) || deadline.is_some_and(|d| clock::now() >= d) {
                return Ok(());
            }
            let pending_due = self.pending.as_ref().map(|p| p.due);
            let pacer = Rc::clone(&self.ctx.pacer);
            let table_changed = table.changed();
            match self.ws.as_mut() {
                Some(ws) => {
                    tokio::select! {
                        _ = shutdown.changed() => return Err(Interrupt::Shutdown),
                        frame = ws.next() => self.on_frame(frame).await?,
                        _ = sleep_opt(&pacer, pending_due) => self.send_pending().await?,
                        _ = sleep_opt(&pacer, deadline) => {}
                        _ = table_changed => {}
                    }
                }
                None => {
                    tokio::select! {
                        _ = shutdown.changed() => return Err(Interrupt::Shutdown),
                        _ = sleep_opt(&pacer, deadline) => {}
                        _ = table_changed => {}
                    }
                }
            }
        }
    }

    /// Handles one frame (or the end of the stream).
    async fn on_frame(
        &mut self,
        frame: Option<Result<Message, tokio_tungstenite::tungstenite::Error>>,
    ) -> Result<(), Interrupt> {
        let text = match frame {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => {
                self.ws = None;
                self.table.set_broken();
                self.ctx.recorder.borrow_mut().disconnects += 1;
                self.ctx.live.errors.fetch_add(1, Ordering::Relaxed);
                // play_game counts the aborted game.
                return Err(Interrupt::Disconnected);
            }
            Some(Ok(_)) => return Ok(()),
        };
        let received = clock::now();
        {
            let mut rec = self.ctx.recorder.borrow_mut();
            rec.messages_in += 1;
            rec.bytes_in += text.len() as u64;
        }
        self.ctx.live.messages.fetch_add(1, Ordering::Relaxed);
        match socketio::parse(text.as_str()) {
            Ok(Packet::Ping) => self.send(socketio::PONG.to_string()).await,
            Ok(Packet::Open { .. }) => self.send(socketio::CONNECT.to_string()).await,
            Ok(Packet::Event { name, args }) => self.on_event(&name, &args, received).await,
            Ok(Packet::Disconnected) => {
                self.note_error(format!(
                    "{}: the server disconnected the socket",
                    self.name()
                ));
                self.close_socket().await;
                Err(Interrupt::Disconnected)
            }
            Ok(Packet::ConnectError(e)) => {
                self.note_error(format!("{}: socket.io connect error {e}", self.name()));
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(e) => {
                self.note_error(e.to_string());
                Ok(())
            }
        }
    }

    async fn on_event(
        &mut self,
        name: &str,
        args: &[Value],
        received: Nanos,
    ) -> Result<(), Interrupt> {
        let event = match messages::classify(name, args) {
            Ok(event) => event,
            Err(e) => {
                self.note_error(e.to_string());
                return Ok(());
            }
        };
        match event {
            ServerEvent::Hello(Some(uid)) => {
                if self.uid.is_none() {
                    self.uid = Some(uid.to_string());
                }
                // Also "back in the lobby" after leaving a room.
                self.room = None;
            }
            ServerEvent::Hello(None) => {
                self.note_error(format!(
                    "{}: HELLO null: the server did not accept the login cookie",
                    self.name()
                ));
            }
            ServerEvent::Room { room_no, members } => {
                self.room = Some(room_no.to_string());
                self.members = members;
                self.room_seen = true;
                if self.owner && !self.table.has_room(room_no) {
                    self.table.set_room(room_no);
                }
            }
            ServerEvent::Start => {
                self.start_event_at = Some(received);
                self.playing = true;
                self.ctx.live.playing.fetch_add(1, Ordering::Relaxed);
            }
            ServerEvent::Game(msg) => self.on_game(msg, received).await?,
            ServerEvent::End(record) => {
                self.ended = Some(record.is_some());
                if self.playing {
                    self.ctx.live.playing.fetch_sub(1, Ordering::Relaxed);
                }
                self.playing = false;
                self.room = None;
                if record.is_none() {
                    self.note_error(format!(
                        "{}: END without a record: the server aborted the game",
                        self.name()
                    ));
                }
            }
            ServerEvent::Error(message) => {
                self.note_error(format!("{}: server ERROR {message}", self.name()));
                if !self.owner && !self.room_seen {
                    self.table.set_broken();
                }
            }
            ServerEvent::Unknown(_) => {}
        }
        Ok(())
    }

    pub(super) async fn send(&mut self, frame: String) -> Result<(), Interrupt> {
        let Some(ws) = self.ws.as_mut() else {
            return Err(Interrupt::Disconnected);
        };
        let len = frame.len() as u64;
        match ws.send(Message::text(frame)).await {
            Ok(()) => {
                let mut rec = self.ctx.recorder.borrow_mut();
                rec.messages_out += 1;
                rec.bytes_out += len;
                Ok(())
            }
            Err(_) => {
                self.ws = None;
                self.ctx.recorder.borrow_mut().disconnects += 1;
                Err(Interrupt::Disconnected)
            }
        }
    }
}

/// Sleeps until `deadline` on the pacer, or for ever when there is none.
async fn sleep_opt(pacer: &Rc<Pacer>, deadline: Option<Nanos>) {
    match deadline {
        Some(d) => pacer.sleep_until(d).await,
        None => std::future::pending().await,
    }
}
