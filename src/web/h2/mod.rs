//! One HTTP/2 connection's paced life, on hyper: the same per-connection schedule as HTTP/1.1
//! (`t0 + k·interval`), with up to `-m` streams in flight at once. A request that falls due
//! while all `-m` streams are busy waits for one to end; it keeps its intended send time, so
//! that wait is in the corrected latency (and counted as due while busy), as for HTTP/1.1.
//!
//! The connection's task drives its streams itself (a `FuturesUnordered` of hyper's response
//! futures, each reading its body and recording), in every wait — for the next send time, for a
//! free stream, for a reconnect — so a response is timestamped when it arrives, and no task is
//! spawned per request beyond hyper's own. A server that sends GOAWAY, or closes, gets no new
//! streams: the next request goes on a new connection while the old one's streams finish.
//!
//! A connection opens no stream past the limit its server grants now, which a later SETTINGS
//! may lower (to 0 even): the request waits for one of that connection's streams to end, or for
//! the limit to rise, keeping its intended time, as it waits for `-m`. The limit is the one the
//! frame observer saw last, so it is never older than hyper's own. (A stream handed to hyper in
//! the instant before the lowering SETTINGS is read can still be written after hyper's ACK of it.)
//!
//! A request the server did not process — hyper handed it back unsent, the server refused its
//! stream (REFUSED_STREAM) or its stream was above a GOAWAY's last stream id (RFC 9113, section
//! 8.7) — goes again on a new connection with its intended time kept, up to [`MAX_TRIES`] times
//! in all; then it is counted as a read error.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::net::IpAddr;
use std::rc::Rc;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use http::uri::Scheme;

use super::live::{Down, Progress};
use super::pace::Turn;
use super::shared::Shared;
use crate::net::http1::request::Batch;
use crate::net::http2::frames::FrameLog;
use crate::net::http2::request::H2Request;
use crate::net::http2::{self, Sender};
use crate::net::stream::Stream;
use crate::plan::Http2;
use crate::script::ScriptError;
use crate::timing::clock::{self, Nanos};
use crate::timing::deadline::Deadline;
use crate::timing::schedule::Schedule;
use stream::{exchange, Sending};

/// Tries of a request the server did not process.
const MAX_TRIES: u8 = 3;
const MIN_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// Where an HTTP/2 connection's requests come from, besides what [`Shared`] knows.
pub struct H2Requests {
    /// The requests sent every time, parsed once per worker (`None`: the script's
    /// `request()` makes each one).
    pub fixed: Option<Vec<Rc<H2Request>>>,
    /// What completes a script's request without a Host header.
    pub scheme: Scheme,
    pub authority: String,
}

mod stream;

/// A request to send, with what it carries from an earlier try.
struct Pending {
    request: Rc<H2Request>,
    /// `Some`: a retry, due at this time already.
    intended: Option<Nanos>,
    tries: u8,
}

/// The streams of one connection in flight: what is left of them once they end.
struct Flight {
    busy: Cell<usize>,
    /// When a stream last ended (a request waiting for a slot was due since then at least).
    freed_at: Cell<Nanos>,
    /// Deadline slots (`--timeout`), one per stream.
    slots: RefCell<Vec<Rc<Deadline>>>,
    /// Requests the server did not process, with their intended send times: sent again.
    unsent: RefCell<VecDeque<Pending>>,
    /// Set when a request came back unprocessed: open a new connection.
    stale: Cell<bool>,
}

impl Flight {
    /// A stream ended: its slot is free again, and its request goes again if it must.
    fn ended(&self, (slot, retry, at): Ended) {
        self.slots.borrow_mut().push(slot);
        self.busy.set(self.busy.get().saturating_sub(1));
        self.freed_at.set(at);
        if let Some(retry) = retry {
            self.unsent.borrow_mut().push_back(retry);
            self.stale.set(true);
        }
    }
}

/// One open connection: hyper's sender, what the observer saw, and its streams in flight.
struct Live {
    sender: Sender,
    log: Rc<FrameLog>,
    /// This connection's streams in flight (`Flight::busy` also counts earlier connections').
    open: Rc<Cell<usize>>,
}

impl Live {
    /// Neither closed nor going away: new streams may start on it.
    fn usable(&self) -> bool {
        !self.sender.is_closed() && !self.log.going_away()
    }
}

/// What a finished stream hands back: its deadline slot, its request if it goes again, and when
/// it ended.
type Ended = (Rc<Deadline>, Option<Pending>, Nanos);

/// Runs `wait` to completion while driving the connection's streams.
async fn driving<W, S>(inflight: &mut FuturesUnordered<S>, flight: &Flight, wait: W) -> W::Output
where
    W: Future,
    S: Future<Output = Ended>,
{
    tokio::pin!(wait);
    loop {
        tokio::select! {
            biased;
            Some(ended) = inflight.next(), if !inflight.is_empty() => flight.ended(ended),
            output = &mut wait => return output,
        }
    }
}

