//! The mahjong mode as the engine runs it: tables placed whole on one worker (so the owner hands
//! its room number to the other three without crossing threads), and phases in lockstep — each
//! phase completes for every player on every worker before the next opens: login, connect, form
//! tables, play (every owner sends `START` at once), log out. The engine's shutdown (the `-d`
//! limit or a signal) sends every player straight to logging out; the engine waits for that,
//! within the grace the mode gives it, then the session is reported.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{watch, Barrier};

use super::arrivals::Arrivals;
use super::phase::{Phase, PhaseBoard, SessionGauges};
use super::player::{Player, StageClock, Table, WorkerCtx};
use crate::engine::{
    self, Gauges, Kept, Mode, ProgressMode, Salvage, Settings, Worker, WorkerContext,
};
use crate::error::Error;
use crate::net::preflight::{preflight_blocking, Probe};
use crate::net::stream::Endpoint;
use crate::net::tls::Alpn;
use crate::plan::{BotKind, MahjongPlan, Scheme};
use crate::stats;
use crate::stats::format::format_time_us;
pub use crate::stats::mahjong::RunResult;
use crate::stats::mahjong::{Interval, Players, Totals};
use crate::stats::requests::writer::{LogFile, Rows};
use crate::stats::sink::Sink;
use crate::stats::timeline::IntervalClock;
use crate::sys;
use crate::timing::clock;
use crate::timing::pacer::Pacing;
use crate::timing::stages::Profile;

/// What the main thread and the workers share.
struct Shared {
    plan: Arc<MahjongPlan>,
    endpoint: Endpoint,
    ws_url: String,
    host: String,
    /// Every worker meets here before the next phase opens.
    barrier: Barrier,
    /// ... and again once each read [`Shared::idle_workers`], so that all read the same count.
    agreed: Barrier,
    /// Workers none of whose tables can play any more (every one broken).
    idle_workers: AtomicUsize,
}

/// What the pre-flight check of a session's server is told: its TLS settings, the connect
/// timeout, HTTP/1.1 (socket.io's upgrade) and the source addresses (also `--vs` sessions,
/// checked before round 1).
pub fn probe(plan: &MahjongPlan) -> Probe<'_> {
    Probe {
        target: &plan.server,
        insecure: plan.options.insecure,
        cacert: plan.options.cacert.as_deref(),
        timeout: plan.connect_timeout,
        alpn: Alpn::Http1,
        bind: &plan.options.bind,
        quic: None,
    }
}

/// What a caller running several sessions at once (the capacity search's steps of tables)
/// needs of each: its players' names after the others', a stop, and the recorders to read.
#[derive(Default, Clone)]
pub struct Hooks {
    /// Player names count from here (`tsumo{first_name + index}`).
    pub first_name: usize,
    /// Set: the session ends as at its `-d` limit (every player logs out).
    pub stop: Option<Arc<AtomicBool>>,
    /// Each worker's recorder, pushed here as the workers are built, for reads while it runs.
    pub taps: Option<Arc<Mutex<Vec<Kept<stats::mahjong::Recorder>>>>>,
    /// The open files the whole process needs, when more than this session's players.
    pub open_files_for: Option<usize>,
}

/// Runs the session to the end (every player logged out), the `-d` limit, or a signal.
pub fn run(plan: &MahjongPlan) -> Result<RunResult, Error> {
    run_with(plan, Hooks::default())
}

/// [`run`], with the [`Hooks`] of a session among others.
pub fn run_with(plan: &MahjongPlan, hooks: Hooks) -> Result<RunResult, Error> {
    // Each player holds one socket at a time (WebSocket, or login/logout).
    sys::check_open_files(
        hooks.open_files_for.unwrap_or(plan.players),
        plan.options.threads,
    )?;
    let mut mode = MahjongMode::prepare(plan)?;
    mode.settings.stop = hooks.stop.clone();
    mode.hooks = hooks;
    let run = engine::run(&mut mode);
    // The workers ended (their rows handed over): the log's record, also when the run failed.
    let requests_log = mode.log.take().map(LogFile::finish);
    let run = run?;
    let mut record = run.recorder;
    let wind_down = &run.wind_down;
    if !wind_down.abandoned.is_empty() {
        let cut = match (wind_down.cut_to, wind_down.signals.last()) {
            (Some(_), Some(name)) => format!(" (cut short by a second {name})"),
            _ => String::new(),
        };
        record.error(
            &crate::stats::mahjong::ErrorKind::NotDoneByTheEnd,
            format!(
                "some players had not logged out {} after the end{cut}; those still logged in \
                 are listed as left on the server",
                engine::seconds(wind_down.waited)
            ),
        );
    }
    Ok(RunResult {
        plan: plan.clone(),
        elapsed: run.finished,
        interrupted: run.ended_by.is_signal(),
        ended_by: run.ended_by,
        timed_out: run.ended_by == engine::EndReason::Duration,
        signals_in_logout: run
            .wind_down
            .signals
            .iter()
            .map(|name| name.to_string())
            .collect(),
        record,
        cpu_seconds: run.usage.cpu_seconds,
        peak_rss_bytes: run.usage.peak_rss_bytes,
        server: run.server,
        start: run.start,
        requests_log,
    })
}

