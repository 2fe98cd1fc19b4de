//! `tsumo mahjong --requests FILE`: every timed reply of the bots on record, in the HTTP log's
//! columns, read back by DuckDB (tests/common/duckdb.rs) against the real majiang-server: one
//! row per reply `reply_lateness` timed (the JSON's count), the p99 of their lateness the JSON's
//! to its precision, plain and zstd; each player's replies numbered 0, 1, 2… on its `conn`; bad
//! options refused before traffic. The session's JSON, `requests_log` and all, is valid against
//! docs/schema/session.schema.json.

mod common;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use common::duckdb::{assert_p99, duckdb, readers};
use common::majiang::Majiang;
use common::schema::{assert_valid_doc, Kind};
use common::{run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(120);

fn u(json: &Value, pointer: &str) -> u64 {
    json.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no {pointer} in {json:#}"))
}

/// A short session (two tables, one game cut at `-d`) logging its replies into `log`: its JSON.
fn logged_session(url: &str, log: &Path) -> Value {
    let log_arg = log.to_str().unwrap();
    let args = [
        "mahjong",
        "-c8",
        "-t2",
        "--ramp",
        "0",
        "--think",
        "20ms",
        "--think-jitter",
        "20ms",
        "-d",
        "6s",
        "--requests",
        log_arg,
        "--json",
        "-",
        url,
    ];
    let run = run_tsumo(&args, LIMIT);
    run.assert_success();
    let json = run.json();
    assert_eq!(json["requests_log"]["path"], log_arg, "{json:#}");
    assert_eq!(json["requests_log"]["complete"], true, "{json:#}");
    json
}

#[test]
fn duckdb_reads_a_row_per_timed_reply_plain_and_zstd() {
    let Some(python) = readers() else { return };
    let server = Majiang::start();
    let dir = TempDir::new("mahjong-requests");
    for name in ["replies.csv", "replies.csv.zst"] {
        let log = dir.path().join(name);
        let json = logged_session(&server.url(), &log);
        let timed = u(&json, "/reply_lateness/count");
        assert!(timed > 20, "{json:#}");
        let read = duckdb(&python, &log);
        // Every row is a timed reply or one given up (its error): the timed ones are the JSON's.
        assert_eq!(
            u(&read, "/rows") - u(&read, "/errors"),
            timed,
            "{read} {json:#}"
        );
        assert_eq!(u(&json, "/requests_log/rows"), u(&read, "/rows"));
        assert_p99(&read, u(&json, "/reply_lateness/p99"));
        assert_valid_doc(Kind::Session, &json);
    }
    // Each player's replies are numbered 0, 1, 2… on its conn (the player's number); a timed
    // reply's lateness is all tsumo's: corrected = tsumo's own, the server's 0.
    let text = std::fs::read_to_string(dir.path().join("replies.csv")).unwrap();
    let mut rows: Vec<Vec<&str>> = text
        .lines()
        .skip(2)
        .map(|l| l.split(',').collect())
        .collect();
    rows.sort_by_key(|r| r[5].parse::<u64>().unwrap());
    let mut next = std::collections::BTreeMap::<&str, u64>::new();
    for row in &rows {
        let expected = next.entry(row[4]).or_default();
        assert_eq!(row[5].parse::<u64>().unwrap(), *expected, "{row:?}");
        *expected += 1;
        if row[12].is_empty() {
            assert_eq!((row[9], row[10]), (row[11], "0"), "{row:?}");
            // bytes in: the GAME request's frame; out: the reply's.
            assert!(row[7].parse::<u64>().unwrap() > 0, "{row:?}");
            assert!(row[8].parse::<u64>().unwrap() > 0, "{row:?}");
        }
    }
    assert_eq!(next.len(), 8, "eight players: {next:?}");
}

#[test]
fn bad_requests_options_are_refused_before_traffic() {
    let dir = TempDir::new("mahjong-requests-bad");
    let json = dir.path().join("s.json");
    let json = json.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--requests", json, "--json", json],
            "--requests".to_string(),
        ),
        (
            vec!["--requests", "x.csv", "--requests-sample", "0"],
            "--requests-sample".to_string(),
        ),
        (vec!["--requests-sample", "0.5"], "--requests".to_string()),
        (
            vec![
                "--requests",
                "x.csv",
                "--capacity",
                "--slo",
                "reply_lateness.p99<1s",
            ],
            "--requests is not for --capacity".to_string(),
        ),
    ] {
        let mut all = vec!["mahjong"];
        all.extend_from_slice(&args);
        // Nothing listens there: a refusal comes before any traffic.
        all.push("http://127.0.0.1:9/server");
        let run = run_tsumo(&all, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(&says), "{args:?}: {}", run.stderr);
    }
}
