//! The engine: one run, for every mode. It owns what every mode needs and nothing a mode does:
//! `-t` worker threads (each its own current-thread tokio runtime, `LocalSet` and [`Pacer`]),
//! the start gate (every worker ready, then one common start time, or `--start-at`'s instant),
//! one shutdown (the
//! duration, SIGINT, SIGTERM or SIGHUP, a worker ending the run, all work done, or the server
//! gone), the
//! supervisor's tick (the progress line and the per-second samples), a bounded join, the merge
//! of the workers' recorders, the `--server-pid` sampler, and tsumo's own CPU and peak memory.
//!
//! A mode plugs in through [`Mode`] (the main thread's side: build the workers, write the
//! progress line) and [`Worker`] (what one worker thread runs, and its [`Recorder`]); the HTTP
//! and mahjong modes are two implementations, and a new mode is one new module.
//!
//! [`Pacer`]: crate::timing::pacer::Pacer

pub mod gate;
mod kept;
pub mod progress;
pub mod signals;
mod start;
mod supervisor;
mod worker;

use std::future::Future;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::error::Error;
pub use crate::stats::end::EndReason;
use crate::stats::start::StartRecord;
use crate::sys::procstat::{Sampler, ServerSample, ServerUsage};
pub use crate::sys::usage::{OwnUsage, ThreadUsage};
use crate::timing::pacer::Pacing;
pub use gate::StartGate;
pub use kept::Kept;
pub use progress::ProgressMode;
pub use worker::{thread_runtime, WorkerContext};

/// What every mode tells the engine about its run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The run ends this long after the start (for a mahjong session: at the latest).
    pub duration: Duration,
    /// How long the workers may take to wind down after the shutdown (mahjong players log out)
    /// before the run is reported without them.
    pub grace: Duration,
    /// What a second signal cuts that wait to (never zero): the workers are told to hurry.
    pub hurry: Duration,
    /// What the workers do while they wind down, for the line a signal then gets: "the
    /// players log out".
    pub winding_down: &'static str,
    /// `--progress`, `--quiet`: how the progress line is shown.
    pub progress: ProgressMode,
    /// `--server-pid`: processes sampled once a second.
    pub server_pids: Vec<u32>,
    /// `--start-at`: the wall-clock instant (Unix ns) to start at, once every worker is ready.
    pub start_at: Option<u64>,
    /// How each worker's pacer waits: to the microsecond, or coalescing sends within a slack.
    pub pacing: Pacing,
    /// Set from outside to end the run at the next tick, as its duration would (the mahjong
    /// capacity search logs out a step's tables this way while the others play on).
    pub stop: Option<Arc<AtomicBool>>,
}

/// The gauges of one worker: counters it updates as it goes, which the supervisor reads once a
/// second from outside it (relaxed atomics).
pub trait Gauges: Default + Send + Sync + 'static {
    /// What the per-second samples count: completed requests, messages.
    fn completed(&self) -> u64;
}

/// What one worker records; the engine merges the workers' recorders once, at the end.
pub trait Recorder: Default + Send + 'static {
    fn merge(&mut self, other: Self);
}

/// What one worker thread runs. It is built on the main thread and moved onto its thread.
pub trait Worker: Send + 'static {
    type Gauges: Gauges;
    type Recorder: Recorder;

    /// Runs on the worker's thread, inside its `LocalSet`: sets up (connects), calls
    /// [`WorkerContext::start`] to wait for the common start, works until the shutdown (or its
    /// work is done), and hands back its recorder.
    fn run(
        self,
        ctx: WorkerContext<Self::Gauges>,
    ) -> impl Future<Output = Result<Self::Recorder, Error>>;

    /// Called on the main thread before the worker moves onto its thread: how to take what it
    /// recorded if its thread never ends (see [`Kept`]). By default such a worker's counts are
    /// lost.
    fn salvage(&self) -> Salvage<Self::Recorder> {
        None
    }
}

/// Takes what a worker that never ended had recorded (`None` inside: it could not be read).
pub type Salvage<R> = Option<Box<dyn FnOnce() -> Option<R> + Send>>;

/// How the workers wound down after the shutdown.
#[derive(Debug, Clone, Default)]
pub struct WindDown {
    /// From the shutdown to the end of the wait for the workers.
    pub waited: Duration,
    /// The signals caught meanwhile, in order.
    pub signals: Vec<&'static str>,
    /// A second signal (counting one that ended the run) cut the wait to this.
    pub cut_to: Option<Duration>,
    /// Workers (0-based) that had not ended by then: the run is reported without them, but for
    /// what they had recorded up to then (`kept` of them).
    pub abandoned: Vec<usize>,
    pub kept: usize,
}

/// `1s`, `2.5s`: a wait, as the lines about a wind-down give it.
pub fn seconds(wait: Duration) -> String {
    let s = wait.as_secs_f64();
    if (s - s.round()).abs() < 0.05 {
        format!("{s:.0}s")
    } else {
        format!("{s:.1}s")
    }
}

/// A mode as the main thread sees it.
pub trait Mode {
    type Worker: Worker;

    fn settings(&self) -> &Settings;

    /// Builds one worker per thread (main thread, before any traffic).
    fn workers(&mut self) -> Result<Vec<Self::Worker>, Error>;

    /// The progress line, once a second. `per_second`: the workers' completions per second.
    fn progress_line(
        &self,
        elapsed: Duration,
        gauges: &[Arc<<Self::Worker as Worker>::Gauges>],
        per_second: f64,
    ) -> String;

