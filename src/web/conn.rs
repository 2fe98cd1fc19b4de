//! One HTTP/1.1 connection's life: connect, wait for the next intended send time, write the
//! request batch, read its responses, record, repeat — reconnecting whenever the server closes,
//! resets, times out or sends garbage, and counting each failure by kind.
//!
//! A response is credited only to a request that is outstanding: bytes left over after a batch's
//! last response, or waiting on the connection before the next batch goes out, are an
//! "unsolicited response" (a protocol error) and close the connection. Otherwise a server that
//! answers twice would have its second answer timed against the next request.
//!
//! A request is sent again (on a new connection, its intended time kept) only where the server
//! cannot have seen any byte of it: a reused keep-alive connection was found closed or reset
//! before the write, or the write's first byte was refused. Once a byte of a request has left,
//! the server may have processed it, so a close or reset before its response is a read (or
//! write) error, as wrk counts it, never a silent second send (a POST would be made twice).
//! Bytes that arrive before the batch's first request is written in full cannot answer it (a
//! late second answer to an earlier request): they are an unsolicited response too.
//!
//! Latency is measured from the intended send time (corrected) and from the actual send time
//! (uncorrected). A connection that falls behind its schedule sends the next request as soon as
//! the previous response is in, so its backlog is never dropped.

use std::future::poll_fn;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

use super::gauges::Progress;
use super::pace::Turn;
use super::shared::Shared;
use crate::net::http1::request::Batch;
use crate::net::http1::response::ResponseParser;
use crate::net::stamp::{kernel_stamps, Timestamps};
use crate::net::stream::Stream;
use crate::stats::http::protocol::{excerpt, Violation};
use crate::stats::http::split::{ResponseTimes, ServerFree};
use crate::timing::clock::{self, Nanos};
use crate::timing::deadline::Deadline;
use crate::timing::schedule::Schedule;

mod rows;

use rows::RowState;

const INITIAL_BUFFER: usize = 16 * 1024;
const MAX_BUFFER: usize = crate::net::http1::response::MAX_HEAD * 2;
const MIN_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_millis(500);

/// How a batch ended.
enum Outcome {
    /// The script stopped this worker (`thread:stop()`, or an error in `response()`).
    Stopped,
    /// Every response arrived; the stream comes back if it may carry another request.
    Done(Option<Stream>),
    /// The batch goes again on a new connection, as no byte of it reached the server: a reused
    /// keep-alive connection was closed or reset before the write, or had sent bytes no request
    /// asked for (counted) while it was idle.
    Stale,
    /// The connection failed; the error is already counted and the batch's remaining responses
    /// are lost.
    Failed,
}

/// One connection and its schedule.
pub struct Connection {
    shared: Rc<Shared>,
    /// Bounds each exchange by `--timeout`.
    deadline: Rc<Deadline>,
    stream: Option<Stream>,
    /// The `--bind` source address, kept through reconnects.
    source: Option<IpAddr>,
    /// Whether the current stream has completed a response (so a close may be a stale
    /// keep-alive, not a failure).
    reused: bool,
    schedule: Option<Schedule>,
    /// Index of this connection's next request on its schedule.
    next: u64,
    parser: ResponseParser,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// A batch to send again on a new connection (the old one turned out stale), with its
    /// think time.
    retry: Option<(Rc<Batch>, Nanos)>,
    /// The buffer a script's `request()` fills, reused batch after batch.
    own_batch: Rc<Batch>,
    progress: Rc<Progress>,
    /// When the last response was received (the kernel's stamp where it stamps): when the
    /// connection became free for the next request.
    last_received: Nanos,
    /// When it would have become free had tsumo never been late (R′, stats::http::split).
    server_free: ServerFree,
    /// What its `--requests` rows need (kept whether or not the run logs).
    row: RowState,
}

