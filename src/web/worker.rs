//! One HTTP worker: its share of the connections, its own Lua state and recorder. It connects
//! every connection first (so set-up does not eat into the first interval), waits at the start
//! gate, then runs each connection's schedule until the shutdown or the script stops it. With
//! `--stages`, a connection whose first request is due later in the run is opened shortly
//! before it instead (a ramp from 0 opens its connections as the rate comes to need them).

use std::cell::{Cell, RefCell};
use std::net::IpAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use super::conn::Connection;
use super::gauges::{Down, HttpGauges, Progress};
use super::mux::h2::H2Wire;
use super::mux::h3::{H3Wire, H3Worker};
use super::mux::{MuxConnection, MuxRequests, Wire};
use super::shared::{Requests, Shared};
use super::HttpRecord;
use crate::engine::{Kept, Salvage, Worker, WorkerContext};
use crate::error::Error;
use crate::net::http1::request::Batch;
use crate::net::http2::request::H2Request;
use crate::net::http3::QuicClient;
use crate::net::source;
use crate::net::stream::Endpoint;
use crate::plan::Http2;
use crate::plan::Shard;
use crate::script::ThreadScript;
use crate::stats::http::{Recorder, Unsent};
use crate::stats::requests::writer::Rows;
use crate::stats::timeline::IntervalClock;
use crate::timing::clock::{self, Nanos};
use crate::timing::deadline::Watchdog;
use crate::timing::schedule::Schedule;
use crate::timing::stages::Profile;
use http::uri::Scheme;

/// A protocol with several streams per connection.
pub enum Multiplexed {
    H2(Http2),
    /// `-m`, and this worker's QUIC client.
    H3(usize, QuicClient),
}

/// What one worker is asked to do.
pub struct HttpWorker {
    /// Global index of this worker's first connection (schedules are phase-shifted by it).
    pub first_connection: usize,
    pub connections: usize,
    /// This process's connections and rate (`None`: closed loop).
    pub total_connections: usize,
    pub rate: Option<u64>,
    /// `--stages`: the whole run's rate over time, which the schedule follows instead of `rate`.
    pub profile: Option<Arc<Profile>>,
    /// The part of a sharded run this process runs: its connections keep the whole run's phases.
    pub shard: Shard,
    pub endpoint: Endpoint,
    /// `--bind`: this process's connection number `n` connects from `sources[n % len]`.
    pub sources: Vec<IpAddr>,
    /// The request bytes sent every time; `None` when the script's `request()` makes them.
    pub static_batch: Option<Batch>,
    /// This worker's Lua state, when the run has a script.
    pub script: Option<ThreadScript>,
    pub timeout: Duration,
    pub record_all: bool,
    /// The latencies counted as it runs (a capacity step's judged run; none otherwise).
    pub over_limits: crate::stats::http::over::OverLimits,
    /// `--http2` or `--http3`: the protocol, and the requests sent every time already in that
    /// form (parsed once, on the main thread; `None` when the script's `request()` makes
    /// them).
    pub mux: Option<(Multiplexed, Option<Vec<H2Request>>)>,
    /// `http` or `https`, and the authority, for the script's requests without a Host header.
    pub scheme: Scheme,
    pub authority: String,
    /// What this worker records, also where the main thread finds it if the thread hangs.
    pub recorded: Kept<Recorder>,
    /// `--requests`: where this worker's rows go.
    pub log: Option<Rows>,
    /// `--interval`: the length of the run's intervals.
    pub interval: Duration,
    /// `-d`: the schedule sends the requests due in `[start, start + duration)`, `R·d` in all.
    pub duration: Duration,
}

impl Worker for HttpWorker {
    type Gauges = HttpGauges;
    type Recorder = HttpRecord;

    fn salvage(&self) -> Salvage<HttpRecord> {
        let recorded = self.recorded.clone();
        Some(Box::new(move || {
            recorded.try_take().map(|recorder| HttpRecord {
                recorder,
                script_error: None,
            })
        }))
    }

