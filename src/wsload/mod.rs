//! WebSocket mode (`tsumo ws`): text messages to any WebSocket server at a constant rate (or
//! closed loop), each matched to its reply by the sequence number inside it and timed from its
//! intended send time. The framing is the mahjong mode's transport ([`crate::ws::transport`]);
//! the workers, start gate, shutdown and pacing are the engine's, as for the HTTP mode.
//!
//! This module is the main thread's side ([`WsMode`]: the pre-flight check, one worker per
//! thread) and one worker's connections, opened before the start ([`WsWorker`]); one
//! connection's paced life is in [`conn`].
//!
//! Named `wsload`, not `ws`: `ws` is the transport every WebSocket mode shares.

pub mod conn;
mod intervals;
mod log;
pub mod script;
pub mod socketio;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;

use crate::engine::{self, Mode, ProgressMode, Settings, WorkerContext};
use crate::error::Error;
use crate::net::preflight::{preflight_blocking, Probe};
use crate::net::stream::{ConnectError, Endpoint};
use crate::net::tls::Alpn;
use crate::plan::WsPlan;
use crate::script::ws::{DoneSummary, WsSource};
use crate::stats::requests::writer::{LogFile, Rows};
use crate::stats::ws::{Recorder, RunResult};
use crate::timing::pacer::Pacing;
use crate::timing::schedule::Schedule;
use crate::ws::transport::{self, HandshakeError, WsConnectError};
use script::Scripted;

/// What a worker records: the kind's recorder, as the engine merges it.
#[derive(Default)]
pub struct WsRecord(pub Recorder);

impl engine::Recorder for WsRecord {
    fn merge(&mut self, other: Self) {
        self.0.merge(other.0);
    }
}

/// Counters a worker updates as it goes, read once a second for the progress line.
#[derive(Debug, Default)]
pub struct WsGauges {
    pub sent: AtomicU64,
    pub answered: AtomicU64,
    pub open: AtomicU64,
}

impl engine::Gauges for WsGauges {
    fn completed(&self) -> u64 {
        self.answered.load(Ordering::Relaxed)
    }
}

/// What every worker reads.
struct Shared {
    plan: WsPlan,
    endpoint: Endpoint,
    /// `-s`, checked before any traffic.
    script: Option<WsSource>,
}

/// The main thread's side of a WebSocket run.
pub struct WsMode {
    settings: Settings,
    shared: Arc<Shared>,
    /// `--requests`: the log the workers' rows go to.
    log: Option<LogFile>,
}

impl WsMode {
    /// Checks the server answers (TCP, and TLS for `wss://`, as a run connects) before any
    /// traffic.
    pub fn prepare(plan: &WsPlan) -> Result<WsMode, Error> {
        let script = match &plan.script {
            Some(path) => Some(WsSource::load(path, &plan.target)?),
            None => None,
        };
        crate::sys::check_open_files(plan.connections, plan.options.threads)?;
        let endpoint = preflight_blocking(probe(plan))?;
        let threads = plan.options.threads;
        let log = match &plan.requests {
            Some(out) => Some(crate::stats::requests::open(out, &plan.options.part)?),
            None => None,
        };
        Ok(WsMode {
            log,
            settings: Settings {
                duration: plan.options.duration,
                // The last messages' replies, each within -T, then the closes.
                grace: plan.timeout + Duration::from_secs(3),
                hurry: Duration::from_secs(1),
                winding_down: "the last replies arrive and the connections close",
                progress: ProgressMode::choose(plan.options.progress, plan.options.quiet),
                server_pids: plan.options.server_pids.clone(),
                start_at: plan.options.part.start_at,
                pacing: Pacing::choose(None, plan.rate, threads),
                stop: None,
            },
            shared: Arc::new(Shared {
                plan: plan.clone(),
                endpoint,
                script,
            }),
        })
    }
}

/// The pre-flight check of a plan's server (TCP, and TLS for `wss://`), as a run connects:
/// before the run, and after one the server ended early (is it gone?).
pub fn probe(plan: &WsPlan) -> Probe<'_> {
    Probe {
        target: &plan.target,
        insecure: plan.options.insecure,
        cacert: plan.options.cacert.as_deref(),
        timeout: plan.timeout,
        alpn: Alpn::Http1,
        bind: &plan.options.bind,
        quic: None,
    }
}

