//! wrk's Lua scripts run by tsumo against a real nginx (tests/common/nginx.rs): each of wrk's
//! example scripts (reference/wrk2.md §3.8) with the effect a user would see, in the report or in
//! what nginx received; the HTTPS POST scenario; script errors; script arguments.
//!
//! Scripts whose effect lives in request headers or in pipelining (auth, counter, pipeline) run
//! against an extra nginx server block that answers every path with 200 and logs what the access
//! log of the fixture does not: `$http_x_token`, `$http_x_counter` and `$pipe`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::nginx::Nginx;
use common::{json_errors_total, json_f64, json_u64, run_tsumo, Run, TempDir};

/// The process limit for every run: far above its `-d`, only there to catch a hang.
const LIMIT: Duration = Duration::from_secs(20);

/// `tests/scripts/NAME`, as an absolute path (the string tsumo's messages name).
fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scripts")
        .join(name)
        .to_str()
        .expect("UTF-8 path")
        .to_string()
}

/// `N` of the `  N requests in 2.00s, 45.36KB read` line of the text report.
fn requests_in(stdout: &str) -> u64 {
    stdout
        .lines()
        .find(|l| l.contains(" requests in "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `N requests in` line:\n{stdout}"))
}

/// The index of the `Running 2s test @ URL` header line.
fn running_line(stdout: &str) -> usize {
    stdout
        .lines()
        .position(|l| l.starts_with("Running "))
        .unwrap_or_else(|| panic!("no `Running` header:\n{stdout}"))
}

/// Runs and reads the `--json` file written next to the text report (stdout stays the text
/// report plus whatever the script prints).
fn run_with_json(args: &[&str]) -> (Run, serde_json::Value) {
    let dir = TempDir::new("tsumo-lua");
    let json_path = dir.path().join("run.json");
    let mut all = vec!["--json", json_path.to_str().expect("UTF-8 path")];
    all.extend_from_slice(args);
    let run = run_tsumo(&all, LIMIT);
    run.assert_success();
    let text = std::fs::read_to_string(&json_path)
        .unwrap_or_else(|e| panic!("no JSON file ({e}): {run:?}"));
    let json = serde_json::from_str(&text).expect("JSON file parses");
    (run, json)
}

// ---- an nginx server block that logs the headers the scripts set ---------------------------

/// One line of the `app` server's log.
#[derive(Debug, Clone)]
struct AppLogLine {
    /// nginx's serial number of the connection.
    connection: u64,
    /// `p` if the request arrived pipelined behind another in the same read, else `.`.
    pipe: String,
    status: u16,
    method: String,
    uri: String,
    /// The `X-Token` request header (`-` when absent).
    x_token: String,
    /// The `X-Counter` request header (`-` when absent).
    x_counter: String,
}

/// nginx with an extra server block `app`: `locations` inside it, and its own log (`app.log`
/// in nginx's directory, relative paths resolving against the `-p` prefix).
fn app_nginx(locations: &str) -> Nginx {
    Nginx::builder()
        .http_snippet(
            "log_format app '$connection|$pipe|$status|$request|$http_x_token|$http_x_counter';",
        )
        .server(
            "app",
            &format!("access_log app.log app;\n        {locations}"),
        )
        .start()
}

fn app_url(nginx: &Nginx, path: &str) -> String {
    format!("http://127.0.0.1:{}{path}", nginx.port("app"))
}

/// The `app` log once it has at least `lines` lines, or after 2 s whatever it has (nginx logs a
/// request after answering it).
fn app_log_wait(nginx: &Nginx, lines: usize) -> Vec<AppLogLine> {
    let path: PathBuf = nginx.dir().join("app.log");
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let log: Vec<AppLogLine> = text.lines().map(parse_app_line).collect();
        if log.len() >= lines || Instant::now() > deadline {
            return log;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn parse_app_line(line: &str) -> AppLogLine {
    let f: Vec<&str> = line.split('|').collect();
    assert_eq!(f.len(), 6, "bad app log line {line:?}");
    let mut request = f[3].split(' ');
    AppLogLine {
        connection: f[0].parse().expect("connection"),
        pipe: f[1].to_string(),
        status: f[2].parse().expect("status"),
        method: request.next().unwrap_or("").to_string(),
        uri: request.next().unwrap_or("").to_string(),
        x_token: f[4].to_string(),
        x_counter: f[5].to_string(),
    }
}

// ---- wrk's example scripts -------------------------------------------------------------------

/// addr.lua: setup() resolves the host and gives each thread an address; init() prints it, once
/// per thread, before the header.
#[test]
fn addr_prints_each_threads_address_before_the_header() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &[
            "-t2",
            "-c2",
            "-d1s",
            "-R100",
            "-s",
            &script("addr.lua"),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header = running_line(&run.stdout);
    let expected = format!("thread addr: 127.0.0.1:{}", nginx.http_port());
    assert_eq!(
        lines[..header],
        [expected.as_str(), expected.as_str()],
        "stdout:\n{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.matches("thread addr:").count(),
        2,
        "{}",
        run.stdout
    );
    assert!(requests_in(&run.stdout) > 0, "{}", run.stdout);
}

const AUTH_LOCATIONS: &str = r#"location = /authenticate { add_header X-Token secret; return 200 "ok"; }
        location = /resource { return 200 "r"; }"#;

/// auth.lua: GET /authenticate until a 200 carries X-Token, then /resource with that token.
#[test]
fn auth_switches_to_resource_with_the_token_after_the_first_200() {
    let nginx = app_nginx(AUTH_LOCATIONS);
    let url = app_url(&nginx, "/");
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d1s",
            "-R100",
            "-s",
            &script("auth.lua"),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let requests = requests_in(&run.stdout);
    assert!(requests >= 50, "{}", run.stdout);
    let log = app_log_wait(&nginx, requests as usize);
    assert!(log.len() as u64 >= requests, "{log:?}");
    // One connection, one request at a time: exactly one /authenticate, without a token.
    assert_eq!(log[0].uri, "/authenticate", "{log:?}");
    assert_eq!(log[0].x_token, "-", "{log:?}");
    assert_eq!(log[0].status, 200);
    for line in &log[1..] {
        assert_eq!(
            (
                line.method.as_str(),
                line.uri.as_str(),
                line.x_token.as_str()
            ),
            ("GET", "/resource", "secret"),
            "{log:?}"
        );
        assert_eq!(line.status, 200);
    }
}

/// auth.lua: no 200 from /authenticate, no token: every request stays on /authenticate.
#[test]
fn auth_keeps_authenticating_while_the_server_refuses() {
    let nginx = app_nginx(
        r#"location = /authenticate { add_header X-Token secret always; return 403; }
        location = /resource { return 200 "r"; }"#,
    );
    let url = app_url(&nginx, "/");
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d1s",
            "-R100",
            "-s",
            &script("auth.lua"),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    assert!(
        run.stdout.contains("Non-2xx or 3xx responses:"),
        "{}",
        run.stdout
    );
    let requests = requests_in(&run.stdout);
    let log = app_log_wait(&nginx, requests as usize);
    assert!(log.len() >= 50, "{log:?}");
    assert!(
        log.iter()
            .all(|l| l.uri == "/authenticate" && l.x_token == "-" && l.status == 403),
        "{log:?}"
    );
}

/// counter.lua, one thread and one connection: paths /1, /2, /3, ... in order, each with the
/// same number in X-Counter. As in wrk, /0 went to the start-up check of the request (§3.7), so
/// thread 1's first request on the wire is /1.
#[test]
fn counter_sends_increasing_paths_and_header() {
    let nginx = app_nginx(r#"location / { return 200 "c"; }"#);
    let url = app_url(&nginx, "/");
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d1s",
            "-R50",
            "-s",
            &script("counter.lua"),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let requests = requests_in(&run.stdout);
    assert!(requests >= 40, "{}", run.stdout);
    let log = app_log_wait(&nginx, requests as usize);
    assert!(log.len() as u64 >= requests, "{log:?}");
    for (i, line) in log.iter().enumerate() {
        let n = i + 1;
        assert_eq!(line.uri, format!("/{n}"), "line {i}: {log:?}");
        assert_eq!(line.x_counter, n.to_string(), "line {i}: {log:?}");
        assert_eq!(line.status, 200);
    }
}

/// counter.lua with two threads: one counter per thread (each Lua state has its own), so each
/// connection's paths increase by one; thread 2 starts at /0, thread 1 at /1.
#[test]
fn counter_keeps_one_counter_per_thread() {
    let nginx = app_nginx(r#"location / { return 200 "c"; }"#);
    let url = app_url(&nginx, "/");
    let run = run_tsumo(
        &[
            "-t2",
            "-c2",
            "-d1s",
            "-R100",
            "-s",
            &script("counter.lua"),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let requests = requests_in(&run.stdout);
    let log = app_log_wait(&nginx, requests as usize);
    let mut per_connection: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for line in &log {
        let n: u64 = line.uri[1..].parse().expect("numeric path");
        assert_eq!(line.x_counter, n.to_string(), "{line:?}");
        per_connection.entry(line.connection).or_default().push(n);
    }
    assert_eq!(per_connection.len(), 2, "{log:?}");
    let mut starts: Vec<u64> = per_connection.values().map(|ns| ns[0]).collect();
    starts.sort();
    assert_eq!(starts, [0, 1], "{per_connection:?}");
    for ns in per_connection.values() {
        assert!(ns.len() >= 2, "{per_connection:?}");
        assert!(ns.windows(2).all(|w| w[1] == w[0] + 1), "{ns:?}");
    }
}

/// delay.lua, closed loop: 10–50 ms of think time before each request (about 30 ms on average)
/// holds one connection below 100 requests/s: in 2 s, never more than one request per 10 ms (a
/// ceiling the think time sets, whatever the machine; how far below is the machine's to say).
#[test]
fn delay_slows_a_closed_loop() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let (run, json) = run_with_json(&["-t1", "-c1", "-d2s", "-s", &script("delay.lua"), &url]);
    let requests = requests_in(&run.stdout);
    assert!((1..=201).contains(&requests), "{}", run.stdout);
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
}

/// delay.lua with -R: think time moves each request's intended send time, so it adds no
/// corrected latency; at -R20 (50 ms apart) the think time never makes one request wait for
/// another. Counted against its intended time, every request would show at least the 10 ms
/// of think time; measured from the moved time, they show nginx's.
#[test]
fn delay_with_rate_adds_no_corrected_latency() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let (run, json) = run_with_json(&[
        "-t1",
        "-c1",
        "-d2s",
        "-R20",
        "-s",
        &script("delay.lua"),
        &url,
    ]);
    let min_us = json_f64(&json, "latency.min");
    assert!(min_us < 10_000.0, "corrected min {min_us} µs: {json:#}");
    let requests = requests_in(&run.stdout);
    assert!((1..=45).contains(&requests), "{}", run.stdout);
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
}

/// pipeline.lua: three requests per write, `/?foo`, `/?bar`, `/?baz`, on one connection; -R
/// counts requests, not batches (wrk2: 408 requests at -R200 in 2 s).
#[test]
fn pipeline_sends_three_requests_per_write() {
    let nginx = app_nginx(r#"location / { return 200 "p"; }"#);
    let url = app_url(&nginx, "/");
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d2s",
            "-R100",
            "-s",
            &script("pipeline.lua"),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    // Never more than the schedule's 200 (and a batch begun).
    let requests = requests_in(&run.stdout);
    assert!((1..=203).contains(&requests), "{}", run.stdout);
    let log = app_log_wait(&nginx, requests as usize);
    assert!(log.len() as u64 >= requests, "{log:?}");
    assert_eq!(log.len() % 3, 0, "whole batches only: {log:?}");
    let connection = log[0].connection;
    for (i, line) in log.iter().enumerate() {
        let expected = ["/?foo", "/?bar", "/?baz"][i % 3];
        assert_eq!(line.uri, expected, "line {i}: {log:?}");
        assert_eq!(line.connection, connection, "one connection: {log:?}");
        assert_eq!(line.status, 200);
        // nginx found /?bar and /?baz already read behind the request before them.
        if i % 3 != 0 {
            assert_eq!(line.pipe, "p", "line {i} not pipelined: {log:?}");
        }
    }
}

/// post.lua: a POST with the 16-byte form body and its Content-Length, answered 2xx.
#[test]
fn post_sends_the_body_with_its_length() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &[
            "-t1",
            "-c2",
            "-d1s",
            "-R50",
            "-s",
            &script("post.lua"),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    assert!(!run.stdout.contains("Non-2xx"), "{}", run.stdout);
    let requests = requests_in(&run.stdout);
    assert!(requests >= 40, "{}", run.stdout);
    let log = nginx.access_log_wait(requests as usize);
    assert!(log.len() as u64 >= requests, "{log:?}");
    for line in &log {
        assert_eq!(line.method, "POST", "{log:?}");
        assert_eq!(line.uri, "/index.html", "{log:?}");
        assert_eq!(line.content_length, Some(16), "{log:?}");
        assert!((200..300).contains(&line.status), "{log:?}");
    }
}

/// report.lua: after the report, a line of 30 dashes and `p%,µs` for p50, p90, p99, p99.999 of
/// the corrected latency, the same histogram as the report's (`latency` in the JSON).
#[test]
fn report_prints_percentiles_as_csv_after_the_report() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let (run, json) = run_with_json(&[
        "-t1",
        "-c2",
        "-d2s",
        "-R200",
        "-s",
        &script("report.lua"),
        &url,
    ]);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let dashes = lines
        .iter()
        .position(|l| *l == "-".repeat(30))
        .unwrap_or_else(|| panic!("no line of 30 dashes:\n{}", run.stdout));
    let report_end = lines
        .iter()
        .position(|l| l.starts_with("Requests/sec:"))
        .expect("Requests/sec line");
    assert!(
        dashes > report_end,
        "done() runs after the report:\n{}",
        run.stdout
    );
    let csv = &lines[dashes + 1..];
    assert_eq!(csv.len(), 4, "{}", run.stdout);
    let mut values = Vec::new();
    for (line, label) in csv.iter().zip(["50%", "90%", "99%", "99.999%"]) {
        let (p, n) = line
            .split_once(',')
            .unwrap_or_else(|| panic!("not `p%,N`: {line:?}"));
        assert_eq!(p, label, "{}", run.stdout);
        let n: u64 = n
            .parse()
            .unwrap_or_else(|_| panic!("not an integer: {line:?}"));
        values.push(n);
    }
    assert!(values[0] > 0, "{values:?}");
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
    // Microseconds of nginx on loopback: well under a second.
    assert!(values[3] < 1_000_000, "{values:?}");
    for (n, key) in values
        .iter()
        .zip(["latency.p50", "latency.p90", "latency.p99"])
    {
        assert_eq!(*n, json_u64(&json, key), "{key}: {json:#}");
    }
}

/// setup.lua: each thread announced by init() before the header, and at the end (done() reading
/// each thread's globals) how many requests it made and responses it got.
#[test]
fn setup_passes_data_to_and_from_the_threads() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &[
            "-t2",
            "-c4",
            "-d2s",
            "-R100",
            "-s",
            &script("setup.lua"),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header = running_line(&run.stdout);
    assert_eq!(
        lines[..header],
        ["thread 1 created", "thread 2 created"],
        "{}",
        run.stdout
    );
    let requests = requests_in(&run.stdout);
    let report_end = lines
        .iter()
        .position(|l| l.starts_with("Requests/sec:"))
        .expect("Requests/sec line");
    let made: Vec<(u64, u64, u64)> = lines[report_end..]
        .iter()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f[..] {
                ["thread", id, "made", n, "requests", "and", "got", m, "responses"] => {
                    Some((id.parse().unwrap(), n.parse().unwrap(), m.parse().unwrap()))
                }
                _ => None,
            }
        })
        .collect();
    assert_eq!(made.len(), 2, "{}", run.stdout);
    for (i, &(id, n, m)) in made.iter().enumerate() {
        assert_eq!(id, i as u64 + 1, "{}", run.stdout);
        assert!(n >= m && m > 0, "{}", run.stdout);
        // Beyond the responses: one request per connection (2 per thread) still unanswered, and
        // on thread 1 the start-up check's call.
        let extra = if id == 1 { 3 } else { 2 };
        assert!(n - m <= extra, "{}", run.stdout);
    }
    let responses: u64 = made.iter().map(|&(_, _, m)| m).sum();
    assert_eq!(
        responses, requests,
        "response() once per counted request:\n{}",
        run.stdout
    );
}

/// stop.lua: the 100th response stops the only thread, so a 10 s run ends at once with the
/// report of those 100 requests.
#[test]
fn stop_ends_the_run_after_100_responses() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d10s",
            "-R1000",
            "-s",
            &script("stop.lua"),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    // 100 of the 10,000 due: the run ended there, not at -d.
    let requests = requests_in(&run.stdout);
    assert!((100..=102).contains(&requests), "{}", run.stdout);
    let log = nginx.access_log_wait(requests as usize);
    assert!((100..=102).contains(&log.len()), "{} logged", log.len());
}

// ---- the HTTPS POST scenario -----------------------------------------------------------------

/// post2k.lua over HTTPS at 2000 requests/s: no errors, and nginx received a 2 KiB POST body
/// over TLS for every request counted (the rate reached is a benchmark's to measure).
#[test]
fn post2k_over_https_sends_every_body() {
    let nginx = Nginx::start();
    let url = nginx.https_url("/index.html");
    let (run, json) = run_with_json(&[
        "-t2",
        "-c10",
        "-d3s",
        "-R2000",
        "--insecure",
        "-s",
        &script("post2k.lua"),
        &url,
    ]);
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    assert!(!run.stdout.contains("Non-2xx"), "{}", run.stdout);
    let requests = json_u64(&json, "counters.requests");
    assert!(requests > 0, "{json:#}");
    let log = nginx.access_log_wait(requests as usize);
    assert!(
        (requests..=requests + 10).contains(&(log.len() as u64)),
        "{} logged, {requests} counted",
        log.len()
    );
    for line in &log {
        assert_eq!(line.method, "POST", "{line:?}");
        assert_eq!(line.content_length, Some(2048), "{line:?}");
        assert!((200..300).contains(&line.status), "{line:?}");
        assert!(
            line.ssl_protocol.as_deref().is_some_and(|p| !p.is_empty()),
            "not over TLS: {line:?}"
        );
    }
}

// ---- script errors ---------------------------------------------------------------------------

/// A script that fails before the run (loading, top-level code, setup, init): exit 2, one line
/// `tsumo: FILE:LINE: ...` on stderr (not one per Lua state, as wrk), nothing on stdout, and not
/// a single request sent.
fn assert_fails_before_the_run(file: &str, line: u32) {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let path = script(file);
    let run = run_tsumo(&["-t2", "-c2", "-d1s", "-R100", "-s", &path, &url], LIMIT);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr: {:?}", run.stderr);
    let prefix = format!("tsumo: {path}:{line}: ");
    assert!(
        lines[0].starts_with(&prefix) && lines[0].len() > prefix.len(),
        "expected `{prefix}...`, got {:?}",
        lines[0]
    );
    // Give a stray request time to be logged.
    let log = nginx.access_log_wait(1);
    assert!(log.is_empty(), "requests reached nginx: {log:?}");
}

#[test]
fn syntax_error_stops_before_the_run() {
    assert_fails_before_the_run("syntax.lua", 3);
}

#[test]
fn top_level_error_stops_before_the_run() {
    assert_fails_before_the_run("err_toplevel.lua", 3);
}

#[test]
fn setup_error_stops_before_the_run() {
    assert_fails_before_the_run("err_setup.lua", 4);
}

#[test]
fn init_error_stops_before_the_run() {
    assert_fails_before_the_run("err_init.lua", 3);
}

#[test]
fn missing_script_names_the_file() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = TempDir::new("tsumo-lua");
    let path = dir.path().join("missing.lua");
    let path = path.to_str().unwrap();
    let run = run_tsumo(&["-t2", "-c2", "-d1s", "-R100", "-s", path, &url], LIMIT);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr: {:?}", run.stderr);
    assert!(
        lines[0].starts_with("tsumo: ") && lines[0].contains(path),
        "stderr: {:?}",
        run.stderr
    );
    let log = nginx.access_log_wait(1);
    assert!(log.is_empty(), "requests reached nginx: {log:?}");
}

/// A script that fails during the run (request, response): the run stops at once, the report of
/// what ran is printed, and the last stderr line is `tsumo: script error: FILE:LINE: ...`.
fn assert_fails_during_the_run(file: &str, line: u32, message: &str) {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let path = script(file);
    // -d60s: a run that did not stop at the error outlives the limit and fails the test.
    let run = run_tsumo(&["-t1", "-c1", "-d60s", "-R100", "-s", &path, &url], LIMIT);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    requests_in(&run.stdout);
    let last = run.stderr.lines().last().unwrap_or("");
    let prefix = format!("tsumo: script error: {path}:{line}: ");
    assert!(
        last.starts_with(&prefix) && last.contains(message),
        "expected `{prefix}{message}...`, got {:?}",
        run.stderr
    );
}

#[test]
fn request_error_stops_the_run_after_the_report() {
    assert_fails_during_the_run("err_request.lua", 7, "request failed");
}

#[test]
fn response_error_stops_the_run_after_the_report() {
    assert_fails_during_the_run("err_response.lua", 3, "response failed with status 200");
}

/// done() fails after the whole run: the report is there, then the error, exit 1.
#[test]
fn done_error_fails_after_the_report() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let path = script("err_done.lua");
    let run = run_tsumo(&["-t1", "-c1", "-d1s", "-R50", "-s", &path, &url], LIMIT);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(requests_in(&run.stdout) >= 40, "{run:?}");
    let last = run.stderr.lines().last().unwrap_or("");
    let prefix = format!("tsumo: {path}:3: ");
    assert!(last.starts_with(&prefix), "got {:?}", run.stderr);
}

/// done() fails, or hangs past `--script-timeout`: the results are saved before it runs, so
/// the `--json` file (or stdout) and the `.hgrm` file hold the whole run; then its error, exit 1.
#[test]
fn done_error_or_timeout_keeps_the_saved_results() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = TempDir::new("done-saves-first");
    let hung = dir.path().join("hung_done.lua");
    std::fs::write(
        &hung,
        "function done(summary, latency, requests)\n   while true do end\nend\n",
    )
    .expect("write script");
    let failing = script("err_done.lua");
    for (path, line) in [(failing.as_str(), 3), (hung.to_str().unwrap(), 2)] {
        let json = dir.path().join("run.json");
        let hgrm = dir.path().join("run.hgrm");
        let run = run_tsumo(
            &[
                "-t1",
                "-c1",
                "-d1s",
                "-R50",
                "--script-timeout",
                "1s",
                "--json",
                json.to_str().unwrap(),
                "--hgrm",
                hgrm.to_str().unwrap(),
                "-s",
                path,
                &url,
            ],
            LIMIT,
        );
        assert_eq!(run.status.code(), Some(1), "{run:?}");
        let last = run.stderr.lines().last().unwrap_or("");
        assert!(
            last.starts_with(&format!("tsumo: {path}:{line}: ")),
            "{run:?}"
        );
        let doc: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("no JSON ({e}): {run:?}")),
        )
        .expect("JSON parses");
        assert_eq!(
            json_u64(&doc, "counters.requests"),
            requests_in(&run.stdout)
        );
        assert!(
            std::fs::read_to_string(&hgrm).is_ok_and(|text| text.contains("#[Mean")),
            "no .hgrm: {run:?}"
        );
        std::fs::remove_file(&json).expect("remove JSON");
        std::fs::remove_file(&hgrm).expect("remove .hgrm");
    }
    // `--json -`: the document is on stdout.
    let run = run_tsumo(
        &[
            "-t1", "-c1", "-d1s", "-R50", "--json", "-", "-s", &failing, &url,
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("stdout is the JSON");
    assert!(json_u64(&doc, "counters.requests") > 0, "{doc:#}");
}

/// A script error mid-run is in the JSON (`script_error`, FILE:LINE and its message; `ended_by`
/// names it, where it said "ended" before issue 30), and `tsumo compare` and `tsumo merge` name it
/// under their report of the run.
#[test]
fn a_script_error_mid_run_is_in_the_json_and_in_compare_and_merge() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let path = script("err_request.lua");
    let dir = TempDir::new("script-error-json");
    let json = dir.path().join("run.json");
    let json_arg = json.to_str().unwrap();
    let run = run_tsumo(
        &[
            "-t1", "-c1", "-d3s", "-R100", "--json", json_arg, "-s", &path, &url,
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let doc = common::read_json(&json);
    let error = format!("{path}:7: request failed");
    assert!(
        doc["script_error"]
            .as_str()
            .is_some_and(|e| e.starts_with(&error)),
        "{doc:#}"
    );
    assert_eq!(doc["ended_by"], "script error", "{doc:#}");
    let wanted = format!("{json_arg}: stopped by a script error: {error}");
    let compare = run_tsumo(&["compare", json_arg], LIMIT);
    compare.assert_success();
    assert!(
        compare
            .stdout
            .lines()
            .any(|l| l.trim_start().starts_with(&wanted)),
        "{}",
        compare.stdout
    );
    let merged = dir.path().join("merged.json");
    let merge = run_tsumo(&["merge", json_arg, "-o", merged.to_str().unwrap()], LIMIT);
    merge.assert_success();
    assert!(
        merge
            .stdout
            .lines()
            .any(|l| l.trim_start().starts_with(&wanted)),
        "{}",
        merge.stdout
    );
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged).expect("merge written"))
            .expect("merge parses");
    assert_eq!(merged["script_error"], doc["script_error"]);
}

