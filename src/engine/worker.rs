//! The worker threads: each runs one [`Worker`] on its own current-thread tokio runtime, with its
//! own `LocalSet` and [`Pacer`] — share-nothing, like wrk's threads — and hands its recorder back
//! over a channel when it ends. The main thread joins them with a bound that signals may
//! shorten but never cut to nothing, and takes what a worker that never ended had recorded.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch, Notify};
use tokio::task::LocalSet;

use super::gate::StartGate;
use super::signals::Signals;
use super::{seconds, Recorder, Salvage, WindDown, Worker};
use crate::error::Error;
use crate::sys::usage::ThreadUsage;
use crate::timing::clock::Nanos;
use crate::timing::pacer::{Pacer, Pacing};

/// What a worker gets from the engine.
pub struct WorkerContext<L> {
    /// This worker's index, 0-based.
    pub index: usize,
    /// This worker's gauges (the supervisor reads them while it runs).
    pub gauges: Arc<L>,
    /// This worker's sub-millisecond timer, already driven.
    pub pacer: Rc<Pacer>,
    shutdown: watch::Receiver<bool>,
    hurry: watch::Receiver<bool>,
    gate: Arc<StartGate>,
    control: Arc<Control>,
    /// The thread's usage when it passed the gate: the run's share is counted from there.
    at_start: Rc<Cell<Option<ThreadUsage>>>,
}

impl<L> WorkerContext<L> {
    /// Reports this worker ready and waits for the common start; returns the start time.
    /// (Blocks the thread: call it once everything of the worker's own is set up.)
    pub fn start(&self) -> Nanos {
        let t0 = self.gate.pass(self.index);
        self.at_start.set(Some(ThreadUsage::now()));
        t0
    }

    /// The one shutdown signal: `true` once the run is over.
    pub fn shutdown(&self) -> watch::Receiver<bool> {
        self.shutdown.clone()
    }

    /// `true` once a second signal cut the wind-down short: what is still under way after the
    /// shutdown (a mahjong player's logout) must end within the mode's short grace.
    pub fn hurry(&self) -> watch::Receiver<bool> {
        self.hurry.clone()
    }

    /// Ends the whole run now (a script error): every worker gets the shutdown.
    pub fn end_run(&self) {
        self.control.end_requested.store(true, Ordering::SeqCst);
        self.control.wake.notify_one();
    }
}

/// What the workers tell the supervisor.
#[derive(Default)]
pub(super) struct Control {
    pub finished: AtomicUsize,
    pub end_requested: AtomicBool,
    pub wake: Notify,
}

struct Ended<R> {
    index: usize,
    result: Result<R, Error>,
    usage: ThreadUsage,
}

/// The running workers.
pub(super) struct Started<W: Worker> {
    pub gate: Arc<StartGate>,
    pub control: Arc<Control>,
    pub gauges: Vec<Arc<W::Gauges>>,
    shutdown: watch::Sender<bool>,
    hurry: watch::Sender<bool>,
    ended: mpsc::UnboundedReceiver<Ended<W::Recorder>>,
    /// Per worker: how to take what it recorded if it never ends.
    salvage: Vec<Salvage<W::Recorder>>,
}

/// The workers' outcome once joined.
pub(super) struct Joined<R> {
    pub recorder: R,
    pub threads: Vec<ThreadUsage>,
    pub wind_down: WindDown,
    /// The first error a worker failed with (the run fails with it).
    pub error: Option<Error>,
}

/// How the join waits: at most `grace` after the shutdown, or `hurry` after a second signal.
pub(super) struct JoinLimits {
    pub grace: Duration,
    pub hurry: Duration,
    /// What the workers do meanwhile, for the line a signal gets ("the players log out").
    pub winding_down: &'static str,
    /// The run was ended by a signal: the next one is the second.
    pub ended_by_signal: bool,
}

