//! `tsumo ws` against real echo servers: websocketd (`websocketd --port P cat`, a process per
//! connection) and a Node.js server on the pinned `ws` package (`scripts/ws-echo.js`, which can
//! also stall its replies for 300 ms). Exact counts (every message due sent, every echo matched,
//! none unanswered), the closed loop, the stall held by the corrected round trip and not by the
//! uncorrected one, `wss://` with `--cacert`, an upgrade refused by its HTTP status, the saved file read back by the
//! tools, and bad command lines refused in one line before any traffic.

mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::schema::{assert_valid, assert_valid_doc, Kind};
use common::wsecho::{assert_exact, WsEcho};
use common::{free_port, json_u64, read_json, run_tsumo, wait_for, TempDir};

const LIMIT: Duration = Duration::from_secs(60);

/// A server process, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        common::terminate(&mut self.child);
    }
}

impl Server {
    fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/", self.port)
    }

    fn listening(child: Child, port: u16) -> Server {
        wait_for("the echo server listens", Duration::from_secs(15), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Server { child, port }
    }

    /// `websocketd --port P cat`: an echo server, one `cat` per connection (with `tls`, over
    /// TLS with that certificate and key).
    fn websocketd(tls: Option<&common::certs::CertFiles>) -> Server {
        Server::websocketd_running(tls, &["cat"])
    }

    /// `websocketd --port P PROGRAM…`, a process of it per connection.
    fn websocketd_running(tls: Option<&common::certs::CertFiles>, program: &[&str]) -> Server {
        let port = free_port();
        let mut command = Command::new("websocketd");
        command.args(["--address", "127.0.0.1", "--port", &port.to_string()]);
        if let Some(files) = tls {
            command.arg("--ssl").arg("--sslcert").arg(&files.cert);
            command.arg("--sslkey").arg(&files.key);
        }
        let child = command
            .args(program)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("websocketd is installed (scripts/test installs it)");
        Server::listening(child, port)
    }
}

