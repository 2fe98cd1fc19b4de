//! A read-side observer of HTTP/2 frames between the stream and hyper.
//!
//! hyper reports a failed stream as an error, but not the frames behind it: how many GOAWAY
//! and RST_STREAM frames the server sent and with which error codes, or the stream limit its
//! SETTINGS granted. [`Observed`] wraps a connection's stream, follows the frame boundaries of
//! what hyper reads (nine-byte headers, lengths skipped without copying) and notes those three
//! frame types. (A stream's bytes are counted as HTTP/3's are, in `web::mux`: the messages, not
//! the frames.)
//!
//! On the write side it notes when each write returned ([`FrameLog::next_write`],
//! [`FrameLog::written_at`]): hyper writes a request in its connection's task, after tsumo
//! handed it over, and after a stall of tsumo's that is a burst written milliseconds later. A
//! stream's send is then the first write at or after its hand-off (one clock read per write,
//! not per request): never later than the write that carried its bytes.
//!
//! The stream limit is followed for the whole connection, not only its first SETTINGS: a server
//! may lower it at any time (to 0 even), and the connection must then open no stream past it.
//! Whoever waits for the limit to rise, or for the connection to go, waits on [`FrameLog::changed`].

use std::cell::{Cell, RefCell};
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

use crate::net::stream::Stream;
use crate::stats::http::http2::Http2Counters;
use crate::timing::clock::{self, Nanos};

const HEADER_LEN: usize = 9;
const TYPE_DATA: u8 = 0x0;
const TYPE_HEADERS: u8 = 0x1;
const FLAG_END_STREAM: u8 = 0x1;
const TYPE_RST_STREAM: u8 = 0x3;
const TYPE_SETTINGS: u8 = 0x4;
const TYPE_GOAWAY: u8 = 0x7;
const FLAG_ACK: u8 = 0x1;
const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
/// Enough of a SETTINGS payload for every setting a server sends (6 bytes each).
const MAX_CAPTURE: usize = 120;
/// The fewest writes whose return times are kept, and how many a stream slot adds: a stream
/// reads its send's when its response ended, and meanwhile its connection writes its other
/// streams' requests and a WINDOW_UPDATE or two for each; more only for long bodies (then the
/// hand-off stamp stands).
const WRITES_KEPT: usize = 64;
const WRITES_KEPT_PER_STREAM: usize = 4;
const MOST_KEPT: usize = 4096;

/// What one connection's observer saw, shared with the connection that owns it.
pub struct FrameLog {
    /// The worker's HTTP/2 counters, which every connection of the worker adds to.
    counters: Rc<RefCell<Http2Counters>>,
    /// The server sent GOAWAY: no new stream may start on this connection.
    going_away: Cell<bool>,
    /// The server's first SETTINGS frame was seen.
    settings_seen: Cell<bool>,
    /// The stream limit the server granted last (`None`: unlimited, or no SETTINGS yet).
    granted: Cell<Option<u32>>,
    /// A later SETTINGS lowered the limit (counted once per connection).
    lowered: Cell<bool>,
    /// Woken when the limit changes, a GOAWAY arrives or the connection ends.
    changes: Notify,
    /// The kernel's receive stamp of the read being followed (CLOCK_REALTIME ns).
    read_rx: Cell<Option<u64>>,
    /// The same, of the last read that completed a frame ending a stream: when the last stream
    /// to end was received.
    end_stream_rx: Cell<Option<u64>>,
    /// The writes that succeeded so far.
    writes: Cell<u64>,
    /// When the last of them returned (the run's clock), write `n` at `n % len`.
    written_at: Box<[Cell<Nanos>]>,
}

impl FrameLog {
    /// `streams`: the connection's streams at once (`-m`), which size the writes kept.
    pub fn new(counters: Rc<RefCell<Http2Counters>>, streams: usize) -> Rc<FrameLog> {
        let kept = WRITES_KEPT.max(
            streams
                .saturating_mul(WRITES_KEPT_PER_STREAM)
                .min(MOST_KEPT),
        );
        Rc::new(FrameLog {
            counters,
            going_away: Cell::new(false),
            settings_seen: Cell::new(false),
            granted: Cell::new(None),
            lowered: Cell::new(false),
            changes: Notify::new(),
            read_rx: Cell::new(None),
            end_stream_rx: Cell::new(None),
            writes: Cell::new(0),
            written_at: (0..kept).map(|_| Cell::new(0)).collect(),
        })
    }

    pub fn going_away(&self) -> bool {
        self.going_away.get()
    }

