//! `tsumo ws`'s connections and the round trip's breakdown, against the Node.js echo server on
//! the pinned `ws` package (`scripts/ws-echo.js`): the server's share by the kernel's receive
//! stamps and tsumo's own delay (a stall the server's, not tsumo's), `--connect-rate` opening
//! the connections over time, `--ping` timing each pong, and their bad values refused in one
//! line. Small counts; timings asserted loosely (the machine is shared).

mod common;

use std::net::TcpListener;

use std::time::Duration;

use common::wsecho::WsEcho;
use common::{json_u64, read_json, run_tsumo, Run, TempDir};

const LIMIT: Duration = Duration::from_secs(60);

/// `tsumo ws ARGS --json FILE URL`, which must succeed: the run and its saved result.
fn ws_run(args: &[&str], url: &str, dir: &TempDir) -> (Run, serde_json::Value) {
    let json = dir.path().join("run.json");
    let json_arg = json.display().to_string();
    let mut all = vec!["ws"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", &json_arg, url]);
    let run = run_tsumo(&all, LIMIT);
    run.assert_success();
    let doc = read_json(&json);
    (run, doc)
}

/// The breakdown: one sample per answered message in each part, the server's share within the
/// corrected round trip; a server that holds its replies 300 ms has that in its share, and
/// the messages that waited behind it are not tsumo's delay.
#[test]
fn the_servers_share_holds_a_stall_and_tsumos_delay_does_not() {
    let node = WsEcho::start(&["--stall-after", "5"]);
    let dir = TempDir::new("ws-conn-split");
    let (run, doc) = ws_run(&["-t1", "-c2", "-d2s", "-R40"], &node.url(), &dir);
    let answered = json_u64(&doc, "messages.answered");
    assert!(answered > 0, "{doc}");
    let b = &doc["breakdown"];
    let timestamps = b["timestamps"].as_str().unwrap_or_default();
    assert!(["kernel", "user"].contains(&timestamps), "{b}");
    for part in ["server", "own", "own_send", "own_read", "send_late"] {
        assert_eq!(
            json_u64(b, &format!("{part}.count")),
            answered,
            "{part}: {b}"
        );
    }
    let at = |path: &str| json_u64(&doc, path);
    assert!(at("breakdown.server.p99") <= at("round_trip.p99"), "{doc}");
    assert!(at("breakdown.server.max") <= at("round_trip.max"), "{doc}");
    assert!(
        at("breakdown.own_send.max") <= at("round_trip.max"),
        "{doc}"
    );
    // The stall (300 ms) is the server's; the sends that waited for its replies are late,
    // but behind the server, not because of tsumo.
    assert!(at("breakdown.server.max") >= 250_000, "{doc}");
    assert!(at("breakdown.send_late.max") >= 100_000, "{doc}");
    assert!(
        at("breakdown.own_send.max") < at("breakdown.server.max"),
        "{doc}"
    );
    assert!(
        run.stdout.contains("Server's latency: p50 "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("tsumo's own delay: p50 "),
        "{}",
        run.stdout
    );
}

/// `--connect-rate 10/s`: ten connections opened one after another over 0.9 s before the run's
/// second, every one of them opened and timed.
#[test]
fn connect_rate_spreads_the_connects() {
    let node = WsEcho::start(&[]);
    let dir = TempDir::new("ws-conn-rate");
    let args = ["-t2", "-c10", "-d1s", "-R20", "--connect-rate", "10/s"];
    let (run, doc) = ws_run(&args, &node.url(), &dir);
    assert_eq!(json_u64(&doc, "connections.opened"), 10, "{doc}");
    assert_eq!(json_u64(&doc, "connections.connect.count"), 10, "{doc}");
    assert_eq!(json_u64(&doc, "plan.connect_rate"), 10, "{doc}");
    // A lower bound only: the opening took 0.9 s at least, then the run its second.
    assert!(run.wall >= Duration::from_millis(1_850), "{:?}", run.wall);
    assert!(
        run.stdout.contains("Connections: 10 of 10 opened at 10/s"),
        "{}",
        run.stdout
    );
    assert_eq!(json_u64(&doc, "messages.answered"), 20, "{doc}");
}

/// `--ping 100ms`: each connection pings ten times or so in a second; each pong is timed.
#[test]
fn ping_counts_and_times_the_pongs() {
    let node = WsEcho::start(&[]);
    let dir = TempDir::new("ws-conn-ping");
    let args = ["-t1", "-c2", "-d1s", "-R10", "--ping", "100ms"];
    let (run, doc) = ws_run(&args, &node.url(), &dir);
    let sent = json_u64(&doc, "connections.pings.sent");
    let answered = json_u64(&doc, "connections.pings.answered");
    assert!((10..=22).contains(&sent), "{doc}");
    assert!(answered + 2 >= sent && answered <= sent, "{doc}");
    assert_eq!(
        json_u64(&doc, "connections.pings.round_trip.count"),
        answered,
        "{doc}"
    );
    assert!(run.stdout.contains("Pings: "), "{}", run.stdout);
    // Without --ping: no pings, no line, no field.
    let (plain, doc) = ws_run(&["-t1", "-c1", "-d1s", "-R5"], &node.url(), &dir);
    assert!(doc["connections"].get("pings").is_none(), "{doc}");
    assert!(!plain.stdout.contains("Pings:"), "{}", plain.stdout);
}

/// Bad values: one line, exit 2, and not one connection made.
#[test]
fn bad_values_are_refused_before_any_traffic() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let ws = format!("ws://127.0.0.1:{port}/");
    for (args, says) in [
        (vec!["--connect-rate", "0/s"], "--connect-rate"),
        (vec!["--connect-rate", "fast"], "--connect-rate"),
        (vec!["--connect-rate", "5/m"], "--connect-rate"),
        (vec!["--ping", "0s"], "--ping"),
        (vec!["--ping", "often"], "--ping"),
    ] {
        let mut all = vec!["ws", "-d1s"];
        all.extend_from_slice(&args);
        all.push(&ws);
        let run = run_tsumo(&all, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
    assert!(listener.accept().is_err(), "a connection was made");
}
