//! An in-process HTTP/1.1 server with a known capacity: it answers one request at a time, each
//! after a fixed service time, so it carries at most 1 / service requests a second whatever
//! the connections (a 2 ms service: 500 req/s). For the capacity search's test.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A running one-at-a-time server; its threads end with the test process.
pub struct SerialServer {
    addr: SocketAddr,
}

impl SerialServer {
    pub fn start(service: Duration) -> SerialServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let desk = Arc::new(Mutex::new(()));
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let desk = Arc::clone(&desk);
                std::thread::spawn(move || serve(stream, &desk, service));
            }
        });
        SerialServer { addr }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

/// Keep-alive GETs without a body: each request is answered holding the one desk for
/// `service`.
fn serve(mut stream: TcpStream, desk: &Mutex<()>, service: Duration) {
    let _ = stream.set_nodelay(true);
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..end + 4);
            {
                let _turn = desk.lock().unwrap_or_else(|e| e.into_inner());
                std::thread::sleep(service);
            }
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
