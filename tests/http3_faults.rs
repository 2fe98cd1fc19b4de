//! `--http3` against an in-process HTTP/3 server on quinn and h3 that misbehaves on purpose
//! (`common::faulty::on_quinn`), for what Caddy will not do on demand: GOAWAY in the middle of a
//! run, streams reset with an HTTP/3 error code, a server that dies, an ALPN without `h3` and a
//! self-signed certificate;
//! and a UDP port where something reads and never answers. Every run ends on time, with each
//! failure counted by kind (as `tests/http2_faults.rs` holds HTTP/2 to), or, before any traffic,
//! refused in one line.

mod common;

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::faulty::on_quinn::{H3Fault, H3Server};
use common::{json_errors_total, json_u64, read_json, run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(20);

/// `tsumo --http3 -k ARGS --json FILE URL`, ended within [`LIMIT`], any exit status: the run
/// (its text report on stdout) and the JSON it wrote, `Null` when it wrote none.
fn run(args: &[&str], url: &str) -> (common::Run, serde_json::Value) {
    let dir = TempDir::new("tsumo-h3-faults");
    let path = dir.path().join("run.json");
    let json_arg = path.display().to_string();
    let mut all = vec!["--http3", "-k", "--json", &json_arg];
    all.extend_from_slice(args);
    all.push(url);
    let run = run_tsumo(&all, LIMIT);
    let json = match path.exists() {
        true => read_json(&path),
        false => serde_json::Value::Null,
    };
    (run, json)
}

/// The sum of `field` over the run's intervals.
fn intervals_sum(json: &serde_json::Value, field: &str) -> u64 {
    json["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .map(|i| json_u64(i, field))
        .sum()
}

/// A code's count in `counters.http3.stream_resets` (0 when absent).
fn stream_resets(json: &serde_json::Value, code: &str) -> u64 {
    json["counters"]["http3"]["stream_resets"][code]
        .as_u64()
        .unwrap_or(0)
}

/// Each connection is told to go away after its 40th request (200 req/s on 2 connections: every
/// 0.4 s): the run goes on over new connections, every request due is sent once and none is
/// lost, and tsumo counts the GOAWAYs.
#[test]
fn goaway_mid_run_moves_requests_to_new_connections_without_losing_any() {
    let server = H3Server::start(H3Fault::GoAwayAfter(40));
    let (run, json) = run(&["-t1", "-c2", "-m2", "-d2s", "-R200"], &server.url());
    run.assert_success();
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    // Every request due in the 2 s was sent, each counted once however many tries it took:
    // 200 × 2.
    assert_eq!(intervals_sum(&json, "sent"), 400, "{json:#}");
    assert_eq!(json_u64(&json, "counters.unsent.busy"), 0, "{json:#}");
    // h3 tells of a GOAWAY when a request is refused on its connection: one that came as the
    // run ended, or to a connection replaced already, is not counted.
    let goaway = json_u64(&json, "counters.http3.goaway");
    let goaways_sent = server.goaways();
    assert!(
        goaway > 0 && goaway <= goaways_sent,
        "{goaways_sent} GOAWAYs sent, {goaway} counted: {json:#}"
    );
    // Each connection told to go away is replaced by one new connection; but one of each -c
    // may have learnt of its GOAWAY as the run ended, its replacement's handshake cut short by
    // the end (seen once on a loaded machine).
    let opened = json_u64(&json, "counters.connections_opened");
    assert!(
        (goaway.max(2)..=2 + goaways_sent).contains(&opened),
        "{opened} opened, {goaways_sent} GOAWAYs sent, {goaway} counted: {json:#}"
    );
    // No request lost or answered twice: the server received each answered one once, and at
    // most the 4 streams (2 connections × 2) still in flight at the end besides.
    let served = server.requests();
    let requests = json_u64(&json, "counters.requests");
    assert!(
        requests > 0 && (requests..=requests + 4).contains(&served),
        "{served} served, {requests} counted: {json:#}"
    );
    // The report says so, with the count.
    assert!(
        run.stdout.contains(&format!(
            "HTTP/3 GOAWAY: on {goaway} connections (their unsent requests went on new ones)"
        )),
        "{}",
        run.stdout
    );
}

/// Every 10th request of the first 200 has its response stream reset with H3_INTERNAL_ERROR:
/// each reset is counted under its code and as a read error, exactly as many as the server
/// made, and costs no connection.
#[test]
fn reset_streams_are_counted_by_code_and_as_read_errors() {
    let server = H3Server::start(H3Fault::ResetEvery {
        every: 10,
        until: 200,
    });
    let (run, json) = run(&["-t1", "-c2", "-m2", "-d2s", "-R200"], &server.url());
    run.assert_success();
    let resets = server.resets();
    assert_eq!(resets, 20, "{json:#}");
    assert_eq!(
        stream_resets(&json, "H3_INTERNAL_ERROR"),
        resets,
        "{json:#}"
    );
    assert_eq!(
        json["counters"]["http3"]["stream_resets"]
            .as_object()
            .map(|codes| codes.len()),
        Some(1),
        "{json:#}"
    );
    assert_eq!(json_u64(&json, "counters.errors.read"), resets, "{json:#}");
    assert_eq!(json_errors_total(&json), resets, "{json:#}");
    assert_eq!(intervals_sum(&json, "sent"), 400, "{json:#}");
    assert_eq!(
        json_u64(&json, "counters.connections_opened"),
        2,
        "{json:#}"
    );
    // Every other request the server took was answered (up to 4 in flight at the end).
    let served = server.requests();
    let requests = json_u64(&json, "counters.requests");
    assert!(
        (requests + resets..=requests + resets + 4).contains(&served),
        "{served} served, {requests} answered, {resets} reset: {json:#}"
    );
    assert!(
        run.stdout.contains(&format!(
            "HTTP/3 streams reset by the server: H3_INTERNAL_ERROR {resets}\n"
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "Socket errors: connect 0, read {resets}, write 0, timeout 0"
        )),
        "{}",
        run.stdout
    );
}

/// The server dies 1 s into a 3 s run (as a killed process: no CONNECTION_CLOSE): the run ends
/// on time, the requests it answered before are counted, the ones sent into the silence after
/// time out and are counted as such, every request due is accounted for, and tsumo exits 0 as
/// for any run that got responses.
#[test]
fn a_server_that_dies_mid_run_is_counted_and_the_run_ends_on_time() {
    let server = H3Server::start(H3Fault::DiesAfter(Duration::from_secs(1)));
    let (run, json) = run(
        &["-t1", "-c2", "-m2", "-d3s", "-R200", "-T", "500ms"],
        &server.url(),
    );
    assert!(
        run.wall < Duration::from_secs(3 + 10),
        "{:?}: {}",
        run.wall,
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run.assert_success();
    let requests = json_u64(&json, "counters.requests");
    let timeouts = json_u64(&json, "counters.errors.timeout");
    assert!(requests > 0, "{json:#}");
    // The silence after the death: its requests time out (each stream is held -T long); nothing
    // else failed (a new connection would find no one: a connect error).
    assert!(timeouts > 0, "{json:#}");
    let connect = json_u64(&json, "counters.errors.connect");
    assert_eq!(json_errors_total(&json), timeouts + connect, "{json:#}");
    // Every request the server received was answered and counted, or timed out.
    let served = server.requests();
    assert!(
        (requests..=requests + timeouts).contains(&served),
        "{served} served, {requests} answered, {timeouts} timed out: {json:#}"
    );
    // Every request due in the 3 s is accounted for: sent, or counted as unsent (its
    // connection's streams all held by the silence, or no connection); and every one sent was
    // answered, timed out, or was one of the 4 streams in flight at the end.
    let sent = intervals_sum(&json, "sent");
    let unsent: u64 = ["busy", "connect_failed", "connect_timeout"]
        .iter()
        .map(|why| json_u64(&json, &format!("counters.unsent.{why}")))
        .sum();
    assert_eq!(sent + unsent, 600, "{json:#}");
    assert!(
        (sent.saturating_sub(4)..=sent).contains(&(requests + timeouts)),
        "{sent} sent, {requests} answered, {timeouts} timed out: {json:#}"
    );
}

/// Something on the port that reads every datagram and never answers: the pre-flight check
/// says so in one line, exit 1, no traffic — the same line as for a port where nothing listens.
#[test]
fn a_silent_udp_port_is_found_before_any_traffic() {
    let silent = Silent::bind();
    let run = run_tsumo(
        &[
            "--http3",
            "-k",
            "-d1s",
            "-R10",
            "--timeout",
            "1s",
            &format!("https://{}/", silent.addr),
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(1), "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(
        lines[0].contains("no answer over UDP (QUIC)") && lines[0].contains("firewalls drop UDP"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    // It was there: tsumo's Initial packets reached it.
    assert!(
        silent.datagrams() > 0,
        "no datagram reached the silent socket"
    );
    // Nothing at all on the port says the same.
    let port = silent.addr.port();
    drop(silent);
    let nothing = run_tsumo(
        &[
            "--http3",
            "-k",
            "-d1s",
            "-R10",
            "--timeout",
            "1s",
            &format!("https://127.0.0.1:{port}/"),
        ],
        LIMIT,
    );
    assert_eq!(nothing.status.code(), Some(1), "{}", nothing.stderr);
    assert_eq!(nothing.stderr, run.stderr);
}

/// A QUIC server whose ALPN has no `h3` (only `hq-interop`, or none at all): refused before any
/// traffic in one line that names h3, exit 1 as for any TLS refusal.
#[test]
fn a_server_without_h3_in_its_alpn_is_refused_in_one_line() {
    let alpns: [&[&[u8]]; 2] = [&[b"hq-interop"], &[]];
    for alpn in alpns {
        let server = H3Server::start_with_alpn(H3Fault::None, alpn);
        let run = run_tsumo(&["--http3", "-k", "-d1s", "-R10", &server.url()], LIMIT);
        assert_eq!(run.status.code(), Some(1), "{alpn:?}: {}", run.stderr);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{alpn:?}: {}", run.stderr);
        assert!(
            lines[0].contains("the server does not offer h3 in its ALPN"),
            "{alpn:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        assert_eq!(server.requests(), 0);
    }
}

/// A self-signed certificate without `-k` or `--cacert`: refused before any traffic in the one
/// line a TLS handshake over TCP gives (what was refused, and the fix), not a Debug dump of the
/// verifier's explanation (`Other(OtherError(CertRefused { kind: SelfSigned, … }))`).
#[test]
fn a_refused_certificate_is_explained_in_one_line() {
    let server = H3Server::start(H3Fault::None);
    let run = run_tsumo(&["--http3", "-d1s", "-R10", &server.url()], LIMIT);
    assert_eq!(run.status.code(), Some(1), "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    let line = lines[0];
    assert!(
        line.contains("is self-signed") && line.contains("--cacert"),
        "{line}"
    );
    assert!(line.contains("--insecure"), "{line}");
    for dump in ["Other(", "CertRefused", "kind:", "problem:"] {
        assert!(!line.contains(dump), "a Debug dump: {line}");
    }
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert_eq!(server.requests(), 0);
}

/// A UDP socket on 127.0.0.1 that reads every datagram and drops it, counted.
struct Silent {
    addr: std::net::SocketAddr,
    datagrams: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Silent {
    fn bind() -> Silent {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind 127.0.0.1:0/udp");
        socket
            .set_read_timeout(Some(Duration::from_millis(50)))
            .expect("read timeout");
        let addr = socket.local_addr().expect("local addr");
        let datagrams = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (counted, stopped) = (Arc::clone(&datagrams), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 2048];
            while !stopped.load(Ordering::Relaxed) {
                if socket.recv_from(&mut buf).is_ok() {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Silent {
            addr,
            datagrams,
            stop,
            thread: Some(thread),
        }
    }

    fn datagrams(&self) -> u64 {
        self.datagrams.load(Ordering::Relaxed)
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
