//! The Grafana board, `deploy/grafana/tsumo.json`, read with serde_json and checked against a
//! real Prometheus. Its structure: a `${DS_PROMETHEUS}` input, every panel with that data
//! source, a unique id and a place on the grid, every query selecting by the three variables
//! (`run_id`, `label`, `shard`), every metric it reads one docs/dashboard.md lists. Its queries:
//! Prometheus scrapes an HTTP run (one shard of two) against nginx, a mahjong session against
//! majiang-server and a WebSocket run against the Node echo server at once; then every target of every panel, its variables substituted as
//! Grafana would, is run through Prometheus' HTTP API over the runs' time (a range query, or
//! an instant one at the end for the totals) and returns data, for all runs and for the run of
//! its kind; the variables' own `label_values` queries list the runs' values; and the totals'
//! panels say the JSON's requests, errors, never-sent requests, games and WebSocket messages.

mod common;

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::nginx::Nginx;
use common::prometheus::{bucket_of, Prometheus};
use common::{json_errors_total, json_f64, json_u64, read_json, run_tsumo, TempDir};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(120);

/// The data source every panel and query names: the import's input.
const DATA_SOURCE: &str = "${DS_PROMETHEUS}";

/// The variables, in the order the board shows them.
const VARIABLES: [&str; 3] = ["run_id", "label", "shard"];

/// The series the issue asks the board to show (the histograms by their buckets).
const SHOWN: [&str; 17] = [
    "tsumo_requests_total",
    "tsumo_target_rate",
    "tsumo_latency_seconds_bucket",
    "tsumo_server_latency_seconds_bucket",
    "tsumo_errors_total",
    "tsumo_never_sent_total",
    "tsumo_send_lateness_seconds_bucket",
    "tsumo_players",
    "tsumo_games_started_total",
    "tsumo_games_ended_total",
    "tsumo_reply_lateness_seconds_bucket",
    "tsumo_ws_messages_total",
    "tsumo_ws_pushed_total",
    "tsumo_ws_target_rate",
    "tsumo_ws_round_trip_seconds_bucket",
    "tsumo_ws_server_round_trip_seconds_bucket",
    "tsumo_ws_send_lateness_seconds_bucket",
];

fn board() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/grafana/tsumo.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn panels(board: &Value) -> &Vec<Value> {
    board["panels"].as_array().expect("the board has panels")
}

/// Every panel's targets, with the panel's title.
fn targets(board: &Value) -> Vec<(String, &Value)> {
    let mut all = Vec::new();
    for panel in panels(board) {
        let title = panel["title"].as_str().unwrap_or_default().to_string();
        for target in panel["targets"].as_array().into_iter().flatten() {
            all.push((title.clone(), target));
        }
    }
    all
}

fn expr(target: &Value) -> &str {
    target["expr"].as_str().expect("a target has an expr")
}

fn names_the_data_source(value: &Value) -> bool {
    value["datasource"]["type"] == "prometheus" && value["datasource"]["uid"] == DATA_SOURCE
}

