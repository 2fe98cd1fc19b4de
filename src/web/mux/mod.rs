//! One multiplexed connection's paced life — HTTP/2 on hyper ([`h2`]) or HTTP/3 on quinn and h3
//! ([`h3`]), each a [`Wire`] — with the same per-connection schedule as HTTP/1.1
//! (`t0 + k·interval`) and up to `-m` streams in flight at once. A request that falls due
//! while all `-m` streams are busy waits for one to end; it keeps its intended send time, so
//! that wait is in the corrected latency (and counted as due while busy), as for HTTP/1.1.
//!
//! The connection's task drives its streams itself (a `FuturesUnordered` of the wire's
//! exchanges, each reading its response and recording), in every wait — for the next send time,
//! for a free stream, for a reconnect — so a response is timestamped when it arrives, and no task
//! is spawned per request beyond the protocol library's own. A server that says it is going away
//! (GOAWAY), or closes, gets no new streams: the next request goes on a new connection while the
//! old one's streams finish.
//!
//! A connection opens no stream past the limit its server grants now, which may fall (to 0
//! even): the request waits for one of that connection's streams to end, or for the limit to
//! rise, keeping its intended time, as it waits for `-m`. HTTP/2's limit is the one its frame
//! observer saw last, so it is never older than hyper's own; QUIC's is kept by quinn, which
//! holds a stream back until the server grants it (the wait is in the latency all the same).
//!
//! A request the server did not process — handed back unsent, its stream refused or rejected
//! (REFUSED_STREAM, H3_REQUEST_REJECTED), or above a GOAWAY's last stream id (RFC 9113, section
//! 8.7; RFC 9114, section 5.2) — goes again on a new connection with its intended time kept, up
//! to [`MAX_TRIES`] times in all; then it is counted as a read error.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::net::IpAddr;
use std::rc::Rc;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use http::uri::Scheme;

use super::gauges::Progress;
use super::pace::Turn;
use super::shared::Shared;
use crate::net::http1::request::Batch;
use crate::net::http2::request::H2Request;
use crate::script::ScriptError;
use crate::stats::http::split::ServerFree;
use crate::stats::requests::writer::Place;
use crate::timing::clock::{self, Nanos};
use crate::timing::deadline::Deadline;
use crate::timing::schedule::Schedule;
use record::{exchange, Sending};

/// Tries of a request the server did not process.
const MAX_TRIES: u8 = 3;
const MIN_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// Where a multiplexed connection's requests come from, besides what [`Shared`] knows.
pub struct MuxRequests {
    /// The requests sent every time, parsed once per worker (`None`: the script's
    /// `request()` makes each one).
    pub fixed: Option<Vec<Rc<H2Request>>>,
    /// What completes a script's request without a Host header.
    pub scheme: Scheme,
    pub authority: String,
}

pub mod h2;
pub mod h3;
mod record;

/// A protocol's connections, as one connection of the run opens them again and again.
pub trait Wire: 'static {
    type Conn: Conn;

    /// The id of a connection's `k`th stream (from 0) as the client numbers them: its request
    /// streams' ids go up in the order they are opened (RFC 9113, section 5.1.1; RFC 9000,
    /// section 2.1).
    fn stream_id(k: u64) -> u64;

    /// Opens a connection (counting it, or its failure); `None` when it failed, and `progress`
    /// says why the connection is down.
    fn open(
        &mut self,
        shared: &Rc<Shared>,
        deadline: &Deadline,
        source: Option<IpAddr>,
        progress: &Progress,
    ) -> impl Future<Output = Option<Self::Conn>>;

    /// Done with a connection: it is replaced, or it went away.
    fn retire(&mut self, conn: Self::Conn);
}

/// One open connection of a [`Wire`].
pub trait Conn {
    /// What the stream's record reads of the connection once the stream ended.
    type Tally: Tally + 'static;

    /// Neither closed nor going away: new streams may start on it.
    fn usable(&self) -> bool;