/// Runs a plan to its end: the duration, a signal, or every connection gone. With `-s`, the
/// script comes back for its `done()`.
pub fn run(plan: &WsPlan) -> Result<(RunResult, Option<Script>), Error> {
    let mut mode = WsMode::prepare(plan)?;
    let run = engine::run(&mut mode);
    // The workers ended (their rows handed over): the log's record, also when the run failed.
    let requests_log = mode.log.take().map(LogFile::finish);
    let run = run?;
    let script = Arc::try_unwrap(mode.shared)
        .ok()
        .and_then(|shared| shared.script)
        .map(|source| Script { source });
    let result = RunResult {
        plan: plan.clone(),
        elapsed: run.elapsed,
        ended_by: run.ended_by,
        record: run.recorder.0,
        per_second: run.per_second,
        cpu_seconds: run.usage.cpu_seconds,
        peak_rss_bytes: run.usage.peak_rss_bytes,
        timestamps: crate::net::stamp::kernel_stamps().as_str(),
        server: run.server,
        start: run.start,
        requests_log,
    };
    Ok((result, script))
}

/// A run's script, after the run: its `done()`.
pub struct Script {
    source: WsSource,
}

impl Script {
    /// `done(summary, latency, requests)` as in wrk: `summary.duration` in µs, `requests` the
    /// messages answered, `bytes` received, `errors` (`connect`, `read`: connections that broke,
    /// `timeout`), and the WebSocket counts (`sent`, `answered`, `unanswered`, `pushed`, `late`);
    /// `latency` the corrected round trip in µs, `requests` the messages answered per second.
    pub fn done(&self, result: &RunResult) -> Result<(), Error> {
        let c = &result.record.counters;
        let connect: u64 = c.failures.values().sum();
        let read: u64 = c.closes.values().sum();
        let summary = DoneSummary {
            fields: vec![
                ("duration", result.elapsed.as_micros() as f64),
                ("requests", c.answered as f64),
                ("bytes", c.bytes_received as f64),
                ("sent", c.sent as f64),
                ("answered", c.answered as f64),
                ("unanswered", (c.unanswered + c.timed_out) as f64),
                ("pushed", c.pushed as f64),
                ("late", c.late as f64),
            ],
            errors: vec![
                ("connect", connect as f64),
                ("read", read as f64),
                ("write", 0.0),
                ("status", 0.0),
                ("timeout", c.timed_out as f64),
            ],
        };
        let latency = result.record.corrected.clone();
        self.source
            .done(&summary, latency, result.per_second.clone())
    }
}

impl Mode for WsMode {
    type Worker = WsWorker;

    fn settings(&self) -> &Settings {
        &self.settings
    }

    fn workers(&mut self) -> Result<Vec<WsWorker>, Error> {
        let plan = &self.shared.plan;
        let threads = plan.options.threads;
        let mut first = 0;
        let opening = std::time::Instant::now();
        Ok((0..threads)
            .map(|t| {
                // The remainder goes to the first threads.
                let n = plan.connections / threads + usize::from(t < plan.connections % threads);
                let worker = WsWorker {
                    log: self.log.as_ref().map(LogFile::rows),
                    shared: Arc::clone(&self.shared),
                    connections: first..first + n,
                    opening,
                };
                first += n;
                worker
            })
            .collect())
    }

    fn progress_line(
        &self,
        elapsed: Duration,
        gauges: &[Arc<WsGauges>],
        per_second: f64,
    ) -> String {
        let sum = |field: fn(&WsGauges) -> &AtomicU64| -> u64 {
            gauges
                .iter()
                .map(|g| field(g).load(Ordering::Relaxed))
                .sum()
        };
        format!(
            "[{:>6.1}s] {} open, {} sent, {} answered, {:.0} msg/s",
            elapsed.as_secs_f64(),
            sum(|g| &g.open),
            sum(|g| &g.sent),
            sum(|g| &g.answered),
            per_second,
        )
    }
}

/// One worker thread's connections (their indices over the whole run).
pub struct WsWorker {
    shared: Arc<Shared>,
    connections: std::ops::Range<usize>,
    /// When the connections begin to open (`--connect-rate`: connection i opens i/N s after).
    opening: std::time::Instant,
    /// `--requests`: this worker's rows.
    log: Option<Rows>,
}

impl engine::Worker for WsWorker {
    type Gauges = WsGauges;
    type Recorder = WsRecord;