/// The main thread's side of a session.
pub struct MahjongMode {
    settings: Settings,
    shared: Arc<Shared>,
    hooks: Hooks,
    /// `--stages`: the watch on a server gone mid-profile, which ends the session.
    gone: Option<std::cell::RefCell<super::gone::GoneWatch>>,
    /// The draw over think the progress line shows (µs; `u64::MAX` before the first draw):
    /// the worst of the last second that had draws.
    lag_shown: AtomicU64,
    /// `--requests`: the log the workers' rows go to.
    log: Option<LogFile>,
}

impl MahjongMode {
    /// Checks the server answers, fixes the URLs every player uses, and builds the shanten
    /// player's tables before the start gate.
    pub fn prepare(plan: &MahjongPlan) -> Result<MahjongMode, Error> {
        let server = &plan.server;
        let endpoint = preflight_blocking(probe(plan))?;
        let addr = endpoint.addr;
        if plan.bot == BotKind::Shanten {
            // Now, before the start gate: built at the first decision, inside the run, the
            // tables' 0.2 s read as the server's deal overshoot and as tsumo's reply lateness.
            super::hand::shanten::warm_up();
        }
        let ws_scheme = match server.scheme {
            Scheme::Http => "ws",
            Scheme::Https => "wss",
        };
        let host = server.host_header();
        let log = match &plan.requests {
            Some(out) => Some(crate::stats::requests::open(out, &plan.options.part)?),
            None => None,
        };
        Ok(MahjongMode {
            log,
            settings: Settings {
                duration: plan.options.duration,
                // Every player logs out, also after a signal, within --logout-timeout and its
                // overtime (a login in flight gets SHUTDOWN_GRACE first); wait for that, but not
                // for ever.
                grace: plan.logout_timeout
                    + super::player::logout_overtime(plan.logout_timeout)
                    + super::player::SHUTDOWN_GRACE
                    + Duration::from_secs(5),
                // The logouts' own cut, and a second for the workers to hand back their records.
                hurry: super::player::SECOND_SIGNAL_GRACE + Duration::from_secs(1),
                winding_down: "the players log out",
                progress: ProgressMode::choose(plan.options.progress, plan.options.quiet),
                server_pids: plan.options.server_pids.clone(),
                start_at: plan.options.part.start_at,
                pacing: Pacing::THINK,
                stop: None,
            },
            shared: Arc::new(Shared {
                plan: Arc::new(plan.clone()),
                endpoint,
                ws_url: format!(
                    "{ws_scheme}://{host}{}/socket.io/?EIO=4&transport=websocket",
                    server.path
                ),
                host,
                barrier: Barrier::new(plan.options.threads),
                agreed: Barrier::new(plan.options.threads),
                idle_workers: AtomicUsize::new(0),
            }),
            hooks: Hooks::default(),
            gone: (!plan.stages.is_empty())
                .then(|| RefCell::new(super::gone::GoneWatch::new(addr, plan.connect_timeout))),
            lag_shown: AtomicU64::new(u64::MAX),
        })
    }
}

impl Mode for MahjongMode {
    type Worker = MahjongWorker;

    fn settings(&self) -> &Settings {
        &self.settings
    }

