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
    /// Connections that could not be opened (also in `errors`).
    pub connect: AtomicU64,
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
    pub fn connect(&self) -> u64 {
        self.connect.load(Ordering::Relaxed)
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

/// The supervisor's watch on a `--stages` run's server, once a second: the server is gone when
/// a whole second brought no response and no error but failed connects (refused, reset or timed
/// out: every connection down, retrying), after it had answered. A server that stalls fails no
/// connect; one that is only overloaded answers some.
#[derive(Debug, Default)]
pub struct GoneWatch {
    /// Responses, socket errors and failed connects at the last tick.
    last: (u64, u64, u64),
    answered: bool,
}

impl GoneWatch {
    /// Reads the gauges at a tick: `true` when the server is gone.
    pub fn tick(&mut self, gauges: &[std::sync::Arc<HttpGauges>]) -> bool {
        let now = gauges.iter().fold((0, 0, 0), |(r, e, c), g| {
            (r + g.requests(), e + g.errors(), c + g.connect())
        });
        let (responses, errors, connects) = (
            now.0.saturating_sub(self.last.0),
            now.1.saturating_sub(self.last.1),
            now.2.saturating_sub(self.last.2),
        );
        let gone = self.answered && responses == 0 && connects > 0 && errors == connects;
        self.answered |= now.0 > 0;
        self.last = now;
        gone
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// Sets one worker's gauges: responses, socket errors, failed connects.
    fn set(g: &HttpGauges, requests: u64, errors: u64, connect: u64) {
        g.requests.store(requests, Ordering::Relaxed);
        g.errors.store(errors, Ordering::Relaxed);
        g.connect.store(connect, Ordering::Relaxed);
    }

    /// Gone only after the server answered, for a second of failed connects and nothing else.
    #[test]
    fn a_server_is_gone_after_a_second_of_failed_connects_only() {
        let gauges = [Arc::new(HttpGauges::default())];
        let mut watch = GoneWatch::default();
        // Never answered: its failed connects are not a server gone (the run fails on them).
        set(&gauges[0], 0, 3, 3);
        assert!(!watch.tick(&gauges));
        set(&gauges[0], 50, 3, 3);
        assert!(!watch.tick(&gauges));
        // Answered some while others were refused (a full backlog): overloaded.
        set(&gauges[0], 60, 9, 9);
        assert!(!watch.tick(&gauges));
        // The second it died in: connections reset (read errors) beside the refusals.
        set(&gauges[0], 60, 12, 10);
        assert!(!watch.tick(&gauges));
        // A stall: nothing at all.
        assert!(!watch.tick(&gauges));
        // Then a whole second of failed connects only.
        set(&gauges[0], 60, 16, 14);
        assert!(watch.tick(&gauges));
    }
}