impl Connection {
    /// A connection following `schedule` (`None`: closed loop), with an optional stream already
    /// open.
    /// `source`: the `--bind` address it reconnects from.
    pub fn new(
        shared: Rc<Shared>,
        schedule: Option<Schedule>,
        stream: Option<Stream>,
        source: Option<IpAddr>,
    ) -> Self {
        Connection {
            source,
            deadline: shared.watchdog.slot(),
            stream,
            reused: false,
            schedule,
            next: 0,
            parser: if shared.hooks.response {
                ResponseParser::collecting()
            } else {
                ResponseParser::new()
            },
            buf: vec![0; INITIAL_BUFFER],
            start: 0,
            end: 0,
            retry: None,
            own_batch: Rc::new(Batch {
                bytes: Vec::new(),
                head: Vec::new(),
            }),
            progress: Rc::default(),
            last_received: 0,
            server_free: ServerFree::default(),
            row: RowState::new(&shared),
            shared,
        }
    }

    /// This connection's progress along its schedule, for the end-of-run accounting.
    pub fn progress(&self) -> Rc<Progress> {
        Rc::clone(&self.progress)
    }

    /// Runs until the task is dropped (the worker's shutdown) or the script stops the worker.
    pub async fn run(mut self) {
        let mut ready_at = clock::now();
        let mut backoff = MIN_BACKOFF;
        if self.stream.is_some() {
            self.free_on_time();
        }
        while !self.shared.stop.get() {
            if self.schedule.as_ref().is_some_and(|s| !s.in_run(self.next)) {
                // Every request due before the run's end is sent: the connection stays open,
                // idle, until the shutdown drops this task.
                return std::future::pending().await;
            }
            let stream = match self.stream.take() {
                Some(stream) => stream,
                None => match self.reconnect(&mut backoff).await {
                    Some((stream, at)) => {
                        ready_at = at;
                        stream
                    }
                    None => continue,
                },
            };
            let (batch, think) = match self.retry.take() {
                Some(retry) => retry,
                None => match self.shared.think_time().and_then(|think| {
                    self.shared
                        .next_batch(&mut self.own_batch)
                        .map(|batch| (batch, think))
                }) {
                    Ok(next) => next,
                    Err(e) => {
                        self.shared.stop_worker(Some(e));
                        return;
                    }
                },
            };
            let turn = Turn::next(self.schedule.as_ref(), self.next, think);
            let waited = match turn.wait(&self.shared.pacer) {
                Some(wait) => {
                    wait.await;
                    true
                }
                None => false,
            };
            let (intended, sent) = turn.sent(waited);
            turn.record_lateness(&mut self.shared.recorder.borrow_mut(), ready_at, sent);
            self.progress.sent.set(self.next + batch.len() as u64);
            self.progress.in_flight_since.set(Some(sent));
            let deadline = Rc::clone(&self.deadline);
            let times = BatchTimes {
                intended,
                free: self.server_free.at(),
                sent,
            };
            if self.schedule.is_some() {
                let on_time = intended.max(times.free);
                self.progress.on_time_free.set(Some(on_time));
            }
            let exchange = self.exchange(stream, &batch, times);
            let outcome = deadline.guard(sent, exchange).await;
            self.progress.in_flight_since.set(None);
            let done = matches!(outcome, Ok(Outcome::Done(_)));
            match outcome {
                Ok(Outcome::Done(stream)) => {
                    self.next += batch.len() as u64;
                    self.reused = stream.is_some();
                    self.stream = stream;
                }
                // The same requests go again on a new connection; their intended time stays,
                // so the reconnect is charged to their corrected latency.
                Ok(Outcome::Stale) => {
                    self.progress.sent.set(self.next);
                    self.retry = Some((batch, think));
                }
                Ok(Outcome::Stopped) => return,
                Ok(Outcome::Failed) => {
                    self.log_failed(times, batch.len(), false);
                    self.next += batch.len() as u64;
                }
                Err(_elapsed) => {
                    // The stream was dropped with the exchange: the connection is closed.
                    self.shared.recorder.borrow_mut().counters.errors.timeout += 1;
                    self.shared.gauges.errors.fetch_add(1, Ordering::Relaxed);
                    self.log_failed(times, batch.len(), true);
                    self.next += batch.len() as u64;
                }
            }
            if self.schedule.is_some() {
                // Free since its last response arrived; after a failure, from now.
                ready_at = if done {
                    self.last_received
                } else {
                    let now = clock::now();
                    self.server_free.not_before(now);
                    now
                };
                self.free_on_time();
            }
        }
    }

    /// Between exchanges on a schedule: from when the server would have freed the connection,
    /// a request due and not sent is tsumo's.
    fn free_on_time(&self) {
        if self.schedule.is_some() {
            self.progress.on_time_free.set(Some(self.server_free.at()));
        }
    }

