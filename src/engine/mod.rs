//! The engine: runs a [`Plan`] on `-t` worker threads and returns the merged [`RunResult`].
//!
//! The main thread resolves the target and checks it answers (a TCP connect and, for https, a
//! full TLS handshake, so a bad certificate stops the run before any traffic), starts the workers,
//! opens the start gate, then supervises: once a second it samples each worker's completed
//! requests (the report's Req/Sec samples and the live progress line), and at the end of the
//! duration or on Ctrl-C it sends the one shutdown signal every worker listens to.

pub mod progress;
pub mod worker;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;
use tokio::sync::watch;

use crate::error::Error;
use crate::net::http1::request::{self, Batch};
use crate::net::preflight::preflight;
use crate::net::stream::Endpoint;
use crate::plan::Plan;
use crate::script::{Script, ScriptError, ThreadScript};
use crate::stats::RunResult;
use crate::stats::{new_histogram, Recorder};
use crate::sys;
use crate::sys::procstat::Sampler;
use crate::timing::clock;
use progress::{LiveCounters, ProgressMode};
use worker::{RunControl, StartGate, WorkerPlan};

/// A finished run, with what the caller still has to do: the script's `done()` and its error.
pub struct Finished {
    pub result: RunResult,
    /// The main Lua state, for `done(summary, latency, requests)` after the report.
    pub script: Option<Script>,
    /// The first error a script hook raised during the run (the run stopped there).
    pub script_error: Option<ScriptError>,
}

/// Runs a plan to completion (duration end, Ctrl-C, the script stopping every thread, or a
/// script error).
pub fn run(plan: &Plan) -> Result<Finished, Error> {
    sys::check_open_files(plan.connections, plan.threads)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Thread(e.to_string()))?;
    let endpoint = runtime.block_on(preflight(
        &plan.target,
        plan.insecure,
        plan.cacert.as_deref(),
        plan.timeout,
    ))?;
    // As wrk: the script is loaded in the main state and one state per thread; setup() and
    // init() run now, before any traffic, and their errors stop the run here.
    // One script state per worker; `None` for every worker when there is no script.
    let (script, mut thread_scripts): (_, Vec<Option<ThreadScript>>) = match &plan.script {
        Some(_) => {
            let (script, threads) = Script::load(plan, endpoint.addr)?;
            (Some(script), threads.into_iter().map(Some).collect())
        }
        None => (None, Vec::new()),
    };
    thread_scripts.resize_with(plan.threads, || None);
    let plain_batch = match &script {
        None => Some(request::from_plan(plan)?),
        Some(_) => None,
    };
    let control = Arc::new(RunControl::default());

    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let gate = StartGate::new(plan.threads);
    let mut workers = Vec::with_capacity(plan.threads);
    let mut live = Vec::with_capacity(plan.threads);
    let mut first_connection = 0;
    for (index, script) in thread_scripts.into_iter().enumerate() {
        let counters = Arc::new(LiveCounters::default());
        let connections = plan.connections_for_thread(index);
        // The bytes to send every time, unless the script's request() makes each batch.
        let static_batch = match &script {
            Some(s) if s.hooks().request => None,
            Some(s) => Some(Batch::parse(s.static_request())?),
            None => plain_batch.clone(),
        };
        let worker_plan = WorkerPlan {
            index,
            first_connection,
            connections,
            total_connections: plan.connections,
            rate: plan.rate,
            // A script's setup() may point a thread elsewhere (addr.lua).
            endpoint: Endpoint {
                addr: script.as_ref().map_or(endpoint.addr, ThreadScript::addr),
                tls: endpoint.tls.clone(),
            },
            static_batch,
            script,
            timeout: plan.timeout,
            record_all: !plan.batch_latency,
            live: Arc::clone(&counters),
            control: Arc::clone(&control),
        };
        first_connection += connections;
        match worker::spawn(worker_plan, Arc::clone(&gate), shutdown_rx.clone()) {
            Ok(handle) => workers.push(handle),
            // Workers already started wait at the gate for ever; the process exits with the
            // error and takes them with it.
            Err(e) => return Err(e),
        }
        live.push(counters);
    }

    // Sampling starts before the gate opens so that a bad --server-pid stops the run first.
    let sampler = start_sampler(&plan.server_pids)?;
    let t0 = gate.open(clock::now);
    let progress = ProgressMode::choose(plan.progress, plan.quiet);
    let supervised = runtime.block_on(supervise(plan, t0, &live, &control, progress));
    let _ = shutdown_tx.send(true);
    let server = sampler.map(Sampler::stop);
    progress.finish();

    let mut total = Recorder::new();
    let mut script_error = None;
    for handle in workers {
        let outcome = handle
            .join()
            .map_err(|_| Error::Thread("a worker thread panicked".into()))??;
        total.merge(&outcome.recorder);
        script_error = script_error.or(outcome.script_error);
    }
    let notes = notes(&total, &endpoint.addr);
    let result = RunResult {
        plan: plan.clone(),
        elapsed: supervised.elapsed,
        interrupted: supervised.interrupted,
        counters: total.counters,
        latency: total.latency,
        uncorrected: total.uncorrected,
        send_lateness: total.send_lateness,
        req_per_sec: supervised.req_per_sec,
        notes,
        server,
    };
    Ok(Finished {
        result,
        script,
        script_error,
    })
}

