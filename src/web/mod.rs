//! HTTP mode: HTTP/1.1 over TCP or TLS at a constant rate (or closed loop), written on
//! `httparse` for the hot path: request bytes are built once and written raw (so wrk's Lua API
//! and pipelining can be honoured), responses are parsed incrementally without copying bodies.
//! With `--http2`, each connection is an HTTP/2 connection on hyper instead, and with `--http3`
//! an HTTP/3 connection on quinn and h3, with up to `-m` streams in flight.
//!
//! This module is what the engine runs for an HTTP plan: the main thread's side ([`HttpMode`]:
//! pre-flight, the script's `setup()`/`init()`, one worker per thread), one worker's connections
//! ([`worker`]), what they share ([`shared`], the connect among it), one connection's paced life
//! ([`conn`] for HTTP/1.1, [`mux`] for HTTP/2 and HTTP/3, one life over two wires) with its
//! requests' turns on the pacer ([`pace`]), and what is read of the connections from outside
//! them while they run ([`gauges`]): everything but the connection is the same for all three.
//!
//! Named `web`, not `http`, so that it is never mistaken for the `http` crate it uses.

pub mod conn;
pub mod gauges;
pub mod mux;
pub mod pace;
pub mod shared;
pub mod worker;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::{self, Mode, Settings};
use crate::error::Error;
use crate::net::http1::request::{self, Batch};
use crate::net::http2::request::H2Request;
use crate::net::http3::QuicTarget;
use crate::net::preflight::{preflight_blocking, Probe};
use crate::net::stream::Endpoint;
use crate::net::tls::Alpn;
use crate::plan::{Plan, Protocol};
use crate::script::{Script, ScriptError, ThreadScript};
use crate::stats::format::format_metric;
use crate::stats::http::over::OverLimits;
use crate::stats::http::shortfall::{Behind, MachineLoad, Shortfall};
use crate::stats::http::stages::RunStages;
use crate::stats::http::RunTimeline;
use crate::stats::http::{Recorder, RunResult};
use crate::stats::requests::writer::LogFile;
use crate::stats::timeline::IntervalClock;
use crate::sys;
use crate::timing::pacer::Pacing;
use crate::timing::stages::{self, Profile};
use gauges::HttpGauges;
use worker::{HttpWorker, Multiplexed};

/// How long the workers may take to end after the run (they stop at once unless a script
/// hook is still running).
const WORKER_GRACE: Duration = Duration::from_secs(5);

/// What a second signal cuts [`WORKER_GRACE`] to.
const WORKER_HURRY: Duration = Duration::from_secs(1);

/// A finished run, with what the caller still has to do: the script's `done()` and its error.
pub struct Finished {
    pub result: RunResult,
    /// The main Lua state, for `done(summary, latency, requests)` after the report.
    pub script: Option<Script>,
    /// The first error a script hook raised during the run (the run stopped there).
    pub script_error: Option<ScriptError>,
    /// Worker threads that had not ended within the grace after the run (a script hook that
    /// never returns): the report has only what they had counted up to then.
    pub abandoned: usize,
    /// `--requests`: where the log went, its rows and whether it is whole.
    pub requests_log: Option<crate::stats::requests::RequestsLog>,
}

/// The protocol a run offers in its TLS handshakes.
pub fn alpn(plan: &Plan) -> Alpn {
    match plan.protocol {
        Protocol::Http1 => Alpn::Http1,
        Protocol::Http2(_) => Alpn::H2,
        Protocol::Http3(_) => Alpn::H3,
    }
}

/// What the pre-flight check of a run's target is told: the run's own TLS settings, timeout,
/// protocol and source addresses (also `--vs` runs, checked before round 1).
pub fn probe(plan: &Plan) -> Probe<'_> {
    Probe {
        target: &plan.target,
        insecure: plan.options.insecure,
        cacert: plan.options.cacert.as_deref(),
        timeout: plan.timeout,
        alpn: alpn(plan),
        bind: &plan.options.bind,
        quic: None,
    }
}