    fn workers(&mut self) -> Result<Vec<MahjongWorker>, Error> {
        let plan = &self.shared.plan;
        let mut first_player = 0;
        Ok((0..plan.options.threads)
            .map(|index| {
                let tables = plan.tables_for_thread(index);
                let recorded = Kept::default();
                if let Some(taps) = &self.hooks.taps {
                    taps.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(recorded.clone());
                }
                let worker = MahjongWorker {
                    index,
                    shared: Arc::clone(&self.shared),
                    first_player,
                    first_name: self.hooks.first_name,
                    tables,
                    recorded,
                    signed_in: Arc::default(),
                    log: self.log.as_ref().map(LogFile::rows),
                };
                first_player += tables * plan.seats;
                worker
            })
            .collect())
    }

    fn progress_line(
        &self,
        elapsed: Duration,
        gauges: &[Arc<SessionGauges>],
        per_second: f64,
    ) -> String {
        let sum = |field: fn(&SessionGauges) -> &AtomicU64| -> u64 {
            gauges
                .iter()
                .map(|l| field(l).load(Ordering::Relaxed))
                .sum()
        };
        format!(
            "[{:>6.1}s] {}{} logged in, {} connected, {} playing, {} games done, {:.0} msg/s, {} errors",
            elapsed.as_secs_f64(),
            self.lag(gauges),
            sum(|l| &l.logged_in),
            sum(|l| &l.connected),
            sum(|l| &l.playing),
            sum(|l| &l.games_completed),
            per_second,
            sum(|l| &l.errors),
        )
    }

    fn server_gone(&self, gauges: &[Arc<SessionGauges>]) -> bool {
        self.gone
            .as_ref()
            .is_some_and(|gone| gone.borrow_mut().tick(gauges))
    }
}

impl MahjongMode {
    /// The progress line's lead ([`lag_lead`]): the worst draw over think of the last second
    /// that had own draws.
    fn lag(&self, gauges: &[Arc<SessionGauges>]) -> String {
        let draws: u64 = gauges
            .iter()
            .map(|l| l.draws.swap(0, Ordering::Relaxed))
            .sum();
        if draws > 0 {
            let worst = gauges
                .iter()
                .map(|l| l.draw_over_think_max_us.swap(0, Ordering::Relaxed))
                .max()
                .unwrap_or(0);
            self.lag_shown.store(worst, Ordering::Relaxed);
        }
        let shown = Some(self.lag_shown.load(Ordering::Relaxed)).filter(|&w| w != u64::MAX);
        lag_lead(self.shared.plan.think, shown)
    }
}

/// A progress line's lead: `draw over think 12.0ms (worst of the last draws); ` — the lag a
/// player feels, `worst_us` the worst of the last draws (`None`: no draw yet); nothing while
/// `think` is under the server's step minimum (the draws are not timed then). A session's
/// line and a search's over players lead with it alike.
pub(crate) fn lag_lead(think: Duration, worst_us: Option<u64>) -> String {
    if (think.as_nanos() as u64) < super::player::STEP_MINIMUM {
        return String::new();
    }
    match worst_us {
        None => "draw over think - (no draw yet); ".to_string(),
        Some(worst) => format!(
            "draw over think {} (worst of the last draws); ",
            format_time_us(worst as f64)
        ),
    }
}

impl Gauges for SessionGauges {
    fn completed(&self) -> u64 {
        self.messages.load(Ordering::Relaxed)
    }
}

impl engine::Recorder for stats::mahjong::Recorder {
    fn merge(&mut self, other: stats::mahjong::Recorder) {
        stats::mahjong::Recorder::merge(self, &other);
    }
}

/// One worker thread: its tables' players and the phase coordinator.
pub struct MahjongWorker {
    /// Which worker it is (0-based): its share of a `--stages` profile.
    index: usize,
    shared: Arc<Shared>,
    first_player: usize,
    /// Player names count from here ([`Hooks::first_name`]).
    first_name: usize,
    tables: usize,
    /// What the players record, where the main thread finds it if the thread never ends.
    recorded: Kept<stats::mahjong::Recorder>,
    /// The players holding a session on the server now.
    signed_in: Arc<Mutex<BTreeSet<usize>>>,
    /// `--requests`: this worker's rows.
    log: Option<Rows>,
}

impl Worker for MahjongWorker {
    type Gauges = SessionGauges;
    type Recorder = stats::mahjong::Recorder;

