//! The event loop under every step of a player: whatever the player waits for — the next
//! phase, its table's room number, a `HELLO`, the end of a game, its think time — its socket
//! stays served (pings answered, game requests handled), and shutdown or a lost socket ends
//! the wait. Each frame is decoded and dispatched here to the step it concerns.
//!
//! A player spends its life here, woken once per frame, so a wake-up must cost little: the
//! loop polls its socket first (`biased`), keeps one timer per wait instead of one per frame,
//! and registers with the run's shutdown and phase channels once per wait — those channels are
//! shared by every player of the run, and each poll of a waiting `changed()` takes their lock —
//! then reads their versions (an atomic load) on each turn instead.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::task::Poll;

use serde_json::Value;
use tokio::sync::watch;

use super::{Interrupt, Player};
use crate::mahjong::messages::{self, ServerEvent};
use crate::mahjong::phase::Phase;
use crate::stats::mahjong::ErrorKind;
use crate::timing::clock::{self, Nanos};
use crate::ws::socketio::{self, FrameError, Packet};
use crate::ws::transport::{Message, WsError};

/// A frame off the socket, decoded while its text was borrowed from the read buffer: its length
/// and socket.io packet, `None` for a binary frame, or why the socket ended.
type Incoming = Result<Option<(usize, Result<Packet, FrameError>)>, WsError>;

/// What a wait ends on, besides shutdown and a lost socket.
pub(super) struct Wait<F: Fn(&Player) -> bool> {
    /// Ends (Ok) when this holds.
    pub(super) done: F,
    /// Ends (Ok) when this passes.
    pub(super) deadline: Option<Nanos>,
    /// Re-checks `done` whenever the table changes (room number published, table broken).
    pub(super) table: bool,
}