/// Samples the `--server-pid` processes once a second, if any were given (every mode).
pub fn start_sampler(pids: &[u32]) -> Result<Option<Sampler>, Error> {
    if pids.is_empty() {
        return Ok(None);
    }
    Sampler::start(pids, Duration::from_secs(1)).map(Some)
}

struct Supervised {
    elapsed: Duration,
    interrupted: bool,
    req_per_sec: Histogram<u64>,
}

/// Waits for the end of the run, sampling each worker's rate once a second.
async fn supervise(
    plan: &Plan,
    t0: clock::Nanos,
    live: &[Arc<LiveCounters>],
    control: &RunControl,
    progress: ProgressMode,
) -> Supervised {
    const TICK: u64 = 1_000_000_000;
    let duration_ns = plan.duration.as_nanos().min(u64::MAX as u128) as u64;
    let stop_at = t0.saturating_add(duration_ns);
    let mut req_per_sec = new_histogram();
    let mut last_counts: Vec<u64> = vec![0; live.len()];
    let mut last_tick = t0;
    let mut samples = 0u64;
    let mut interrupted = false;
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut record_samples = |now: clock::Nanos, last_tick: clock::Nanos| -> f64 {
        let span = (now - last_tick) as f64 / 1e9;
        let mut total_rate = 0.0;
        for (counters, last) in live.iter().zip(last_counts.iter_mut()) {
            let count = counters.requests();
            let rate = (count - *last) as f64 / span.max(1e-9);
            *last = count;
            req_per_sec.saturating_record(rate.round() as u64);
            total_rate += rate;
        }
        total_rate
    };
    loop {
        let next_tick = (last_tick + TICK).min(stop_at);
        let wait = Duration::from_nanos(next_tick.saturating_sub(clock::now()));
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = &mut ctrl_c => {
                interrupted = true;
                break;
            }
            _ = control.wake.notified() => {
                let all_stopped = control.stopped_workers.load(Ordering::SeqCst) >= live.len();
                if all_stopped || control.script_failed.load(Ordering::SeqCst) {
                    break;
                }
                continue;
            }
        }
        let now = clock::now();
        if now < next_tick {
            continue;
        }
        if next_tick == stop_at {
            break;
        }
        let rate = record_samples(now, last_tick);
        samples += 1;
        last_tick = now;
        let requests: u64 = live.iter().map(|c| c.requests()).sum();
        let errors: u64 = live.iter().map(|c| c.errors()).sum();
        progress.show(
            Duration::from_nanos(now - t0),
            plan.duration,
            rate,
            requests,
            errors,
        );
    }
    let end = clock::now();
    // The last, partial second counts if it is at least half a second, or if it is all there is.
    if samples == 0 || end - last_tick >= TICK / 2 {
        record_samples(end, last_tick);
    }
    Supervised {
        elapsed: Duration::from_nanos(end - t0),
        interrupted,
        req_per_sec,
    }
}

/// Explanations of conditions that silently cap a test, printed once in the report.
fn notes(total: &Recorder, addr: &SocketAddr) -> Vec<String> {
    let c = &total.counters;
    let mut notes = Vec::new();
    if c.emfile > 0 {
        let (soft, _) = sys::raise_open_files();
        notes.push(format!(
            "Note: {} connects failed with EMFILE (too many open files, limit {soft}): raise \
             `ulimit -n` or use fewer connections (-c).",
            c.emfile
        ));
    }
    if c.eaddrnotavail > 0 {
        notes.push(format!(
            "Note: {} connects failed with EADDRNOTAVAIL (no free local port towards {addr}): \
             widen net.ipv4.ip_local_port_range, enable net.ipv4.tcp_tw_reuse, or use fewer \
             connections.",
            c.eaddrnotavail
        ));
    }
    notes
}
