//! `tsumo ws URL --vs URL2`: the same message load through nginx's WebSocket proxy
//! (`proxy_http_version 1.1` with the Upgrade headers) and straight to the Node.js echo server
//! behind it (`scripts/ws-echo.js`), alternated round by round, then compared; the `--json`
//! file holds every round, valid against `docs/schema/vs.schema.json`.

mod common;

use std::time::Duration;

use common::nginx::Nginx;
use common::schema::{assert_valid, Kind};
use common::wsecho::WsEcho;
use common::{json_u64, read_json, run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(90);

#[test]
fn nginx_proxy_against_the_backend_alternates_rounds_and_compares() {
    let server = WsEcho::start(&[]);
    let nginx = Nginx::builder().ws_proxy("ws", server.port).start();
    let proxied = format!("ws://127.0.0.1:{}/server/", nginx.port("ws"));
    let direct = format!("ws://127.0.0.1:{}/server/", server.port);
    let dir = TempDir::new("ws-vs");
    let json = dir.path().join("vs.json");
    let json_arg = json.display().to_string();
    let run = run_tsumo(
        &[
            "ws",
            "-t1",
            "-c2",
            "-d1s",
            "-R100",
            "--label",
            "nginx",
            &proxied,
            "--vs",
            &direct,
            "--vs-label",
            "direct",
            "--rounds",
            "2",
            "--json",
            &json_arg,
        ],
        LIMIT,
    );
    run.assert_success();
    // Rounds alternate the two sides, then the table compares them.
    let headings: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("== "))
        .collect();
    assert_eq!(
        headings,
        [
            "== nginx, round 1 of 2 ==",
            "== direct, round 1 of 2 ==",
            "== nginx, round 2 of 2 ==",
            "== direct, round 2 of 2 ==",
        ],
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Comparing 4 WebSocket runs"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Round trip p99"), "{}", run.stdout);
    let doc = read_json(&json);
    assert_eq!(doc["kind"], "vs", "{doc}");
    assert_eq!(doc["mode"], "ws", "{doc}");
    let runs = doc["runs"].as_array().expect("runs");
    let labels: Vec<&str> = runs.iter().filter_map(|r| r["label"].as_str()).collect();
    assert_eq!(labels, ["nginx", "direct", "nginx", "direct"], "{doc}");
    // Through the proxy and straight: every message due sent, every echo matched.
    for (r, url) in runs.iter().zip([&proxied, &direct, &proxied, &direct]) {
        assert_eq!(r["plan"]["url"], url.as_str(), "{r}");
        assert_eq!(json_u64(r, "messages.sent"), 100, "{r}");
        assert_eq!(json_u64(r, "messages.answered"), 100, "{r}");
        assert_eq!(json_u64(r, "connections.opened"), 2, "{r}");
    }
    // nginx upgraded the proxied side's connections only: 2 in each of its 2 rounds.
    let upgrades = nginx.access_log_wait(4);
    let upgraded = upgrades.iter().filter(|l| l.status == 101).count();
    assert_eq!(upgraded, 4, "{upgrades:?}");
    assert_valid(Kind::Vs, &[&json]);
}

#[test]
fn a_vs_url_that_is_not_websocket_is_refused_in_one_line() {
    let refused = |args: &[&str]| {
        let run = run_tsumo(args, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        run.stderr
    };
    let http = refused(&["ws", "ws://127.0.0.1:9/", "--vs", "http://127.0.0.1:9/"]);
    assert!(
        http.contains("'http://127.0.0.1:9/': scheme must be ws or wss for --vs"),
        "{http}"
    );
    let rounds = refused(&["ws", "--rounds", "2", "ws://127.0.0.1:9/"]);
    assert!(rounds.contains("--rounds needs --vs URL"), "{rounds}");
}
