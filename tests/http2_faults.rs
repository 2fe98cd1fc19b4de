//! `--http2` against in-process HTTP/2 servers on hyper that misbehave on purpose, for what
//! nginx will not do on demand: GOAWAY in the middle of a run, RST_STREAM, one stream that never
//! gets its answer, and SETTINGS granting a single stream. Every run must end on time, with the
//! failure counted by kind and the report saying what the server did.

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http2;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use common::{json_errors_total, json_u64, run_tsumo};

const BODY: &[u8] = b"hello from hyper\n";

/// How a [`H2Server`] misbehaves.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// Every connection gets a GOAWAY (graceful, NO_ERROR) this long after it opened; its open
    /// streams are still answered.
    GoAwayAfter(Duration),
    /// Every `n`th request's stream is reset (the service fails: RST_STREAM INTERNAL_ERROR).
    ResetEvery(u64),
    /// The `n`th request of the server is never answered; all others are.
    StallOne(u64),
    /// SETTINGS_MAX_CONCURRENT_STREAMS 1, each response after `delay`.
    OneStream { delay: Duration },
}

/// An h2c server (prior knowledge) on 127.0.0.1, on its own thread, stopped when dropped.
struct H2Server {
    addr: SocketAddr,
    requests: Arc<AtomicU64>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl H2Server {
    fn start(fault: Fault) -> H2Server {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let addr = std_listener.local_addr().expect("addr");
        let requests = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&requests);
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = TcpListener::from_std(std_listener).expect("listener");
                tokio::select! {
                    _ = stopped => {}
                    _ = serve(listener, fault, counted) => {}
                }
            });
        });
        H2Server {
            addr,
            requests,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

impl Drop for H2Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn serve(listener: TcpListener, fault: Fault, requests: Arc<AtomicU64>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let requests = Arc::clone(&requests);
        tokio::spawn(async move {
            let service = service_fn(move |_request: Request<hyper::body::Incoming>| {
                let n = requests.fetch_add(1, Ordering::Relaxed) + 1;
                async move {
                    match fault {
                        Fault::ResetEvery(every) if n.is_multiple_of(every) => {
                            return Err(std::io::Error::other("reset on purpose"));
                        }
                        Fault::StallOne(which) if n == which => {
                            std::future::pending::<()>().await;
                        }
                        Fault::OneStream { delay } => tokio::time::sleep(delay).await,
                        _ => {}
                    }
                    Ok(Response::new(Full::new(Bytes::from_static(BODY))))
                }
            });
            let mut builder = http2::Builder::new(TokioExecutor::new());
            if let Fault::OneStream { .. } = fault {
                builder.max_concurrent_streams(1);
            }
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            match fault {
                Fault::GoAwayAfter(after) => {
                    tokio::select! {
                        _ = connection.as_mut() => return,
                        _ = tokio::time::sleep(after) => connection.as_mut().graceful_shutdown(),
                    }
                    let _ = connection.await;
                }
                _ => {
                    let _ = connection.await;
                }
            }
        });
    }
}

/// `tsumo --http2 ARGS --json - URL`, which must end within `limit` with exit 0.
fn run(args: &[&str], url: &str, limit: Duration) -> (serde_json::Value, Duration) {
    let mut all = vec!["--http2", "--json", "-"];
    all.extend_from_slice(args);
    all.push(url);
    let run = run_tsumo(&all, limit);
    run.assert_success();
    (run.json(), run.wall)
}

