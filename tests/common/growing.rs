//! An in-process HTTP/1.1 server whose response time grows with its load: each request is
//! answered after 1 ms + (R/100)² ms, R the requests that arrived in the last second (400
//! req/s: 17 ms; 700: 50 ms). Every connection has its own thread, so requests wait side by
//! side, never one behind another: how many connections a rate needs is Little's law, rate ×
//! response time. For the capacity search's test of tsumo's own connection pool (issue 30).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A running server; its threads end with the test process.
pub struct GrowingServer {
    addr: SocketAddr,
}

impl GrowingServer {
    /// Each request is answered after the response time of the moment.
    pub fn start() -> GrowingServer {
        let arrivals = Mutex::new(VecDeque::new());
        let addr = super::responder::start(move || {
            std::thread::sleep(response_time(arrive(&arrivals)));
        });
        GrowingServer { addr }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

/// 1 ms + (R/100)² ms at R arrivals in the last second, this one counted.
pub fn response_time(rate: usize) -> Duration {
    let hundreds = rate as f64 / 100.0;
    Duration::from_secs_f64((1.0 + hundreds * hundreds) / 1e3)
}

/// This arrival counted: the arrival rate over the last second.
fn arrive(arrivals: &Mutex<VecDeque<Instant>>) -> usize {
    let now = Instant::now();
    let mut seen = arrivals.lock().unwrap_or_else(|e| e.into_inner());
    while seen
        .front()
        .is_some_and(|&t| now.duration_since(t) >= Duration::from_secs(1))
    {
        seen.pop_front();
    }
    seen.push_back(now);
    seen.len()
}
