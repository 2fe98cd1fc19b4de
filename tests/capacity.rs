//! `tsumo capacity` for HTTP: the search finds a known capacity (an in-process server that
//! answers one request at a time; nginx's `limit_req`), names what broke, writes its JSON, and
//! refuses bad command lines in one line with exit 2. Bounds are generous (±10 %), never speeds.

mod common;

use std::sync::Mutex;
use std::time::Duration;

static ONE_SEARCH: Mutex<()> = Mutex::new(());

use common::serial::SerialServer;

/// Runs `tsumo capacity ARGS --json FILE URL`: the run and the JSON document.
fn capacity(args: &[&str], url: &str) -> (common::Run, serde_json::Value) {
    // One search at a time: two on the 2 cores would each measure the other.
    let _one = ONE_SEARCH.lock().unwrap_or_else(|e| e.into_inner());
    let dir = common::TempDir::new("capacity");
    let json = dir.path().join("capacity.json");
    let json = json.to_str().unwrap();
    let mut all: Vec<&str> = vec!["capacity"];
    all.extend(args);
    all.extend(["--json", json, url]);
    let run = common::run_tsumo(&all, Duration::from_secs(180));
    run.assert_success();
    let doc = serde_json::from_str(&std::fs::read_to_string(json).expect("JSON written"))
        .expect("JSON parses");
    (run, doc)
}

fn within(value: f64, expected: f64, share: f64) -> bool {
    (value - expected).abs() <= expected * share
}

/// A server that answers one request at a time in 2 ms carries what a closed loop measures
/// (about 500 req/s): the search finds it within 10 %, named by the rate or the latency.
#[test]
fn the_search_finds_a_one_at_a_time_servers_throughput() {
    let server = SerialServer::start(Duration::from_millis(2));
    let url = server.url("/");
    let dir = common::TempDir::new("closed-loop");
    let json = dir.path().join("closed.json");
    let closed = common::run_tsumo(
        &["-t1", "-c4", "-d3s", "--json", json.to_str().unwrap(), &url],
        Duration::from_secs(60),
    );
    closed.assert_success();
    let closed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON")).expect("parses");
    let throughput = closed["requests_per_sec"]
        .as_f64()
        .expect("requests_per_sec");

    let (run, doc) = capacity(
        &[
            "-t1",
            "-c4",
            "--slo",
            "rate>95%",
            "--slo",
            "p99<200ms",
            "--from",
            "100",
            "--step",
            "2s",
            "--warmup",
            "500ms",
            "--pause",
            "300ms",
        ],
        &url,
    );
    let found = &doc["capacity"];
    assert_eq!(found["unit"], "requests/sec", "{found}");
    assert_eq!(found["limited_by"], "server", "{found}\n{}", run.stdout);
    let value = found["value"].as_f64().expect("a capacity");
    assert!(
        within(value, throughput, 0.10),
        "capacity {value} against closed-loop {throughput}:\n{}",
        run.stdout
    );
    let reason = found["reason"].as_str().expect("reason");
    assert!(
        reason.contains("rate>95%") || reason.contains("p99<200ms"),
        "{reason}"
    );
    let steps = doc["steps"].as_array().expect("steps");
    let held = found["held"].as_array().expect("held").len();
    let broke = found["broke"].as_array().expect("broke").len();
    assert_eq!(steps.len(), held + broke, "{found}");
    for step in steps {
        assert_eq!(step["tool"], "tsumo");
        assert!(
            step["plan"]["rate"].as_u64().is_some(),
            "each step is an open-loop run"
        );
    }
    let answer = run
        .stdout
        .lines()
        .find(|l| l.starts_with("Capacity: "))
        .expect("the answer line");
    assert_eq!(Some(answer), found["answer"].as_str());
    assert!(run.stdout.contains("Broke first: "), "{}", run.stdout);
    assert!(
        run.stderr.contains("capacity: step 1 at 100 requests/sec"),
        "{}",
        run.stderr
    );
    // Loaded back: tsumo compare puts two searches' capacities side by side.
    let dir = common::TempDir::new("capacity-compare");
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    for path in [&a, &b] {
        std::fs::write(path, doc.to_string()).expect("write");
    }
    let compared = common::run_tsumo(
        &["compare", a.to_str().unwrap(), b.to_str().unwrap()],
        Duration::from_secs(30),
    );
    compared.assert_success();
    let rows: Vec<&str> = compared
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("Capacity"))
        .collect();
    assert_eq!(rows.len(), 1, "{}", compared.stdout);
}

/// Each mistake is one line and exit 2, before any traffic.
#[test]
fn bad_command_lines_are_one_line_and_exit_2() {
    let url = "http://127.0.0.1:9/";
    let cases: [(&[&str], &str); 7] = [
        (&[], "needs at least one --slo"),
        (
            &["--slo", "p99<10ms", "-R", "100"],
            "-R is set by the search",
        ),
        (
            &["--slo", "p99<10ms", "-d", "5s"],
            "-d is set by the search",
        ),
        (
            &["--slo", "p99<10ms", "--from", "200", "--to", "100"],
            "--to 100 is below --from 200",
        ),
        (&["--slo", "p99<<1ms"], "--slo 'p99<<1ms'"),
        (
            &["--slo", "p99<10ms", "--resolution", "0%"],
            "--resolution '0%'",
        ),
        (&["--slo", "p99<10ms", "--step", "0"], "--step '0'"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["capacity"];
        all.extend(args);
        all.push(url);
        let run = common::run_tsumo(&all, Duration::from_secs(20));
        assert_eq!(run.status.code(), Some(2), "{all:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{all:?}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{all:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{all:?}: {}", run.stdout);
    }
}

/// nginx serving a file behind `limit_req` (300 r/s, 503 beyond: a `return` would answer before
/// `limit_req` runs): the search finds the limit within 10 % and names the errors.
#[test]
fn the_search_finds_nginxs_limit_req() {
    let nginx = common::nginx::Nginx::builder()
        .http_snippet("limit_req_zone $binary_remote_addr zone=capacity:1m rate=300r/s;")
        .server(
            "limited",
            "root @ROOT@/www;\n        location / { limit_req zone=capacity burst=10 nodelay; \
             limit_req_status 503; }",
        )
        .start();
    let url = format!("http://127.0.0.1:{}/index.html", nginx.port("limited"));
    let (run, doc) = capacity(
        &[
            "-t1",
            "-c4",
            "--slo",
            "errors<1%",
            "--from",
            "50",
            "--step",
            "2s",
            "--warmup",
            "500ms",
            "--pause",
            "300ms",
        ],
        &url,
    );
    let found = &doc["capacity"];
    assert_eq!(found["limited_by"], "server", "{found}\n{}", run.stdout);
    let value = found["value"].as_f64().expect("a capacity");
    assert!(
        within(value, 300.0, 0.10),
        "capacity {value}:\n{}",
        run.stdout
    );
    let reason = found["reason"].as_str().expect("reason");
    assert!(reason.contains("errors<1%"), "{reason}");
    let broke_first = found["broke_first"].as_str().expect("broke_first");
    assert!(
        broke_first.starts_with("Broke first: errors<1%"),
        "{broke_first}"
    );
    // The broken steps' errors are the 503s.
    assert!(run.stdout.contains("status "), "{}", run.stdout);
}