    /// Once a second, after the progress line, `elapsed` into the run: `true` ends the run
    /// now, its verdict settled before its duration (a capacity step broken or held beyond
    /// doubt). By default never.
    fn settled(
        &self,
        _elapsed: Duration,
        _gauges: &[Arc<<Self::Worker as Worker>::Gauges>],
    ) -> bool {
        false
    }

    /// Once a second, after [`Mode::settled`]: `true` ends the run now, its server gone (a
    /// `--stages` run's). By default never.
    fn server_gone(&self, _gauges: &[Arc<<Self::Worker as Worker>::Gauges>]) -> bool {
        false
    }
}

/// A finished run, as every mode gets it back.
pub struct Run<R> {
    /// The workers' recorders, merged.
    pub recorder: R,
    /// From the start to the shutdown.
    pub elapsed: Duration,
    /// From the start to the end of the join (mahjong players have logged out by then).
    pub finished: Duration,
    pub ended_by: EndReason,
    /// Each worker's completions in each second of the run (wrk's Req/Sec samples).
    pub per_second: Histogram<u64>,
    pub server: Option<ServerUsage>,
    /// tsumo's own CPU time and peak memory.
    pub usage: OwnUsage,
    /// Each worker thread's CPU time, in worker order (zero for workers that never ended).
    pub threads: Vec<ThreadUsage>,
    /// The wait for the workers after the shutdown: how long, the signals meanwhile, and the
    /// workers that had not ended by its end.
    pub wind_down: WindDown,
    /// When the run started, and when it was meant to.
    pub start: StartRecord,
    /// The start instant on CLOCK_MONOTONIC, where the run's intervals count from.
    pub t0: crate::timing::clock::Nanos,
    /// Every `--server-pid` sample, for the run's intervals.
    pub server_samples: Vec<ServerSample>,
}

/// Runs a mode to completion.
pub fn run<M: Mode>(mode: &mut M) -> Result<Run<<M::Worker as Worker>::Recorder>, Error> {
    let settings = mode.settings().clone();
    // tsumo's own cost is this run's alone, also when a process runs several (`--vs`).
    let own_usage = OwnUsage::start_of_run();
    // The wall clock is read once, before the workers connect.
    let start = start::StartClock::new(settings.start_at);
    let workers = mode.workers()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Thread(e.to_string()))?;
    // Signals are caught from here on: a SIGTERM while the workers connect still ends the run
    // through the one shutdown, with a report. One that came before, while this run prepared
    // (after the previous run of `--vs` ended), stops it before anything is sent.
    let mut signals = signals::Signals::new()?;
    if let Some(name) = signals.before_the_run() {
        return Err(Error::Stopped(format!(
            "{name} before the run began: nothing was sent"
        )));
    }
    let started = worker::start_all(workers, settings.pacing)?;
    // Sampling starts before the gate opens so that a bad --server-pid stops the run first.
    let sampler = match start_sampler(&settings.server_pids) {
        Ok(sampler) => sampler,
        Err(e) => {
            started.abort();
            return Err(e);
        }
    };
    started.gate.wait_ready();
    let t0 = match start.target() {
        None => started.gate.open(crate::timing::clock::now()),
        Some(target) => {
            if let Err(name) = runtime.block_on(start.wait(&mut signals)) {
                started.abort();
                return Err(Error::Stopped(format!(
                    "{name} while waiting for --start-at: nothing was sent"
                )));
            }
            started.gate.open(target)
        }
    };
    let start = start.record(crate::timing::clock::now());
    if let Some(live) = crate::stats::live::get() {
        live.started(start.intended_unix_ns.unwrap_or(start.actual_unix_ns), t0);
    }
    let supervised = runtime.block_on(supervisor::supervise(
        mode, &settings, t0, &started, signals,
    ));
    settings.progress.finish();
    let limits = worker::JoinLimits {
        grace: settings.grace,
        hurry: settings.hurry,
        winding_down: settings.winding_down,
        ended_by_signal: supervised.ended_by.is_signal(),
    };
    let joined = runtime.block_on(started.join(limits, supervised.signals));
    // Sampled up to here: a mahjong session's logouts load the server too.
    let (server, server_samples) = match sampler.map(Sampler::stop_with_samples) {
        Some((usage, samples)) => (Some(usage), samples),
        None => (None, Vec::new()),
    };
    if let Some(e) = joined.error {
        return Err(e);
    }
    let finished = Duration::from_nanos(crate::timing::clock::now().saturating_sub(t0));
    Ok(Run {
        recorder: joined.recorder,
        elapsed: supervised.elapsed,
        finished,
        ended_by: supervised.ended_by,
        per_second: supervised.per_second,
        server,
        usage: OwnUsage::now().since(own_usage),
        threads: joined.threads,
        wind_down: joined.wind_down,
        start,
        t0,
        server_samples,
    })
}

/// Samples the `--server-pid` processes once a second, if any were given.
fn start_sampler(pids: &[u32]) -> Result<Option<Sampler>, Error> {
    if pids.is_empty() {
        return Ok(None);
    }
    let on_sample = crate::stats::live::get().map(|live| {
        let show: crate::sys::procstat::OnSample =
            Box::new(move |sample| live.server_sample(sample));
        show
    });
    Sampler::start_with(pids, Duration::from_secs(1), on_sample).map(Some)
}