    /// Writes one batch and reads its responses.
    async fn exchange(&mut self, mut stream: Stream, batch: &Batch, times: BatchTimes) -> Outcome {
        let shared = Rc::clone(&self.shared);
        self.row.batch(batch);
        if let Some(outcome) = self.check_idle(&mut stream) {
            return outcome;
        }
        let written = self.write_watching(&mut stream, batch).await;
        if let Some(outcome) = self.unless_written(written) {
            return outcome;
        }
        {
            let mut rec = shared.recorder.borrow_mut();
            rec.counters.bytes_written += batch.bytes.len() as u64;
            rec.count_sent(batch.len() as u64);
        }
        let expected = batch.len();
        let mut completed = 0;
        let mut keep_alive = true;
        while completed < expected {
            let head_request = batch.head[completed];
            match self
                .parser
                .parse(&self.buf[self.start..self.end], head_request)
            {
                Ok((used, done)) => {
                    self.start += used;
                    self.row.bytes_in += used as u64;
                    if let Some(done) = done {
                        keep_alive = done.keep_alive;
                        completed += 1;
                        self.record(done.status, completed == expected, times, stream.last_rx());
                        if !self.run_response_hook(done.status) {
                            return Outcome::Stopped;
                        }
                        if !keep_alive && completed < expected {
                            return self.fail_read();
                        }
                        continue;
                    }
                }
                Err(e) => return self.fail_parse(e),
            }
            if !self.make_room() {
                return self.fail_read();
            }
            match stream.read(&mut self.buf[self.end..]).await {
                Ok(0) => match self.parser.eof() {
                    Ok(Some(done)) => {
                        keep_alive = false;
                        completed += 1;
                        self.record(done.status, completed == expected, times, stream.last_rx());
                        if !self.run_response_hook(done.status) {
                            return Outcome::Stopped;
                        }
                        if completed < expected {
                            return self.fail_read();
                        }
                    }
                    // Even with no byte of a response yet: the request left, so the server
                    // may have processed it. Never sent again.
                    _ => return self.fail_read(),
                },
                Ok(n) => {
                    self.end += n;
                    shared.recorder.borrow_mut().counters.bytes_read += n as u64;
                }
                Err(_) => return self.fail_read(),
            }
        }
        shared
            .gauges
            .requests
            .fetch_add(expected as u64, Ordering::Relaxed);
        if self.start < self.end {
            // More than the batch asked for: never the next request's answer. Close.
            let extra = excerpt(&self.buf[self.start..self.end]);
            self.protocol_error(Violation::UnsolicitedResponse, extra);
            return Outcome::Done(None);
        }
        Outcome::Done(keep_alive.then_some(stream))
    }

    /// A new connection in place of the one gone, and when it was ready; `None` after a pause
    /// of `backoff` (doubled for the next) when it could not be opened.
    async fn reconnect(&mut self, backoff: &mut Duration) -> Option<(Stream, Nanos)> {
        // While it connects, the server holds the connection.
        self.progress.on_time_free.set(None);
        match self
            .shared
            .connect_within(&self.deadline, self.source, &self.progress)
            .await
        {
            Some(stream) => {
                self.progress.down.set(None);
                self.reused = false;
                self.parser.reset();
                self.start = 0;
                self.end = 0;
                *backoff = MIN_BACKOFF;
                let ready_at = clock::now();
                // The connect is the server's, as its slowness is.
                self.server_free.not_before(ready_at);
                self.free_on_time();
                Some((stream, ready_at))
            }
            None => {
                // Not sent, so the schedule does not advance: the outage is charged
                // to these requests' corrected latency once the server is back, or
                // counted as unsent if it never is.
                tokio::time::sleep(*backoff).await;
                *backoff = (*backoff * 2).min(MAX_BACKOFF);
                None
            }
        }
    }

