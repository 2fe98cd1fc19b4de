//! An in-process HTTP/1.1 server whose response time grows with its load: each request is
//! answered after 1 ms + (R/100)² ms, R the requests that arrived in the last second (400
//! req/s: 17 ms; 700: 50 ms). Every connection has its own thread, so requests wait side by
//! side, never one behind another: how many connections a rate needs is Little's law, rate ×
//! response time. For the capacity search's test of tsumo's own connection pool (issue 30).

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running server; its threads end with the test process.
pub struct GrowingServer {
    addr: SocketAddr,
}

/// The arrivals of the last second.
type Arrivals = Arc<Mutex<VecDeque<Instant>>>;

impl GrowingServer {
    pub fn start() -> GrowingServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let arrivals: Arrivals = Arc::new(Mutex::new(VecDeque::new()));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let arrivals = Arc::clone(&arrivals);
                std::thread::spawn(move || serve(stream, &arrivals));
            }
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

/// Keep-alive GETs without a body, each answered after the response time of the moment.
fn serve(mut stream: TcpStream, arrivals: &Mutex<VecDeque<Instant>>) {
    let _ = stream.set_nodelay(true);
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..end + 4);
            std::thread::sleep(response_time(arrive(arrivals)));
            let response = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
            if stream.write_all(response).is_err() {
                return;
            }
        }
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => pending.extend_from_slice(&buf[..n]),
        }
    }
}