    /// The streams its server grants now, when tsumo must keep to it itself (`None`: no such
    /// limit, or the library keeps it).
    fn granted(&self) -> Option<usize>;

    /// Resolves when the limit may have risen, or the connection went away.
    fn changed(&self) -> impl Future<Output = ()> + '_;

    /// Its streams in flight now.
    fn open_streams(&self) -> &Rc<Cell<usize>>;

    /// Starts a stream for `request`: its exchange (the response read, with its headers and
    /// body kept when `collect`), and the tally to read when it ended.
    fn send(
        &mut self,
        request: &H2Request,
        collect: bool,
    ) -> (impl Future<Output = StreamEnd> + 'static, Self::Tally);
}

/// What the record of a stream reads of its connection once the stream ended.
pub trait Tally {
    /// When the response's last byte was received, by the kernel's stamp.
    fn received(&self) -> Received;
    /// Bytes read and written since the last call.
    fn take_bytes(&self) -> (u64, u64);
    /// When the first write at or after the request's hand-off returned, where the wire sees
    /// its writes (the send stamp's correction, [`crate::stats::http::split::send_stamp`]).
    fn written(&self) -> Option<Nanos> {
        None
    }
}

/// One stream's bytes, as HTTP/2 and HTTP/3 runs count them alike: each message's header fields
/// as `name: value` lines (the pseudo-headers among them, the head closed by an empty line) and
/// its body. Neither protocol's framing nor its header compression (HPACK, QPACK) is counted, so
/// the same responses read the same `Transfer/sec` over either (HTTP/2's wire bytes read 1.2×
/// HTTP/3's counted fields for identical responses when each counted its own way).
#[derive(Debug, Clone, Default)]
pub struct MessageBytes {
    read: Rc<Cell<u64>>,
    written: Rc<Cell<u64>>,
}

impl MessageBytes {
    /// The request went out (its head at least): its [`H2Request::size`].
    pub fn sent(&self, size: u64) {
        self.written.set(size);
    }

    /// The response's head: `:status: 200` and its fields, each a line, then the empty line.
    pub fn head(&self, headers: &http::HeaderMap) {
        const STATUS_LINE: usize = ":status: 200\r\n".len();
        let fields: usize = headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + ": \r\n".len())
            .sum();
        self.add_read(STATUS_LINE + fields + "\r\n".len());
    }

    /// Body bytes read.
    pub fn add_read(&self, n: usize) {
        self.read.set(self.read.get() + n as u64);
    }

    /// Bytes read and written since the last call.
    pub fn take(&self) -> (u64, u64) {
        (self.read.take(), self.written.take())
    }
}

/// A response's receive stamp, as the wire knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// The kernel's stamp (CLOCK_REALTIME ns).
    Kernel(u64),
    /// The kernel stamps this wire's reads, but not this one.
    Missed,
    /// The library reads the socket itself: user-space stamps only, as the run says.
    NotKept,
}

/// How a stream ended.
pub enum StreamEnd {
    /// The status, and the headers and body when the script's `response()` wants them.
    Response(u16, Option<Kept>),
    /// The server did not process the request: it may go again.
    Unprocessed,
    Failed,
}

/// A response's headers and body, kept for the script's `response()`.
pub type Kept = (Vec<(String, Vec<u8>)>, Vec<u8>);

/// A request to send, with what it carries from an earlier try.
struct Pending {
    request: Rc<H2Request>,
    /// `Some`: a retry, due at this time already.
    intended: Option<Nanos>,
    tries: u8,
}

/// One stream slot of a connection (`-m` of them): its deadline (`--timeout`), and when it
/// would have been free had tsumo never been late (R′, stats::http::split).
struct Slot {
    deadline: Rc<Deadline>,
    free: ServerFree,
}