    /// The batch's outcome when its write went wrong; `None` when it went out whole.
    #[inline]
    fn unless_written(&mut self, written: Written) -> Option<Outcome> {
        match written {
            // The send stays stamped before its write, as wrk2 stamps it: against the kernel's
            // transmit stamps, that stamp was within 126 µs of the kernel's over 150,000 writes,
            // a hog beside them or not; a write that returned late had left before the
            // preemption (BENCHMARKS.md, "Kernel transmit stamps, measured").
            Written::Whole { early: false } => None,
            Written::Whole { early: true } => {
                let extra = excerpt(&self.buf[self.start..self.end]);
                self.protocol_error(Violation::UnsolicitedResponse, extra);
                Some(Outcome::Failed)
            }
            // Nothing left: the server cannot have seen this batch.
            Written::NoneOut(e) if self.reused && e.as_ref().is_none_or(is_stale) => {
                Some(Outcome::Stale)
            }
            Written::NoneOut(None) => Some(self.fail_read()),
            Written::NoneOut(Some(_)) | Written::Failed => Some(self.fail_write()),
        }
    }

    /// Room to read into after the bytes not parsed yet: moved to the front, or the buffer
    /// doubled; `false` when a response outgrows the largest buffer.
    #[inline]
    fn make_room(&mut self) -> bool {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else if self.buf.len() < MAX_BUFFER {
                self.buf.resize(self.buf.len() * 2, 0);
            } else {
                return false;
            }
        }
        true
    }

    /// Before a batch goes out on `stream`: bytes already waiting answer no request (a second
    /// response to an earlier one, a banner), so they are counted and the connection closed
    /// rather than credited to this batch; a reused connection the server has closed meanwhile
    /// is stale. Does not wait: it sees what the reactor has seen, which after a paced wait is
    /// everything that arrived during it. `None`: send on this connection.
    fn check_idle(&mut self, stream: &mut Stream) -> Option<Outcome> {
        self.start = 0;
        self.end = 0;
        match stream.read(&mut self.buf).now_or_never()? {
            Ok(0) if self.reused => Some(Outcome::Stale),
            Err(e) if self.reused && is_stale(&e) => Some(Outcome::Stale),
            // A fresh connection already closed: the exchange fails and counts it.
            Ok(0) | Err(_) => None,
            Ok(n) => {
                self.shared.recorder.borrow_mut().counters.bytes_read += n as u64;
                let extra = excerpt(&self.buf[..n]);
                self.protocol_error(Violation::UnsolicitedResponse, extra);
                // Resend on a new connection; but bytes before a fresh connection's first
                // request would come again on the next, so that batch is lost, not retried.
                Some(if self.reused {
                    Outcome::Stale
                } else {
                    Outcome::Failed
                })
            }
        }
    }

    /// Writes `batch` on `stream` while watching its read side, so that a response starting
    /// before the batch's first request is written in full is told from its answer. Bytes read
    /// meanwhile stay in the buffer for the parser.
    async fn write_watching(&mut self, stream: &mut Stream, batch: &Batch) -> Written {
        let bytes = &batch.bytes[..];
        // A TLS write can fail after some of its records left (rustls had taken none of the
        // plaintext yet): only a plain socket's refused write proves nothing went out.
        let refusal_proves_none_out = matches!(stream, Stream::Plain(_));
        let mut written = 0;
        let mut flushed = false;
        let mut read_closed = false;
        // How much of the batch had left when a response's first byte was seen.
        let mut first_byte_at: Option<usize> = None;
        let mut read = 0;
        let written_end = poll_fn(|cx| loop {
            if !read_closed && self.end < self.buf.len() {
                let mut room = ReadBuf::new(&mut self.buf[self.end..]);
                match Pin::new(&mut *stream).poll_read(cx, &mut room) {
                    Poll::Ready(Ok(())) if !room.filled().is_empty() => {
                        let n = room.filled().len();
                        self.end += n;
                        read += n;
                        // TLS: the last bytes may still wait in its buffer, not yet sent.
                        let out = if written == bytes.len() && !flushed {
                            written.saturating_sub(1)
                        } else {
                            written
                        };
                        first_byte_at.get_or_insert(out);
                        continue;
                    }
                    // Closed before any byte went out: the write would only fail.
                    Poll::Ready(Ok(())) if written == 0 => {
                        return Poll::Ready(Written::NoneOut(None))
                    }
                    Poll::Ready(Err(e)) if written == 0 => {
                        return Poll::Ready(Written::NoneOut(Some(e)))
                    }
                    // The write (or the read after it) fails and is counted.
                    Poll::Ready(_) => read_closed = true,
                    Poll::Pending => {}
                }
            }
            if written < bytes.len() {
                match Pin::new(&mut *stream).poll_write(cx, &bytes[written..]) {
                    Poll::Ready(Ok(0)) if written == 0 => {
                        return Poll::Ready(Written::NoneOut(Some(io::ErrorKind::WriteZero.into())))
                    }
                    Poll::Ready(Ok(0)) => return Poll::Ready(Written::Failed),
                    Poll::Ready(Ok(n)) => {
                        written += n;
                    }
                    Poll::Ready(Err(e)) if written == 0 && refusal_proves_none_out => {
                        return Poll::Ready(Written::NoneOut(Some(e)))
                    }
                    Poll::Ready(Err(_)) => return Poll::Ready(Written::Failed),
                    Poll::Pending => return Poll::Pending,
                }
                continue;
            }
            if flushed {
                return Poll::Ready(Written::Whole { early: false });
            }
            match Pin::new(&mut *stream).poll_flush(cx) {
                Poll::Ready(Ok(())) => flushed = true,
                Poll::Ready(Err(_)) => return Poll::Ready(Written::Failed),
                Poll::Pending => return Poll::Pending,
            }
        })
        .await;
        if read > 0 {
            self.shared.recorder.borrow_mut().counters.bytes_read += read as u64;
        }
        match (written_end, first_byte_at) {
            (Written::Whole { .. }, Some(at)) => Written::Whole {
                early: at < batch.first_len(),
            },
            (other, _) => other,
        }
    }

    /// Records one complete response, received at the kernel's stamp `rx` of the read that
    /// completed it (CLOCK_REALTIME ns; `None`: timed now, in user space).
    fn record(&mut self, status: u16, last_of_batch: bool, times: BatchTimes, rx: Option<u64>) {
        let now = clock::now();
        let received = clock::received(rx, now, times.sent);
        self.last_received = received;
        // Every response of a batch is timed from the batch's send and the R′ before it.
        let split_times = ResponseTimes {
            intended: times.intended,
            free: times.free,
            sent: times.sent,
            received,
            read: now,
        };
        self.server_free.answered(&split_times);
        self.row
            .response(&self.shared, self.next, &split_times, status);
        let mut rec = self.shared.recorder.borrow_mut();
        rec.roll_to(now);
        rec.at_intended(times.intended);
        rec.counters.requests += 1;
        if status > 399 {
            rec.counters.errors.status += 1;
            self.shared.gauges.status.fetch_add(1, Ordering::Relaxed);
        }
        if rx.is_none() && kernel_stamps() == Timestamps::Kernel {
            rec.counters.unstamped += 1;
        }
        if self.shared.record_all || last_of_batch {
            let split = split_times.split();
            rec.record_latency(&split);
            self.shared
                .over_limits
                .count(split.server, &self.shared.gauges.over);
        }
    }

    /// Calls the script's `response()` with the response just completed. Returns false when
    /// the worker must stop (the hook failed or called `thread:stop()`).
    fn run_response_hook(&self, status: u16) -> bool {
        let shared = &self.shared;
        let Some(script) = shared.script.as_ref().filter(|_| shared.hooks.response) else {
            return true;
        };
        if let Err(e) = script.response(status, self.parser.headers(), self.parser.body()) {
            shared.stop_worker(Some(e));
            return false;
        }
        if script.stop_requested() {
            shared.stop_worker(None);
            return false;
        }
        true
    }
}

/// A batch's times: when it was due, when its connection would have been free had tsumo never
/// been late (R′ before the batch), and when it went.
#[derive(Clone, Copy)]
struct BatchTimes {
    intended: Nanos,
    free: Nanos,
    sent: Nanos,
}

/// How a batch's write went.
enum Written {
    /// Every byte is out. `early`: bytes of a response arrived before the batch's first request
    /// was written in full (they are in the buffer).
    Whole { early: bool },
    /// No byte of the batch left: the connection was closed (`None`) or the write refused.
    NoneOut(Option<io::Error>),
    /// The write failed part way: the server may have seen some of it.
    Failed,
}

/// Errors that mean the server dropped an idle keep-alive connection.
fn is_stale(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::UnexpectedEof
    )
}