// ---- script arguments ------------------------------------------------------------------------

/// init(args): args[0] is the URL, then the positional arguments in order, `--` only ending the
/// options (so `-x` after it is an argument).
#[test]
fn args_reach_init_with_the_url_first() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d1s",
            "-R10",
            "-s",
            &script("args.lua"),
            &url,
            "a",
            "b",
            "--",
            "-x",
        ],
        LIMIT,
    );
    run.assert_success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    let header = running_line(&run.stdout);
    let expected = [
        format!("args[0] = {url}"),
        "args[1] = a".to_string(),
        "args[2] = b".to_string(),
        "args[3] = -x".to_string(),
    ];
    assert_eq!(lines[..header], expected, "{}", run.stdout);
}

/// A hook that stops returning (here `request()` from its 50th call on). `script` is the file.
fn hung_script(dir: &TempDir) -> std::path::PathBuf {
    let hung = dir.path().join("hung.lua");
    std::fs::write(
        &hung,
        "local n = 0\n\
         request = function()\n\
           n = n + 1\n\
           if n > 50 then while true do end end\n\
           return wrk.format(nil, '/index.html')\n\
         end\n",
    )
    .unwrap();
    hung
}

/// A `request()` that never returns is interrupted at the script time limit (1 s by default)
/// and reported as a script error at its file:line: the run ends then, not at `-d`, with the
/// report of what ran, and exits 1.
#[test]
fn a_hook_past_the_time_limit_is_interrupted_at_its_line() {
    let nginx = Nginx::start();
    let dir = TempDir::new("hung-hook");
    let hung = hung_script(&dir);
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d60s",
            "-R100",
            "-s",
            hung.to_str().unwrap(),
            &nginx.http_url("/index.html"),
        ],
        // Far short of -d: a run that waits for -d is killed and fails the test.
        Duration::from_secs(30),
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(
        run.stderr.contains(
            "hung.lua:4: request() ran past the 1.00s script time limit and was interrupted \
             (--script-timeout)"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("requests in"), "{}", run.stdout);
}