/// The streams of one connection in flight: what is left of them once they end.
struct Flight {
    busy: Cell<usize>,
    /// When a stream last ended (a request waiting for a slot was due since then at least).
    freed_at: Cell<Nanos>,
    /// When the current connection opened (`None` while it connects): no slot is free before
    /// (the connect is the server's, as over HTTP/1.1).
    opened_at: Cell<Option<Nanos>>,
    /// When its server last granted a stream a request waited for: no slot was free on time
    /// before (the wait is the server's).
    granted_at: Cell<Nanos>,
    /// The slots not in use.
    slots: RefCell<Vec<Slot>>,
    /// Streams opened on the current connection (their ids for the `--requests` log).
    streams_opened: Cell<u64>,
    /// Requests the server did not process, with their intended send times: sent again.
    unsent: RefCell<VecDeque<Pending>>,
    /// Set when a request came back unprocessed: open a new connection.
    stale: Cell<bool>,
    /// The connection's progress when it keeps a schedule: its [`Progress::on_time_free`] is
    /// the earliest on-time-free moment (R′) of the free slots, `None` while every slot is
    /// busy or the connection connects.
    paced: Option<Rc<Progress>>,
}

impl Flight {
    /// The free slot a request due at `intended` would have taken had tsumo never been late:
    /// one free by then, or else the one free soonest.
    fn take_slot(&self, intended: Nanos) -> Option<Slot> {
        let mut slots = self.slots.borrow_mut();
        let mut best = slots.len().checked_sub(1)?;
        for (i, slot) in slots.iter().enumerate().rev() {
            if slot.free.at() <= intended {
                best = i;
                break;
            }
            if slot.free.at() < slots[best].free.at() {
                best = i;
            }
        }
        Some(slots.swap_remove(best))
    }

    /// The slot a request takes: from its R′ on, a request due and not sent waited on no other
    /// slot (one comparison, or a scan when the earliest was taken).
    fn took(&self, slot: &Slot) {
        if let Some(progress) = &self.paced {
            if progress
                .on_time_free
                .get()
                .is_none_or(|earliest| slot.free.at() <= earliest)
            {
                self.free_on_time(progress);
            }
        }
    }

    /// [`Progress::on_time_free`] from the free slots: the earliest R′, not before the
    /// connection opened (`None` while it connects, or every slot is busy).
    fn free_on_time(&self, progress: &Progress) {
        let earliest = self.opened_at.get().and_then(|opened| {
            let slots = self.slots.borrow();
            let earliest = slots.iter().map(|slot| slot.free.at()).min()?;
            Some(earliest.max(opened).max(self.granted_at.get()))
        });
        progress.on_time_free.set(earliest);
    }

    /// A request waits for a stream: every one is busy, or its server grants no more, so no
    /// slot is free on time until one ends or the server grants one.
    fn held(&self) {
        if let Some(progress) = &self.paced {
            progress.on_time_free.set(None);
        }
    }

    /// A stream ended: its slot is free again, and its request goes again if it must.
    fn ended(&self, (slot, retry, at): Ended) {
        if let (Some(progress), Some(opened)) = (&self.paced, self.opened_at.get()) {
            let free = slot.free.at().max(opened).max(self.granted_at.get());
            let earliest = progress.on_time_free.get().map_or(free, |t| t.min(free));
            progress.on_time_free.set(Some(earliest));
        }
        self.slots.borrow_mut().push(slot);
        self.busy.set(self.busy.get().saturating_sub(1));
        self.freed_at.set(at);
        if let Some(retry) = retry {
            self.unsent.borrow_mut().push_back(retry);
            self.stale.set(true);
        }
    }
}

/// What a finished stream hands back: its slot, its request if it goes again, and when it ended.
type Ended = (Slot, Option<Pending>, Nanos);

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

/// One multiplexed connection of the run and its schedule, on wire `W`.
pub struct MuxConnection<W: Wire> {
    shared: Rc<Shared>,
    wire: W,
    /// `-m`.
    streams: usize,
    requests: Rc<MuxRequests>,
    schedule: Option<Schedule>,
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
    /// This connection's number (the `--requests` log's `conn`).
    number: u32,
}