    async fn run(mut self, ctx: WorkerContext<WsGauges>) -> Result<WsRecord, Error> {
        let log: log::Log = self.log.take().map(|rows| Rc::new(RefCell::new(rows)));
        let plan = &self.shared.plan;
        let recorder = Rc::new(RefCell::new(Recorder::default()));
        let opened = join_all(self.connections.clone().map(|i| self.open(i, &recorder))).await;
        let (opened, scripts): (Vec<_>, Vec<_>) = opened.into_iter().map(Option::unzip).unzip();
        let mut scripts = scripts.into_iter();
        let t0 = ctx.start();
        log::start(&log, t0);
        let intervals = Rc::new(RefCell::new(intervals::Intervals::new(
            t0,
            plan.options.interval,
        )));
        let ticker =
            tokio::task::spawn_local(intervals::tick(Rc::clone(&intervals), Rc::clone(&recorder)));
        let lives = self
            .connections
            .clone()
            .zip(opened)
            .map(|(index, ws)| (index, ws, scripts.next().flatten().flatten()))
            .filter_map(|(index, ws, script)| Some((index, ws?, script)))
            .map(|(index, ws, script)| {
                // A shard's connection `index` is the whole run's `shard.global(index)`.
                let shard = plan.options.part.shard;
                let schedule = plan.rate.map(|rate| {
                    Schedule::of_shard(t0, shard, index, plan.connections, rate)
                        .lasting(plan.options.duration)
                });
                let life = conn::Life {
                    schedule,
                    size: plan.size,
                    timeout: plan.timeout,
                    ping: plan.ping.map(|every| {
                        let whole = (plan.connections * shard.count) as f64;
                        let phase = (shard.global(index) as f64 + 1.0) / whole;
                        (every, every.mul_f64(phase))
                    }),
                    pacer: Rc::clone(&ctx.pacer),
                    recorder: Rc::clone(&recorder),
                    gauges: Arc::clone(&ctx.gauges),
                    script,
                    log: log.clone(),
                    conn: index as u32,
                    socketio: plan.socketio.as_deref().map(socketio::SocketIo::new),
                };
                ctx.gauges.open.fetch_add(1, Ordering::Relaxed);
                life.run(ws, ctx.shutdown())
            });
        join_all(lives).await;
        ticker.abort();
        intervals.borrow_mut().close(&recorder);
        let recorder = recorder.replace(Recorder::default());
        Ok(WsRecord(recorder))
    }
}

impl WsWorker {
    /// Opens connection `index` within `-T` (with `--connect-rate`, at its turn), its time
    /// recorded; a failure counted by kind. With `-s`, the connection's own Lua state first, and
    /// its `connect()` headers in the upgrade.
    async fn open(
        &self,
        index: usize,
        recorder: &RefCell<Recorder>,
    ) -> Option<(transport::WebSocket, Option<Scripted>)> {
        let plan = &self.shared.plan;
        if let Some(rate) = plan.connect_rate {
            // The whole run's rate: a shard opens its connections at their turns in the whole.
            let global = plan.options.part.shard.global(index) as u128;
            let after = (global * 1_000_000_000 / u128::from(rate)).min(u64::MAX as u128);
            let at = self.opening + Duration::from_nanos(after as u64);
            tokio::time::sleep_until(at.into()).await;
        }
        let (script, headers) = match &self.shared.script {
            None => (None, Vec::new()),
            Some(source) => {
                let opened = source.connection().and_then(|s| Ok((s.connect()?, s)));
                match opened {
                    Ok((headers, script)) => (Some(Scripted::new(script)), headers),
                    Err(e) => {
                        recorder
                            .borrow_mut()
                            .failed(format!("{}{e}", script::SCRIPT_ERROR));
                        return None;
                    }
                }
            }
        };
        let start = std::time::Instant::now();
        let connect = async {
            let url = &plan.target.url;
            let mut ws = (transport::connect_with(&self.shared.endpoint, url, &headers).await)
                .map_err(|e| failure_kind(&e))?;
            if plan.socketio.is_some() {
                socketio::handshake(&mut ws).await.map_err(|e| {
                    let why = match e {
                        socketio::SocketIoError::Ws(e) => conn::close_kind(&e),
                        other => other.to_string(),
                    };
                    format!("socket.io handshake: {why}")
                })?;
            }
            Ok::<_, String>(ws)
        };
        match tokio::time::timeout(plan.timeout, connect).await {
            Ok(Ok(ws)) => {
                recorder.borrow_mut().connected(start.elapsed());
                Some((ws, script))
            }
            Ok(Err(kind)) => {
                recorder.borrow_mut().failed(kind);
                None
            }
            Err(_) => {
                recorder.borrow_mut().failed("timeout".to_string());
                None
            }
        }
    }
}

/// A failed opening as the report counts it: `refused`, `upgrade answered 404`, or the
/// transport's own words.
fn failure_kind(e: &WsConnectError) -> String {
    match e {
        WsConnectError::Connect(ConnectError::Tcp(io))
            if io.kind() == std::io::ErrorKind::ConnectionRefused =>
        {
            "refused".to_string()
        }
        WsConnectError::Handshake(HandshakeError::Status { status, .. }) => {
            format!("upgrade answered {status}")
        }
        other => other.kind(),
    }
}
