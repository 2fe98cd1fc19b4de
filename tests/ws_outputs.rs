//! What a `tsumo ws` run leaves besides its report, against the Node.js echo server
//! (`scripts/ws-echo.js`): its objectives (`--slo`, exit 99 with the measured value when one
//! breaks, the JSON's `objectives`, `--junit`), its timeline (`--interval`, the JSON's
//! `intervals`), its page (`--html`) and `/metrics` during the run (`--dashboard`).

mod common;

use std::time::Duration;

use common::schema::{assert_valid, Kind};
use common::wsecho::WsEcho;
use common::{read_json, run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(60);

/// A run's `--json` file, valid against `docs/schema/ws.schema.json`, read.
fn saved(json: &std::path::Path) -> serde_json::Value {
    assert_valid(Kind::Ws, &[json]);
    read_json(json)
}

/// Objectives an echo server holds: exit 0, each verdict in the JSON and the JUnit file.
#[test]
fn objectives_that_hold_exit_0_and_are_saved() {
    let server = WsEcho::start(&[]);
    let dir = TempDir::new("ws-slo-held");
    let (json, junit) = (dir.path().join("r.json"), dir.path().join("r.xml"));
    let (json_arg, junit_arg) = (json.display().to_string(), junit.display().to_string());
    let args = [
        "ws",
        "-t1",
        "-c2",
        "-d2s",
        "-R100",
        "--slo",
        "p99<250ms",
        "--slo",
        "errors<5%",
        "--slo",
        "rate>90%",
        "--slo",
        "disconnects<1",
        "--json",
        &json_arg,
        "--junit",
        &junit_arg,
    ];
    let url = server.url();
    let run = run_tsumo(&[&args[..], &[url.as_str()]].concat(), LIMIT);
    run.assert_success();
    assert!(
        run.stdout.contains("Objectives: all 4 held"),
        "{}",
        run.stdout
    );
    let doc = saved(&json);
    let objectives = doc["objectives"].as_array().expect("objectives");
    assert_eq!(objectives.len(), 4, "{doc}");
    assert!(objectives.iter().all(|v| v["held"] == true), "{doc}");
    assert_eq!(objectives[3]["measured"], 0.0, "{doc}");
    let xml = std::fs::read_to_string(&junit).expect("--junit written");
    assert!(
        xml.contains("p99&lt;250ms") && xml.contains("<testcase"),
        "{xml}"
    );
}

/// The server holds each connection's 50th message and the rest for 300 ms: a round-trip
/// objective under it breaks (exit 99), the line names it with the value measured.
#[test]
fn an_objective_broken_by_a_stall_exits_99_with_the_value_measured() {
    let server = WsEcho::start(&["--stall-after", "50"]);
    let dir = TempDir::new("ws-slo-broken");
    let json = dir.path().join("s.json");
    let json_arg = json.display().to_string();
    let url = server.url();
    let run = run_tsumo(
        &[
            "ws",
            "-t1",
            "-c2",
            "-d3s",
            "-R200",
            "--slo",
            "p99<100ms",
            "--slo",
            "errors<1%",
            "--json",
            &json_arg,
            &url,
        ],
        LIMIT,
    );
    assert_eq!(
        run.status.code(),
        Some(99),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stderr.contains("objectives broken: p99<100ms (p99 "),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("errors<1%"), "{}", run.stderr);
    let doc = saved(&json);
    let p99 = &doc["objectives"][0];
    assert_eq!(p99["held"], false, "{doc}");
    let measured = p99["measured"].as_f64().expect("measured");
    assert!(measured >= 250_000.0, "p99 {measured} µs: {doc}");
    assert_eq!(measured, doc["round_trip"]["p99"].as_f64().unwrap_or(0.0));
}

/// Bad objectives are one line, exit 2, before any traffic.
#[test]
fn bad_objectives_are_refused_in_one_line() {
    let refused = |slo: &str, rate: &[&str], said: &str| {
        let run = run_tsumo(
            &[&["ws", "--slo", slo], rate, &["ws://127.0.0.1:9/"]].concat(),
            LIMIT,
        );
        assert_eq!(run.status.code(), Some(2), "{slo}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains(said), "{slo}: {}", run.stderr);
    };
    refused("draw_overshoot.p99<1ms", &["-R10"], "a WebSocket run's are");
    refused("rate>95%", &[], "needs a target rate (-R)");
    refused("p99<0ms", &["-R10"], "can never hold");
}

/// `--interval 500ms`: the JSON's intervals add up to the run's messages, each with its round
/// trip; `--html`: the run's page, opened in headless Chromium without a console message, its
/// figures the JSON's and its charts over time drawn.
#[test]
fn the_timeline_is_saved_and_the_page_written() {
    let server = WsEcho::start(&[]);
    let dir = TempDir::new("ws-timeline");
    let (json, html) = (dir.path().join("t.json"), dir.path().join("t.html"));
    let (json_arg, html_arg) = (json.display().to_string(), html.display().to_string());
    let url = server.url();
    let run = run_tsumo(
        &[
            "ws",
            "-t1",
            "-c2",
            "-d2s",
            "-R100",
            "--interval",
            "500ms",
            "--json",
            &json_arg,
            "--html",
            &html_arg,
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let doc = saved(&json);
    let intervals = doc["intervals"].as_array().expect("intervals");
    assert!((4..=5).contains(&intervals.len()), "{doc}");
    let sum = |field: &str| -> u64 {
        intervals
            .iter()
            .map(|i| i[field].as_u64().unwrap_or(0))
            .sum()
    };
    assert_eq!(
        sum("sent"),
        doc["messages"]["sent"].as_u64().unwrap_or(0),
        "{doc}"
    );
    assert_eq!(
        sum("answered"),
        doc["messages"]["answered"].as_u64().unwrap_or(0)
    );
    let rt: u64 = intervals
        .iter()
        .map(|i| i["round_trip"]["count"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(
        rt,
        doc["round_trip"]["count"].as_u64().unwrap_or(0),
        "{doc}"
    );
    assert!(
        intervals[1]["answered"].as_u64().unwrap_or(0) >= 40,
        "{doc}"
    );
    assert_eq!(intervals[1]["duration_s"], 0.5, "{doc}");
    let text = std::fs::read_to_string(&html).expect("--html written");
    assert!(text.contains("Round trip over time"), "the page's charts");
    let page = common::browser::open(&html, "ws-run", Duration::from_secs(90));
    page.assert_no_console_messages();
    let achieved = common::browser::figure_value(&page.dom, "data-figure=\"achieved\"");
    let answered = doc["messages"]["answered"].as_f64().unwrap_or(0.0);
    let elapsed = doc["elapsed_s"].as_f64().unwrap_or(1.0);
    let shown = achieved.expect("the Messages/sec figure");
    assert!(
        (shown - answered / elapsed).abs() < 0.01,
        "{shown} vs {answered}/{elapsed}"
    );
    assert!(
        page.attributes("polyline", "points").len() >= 4,
        "{}",
        page.dom
    );
}

/// The first value of series `name` (with labels) in `/metrics`' text whose line holds `with`.
fn metric(text: &str, name: &str, with: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(&format!("{name}{{")) && l.contains(with))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// `--dashboard`: `/metrics` scraped during the run has the ws series, growing, and once the
/// run ended, its totals are the JSON's.
#[test]
fn metrics_scraped_during_a_run_have_the_ws_series() {
    let server = WsEcho::start(&[]);
    let dir = TempDir::new("ws-metrics");
    let json = dir.path().join("m.json");
    let json_arg = json.display().to_string();
    let port = common::free_port();
    let at = format!("127.0.0.1:{port}");
    let url = server.url();
    let tsumo = common::Signalled::spawn(&[
        "ws",
        "-t1",
        "-c2",
        "-d4s",
        "-R200",
        "--quiet",
        "--dashboard",
        &at,
        "--dashboard-linger",
        "3s",
        "--json",
        &json_arg,
        &url,
    ]);
    let get = |path| common::prometheus::get(port, path);
    common::wait_for("the dashboard listens", Duration::from_secs(30), || {
        get("/metrics").is_some()
    });
    std::thread::sleep(Duration::from_millis(2_500));
    let (status, during) = get("/metrics").expect("/metrics answers");
    assert_eq!(status, 200);
    let answered = metric(&during, "tsumo_ws_messages_total", "state=\"answered\"");
    assert!(answered.is_some_and(|n| n >= 100.0), "{during}");
    assert!(
        during.contains("tsumo_ws_round_trip_seconds_bucket{"),
        "{during}"
    );
    assert!(during.contains("tsumo_ws_disconnects_total{"), "{during}");
    let (_, page) = get("/").expect("the live page");
    assert!(page.contains("WebSocket run"), "{page}");
    common::wait_for("the run's JSON", Duration::from_secs(30), || json.exists());
    std::thread::sleep(Duration::from_millis(300));
    let (_, after) = get("/metrics").expect("/metrics after the end");
    let doc = saved(&json);
    let sent = metric(&after, "tsumo_ws_messages_total", "state=\"sent\"");
    assert_eq!(sent, doc["messages"]["sent"].as_f64(), "{after}");
    tsumo.finish(LIMIT).assert_success();
}