    async fn run(self, ctx: WorkerContext<HttpGauges>) -> Result<HttpRecord, Error> {
        let (shared, mux, layout) = self.into_parts(&ctx);
        // Each connection keeps its source address through reconnects.
        let sources: Vec<Option<IpAddr>> = (0..layout.connections)
            .map(|i| source::pick(&layout.sources, layout.first_connection + i))
            .collect();
        // Connect first, so that connection set-up does not eat into the first interval; with
        // `--stages`, a connection whose first request is due later opens shortly before it.
        let opens_later: Vec<Option<Nanos>> = (0..layout.connections)
            .map(|i| layout.opens_later(i))
            .collect();
        let opened = connect_all(&shared, &mux, &sources, &opens_later, layout.timeout).await;

        let t0 = ctx.start();
        if let Some(log) = &shared.log {
            let since = clock::now().saturating_sub(t0);
            let unix_ns = crate::sys::wallclock::unix_now_ns().saturating_sub(since);
            log.borrow_mut().start(t0, unix_ns);
        }
        let intervals = IntervalClock::new(t0, layout.interval);
        let sink = crate::stats::live::sink::<crate::stats::http::live::Data>();
        shared.recorder.borrow_mut().start_timeline(intervals, sink);
        if let Some(profile) = &layout.profile {
            let lengths = profile.stages().iter().map(|stage| stage.duration_ns);
            shared.recorder.borrow_mut().start_stages(t0, lengths);
            if ctx.pacer.pacing().auto {
                // This thread's share of the run's rate: its connections of all the run's.
                let all = layout.total_connections * layout.shard.count.max(1);
                let share = layout.connections as f64 / all.max(1) as f64;
                let changes = crate::timing::stages::pacings(profile, share);
                ctx.pacer
                    .follow(changes.into_iter().map(|(at, p)| (t0 + at, p)));
            }
        }
        tokio::task::spawn_local(close_intervals(shared.recorder.clone(), intervals));
        tokio::task::spawn_local(Rc::clone(&shared.watchdog).run());
        let mut scheduled = Vec::new();
        for (i, (opened, source)) in opened.into_iter().zip(sources).enumerate() {
            let schedule = layout.schedule(t0, i);
            let not_before = opens_later[i].map(|at| t0.saturating_add(at));
            let conn = (opened, source, schedule.clone(), not_before);
            let Some(progress) = start(Rc::clone(&shared), &mux, conn) else {
                continue;
            };
            if let Some(schedule) = schedule {
                scheduled.push((schedule, progress));
            }
        }
        wait_for_end(&ctx, &shared).await;
        Ok(finish(&ctx, &shared, &mux, &scheduled))
    }
}

/// A worker's multiplexed protocol and the requests its streams send (`None`: HTTP/1.1).
type Mux = Option<(Protocol, Rc<MuxRequests>)>;

/// Where a worker's connections sit in the run, and how long and how fast they send.
struct Layout {
    first_connection: usize,
    connections: usize,
    total_connections: usize,
    rate: Option<u64>,
    profile: Option<Arc<Profile>>,
    shard: Shard,
    sources: Vec<IpAddr>,
    timeout: Duration,
    interval: Duration,
    duration: Duration,
}

/// How long before its first request is due a connection of a `--stages` run is opened: a
/// connect (and TLS handshake) to a server on this machine took about 0.1 ms, to one across a
/// network a round trip or two; 100 ms covers that, and a ramp still opens its connections as
/// their first requests come due.
const OPEN_AHEAD: Nanos = 100_000_000;

impl Layout {
    /// With `--stages`: when (from the start) connection `local` is opened, if its first request
    /// is due later than [`OPEN_AHEAD`] into the run (`None`: before the start, as with `-R`).
    fn opens_later(&self, local: usize) -> Option<Nanos> {
        self.profile.as_ref()?;
        let first_due = self.schedule(0, local)?.intended(0);
        (first_due > OPEN_AHEAD).then(|| first_due - OPEN_AHEAD)
    }