/// The limit is settable, holds in `response()` as well, and a script that catches the
/// interruption with `pcall` and loops on is interrupted again.
#[test]
fn a_script_cannot_catch_its_way_past_the_time_limit() {
    let nginx = Nginx::start();
    let dir = TempDir::new("pcall-hook");
    let script = dir.path().join("spin.lua");
    std::fs::write(
        &script,
        "response = function(status, headers, body)\n\
           while true do\n\
             pcall(function() local x = 0 for i = 1, 1e12 do x = x + i end end)\n\
           end\n\
         end\n",
    )
    .unwrap();
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d60s",
            "-R10",
            "--script-timeout",
            "300ms",
            "-s",
            script.to_str().unwrap(),
            &nginx.http_url("/index.html"),
        ],
        // Far short of -d: a run that waits for -d is killed and fails the test.
        Duration::from_secs(30),
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(
        run.stderr.contains("spin.lua:")
            && run
                .stderr
                .contains("response() ran past the 300.00ms script time limit and was interrupted"),
        "{}",
        run.stderr
    );
}

/// With no limit (`--script-timeout 0`, LuaJIT compiling, which no hook can interrupt), a hook
/// that never returns still cannot hold the run past `-d`: the run ends on time plus the
/// workers' grace, reports what ran with a note, and exits 1 naming the cause.
#[test]
fn without_a_limit_a_hook_that_never_returns_does_not_hold_the_run() {
    let nginx = Nginx::start();
    let dir = TempDir::new("hung-hook-unlimited");
    let hung = hung_script(&dir);
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d2s",
            "-R100",
            "--script-timeout",
            "0",
            "-s",
            hung.to_str().unwrap(),
            &nginx.http_url("/index.html"),
        ],
        Duration::from_secs(30),
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(
        run.stderr.contains("worker threads never ended"),
        "{}",
        run.stderr
    );
    // The 5 s grace, as waited: a busy machine wakes the waiter a little late (5.1s).
    let waited = run
        .stdout
        .split("had not ended ")
        .nth(1)
        .and_then(|rest| rest.split("s after the run").next())
        .and_then(|s| s.parse::<f64>().ok());
    assert!(
        waited.is_some_and(|w| (5.0..6.0).contains(&w)),
        "{}",
        run.stdout
    );
}

