//! `tsumo ws --socketio` against a real socket.io server (`scripts/socketio-echo.js` on the
//! pinned `socket.io` package): exact counts with every acknowledgement matched by its id and
//! the server's Engine.IO pings answered but not counted, a chat room's pushes counted apart
//! from the acknowledgements (without a script and with the example script), the 300 ms stall
//! held by the corrected round trip, a server's disconnect counted by kind, a plain WebSocket
//! server that never opens socket.io timed out, and bad command lines refused in one line.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::socketio::SocketIoEcho;
use common::{json_u64, read_json, run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(60);

/// `tsumo ws --socketio ARGS --json FILE URL`, which must succeed; its saved result.
fn socketio_run(args: &[&str], url: &str, dir: &Path, name: &str) -> serde_json::Value {
    let json = dir.join(name);
    let json_arg = json.display().to_string();
    let mut all = vec!["ws", "--socketio"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", &json_arg, url]);
    let run = run_tsumo(&all, LIMIT);
    run.assert_success();
    assert!(run.stdout.contains("Messages/sec:"), "{}", run.stdout);
    read_json(&json)
}

fn example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("docs/examples")
        .join(name)
        .display()
        .to_string()
}

/// No connection closed or failed to open.
fn no_closes(doc: &serde_json::Value) {
    let closes = &doc["connections"]["closes"];
    assert!(
        closes.is_null() || closes.as_object().is_some_and(|c| c.is_empty()),
        "{doc}"
    );
}

/// R × d events sent (one per connection's share at most off), each acknowledged, and the
/// server's pings every 250 ms (a connection that missed one would be dropped within 250 ms)
/// answered without being counted as messages or pushes.
#[test]
fn every_event_due_is_sent_and_every_ack_matched() {
    let server = SocketIoEcho::start(&["--ping-interval", "250"]);
    let dir = TempDir::new("ws-socketio-echo");
    let doc = socketio_run(
        &["-t2", "-c4", "-d3s", "-R400", "--size", "100"],
        &server.url(),
        dir.path(),
        "e.json",
    );
    let sent = json_u64(&doc, "messages.sent");
    assert!(sent.abs_diff(1200) <= 4, "sent {sent}: {doc}");
    assert_eq!(json_u64(&doc, "messages.due"), 1200, "{doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), sent, "{doc}");
    assert_eq!(json_u64(&doc, "messages.unanswered"), 0, "{doc}");
    assert_eq!(json_u64(&doc, "messages.timed_out"), 0, "{doc}");
    assert_eq!(json_u64(&doc, "messages.late"), 0, "{doc}");
    assert_eq!(json_u64(&doc, "messages.pushed"), 0, "{doc}");
    assert_eq!(json_u64(&doc, "connections.opened"), 4, "{doc}");
    no_closes(&doc);
}

/// One connection in the room: each "chat" event is pushed back to it as a "message" event
/// before its acknowledgement, so the pushes are exactly the events sent, none taken for a reply.
#[test]
fn chat_pushes_are_counted_apart_from_the_acks() {
    let server = SocketIoEcho::start(&[]);
    let dir = TempDir::new("ws-socketio-chat");
    let doc = socketio_run(
        &["-t1", "-c1", "-d2s", "-R50", "--event", "chat"],
        &server.url(),
        dir.path(),
        "c.json",
    );
    let sent = json_u64(&doc, "messages.sent");
    assert!(sent.abs_diff(100) <= 1, "sent {sent}: {doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), sent, "{doc}");
    assert_eq!(json_u64(&doc, "messages.pushed"), sent, "{doc}");
    no_closes(&doc);
}

/// The example script: its events are its own JSON arrays, acknowledged by id; with two
/// connections in the room each event is pushed to both (the tail may miss a closed one).
#[test]
fn the_example_chat_script_is_acknowledged_and_sees_the_pushes() {
    let server = SocketIoEcho::start(&[]);
    let dir = TempDir::new("ws-socketio-script");
    let doc = socketio_run(
        &[
            "-t1",
            "-c2",
            "-d2s",
            "-R40",
            "-s",
            &example("ws-socketio-chat.lua"),
        ],
        &server.url(),
        dir.path(),
        "s.json",
    );
    let sent = json_u64(&doc, "messages.sent");
    assert!(sent.abs_diff(80) <= 2, "sent {sent}: {doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), sent, "{doc}");
    let pushed = json_u64(&doc, "messages.pushed");
    assert!(
        pushed >= sent && pushed <= 2 * sent,
        "pushed {pushed}: {doc}"
    );
    no_closes(&doc);
}

/// The server holds each connection's 50th event and every one after it for 300 ms: the
/// events due meanwhile count their round trips from when they were due (corrected p99 of 600
/// holds the stall); from their actual sends they do not.
#[test]
fn a_stalled_ack_shows_in_the_corrected_round_trip() {
    let server = SocketIoEcho::start(&["--stall-after", "50"]);
    let dir = TempDir::new("ws-socketio-stall");
    let doc = socketio_run(
        &["-t1", "-c2", "-d3s", "-R200", "-U"],
        &server.url(),
        dir.path(),
        "t.json",
    );
    let sent = json_u64(&doc, "messages.sent");
    assert_eq!(json_u64(&doc, "messages.answered"), sent, "{doc}");
    let corrected_p99 = json_u64(&doc, "round_trip.p99");
    let uncorrected_p99 = json_u64(&doc, "round_trip_uncorrected.p99");
    assert!(corrected_p99 >= 250_000, "corrected p99 {corrected_p99} µs");
    assert!(
        uncorrected_p99 < 100_000,
        "uncorrected p99 {uncorrected_p99} µs"
    );
}

/// A server that disconnects each socket instead of acknowledging its 10th event: the end
/// counted by kind, that event unanswered.
#[test]
fn a_server_disconnect_is_counted_by_kind() {
    let server = SocketIoEcho::start(&["--disconnect-after", "10"]);
    let dir = TempDir::new("ws-socketio-disconnect");
    let doc = socketio_run(
        &["-t1", "-c2", "-d2s", "-R50"],
        &server.url(),
        dir.path(),
        "d.json",
    );
    assert_eq!(json_u64(&doc, "messages.sent"), 20, "{doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), 18, "{doc}");
    assert_eq!(json_u64(&doc, "messages.unanswered"), 2, "{doc}");
    assert_eq!(
        doc["connections"]["closes"]["socket.io disconnect"], 2,
        "{doc}"
    );
}

/// A plain WebSocket server never sends Engine.IO's open packet: each opening times out within
/// -T, counted as a timeout; the run fails (exit 1).
#[test]
fn a_server_that_is_not_socketio_times_the_opening_out() {
    let server = common::wsecho::WsEcho::start(&[]);
    let run = run_tsumo(
        &[
            "ws",
            "--socketio",
            "-t1",
            "-c2",
            "-d1s",
            "-T",
            "500ms",
            &server.url(),
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(
        run.stdout.contains("failed to open: timeout 2"),
        "{}",
        run.stdout
    );
}

/// Bad command lines: one line on stderr, exit 2, no traffic.
#[test]
fn bad_command_lines_are_refused_in_one_line() {
    let dir = TempDir::new("ws-socketio-bad");
    let no_message = dir.path().join("no_message.lua");
    std::fs::write(&no_message, "function reply(data) return nil end\n").expect("write");
    let no_message = no_message.display().to_string();
    let url = "ws://127.0.0.1:9/";
    for (args, says) in [
        (
            vec!["--socketio", "-s", &no_message, url],
            "defines no message() function",
        ),
        (vec!["--event", "chat", url], "needs --socketio"),
        (vec!["--socketio", "--event", "", url], "must not be empty"),
        (
            vec!["--socketio", "--event", "disconnect", url],
            "reserved by socket.io",
        ),
        (vec!["--socketio=yes", url], "--socketio"),
    ] {
        let mut all = vec!["ws", "-d1s"];
        all.extend_from_slice(&args);
        let run = run_tsumo(&all, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{all:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{all:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{all:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{all:?}: {}", run.stdout);
    }
}

/// A script whose message() is not an event's JSON array: the run fails with that line.
#[test]
fn a_script_message_that_is_not_an_event_fails_the_run() {
    let server = SocketIoEcho::start(&[]);
    let dir = TempDir::new("ws-socketio-not-array");
    let script = dir.path().join("text.lua");
    std::fs::write(&script, "function message() return 'hello' end\n").expect("write");
    let script = script.display().to_string();
    let url = server.url();
    let run = run_tsumo(
        &[
            "ws",
            "--socketio",
            "-t1",
            "-c1",
            "-d1s",
            "-R10",
            "-s",
            &script,
            &url,
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(run.stderr.contains("JSON array"), "{}", run.stderr);
}