/// One HTTP/2 connection and its schedule.
pub struct H2Connection {
    shared: Rc<Shared>,
    settings: Http2,
    requests: Rc<H2Requests>,
    schedule: Option<Schedule>,
    stream: Option<Stream>,
    /// The `--bind` source address, kept through reconnects.
    source: Option<IpAddr>,
    next: u64,
    /// Requests of the current batch not yet sent, and the next fixed request's index.
    queue: VecDeque<Rc<H2Request>>,
    next_fixed: usize,
    /// The buffer a script's `request()` fills.
    own_batch: Rc<Batch>,
    connect_deadline: Rc<Deadline>,
    progress: Rc<Progress>,
    /// The stream limit the last connection was granted: assumed for the next one until its
    /// server's SETTINGS arrive.
    expected_streams: usize,
}

impl H2Connection {
    pub fn new(
        shared: Rc<Shared>,
        settings: Http2,
        requests: Rc<H2Requests>,
        schedule: Option<Schedule>,
        stream: Option<Stream>,
        source: Option<IpAddr>,
    ) -> Self {
        H2Connection {
            source,
            connect_deadline: shared.watchdog.slot(),
            shared,
            settings,
            requests,
            schedule,
            stream,
            next: 0,
            queue: VecDeque::new(),
            next_fixed: 0,
            own_batch: Rc::new(Batch {
                bytes: Vec::new(),
                head: Vec::new(),
            }),
            progress: Rc::default(),
            expected_streams: settings.streams,
        }
    }

    pub fn progress(&self) -> Rc<Progress> {
        Rc::clone(&self.progress)
    }

    /// Runs until the task is dropped (the worker's shutdown) or the script stops the worker.
    pub async fn run(mut self) {
        let streams = self.settings.streams;
        let flight = Flight {
            busy: Cell::new(0),
            freed_at: Cell::new(0),
            slots: RefCell::new((0..streams).map(|_| self.shared.watchdog.slot()).collect()),
            unsent: RefCell::default(),
            stale: Cell::new(false),
        };
        let mut inflight = FuturesUnordered::new();
        let mut conn: Option<Live> = None;
        let mut backoff = MIN_BACKOFF;
        while !self.shared.stop.get() {
            let done = self.schedule.is_some_and(|s| !s.in_run(self.next));
            if done && flight.unsent.borrow().is_empty() {
                // Every request due before the run's end is sent: its streams finish (one the
                // server hands back goes again), then the connection idles until the shutdown.
                match inflight.next().await {
                    Some(ended) => flight.ended(ended),
                    None => return std::future::pending().await,
                }
                continue;
            }
            let usable = conn.as_ref().is_some_and(Live::usable);
            if !usable || flight.stale.replace(false) {
                if let Some(granted) = conn.take().and_then(|live| live.log.granted()) {
                    let limit = granted.map_or(usize::MAX, |n| n as usize);
                    self.expected_streams = self.settings.streams.min(limit).max(1);
                }
                match driving(&mut inflight, &flight, self.open()).await {
                    Some(opened) => {
                        conn = Some(opened);
                        backoff = MIN_BACKOFF;
                    }
                    None => {
                        // Not sent, so the schedule does not advance (as for HTTP/1.1).
                        let pause = tokio::time::sleep(backoff);
                        driving(&mut inflight, &flight, pause).await;
                        backoff = (backoff * 2).min(MAX_BACKOFF);
                        continue;
                    }
                }
            }
            let retry = flight.unsent.borrow_mut().pop_front();
            let pending = match retry {
                Some(retry) => retry,
                None => match self.next_request() {
                    Ok(pending) => pending,
                    Err(e) => {
                        self.shared.stop_worker(Some(e));
                        return;
                    }
                },
            };
            let (intended, free, sent) = self
                .wait_turn(&pending, &mut inflight, &flight, conn.as_ref())
                .await;
            let Some(live) = conn.as_mut() else {
                continue;
            };
            // A slot is free: fewer than `streams` are busy.
            let Some(slot) = flight.slots.borrow_mut().pop() else {
                continue;
            };
            let response = live.sender.try_send_request(pending.request.to_request());
            if pending.intended.is_none() {
                self.next += 1;
                self.progress.sent.set(self.next);
            }
            flight.busy.set(flight.busy.get() + 1);
            live.open.set(live.open.get() + 1);
            inflight.push(exchange(
                Rc::clone(&self.shared),
                slot,
                Rc::clone(&live.log),
                Rc::clone(&live.open),
                response,
                Sending {
                    request: pending.request,
                    intended,
                    free,
                    sent,
                    tries: pending.tries + 1,
                },
            ));
        }
    }

