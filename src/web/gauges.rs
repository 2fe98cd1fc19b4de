//! What is read of a worker's connections from outside them: its gauges, the counters the
//! supervisor's progress line and per-second samples read while they run (and a capacity step's
//! watch on its errors, which may end the run early), and how far each connection got along its
//! schedule, which its worker reads at the end.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::engine::Gauges;
use crate::timing::clock::Nanos;

/// Counters a worker updates as it goes (relaxed atomics: read for display and the per-second
/// samples only).
#[derive(Debug, Default)]
pub struct HttpGauges {
    /// Responses.
    pub requests: AtomicU64,
    /// Socket errors: connect, read, write, timeout.
    pub errors: AtomicU64,
    /// Responses with a 4xx or 5xx status (also in `requests`).
    pub status: AtomicU64,
    /// Responses whose server's latency reached each of the worker's `over_limits` (a
    /// capacity step's watch on its latency objectives).
    pub over: crate::stats::http::over::OverCounts,
}

impl HttpGauges {
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
    pub fn status(&self) -> u64 {
        self.status.load(Ordering::Relaxed)
    }
}

impl Gauges for HttpGauges {
    fn completed(&self) -> u64 {
        self.requests()
    }
}

/// Why a connection is down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Down {
    ConnectFailed,
    ConnectTimedOut,
}

/// How far one connection got along its schedule, which its worker reads at the end of the
/// run (the connection's task is cancelled then) to account for the requests that fell due but
/// were never sent.
#[derive(Debug, Default)]
pub struct Progress {
    /// Requests of the schedule sent, or being sent, so far.
    pub sent: Cell<u64>,
    /// When the request in flight now was sent (HTTP/1.1; `None` between exchanges). At the
    /// end, a request that fell due after it waits on a response still in progress, as the
    /// end finds it: left out of the unsent, as the request in flight is, so that the cut
    /// itself never counts as the server's error.
    pub in_flight_since: Cell<Option<Nanos>>,
    /// Set while the connection cannot be opened again.
    pub down: Cell<Option<Down>>,
    /// On a schedule (`None` otherwise, and while it connects): when the server would have
    /// freed the connection for its next request had tsumo sent every request on time (the
    /// split's R′); over HTTP/1.1 while a request is in flight, when that request would have
    /// been sent (max(I, R′)); over HTTP/2 and HTTP/3, the earliest R′ of its free stream slots
    /// (`None` while every slot is busy). A request that fell due after that and was never
    /// sent is tsumo's ([`Unsent::late`](crate::stats::http::Unsent::late)).
    pub on_time_free: Cell<Option<Nanos>>,
}
