//! `tsumo ws -s script.lua` against the Node.js `ws` server (`scripts/ws-echo.js`), with the
//! example scripts of docs/examples: an echo by script (exact counts), JSON-RPC matched by `id`
//! (notifications and replies out of order in between), a chat room whose pushes are counted
//! apart from the acknowledgements (the connect() header and subprotocol required by the
//! server), and bad scripts refused in one line before any traffic.

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use std::time::Duration;

use common::wsecho::WsEcho;
use common::{json_u64, read_json, run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(60);

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/examples")
        .join(name)
}

/// `tsumo ws ARGS -s SCRIPT --json FILE URL`, which must succeed: its saved result and stdout.
fn scripted(args: &[&str], script: &Path, url: &str, dir: &TempDir) -> (serde_json::Value, String) {
    let json = dir.path().join("run.json");
    let json_arg = json.display().to_string();
    let script_arg = script.display().to_string();
    let mut all = vec!["ws"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-s", &script_arg, "--json", &json_arg, url]);
    let run = run_tsumo(&all, LIMIT);
    run.assert_success();
    assert!(run.stdout.contains("Messages/sec:"), "{}", run.stdout);
    (read_json(&json), run.stdout)
}

fn no_failures(doc: &serde_json::Value) {
    assert_eq!(json_u64(doc, "messages.unanswered"), 0, "{doc}");
    assert_eq!(json_u64(doc, "messages.timed_out"), 0, "{doc}");
    assert_eq!(json_u64(doc, "connections.opened"), 4, "{doc}");
}

/// The echo example: no key, no reply(): each echo answers the message in flight; R × d sent.
#[test]
fn an_echo_by_script_counts_exactly() {
    let server = WsEcho::start(&["--mode", "echo"]);
    let dir = TempDir::new("ws-script-echo");
    let (doc, stdout) = scripted(
        &["-t1", "-c4", "-d2s", "-R", "200"],
        &example("ws-echo.lua"),
        &server.url(),
        &dir,
    );
    let sent = json_u64(&doc, "messages.sent");
    assert!(sent.abs_diff(400) <= 4, "sent {sent}: {doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), sent, "{doc}");
    assert_eq!(json_u64(&doc, "messages.pushed"), 0, "{doc}");
    no_failures(&doc);
    // done() ran after the report, with the run's counts.
    assert!(
        stdout.contains(&format!("echo: {sent} sent, {sent} answered")),
        "{stdout}"
    );
}

/// JSON-RPC: every result matched by its id, the notifications pushes, the answers sent again
/// to an id no longer in flight late, none taken for the call in flight.
#[test]
fn json_rpc_replies_are_matched_by_id() {
    let server = WsEcho::start(&["--mode", "rpc"]);
    let dir = TempDir::new("ws-script-rpc");
    let (doc, stdout) = scripted(
        &["-t1", "-c4", "-d2s", "-R", "200"],
        &example("ws-jsonrpc.lua"),
        &server.url(),
        &dir,
    );
    let sent = json_u64(&doc, "messages.sent");
    assert!(sent.abs_diff(400) <= 4, "sent {sent}: {doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), sent, "{doc}");
    // A notification before every 2nd result, an old answer again before every 4th.
    let pushed = json_u64(&doc, "messages.pushed");
    assert!(pushed.abs_diff(sent / 2) <= 8, "pushed {pushed}: {doc}");
    let late = json_u64(&doc, "messages.late");
    assert!(late.abs_diff(sent / 4) <= 8, "late {late}: {doc}");
    no_failures(&doc);
    assert!(stdout.contains("json-rpc: "), "{stdout}");
}

/// A chat room: every message acknowledged, everyone's messages counted as pushes apart; the
/// server closes a connection without the connect() header and subprotocol, so none closed
/// means they were sent.
#[test]
fn chat_pushes_are_counted_apart_from_the_acknowledgements() {
    let server = WsEcho::start(&["--mode", "chat"]);
    let dir = TempDir::new("ws-script-chat");
    let (doc, _) = scripted(
        &["-t2", "-c4", "-d2s", "-R", "100"],
        &example("ws-chat.lua"),
        &server.url(),
        &dir,
    );
    let sent = json_u64(&doc, "messages.sent");
    assert!(sent.abs_diff(200) <= 4, "sent {sent}: {doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), sent, "{doc}");
    assert!(json_u64(&doc, "messages.pushed") > 0, "{doc}");
    no_failures(&doc);
}

/// A script without message(), one that does not load, one that is not there: one line, exit
/// 2, not one connection made.
#[test]
fn bad_scripts_are_refused_before_any_traffic() {
    let dir = TempDir::new("ws-script-bad");
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let ws = format!(
        "ws://127.0.0.1:{}/",
        listener.local_addr().expect("addr").port()
    );
    let no_message = dir.path().join("no_message.lua");
    std::fs::write(&no_message, "function reply(data) return nil end\n").expect("write");
    let syntax = dir.path().join("syntax.lua");
    std::fs::write(&syntax, "function message( return 'x' end\n").expect("write");
    let raises = dir.path().join("raises.lua");
    std::fs::write(
        &raises,
        "error('no room for you')\nfunction message() end\n",
    )
    .expect("write");
    let missing = dir.path().join("missing.lua");
    for (script, says) in [
        (&no_message, "defines no message() function"),
        (&syntax, "syntax.lua:1:"),
        (&raises, "raises.lua:1: no room for you"),
        (&missing, "cannot open"),
    ] {
        let script = script.display().to_string();
        let args = ["ws", "-d1s", "-s", &script, &ws];
        let run = run_tsumo(&args, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    assert!(listener.accept().is_err(), "a connection was made");
}

/// A hook that raises during the run ends its connection; the report of what ran is printed,
/// then the error's line, exit 1.
#[test]
fn a_script_error_in_the_run_fails_it_with_its_line() {
    let server = WsEcho::start(&["--mode", "echo"]);
    let dir = TempDir::new("ws-script-raises");
    let script = dir.path().join("third.lua");
    std::fs::write(
        &script,
        "n = 0\nfunction message()\n  n = n + 1\n  if n == 3 then error('boom') end\n  return 'x'\nend\n",
    )
    .expect("write");
    let script = script.display().to_string();
    let url = server.url();
    let run = run_tsumo(
        &["ws", "-t1", "-c2", "-d1s", "-R", "20", "-s", &script, &url],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(run.stdout.contains("Messages/sec:"), "{}", run.stdout);
    assert!(
        run.stderr.contains("script error: ") && run.stderr.contains("third.lua:4: boom"),
        "{}",
        run.stderr
    );
}
