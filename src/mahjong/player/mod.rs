//! One bot player's whole session: log in, open the socket.io WebSocket, sit at a table, play
//! the games, log out — always log out, whatever happened (a session left behind lives 14 days
//! on the server).
//!
//! A player is one small task with one event loop: it always keeps reading its socket (pings,
//! game requests) while it waits for the next phase, for its table's room number, or for its
//! think time to pass. Phases are opened by the worker's coordinator (see `session`); the player
//! reports each phase done (or failed) and waits for the next. This module holds the player's
//! state and its run through the phases; the steps live by concern:
//!
//! - [`account`]: login, the WebSocket up to `HELLO` and closing it, and [`logout`] — the
//!   steps that are retried, through the one helper in [`retry`];
//! - [`table`]: forming a table (the owner's room, the others joining it);
//! - [`game`]: playing a game — `START`, each request answered after its think time, `END`;
//! - [`serve`]: the event loop under all of them, which serves the socket while the player
//!   waits for anything, and dispatches each frame;
//! - [`log`]: `--requests`, each timed reply's row.

mod account;
mod game;
pub(super) mod log;
mod logout;
mod retry;
mod serve;
mod staged;
mod table;

use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::bot::{AnyStrategy, Bot, StepKind};
use super::phase::{Phase, PhaseBoard, SessionGauges};
use crate::engine::Kept;
use crate::net::stream::Endpoint;
use crate::plan::MahjongPlan;
use crate::stats::mahjong::{ErrorKind, Recorder};
use crate::sys::rng::XorShift;
use crate::timing::clock::Nanos;
use crate::timing::pacer::Pacer;
use crate::ws::transport::WebSocket;
use game::PendingReply;
pub use game::STEP_MINIMUM;
pub(crate) use logout::{overtime as logout_overtime, SECOND_SIGNAL_GRACE};
pub(crate) use retry::SHUTDOWN_GRACE;
pub use staged::StageClock;
pub use table::Table;

/// What every player of one worker shares.
pub struct WorkerCtx {
    pub plan: std::sync::Arc<MahjongPlan>,
    pub endpoint: Endpoint,
    /// `ws://host:port<base>/socket.io/?EIO=4&transport=websocket` (or `wss://`).
    pub ws_url: String,
    /// `Host` header value for login and logout.
    pub host: String,
    /// Where the main thread can still read it if this worker's thread never ends.
    pub recorder: Kept<Recorder>,
    /// The players of this worker holding a session on the server (by index), for the main
    /// thread to list as left there if the thread never ends.
    pub signed_in: Arc<Mutex<BTreeSet<usize>>>,
    /// Player names count from here (a capacity search's later steps of tables).
    pub first_name: usize,
    pub phases: watch::Receiver<Phase>,
    pub board: Rc<PhaseBoard>,
    pub shutdown: watch::Receiver<bool>,
    /// A second signal: logouts under way must end within [`SECOND_SIGNAL_GRACE`].
    pub hurry: watch::Receiver<bool>,
    pub gauges: std::sync::Arc<SessionGauges>,
    /// Logouts in flight at once on this worker (at most [`LOGOUTS_AT_ONCE`]): at the end of a
    /// session every player logs out at the same moment, and a server or proxy flooded with
    /// thousands of connections at once drops some.
    pub logouts: tokio::sync::Semaphore,
    /// The worker's pacer: think times end on it, as HTTP sends do.
    pub pacer: Rc<Pacer>,
    /// `--stages`: the stage each instant falls in, for the per-stage record.
    pub stages: Option<StageClock>,
    /// `--requests`: the worker's rows, one per timed reply ([`log`]).
    pub log: log::Log,
}

/// Logouts one worker has in flight at once.
pub const LOGOUTS_AT_ONCE: usize = 32;

/// Player `index`'s name on the server.
pub fn name(index: usize) -> String {
    format!("tsumo{index}")
}

/// Why a player stopped waiting.
enum Interrupt {
    /// The run is over (duration end or Ctrl-C): log out now.
    Shutdown,
    /// The socket closed or failed.
    Disconnected,
}

