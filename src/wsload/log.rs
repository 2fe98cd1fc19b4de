//! `--requests` for a WebSocket run: each message sent is one row of the HTTP mode's log
//! (`stats::requests`), its `stream` the message's sequence number on its connection. A reply
//! is a row with its round trip; a message without one a row with its error: `timeout` (no
//! reply within `-T`), `closed` (its connection ended first; `status` holds the close code the
//! server sent), `unanswered` (still in flight when the run's last wait ended).

use std::cell::RefCell;
use std::rc::Rc;

use crate::stats::requests::writer::{Place, Rows};
use crate::stats::ws::split::Times;
use crate::timing::clock::{self, Nanos};

/// A worker's rows, shared by its connections; `None` without `--requests`.
pub type Log = Option<Rc<RefCell<Rows>>>;

/// Starts a worker's rows at the run's start `t0`, the wall clock's reading of that instant
/// in the log's header.
pub fn start(log: &Log, t0: Nanos) {
    if let Some(rows) = log {
        let since = clock::now().saturating_sub(t0);
        let unix_ns = crate::sys::wallclock::unix_now_ns().saturating_sub(since);
        rows.borrow_mut().start(t0, unix_ns);
    }
}

fn place(conn: u32, seq: u64) -> Place {
    Place {
        conn,
        stream: Some(seq),
        seq,
    }
}

/// Message `seq` of connection `conn` answered: `bytes` in (the reply) and out (the message).
pub fn answered(log: &Log, conn: u32, seq: u64, t: &Times, bytes: (u64, u64)) {
    let Some(rows) = log else { return };
    let corrected = t.received.saturating_sub(t.intended);
    // What the breakdown counts as the server's: R′ − I (stats::ws::split), never more than
    // the round trip.
    let server = t.free_after().saturating_sub(t.intended).min(corrected);
    let own = corrected - server + t.read.saturating_sub(t.received);
    rows.borrow_mut().answered(
        &place(conn, seq),
        (t.intended, t.sent, t.received),
        (corrected, server, own),
        bytes,
    );
}

/// Message `seq` (due at `intended`, sent at `sent`) ended unanswered now: `error` as the
/// module names them; `close`: how its connection ended, as `conn::close_kind` counts it.
pub fn unanswered(
    log: &Log,
    conn: u32,
    (seq, intended, sent): (u64, Nanos, Nanos),
    error: &str,
    close: Option<&str>,
) {
    let Some(rows) = log else { return };
    let code = close
        .and_then(|kind| kind.strip_prefix("close "))
        .and_then(|code| code.parse().ok());
    rows.borrow_mut().ended(
        &place(conn, seq),
        (intended, sent, clock::now()),
        code,
        error,
    );
}
