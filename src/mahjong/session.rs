//! Runs a mahjong session: worker threads (one current-thread runtime each, as in HTTP mode),
//! tables placed whole on one worker (so the owner hands its room number to the other three
//! without crossing threads), and phases in lockstep — each phase completes for every player on
//! every worker before the next opens: login, connect, form tables, play (every owner sends
//! `START` at once), log out. Shutdown (the `-d` limit or Ctrl-C) sends every player straight
//! to logging out; the run waits for that, bounded, then reports.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use tokio::sync::{watch, Barrier, Notify};
use tokio::task::LocalSet;

use super::phase::{Phase, PhaseBoard, SessionLive};
use super::player::{Player, Table, WorkerCtx};
use crate::engine::progress::ProgressMode;
use crate::engine::start_sampler;
use crate::engine::worker::thread_runtime;
use crate::error::Error;
use crate::net::preflight::preflight;
use crate::net::stream::Endpoint;
use crate::plan::{MahjongPlan, Scheme};
use crate::stats::mahjong::MahjongRecorder;
pub use crate::stats::mahjong::MahjongResult;
use crate::sys;
use crate::sys::procstat::Sampler;
use crate::timing::clock::{self, Nanos};
use crate::timing::pacer::Pacer;

/// What the main thread and the workers share.
struct Shared {
    plan: Arc<MahjongPlan>,
    endpoint: Endpoint,
    ws_url: String,
    host: String,
    barrier: Barrier,
    live: Arc<SessionLive>,
}

/// Runs the session to the end (every player logged out), the `-d` limit, or Ctrl-C.
pub fn run(plan: &MahjongPlan) -> Result<MahjongResult, Error> {
    // Each player holds one socket at a time (WebSocket, or login/logout).
    sys::check_open_files(plan.players, plan.threads)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Thread(e.to_string()))?;
    let server = &plan.server;
    let endpoint = runtime.block_on(preflight(
        server,
        plan.insecure,
        plan.cacert.as_deref(),
        plan.connect_timeout,
    ))?;
    let ws_scheme = match server.scheme {
        Scheme::Http => "ws",
        Scheme::Https => "wss",
    };
    let host = server.host_header();
    let shared = Arc::new(Shared {
        plan: Arc::new(plan.clone()),
        endpoint,
        ws_url: format!(
            "{ws_scheme}://{host}{}/socket.io/?EIO=4&transport=websocket",
            server.path
        ),
        host,
        barrier: Barrier::new(plan.threads),
        live: Arc::new(SessionLive::default()),
    });

    let sampler = start_sampler(&plan.server_pids)?;
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let (done_tx, done_rx) = mpsc::channel::<Result<MahjongRecorder, Error>>();
    let finished = Arc::new(Notify::new());
    let mut first_player = 0;
    let t0 = clock::now();
    for index in 0..plan.threads {
        let tables = plan.tables_for_thread(index);
        let shared = Arc::clone(&shared);
        let shutdown = shutdown_rx.clone();
        let done_tx = done_tx.clone();
        let finished = Arc::clone(&finished);
        let first = first_player;
        first_player += tables * 4;
        std::thread::Builder::new()
            .name(format!("tsumo-mahjong-{index}"))
            .spawn(move || {
                let result = worker(&shared, first, tables, shutdown);
                let _ = done_tx.send(result);
                finished.notify_one();
            })
            .map_err(|e| Error::Thread(e.to_string()))?;
    }
    drop(done_tx);

    let progress = ProgressMode::choose(plan.progress, plan.quiet);
    let (interrupted, timed_out) =
        runtime.block_on(supervise(plan, t0, &shared.live, &finished, progress));
    let _ = shutdown_tx.send(true);

    // Every player logs out, also after Ctrl-C; wait for that, but not for ever.
    let bound = plan.connect_timeout * (plan.retries + 1) + Duration::from_secs(5);
    let give_up = std::time::Instant::now() + bound;
    let mut record = MahjongRecorder::default();
    for _ in 0..plan.threads {
        let left = give_up.saturating_duration_since(std::time::Instant::now());
        match done_rx.recv_timeout(left) {
            Ok(Ok(worker_record)) => record.merge(&worker_record),
            Ok(Err(e)) => return Err(e),
            Err(_) => {
                record.protocol_error(format!(
                    "some players had not logged out {}s after the end; reported without them",
                    bound.as_secs()
                ));
                break;
            }
        }
    }
    progress.finish();
    let server = sampler.map(Sampler::stop);
    let elapsed = Duration::from_nanos(clock::now() - t0);
    let (cpu_seconds, peak_rss_bytes) = own_usage();
    Ok(MahjongResult {
        plan: plan.clone(),
        elapsed,
        interrupted,
        timed_out,
        record,
        cpu_seconds,
        peak_rss_bytes,
        server,
    })
}

