//! One bot player's whole session: log in, open the socket.io WebSocket, sit at a table, play
//! the games, log out — always log out, whatever happened (a session left behind lives 14 days
//! on the server).
//!
//! A player is one small task with one event loop: it always keeps reading its socket (pings,
//! game requests) while it waits for the next phase, for its table's room number, or for its
//! think time to pass. Phases are opened by the worker's coordinator (see `session`); the player
//! reports each phase done (or failed) and waits for the next.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::Ordering;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::sync::{watch, Notify};
use tokio_tungstenite::tungstenite::Message;

use super::bot::{Bot, StepKind};
use super::messages::{self, ServerEvent};
use super::phase::{Phase, PhaseBoard, SessionLive};
use crate::net::http1::oneshot;
use crate::net::http1::request;
use crate::net::stream::Endpoint;
use crate::plan::MahjongPlan;
use crate::stats::mahjong::MahjongRecorder;
use crate::timing::clock::{self, Nanos};
use crate::timing::pacer::Pacer;
use crate::ws::socketio::{self, Packet};
use crate::ws::transport::{self, WebSocket};

/// The server's minimum time per step (`speed * 200` ms with speed 2).
const STEP_MINIMUM: Nanos = 400_000_000;

/// What every player of one worker shares.
pub struct WorkerCtx {
    pub plan: std::sync::Arc<MahjongPlan>,
    pub endpoint: Endpoint,
    /// `ws://host:port<base>/socket.io/?EIO=4&transport=websocket` (or `wss://`).
    pub ws_url: String,
    /// `Host` header value for login and logout.
    pub host: String,
    pub recorder: RefCell<MahjongRecorder>,
    pub pacer: Rc<Pacer>,
    pub phases: watch::Receiver<Phase>,
    pub board: Rc<PhaseBoard>,
    pub shutdown: watch::Receiver<bool>,
    pub live: std::sync::Arc<SessionLive>,
}

/// The four players of a table share this: the owner publishes the room number here.
#[derive(Default)]
pub struct Table {
    room_no: RefCell<Option<String>>,
    /// A member could not log in or connect, or the table failed to form: skip its games.
    broken: Cell<bool>,
    changed: Notify,
}

impl Table {
    fn set_room(&self, room_no: &str) {
        *self.room_no.borrow_mut() = Some(room_no.to_string());
        self.changed.notify_waiters();
    }

    fn clear_room(&self) {
        *self.room_no.borrow_mut() = None;
    }

    fn room(&self) -> Option<String> {
        self.room_no.borrow().clone()
    }

    fn set_broken(&self) {
        self.broken.set(true);
        self.changed.notify_waiters();
    }
}

/// Why a player stopped waiting.
enum Interrupt {
    /// The run is over (duration end or Ctrl-C): log out now.
    Shutdown,
    /// The socket closed or failed.
    Disconnected,
}

/// A reply held back for the think time.
struct PendingReply {
    due: Nanos,
    frame: String,
}

pub struct Player {
    ctx: Rc<WorkerCtx>,
    /// Global index (for the ramp and the name).
    index: usize,
    table: Rc<Table>,
    owner: bool,
    cookie: Option<String>,
    ws: Option<WebSocket>,
    uid: Option<String>,
    /// Room state as this player last heard it.
    room: Option<String>,
    members: usize,
    /// A ROOM message arrived since the last join was sent.
    room_seen: bool,
    /// When this player's `START` arrived in the current game.
    start_event_at: Option<Nanos>,
    playing: bool,
    /// `END` arrived: `Some(true)` with the record, `Some(false)` aborted.
    ended: Option<bool>,
    bot: Bot,
    pending: Option<PendingReply>,
    /// Owner only: the last request's arrival and kind, for step intervals.
    last_request: Option<(Nanos, StepKind)>,
    start_sent: Option<Nanos>,
    kaiju_at: Option<Nanos>,
    /// Deterministic jitter source (xorshift), seeded by the index.
    rng: u64,
}

impl Player {
    pub fn new(ctx: Rc<WorkerCtx>, index: usize, table: Rc<Table>, owner: bool) -> Player {
        Player {
            ctx,
            index,
            table,
            owner,
            cookie: None,
            ws: None,
            uid: None,
            room: None,
            members: 0,
            room_seen: false,
            start_event_at: None,
            playing: false,
            ended: None,
            bot: Bot::new(),
            pending: None,
            last_request: None,
            start_sent: None,
            kaiju_at: None,
            rng: 0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
        }
    }

