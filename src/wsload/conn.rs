//! One connection's paced life: its messages, each due at its slot of the schedule (closed
//! loop: as soon as the previous one is answered), one in flight at a time as a wrk2
//! connection has one request; the replies matched by the sequence number in the first
//! [`SEQ_DIGITS`] bytes; what the server sends that answers nothing counted as a push.
//!
//! A message is timed from its intended send time (corrected) and from the moment its write
//! began (uncorrected): one that waited for the previous reply, or for a socket that would not
//! take it, still counts from its slot. After the shutdown a connection sends only what was
//! already due, waits for the last reply within `-T`, and closes.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::script::{Frame, Scripted};
use super::socketio::{Heard, SocketIo};
use super::WsGauges;
use crate::stats::ws::split::Times;
use crate::stats::ws::Recorder;
use crate::timing::clock::{self, Nanos};
use crate::timing::pacer::Pacer;
use crate::timing::schedule::Schedule;
use crate::ws::transport::{Message, WebSocket, WsError};

/// The sequence number's place: the message's first bytes, in decimal, zero-padded.
pub const SEQ_DIGITS: usize = 16;

/// How long the close handshake may take at the end.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// A connection's settings and what it shares with its worker.
pub struct Life {
    /// `None`: closed loop.
    pub schedule: Option<Schedule>,
    pub size: usize,
    pub timeout: Duration,
    /// `--ping`: a ping every this long, the first this long after the start (the connections'
    /// pings spread over the period, as their messages are, not all at one instant).
    pub ping: Option<(Duration, Duration)>,
    pub pacer: Rc<Pacer>,
    pub recorder: Rc<RefCell<Recorder>>,
    pub gauges: Arc<WsGauges>,
    /// `-s`: the script that makes the messages and finds the replies' keys.
    pub script: Option<Scripted>,
    /// `--requests`: the worker's rows, and this connection's number in them.
    pub log: super::log::Log,
    pub conn: u32,
    /// `--socketio`: messages are events, replies their acknowledgements.
    pub socketio: Option<SocketIo>,
}

/// The message in flight.
#[derive(Debug, Clone, Copy)]
struct Pending {
    seq: u64,
    intended: Nanos,
    sent: Nanos,
    /// When the connection would have been free for it had tsumo never been late.
    free: Nanos,
    /// Its length.
    bytes: u64,
}