/// A reason's count in `counters.http2.<frames>` (0 when absent).
fn frames(json: &serde_json::Value, frames: &str, reason: &str) -> u64 {
    json["counters"]["http2"][frames][reason]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn goaway_mid_run_moves_requests_to_new_connections_without_losing_any() {
    let server = H2Server::start(Fault::GoAwayAfter(Duration::from_millis(700)));
    let (json, _) = run(
        &["-t1", "-c2", "-m4", "-d2s", "-R1000"],
        &server.url(),
        Duration::from_secs(15),
    );
    let goaways = frames(&json, "goaway", "NO_ERROR");
    // Each connection is told to go away 0.7 s after it opened, within a 2 s run.
    assert!(goaways >= 2, "{goaways} GOAWAYs: {json:#}");
    // hyper's graceful shutdown sends two GOAWAY frames (the highest stream id, then the last
    // one it took), the second perhaps after the run's end; each connection told to go away is
    // replaced by one new connection, and a new one opens only after a GOAWAY.
    let opened = json_u64(&json, "counters.connections_opened");
    assert!(
        (2 + goaways.div_ceil(2)..=2 + goaways).contains(&opened),
        "{opened} opened, {goaways} GOAWAYs: {json:#}"
    );
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    // No request lost or counted twice: the server saw each counted one once, and at most the
    // 8 streams (2 connections × 4) still in flight at the end besides.
    let served = server.requests.load(Ordering::Relaxed);
    let counted = json_u64(&json, "counters.requests");
    assert!(
        counted > 0 && (counted..=counted + 8).contains(&served),
        "{served} served, {counted} counted"
    );
}

#[test]
fn reset_streams_are_counted_by_code_and_as_read_errors() {
    let server = H2Server::start(Fault::ResetEvery(10));
    let (json, _) = run(
        &["-t1", "-c2", "-m4", "-d2s", "-R500"],
        &server.url(),
        Duration::from_secs(15),
    );
    let resets = frames(&json, "rst_stream", "INTERNAL_ERROR");
    let read = json_u64(&json, "counters.errors.read");
    let requests = json_u64(&json, "counters.requests");
    // Every tenth request the server took was reset, and each reset is one failed request; the
    // rest were answered. Up to 8 streams (2 connections × 4) were still in flight at the end.
    let served = server.requests.load(Ordering::Relaxed);
    assert!(resets > 0, "{json:#}");
    assert_eq!(read, resets, "{json:#}");
    assert!(
        (requests + resets..=requests + resets + 8).contains(&served),
        "{served} served, {requests} answered, {resets} reset"
    );
    assert!(
        (served / 10).saturating_sub(8) <= resets && resets <= served / 10,
        "{served} served, {resets} reset"
    );
    assert_eq!(
        json_u64(&json, "counters.connections_opened"),
        2,
        "{json:#}"
    );
}

#[test]
fn a_stalled_stream_times_out_while_the_others_go_on() {
    let server = H2Server::start(Fault::StallOne(50));
    let (json, _) = run(
        &["-t1", "-c1", "-m4", "-d2s", "-R500", "-T", "300ms"],
        &server.url(),
        Duration::from_secs(15),
    );
    assert_eq!(json_u64(&json, "counters.errors.timeout"), 1, "{json:#}");
    assert_eq!(json_u64(&json, "counters.errors.read"), 0, "{json:#}");
    // The stall held one stream, not the connection: requests went on past the stalled 50th
    // and its 3 stream-mates, and every other one the server took was answered (up to 4
    // streams in flight at the end).
    let requests = json_u64(&json, "counters.requests");
    let served = server.requests.load(Ordering::Relaxed);
    assert!(served > 50 + 3, "{served} served: {json:#}");
    assert!(
        (requests + 1..=requests + 1 + 4).contains(&served),
        "{served} served, {requests} answered: {json:#}"
    );
}

#[test]
fn a_single_granted_stream_is_reported_and_its_queue_is_in_the_latency() {
    let server = H2Server::start(Fault::OneStream {
        delay: Duration::from_millis(5),
    });
    // 4 streams asked for, 1 granted; 100 req/s on one connection with 5 ms responses fits in
    // one stream, 300 req/s does not: the queue grows and the corrected latency shows it.
    let (json, _) = run(
        &["-t1", "-c1", "-m4", "-d2s", "-R100"],
        &server.url(),
        Duration::from_secs(15),
    );
    assert_eq!(json["counters"]["http2"]["granted_min"], 1, "{json:#}");
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    let (overloaded, _) = run(
        &["-t1", "-c1", "-m4", "-d2s", "-R300"],
        &server.url(),
        Duration::from_secs(15),
    );
    // A floor the server's own 5 ms per request sets (a busier machine only adds to it).
    let p99 = json_u64(&overloaded, "latency.p99");
    assert!(p99 > 100_000, "p99 {p99} us: {overloaded:#}");
    let text = run_tsumo(
        &[
            "--http2",
            "-t1",
            "-c1",
            "-m4",
            "-d1s",
            "-R50",
            &server.url(),
        ],
        Duration::from_secs(15),
    );
    text.assert_success();
    assert!(
        text.stdout.contains(
            "Note: the server granted only 1 concurrent streams per connection, fewer than -m 4"
        ),
        "{}",
        text.stdout
    );
    drop(server);
}

/// A server that lowers SETTINGS_MAX_CONCURRENT_STREAMS mid-connection, and holds the client to
/// it as RFC 9113 allows once the client has acknowledged the change: a stream opened while as
/// many as the limit are open is answered with GOAWAY PROTOCOL_ERROR. By hand: hyper's and h2's
/// servers fix the limit at the start of a connection.
mod lowering {
    use std::collections::HashSet;
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};
    use tokio::sync::{mpsc, oneshot};

    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    const DATA: u8 = 0x0;
    const HEADERS: u8 = 0x1;
    const RST_STREAM: u8 = 0x3;
    const SETTINGS: u8 = 0x4;
    const PING: u8 = 0x6;
    const GOAWAY: u8 = 0x7;
    const ACK: u8 = 0x1;
    const END_STREAM: u8 = 0x1;
    const END_HEADERS: u8 = 0x4;
    const PROTOCOL_ERROR: u32 = 0x1;
    /// `:status: 200`, index 8 of HPACK's static table.
    const STATUS_200: u8 = 0x88;

    /// When and how far the limit goes down.
    #[derive(Debug, Clone, Copy)]
    pub struct Lowering {
        /// The limit of the server's first SETTINGS.
        pub first: u32,
        /// The limit it lowers to, in the same write as the connection's `after`th response.
        pub lowered: u32,
        pub after: u64,
        /// Every response this long after its request.
        pub delay: Duration,
    }

    pub struct Server {
        pub addr: SocketAddr,
        /// Requests answered.
        pub answered: Arc<AtomicU64>,
        /// Streams opened past the acknowledged limit (each ends its connection).
        pub violations: Arc<AtomicU64>,
        stop: Option<oneshot::Sender<()>>,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    impl Server {
        pub fn start(lowering: Lowering) -> Server {
            let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            std_listener.set_nonblocking(true).expect("nonblocking");
            let addr = std_listener.local_addr().expect("addr");
            let answered = Arc::new(AtomicU64::new(0));
            let violations = Arc::new(AtomicU64::new(0));
            let counts = (Arc::clone(&answered), Arc::clone(&violations));
            let (stop, stopped) = oneshot::channel();
            let thread = std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime");
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(std_listener).expect("listener");
                    let accept = async {
                        loop {
                            let Ok((stream, _)) = listener.accept().await else {
                                continue;
                            };
                            let counts = (Arc::clone(&counts.0), Arc::clone(&counts.1));
                            tokio::spawn(connection(stream, lowering, counts));
                        }
                    };
                    tokio::select! {
                        _ = stopped => {}
                        _ = accept => {}
                    }
                });
            });
            Server {
                addr,
                answered,
                violations,
                stop: Some(stop),
                thread: Some(thread),
            }
        }

        pub fn url(&self) -> String {
            format!("http://{}/", self.addr)
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            if let Some(stop) = self.stop.take() {
                let _ = stop.send(());
            }
            if let Some(thread) = self.thread.take() {
                let _ = thread.join();
            }
        }
    }

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    fn max_streams(limit: u32) -> Vec<u8> {
        let mut payload = vec![0, 3];
        payload.extend_from_slice(&limit.to_be_bytes());
        frame(SETTINGS, 0, 0, &payload)
    }

    /// What the connection's reader and its delayed responses share.
    struct State {
        open: HashSet<u32>,
        answered: u64,
    }

    async fn connection(
        stream: TcpStream,
        lowering: Lowering,
        counts: (Arc<AtomicU64>, Arc<AtomicU64>),
    ) {
        let (answered_total, violations) = counts;
        let (mut reader, mut writer) = stream.into_split();
        let (to_writer, mut writes) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            while let Some(bytes) = writes.recv().await {
                if writer.write_all(&bytes).await.is_err() {
                    return;
                }
            }
        });
        let mut preface = [0u8; 24];
        if reader.read_exact(&mut preface).await.is_err() || preface != PREFACE {
            return;
        }
        let _ = to_writer.send(max_streams(lowering.first));
        let state = Arc::new(Mutex::new(State {
            open: HashSet::new(),
            answered: 0,
        }));
        // Our SETTINGS acknowledged so far: the first, then the lowered one.
        let mut acks = 0;
        loop {
            let mut header = [0u8; 9];
            if reader.read_exact(&mut header).await.is_err() {
                return;
            }
            let len =
                usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
            let (kind, flags) = (header[3], header[4]);
            let id = u32::from_be_bytes([header[5], header[6], header[7], header[8]]) & 0x7fff_ffff;
            let mut payload = vec![0u8; len];
            if reader.read_exact(&mut payload).await.is_err() {
                return;
            }
            match kind {
                SETTINGS if flags & ACK == 0 => {
                    let _ = to_writer.send(frame(SETTINGS, ACK, 0, &[]));
                }
                SETTINGS => acks += 1,
                PING if flags & ACK == 0 => {
                    let _ = to_writer.send(frame(PING, ACK, 0, &payload));
                }
                RST_STREAM => {
                    state.lock().expect("state").open.remove(&id);
                }
                HEADERS => {
                    let limit = match acks {
                        0 => u32::MAX,
                        1 => lowering.first,
                        _ => lowering.lowered,
                    };
                    let open = {
                        let mut s = state.lock().expect("state");
                        s.open.insert(id);
                        s.open.len()
                    };
                    if open > limit as usize {
                        violations.fetch_add(1, Ordering::Relaxed);
                        let mut goaway = id.to_be_bytes().to_vec();
                        goaway.extend_from_slice(&PROTOCOL_ERROR.to_be_bytes());
                        let _ = to_writer.send(frame(GOAWAY, 0, 0, &goaway));
                        // Let the GOAWAY out before the connection goes.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        return;
                    }
                    let (state, to_writer, answered_total) = (
                        Arc::clone(&state),
                        to_writer.clone(),
                        Arc::clone(&answered_total),
                    );
                    tokio::spawn(async move {
                        tokio::time::sleep(lowering.delay).await;
                        let mut bytes = frame(HEADERS, END_STREAM | END_HEADERS, id, &[STATUS_200]);
                        let mut s = state.lock().expect("state");
                        if !s.open.remove(&id) {
                            return;
                        }
                        s.answered += 1;
                        if s.answered == lowering.after {
                            bytes.extend(max_streams(lowering.lowered));
                        }
                        answered_total.fetch_add(1, Ordering::Relaxed);
                        let _ = to_writer.send(bytes);
                    });
                }
                DATA | GOAWAY => {}
                _ => {}
            }
        }
    }
}

