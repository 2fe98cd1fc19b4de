//! `tsumo ws --requests FILE`: every message on record, in the HTTP log's columns, read back by
//! DuckDB (tests/common/duckdb.rs) against the Node echo server (`scripts/ws-echo.js`): one row
//! per message sent, the p99 of their round trips the JSON's to its precision, plain and zstd;
//! messages without a reply have rows with their error (`timeout`, `closed` with the close
//! code); a full device stops the log, not the run; bad options are refused before traffic.
//! (`tsumo merge --requests` of ws shards: tests/ws_shards.rs.)

mod common;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use common::duckdb::{assert_p99, duckdb, readers};
use common::wsecho::WsEcho;
use common::{run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(120);

/// The columns, as src/stats/requests.rs has them (an HTTP run's).
const HEADER: &str = "intended_ns,sent_ns,received_ns,shard,conn,stream,status,bytes_in,\
bytes_out,corrected_ns,server_ns,tsumo_ns,error";

fn u(json: &Value, pointer: &str) -> u64 {
    json.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no {pointer} in {json:#}"))
}

/// A run of `tsumo ws` with `--requests` into `log`: its JSON.
fn logged_ws(url: &str, log: &Path, extra: &[&str]) -> Value {
    let log_arg = log.to_str().unwrap();
    let mut args = vec!["ws", "-t2", "-c8", "-d2s", "-R2000", "--size", "100"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--requests", log_arg, "--json", "-", url]);
    let run = run_tsumo(&args, LIMIT);
    run.assert_success();
    let json = run.json();
    assert_eq!(json["requests_log"]["path"], log_arg, "{json:#}");
    assert_eq!(json["requests_log"]["complete"], true, "{json:#}");
    json
}

/// A plain log's rows, each split into its columns.
fn rows_of(log: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(log).unwrap();
    let mut lines = text.lines();
    assert!(lines
        .next()
        .is_some_and(|l| l.starts_with("# tsumo requests v1; start_unix_ns=")));
    assert_eq!(lines.next(), Some(HEADER));
    lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn duckdb_reads_a_ws_log_with_a_row_per_message_plain_and_zstd() {
    let Some(python) = readers() else { return };
    let echo = WsEcho::start(&[]);
    let dir = TempDir::new("ws-requests");
    for name in ["ws.csv", "ws.csv.zst"] {
        let log = dir.path().join(name);
        let json = logged_ws(&echo.url(), &log, &[]);
        let sent = u(&json, "/messages/sent");
        assert!(sent > 3000, "{json:#}");
        let read = duckdb(&python, &log);
        assert_eq!(u(&read, "/rows"), sent, "{read} {json:#}");
        assert_eq!(u(&json, "/requests_log/rows"), sent);
        let unanswered = u(&json, "/messages/timed_out") + u(&json, "/messages/unanswered");
        assert_eq!(u(&read, "/errors"), unanswered, "{read}");
        assert_p99(&read, u(&json, "/round_trip/p99"));
        let columns: Vec<&str> = read["columns"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(columns.join(","), HEADER);
    }
    // Each connection's streams are its messages' numbers, 0, 1, 2…; every answered row's bytes
    // are the message's 100 each way, and no status (a reply has none).
    let rows = rows_of(&dir.path().join("ws.csv"));
    let mut next = std::collections::BTreeMap::<String, u64>::new();
    let mut sorted = rows.clone();
    sorted.sort_by_key(|r| r[0].parse::<u64>().unwrap());
    for row in &sorted {
        let seq: u64 = row[5].parse().unwrap();
        let expected = next.entry(row[4].clone()).or_default();
        assert_eq!(seq, *expected, "{row:?}");
        *expected += 1;
    }
    assert_eq!(next.len(), 8, "eight connections: {next:?}");
    for row in rows.iter().filter(|r| r[12].is_empty()) {
        assert_eq!(
            (row[6].as_str(), row[7].as_str(), row[8].as_str()),
            ("", "100", "100")
        );
        let corrected: u64 = row[9].parse().unwrap();
        let server: u64 = row[10].parse().unwrap();
        assert!(server <= corrected, "{row:?}");
    }
}

#[test]
fn messages_without_a_reply_have_rows_with_their_error_and_close_code() {
    // Each connection's 5th message starts a 300 ms stall: -T 100ms times it and those behind
    // it out. A second server closes each connection (1001) at its 10th message.
    let stall = WsEcho::start(&["--stall-after", "5"]);
    let close = WsEcho::start(&["--close-after", "10"]);
    let dir = TempDir::new("ws-requests-errors");
    let log = dir.path().join("stall.csv");
    let json = logged_ws(&stall.url(), &log, &["-T", "100ms"]);
    let timed_out = u(&json, "/messages/timed_out");
    assert!(timed_out >= 8, "{json:#}");
    let rows = rows_of(&log);
    assert_eq!(rows.len() as u64, u(&json, "/messages/sent"));
    let timeouts = rows.iter().filter(|r| r[12] == "timeout").count() as u64;
    assert_eq!(timeouts, timed_out);
    assert!(rows
        .iter()
        .filter(|r| !r[12].is_empty())
        .all(|r| r[9].is_empty() && r[6].is_empty()));

    let log = dir.path().join("close.csv");
    let run = run_tsumo(
        &[
            "ws",
            "-t1",
            "-c4",
            "-d2s",
            "-R400",
            "--requests",
            log.to_str().unwrap(),
            "--json",
            "-",
            &close.url(),
        ],
        LIMIT,
    );
    let json = run.json();
    let rows = rows_of(&log);
    assert_eq!(rows.len() as u64, u(&json, "/messages/sent"), "{json:#}");
    let closed: Vec<_> = rows.iter().filter(|r| r[12] == "closed").collect();
    assert_eq!(closed.len(), 4, "{closed:?} {json:#}");
    assert!(
        closed.iter().all(|r| r[6] == "1001" && r[5] == "9"),
        "{closed:?}"
    );
}

#[test]
fn a_full_device_stops_the_ws_log_and_the_run_goes_on() {
    let echo = WsEcho::start(&[]);
    let run = run_tsumo(
        &[
            "ws",
            "-t1",
            "-c4",
            "-d2s",
            "-R2000",
            "--requests",
            "/dev/full",
            "--json",
            "-",
            &echo.url(),
        ],
        LIMIT,
    );
    run.assert_success();
    let json = run.json();
    assert!(u(&json, "/messages/answered") > 1000, "{json:#}");
    assert_eq!(json["requests_log"]["complete"], false, "{json:#}");
    let said = run
        .stderr
        .lines()
        .filter(|l| l.contains("--requests /dev/full"));
    assert_eq!(said.count(), 1, "{}", run.stderr);
}

#[test]
fn bad_ws_requests_options_are_refused_before_traffic() {
    let dir = TempDir::new("ws-requests-bad");
    let json = dir.path().join("run.json");
    let json = json.to_str().unwrap();
    let script = dir.path().join("s.lua");
    std::fs::write(&script, "-- nothing\n").unwrap();
    let script = script.to_str().unwrap();
    let url = "ws://127.0.0.1:9/";
    let cases: &[&[&str]] = &[
        &["ws", "-s", script, "--requests", script, url],
        &["ws", "--requests-sample", "0.5", url],
        &[
            "ws",
            "--requests",
            "/tmp/x.csv",
            "--requests-sample",
            "0",
            url,
        ],
        &[
            "ws",
            "--requests",
            "/tmp/x.csv",
            "--requests-sample",
            "2",
            url,
        ],
        &["ws", "--requests", json, "--json", json, url],
        &["ws", "--requests", "/nonexistent-folder/x.csv", url],
    ];
    for args in cases {
        let run = run_tsumo(args, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", run.stderr);
        assert_eq!(
            run.stderr.trim().lines().count(),
            1,
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(std::fs::read_to_string(script).unwrap(), "-- nothing\n");
}