    /// Opens a connection and starts HTTP/2 on it; `None` when either failed (counted).
    async fn open(&mut self) -> Option<Live> {
        let stream = match self.stream.take() {
            Some(stream) => stream,
            None => {
                let connect =
                    self.shared
                        .connect_within(&self.connect_deadline, self.source, &self.progress);
                connect.await?
            }
        };
        let log = FrameLog::new(Rc::clone(&self.shared.http2));
        let opened = http2::handshake(
            stream,
            &self.settings,
            self.expected_streams,
            Rc::clone(&log),
        );
        match opened.await {
            Ok(sender) => {
                self.progress.down.set(None);
                Some(Live {
                    sender,
                    log,
                    open: Rc::default(),
                })
            }
            Err(_) => {
                self.shared.count_connect_error();
                self.progress.down.set(Some(Down::ConnectFailed));
                None
            }
        }
    }

    /// The next new request: the next of the fixed ones, or of the script's `request()`.
    fn next_request(&mut self) -> Result<Pending, ScriptError> {
        if let Some(fixed) = &self.requests.fixed {
            let request = Rc::clone(&fixed[self.next_fixed % fixed.len()]);
            self.next_fixed = self.next_fixed.wrapping_add(1);
            return Ok(Pending {
                request,
                intended: None,
                tries: 0,
            });
        }
        if self.queue.is_empty() {
            let batch = self.shared.next_batch(&mut self.own_batch)?;
            let parsed = H2Request::parse_all(
                &batch.bytes,
                &self.requests.scheme,
                &self.requests.authority,
            )
            .map_err(|e| ScriptError(format!("request() returned an invalid request: {e}")))?;
            self.queue.extend(parsed.into_iter().map(Rc::new));
        }
        match self.queue.pop_front() {
            Some(request) => Ok(Pending {
                request,
                intended: None,
                tries: 0,
            }),
            None => Err(ScriptError("request() returned no request".into())),
        }
    }

    /// The streams `live` may have open now: `-m`, or fewer if its server granted fewer.
    fn stream_limit(&self, live: &Live) -> usize {
        let granted = match live.log.granted() {
            // Before the server's SETTINGS: what hyper was told to assume.
            None => self.expected_streams,
            Some(None) => usize::MAX,
            Some(Some(n)) => n as usize,
        };
        granted.min(self.settings.streams)
    }

    /// Waits until the request is due and a stream is free (fewer than `-m` busy, and fewer
    /// than the connection's server grants now); returns its intended time, when a stream became free for it (0: one was), and its actual send time,
    /// recording how late tsumo itself was.
    async fn wait_turn<S: Future<Output = Ended>>(
        &self,
        pending: &Pending,
        inflight: &mut FuturesUnordered<S>,
        flight: &Flight,
        live: Option<&Live>,
    ) -> (Nanos, Nanos, Nanos) {
        let streams = self.settings.streams;
        let think = match pending.intended {
            Some(_) => 0,
            None => match self.shared.think_time() {
                Ok(think) => think,
                Err(e) => {
                    self.shared.stop_worker(Some(e));
                    0
                }
            },
        };
        let turn = match pending.intended {
            Some(intended) => Turn::again(intended, self.schedule.is_some()),
            None => Turn::next(self.schedule.as_ref(), self.next, think),
        };
        let slept = match turn.wait(&self.shared.pacer) {
            Some(due) => {
                driving(inflight, flight, due).await;
                true
            }
            None => false,
        };
        let mut waited = false;
        loop {
            // A connection going away takes no stream: the request is handed back and goes on
            // the next one.
            let granted_all = live
                .is_some_and(|live| live.usable() && live.open.get() >= self.stream_limit(live));
            if flight.busy.get() < streams && !granted_all {
                break;
            }
            waited = true;
            let raised = async {
                if let Some(live) = live {
                    live.log.changed().await;
                }
            };
            tokio::select! {
                biased;
                Some(ended) = inflight.next(), if !inflight.is_empty() => flight.ended(ended),
                () = raised, if granted_all => flight.freed_at.set(clock::now()),
                // All streams busy yet none in flight cannot be; never spin on it.
                else => break,
            }
        }
        let (intended, sent) = turn.sent(slept || waited);
        let freed_at = if waited { flight.freed_at.get() } else { 0 };
        // A request sent again had its lateness recorded on its first try.
        let mut rec = self.shared.recorder.borrow_mut();
        if pending.intended.is_none() {
            turn.record_lateness(&mut rec, freed_at, sent);
        }
        rec.count_sent(1);
        (intended, freed_at, sent)
    }
}