    /// The server's stream limit, once its SETTINGS arrived (`Some(None)`: unlimited).
    pub fn granted(&self) -> Option<Option<u32>> {
        self.settings_seen.get().then(|| self.granted.get())
    }

    /// Resolves at the next change of the stream limit, GOAWAY or end of the connection.
    /// Single-threaded: what is checked before awaiting it cannot change before it is polled.
    pub async fn changed(&self) {
        self.changes.notified().await;
    }

    /// The connection ended (read end or error, or hyper dropped it).
    fn ended(&self) {
        self.changes.notify_waiters();
    }

    /// The kernel's receive stamp (CLOCK_REALTIME ns) of the last read that completed a frame
    /// ending a stream (END_STREAM), if the kernel stamped it. A stream learns it ended once hyper
    /// has read its last frame; a later read before it is polled can only move this later.
    pub fn end_stream_rx(&self) -> Option<u64> {
        self.end_stream_rx.get()
    }

    /// The number of the next write: a request handed to hyper now leaves in it or a later one.
    #[inline]
    pub fn next_write(&self) -> u64 {
        self.writes.get()
    }

    /// When write number `write` returned, if it has and is still kept.
    #[inline]
    pub fn written_at(&self, write: u64) -> Option<Nanos> {
        let done = self.writes.get();
        let kept = self.written_at.len() as u64;
        (write < done && done - write <= kept)
            .then(|| self.written_at[(write % kept) as usize].get())
    }

    /// A write (of at least one byte) returned.
    #[inline]
    fn wrote(&self) {
        let write = self.writes.get();
        let kept = self.written_at.len() as u64;
        self.written_at[(write % kept) as usize].set(clock::now());
        self.writes.set(write + 1);
    }

    fn frame(&self, kind: u8, flags: u8, payload: &[u8]) {
        let code = || payload.get(..4).map(be32);
        match kind {
            TYPE_GOAWAY => {
                self.going_away.set(true);
                self.changes.notify_waiters();
                // Last-Stream-ID, then the error code.
                if let Some(code) = payload.get(4..8).map(be32) {
                    self.counters.borrow_mut().count_goaway(code);
                }
            }
            TYPE_RST_STREAM => {
                if let Some(code) = code() {
                    self.counters.borrow_mut().count_rst_stream(code);
                }
            }
            TYPE_SETTINGS if flags & FLAG_ACK == 0 => {
                let limit = payload.chunks_exact(6).rev().find_map(|setting| {
                    let id = u16::from_be_bytes([setting[0], setting[1]]);
                    (id == SETTINGS_MAX_CONCURRENT_STREAMS).then(|| be32(&setting[2..6]))
                });
                if !self.settings_seen.replace(true) {
                    self.granted.set(limit);
                    self.counters.borrow_mut().count_settings(limit);
                } else if let Some(new) = limit {
                    // A later SETTINGS that leaves the limit out keeps it as it was.
                    if self.granted.get().is_none_or(|old| new < old) {
                        let first_time = !self.lowered.replace(true);
                        self.counters.borrow_mut().count_lowered(new, first_time);
                    }
                    self.granted.set(limit);
                }
                self.changes.notify_waiters();
            }
            _ => {}
        }
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Where the observer is in the server's frame sequence.
struct Framer {
    header: [u8; HEADER_LEN],
    header_len: usize,
    /// Payload bytes of the current frame still to come.
    remaining: usize,
    kind: u8,
    flags: u8,
    /// The payload so far, for the frame types that are noted.
    capture: Vec<u8>,
}

impl Framer {
    fn new() -> Framer {
        Framer {
            header: [0; HEADER_LEN],
            header_len: 0,
            remaining: 0,
            kind: 0,
            flags: 0,
            capture: Vec::new(),
        }
    }

    fn noted(kind: u8) -> bool {
        matches!(kind, TYPE_RST_STREAM | TYPE_SETTINGS | TYPE_GOAWAY)
    }

    /// Follows the frames in `bytes`, the next bytes the server sent.
    fn feed(&mut self, mut bytes: &[u8], log: &FrameLog) {
        while !bytes.is_empty() {
            if self.header_len < HEADER_LEN {
                let take = (HEADER_LEN - self.header_len).min(bytes.len());
                self.header[self.header_len..self.header_len + take]
                    .copy_from_slice(&bytes[..take]);
                self.header_len += take;
                bytes = &bytes[take..];
                if self.header_len < HEADER_LEN {
                    return;
                }
                let h = &self.header;
                self.remaining =
                    usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
                self.kind = h[3];
                self.flags = h[4];
                self.capture.clear();
                if self.remaining == 0 {
                    self.end_frame(log);
                }
                continue;
            }
            let take = self.remaining.min(bytes.len());
            if Self::noted(self.kind) && self.capture.len() < MAX_CAPTURE {
                let keep = take.min(MAX_CAPTURE - self.capture.len());
                self.capture.extend_from_slice(&bytes[..keep]);
            }
            self.remaining -= take;
            bytes = &bytes[take..];
            if self.remaining == 0 {
                self.end_frame(log);
            }
        }
    }

    fn end_frame(&mut self, log: &FrameLog) {
        if matches!(self.kind, TYPE_DATA | TYPE_HEADERS) && self.flags & FLAG_END_STREAM != 0 {
            log.end_stream_rx.set(log.read_rx.get());
        }
        if Self::noted(self.kind) {
            log.frame(self.kind, self.flags, &self.capture);
        }
        self.header_len = 0;
    }
}

/// A connection's stream with the observer in its read path.
pub struct Observed {
    stream: Stream,
    framer: Framer,
    log: Rc<FrameLog>,
}

impl Observed {
    pub fn new(stream: Stream, log: Rc<FrameLog>) -> Observed {
        Observed {
            stream,
            framer: Framer::new(),
            log,
        }
    }
}

impl AsyncRead for Observed {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.stream).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) => {
                let new = &buf.filled()[before..];
                let log = &this.log;
                log.read_rx.set(this.stream.last_rx());
                this.framer.feed(new, log);
                if new.is_empty() {
                    log.ended();
                }
            }
            Poll::Ready(Err(_)) => this.log.ended(),
            Poll::Pending => {}
        }
        polled
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        self.log.ended();
    }
}