/// Runs a plan to completion (duration end, a signal, the script stopping every thread, or a
/// script error).
pub fn run(plan: &Plan) -> Result<Finished, Error> {
    sys::check_open_files(plan.connections, plan.options.threads)?;
    let mut mode = HttpMode::prepare(plan)?;
    // The machine beside the run: whose CPU a late send or a shortfall is blamed on.
    let machine_at_start = crate::sys::machine::MachineStat::read();
    let run = engine::run(&mut mode)?;
    let machine = machine_at_start.and_then(|m| m.since()).map(|m| {
        let seconds = run.elapsed.as_secs_f64().max(1e-9);
        MachineLoad::of(
            m,
            run.usage.cpu_seconds / seconds,
            run.server.as_ref().map(|s| s.cpu_percent_mean / 100.0),
        )
    });
    let HttpMode {
        endpoint,
        script,
        quic,
        log,
        ..
    } = mode;
    let requests_log = log.map(LogFile::finish);
    let mut total = run.recorder.recorder;
    if let Some((quic, before)) = quic {
        // A resumed handshake verifies no certificate: the others were full.
        let c = &mut total.counters;
        let full = quic.full.load(std::sync::atomic::Ordering::Relaxed) - before;
        c.tls_full_handshakes = full;
        c.tls_resumed_handshakes = c.connections_opened.saturating_sub(full);
    }
    let elapsed = run.elapsed;
    // Interval k starts k intervals after the start, on the wall clock as on CLOCK_MONOTONIC.
    let start_unix_ns = run
        .start
        .intended_unix_ns
        .unwrap_or(run.start.actual_unix_ns);
    let timeline = RunTimeline::new(
        &total.timeline,
        IntervalClock::new(run.t0, plan.options.interval),
        start_unix_ns,
        &run.server_samples,
    );
    let hung = run.wind_down.abandoned.len();
    let stages = run_stages(plan, &total, elapsed, run.ended_by);
    let due_rate = stages.as_ref().map(|stages| stages.due_rate(elapsed));
    let shortfall = due_rate.or(plan.rate).and_then(|rate| {
        let mut shortfall =
            Shortfall::judge(rate, plan.connections, &total, elapsed, &run.threads)?
                .with_machine(machine);
        shortfall.blame_hung(hung);
        Some(shortfall)
    });
    let behind = plan.rate.and_then(|_| {
        let p99 = crate::stats::hdr::value_at_percentile(&total.send_lateness, 99.0);
        Behind::judge(p99, &run.threads, elapsed, machine)
    });
    let mut notes = signal_notes(run.ended_by, run.elapsed, &run.wind_down, plan);
    notes.extend(self::notes(&total, &endpoint.addr));
    let result = RunResult {
        plan: plan.clone(),
        elapsed,
        interrupted: run.ended_by.is_signal(),
        // A worker ends an HTTP run only on a script error: named so (`script_error` says which).
        ended_by: match (run.ended_by, &run.recorder.script_error) {
            (engine::EndReason::Ended, Some(_)) => engine::EndReason::ScriptError,
            (ended_by, _) => ended_by,
        },
        notes,
        counters: total.counters,
        latency: total.latency,
        uncorrected: total.uncorrected,
        send_lateness: total.send_lateness,
        split: total.split,
        // quinn reads a QUIC connection's socket itself: no kernel stamp reaches tsumo.
        timestamps: match plan.protocol {
            Protocol::Http3(_) => crate::net::stamp::Timestamps::User,
            Protocol::Http1 | Protocol::Http2(_) => crate::net::stamp::kernel_stamps(),
        },
        timestamps_asked: plan.protocol.http3().is_none() && crate::net::stamp::user_asked(),
        req_per_sec: run.per_second,
        server: run.server,
        usage: run.usage,
        shortfall,
        behind,
        start: run.start,
        timeline: Some(timeline),
        stages,
    };
    Ok(Finished {
        result,
        script,
        script_error: run.recorder.script_error,
        abandoned: hung,
        requests_log,
    })
}