    /// The schedule of this worker's connection `local` (`None`: closed loop).
    fn schedule(&self, t0: Nanos, local: usize) -> Option<Schedule> {
        self.rate.map(|rate| {
            let local = self.first_connection + local;
            let schedule = Schedule::of_shard(t0, self.shard, local, self.total_connections, rate)
                .lasting(self.duration);
            match &self.profile {
                Some(profile) => schedule.following(profile),
                None => schedule,
            }
        })
    }
}

impl HttpWorker {
    /// The state this worker's connections share, its multiplexed protocol, and the rest.
    fn into_parts(self, ctx: &WorkerContext<HttpGauges>) -> (Rc<Shared>, Mux, Layout) {
        let hooks = self
            .script
            .as_ref()
            .map(ThreadScript::hooks)
            .unwrap_or_default();
        let shared = Rc::new(Shared {
            endpoint: self.endpoint,
            requests: match (self.static_batch, &self.script) {
                (Some(batch), _) => Requests::Static(Rc::new(batch)),
                (None, script) => Requests::Script {
                    pipeline: script.as_ref().map_or(1, ThreadScript::pipeline),
                },
            },
            script: self.script,
            hooks,
            stop: Cell::new(false),
            stop_wake: Notify::new(),
            script_error: RefCell::new(None),
            recorder: self.recorded,
            pacer: Rc::clone(&ctx.pacer),
            watchdog: Watchdog::new(self.timeout),
            record_all: self.record_all,
            over_limits: self.over_limits,
            gauges: std::sync::Arc::clone(&ctx.gauges),
            http2: Rc::default(),
            http3: Rc::default(),
            log: self.log.map(RefCell::new),
            conns: Cell::new(self.first_connection as u32),
        });
        let mux = self.mux.map(|(protocol, fixed)| {
            let requests = Rc::new(MuxRequests {
                fixed: fixed.map(|all| all.into_iter().map(Rc::new).collect()),
                scheme: self.scheme,
                authority: self.authority,
            });
            let protocol = match protocol {
                Multiplexed::H2(settings) => Protocol::H2(settings),
                Multiplexed::H3(streams, client) => {
                    Protocol::H3(streams, H3Worker::new(client, streams))
                }
            };
            (protocol, requests)
        });
        let layout = Layout {
            first_connection: self.first_connection,
            connections: self.connections,
            total_connections: self.total_connections,
            rate: self.rate,
            profile: self.profile,
            shard: self.shard,
            sources: self.sources,
            timeout: self.timeout,
            interval: self.interval,
            duration: self.duration,
        };
        (shared, mux, layout)
    }
}

/// Opens every connection (a QUIC one for HTTP/3), each within `timeout`, all at once; those
/// that open later (`opens_later`) are left to open themselves.
async fn connect_all(
    shared: &Rc<Shared>,
    mux: &Mux,
    sources: &[Option<IpAddr>],
    opens_later: &[Option<Nanos>],
    timeout: Duration,
) -> Vec<Opened> {
    let handles: Vec<_> = sources
        .iter()
        .zip(opens_later)
        .map(|(&source, later)| {
            let shared = Rc::clone(shared);
            let quic = match mux {
                Some((Protocol::H3(_, quic), _)) => Some(Rc::clone(quic)),
                _ => None,
            };
            let now = later.is_none();
            tokio::task::spawn_local(async move {
                match quic {
                    _ if !now => Opened::Stream(None),
                    None => Opened::Stream(
                        tokio::time::timeout(timeout, shared.connect(source))
                            .await
                            .ok()
                            .and_then(Result::ok),
                    ),
                    Some(quic) => Opened::Quic(
                        tokio::time::timeout(timeout, quic.connect(&shared, source))
                            .await
                            .ok()
                            .and_then(Result::ok),
                    ),
                }
            })
        })
        .collect();
    let mut opened = Vec::with_capacity(handles.len());
    for handle in handles {
        opened.push(handle.await.unwrap_or(Opened::Stream(None)));
    }
    opened
}