    /// What the players had recorded, and every player still holding a session listed as
    /// left on the server (a failed logout: the run then fails and names them).
    fn salvage(&self) -> Salvage<stats::mahjong::Recorder> {
        let recorded = self.recorded.clone();
        let signed_in = Arc::clone(&self.signed_in);
        let first_name = self.first_name;
        Some(Box::new(move || {
            let mut record = recorded.try_take().unwrap_or_default();
            let still = signed_in.lock().unwrap_or_else(PoisonError::into_inner);
            for &index in still.iter() {
                record.phase("logout").failure();
                record
                    .left_on_server
                    .push(super::player::name(first_name + index));
            }
            Some(record)
        }))
    }

    async fn run(
        self,
        ctx: WorkerContext<SessionGauges>,
    ) -> Result<stats::mahjong::Recorder, Error> {
        let MahjongWorker {
            index: worker_index,
            shared,
            first_player,
            first_name,
            tables,
            recorded,
            signed_in,
            log,
        } = self;
        // Players log in on their own ramp; the common start is only for the record (and the
        // intervals).
        let t0 = ctx.start();
        let log = super::player::log::started(log, t0);
        let intervals = Rc::new(RefCell::new(Intervals {
            clock: IntervalClock::new(t0, shared.plan.options.interval),
            index: 0,
            was: Totals::default(),
            sink: crate::stats::live::sink::<stats::mahjong::live::Data>(),
        }));
        let ticker = tokio::task::spawn_local(tick(
            Rc::clone(&intervals),
            recorded.clone(),
            Arc::clone(&ctx.gauges),
        ));
        let shutdown = ctx.shutdown();
        let (phase_tx, phase_rx) = watch::channel(Phase::Idle);
        let seats = shared.plan.seats;
        let board = PhaseBoard::new(tables * seats);
        let player_ctx = Rc::new(WorkerCtx {
            plan: Arc::clone(&shared.plan),
            endpoint: shared.endpoint.clone(),
            ws_url: shared.ws_url.clone(),
            host: shared.host.clone(),
            recorder: recorded,
            signed_in,
            first_name,
            phases: phase_rx,
            board: Rc::clone(&board),
            shutdown: shutdown.clone(),
            hurry: ctx.hurry(),
            gauges: Arc::clone(&ctx.gauges),
            logouts: tokio::sync::Semaphore::new(super::player::LOGOUTS_AT_ONCE),
            pacer: Rc::clone(&ctx.pacer),
            stages: (!shared.plan.stages.is_empty()).then(|| StageClock {
                t0,
                stages: shared.plan.stages.clone(),
            }),
            log,
        });
        if !shared.plan.stages.is_empty() {
            // Over shards, each worker is one lane of every shard's workers: shard I's lanes
            // take the tables `t mod N == I` of the whole profile's level.
            let shard = shared.plan.options.part.shard;
            let arrivals = Arrivals {
                profile: Profile::new(&shared.plan.stages),
                lane: shard.global(worker_index),
                lanes: shared.plan.options.threads * shard.count.max(1),
                seats,
            };
            return Ok(staged(arrivals, &player_ctx, t0, shutdown, ticker, &intervals).await);
        }
        let mut players = Vec::with_capacity(tables * seats);
        let mut own_tables = Vec::with_capacity(tables);
        let shard = shared.plan.options.part.shard;
        for table_index in 0..tables {
            let table = Rc::new(Table::default());
            own_tables.push(Rc::clone(&table));
            // A shard's tables keep the whole session's numbers (names, ramp): interleaved.
            let global_table = shard.global(first_player / seats + table_index);
            for seat in 0..seats {
                let index = global_table * seats + seat;
                let slot = first_player + table_index * seats + seat;
                let player = Player::new(
                    Rc::clone(&player_ctx),
                    index,
                    slot,
                    Rc::clone(&table),
                    seat == 0,
                );
                players.push(tokio::task::spawn_local(player.run()));
            }
        }
        coordinate(&shared, &board, &own_tables, &phase_tx, shutdown).await;
        for player in players {
            let _ = player.await;
        }
        ticker.abort();
        intervals
            .borrow_mut()
            .close(&player_ctx.recorder, &player_ctx.gauges);
        let recorder = player_ctx.recorder.take();
        Ok(recorder)
    }
}

