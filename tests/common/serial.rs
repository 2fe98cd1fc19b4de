//! An in-process HTTP/1.1 server with a known capacity: it answers one request at a time, each
//! after a fixed service time, so it carries at most 1 / service requests a second whatever
//! the connections (a 2 ms service: 500 req/s). For the capacity search's test.

use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::Duration;

/// A running one-at-a-time server; its threads end with the test process.
pub struct SerialServer {
    addr: SocketAddr,
}

impl SerialServer {
    /// Each request is answered holding the one desk for `service`.
    pub fn start(service: Duration) -> SerialServer {
        let desk = Mutex::new(());
        let addr = super::responder::start(move || {
            let _turn = desk.lock().unwrap_or_else(|e| e.into_inner());
            std::thread::sleep(service);
        });
        SerialServer { addr }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}