/// The server lowers its limit from 4 to 1 after 20 responses: tsumo opens no stream past it
/// (the strict server would answer with GOAWAY PROTOCOL_ERROR), and the report shows the lower
/// limit and the note that it is fewer than `-m`.
#[test]
fn a_limit_lowered_mid_connection_is_kept_and_reported() {
    let server = lowering::Server::start(lowering::Lowering {
        first: 4,
        lowered: 1,
        after: 20,
        delay: Duration::from_millis(20),
    });
    let run = run_tsumo(
        &[
            "--http2",
            "-t1",
            "-c1",
            "-m4",
            "-d2s",
            "-R100",
            &server.url(),
        ],
        Duration::from_secs(20),
    );
    run.assert_success();
    assert_eq!(
        server.violations.load(Ordering::Relaxed),
        0,
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("HTTP/2: server granted 4 concurrent streams per connection, lowered to 1 later on 1 connection (-m 4); GOAWAY received: 0;"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "Note: the server granted only 1 concurrent streams per connection, fewer than -m 4"
        ),
        "{}",
        run.stdout
    );
    let (json, _) = run_json_any(&["-t1", "-c1", "-m4", "-d2s", "-R100"], &server.url());
    assert_eq!(server.violations.load(Ordering::Relaxed), 0, "{json:#}");
    assert_eq!(frames(&json, "goaway", "PROTOCOL_ERROR"), 0, "{json:#}");
    assert_eq!(json["counters"]["http2"]["granted_min"], 4, "{json:#}");
    assert_eq!(json["counters"]["http2"]["lowered_min"], 1, "{json:#}");
    assert_eq!(json["counters"]["http2"]["lowered"], 1, "{json:#}");
    assert_eq!(
        json_u64(&json, "counters.connections_opened"),
        1,
        "{json:#}"
    );
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
}