/// A worker's session under `--stages`: players arrive and leave as the profile says, until
/// its end or shutdown; then each logs out, and the record is handed back.
async fn staged(
    arrivals: Arrivals,
    ctx: &Rc<WorkerCtx>,
    t0: clock::Nanos,
    shutdown: watch::Receiver<bool>,
    ticker: tokio::task::JoinHandle<()>,
    intervals: &RefCell<Intervals>,
) -> stats::mahjong::Recorder {
    let players = arrivals.run(ctx, t0, shutdown).await;
    for player in players {
        let _ = player.await;
    }
    ticker.abort();
    intervals.borrow_mut().close(&ctx.recorder, &ctx.gauges);
    ctx.recorder.take()
}

/// One worker's intervals: the one being recorded, and the totals it began with.
struct Intervals {
    clock: IntervalClock,
    index: u64,
    was: Totals,
    /// Where each closed interval is handed over too (`--dashboard`'s live state).
    sink: Option<Arc<dyn Sink<Interval>>>,
}

impl Intervals {
    /// Closes the current interval: what was counted since it began, and the players now.
    fn close(&mut self, recorded: &Kept<stats::mahjong::Recorder>, gauges: &SessionGauges) {
        let players = Players {
            logged_in: gauges.logged_in.load(Ordering::Relaxed),
            connected: gauges.connected.load(Ordering::Relaxed),
            playing: gauges.playing.load(Ordering::Relaxed),
        };
        let mut record = recorded.borrow_mut();
        let now = record.totals();
        let interval = now.since(&self.was, players);
        record.timeline.length = Some(self.clock.length);
        if let Some(sink) = &self.sink {
            sink.closed(self.index, &interval);
        }
        record
            .timeline
            .intervals
            .entry(self.index)
            .or_default()
            .add(&interval);
        self.was = now;
    }
}

/// Closes each interval at its end (a worker's timer, off the players' paths).
async fn tick(
    intervals: Rc<RefCell<Intervals>>,
    recorded: Kept<stats::mahjong::Recorder>,
    gauges: Arc<SessionGauges>,
) {
    loop {
        let ends_at = {
            let intervals = intervals.borrow();
            intervals.clock.end_of(intervals.index)
        };
        tokio::time::sleep(Duration::from_nanos(ends_at.saturating_sub(clock::now()))).await;
        let mut intervals = intervals.borrow_mut();
        intervals.close(&recorded, &gauges);
        // A tick later than a whole interval folds the one it missed into this one.
        intervals.index = (intervals.index + 1).max(intervals.clock.index(clock::now()));
    }
}

/// Opens each phase once every local player finished the previous one and every other worker
/// got there too (the global barrier). Once no table on any worker can play any more (every one
/// broken: its players could not log in or connect, or lost their sockets), the games left are
/// skipped and the players log out: a capacity search's tables play games without a bound, and
/// phases that nobody plays would follow each other as fast as the CPU goes. On shutdown the
/// players log out by themselves; this then only waits for them.
async fn coordinate(
    shared: &Shared,
    board: &PhaseBoard,
    tables: &[Rc<Table>],
    phase_tx: &watch::Sender<Phase>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut idle = false;
    for phase in Phase::sequence(&shared.plan) {
        board.open(phase);
        let _ = phase_tx.send(phase);
        loop {
            if board.all_done() || *shutdown.borrow_and_update() {
                break;
            }
            tokio::select! {
                _ = board.wake.notified() => {}
                _ = shutdown.changed() => {}
            }
        }
        if *shutdown.borrow() || phase == Phase::Logout {
            break;
        }
        // A broken table stays broken: counted once, before the barrier.
        if !idle && tables.iter().all(|t| t.is_broken()) {
            idle = true;
            shared.idle_workers.fetch_add(1, Ordering::SeqCst);
        }
        tokio::select! {
            _ = shared.barrier.wait() => {}
            _ = shutdown.changed() => break,
        }
        // Read between the two barriers: no worker counts itself idle in between, so every
        // worker reads the same count and takes the same way.
        let nobody_plays =
            shared.idle_workers.load(Ordering::SeqCst) >= shared.plan.options.threads;
        tokio::select! {
            _ = shared.agreed.wait() => {}
            _ = shutdown.changed() => break,
        }
        if nobody_plays {
            board.open(Phase::Logout);
            let _ = phase_tx.send(Phase::Logout);
            break;
        }
    }
    while !board.all_retired() {
        board.wake.notified().await;
    }
}