    fn name(&self) -> String {
        format!("tsumo{}", self.index)
    }

    /// Runs the player to the end of the session.
    pub async fn run(mut self) {
        let plan = std::sync::Arc::clone(&self.ctx.plan);
        let outcome = self.play_session(&plan).await;
        if let Err(Interrupt::Disconnected) = outcome {
            // A player without its socket takes no further part: let the phases go on without
            // waiting for its logout.
            self.ctx.board.retire(self.index);
        }
        self.log_out().await;
        // Whatever happened, the coordinator must not wait for this player.
        self.ctx.board.retire(self.index);
    }

    async fn play_session(&mut self, plan: &MahjongPlan) -> Result<(), Interrupt> {
        self.wait_phase(Phase::Login).await?;
        self.ramp().await?;
        if !self.log_in().await {
            self.table.set_broken();
        }
        self.report(Phase::Login);

        self.wait_phase(Phase::Connect).await?;
        if self.cookie.is_some() {
            self.ramp().await?;
            if !self.connect().await? {
                self.table.set_broken();
            }
        }
        self.report(Phase::Connect);

        for game in 0..plan.games {
            self.wait_phase(Phase::Form(game)).await?;
            let formed = !self.table.broken.get() && self.form_table().await?;
            self.report(Phase::Form(game));
            if !plan.lockstep {
                // Start as soon as the table is full, and play it out within this phase.
                if formed {
                    self.play_game().await?;
                }
                continue;
            }
            self.wait_phase(Phase::Play(game)).await?;
            if formed {
                self.play_game().await?;
            }
            self.report(Phase::Play(game));
        }
        self.wait_phase(Phase::Logout).await?;
        Ok(())
    }

    /// Waits for `--ramp × index` after the phase opened.
    async fn ramp(&mut self) -> Result<(), Interrupt> {
        let ramp = self.ctx.plan.ramp.as_nanos() as u64;
        if ramp == 0 {
            return Ok(());
        }
        let opened = self.ctx.board.opened_at();
        let due = opened + ramp.saturating_mul(self.index as u64);
        self.serve_until(Some(due), |_| false).await
    }

    /// Tells the coordinator this player is done with `phase` (its success or failure is in the
    /// recorder already).
    fn report(&self, phase: Phase) {
        self.ctx.board.done(self.index, phase);
    }