impl AsyncWrite for Observed {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write(cx, buf);
        if let Poll::Ready(Ok(1..)) = polled {
            this.log.wrote();
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(1..)) = polled {
            this.log.wrote();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut f = vec![
            (len >> 16) as u8,
            (len >> 8) as u8,
            len as u8,
            kind,
            flags,
            0,
            0,
            0,
            1,
        ];
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn notes_settings_resets_and_goaway_across_split_reads() {
        let counters = Rc::new(RefCell::new(Http2Counters::default()));
        let log = FrameLog::new(Rc::clone(&counters), 1);
        let mut wire = frame(
            TYPE_SETTINGS,
            0,
            &[0, 3, 0, 0, 0, 1, 0, 4, 0, 0, 0xff, 0xff],
        );
        wire.extend(frame(0x0, 0, &[7; 300])); // DATA, skipped
        wire.extend(frame(TYPE_RST_STREAM, 0, &[0, 0, 0, 7]));
        wire.extend(frame(TYPE_SETTINGS, FLAG_ACK, &[]));
        wire.extend(frame(TYPE_SETTINGS, 0, &[0, 3, 0, 0, 0, 2])); // raised: not counted
        wire.extend(frame(TYPE_SETTINGS, 0, &[0, 3, 0, 0, 0, 0]));
        wire.extend(frame(TYPE_SETTINGS, 0, &[0, 4, 0, 0, 0xff, 0xff])); // limit kept
        wire.extend(frame(TYPE_GOAWAY, 0, &[0, 0, 0, 9, 0, 0, 0, 0]));
        let mut framer = Framer::new();
        for chunk in wire.chunks(5) {
            framer.feed(chunk, &log);
        }
        let c = counters.borrow();
        assert_eq!(c.rst_stream["REFUSED_STREAM"], 1);
        assert_eq!(c.goaway["NO_ERROR"], 1);
        assert_eq!((c.granted_min, c.settings_seen), (Some(1), 1));
        assert_eq!((c.lowered, c.lowered_min), (1, Some(0)));
        assert!(log.going_away());
        assert_eq!(log.granted(), Some(Some(0)));
    }

    /// A request handed over before a write leaves in it or later: its send is that write's
    /// return, kept for the last writes (4 a stream slot, 64 at least).
    #[test]
    fn a_hand_off_is_timed_by_the_first_write_after_it() {
        let log = FrameLog::new(Rc::default(), 100);
        log.wrote();
        let handed = log.next_write();
        assert_eq!(log.written_at(handed), None, "not written yet");
        let before = clock::now();
        log.wrote();
        let first = log.written_at(handed).expect("written");
        assert!(first >= before);
        log.wrote();
        assert_eq!(
            log.written_at(handed),
            Some(first),
            "the first write after, not the last"
        );
        for _ in 0..398 {
            log.wrote();
        }
        assert_eq!(
            log.written_at(handed),
            Some(first),
            "kept for 400 writes at -m100"
        );
        log.wrote();
        assert_eq!(
            log.written_at(handed),
            None,
            "forgotten: the hand-off stands"
        );
    }
}