/// The sequence number a message carries, if it is one of ours.
pub fn seq_of(payload: &[u8]) -> Option<u64> {
    let digits = payload.get(..SEQ_DIGITS)?;
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Message `seq` of `size` bytes: the number, then dots.
fn write_message(text: &mut String, seq: u64, size: usize) {
    use std::fmt::Write;
    text.clear();
    // Writing to a String cannot fail.
    let _ = write!(text, "{seq:0width$}", width = SEQ_DIGITS);
    text.extend(std::iter::repeat_n('.', size.saturating_sub(text.len())));
}

fn to_ns(d: Duration) -> Nanos {
    d.as_nanos().min(Nanos::MAX as u128) as Nanos
}

impl Life {
    /// When message `seq` may go: its slot (closed loop: now), or `None` when this connection
    /// sends no more — its schedule is over, or the run is and the slot was not yet due.
    fn due(&self, seq: u64, stopped: Option<Nanos>) -> Option<Nanos> {
        match &self.schedule {
            Some(schedule) => {
                let intended = schedule.intended(seq);
                let in_run = schedule.in_run(seq) && intended < schedule.end;
                (in_run && stopped.is_none_or(|stop| intended <= stop)).then_some(intended)
            }
            None => stopped.is_none().then(clock::now),
        }
    }

    /// Runs the connection until the run is over and its last reply is in (or `-T` passed).
    pub async fn run(mut self, mut ws: WebSocket, mut shutdown: watch::Receiver<bool>) {
        let timeout = to_ns(self.timeout);
        let mut text = String::with_capacity(self.size);
        let mut seq = 0u64;
        let mut pending: Option<Pending> = None;
        // The previous reply's R′ (see `stats::ws::split`).
        let mut free: Nanos = 0;
        let period = self.ping.map(|(every, _)| to_ns(every));
        let mut next_ping = self
            .ping
            .map(|(_, first)| clock::now().saturating_add(to_ns(first)));
        // The ping in flight: its number and send time.
        let mut ping_out: Option<(u64, Nanos)> = None;
        let mut stopped: Option<Nanos> = (*shutdown.borrow()).then(clock::now);
        let broken = loop {
            self.pong(&mut ws, &mut ping_out);
            let ping_at = next_ping.filter(|_| stopped.is_none());
            let next = match pending {
                None => self.due(seq, stopped),
                Some(_) => None,
            };
            if stopped.is_some() && pending.is_none() && next.is_none() {
                break None;
            }
            let reply_by = pending.map(|p| p.sent.saturating_add(timeout));
            let drain_by = stopped.map(|stop| stop.saturating_add(timeout));
            let pacer = &self.pacer;
            let sleep = |at: Option<Nanos>| {
                let wait = at.map(|at| pacer.sleep_until(at));
                async move {
                    match wait {
                        Some(wait) => wait.await,
                        None => std::future::pending().await,
                    }
                }
            };
            tokio::select! {
                biased;
                changed = shutdown.changed(), if stopped.is_none() => {
                    // A dropped sender is a shutdown too.
                    let _ = changed;
                    stopped = Some(clock::now());
                }
                read = ws.next_stamped() => {
                    match read {
                        Ok((message, rx)) => {
                            let failed = self.on_message(message, rx, &mut pending, seq, &mut free);
                            if let Some(error) = failed {
                                break Some(error);
                            }
                            if let Some(socketio) = &self.socketio {
                                if let Err(e) = socketio.pong(&mut ws).await {
                                    break Some(close_kind(&e));
                                }
                            }
                        }
                        Err(e) => break Some(close_kind(&e)),
                    }
                }
                () = sleep(next), if next.is_some() => {
                    let intended = next.unwrap_or_else(clock::now);
                    match self.send(&mut ws, &mut text, seq, intended, free).await {
                        Ok(sent) => pending = Some(sent),
                        Err(kind) => break Some(kind),
                    }
                    seq += 1;
                }
                () = sleep(ping_at), if ping_at.is_some() => {
                    let ping = self.ping(&mut ws, &mut ping_out);
                    let sent = match tokio::time::timeout(self.timeout, ping).await {
                        Ok(Ok(sent)) => sent,
                        Ok(Err(e)) => break Some(close_kind(&e)),
                        Err(_) => break Some("a send timed out".to_string()),
                    };
                    next_ping = next_ping.zip(period).map(|(at, p)| at.saturating_add(p).max(sent));
                }
                () = sleep(reply_by), if reply_by.is_some() => {
                    if let Some(p) = pending.take() {
                        self.log_unanswered(p, "timeout", None);
                    }
                    // The server's: free no earlier than now.
                    free = free.max(clock::now());
                    self.recorder.borrow_mut().counters.timed_out += 1;
                }
                () = sleep(drain_by), if drain_by.is_some() => break None,
            }
        };
        self.finish(ws, pending, broken, ping_out).await;
    }

    /// The connection is over (`broken`: how, when it broke): the message still waiting for
    /// its reply counted and logged, the socket closed.
    async fn finish(
        &mut self,
        mut ws: WebSocket,
        pending: Option<Pending>,
        broken: Option<String>,
        mut ping_out: Option<(u64, Nanos)>,
    ) {
        self.gauges.open.fetch_sub(1, Ordering::Relaxed);
        if let Some(p) = pending {
            self.recorder.borrow_mut().counters.unanswered += 1;
            let error = if broken.is_some() {
                "closed"
            } else {
                "unanswered"
            };
            self.log_unanswered(p, error, broken.as_deref());
        }
        match broken {
            Some(kind) => self.recorder.borrow_mut().closed(kind),
            None => {
                let _ = tokio::time::timeout(CLOSE_WAIT, ws.close()).await;
            }
        }
        self.pong(&mut ws, &mut ping_out);
    }

    /// Sends message `seq` (the script's, or the numbered text), counted: the reply it waits
    /// for; or how the connection broke.
    async fn send(
        &mut self,
        ws: &mut WebSocket,
        text: &mut String,
        seq: u64,
        intended: Nanos,
        free: Nanos,
    ) -> Result<Pending, String> {
        let scripted = self.script.is_some();
        let frame = match &mut self.script {
            Some(script) => script.message(seq).map_err(|error| error.0)?,
            None => {
                write_message(text, seq, self.size);
                Frame::Text(text)
            }
        };
        let frame = match &mut self.socketio {
            Some(socketio) => (socketio.frame(seq, frame, scripted)).map_err(|e| e.to_string())?,
            None => frame,
        };
        let length = frame.bytes();
        let sent = clock::now();
        match tokio::time::timeout(self.timeout, frame.send(ws)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(close_kind(&e)),
            Err(_) => return Err("a send timed out".to_string()),
        }
        let mut recorder = self.recorder.borrow_mut();
        recorder.counters.sent += 1;
        recorder.counters.bytes_sent += length as u64;
        self.gauges.sent.fetch_add(1, Ordering::Relaxed);
        Ok(Pending {
            seq,
            intended,
            sent,
            free,
            bytes: length as u64,
        })
    }

    /// `--requests`: message `p` ended without its reply (see `super::log`).
    fn log_unanswered(&self, p: Pending, error: &str, close: Option<&str>) {
        let message = (p.seq, p.intended, p.sent);
        super::log::unanswered(&self.log, self.conn, message, error, close);
    }

    /// Sends the next ping; returns when it went.
    async fn ping(
        &self,
        ws: &mut WebSocket,
        ping_out: &mut Option<(u64, Nanos)>,
    ) -> Result<Nanos, WsError> {
        // The last ping's pong, read while the select waited, before it is replaced.
        self.pong(ws, ping_out);
        let id = self.recorder.borrow().counters.pings;
        let sent = clock::now();
        ws.ping(&id.to_be_bytes()).await?;
        *ping_out = Some((id, sent));
        self.recorder.borrow_mut().counters.pings += 1;
        Ok(sent)
    }

    /// A pong read since the last look, timed if it answers the ping in flight.
    fn pong(&self, ws: &mut WebSocket, ping_out: &mut Option<(u64, Nanos)>) {
        let Some((payload, at)) = ws.take_pong() else {
            return;
        };
        if let Some((id, sent)) = *ping_out {
            if payload.as_ref() == id.to_be_bytes() {
                self.recorder.borrow_mut().ponged(at.saturating_sub(sent));
                *ping_out = None;
            }
        }
    }

    /// A server message (`rx`: the kernel's receive stamp): the reply to the pending message, a
    /// late reply, or a push; or the script's error, which ends the connection.
    fn on_message(
        &self,
        message: Message<'_>,
        rx: Option<u64>,
        pending: &mut Option<Pending>,
        next_seq: u64,
        free: &mut Nanos,
    ) -> Option<String> {
        let now = clock::now();
        let (payload, binary) = match message {
            Message::Text(text) => (text.as_bytes(), false),
            Message::Binary(bytes) => (bytes, true),
        };
        let answers = match (&self.socketio, &self.script) {
            (Some(socketio), script) => match socketio.heard(payload, binary, script.as_ref()) {
                Ok(Heard::Reply(seq)) => Some(seq),
                Ok(Heard::Push) => None,
                Ok(Heard::Keepalive) => return None,
                Err(kind) => return Some(kind.to_string()),
            },
            (None, Some(script)) => match script.answers(payload, binary, pending.map(|p| p.seq)) {
                Ok(answers) => answers,
                Err(error) => return Some(error.0),
            },
            (None, None) => seq_of(payload),
        };
        let mut recorder = self.recorder.borrow_mut();
        match (answers, *pending) {
            (Some(seq), Some(p)) if seq == p.seq => {
                let times = Times {
                    intended: p.intended,
                    free: p.free,
                    sent: p.sent,
                    received: clock::received(rx, now, p.sent),
                    read: now,
                };
                recorder.answered(p.intended, p.sent, times.received, payload.len());
                recorder.breakdown.record(&times);
                let bytes = (payload.len() as u64, p.bytes);
                super::log::answered(&self.log, self.conn, p.seq, &times, bytes);
                *free = times.free_after();
                *pending = None;
                self.gauges.answered.fetch_add(1, Ordering::Relaxed);
            }
            (Some(seq), _) if seq < next_seq => {
                recorder.counters.late += 1;
                recorder.counters.bytes_received += payload.len() as u64;
            }
            _ => {
                recorder.counters.pushed += 1;
                recorder.counters.bytes_received += payload.len() as u64;
            }
        }
        None
    }
}

/// How a connection that ended during the run is counted: its close code, or how it broke.
pub fn close_kind(e: &WsError) -> String {
    match e {
        WsError::Closed {
            code: Some(code), ..
        } => format!("close {code}"),
        WsError::Closed { code: None, .. } => "close without a code".to_string(),
        WsError::Eof => "closed without a WebSocket close".to_string(),
        WsError::Io(io) if io.kind() == std::io::ErrorKind::ConnectionReset => "reset".to_string(),
        other if other.is_violation() => "protocol violation".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_carries_its_number_and_has_its_size() {
        let mut text = String::new();
        write_message(&mut text, 42, 20);
        assert_eq!(text, "0000000000000042....");
        assert_eq!(seq_of(text.as_bytes()), Some(42));
        write_message(&mut text, 7, SEQ_DIGITS);
        assert_eq!(text.len(), SEQ_DIGITS);
        assert_eq!(seq_of(b"hello, not ours at all"), None);
        assert_eq!(seq_of(b"0042"), None);
    }
}