/// A connection to start: what was opened of it, its source address, its schedule, and when
/// it opens itself if not opened yet (`None`: at once).
type ToStart = (Opened, Option<IpAddr>, Option<Schedule>, Option<Nanos>);

/// Starts one connection's paced life in its protocol: its progress, to read from outside it
/// (`None` for a QUIC connection without HTTP/3, which cannot happen).
fn start(
    shared: Rc<Shared>,
    mux: &Mux,
    (opened, source, schedule, not_before): ToStart,
) -> Option<Rc<Progress>> {
    Some(match (mux, opened) {
        (None, Opened::Stream(stream)) => {
            let conn = Connection::new(shared, schedule, stream, source);
            let progress = conn.progress();
            spawn_at(not_before, conn.run());
            progress
        }
        (Some((Protocol::H2(settings), requests)), Opened::Stream(stream)) => {
            let wire = H2Wire::new(*settings, stream);
            let requests = Rc::clone(requests);
            let streams = settings.streams;
            let conn = MuxConnection::new(shared, wire, streams, requests, schedule, source);
            spawn_mux(conn, not_before)
        }
        (Some((Protocol::H3(streams, quic), requests)), opened) => {
            let ready = match opened {
                Opened::Quic(ready) => ready,
                Opened::Stream(_) => None,
            };
            let wire = H3Wire::new(Rc::clone(quic), ready);
            let requests = Rc::clone(requests);
            let streams = *streams;
            let conn = MuxConnection::new(shared, wire, streams, requests, schedule, source);
            spawn_mux(conn, not_before)
        }
        (_, Opened::Quic(_)) => return None,
    })
}

/// Until the run's shutdown, or until the script stops this worker.
async fn wait_for_end(ctx: &WorkerContext<HttpGauges>, shared: &Shared) {
    let mut shutdown = ctx.shutdown();
    loop {
        if *shutdown.borrow_and_update() || shared.stop.get() {
            break;
        }
        tokio::select! {
            changed = shutdown.changed() => if changed.is_err() { break },
            _ = shared.stop_wake.notified() => {}
        }
    }
}

/// The worker's record at its end: the requests never sent, its protocol's counters, and a
/// script error (which ends the whole run).
fn finish(
    ctx: &WorkerContext<HttpGauges>,
    shared: &Shared,
    mux: &Mux,
    scheduled: &[(Schedule, Rc<Progress>)],
) -> HttpRecord {
    count_unsent(scheduled, &mut shared.recorder.borrow_mut());
    // A script error ends the whole run; `thread:stop()` ends this worker only.
    if shared.script_error.borrow().is_some() {
        ctx.end_run();
    }
    // The connection tasks are cancelled with the worker's LocalSet (in-flight requests are
    // not counted).
    match mux {
        Some((Protocol::H2(_), _)) => {
            let counters = shared.http2.take();
            shared.recorder.borrow_mut().counters.http2 = Some(counters);
        }
        Some((Protocol::H3(_, quic), _)) => {
            quic.finish(shared);
            let counters = shared.http3.take();
            shared.recorder.borrow_mut().counters.http3 = Some(counters);
        }
        None => {}
    }
    let recorder = shared.recorder.take();
    HttpRecord {
        recorder,
        script_error: shared.script_error.take(),
    }
}

/// Starts a multiplexed connection's paced life on the worker: its progress, to read from
/// outside it.
fn spawn_mux<W: Wire>(conn: MuxConnection<W>, not_before: Option<Nanos>) -> Rc<Progress> {
    let progress = conn.progress();
    spawn_at(not_before, conn.run());
    progress
}