/// Waits for the workers to finish, the `-d` limit, or Ctrl-C; shows progress once a second.
/// Returns (interrupted, timed out).
async fn supervise(
    plan: &MahjongPlan,
    t0: Nanos,
    live: &SessionLive,
    finished: &Notify,
    progress: ProgressMode,
) -> (bool, bool) {
    let deadline = tokio::time::Instant::now() + plan.duration;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut workers_left = plan.threads;
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.tick().await;
    let mut last_messages = 0;
    loop {
        tokio::select! {
            _ = &mut ctrl_c => return (true, false),
            _ = tokio::time::sleep_until(deadline) => return (false, true),
            _ = finished.notified() => {
                workers_left -= 1;
                if workers_left == 0 {
                    return (false, false);
                }
            }
            _ = ticker.tick() => {
                let messages = live.messages.load(Ordering::Relaxed);
                progress.show_line(&format!(
                    "[{:>6.1}s] {} logged in, {} connected, {} playing, {} games done, {} msg/s, {} errors",
                    Duration::from_nanos(clock::now() - t0).as_secs_f64(),
                    live.logged_in.load(Ordering::Relaxed),
                    live.connected.load(Ordering::Relaxed),
                    live.playing.load(Ordering::Relaxed),
                    live.games_completed.load(Ordering::Relaxed),
                    messages - last_messages,
                    live.errors.load(Ordering::Relaxed),
                ));
                last_messages = messages;
            }
        }
    }
}

/// One worker thread: its tables' players and the phase coordinator.
fn worker(
    shared: &Arc<Shared>,
    first_player: usize,
    tables: usize,
    shutdown: watch::Receiver<bool>,
) -> Result<MahjongRecorder, Error> {
    let runtime = thread_runtime()?;
    let local = LocalSet::new();
    let recorder = local.block_on(&runtime, async {
        let pacer =
            Pacer::new().map_err(|e| Error::Thread(format!("cannot create timerfd: {e}")))?;
        tokio::task::spawn_local(Rc::clone(&pacer).drive());
        let (phase_tx, phase_rx) = watch::channel(Phase::Idle);
        let board = PhaseBoard::new(tables * 4);
        let ctx = Rc::new(WorkerCtx {
            plan: Arc::clone(&shared.plan),
            endpoint: shared.endpoint.clone(),
            ws_url: shared.ws_url.clone(),
            host: shared.host.clone(),
            recorder: RefCell::new(MahjongRecorder::default()),
            pacer,
            phases: phase_rx,
            board: Rc::clone(&board),
            shutdown: shutdown.clone(),
            live: Arc::clone(&shared.live),
        });
        let mut players = Vec::with_capacity(tables * 4);
        for table_index in 0..tables {
            let table = Rc::new(Table::default());
            for seat in 0..4 {
                let index = first_player + table_index * 4 + seat;
                let player = Player::new(Rc::clone(&ctx), index, Rc::clone(&table), seat == 0);
                players.push(tokio::task::spawn_local(player.run()));
            }
        }
        coordinate(shared, &board, &phase_tx, shutdown).await;
        for player in players {
            let _ = player.await;
        }
        Ok::<_, Error>(ctx.recorder.take())
    })?;
    Ok(recorder)
}

/// Opens each phase once every local player finished the previous one and every other worker
/// got there too (the global barrier). On shutdown the players log out by themselves; this
/// then only waits for them.
async fn coordinate(
    shared: &Shared,
    board: &PhaseBoard,
    phase_tx: &watch::Sender<Phase>,
    mut shutdown: watch::Receiver<bool>,
) {
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
        if *shutdown.borrow() {
            break;
        }
        tokio::select! {
            _ = shared.barrier.wait() => {}
            _ = shutdown.changed() => break,
        }
    }
    while !board.all_retired() {
        board.wake.notified().await;
    }
}

/// tsumo's own CPU time (user + system, seconds) and peak RSS (bytes).
fn own_usage() -> (f64, u64) {
    // SAFETY: getrusage fills the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let cpu = if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0 {
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        secs(usage.ru_utime) + secs(usage.ru_stime)
    } else {
        0.0
    };
    // ru_maxrss is in KiB on Linux.
    (cpu, usage.ru_maxrss.max(0) as u64 * 1024)
}
