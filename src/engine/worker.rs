//! One worker thread: its own current-thread tokio runtime, its own pacer, its own connections and
//! its own Recorder — share-nothing, like wrk's threads. It connects its connections, waits at the
//! start gate for the common start time, runs until shutdown, and hands back its Recorder.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::{watch, Notify};
use tokio::task::LocalSet;

use super::progress::LiveCounters;
use crate::error::Error;
use crate::http::conn::{Connection, Requests, Shared};
use crate::net::http1::request::Batch;
use crate::net::stream::Endpoint;
use crate::script::{ScriptError, ThreadScript};
use crate::stats::Recorder;
use crate::timing::deadline::Watchdog;
use crate::timing::pacer::Pacer;
use crate::timing::schedule::Schedule;

/// What one worker is asked to do.
pub struct WorkerPlan {
    pub index: usize,
    /// Global index of this worker's first connection (schedules are phase-shifted by it).
    pub first_connection: usize,
    pub connections: usize,
    pub total_connections: usize,
    /// `None`: closed loop.
    pub rate: Option<u64>,
    pub endpoint: Endpoint,
    /// The request bytes sent every time; `None` when the script's `request()` makes them.
    pub static_batch: Option<Batch>,
    /// This worker's Lua state (moved into the thread), when the run has a script.
    pub script: Option<ThreadScript>,
    pub timeout: Duration,
    pub record_all: bool,
    pub live: Arc<LiveCounters>,
    pub control: Arc<RunControl>,
}

/// What a worker hands back.
pub struct WorkerOutcome {
    pub recorder: Recorder,
    /// The first error a script hook raised (the run then stopped).
    pub script_error: Option<ScriptError>,
}

/// Early ends decided by workers, watched by the main thread: a script's `thread:stop()` ends
/// one worker (the run ends when all have), a script error ends the run.
#[derive(Default)]
pub struct RunControl {
    pub stopped_workers: AtomicUsize,
    pub script_failed: AtomicBool,
    pub wake: Notify,
}

/// Synchronises the start: every worker connects, then all start their schedules at `t0`.
pub struct StartGate {
    barrier: Barrier,
    t0: AtomicU64,
}

impl StartGate {
    /// A gate for `workers` workers and the main thread.
    pub fn new(workers: usize) -> Arc<StartGate> {
        Arc::new(StartGate {
            barrier: Barrier::new(workers + 1),
            t0: AtomicU64::new(0),
        })
    }

    /// Main thread: waits for every worker to be connected, sets the start time, releases them.
    pub fn open(&self, t0: impl FnOnce() -> u64) -> u64 {
        self.barrier.wait();
        let t0 = t0();
        self.t0.store(t0, Ordering::SeqCst);
        self.barrier.wait();
        t0
    }

    /// Worker: reports ready and waits for the start time.
    fn pass(&self) -> u64 {
        self.barrier.wait();
        self.barrier.wait();
        self.t0.load(Ordering::SeqCst)
    }
}

/// The runtime of a worker thread (either mode): current-thread tokio, and no timer slack for
/// the calling thread — the kernel may otherwise delay its wake-ups by up to 50 µs, and a pacer
/// wants none.
pub fn thread_runtime() -> Result<tokio::runtime::Runtime, Error> {
    // SAFETY: prctl with an integer argument affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Thread(e.to_string()))
}

/// Starts a worker thread. It always passes the gate (even when it fails to start), so the main
/// thread never waits for ever.
pub fn spawn(
    plan: WorkerPlan,
    gate: Arc<StartGate>,
    shutdown: watch::Receiver<bool>,
) -> Result<JoinHandle<Result<WorkerOutcome, Error>>, Error> {
    std::thread::Builder::new()
        .name(format!("tsumo-worker-{}", plan.index))
        .spawn(move || run(plan, &gate, shutdown))
        .map_err(|e| Error::Thread(e.to_string()))
}

fn run(
    plan: WorkerPlan,
    gate: &StartGate,
    mut shutdown: watch::Receiver<bool>,
) -> Result<WorkerOutcome, Error> {
    let runtime = match thread_runtime() {
        Ok(rt) => rt,
        Err(e) => {
            gate.pass();
            return Err(e);
        }
    };
    let local = LocalSet::new();
    let pacer = match runtime.block_on(async { Pacer::new() }) {
        Ok(p) => p,
        Err(e) => {
            gate.pass();
            return Err(Error::Thread(format!("cannot create timerfd: {e}")));
        }
    };
    let hooks = plan
        .script
        .as_ref()
        .map(ThreadScript::hooks)
        .unwrap_or_default();
    let shared = Rc::new(Shared {
        endpoint: plan.endpoint.clone(),
        requests: match (plan.static_batch, &plan.script) {
            (Some(batch), _) => Requests::Static(Rc::new(batch)),
            (None, script) => Requests::Script {
                pipeline: script.as_ref().map_or(1, ThreadScript::pipeline),
            },
        },
        script: plan.script,
        hooks,
        stop: Cell::new(false),
        stop_wake: Notify::new(),
        script_error: RefCell::new(None),
        recorder: Default::default(),
        pacer: Rc::clone(&pacer),
        watchdog: Watchdog::new(plan.timeout),
        record_all: plan.record_all,
        live: plan.live,
    });

    // Connect first, so that connection set-up does not eat into the first interval.
    let streams = local.block_on(&runtime, async {
        let handles: Vec<_> = (0..plan.connections)
            .map(|_| {
                let shared = Rc::clone(&shared);
                tokio::task::spawn_local(async move {
                    tokio::time::timeout(plan.timeout, shared.connect())
                        .await
                        .ok()
                        .and_then(Result::ok)
                })
            })
            .collect();
        let mut streams = Vec::with_capacity(handles.len());
        for handle in handles {
            streams.push(handle.await.ok().flatten());
        }
        streams
    });

    let t0 = gate.pass();
    local.block_on(&runtime, async {
        tokio::task::spawn_local(Rc::clone(&pacer).drive());
        tokio::task::spawn_local(Rc::clone(&shared.watchdog).run());
        for (i, stream) in streams.into_iter().enumerate() {
            let schedule = plan.rate.map(|rate| Schedule {
                t0,
                index: (plan.first_connection + i) as u64,
                connections: plan.total_connections as u64,
                rate,
            });
            let conn = Connection::new(Rc::clone(&shared), schedule, stream);
            tokio::task::spawn_local(conn.run());
        }
        loop {
            if *shutdown.borrow_and_update() || shared.stop.get() {
                break;
            }
            tokio::select! {
                changed = shutdown.changed() => if changed.is_err() { break },
                _ = shared.stop_wake.notified() => {}
            }
        }
    });
    if shared.stop.get() {
        // Stopped early by the script: tell the main thread.
        let control = &plan.control;
        if shared.script_error.borrow().is_some() {
            control.script_failed.store(true, Ordering::SeqCst);
        }
        control.stopped_workers.fetch_add(1, Ordering::SeqCst);
        control.wake.notify_one();
    }
    // Dropping the LocalSet cancels every connection task (in-flight requests are not counted).
    {
        let _guard = runtime.enter();
        drop(local);
    }
    Ok(WorkerOutcome {
        recorder: shared.recorder.take(),
        script_error: shared.script_error.take(),
    })
}