    async fn wait_phase(&mut self, phase: Phase) -> Result<(), Interrupt> {
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
    async fn serve_until(
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
            let table_changed = table.changed.notified();
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

    /// `POST {base}/auth/`, keeping the `MAJIANG` cookie; retried.
    async fn log_in(&mut self) -> bool {
        let plan = std::sync::Arc::clone(&self.ctx.plan);
        let body = format!("name={}&passwd=*", self.name());
        let bytes = request::format(
            "POST",
            &format!("{}/auth/", plan.server.path),
            &self.ctx.host,
            &[(
                "Content-Type".to_string(),
                "application/x-www-form-urlencoded".to_string(),
            )],
            Some(body.as_bytes()),
        );
        let started = clock::now();
        for _ in 0..plan.retries {
            match oneshot::send(&self.ctx.endpoint, &bytes, plan.connect_timeout).await {
                Ok(response) => {
                    let cookie = response
                        .header_values("set-cookie")
                        .filter_map(|v| std::str::from_utf8(v).ok())
                        .find_map(|v| {
                            v.split(';')
                                .next()
                                .filter(|kv| kv.starts_with("MAJIANG=") && kv.len() > 8)
                        })
                        .map(str::to_string);
                    let mut rec = self.ctx.recorder.borrow_mut();
                    match cookie {
                        Some(cookie) if response.status == 302 || response.status == 200 => {
                            rec.phase("login")
                                .success(clock::to_us(clock::now() - started));
                            self.cookie = Some(cookie);
                            self.ctx.live.logged_in.fetch_add(1, Ordering::Relaxed);
                            return true;
                        }
                        _ => {
                            rec.phase("login").failure();
                            rec.protocol_error(format!(
                                "login of {} answered {} without a MAJIANG cookie (wrong base path?)",
                                self.name(),
                                response.status
                            ));
                            return false;
                        }
                    }
                }
                Err(e) if e.is_transient() => continue,
                Err(e) => {
                    self.note_error(format!("login of {}: {e}", self.name()));
                    break;
                }
            }
        }
        self.ctx.recorder.borrow_mut().phase("login").failure();
        false
    }

    /// Opens the WebSocket and completes the socket.io handshake up to `HELLO`; retried.
    async fn connect(&mut self) -> Result<bool, Interrupt> {
        let plan = std::sync::Arc::clone(&self.ctx.plan);
        let Some(cookie) = self.cookie.clone() else {
            return Ok(false);
        };
        let started = clock::now();
        for attempt in 0..plan.retries {
            let opened = tokio::time::timeout(
                plan.connect_timeout,
                transport::connect(&self.ctx.endpoint, &self.ctx.ws_url, &cookie),
            )
            .await;
            match opened {
                Ok(Ok(ws)) => {
                    self.ctx
                        .recorder
                        .borrow_mut()
                        .phase("connect")
                        .success(clock::to_us(clock::now() - started));
                    self.ws = Some(ws);
                    break;
                }
                Ok(Err(e)) if attempt + 1 == plan.retries => {
                    self.note_error(format!("connect of {}: {e}", self.name()));
                }
                Err(_) if attempt + 1 == plan.retries => {
                    self.note_error(format!("connect of {}: timed out", self.name()));
                }
                _ => {}
            }
        }
        if self.ws.is_none() {
            self.ctx.recorder.borrow_mut().phase("connect").failure();
            return Ok(false);
        }
        // socket.io: the Engine.IO open packet, our CONNECT, its ack, then HELLO with our uid.
        let deadline = started + plan.connect_timeout.as_nanos() as u64;
        match self.serve_until(Some(deadline), |p| p.uid.is_some()).await {
            Ok(()) if self.uid.is_some() => {
                self.ctx
                    .recorder
                    .borrow_mut()
                    .phase("ready")
                    .success(clock::to_us(clock::now() - started));
                self.ctx.live.connected.fetch_add(1, Ordering::Relaxed);
                Ok(true)
            }
            Ok(()) => {
                self.ctx.recorder.borrow_mut().phase("ready").failure();
                self.note_error(format!("{}: no HELLO from the server in time", self.name()));
                self.close_socket().await;
                Ok(false)
            }
            Err(Interrupt::Disconnected) => {
                self.ctx.recorder.borrow_mut().phase("ready").failure();
                self.ws = None;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Owner: creates the room and waits for three members; the others join it.
    async fn form_table(&mut self) -> Result<bool, Interrupt> {
        let plan = std::sync::Arc::clone(&self.ctx.plan);
        let started = clock::now();
        let deadline = started + plan.connect_timeout.as_nanos() as u64;
        self.start_event_at = None;
        self.ended = None;
        if self.owner {
            self.room = None;
            self.members = 0;
            self.send(messages::create_room()).await?;
            self.serve_until(Some(deadline), |p| p.members >= 4 || p.table.broken.get())
                .await?;
        } else {
            self.serve_until(Some(deadline), |p| {
                p.table.room().is_some() || p.table.broken.get()
            })
            .await?;
            if let Some(room_no) = self.table.room() {
                self.room_seen = false;
                self.send(messages::join_room(&room_no)).await?;
                self.serve_until(Some(deadline), |p| p.room_seen || p.table.broken.get())
                    .await?;
            }
        }
        let formed = !self.table.broken.get()
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

    /// Owner sends `START`; everyone plays until `END`.
    async fn play_game(&mut self) -> Result<(), Interrupt> {
        // In lockstep every table starts as the play phase opens; a joiner may even get its
        // START before its own task saw the phase change, so time from the opening.
        let started = if self.ctx.plan.lockstep {
            self.ctx.board.opened_at()
        } else {
            clock::now()
        };
        if self.owner {
            if let Some(room_no) = self.room.clone() {
                let plan = std::sync::Arc::clone(&self.ctx.plan);
                let timer = plan.timer.clone().unwrap_or_default();
                self.start_sent = Some(clock::now());
                self.kaiju_at = None;
                self.last_request = None;
                self.send(messages::start(&room_no, &plan.rule, &timer))
                    .await?;
            }
        }
        let result = self.serve_until(None, |p| p.ended.is_some()).await;
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
                    .live
                    .games_completed
                    .fetch_add(1, Ordering::Relaxed);
            }
            (_, Some(false)) | (Err(_), _) if self.owner && self.kaiju_at.is_some() => {
                rec.games_aborted += 1;
            }
            _ => {}
        }
        drop(rec);
        self.playing = false;
        self.table.clear_room();
        result
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
                if self.owner && self.table.room().as_deref() != Some(room_no) {
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

    async fn on_game(&mut self, msg: &Value, received: Nanos) -> Result<(), Interrupt> {
        let reply = match self.bot.on_game(msg) {
            Ok(Some(reply)) => reply,
            Ok(None) => return Ok(()),
            Err(e) => {
                self.note_error(e.to_string());
                return Ok(());
            }
        };
        if self.owner {
            self.time_step(reply.step, received);
        }
        let frame = messages::game_reply(&reply.body);
        if reply.own_turn {
            let think = self.think_time();
            if think > 0 {
                self.pending = Some(PendingReply {
                    due: received + think,
                    frame,
                });
                return Ok(());
            }
        }
        self.record_reply_lateness(received);
        self.send(frame).await
    }

    /// Owner: the time since the previous request of this table, credited to the kind of step
    /// that opened it.
    fn time_step(&mut self, step: StepKind, received: Nanos) {
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
                    rec.draw_overshoot
                        .saturating_record(clock::to_us(interval.saturating_sub(think)));
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
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        base + self.rng % jitter
    }

    fn record_reply_lateness(&self, intended: Nanos) {
        let lateness = clock::now().saturating_sub(intended);
        self.ctx
            .recorder
            .borrow_mut()
            .reply_lateness
            .saturating_record(clock::to_us(lateness));
    }

    async fn send_pending(&mut self) -> Result<(), Interrupt> {
        if let Some(pending) = self.pending.take() {
            self.record_reply_lateness(pending.due);
            self.send(pending.frame).await?;
        }
        Ok(())
    }

    async fn send(&mut self, frame: String) -> Result<(), Interrupt> {
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

    /// Leaves a waiting room (an owner dissolves it: no ghost room), then closes the socket.
    async fn close_socket(&mut self) {
        if let (Some(room_no), Some(uid)) = (self.room.clone(), self.uid.clone()) {
            if !self.playing {
                let _ = self.send(messages::leave_room(&room_no, &uid)).await;
            }
        }
        if let Some(mut ws) = self.ws.take() {
            let _ = ws
                .send(Message::text(socketio::DISCONNECT.to_string()))
                .await;
            let _ = tokio::time::timeout(std::time::Duration::from_secs(2), ws.close(None)).await;
        }
        if self.playing {
            self.ctx.live.playing.fetch_sub(1, Ordering::Relaxed);
            self.playing = false;
        }
    }

    /// Closes the socket and logs out (retried on transient failures).
    async fn log_out(&mut self) {
        self.close_socket().await;
        let Some(cookie) = self.cookie.take() else {
            return;
        };
        let plan = std::sync::Arc::clone(&self.ctx.plan);
        let bytes = request::format(
            "POST",
            &format!("{}/logout", plan.server.path),
            &self.ctx.host,
            &[
                ("Cookie".to_string(), cookie),
                ("Content-Length".to_string(), "0".to_string()),
            ],
            None,
        );
        let started = clock::now();
        for _ in 0..plan.retries {
            match oneshot::send(&self.ctx.endpoint, &bytes, plan.connect_timeout).await {
                Ok(response) if response.status < 400 => {
                    self.ctx
                        .recorder
                        .borrow_mut()
                        .phase("logout")
                        .success(clock::to_us(clock::now() - started));
                    self.ctx.live.logged_in.fetch_sub(1, Ordering::Relaxed);
                    return;
                }
                Ok(response) => {
                    self.note_error(format!(
                        "logout of {} answered {}",
                        self.name(),
                        response.status
                    ));
                    break;
                }
                Err(e) if e.is_transient() => continue,
                Err(e) => {
                    self.note_error(format!("logout of {}: {e}", self.name()));
                    break;
                }
            }
        }
        self.ctx.recorder.borrow_mut().phase("logout").failure();
    }

    fn note_error(&self, what: String) {
        self.ctx.recorder.borrow_mut().protocol_error(what);
        self.ctx.live.errors.fetch_add(1, Ordering::Relaxed);
    }
}

/// Sleeps until `deadline` on the pacer, or for ever when there is none.
async fn sleep_opt(pacer: &Rc<Pacer>, deadline: Option<Nanos>) {
    match deadline {
        Some(d) => pacer.sleep_until(d).await,
        None => std::future::pending().await,
    }
}
