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
use super::WsGauges;
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
    pub pacer: Rc<Pacer>,
    pub recorder: Rc<RefCell<Recorder>>,
    pub gauges: Arc<WsGauges>,
    /// `-s`: the script that makes the messages and finds the replies' keys.
    pub script: Option<Scripted>,
}

/// The message in flight.
#[derive(Debug, Clone, Copy)]
struct Pending {
    seq: u64,
    intended: Nanos,
    sent: Nanos,
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
        let mut stopped: Option<Nanos> = (*shutdown.borrow()).then(clock::now);
        let broken = loop {
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
                read = ws.next() => {
                    match read {
                        Ok(message) => {
                            if let Some(error) = self.on_message(message, &mut pending, seq) {
                                break Some(error);
                            }
                        }
                        Err(e) => break Some(close_kind(&e)),
                    }
                }
                () = sleep(next), if next.is_some() => {
                    let intended = next.unwrap_or_else(clock::now);
                    let frame = match &mut self.script {
                        Some(script) => match script.message(seq) {
                            Ok(frame) => frame,
                            Err(error) => break Some(error.0),
                        },
                        None => {
                            write_message(&mut text, seq, self.size);
                            Frame::Text(&text)
                        }
                    };
                    let length = frame.bytes();
                    let sent = clock::now();
                    match tokio::time::timeout(self.timeout, frame.send(&mut ws)).await {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => break Some(close_kind(&e)),
                        Err(_) => break Some("a send timed out".to_string()),
                    }
                    pending = Some(Pending { seq, intended, sent });
                    seq += 1;
                    let mut recorder = self.recorder.borrow_mut();
                    recorder.counters.sent += 1;
                    recorder.counters.bytes_sent += length as u64;
                    self.gauges.sent.fetch_add(1, Ordering::Relaxed);
                }
                () = sleep(reply_by), if reply_by.is_some() => {
                    pending = None;
                    self.recorder.borrow_mut().counters.timed_out += 1;
                }
                () = sleep(drain_by), if drain_by.is_some() => break None,
            }
        };
        self.gauges.open.fetch_sub(1, Ordering::Relaxed);
        if pending.is_some() {
            self.recorder.borrow_mut().counters.unanswered += 1;
        }
        match broken {
            Some(kind) => self.recorder.borrow_mut().closed(kind),
            None => {
                let _ = tokio::time::timeout(CLOSE_WAIT, ws.close()).await;
            }
        }
    }

    /// A server message: the reply to the pending message, a late reply, or a push; or the
    /// script's error, which ends the connection.
    fn on_message(
        &self,
        message: Message<'_>,
        pending: &mut Option<Pending>,
        next_seq: u64,
    ) -> Option<String> {
        let now = clock::now();
        let (payload, binary) = match message {
            Message::Text(text) => (text.as_bytes(), false),
            Message::Binary(bytes) => (bytes, true),
        };
        let answers = match &self.script {
            Some(script) => match script.answers(payload, binary, pending.map(|p| p.seq)) {
                Ok(answers) => answers,
                Err(error) => return Some(error.0),
            },
            None => seq_of(payload),
        };
        let mut recorder = self.recorder.borrow_mut();
        match (answers, *pending) {
            (Some(seq), Some(p)) if seq == p.seq => {
                recorder.answered(p.intended, p.sent, now, payload.len());
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