impl Player {
    pub(super) async fn wait_phase(&mut self, phase: Phase) -> Result<(), Interrupt> {
        let mut phases = self.ctx.phases.clone();
        loop {
            if *phases.borrow_and_update() >= phase {
                return Ok(());
            }
            if self.ws.is_some() {
                // Keep the socket served while waiting (pings, late messages).
                self.serve_until_changed(&phases).await?;
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

    /// Serves the socket until the phase changes from what `seen` last saw.
    async fn serve_until_changed(
        &mut self,
        seen: &watch::Receiver<Phase>,
    ) -> Result<(), Interrupt> {
        let mut registered = seen.clone();
        let phase_changed = registered.changed();
        tokio::pin!(phase_changed);
        register(phase_changed.as_mut()).await;
        let wait = Wait {
            done: |_: &Player| false,
            deadline: None,
            table: false,
        };
        self.serve(wait, Some(seen)).await
    }

    /// Serves the socket until `done(self)` holds or `deadline` passes (Ok), or shutdown or
    /// disconnect (Err).
    pub(super) async fn serve_until(
        &mut self,
        deadline: Option<Nanos>,
        done: impl Fn(&Player) -> bool,
    ) -> Result<(), Interrupt> {
        let wait = Wait {
            done,
            deadline,
            table: false,
        };
        self.serve(wait, None).await
    }

    /// The loop: serves the socket and sends held-back replies when due, until `wait` ends,
    /// the phase changes from what `phase` last saw, shutdown, or disconnect.
    pub(super) async fn serve<F: Fn(&Player) -> bool>(
        &mut self,
        wait: Wait<F>,
        phase: Option<&watch::Receiver<Phase>>,
    ) -> Result<(), Interrupt> {
        let ctx = Rc::clone(&self.ctx);
        let mut shutdown = ctx.shutdown.clone();
        if *shutdown.borrow_and_update() {
            return Err(Interrupt::Shutdown);
        }
        let shutdown_changed = shutdown.changed();
        tokio::pin!(shutdown_changed);
        register(shutdown_changed.as_mut()).await;
        let deadline = wait.deadline.map(|d| tokio::time::sleep_until(instant(d)));
        tokio::pin!(deadline);
        let table = Rc::clone(&self.table);
        loop {
            // The run's channels: the task's waker is registered with them, so a change wakes
            // this loop, which reads it here.
            if ctx.shutdown.has_changed().unwrap_or(true) {
                return Err(Interrupt::Shutdown);
            }
            if let Some(phase) = phase {
                match phase.has_changed() {
                    Ok(false) => {}
                    Ok(true) => return Ok(()),
                    Err(_) => return Err(Interrupt::Shutdown),
                }
            }
            if (wait.done)(self) || wait.deadline.is_some_and(|d| clock::now() >= d) {
                return Ok(());
            }
            let table_changed = wait.table.then(|| table.changed());
            let Some(ws) = self.ws.as_mut() else {
                // Before the socket opened (the ramp) or after it was lost.
                tokio::select! {
                    biased;
                    _ = opt(deadline.as_mut().as_pin_mut()) => return Ok(()),
                    _ = opt(table_changed) => {}
                    _ = Woken(false) => {}
                }
                continue;
            };
            let think = self.pending.as_mut().map(|p| p.timer.as_mut());
            tokio::select! {
                biased;
                frame = ws.next_stamped() => {
                    // Received when the kernel stamped the read that completed it.
                    let now = clock::now();
                    let received = match &frame {
                        Ok((_, rx)) => clock::received(*rx, now, 0),
                        Err(_) => now,
                    };
                    // Decoded while the text is borrowed from the socket's buffer; handled after.
                    let frame = match frame {
                        Ok((Message::Text(text), _)) => {
                            Ok(Some((text.len(), socketio::parse(text))))
                        }
                        Ok((Message::Binary(_), _)) => Ok(None),
                        Err(e) => Err(e),
                    };
                    self.on_frame(frame, received).await?
                }
                _ = opt(think) => self.send_pending().await?,
                _ = opt(deadline.as_mut().as_pin_mut()) => return Ok(()),
                _ = opt(table_changed) => {}
                _ = Woken(false) => {}
            }
        }
    }

    /// Handles one frame (its length and socket.io packet; `None` for a binary one, which
    /// majiang-server never sends), or the socket's end.
    async fn on_frame(&mut self, frame: Incoming, received: Nanos) -> Result<(), Interrupt> {
        let (len, packet) = match frame {
            Ok(Some(text)) => text,
            Ok(None) => return Ok(()),
            Err(e) => {
                if e.is_violation() {
                    self.note_error(
                        ErrorKind::WebSocketViolation,
                        format!("{}: {e}", self.name()),
                    );
                }
                self.ws = None;
                self.table.set_broken();
                self.ctx.recorder.borrow_mut().disconnects += 1;
                self.ctx.gauges.errors.fetch_add(1, Ordering::Relaxed);
                self.ctx.gauges.trouble.fetch_add(1, Ordering::Relaxed);
                // play_game counts the aborted game.
                return Err(Interrupt::Disconnected);
            }
        };
        {
            let mut rec = self.ctx.recorder.borrow_mut();
            rec.messages_in += 1;
            rec.bytes_in += len as u64;
        }
        self.frame_in = len as u64;
        self.ctx.gauges.messages.fetch_add(1, Ordering::Relaxed);
        match packet {
            Ok(Packet::Ping) => self.send(socketio::PONG).await,
            Ok(Packet::Open { .. }) => self.send(socketio::CONNECT).await,
            Ok(Packet::Event { name, args }) => self.on_event(&name, &args, received).await,
            Ok(Packet::Disconnected) => {
                self.note_error(
                    ErrorKind::Disconnected,
                    format!("{}: the server disconnected the socket", self.name()),
                );
                self.close_socket().await;
                Err(Interrupt::Disconnected)
            }
            Ok(Packet::ConnectError(e)) => {
                self.note_error(
                    ErrorKind::SocketIoConnect,
                    format!("{}: socket.io connect error {e}", self.name()),
                );
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(e) => {
                self.note_error(ErrorKind::MalformedFrame, e.to_string());
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
                self.note_error(ErrorKind::MalformedMessage, e.to_string());
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
                self.note_error(
                    ErrorKind::HelloNull,
                    format!(
                        "{}: HELLO null: the server did not accept the login cookie",
                        self.name()
                    ),
                );
            }
            ServerEvent::Room { room_no, members } => {
                self.room = Some(room_no.to_string());
                self.members = members;
                self.room_seen = true;
                if self.owner && !self.table.has_room(room_no) {
                    self.table.set_room(room_no);
                    let plan = &self.ctx.plan;
                    if plan.seats < 4 {
                        // The other seats are for players from outside: they need the number.
                        eprintln!(
                            "tsumo: room {room_no} open for {} more players (e.g. majiang-bot -r {room_no} {})",
                            4 - plan.seats,
                            plan.server.url
                        );
                    }
                }
            }
            ServerEvent::Start => {
                if let Some(arrived) = self.arrived_at.take() {
                    let waited = clock::to_us(received.saturating_sub(arrived));
                    self.in_stage(arrived, |stage| {
                        stage.time_to_seat.saturating_record(waited);
                    });
                }
                self.start_event_at = Some(received);
                self.playing = true;
                self.ctx.gauges.playing.fetch_add(1, Ordering::Relaxed);
            }
            ServerEvent::Game(msg) => self.on_game(msg, received).await?,
            ServerEvent::End(record) => {
                self.ended = Some(record.is_some());
                if self.playing {
                    self.ctx.gauges.playing.fetch_sub(1, Ordering::Relaxed);
                }
                self.playing = false;
                self.room = None;
                if record.is_none() {
                    self.note_error(
                        ErrorKind::AbortedGame,
                        format!(
                            "{}: END without a record: the server aborted the game",
                            self.name()
                        ),
                    );
                }
            }
            ServerEvent::Error(message) => {
                self.note_error(
                    ErrorKind::ServerError(without_room_numbers(message)),
                    format!("{}: server ERROR {message}", self.name()),
                );
                if !self.owner && !self.room_seen {
                    self.table.set_broken();
                }
            }
            ServerEvent::Unknown(_) => {}
        }
        Ok(())
    }

    pub(super) async fn send(&mut self, frame: &str) -> Result<(), Interrupt> {
        let Some(ws) = self.ws.as_mut() else {
            return Err(Interrupt::Disconnected);
        };
        let len = frame.len() as u64;
        match ws.send_text(frame).await {
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

/// A server message with its room numbers (`N5702`: a capital and four digits) replaced by
/// `<room>`, so that one kind of error is one group whatever room it named.
fn without_room_numbers(message: &str) -> String {
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::with_capacity(message.len());
    let mut i = 0;
    while i < chars.len() {
        let boundary = |at: usize| chars.get(at).is_none_or(|c| !c.is_ascii_alphanumeric());
        let room = chars[i].is_ascii_uppercase()
            && (i == 0 || boundary(i - 1))
            && chars.len() >= i + 5
            && chars[i + 1..i + 5].iter().all(char::is_ascii_digit)
            && boundary(i + 5);
        if room {
            out.push_str("<room>");
            i += 5;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Polls `changed` once, so the task's waker is registered with its channel; the caller then
/// reads the channel's version instead of polling again.
async fn register<F: Future>(changed: Pin<&mut F>) {
    let mut changed = Some(changed);
    std::future::poll_fn(|cx| {
        if let Some(changed) = changed.take() {
            let _ = changed.poll(cx);
        }
        Poll::Ready(())
    })
    .await
}

/// Pending on its first poll and ready on the next: it ends a `select!` on any wake-up, so the
/// loop re-reads the channels it registered with.
struct Woken(bool);

impl Future for Woken {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, _: &mut std::task::Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            Poll::Pending
        }
    }
}

/// Awaits `future`, or never when there is none.
async fn opt<F: Future>(future: Option<F>) {
    match future {
        Some(future) => {
            future.await;
        }
        None => std::future::pending().await,
    }
}

/// The tokio instant of a time on our clock (both are CLOCK_MONOTONIC).
pub(super) fn instant(at: Nanos) -> tokio::time::Instant {
    tokio::time::Instant::now() + std::time::Duration::from_nanos(at.saturating_sub(clock::now()))
}

#[cfg(test)]
mod tests {
    use super::without_room_numbers;

    #[test]
    fn room_numbers_leave_the_error_kind() {
        assert_eq!(
            without_room_numbers("ルーム N5702 は存在しません"),
            "ルーム <room> は存在しません"
        );
        assert_eq!(without_room_numbers("N5702"), "<room>");
        // Not a room number: too long, lower case, part of a word.
        assert_eq!(
            without_room_numbers("N57021 n5702 XN5702"),
            "N57021 n5702 XN5702"
        );
        assert_eq!(without_room_numbers("既に対局中です"), "既に対局中です");
    }
}