/// Each stage's results of a `--stages` run (`None` without stages).
fn run_stages(
    plan: &Plan,
    total: &Recorder,
    elapsed: Duration,
    ended_by: engine::EndReason,
) -> Option<RunStages> {
    let stages = total.stages.as_ref()?;
    let profile = Profile::new(&plan.stages);
    let ran = elapsed.as_nanos().min(u64::MAX as u128) as u64;
    let cut_short = ended_by != engine::EndReason::Duration && ran < profile.total();
    let records = stages.settled(&total.counters);
    // What this process's connections were due: each its layer of the profile, so the process's
    // own share already (a whole one, for RunStages to leave as it is).
    let shard = plan.options.part.shard;
    let due = crate::timing::layers::due_in_process(&profile, shard, plan.connections);
    Some(RunStages::of(
        &plan.stages,
        due,
        crate::plan::Shard::WHOLE,
        records,
        ran,
        cut_short,
    ))
}

/// The main thread's side of an HTTP run.
pub struct HttpMode<'a> {
    plan: &'a Plan,
    settings: Settings,
    endpoint: Endpoint,
    /// `--http3`: the QUIC connections' TLS settings, and the full handshakes counted before the
    /// run (the pre-flight check's).
    quic: Option<(QuicTarget, u64)>,
    /// The main Lua state (`done()` runs in it after the report).
    script: Option<Script>,
    /// One Lua state per worker, moved into the workers.
    thread_scripts: Vec<Option<ThreadScript>>,
    /// A capacity step's watch on its errors (`plan.end_early`).
    watch: Option<std::cell::RefCell<crate::capacity::Watch>>,
    /// `--stages`: the watch on a server gone mid-profile, which ends the run.
    gone: Option<std::cell::RefCell<gauges::GoneWatch>>,
    /// `--requests`: the log the workers' rows go to.
    log: Option<LogFile>,
}

impl<'a> HttpMode<'a> {
    /// Resolves and checks the target, loads the script and runs its `setup()` and `init()`:
    /// every error here stops the run before any traffic.
    pub fn prepare(plan: &'a Plan) -> Result<HttpMode<'a>, Error> {
        let quic = match plan.protocol.http3() {
            Some(h3) => Some(QuicTarget::new(
                &plan.target.host,
                plan.options.insecure,
                plan.options.cacert.as_deref(),
                h3.zero_rtt,
            )?),
            None => None,
        };
        let endpoint = preflight_blocking(Probe {
            quic: quic.as_ref(),
            ..probe(plan)
        })?;
        // The run's full handshakes are those after the check's.
        let quic = quic.map(|quic| {
            let before = quic.full.load(std::sync::atomic::Ordering::Relaxed);
            (quic, before)
        });
        // As wrk: the script is loaded in the main state and one state per thread.
        let (script, mut thread_scripts): (_, Vec<Option<ThreadScript>>) = match &plan.script {
            Some(_) => {
                let (script, threads) = Script::load(plan, endpoint.addr)?;
                (Some(script), threads.into_iter().map(Some).collect())
            }
            None => (None, Vec::new()),
        };
        thread_scripts.resize_with(plan.options.threads, || None);
        let log = match &plan.requests {
            Some(out) => Some(crate::stats::requests::open(out, &plan.options.part)?),
            None => None,
        };
        Ok(HttpMode {
            log,
            plan,
            settings: Settings {
                duration: plan.options.duration,
                grace: WORKER_GRACE,
                hurry: WORKER_HURRY,
                winding_down: "the worker threads end",
                progress: engine::ProgressMode::choose(plan.options.progress, plan.options.quiet),
                server_pids: plan.options.server_pids.clone(),
                start_at: plan.options.part.start_at,
                // With --stages, at the peak rate (this process's share of it).
                pacing: Pacing::choose(plan.slack, stages::pacing_rate(plan), plan.options.threads),
                stop: None,
            },
            quic,
            endpoint,
            script,
            thread_scripts,
            watch: plan
                .end_early
                .clone()
                .map(|rule| std::cell::RefCell::new(crate::capacity::Watch::new(rule))),
            gone: (!plan.stages.is_empty()).then(std::cell::RefCell::default),
        })
    }
}

impl Mode for HttpMode<'_> {
    type Worker = HttpWorker;