/// The metric names a query reads.
fn metrics_in(expr: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("tsumo_") {
        let name: String = rest[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        rest = &rest[at + name.len()..];
        names.push(name);
    }
    names
}

#[test]
fn the_board_imports_anywhere_and_every_query_selects_by_the_variables() {
    let board = board();
    assert!(
        board["schemaVersion"].as_u64().is_some_and(|v| v >= 39),
        "schemaVersion {}",
        board["schemaVersion"]
    );
    let inputs = board["__inputs"].as_array().expect("__inputs");
    assert!(
        inputs.iter().any(|i| i["name"] == "DS_PROMETHEUS"
            && i["type"] == "datasource"
            && i["pluginId"] == "prometheus"),
        "{inputs:?}"
    );
    assert!(board["id"].is_null(), "an exported board has no id");

    let mut ids = HashSet::new();
    let mut cells = HashSet::new();
    for panel in panels(&board) {
        let title = &panel["title"];
        assert!(
            names_the_data_source(panel),
            "{title}: {}",
            panel["datasource"]
        );
        let id = panel["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("{title}: no id"));
        assert!(ids.insert(id), "{title}: id {id} twice");
        let place = &panel["gridPos"];
        let [x, y, w, h] = ["x", "y", "w", "h"].map(|k| {
            place[k]
                .as_u64()
                .unwrap_or_else(|| panic!("{title}: gridPos.{k}"))
        });
        assert!(w > 0 && h > 0 && x + w <= 24, "{title}: {place}");
        for cell in (x..x + w).flat_map(|cx| (y..y + h).map(move |cy| (cx, cy))) {
            assert!(
                cells.insert(cell),
                "{title} overlaps another panel at {cell:?}"
            );
        }
        let targets = panel["targets"].as_array().expect("a panel has targets");
        assert!(!targets.is_empty(), "{title}: no targets");
        let refs: HashSet<_> = targets.iter().map(|t| t["refId"].to_string()).collect();
        assert_eq!(refs.len(), targets.len(), "{title}: refIds repeat");
        for target in targets {
            assert!(names_the_data_source(target), "{title}: {target}");
            for variable in VARIABLES {
                assert!(
                    expr(target).contains(&format!("{variable}=~\"${variable}\"")),
                    "{title}: {} does not select by ${variable}",
                    expr(target)
                );
            }
        }
    }

    let variables = board["templating"]["list"].as_array().expect("templating");
    let names: Vec<_> = variables.iter().map(|v| v["name"].clone()).collect();
    assert_eq!(names, VARIABLES, "the variables");
    for variable in variables {
        assert!(names_the_data_source(variable), "{variable}");
        assert_eq!(variable["type"], "query");
        let definition = variable["definition"].as_str().expect("a definition");
        assert!(definition.starts_with("label_values("), "{definition}");
        assert_eq!(variable["query"]["query"], definition);
    }

    // What it reads is what /metrics serves (docs/dashboard.md's table), and all the issue asks.
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/dashboard.md"))
            .expect("docs/dashboard.md");
    let read: HashSet<String> = targets(&board)
        .iter()
        .flat_map(|(_, t)| metrics_in(expr(t)))
        .collect();
    for name in &read {
        let documented = name.strip_suffix("_bucket").unwrap_or(name);
        assert!(
            docs.contains(&format!("`{documented}")),
            "{name} is not in docs/dashboard.md"
        );
    }
    for name in SHOWN {
        assert!(read.contains(name), "no panel shows {name}");
    }
}

/// The variables' values for one view of the board, as Grafana puts them in a regex matcher.
struct View {
    name: &'static str,
    run_id: String,
    label: String,
    shard: String,
}

/// Grafana's variables in `expr` replaced: `$__rate_interval` and `$__range` by windows, the
/// board's by the view's values.
fn substitute(expr: &str, view: &View, range_s: u64) -> String {
    let text = expr
        .replace("$__rate_interval", RATE_INTERVAL)
        .replace("$__range", &format!("{range_s}s"))
        .replace("$run_id", &view.run_id)
        .replace("$label", &view.label)
        .replace("$shard", &view.shard);
    assert!(
        !text.contains('$'),
        "a variable the test does not know: {expr}"
    );
    text
}

/// `$__rate_interval` for a 1 s scrape: Grafana's four scrape intervals, and one more.
const RATE_INTERVAL: &str = "5s";

/// Whether a query's result holds a number (not `NaN`, not infinite) anywhere.
fn has_a_number(result: &[Value]) -> bool {
    let number = |v: &Value| {
        v[1].as_str()
            .and_then(|s| s.parse::<f64>().ok())
            .is_some_and(f64::is_finite)
    };
    result.iter().any(|series| {
        series["value"].as_array().is_some() && number(&series["value"])
            || series["values"]
                .as_array()
                .is_some_and(|values| values.iter().any(number))
    })
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// A stat panel's target's value at `end` in `view`.
fn total(
    prometheus: &Prometheus,
    board: &Value,
    (title, legend): (&str, &str),
    view: &View,
    range_s: u64,
    end: f64,
) -> f64 {
    let (_, target) = targets(board)
        .into_iter()
        .find(|(t, target)| t == title && target["legendFormat"] == legend)
        .unwrap_or_else(|| panic!("no panel {title} with a target {legend}"));
    assert_eq!(
        target["instant"], true,
        "{title}: a total is an instant query"
    );
    let query = substitute(expr(target), view, range_s);
    let result = prometheus.query_at(&query, end);
    assert_eq!(result.len(), 1, "{query}: {result:?}");
    result[0]["value"][1]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{query}: {result:?}"))
}

#[test]
fn every_panels_query_returns_data_from_a_real_prometheus_and_the_totals_are_the_jsons() {
    let server = common::majiang::Majiang::start();
    let nginx = Nginx::start();
    let echo = common::wsecho::WsEcho::start(&[]);
    let ports = common::free_ports(3);
    let at: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let prometheus = Prometheus::start(&at);
    let dir = TempDir::new("tsumo-grafana");
    let [http_json, session_json, ws_json] =
        ["http.json", "session.json", "ws.json"].map(|f| dir.path().join(f).display().to_string());
    let (url, majiang_url, ws_url) = (nginx.http_url("/"), server.url(), echo.url());
    let start = unix_now() - 1.0;
    let http = || {
        let run = run_tsumo(
            &[
                "-t1",
                "-c4",
                "-d6s",
                "-R400",
                "--shard",
                "1/2",
                "--run-id",
                "grafana-http",
                "--label",
                "nginx",
                "--quiet",
                "--dashboard",
                &at[0],
                "--dashboard-linger",
                "3s",
                "--json",
                &http_json,
                &url,
            ],
            LIMIT,
        );
        run.assert_success();
    };
    let session = || {
        let run = run_tsumo(
            &[
                "mahjong",
                "-c8",
                "-t1",
                "--think",
                "20ms",
                "--ramp",
                "1ms",
                "-d",
                "6s",
                "--run-id",
                "grafana-mahjong",
                "--label",
                "majiang",
                "--quiet",
                "--dashboard",
                &at[1],
                "--dashboard-linger",
                "3s",
                "--json",
                &session_json,
                &majiang_url,
            ],
            LIMIT,
        );
        run.assert_success();
    };
    let ws = || {
        let run = run_tsumo(
            &[
                "ws",
                "-t1",
                "-c4",
                "-d6s",
                "-R200",
                "--label",
                "echo",
                "--quiet",
                "--dashboard",
                &at[2],
                "--dashboard-linger",
                "3s",
                "--json",
                &ws_json,
                &ws_url,
            ],
            LIMIT,
        );
        run.assert_success();
    };
    common::all_at_once(&[("http", &http), ("session", &session), ("ws", &ws)]);
    // Looked at after the runs, as a board is: once Prometheus has found them gone (and so marked
    // their series stale), the totals are instant queries at that time.
    common::wait_for(
        "Prometheus to see the runs end",
        Duration::from_secs(30),
        || {
            let targets: Value = serde_json::from_str(&prometheus.targets()).unwrap_or_default();
            let active = targets["data"]["activeTargets"].as_array().cloned();
            active.is_some_and(|a| a.len() == 3 && a.iter().all(|t| t["health"] == "down"))
        },
    );
    let end = unix_now();
    let range_s = (end - start).ceil() as u64 + 1;

    // `tsumo ws` has no --run-id: its run's is in its JSON.
    let ws_run_id = read_json(Path::new(&ws_json))["run_id"]
        .as_str()
        .expect("the ws run's run_id")
        .to_string();
    let all = View {
        name: "all runs",
        run_id: format!("(grafana-http|grafana-mahjong|{ws_run_id})"),
        label: "(nginx|majiang|echo)".into(),
        shard: ".*".into(),
    };
    let http_view = View {
        name: "the HTTP run",
        run_id: "grafana-http".into(),
        label: "nginx".into(),
        shard: "1/2".into(),
    };
    let session_view = View {
        name: "the mahjong session",
        run_id: "grafana-mahjong".into(),
        label: "majiang".into(),
        shard: ".*".into(),
    };
    let ws_view = View {
        name: "the WebSocket run",
        run_id: ws_run_id.clone(),
        label: "echo".into(),
        shard: ".*".into(),
    };
    let board = board();
    let returns_data = |target: &Value, view: &View| {
        let query = substitute(expr(target), view, range_s);
        let result = if target["instant"] == true {
            prometheus.query_at(&query, end)
        } else {
            prometheus.query_range(&query, start, end, 1.0)
        };
        has_a_number(&result)
    };
    for (title, target) in targets(&board) {
        let legend = &target["legendFormat"];
        assert!(
            returns_data(target, &all),
            "{title} ({legend}): no data for {}: {}\n{}",
            all.name,
            expr(target),
            prometheus.targets()
        );
        assert!(
            [&http_view, &session_view, &ws_view]
                .iter()
                .any(|view| returns_data(target, view)),
            "{title} ({legend}): no data for {}, {} nor {}: {}",
            http_view.name,
            session_view.name,
            ws_view.name,
            expr(target)
        );
    }

    // The variables' queries list the runs' values.
    let variables = board["templating"]["list"].as_array().expect("templating");
    let values_of = |name: &str, view: &View| -> Vec<String> {
        let variable = variables
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("no variable {name}"));
        let definition = variable["definition"].as_str().expect("a definition");
        let inner = definition
            .strip_prefix("label_values(")
            .and_then(|d| d.strip_suffix(&format!(",{name})")))
            .unwrap_or_else(|| panic!("{definition}: not label_values(SELECTOR,{name})"));
        let mut values =
            prometheus.label_values(name, &substitute(inner, view, range_s), start, end);
        values.sort();
        values
    };
    let mut run_ids = vec![
        "grafana-http".to_string(),
        "grafana-mahjong".into(),
        ws_run_id,
    ];
    run_ids.sort();
    assert_eq!(values_of("run_id", &all), run_ids);
    assert_eq!(values_of("label", &http_view), ["nginx"]);
    assert_eq!(values_of("label", &session_view), ["majiang"]);
    assert_eq!(values_of("label", &ws_view), ["echo"]);
    assert_eq!(values_of("shard", &http_view), ["1/2"]);
    assert!(values_of("shard", &session_view).is_empty());

    // The totals are the JSON's.
    let stat =
        |panel: (&str, &str), view: &View| total(&prometheus, &board, panel, view, range_s, end);
    let doc = read_json(Path::new(&http_json));
    let requests = json_u64(&doc, "counters.requests");
    assert!(requests > 500, "{requests} requests");
    assert_eq!(
        stat(("Requests completed", "requests"), &http_view),
        requests as f64
    );
    let errors = stat(("Errors", "socket errors"), &http_view)
        + stat(("Errors", "non-2xx or 3xx"), &http_view);
    assert_eq!(errors, json_errors_total(&doc) as f64);
    let unsent: u64 = ["busy", "connect_failed", "connect_timeout", "late"]
        .iter()
        .map(|why| json_u64(&doc, &format!("counters.unsent.{why}")))
        .sum();
    assert_eq!(
        stat(("Never sent", "never sent"), &http_view),
        unsent as f64
    );
    // The target rate is the shard's share (shards add up to -R).
    let (_, target) = targets(&board)
        .into_iter()
        .find(|(t, target)| t == "Achieved against target rate" && target["refId"] == "B")
        .expect("a target rate");
    let query = substitute(expr(target), &http_view, range_s);
    let rates: Vec<f64> = prometheus.query_range(&query, start, end, 1.0)[0]["values"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v[1].as_str().and_then(|v| v.parse().ok()))
        .collect();
    assert!(!rates.is_empty(), "{query}");
    let planned = json_f64(&doc, "plan.rate");
    assert_eq!(planned, 200.0, "{doc}");
    assert!(rates.iter().all(|&r| r == planned), "{query}: {rates:?}");
    for (legend, field) in [
        ("corrected", "latency.p99"),
        ("the server's", "server_latency.p99"),
    ] {
        let p99 = stat(("Latency p99 over the range", legend), &http_view);
        let (lower, upper) = bucket_of(json_f64(&doc, field) / 1e6);
        assert!(
            lower <= p99 && p99 <= upper,
            "{legend}: Prometheus' p99 {p99}s outside the bucket ({lower}, {upper}] of the JSON's {field}"
        );
    }
    let doc = read_json(Path::new(&session_json));
    let started = json_f64(&doc, "games.started");
    assert!(started > 0.0, "no game started: {doc}");
    assert_eq!(stat(("Mahjong games", "started"), &session_view), started);
    assert_eq!(
        stat(("Mahjong games", "completed"), &session_view),
        json_f64(&doc, "games.completed")
    );
    assert_eq!(
        stat(("Mahjong games", "errors"), &session_view),
        json_f64(&doc, "errors")
    );
    let doc = read_json(Path::new(&ws_json));
    for (legend, field) in [
        ("sent", "messages.sent"),
        ("answered", "messages.answered"),
        ("unanswered", "messages.unanswered"),
        ("pushed", "messages.pushed"),
    ] {
        let saved = json_f64(&doc, field)
            + if legend == "unanswered" {
                json_f64(&doc, "messages.timed_out")
            } else {
                0.0
            };
        assert_eq!(
            stat(("WebSocket messages", legend), &ws_view),
            saved,
            "{legend}"
        );
    }
    assert!(json_f64(&doc, "messages.sent") > 500.0, "{doc}");
    for (legend, field) in [
        ("corrected", "round_trip.p99"),
        ("the server's", "breakdown.server.p99"),
    ] {
        let p99 = stat(
            ("WebSocket round trip p99 over the range", legend),
            &ws_view,
        );
        let (lower, upper) = bucket_of(json_f64(&doc, field) / 1e6);
        assert!(
            lower <= p99 && p99 <= upper,
            "{legend}: Prometheus' p99 {p99}s outside the bucket ({lower}, {upper}] of the JSON's {field}"
        );
    }
}