/// The limit drops to 0 and stays there: no stream starts on the connection any more, the
/// requests that fall due wait (unsent, not timed out), and the note says 0 is fewer than `-m`.
#[test]
fn a_limit_lowered_to_zero_opens_no_stream_and_is_noted() {
    let server = lowering::Server::start(lowering::Lowering {
        first: 4,
        lowered: 0,
        after: 10,
        delay: Duration::from_millis(5),
    });
    let (json, _) = run_json_any(
        &["-t1", "-c1", "-m4", "-d2s", "-R50", "-T", "500ms"],
        &server.url(),
    );
    assert_eq!(server.violations.load(Ordering::Relaxed), 0, "{json:#}");
    assert_eq!(frames(&json, "goaway", "PROTOCOL_ERROR"), 0, "{json:#}");
    // The 10th response carries the new limit; streams opened before it arrived (at most -m
    // less one, when a busy machine sent late) are legal and answered. None after it.
    let requests = json_u64(&json, "counters.requests");
    assert!((10..=13).contains(&requests), "{json:#}");
    assert_eq!(
        server.answered.load(Ordering::Relaxed),
        requests,
        "{json:#}"
    );
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    assert!(json_u64(&json, "counters.unsent.busy") > 0, "{json:#}");
    assert_eq!(json["counters"]["http2"]["lowered_min"], 0, "{json:#}");
    let text = run_tsumo(
        &[
            "--http2",
            "-t1",
            "-c1",
            "-m4",
            "-d1s",
            "-R50",
            "-T",
            "500ms",
            &server.url(),
        ],
        Duration::from_secs(20),
    );
    assert!(
        text.stdout.contains(
            "Note: the server granted only 0 concurrent streams per connection, fewer than -m 4"
        ),
        "{}",
        text.stdout
    );
}

/// `tsumo --http2 ARGS --json - URL` with any exit status, ended within 20 s.
fn run_json_any(args: &[&str], url: &str) -> (serde_json::Value, common::Run) {
    let mut all = vec!["--http2", "--json", "-"];
    all.extend_from_slice(args);
    all.push(url);
    let run = run_tsumo(&all, Duration::from_secs(20));
    (run.json(), run)
}