    fn settings(&self) -> &Settings {
        &self.settings
    }

    fn workers(&mut self) -> Result<Vec<HttpWorker>, Error> {
        let plan = self.plan;
        let plain_batch = match &self.script {
            None => Some(request::from_plan(plan)?),
            Some(_) => None,
        };
        let scheme = match plan.target.scheme {
            crate::plan::Scheme::Http => http::uri::Scheme::HTTP,
            crate::plan::Scheme::Https => http::uri::Scheme::HTTPS,
        };
        let authority = plan.target.host_header();
        let mut first_connection = 0;
        let mut workers = Vec::with_capacity(plan.options.threads);
        let profile = (!plan.stages.is_empty()).then(|| Arc::new(Profile::new(&plan.stages)));
        for (index, script) in std::mem::take(&mut self.thread_scripts)
            .into_iter()
            .enumerate()
        {
            let connections = plan.connections_for_thread(index);
            // The bytes to send every time, unless the script's request() makes each batch.
            let static_batch = match &script {
                Some(s) if s.hooks().request => None,
                Some(s) => Some(Batch::parse(s.static_request())?),
                None => plain_batch.clone(),
            };
            // A script's setup() may point a thread elsewhere (addr.lua).
            let addr = script
                .as_ref()
                .map_or(self.endpoint.addr, ThreadScript::addr);
            let protocol = match plan.protocol {
                Protocol::Http3(h3) => {
                    let (quic, _) = self.quic.as_ref().ok_or(Error::Usage(
                        "--http3: no QUIC target was prepared".to_string(),
                    ))?;
                    Some(Multiplexed::H3(h3.streams, quic.client(addr)))
                }
                Protocol::Http2(h2) => Some(Multiplexed::H2(h2)),
                Protocol::Http1 => None,
            };
            let mux = match protocol {
                None => None,
                Some(protocol) => {
                    let fixed = match &static_batch {
                        Some(batch) => Some(
                            H2Request::parse_all(&batch.bytes, &scheme, &authority)
                                .map_err(|e| Error::Usage(format!("the request: {e}")))?,
                        ),
                        None => None,
                    };
                    Some((protocol, fixed))
                }
            };
            workers.push(HttpWorker {
                first_connection,
                connections,
                total_connections: plan.connections,
                rate: plan.rate,
                profile: profile.clone(),
                shard: plan.options.part.shard,
                endpoint: Endpoint {
                    addr,
                    tls: self.endpoint.tls.clone(),
                    source: None,
                },
                sources: plan.options.bind.clone(),
                static_batch,
                script,
                timeout: plan.timeout,
                record_all: !plan.batch_latency,
                over_limits: plan.end_early.as_ref().map_or(OverLimits::NONE, |rule| {
                    OverLimits::new(&rule.over_limits())
                }),
                mux,
                scheme: scheme.clone(),
                authority: authority.clone(),
                recorded: Default::default(),
                log: self.log.as_ref().map(LogFile::rows),
                interval: plan.options.interval,
                duration: plan.options.duration,
            });
            first_connection += connections;
        }
        Ok(workers)
    }

    fn progress_line(&self, elapsed: Duration, gauges: &[Arc<HttpGauges>], rate: f64) -> String {
        let requests: u64 = gauges.iter().map(|c| c.requests()).sum();
        // Socket errors and 4xx/5xx responses, as the report counts errors.
        let errors: u64 = gauges.iter().map(|c| c.errors() + c.status()).sum();
        // With `--stages`, the profile's rate now beside the rate reached.
        let target = match self.plan.stages.is_empty() {
            true => String::new(),
            false => stages::Target::of(self.plan)
                .at(elapsed.as_nanos() as u64)
                .map_or(String::new(), |t| format!(" (target {t:.0})")),
        };
        format!(
            "{}[{:>5.1}s / {:.0}s] {} req/s{target}, {} requests, {} errors",
            self.plan.progress_prefix,
            elapsed.as_secs_f64(),
            self.plan.options.duration.as_secs_f64(),
            format_metric(rate),
            requests,
            errors
        )
    }