/// Starts one thread per worker.
pub(super) fn start_all<W: Worker>(workers: Vec<W>, pacing: Pacing) -> Result<Started<W>, Error> {
    let gate = Arc::new(StartGate::new(workers.len()));
    let control = Arc::new(Control::default());
    let (shutdown, shutdown_rx) = watch::channel(false);
    let (hurry, hurry_rx) = watch::channel(false);
    let (ended_tx, ended) = mpsc::unbounded_channel();
    let mut gauges = Vec::with_capacity(workers.len());
    let mut salvage = Vec::with_capacity(workers.len());
    for (index, worker) in workers.into_iter().enumerate() {
        let counters = Arc::new(W::Gauges::default());
        gauges.push(Arc::clone(&counters));
        salvage.push(worker.salvage());
        let worker_gate = Arc::clone(&gate);
        let worker_control = Arc::clone(&control);
        let channels = (shutdown_rx.clone(), hurry_rx.clone());
        let ended_tx = ended_tx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("tsumo-worker-{index}"))
            .spawn(move || {
                let (gate, control) = (worker_gate, worker_control);
                let at_start = Rc::new(Cell::new(None));
                let result = run_thread(
                    worker,
                    (index, pacing),
                    counters,
                    (&gate, &control),
                    channels,
                    Rc::clone(&at_start),
                );
                gate.leave(index);
                let now = ThreadUsage::now();
                let usage = at_start.get().map_or(now, |start| now.since(start));
                let _ = ended_tx.send(Ended {
                    index,
                    result,
                    usage,
                });
                control.finished.fetch_add(1, Ordering::SeqCst);
                control.wake.notify_one();
            });
        if let Err(e) = spawned {
            // The workers already started see the shutdown as soon as they pass the gate.
            let _ = shutdown.send(true);
            gate.open_at_once();
            return Err(Error::Thread(e.to_string()));
        }
    }
    Ok(Started {
        gate,
        control,
        gauges,
        shutdown,
        hurry,
        ended,
        salvage,
    })
}

fn run_thread<W: Worker>(
    worker: W,
    (index, pacing): (usize, Pacing),
    gauges: Arc<W::Gauges>,
    (gate, control): (&Arc<StartGate>, &Arc<Control>),
    (shutdown, hurry): (watch::Receiver<bool>, watch::Receiver<bool>),
    at_start: Rc<Cell<Option<ThreadUsage>>>,
) -> Result<W::Recorder, Error> {
    let runtime = thread_runtime()?;
    let local = LocalSet::new();
    let result = local.block_on(&runtime, async {
        let pacer =
            Pacer::new(pacing).map_err(|e| Error::Thread(format!("cannot create timerfd: {e}")))?;
        tokio::task::spawn_local(Rc::clone(&pacer).drive());
        let ctx = WorkerContext {
            index,
            gauges,
            pacer,
            shutdown,
            hurry,
            gate: Arc::clone(gate),
            control: Arc::clone(control),
            at_start,
        };
        worker.run(ctx).await
    });
    // Dropping the LocalSet cancels the worker's remaining tasks; they may touch the runtime.
    let _guard = runtime.enter();
    drop(local);
    result
}

impl<W: Worker> Started<W> {
    /// Sends the one shutdown to every worker.
    pub fn shut_down(&self) {
        let _ = self.shutdown.send(true);
    }

    /// Abandons the run before it started.
    pub fn abort(&self) {
        self.shut_down();
        self.gate.open_at_once();
    }