/// Runs `task` on the worker, from `not_before` (CLOCK_MONOTONIC) on when given.
fn spawn_at(not_before: Option<Nanos>, task: impl std::future::Future<Output = ()> + 'static) {
    match not_before {
        None => drop(tokio::task::spawn_local(task)),
        Some(at) => drop(tokio::task::spawn_local(async move {
            let wait = at.saturating_sub(clock::now());
            tokio::time::sleep(Duration::from_nanos(wait)).await;
            task.await;
        })),
    }
}

/// A worker's protocol with several streams per connection, ready to open connections.
enum Protocol {
    H2(Http2),
    H3(usize, Rc<H3Worker>),
}

/// A connection opened before the start gate.
enum Opened {
    Stream(Option<crate::net::stream::Stream>),
    Quic(Option<crate::net::http3::Opened>),
}

/// Closes each interval at its end, also when no response comes then to close it (a stall,
/// only errors): one timer per worker and interval, off the requests' path.
async fn close_intervals(recorder: Kept<Recorder>, intervals: IntervalClock) {
    let mut index = 0;
    loop {
        let ends_at = intervals.end_of(index);
        tokio::time::sleep(Duration::from_nanos(ends_at.saturating_sub(clock::now()))).await;
        let now = clock::now();
        recorder.borrow_mut().roll_to(now);
        index = intervals.index(now);
    }
}

/// Counts the requests that fell due but were never sent, by why (with `--stages` also in the
/// stage each was due in): all those due before now, but on a connection with a request in
/// flight only those already due when it was sent (the later ones queue behind a response the
/// end of the run cut short, see [`Progress::in_flight_since`]). Of those, the ones due after
/// the server would have freed their connection had tsumo sent on time
/// ([`Progress::on_time_free`]; a request in flight since `s` holds it until the run's end, from
/// its on-time send) are tsumo's own, `late`; the rest waited on the server, `busy`.
fn count_unsent(scheduled: &[(Schedule, Rc<Progress>)], recorder: &mut Recorder) {
    let end = clock::now();
    for (schedule, progress) in scheduled {
        let sent = progress.sent.get();
        // The connection's requests [sent, due before `until`), never sent for `why`.
        let mut unsent = |until: Nanos, late: u64, why: fn(&mut Unsent) -> &mut u64| {
            let due = schedule.due_before(until).max(sent);
            let ranges = [(sent, due - late, why), (due - late, due, late_of as _)];
            for (from, to, why) in ranges {
                *why(&mut recorder.counters.unsent) += to - from;
                if let Some(stages) = recorder.stages.as_mut() {
                    stages.add_unsent((from, to), |t| schedule.due_before(t), why);
                }
            }
        };
        match progress.down.get() {
            None => {
                let in_flight = progress.in_flight_since.get();
                let until = in_flight.map_or(end, |sent| sent.min(end));
                let missing = schedule.due_before(until).saturating_sub(sent);
                let late = progress.on_time_free.get().map_or(0, |on_time| {
                    // Held until the run's end at most: a stall past it is tsumo's.
                    let held =
                        in_flight.map_or(0, |sent| end.min(schedule.end).saturating_sub(sent));
                    let tsumos_from = on_time.saturating_add(held);
                    let due_after = schedule
                        .due_before(until)
                        .saturating_sub(schedule.due_before(tsumos_from));
                    due_after.min(missing)
                });
                unsent(until, late, |u| &mut u.busy);
            }
            Some(Down::ConnectFailed) => unsent(end, 0, |u| &mut u.connect_failed),
            Some(Down::ConnectTimedOut) => unsent(end, 0, |u| &mut u.connect_timeout),
        }
    }
}

/// Where a request tsumo itself left unsent is counted.
fn late_of(unsent: &mut Unsent) -> &mut u64 {
    &mut unsent.late
}
