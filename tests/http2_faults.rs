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
    assert!(json_u64(&json, "counters.connections_opened") >= 2 + goaways);
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