pub struct Player {
    ctx: Rc<WorkerCtx>,
    /// The server, reached from this player's `--bind` source address (login, socket, logout).
    endpoint: Rc<Endpoint>,
    /// Global index (for the ramp and the name).
    index: usize,
    table: Rc<Table>,
    owner: bool,
    cookie: Option<String>,
    /// Its logins sent: one answered after its try gave up still made a session to end.
    sent_logins: Rc<logout::SentLogins>,
    ws: Option<WebSocket>,
    uid: Option<String>,
    /// Room state as this player last heard it.
    room: Option<String>,
    members: usize,
    /// A ROOM message arrived since the last create or join was sent.
    room_seen: bool,
    /// This player sat at a table that formed, once at least.
    seated: bool,
    /// When this player's `START` arrived in the current game.
    start_event_at: Option<Nanos>,
    playing: bool,
    /// `END` arrived: `Some(true)` with the record, `Some(false)` aborted.
    ended: Option<bool>,
    bot: Bot<AnyStrategy>,
    pending: Option<PendingReply>,
    /// Owner only: the last request's arrival and kind, for step intervals.
    last_request: Option<(Nanos, StepKind)>,
    /// Owner only: the server announced something (`say`) since the last request.
    said: bool,
    start_sent: Option<Nanos>,
    kaiju_at: Option<Nanos>,
    /// Deterministic jitter source, seeded by the index.
    rng: XorShift,
    /// `--stages`: when this player arrived, until its first `START` (its time to seat).
    arrived_at: Option<Nanos>,
    /// Replies logged or given up so far (`--requests`: the next one's number).
    replies: u64,
    /// The length of the last frame read (`--requests`: a reply's `bytes_in` is its request's).
    frame_in: u64,
}

impl Player {
    /// Player `index` of the whole session; `slot`, its number in this process, picks its
    /// `--bind` source address.
    pub fn new(
        ctx: Rc<WorkerCtx>,
        index: usize,
        slot: usize,
        table: Rc<Table>,
        owner: bool,
    ) -> Player {
        let bot = Bot::with_strategy(AnyStrategy::new(ctx.plan.bot));
        let source = crate::net::source::pick(&ctx.plan.options.bind, slot);
        Player {
            endpoint: Rc::new(ctx.endpoint.from_source(source)),
            ctx,
            index,
            table,
            owner,
            cookie: None,
            sent_logins: Rc::default(),
            ws: None,
            uid: None,
            room: None,
            members: 0,
            room_seen: false,
            seated: false,
            start_event_at: None,
            playing: false,
            ended: None,
            bot,
            pending: None,
            last_request: None,
            said: false,
            start_sent: None,
            kaiju_at: None,
            rng: XorShift::new(
                0x9E37_79B9_7F4A_7C15 ^ (index as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
            ),
            arrived_at: None,
            replies: 0,
            frame_in: 0,
        }
    }

    fn name(&self) -> String {
        name(self.ctx.first_name + self.index)
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
        self.give_up_pending();
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
        if self.cookie.is_some() && !self.logging_out() {
            self.ramp().await?;
            if !self.connect().await? {
                self.table.set_broken();
            }
        }
        self.report(Phase::Connect);

        for game in 0..plan.games {
            self.wait_phase(Phase::Form(game)).await?;
            if self.logging_out() {
                // No table of the session can play any more: the games left are skipped.
                break;
            }
            let formed = !self.table.is_broken() && self.form_table().await?;
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

    /// The coordinator opened the logout early (see `session::coordinate`).
    fn logging_out(&self) -> bool {
        *self.ctx.phases.borrow() == Phase::Logout
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

    /// Counts an error of `kind` (the same words for every player it happens to: the report
    /// groups by it); `what` is the full message, naming the player.
    fn note_error(&self, kind: ErrorKind, what: String) {
        self.ctx.recorder.borrow_mut().error(&kind, what);
        self.ctx.gauges.errors.fetch_add(1, Ordering::Relaxed);
    }
}