/// `tsumo ws ARGS --json FILE URL`, which must succeed; its saved result.
fn ws_run(args: &[&str], url: &str, dir: &Path, name: &str) -> serde_json::Value {
    let json = dir.join(name);
    let json_arg = json.display().to_string();
    let mut all = vec!["ws"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", &json_arg, url]);
    let run = run_tsumo(&all, LIMIT);
    run.assert_success();
    assert!(run.stdout.contains("Messages/sec:"), "{}", run.stdout);
    assert_valid(Kind::Ws, &[&json]);
    read_json(&json)
}

#[test]
fn every_message_due_is_sent_and_every_echo_matched_by_websocketd() {
    let server = Server::websocketd(None);
    let dir = TempDir::new("ws-websocketd");
    let doc = ws_run(
        &["-t1", "-c2", "-d3s", "-R100"],
        &server.url(),
        dir.path(),
        "w.json",
    );
    assert_exact(&doc, 100, 3, 2);
    assert_eq!(doc["mode"], "ws");
    // The saved run is read back by the tools; a merge is refused in one line.
    let file = dir.path().join("w.json").display().to_string();
    let markdown = run_tsumo(&["report", "--markdown", &file, "-o", "-"], LIMIT);
    markdown.assert_success();
    assert!(markdown.stdout.contains("WebSocket"), "{}", markdown.stdout);
    let copy = dir.path().join("copy.json");
    let mut other = doc.clone();
    other["run_id"] = "another".into();
    std::fs::write(&copy, other.to_string()).expect("write copy");
    let copy = copy.display().to_string();
    let compare = run_tsumo(&["compare", &file, &copy], LIMIT);
    compare.assert_success();
    assert!(
        compare.stdout.contains("Round trip p99"),
        "{}",
        compare.stdout
    );
    let merge = run_tsumo(&["merge", &file, &copy], LIMIT);
    assert_eq!(merge.status.code(), Some(2), "{merge:?}");
    assert_eq!(merge.stderr.lines().count(), 1, "{}", merge.stderr);
}

/// `wss://` with the HTTPS run's TLS options: `--cacert` trusts the server's own certificate.
#[test]
fn wss_takes_the_https_tls_options() {
    let dir = TempDir::new("ws-wss");
    let files = common::certs::self_signed(dir.path(), "server", "127.0.0.1", Some("IP:127.0.0.1"));
    let server = Server::websocketd(Some(&files));
    let url = format!("wss://127.0.0.1:{}/", server.port);
    let cacert = files.cert.display().to_string();
    let doc = ws_run(
        &["-t1", "-c2", "-d2s", "-R50", "--cacert", &cacert],
        &url,
        dir.path(),
        "t.json",
    );
    assert_exact(&doc, 50, 2, 2);
    // Without it, the self-signed certificate stops the run before any traffic.
    let refused = run_tsumo(&["ws", "-t1", "-c2", "-d1s", &url], LIMIT);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(refused.stderr.contains("--cacert"), "{}", refused.stderr);
}

#[test]
fn every_message_due_is_sent_and_every_echo_matched_by_node_ws() {
    let server = WsEcho::start(&[]);
    let dir = TempDir::new("ws-node");
    let doc = ws_run(
        &["-t2", "-c4", "-d3s", "-R400", "--size", "200"],
        &server.url(),
        dir.path(),
        "n.json",
    );
    assert_exact(&doc, 400, 3, 4);
    let sent = json_u64(&doc, "messages.sent");
    assert_eq!(json_u64(&doc, "messages.bytes_sent"), sent * 200);
    assert_eq!(json_u64(&doc, "messages.bytes_received"), sent * 200);
}

#[test]
fn without_a_rate_each_connection_sends_when_its_last_message_is_answered() {
    let server = WsEcho::start(&[]);
    let run = run_tsumo(
        &["ws", "-t1", "-c2", "-d2s", "--json", "-", &server.url()],
        LIMIT,
    );
    run.assert_success();
    let doc = run.json();
    assert_valid_doc(Kind::Ws, &doc);
    let sent = json_u64(&doc, "messages.sent");
    assert!(sent > 100, "{doc}");
    assert!(doc["messages"].get("due").is_none(), "{doc}");
    // One in flight per connection: at the end at most one each was cut off.
    let answered = json_u64(&doc, "messages.answered");
    assert!(sent - answered <= 2, "{doc}");
    assert_eq!(json_u64(&doc, "messages.pushed"), 0, "{doc}");
    let text = run_tsumo(&["ws", "-t1", "-c1", "-d1s", &server.url()], LIMIT);
    assert!(
        text.stdout.contains("closed loop (no -R)"),
        "{}",
        text.stdout
    );
}

/// The server holds each connection's 50th message and every one after it for 300 ms. The
/// messages due meanwhile wait for it (one in flight per connection), so their round trips,
/// counted from when they were due, hold the stall (300 ms less how long after its start each
/// was due: p99 of 600 messages is the 6th longest, due 30–40 ms into the stall); counted from
/// their actual sends they do not: only the 50th message itself waited there.
#[test]
fn a_stalled_reply_shows_in_the_corrected_round_trip_not_the_uncorrected() {
    let server = WsEcho::start(&["--stall-after", "50"]);
    let dir = TempDir::new("ws-stall");
    let doc = ws_run(
        &["-t1", "-c2", "-d3s", "-R200", "-U"],
        &server.url(),
        dir.path(),
        "s.json",
    );
    assert_exact(&doc, 200, 3, 2);
    let corrected_p99 = json_u64(&doc, "round_trip.p99");
    let corrected_max = json_u64(&doc, "round_trip.max");
    let uncorrected_p99 = json_u64(&doc, "round_trip_uncorrected.p99");
    assert!(corrected_max >= 300_000, "{doc}");
    assert!(corrected_p99 >= 250_000, "corrected p99 {corrected_p99} µs");
    assert!(
        uncorrected_p99 < 100_000,
        "uncorrected p99 {uncorrected_p99} µs"
    );
}

/// A server that closes each connection with 1001 instead of answering its 10th message: the
/// closes counted by code, that message unanswered, the run still a run (exit 0).
#[test]
fn closes_are_counted_by_code() {
    let server = WsEcho::start(&["--close-after", "10"]);
    let dir = TempDir::new("ws-close");
    let doc = ws_run(
        &["-t1", "-c2", "-d2s", "-R50"],
        &server.url(),
        dir.path(),
        "c.json",
    );
    assert_eq!(json_u64(&doc, "messages.sent"), 20, "{doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), 18, "{doc}");
    assert_eq!(json_u64(&doc, "messages.unanswered"), 2, "{doc}");
    assert_eq!(doc["connections"]["closes"]["close 1001"], 2, "{doc}");
}

/// A server that never answers: each message counted as without a reply within -T, the
/// connection going on with the next, the run ending on time and failing (exit 1).
#[test]
fn a_server_that_never_answers_ends_on_time_with_each_message_timed_out() {
    let server = Server::websocketd_running(None, &["sleep", "30"]);
    let run = run_tsumo(
        &[
            "ws",
            "-t1",
            "-c1",
            "-d2s",
            "-R10",
            "-T",
            "300ms",
            "--json",
            "-",
            &server.url(),
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(run.wall < Duration::from_secs(6), "{:?}", run.wall);
    let doc = run.json();
    let sent = json_u64(&doc, "messages.sent");
    // One in flight: each waits its 300 ms, so 10/s cannot all go.
    assert!((5..=8).contains(&sent), "{doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), 0, "{doc}");
    let timed_out = json_u64(&doc, "messages.timed_out");
    let unanswered = json_u64(&doc, "messages.unanswered");
    assert_eq!(timed_out + unanswered, sent, "{doc}");
    assert_eq!(doc["failure"], "no message was answered", "{doc}");
    assert_valid_doc(Kind::Ws, &doc);
}

/// A server that accepts the connection and never answers the upgrade: each connection counted
/// as a timeout.
#[test]
fn an_upgrade_never_answered_is_a_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().flatten().take(3).collect();
        std::thread::sleep(Duration::from_secs(20));
        drop(held);
    });
    let url = format!("ws://127.0.0.1:{port}/");
    let run = run_tsumo(&["ws", "-t1", "-c2", "-d1s", "-T", "500ms", &url], LIMIT);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(
        run.stdout.contains("failed to open: timeout 2"),
        "{}",
        run.stdout
    );
}

/// A server that answers the upgrade with 404: each connection counted by that status, the run
/// failed (exit 1) with the reason.
#[test]
fn an_upgrade_refused_is_counted_by_its_status() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut head = [0u8; 2048];
            let _ = stream.read(&mut head);
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let url = format!("ws://127.0.0.1:{port}/chat");
    let run = run_tsumo(&["ws", "-t1", "-c2", "-d1s", "-R10", &url], LIMIT);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(
        run.stdout
            .contains("failed to open: upgrade answered 404 2"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("no connection opened"),
        "{}",
        run.stdout
    );
}

/// Bad command lines: one line, exit 2, and not one connection made.
#[test]
fn bad_command_lines_are_refused_before_any_traffic() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let ws = format!("ws://127.0.0.1:{port}/");
    let http = format!("http://127.0.0.1:{port}/");
    for (args, says) in [
        (
            vec!["ws", "-d1s", http.as_str()],
            "scheme must be ws or wss",
        ),
        (vec!["ws", "-d1s", "--size", "0", ws.as_str()], "--size"),
        (vec!["ws", "-d1s", "-R", "0", ws.as_str()], "-R"),
        (vec!["ws", "-t4", "-c2", ws.as_str()], "fewer connections"),
        (vec!["ws", "-d1s"], "missing URL"),
    ] {
        let run = run_tsumo(&args, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    assert!(listener.accept().is_err(), "a connection was made");
}