/// Issue 19 (8): with `--script-timeout 0`, code that never returned before the run (the
/// script's top level, `setup()`, `init()`, the `request()` that builds the first request) hung
/// tsumo for ever, at 100 % CPU, and so did `done()` after it: the README promised an end at
/// `-d` plus 5 s. Outside the run the limit stays, at `-d` plus 5 s, and names itself.
#[test]
fn without_a_limit_a_hook_outside_the_run_still_ends_at_the_duration_plus_5s() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = TempDir::new("hung-outside");
    let check = |name: &str, source: &str, what: &str| {
        let script = dir.path().join(format!("{name}.lua"));
        std::fs::write(&script, source).unwrap();
        let run = run_tsumo(
            &[
                "-t1",
                "-c1",
                "-d1s",
                "-R10",
                "--script-timeout",
                "0",
                "-s",
                script.to_str().unwrap(),
                &url,
            ],
            Duration::from_secs(120),
        );
        // done() runs after the run (a failed run, 1); the others before it (a script that does
        // not load, 2).
        let status = if name == "done" { 1 } else { 2 };
        assert_eq!(run.status.code(), Some(status), "{name}: {run:?}");
        let wanted = format!(
            "{name}.lua:2: {what} ran past the 6.00s script time limit and was interrupted \
             (with --script-timeout 0, a hook outside the run may take -d plus 5s)"
        );
        let wanted = if name == "top" {
            wanted.replace("top.lua:2", "top.lua:1")
        } else {
            wanted
        };
        assert!(
            run.stderr.contains(&wanted),
            "{name}: wanted {wanted}\n{}",
            run.stderr
        );
    };
    let top = || check("top", "while true do end\n", "the script's top level");
    let setup = || {
        check(
            "setup",
            "function setup(thread)\n  while true do end\nend\n",
            "setup()",
        )
    };
    let init = || {
        check(
            "init",
            "function init(args)\n  while true do end\nend\n",
            "init()",
        )
    };
    let request = || {
        check(
            "request",
            "function request()\n  while true do end\nend\n",
            "request()",
        )
    };
    let done = || {
        check(
            "done",
            "function done(summary, latency, requests)\n  while true do end\nend\n",
            "done()",
        )
    };
    common::all_at_once(&[
        ("top", &top),
        ("setup", &setup),
        ("init", &init),
        ("request", &request),
        ("done", &done),
    ]);
}