impl<W: Wire> MuxConnection<W> {
    pub fn new(
        shared: Rc<Shared>,
        wire: W,
        streams: usize,
        requests: Rc<MuxRequests>,
        schedule: Option<Schedule>,
        source: Option<IpAddr>,
    ) -> Self {
        MuxConnection {
            number: shared.connection_number(),
            source,
            connect_deadline: shared.watchdog.slot(),
            shared,
            wire,
            streams,
            requests,
            schedule,
            next: 0,
            queue: VecDeque::new(),
            next_fixed: 0,
            own_batch: Rc::new(Batch {
                bytes: Vec::new(),
                head: Vec::new(),
            }),
            progress: Rc::default(),
        }
    }

    pub fn progress(&self) -> Rc<Progress> {
        Rc::clone(&self.progress)
    }

    /// Runs until the task is dropped (the worker's shutdown) or the script stops the worker.
    pub async fn run(mut self) {
        let flight = self.flight();
        let mut inflight = FuturesUnordered::new();
        let mut conn: Option<W::Conn> = None;
        let mut backoff = MIN_BACKOFF;
        while !self.shared.stop.get() {
            let done = self.schedule.as_ref().is_some_and(|s| !s.in_run(self.next));
            if done && flight.unsent.borrow().is_empty() {
                // Every request due before the run's end is sent: its streams finish (one the
                // server hands back goes again), then the connection idles until the shutdown.
                match inflight.next().await {
                    Some(ended) => flight.ended(ended),
                    None => return std::future::pending().await,
                }
                continue;
            }
            // Read (and cleared) whether or not the connection is usable: a request handed back
            // by one that went away needs one new connection, not two.
            let stale = flight.stale.replace(false);
            let usable = conn.as_ref().is_some_and(Conn::usable);
            if (!usable || stale)
                && !self
                    .reopen(&mut conn, &mut inflight, &flight, &mut backoff)
                    .await
            {
                continue;
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
            let (intended, granted_at, sent) = self
                .wait_turn(&pending, &mut inflight, &flight, conn.as_ref())
                .await;
            let Some(live) = conn.as_mut() else {
                continue;
            };
            if !live.usable() {
                // It went away while the request waited (HTTP/3 learns of a GOAWAY from a stream
                // that failed).
                self.requeue(pending, intended, &flight);
                continue;
            }
            // A slot is free: fewer than `streams` are busy.
            let Some(mut slot) = flight.take_slot(intended) else {
                continue;
            };
            flight.took(&slot);
            // Not free before the connection opened, nor before its server granted a stream.
            let opened_at = flight.opened_at.get().unwrap_or(0);
            slot.free.not_before(opened_at.max(granted_at));
            let free = slot.free.at();
            let (response, tally) = live.send(&pending.request, self.shared.hooks.response);
            let k = flight
                .streams_opened
                .replace(flight.streams_opened.get() + 1);
            let place = Place {
                conn: self.number,
                stream: Some(W::stream_id(k)),
                seq: self.next,
            };
            if pending.intended.is_none() {
                self.next += 1;
                self.progress.sent.set(self.next);
            }
            flight.busy.set(flight.busy.get() + 1);
            let open = Rc::clone(live.open_streams());
            open.set(open.get() + 1);
            inflight.push(exchange(
                Rc::clone(&self.shared),
                slot,
                tally,
                open,
                response,
                Sending {
                    request: pending.request,
                    intended,
                    free,
                    sent,
                    tries: pending.tries + 1,
                    place,
                },
            ));
        }
    }

    /// A connection's streams: every slot free, none in flight.
    fn flight(&self) -> Flight {
        Flight {
            busy: Cell::new(0),
            freed_at: Cell::new(0),
            opened_at: Cell::new(None),
            granted_at: Cell::new(0),
            slots: RefCell::new(
                (0..self.streams)
                    .map(|_| Slot {
                        deadline: self.shared.watchdog.slot(),
                        free: ServerFree::default(),
                    })
                    .collect(),
            ),
            unsent: RefCell::default(),
            streams_opened: Cell::new(0),
            stale: Cell::new(false),
            paced: self.schedule.as_ref().map(|_| Rc::clone(&self.progress)),
        }
    }

    /// Opens a new connection in place of `conn` (retired), the streams in flight going on
    /// meanwhile; `false` when it could not, after a pause of `backoff` (doubled for the next).
    async fn reopen<S: Future<Output = Ended>>(
        &mut self,
        conn: &mut Option<W::Conn>,
        inflight: &mut FuturesUnordered<S>,
        flight: &Flight,
        backoff: &mut Duration,
    ) -> bool {
        if let Some(old) = conn.take() {
            self.wire.retire(old);
        }
        // While it connects, the server holds the connection.
        flight.opened_at.set(None);
        flight.streams_opened.set(0);
        if let Some(progress) = &flight.paced {
            progress.on_time_free.set(None);
        }
        let opening = self.wire.open(
            &self.shared,
            &self.connect_deadline,
            self.source,
            &self.progress,
        );
        match driving(inflight, flight, opening).await {
            Some(opened) => {
                *conn = Some(opened);
                flight.opened_at.set(Some(clock::now()));
                if let Some(progress) = &flight.paced {
                    flight.free_on_time(progress);
                }
                *backoff = MIN_BACKOFF;
                true
            }
            None => {
                // Not sent, so the schedule does not advance (as for HTTP/1.1).
                let pause = tokio::time::sleep(*backoff);
                driving(inflight, flight, pause).await;
                *backoff = (*backoff * 2).min(MAX_BACKOFF);
                false
            }
        }
    }

    /// A request whose connection went away while it waited: it goes on the next connection,
    /// its intended time kept.
    fn requeue(&mut self, pending: Pending, intended: Nanos, flight: &Flight) {
        if pending.intended.is_none() {
            self.next += 1;
            self.progress.sent.set(self.next);
        }
        flight.unsent.borrow_mut().push_back(Pending {
            intended: Some(intended),
            ..pending
        });
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
    fn stream_limit(&self, live: &W::Conn) -> usize {
        live.granted().unwrap_or(usize::MAX).min(self.streams)
    }

    /// Waits until the request is due and a stream is free (fewer than `-m` busy, and fewer
    /// than the connection's server grants now); returns its intended time, when its server
    /// granted it a stream (0: it did not wait for a grant), and its actual send time, recording
    /// how late tsumo itself was.
    async fn wait_turn<S: Future<Output = Ended>>(
        &self,
        pending: &Pending,
        inflight: &mut FuturesUnordered<S>,
        flight: &Flight,
        live: Option<&W::Conn>,
    ) -> (Nanos, Nanos, Nanos) {
        let streams = self.streams;
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
        let mut granted_at = 0;
        loop {
            // A connection going away takes no stream: the request is handed back and goes on
            // the next one.
            let granted_all = live.is_some_and(|live| {
                live.usable() && live.open_streams().get() >= self.stream_limit(live)
            });
            if flight.busy.get() < streams && !granted_all {
                break;
            }
            waited = true;
            flight.held();
            let raised = async {
                if let Some(live) = live {
                    live.changed().await;
                }
            };
            tokio::select! {
                biased;
                Some(ended) = inflight.next(), if !inflight.is_empty() => flight.ended(ended),
                () = raised, if granted_all => {
                    granted_at = clock::now();
                    flight.freed_at.set(granted_at);
                    flight.granted_at.set(granted_at);
                }
                // All streams busy yet none in flight cannot be; never spin on it.
                else => break,
            }
        }
        let (intended, sent) = turn.sent(slept || waited);
        let freed_at = if waited { flight.freed_at.get() } else { 0 };
        // A request sent again had its lateness recorded, and was counted as sent, on its
        // first try: `sent` counts requests, not tries.
        let mut rec = self.shared.recorder.borrow_mut();
        if pending.intended.is_none() {
            turn.record_lateness(&mut rec, freed_at, sent);
            rec.count_sent(1);
        }
        (intended, granted_at, sent)
    }
}