    /// A capacity step's judged run ends once it broke or held beyond doubt.
    fn settled(&self, elapsed: Duration, gauges: &[Arc<HttpGauges>]) -> bool {
        let Some(watch) = &self.watch else {
            return false;
        };
        let mut counts = crate::capacity::Counts::default();
        for c in gauges {
            let socket = c.errors();
            counts.answered += c.requests() + socket;
            counts.failed += c.status() + socket;
            counts.responses += c.requests();
            for (sum, over) in counts.over.iter_mut().zip(c.over.read()) {
                *sum += over;
            }
        }
        watch.borrow_mut().tick(elapsed, counts)
    }

    fn server_gone(&self, gauges: &[Arc<HttpGauges>]) -> bool {
        self.gone
            .as_ref()
            .is_some_and(|gone| gone.borrow_mut().tick(gauges))
    }
}

/// What an HTTP worker hands back: its recorder and the first error its script raised.
#[derive(Default)]
pub struct HttpRecord {
    pub recorder: Recorder,
    pub script_error: Option<ScriptError>,
}

impl engine::Recorder for HttpRecord {
    fn merge(&mut self, other: HttpRecord) {
        self.recorder.merge(&other.recorder);
        self.script_error = self.script_error.take().or(other.script_error);
    }
}

/// What a signal did to the run, and the worker threads that never ended (the text report
/// and the JSON's notes).
fn signal_notes(
    ended_by: engine::EndReason,
    elapsed: Duration,
    wind_down: &engine::WindDown,
    plan: &Plan,
) -> Vec<String> {
    let mut notes = Vec::new();
    if let engine::EndReason::Signal(name) = ended_by {
        notes.push(format!(
            "Interrupted by {name} at {:.2}s of {}: the report covers the run up to the signal.",
            elapsed.as_secs_f64(),
            engine::seconds(plan.options.duration)
        ));
    }
    if wind_down.abandoned.is_empty() {
        return notes;
    }
    let threads: Vec<String> = wind_down
        .abandoned
        .iter()
        .map(|index| (index + 1).to_string())
        .collect();
    let which = match threads.len() {
        1 => format!(
            "worker thread {} of {} hung",
            threads[0], plan.options.threads
        ),
        _ => format!(
            "worker threads {} of {} hung",
            threads.join(", "),
            plan.options.threads
        ),
    };
    let cut = match (wind_down.cut_to, wind_down.signals.last()) {
        (Some(_), Some(name)) => format!(", cut short by a second {name}"),
        _ => String::new(),
    };
    let kept = if wind_down.kept == wind_down.abandoned.len() {
        "what each had completed before is counted, the rest of its schedule is not"
    } else {
        "the counts of a thread stuck while recording are lost"
    };
    let it = if threads.len() == 1 { "it" } else { "they" };
    notes.push(format!(
        "Note: {which}: {it} had not ended {} after the run{cut} (a script hook that never \
         returns, with --script-timeout 0?); {kept}.",
        engine::seconds(wind_down.waited)
    ));
    notes
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
    if let Some(line) = tls_failures_note(total) {
        notes.push(line);
    }
    notes
}

/// TLS handshakes that failed after the pre-flight (a server that changed its certificate, a
/// thread sent elsewhere by its script): how many, why, and the first few in words.
fn tls_failures_note(total: &Recorder) -> Option<String> {
    let failures = &total.counters.tls_failures;
    if failures.total() == 0 {
        return None;
    }
    let reasons: Vec<String> = failures
        .by_reason()
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, reason)| format!("{n} {reason}"))
        .collect();
    let quotes: Vec<String> = total
        .tls_failure_quotes
        .iter()
        .map(|q| format!("\"{q}\""))
        .collect();
    Some(format!(
        "TLS handshakes failed during the run: {} ({}); first: {}",
        failures.total(),
        reasons.join(", "),
        quotes.join(" | ")
    ))
}