    /// Shuts every worker down and waits for them, at most `limits.grace`. A signal meanwhile
    /// never drops what the workers counted: the first lets them go on, a second (counting the
    /// one that ended the run) cuts the wait to `limits.hurry` and tells them to hurry. A
    /// worker still running at the end is reported with what it had recorded, where it kept it.
    pub async fn join(mut self, limits: JoinLimits, mut signals: Signals) -> Joined<W::Recorder> {
        self.shut_down();
        let began = tokio::time::Instant::now();
        let workers = self.gauges.len();
        let mut recorders: Vec<Option<W::Recorder>> = (0..workers).map(|_| None).collect();
        let mut ended = vec![false; workers];
        let mut threads = vec![ThreadUsage::default(); workers];
        let mut error = None;
        let mut joined = 0;
        let mut wind_down = WindDown::default();
        let mut signals_seen = usize::from(limits.ended_by_signal);
        let give_up = tokio::time::sleep(limits.grace);
        tokio::pin!(give_up);
        // After a signal, a wind-down that takes a while says so once, and how to cut it.
        let mut remind = limits
            .ended_by_signal
            .then(|| Box::pin(tokio::time::sleep(REMIND_AFTER)));
        while joined < workers {
            tokio::select! {
                done = self.ended.recv() => {
                    let Some(done) = done else { break };
                    joined += 1;
                    ended[done.index] = true;
                    threads[done.index] = done.usage;
                    match done.result {
                        Ok(recorder) => recorders[done.index] = Some(recorder),
                        Err(e) => { error.get_or_insert(e); }
                    }
                }
                _ = &mut give_up => break,
                _ = async { remind.as_mut()?.await; Some(()) }, if remind.is_some() => {
                    remind = None;
                    let left = left_of(&give_up);
                    if wind_down.cut_to.is_none() && left > limits.hurry {
                        eprintln!(
                            "tsumo: waiting up to {} more while {}; another signal cuts that \
                             to {}",
                            seconds(left),
                            limits.winding_down,
                            seconds(limits.hurry)
                        );
                    }
                }
                name = signals.recv() => {
                    wind_down.signals.push(name);
                    signals_seen += 1;
                    let left = left_of(&give_up);
                    if signals_seen == 1 {
                        eprintln!(
                            "tsumo: {name}: waiting up to {} while {}; a second signal cuts \
                             that to {}",
                            seconds(left),
                            limits.winding_down,
                            seconds(limits.hurry.min(left))
                        );
                    } else if wind_down.cut_to.is_none() && left > limits.hurry {
                        let _ = self.hurry.send(true);
                        give_up.as_mut().reset(tokio::time::Instant::now() + limits.hurry);
                        wind_down.cut_to = Some(limits.hurry);
                        eprintln!(
                            "tsumo: {name} again: waiting at most {} more while {}",
                            seconds(limits.hurry),
                            limits.winding_down
                        );
                    }
                }
            }
        }
        wind_down.waited = began.elapsed();
        let mut recorder = W::Recorder::default();
        for worker_recorder in recorders.into_iter().flatten() {
            recorder.merge(worker_recorder);
        }
        for (index, salvage) in self.salvage.into_iter().enumerate() {
            if ended[index] {
                continue;
            }
            wind_down.abandoned.push(index);
            if let Some(kept) = salvage.and_then(|take| take()) {
                recorder.merge(kept);
                wind_down.kept += 1;
            }
        }
        Joined {
            recorder,
            threads,
            wind_down,
            error,
        }
    }
}

/// What is left of a wait.
fn left_of(wait: &tokio::time::Sleep) -> Duration {
    wait.deadline()
        .saturating_duration_since(tokio::time::Instant::now())
}

/// How long a wind-down after a signal may take before a line says what it waits for.
const REMIND_AFTER: Duration = Duration::from_secs(1);

/// The runtime of a worker thread: current-thread tokio, with the pacer's park hook (the timer is
/// pointed at the earliest waiter just before the thread sleeps), and no timer slack for the
/// calling thread — the kernel may otherwise delay its wake-ups by up to 50 µs.
pub fn thread_runtime() -> Result<tokio::runtime::Runtime, Error> {
    // SAFETY: prctl with an integer argument affects only this thread.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_park(crate::timing::pacer::before_park)
        .build()
        .map_err(|e| Error::Thread(e.to_string()))
}
