//! `--requests FILE`: every request on record, read back by a real reader, DuckDB (from the
//! pinned scripts/requirements-readers.txt, in scripts/.venv as `scripts/test` makes it): the
//! rows count the run's requests and errors, and the p99 of their corrected latency equals the
//! saved histogram's to its precision, plain and zstd-compressed, over HTTP/1.1 and HTTP/2
//! against nginx. A sampled log holds its fraction; a full device stops the log, not the run.

mod common;

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use common::caddy::Caddy;
use common::duckdb::{duckdb, readers};
use common::nginx::Nginx;
use common::{run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(120);

/// The columns, as src/stats/requests.rs has them.
const HEADER: &str = "intended_ns,sent_ns,received_ns,shard,conn,stream,status,bytes_in,\
bytes_out,corrected_ns,server_ns,tsumo_ns,error";

fn u(json: &Value, pointer: &str) -> u64 {
    json.pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no {pointer} in {json:#}"))
}

/// The errors a run counted, of every kind.
fn errors(json: &Value) -> u64 {
    ["connect", "read", "write", "timeout"]
        .iter()
        .map(|k| json["counters"]["errors"][k].as_u64().unwrap_or(0))
        .sum()
}

/// One run with `--requests` into `name` (in `dir`): DuckDB's rows and p99 against the JSON's.
fn logged_run(python: &Path, dir: &TempDir, url: &str, name: &str, extra: &[&str]) {
    let log = dir.path().join(name);
    let log_arg = log.to_str().unwrap();
    let mut args = vec!["-t2", "-c8", "-d2s", "-R2000", "-k"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--requests", log_arg, "--json", "-", url]);
    let run = run_tsumo(&args, LIMIT);
    run.assert_success();
    let json = run.json();
    let requests = u(&json, "/counters/requests");
    assert!(requests > 1000, "{json:#}");
    assert_eq!(json["requests_log"]["complete"], true, "{json:#}");
    assert_eq!(json["requests_log"]["path"], log_arg, "{json:#}");
    common::schema::assert_valid_doc(common::schema::Kind::Run, &json);
    let read = duckdb(python, &log);
    let rows = u(&read, "/rows");
    assert_eq!(rows, requests + errors(&json), "{read} {json:#}");
    assert_eq!(u(&json, "/requests_log/rows"), rows);
    assert_eq!(u(&read, "/errors"), errors(&json));
    common::duckdb::assert_p99(&read, u(&json, "/latency/p99"));
    let columns: Vec<&str> = read["columns"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(columns.join(","), HEADER);
}

fn http1_nginx_url(nginx: &Nginx) -> String {
    nginx.http_url("/index.html")
}

#[test]
fn duckdb_reads_plain_and_zstd_logs_of_http1_and_http2() {
    let Some(python) = readers() else { return };
    let nginx = Nginx::builder()
        .h2_server("h2c", "root @ROOT@/www;", false)
        .start();
    let dir = TempDir::new("requests-log");
    let h1 = http1_nginx_url(&nginx);
    let h2 = format!("http://127.0.0.1:{}/index.html", nginx.port("h2c"));
    logged_run(&python, &dir, &h1, "h1.csv", &[]);
    logged_run(&python, &dir, &h1, "h1.csv.zst", &[]);
    logged_run(&python, &dir, &h2, "h2.csv", &["--http2", "-m4"]);
    logged_run(&python, &dir, &h2, "h2.csv.zst", &["--http2", "-m4"]);
    // HTTP/1.1 has no stream; HTTP/2's client streams are odd.
    assert!(streams(&dir.path().join("h1.csv"))
        .iter()
        .all(Option::is_none));
    let ids = streams(&dir.path().join("h2.csv"));
    assert!(
        ids.iter().all(|id| id.is_some_and(|id| id % 2 == 1)),
        "{ids:?}"
    );
    let first = std::fs::read_to_string(dir.path().join("h1.csv")).unwrap();
    let first = first.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("# tsumo requests v1; start_unix_ns=")
            && first.contains("; shard=0/1; sample=1"),
        "{first}"
    );
}

/// The `stream` column of a plain log: every row's.
fn streams(log: &Path) -> Vec<Option<u64>> {
    let text = std::fs::read_to_string(log).unwrap();
    text.lines()
        .skip(2)
        .map(|row| row.split(',').nth(5).and_then(|s| s.parse().ok()))
        .collect()
}

#[test]
fn duckdb_reads_an_http3_log_with_its_stream_ids() {
    let Some(python) = readers() else { return };
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let dir = TempDir::new("requests-h3");
    let url = caddy.url("/");
    logged_run(
        &python,
        &dir,
        &url,
        "h3.csv",
        &["--http3", "-m4", "--cacert", &cacert],
    );
    let ids = streams(&dir.path().join("h3.csv"));
    // A client's bidirectional streams: 0, 4, 8…
    assert!(
        ids.iter().all(|id| id.is_some_and(|id| id % 4 == 0)),
        "{ids:?}"
    );
    assert!(ids.iter().any(|id| id.is_some_and(|id| id > 0)));
}

#[test]
fn a_sampled_log_holds_its_fraction() {
    let nginx = Nginx::start();
    let dir = TempDir::new("requests-sample");
    let log = dir.path().join("sampled.csv");
    let run = run_tsumo(
        &[
            "-t2",
            "-c8",
            "-d2s",
            "-R3000",
            "--requests",
            log.to_str().unwrap(),
            "--requests-sample",
            "0.1",
            "--json",
            "-",
            &http1_nginx_url(&nginx),
        ],
        LIMIT,
    );
    run.assert_success();
    let json = run.json();
    let n = (u(&json, "/counters/requests") + errors(&json)) as f64;
    let rows = u(&json, "/requests_log/rows") as f64;
    let lines = std::fs::read_to_string(&log).unwrap().lines().count() as f64;
    assert_eq!(rows + 2.0, lines, "the header line, the columns, the rows");
    // Five standard deviations of a binomial count.
    let sd = (n * 0.1 * 0.9).sqrt();
    assert!((rows - n * 0.1).abs() <= 5.0 * sd, "{rows} rows of {n}");
    assert_eq!(json["requests_log"]["sample"], 0.1);
}

#[test]
fn a_full_device_stops_the_log_and_the_run_goes_on() {
    let nginx = Nginx::start();
    let run = run_tsumo(
        &[
            "-t1",
            "-c4",
            "-d2s",
            "-R2000",
            "--requests",
            "/dev/full",
            "--json",
            "-",
            &http1_nginx_url(&nginx),
        ],
        LIMIT,
    );
    run.assert_success();
    let json = run.json();
    assert!(u(&json, "/counters/requests") > 1000, "{json:#}");
    assert_eq!(json["requests_log"]["complete"], false, "{json:#}");
    common::schema::assert_valid_doc(common::schema::Kind::Run, &json);
    assert!(json["requests_log"]["error"]
        .as_str()
        .is_some_and(|e| e.contains("No space")));
    let said: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("--requests /dev/full"))
        .collect();
    assert_eq!(said.len(), 1, "{}", run.stderr);
}

#[test]
fn bad_requests_options_are_refused_before_traffic() {
    let dir = TempDir::new("requests-bad");
    let json = dir.path().join("run.json");
    let json = json.to_str().unwrap();
    let url = "http://127.0.0.1:9/";
    let script = dir.path().join("s.lua");
    std::fs::write(&script, "-- nothing\n").unwrap();
    let script = script.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["-s", script, "--requests", script, url],
        &["--requests-sample", "0.5", url],
        &["--requests", "/tmp/x.csv", "--requests-sample", "0", url],
        &["--requests", "/tmp/x.csv", "--requests-sample", "1.5", url],
        &["--requests", "/tmp/x.csv", "--requests-sample", "half", url],
        &["--requests", json, "--json", json, url],
        &["--requests", "/nonexistent-folder/x.csv", url],
        &["--requests", "/tmp/x.csv", "--vs", url, url],
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
    // The script is left as it was.
    assert_eq!(std::fs::read_to_string(script).unwrap(), "-- nothing\n");
}
