//! `--http2` against a real nginx: h2 over TLS (`listen … ssl http2`, ALPN) and prior-knowledge
//! h2c (`listen … http2`): every response counted and seen by nginx as HTTP/2,
//! the wrk2 report with the protocol named, Lua scripts unchanged, a server's stream limit and
//! GOAWAYs reported, and h2 through nginx to an HTTP/1.1 backend compared with the backend.

mod common;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use common::nginx::{Nginx, INDEX_LEN};
use common::{json_errors_total, json_u64, run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(30);

/// As the fixture's main server: static files, and POST answered with the page.
const STATIC: &str = "root @ROOT@/www;\n        error_page 405 =200 $uri;";

fn h2_nginx() -> Nginx {
    Nginx::builder()
        .h2_server("h2", STATIC, true)
        .h2_server("h2c", STATIC, false)
        .start()
}

fn url(nginx: &Nginx, name: &str) -> String {
    let scheme = if name == "h2" { "https" } else { "http" };
    format!("{scheme}://127.0.0.1:{}/index.html", nginx.port(name))
}

/// At -R2000 nothing fails, and nginx logged every counted response as an HTTP/2 request, on
/// one connection per -c (the rate reached is a benchmark's to measure, not a test's).
fn every_response_counted(name: &str) {
    let nginx = h2_nginx();
    let url = url(&nginx, name);
    let run = run_tsumo(
        &[
            "--http2", "-m4", "-t2", "-c10", "-d3s", "-R2000", "-k", "--json", "-", &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let json = run.json();
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    let requests = json_u64(&json, "counters.requests");
    assert!(requests > 0, "{json:#}");
    assert!(
        json_u64(&json, "counters.bytes_read") > requests * INDEX_LEN as u64,
        "bytes read count the bodies: {json:#}"
    );
    assert_eq!(json["plan"]["http2"]["streams"], 4, "{json:#}");
    assert_eq!(json["counters"]["http2"]["granted_min"], 128, "{json:#}");
    // The intervals (issue 23) hold every response once, and every request sent once.
    let intervals = json["intervals"].as_array().expect("intervals");
    assert!(intervals.len() >= 3, "{} intervals", intervals.len());
    let sum = |field: &str| intervals.iter().map(|i| json_u64(i, field)).sum::<u64>();
    assert_eq!(sum("completed"), requests);
    assert_eq!(sum("latency.count"), json_u64(&json, "latency.count"));
    assert!(sum("sent") >= requests, "{json:#}");
    let log = nginx.access_log_wait(requests as usize);
    // At most 10 connections × 4 streams were still in flight when the run ended.
    assert!(
        (requests..=requests + 40).contains(&(log.len() as u64)),
        "{} logged, {requests} counted",
        log.len()
    );
    assert!(
        log.iter().all(|l| l.method == "GET"
            && l.uri == "/index.html"
            && l.status == 200
            && l.protocol == "HTTP/2.0"),
        "{:?}",
        &log[..3]
    );
    let connections: HashSet<u64> = log.iter().map(|l| l.connection).collect();
    assert_eq!(connections.len(), 10, "one nginx connection per -c");
}

#[test]
fn h2_over_tls_counts_every_response() {
    every_response_counted("h2");
}

#[test]
fn h2c_counts_every_response() {
    every_response_counted("h2c");
}

/// wrk2's layout, with the protocol named on a line of its own under the threads line and the
/// server's grant after the totals.
#[test]
fn text_report_keeps_wrk2_layout_and_names_http2() {
    let nginx = h2_nginx();
    let url = url(&nginx, "h2");
    let run = run_tsumo(
        &[
            "--http2", "-t2", "-c10", "-m10", "-d2s", "-R2000", "-L", "-k", &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let out = &run.stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("Running 2s test @ {url}"), "{out}");
    assert_eq!(lines[1], "  2 threads and 10 connections", "{out}");
    assert_eq!(
        lines[2], "  HTTP/2 (h2 over TLS), up to 10 streams per connection",
        "{out}"
    );
    assert_eq!(
        lines[3], "  Thread Stats   Avg      Stdev     Max   +/- Stdev",
        "{out}"
    );
    assert!(lines[4].starts_with("    Latency "), "{out}");
    assert!(lines[5].starts_with("    Req/Sec "), "{out}");
    assert_eq!(
        lines[6], "  Latency Distribution (HdrHistogram - Recorded Latency)",
        "{out}"
    );
    for needle in [
        "  Detailed Percentile spectrum:",
        "Requests/sec:",
        "Transfer/sec:",
        "HTTP/2: server granted 128 concurrent streams per connection (-m 10); \
         GOAWAY received: 0; RST_STREAM received: 0",
    ] {
        assert!(out.contains(needle), "no {needle:?} in:\n{out}");
    }
    assert!(!out.contains("Note: the server granted only"), "{out}");
}

/// A server granting fewer streams than -m, and closing connections with GOAWAY every 50
/// requests: both are reported, and no request is lost to the GOAWAYs (the ones the server
/// did not process go again on a new connection).
#[test]
fn stream_limit_and_goaways_are_reported_and_survived() {
    let nginx = Nginx::builder()
        .h2_server(
            "limited",
            "root @ROOT@/www;\n        http2_max_concurrent_streams 2;\n        \
             keepalive_requests 50;",
            false,
        )
        .start();
    let url = format!("http://127.0.0.1:{}/index.html", nginx.port("limited"));
    let run = run_tsumo(
        &[
            "--http2", "-t1", "-c2", "-m8", "-d2s", "-R2000", "--json", "-", &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let json = run.json();
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    let h2 = &json["counters"]["http2"];
    assert_eq!(h2["granted_min"], 2, "{json:#}");
    let goaways = h2["goaway"]["NO_ERROR"].as_u64().unwrap_or(0);
    // nginx's side: each connection that took its 50 requests sent a GOAWAY; the last two
    // (one per -c) may have come after the run ended.
    let log = nginx.access_log_wait(json_u64(&json, "counters.requests") as usize);
    let mut taken: HashMap<u64, u64> = HashMap::new();
    for line in &log {
        let most = taken.entry(line.connection).or_default();
        *most = (*most).max(line.connection_requests);
    }
    let full = taken.values().filter(|&&n| n >= 50).count() as u64;
    assert!(full > 0, "no connection reached 50 requests: {json:#}");
    assert!(
        goaways <= full && full <= goaways + 2,
        "{goaways} GOAWAYs for {full} connections closed by nginx: {json:#}"
    );
    // A new connection after each GOAWAY: every one nginx saw, tsumo opened.
    assert!(
        json_u64(&json, "counters.connections_opened") >= taken.len() as u64,
        "{} connections at nginx: {json:#}",
        taken.len()
    );
    let text = run_tsumo(
        &["--http2", "-t1", "-c1", "-m8", "-d1s", "-R200", &url],
        LIMIT,
    );
    text.assert_success();
    assert!(
        text.stdout.contains(
            "Note: the server granted only 2 concurrent streams per connection, fewer than -m 8"
        ),
        "{}",
        text.stdout
    );
}

/// A wrk Lua script runs unchanged: its wrk.format request (a POST with a body and headers,
/// Connection among them) arrives at nginx as an HTTP/2 POST with the body, without the
/// connection-specific header.
#[test]
fn lua_scripts_run_unchanged_over_http2() {
    let nginx = h2_nginx();
    let dir = TempDir::new("tsumo-h2-lua");
    let script = dir.path().join("post.lua");
    std::fs::write(
        &script,
        r#"wrk.method = "POST"
wrk.body = string.rep("x", 100)
wrk.headers["Content-Type"] = "text/plain"
wrk.headers["Connection"] = "keep-alive"
local n = 0
request = function()
  n = n + 1
  return wrk.format(nil, "/index.html?n=" .. n)
end
"#,
    )
    .unwrap();
    let url = url(&nginx, "h2c");
    let script = script.display().to_string();
    let run = run_tsumo(
        &[
            "--http2", "-t1", "-c2", "-d1s", "-R200", "-s", &script, "--json", "-", &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let json = run.json();
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    let requests = json_u64(&json, "counters.requests");
    let log = nginx.access_log_wait(requests as usize);
    assert!(
        log.len() as u64 >= requests && requests > 150,
        "{} / {requests}",
        log.len()
    );
    assert!(
        log.iter().all(|l| l.method == "POST"
            && l.uri.starts_with("/index.html?n=")
            && l.protocol == "HTTP/2.0"
            && l.content_length == Some(100)),
        "{:?}",
        &log[..3]
    );
    let distinct: HashSet<&str> = log.iter().map(|l| l.uri.as_str()).collect();
    assert_eq!(distinct.len(), log.len(), "request() ran per request");

    // A static script (no request()): its request is built and parsed once, sent every time.
    let fixed = dir.path().join("static.lua");
    std::fs::write(
        &fixed,
        "wrk.method = \"POST\"\nwrk.path = \"/index.html?static\"\nwrk.body = \"abc\"\n",
    )
    .unwrap();
    let fixed = fixed.display().to_string();
    let before = log.len();
    let run = run_tsumo(
        &[
            "--http2", "-t1", "-c1", "-d1s", "-R100", "-s", &fixed, "--json", "-", &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let json = run.json();
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    let requests = json_u64(&json, "counters.requests") as usize;
    let log = nginx.access_log_wait(before + requests);
    let sent = &log[before..];
    assert!(
        sent.len() >= requests && requests > 80,
        "{} / {requests}",
        sent.len()
    );
    assert!(
        sent.iter().all(|l| l.method == "POST"
            && l.uri == "/index.html?static"
            && l.content_length == Some(3)
            && l.protocol == "HTTP/2.0"),
        "{:?}",
        &sent[..2]
    );
}

/// Without --http2, https:// offers only http/1.1 (nginx answers HTTP/1.1 on its h2 port);
/// with --http2, a TLS server without HTTP/2 is one clear error line before any traffic.
#[test]
fn alpn_offers_h2_only_with_http2() {
    let nginx = h2_nginx();
    let run = run_tsumo(
        &["-t1", "-c1", "-d1s", "-R100", "-k", &url(&nginx, "h2")],
        LIMIT,
    );
    run.assert_success();
    let log = nginx.access_log_wait(50);
    assert!(
        log.iter().all(|l| l.protocol == "HTTP/1.1"),
        "{:?}",
        &log[..2]
    );

    let plain_tls = nginx.https_url("/index.html");
    let refused = run_tsumo(&["--http2", "-d1s", "-R100", "-k", &plain_tls], LIMIT);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(refused.stdout.is_empty(), "{refused:?}");
    let err = refused.stderr.trim();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("does not speak HTTP/2") && err.contains("ALPN chose"),
        "{err}"
    );
}

/// h2 through nginx (an HTTP/2 proxy in front of an HTTP/1.1 backend) compared with --vs
/// straight to the backend over HTTP/1.1: both runs at the rate, and the table names them.
#[test]
fn h2_through_a_proxy_compared_with_the_http1_backend() {
    let nginx = Nginx::builder()
        .h2_server(
            "proxy",
            "location / { proxy_pass http://127.0.0.1:@HTTP_PORT@; \
             proxy_http_version 1.1; proxy_set_header Connection \"\"; }",
            true,
        )
        .start();
    let proxy = format!("https://127.0.0.1:{}/index.html", nginx.port("proxy"));
    let direct = nginx.http_url("/index.html");
    let run = run_tsumo(
        &[
            "--http2",
            "-m2",
            "-t1",
            "-c4",
            "-d1s",
            "-R500",
            "-k",
            "--rounds",
            "1",
            "--label",
            "h2 via nginx",
            &proxy,
            "--vs",
            &direct,
            "--vs-label",
            "direct",
            "--vs-http1",
        ],
        LIMIT,
    );
    run.assert_success();
    let out = &run.stdout;
    assert!(
        out.contains("h2 via nginx") && out.contains("direct"),
        "{out}"
    );
    assert!(out.contains("HTTP/2 streams per conn"), "{out}");
    let log = nginx.access_log_wait(1400);
    let proxy_port = nginx.port("proxy");
    let via_proxy = log.iter().filter(|l| l.server_port == proxy_port);
    assert!(via_proxy.clone().all(|l| l.protocol == "HTTP/2.0"));
    let backend = log.iter().filter(|l| l.server_port == nginx.http_port());
    assert!(backend.clone().all(|l| l.protocol == "HTTP/1.1"));
    // The proxy's run reached the backend through it; the direct run went straight there.
    let (h2, h1) = (via_proxy.count(), backend.count());
    assert!(
        h2 >= 450 && h1 >= 2 * h2 - 50,
        "{h2} via the proxy, {h1} at the backend"
    );
}

/// `--http2` with an http:// URL is h2c with prior knowledge; nginx's plain port speaks only
/// HTTP/1.1: the pre-flight stops the run before any traffic, with one line that says so.
#[test]
fn h2c_against_an_http1_only_server_stops_before_traffic_in_one_line() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &["--http2", "-t1", "-c2", "-d2s", "-R50", &url],
        Duration::from_secs(15),
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(run.stdout.is_empty(), "stdout: {}", run.stdout);
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "tsumo: 127.0.0.1:{} does not speak h2c (HTTP/2 with prior knowledge over \
             http://): it answered \"HTTP/1.1 400 Bad Request\"; enable HTTP/2 on that port \
             (nginx: `listen … http2`), or leave out --http2",
            nginx.http_port()
        )
    );
}
