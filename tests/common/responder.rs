//! The loop the in-process HTTP/1.1 test servers share ([`super::growing`], [`super::serial`]):
//! a thread per connection, keep-alive GETs without a body, each answered `ok` after the
//! server's own wait.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

/// Listens on a free port of 127.0.0.1 and answers every request after `wait()` has returned
/// (called on the connection's thread); its threads end with the test process.
pub fn start(wait: impl Fn() + Send + Sync + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local addr");
    let wait = Arc::new(wait);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let wait = Arc::clone(&wait);
            std::thread::spawn(move || serve(stream, &*wait));
        }
    });
    addr
}

/// Keep-alive GETs without a body, each answered after `wait()`.
fn serve(mut stream: TcpStream, wait: &dyn Fn()) {
    let _ = stream.set_nodelay(true);
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
            pending.drain(..end + 4);
            wait();
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
