//! `tsumo ws` through nginx's WebSocket proxy (`proxy_http_version 1.1`, the Upgrade and
//! Connection headers passed on) in front of the Node.js echo server, plain (`ws://`) and over
//! TLS (`wss://`, trusted by `--cacert` as an HTTPS run is): exact counts, every upgrade
//! nginx's.

mod common;

use std::time::Duration;

use common::nginx::Nginx;
use common::wsecho::{assert_exact, WsEcho};
use common::{run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(60);

/// `tsumo ws ARGS --json FILE URL`, which must succeed: its saved result.
fn ws_run(args: &[&str], url: &str, dir: &TempDir) -> serde_json::Value {
    let json = dir.path().join("run.json");
    let json_arg = json.display().to_string();
    let mut all = vec!["ws"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", &json_arg, url]);
    let run = run_tsumo(&all, LIMIT);
    run.assert_success();
    assert!(run.stdout.contains("Messages/sec:"), "{}", run.stdout);
    common::read_json(&json)
}

/// The upgrades nginx answered 101, from its access log (written as each connection ends).
fn upgrades(nginx: &Nginx) -> usize {
    let log = std::fs::read_to_string(nginx.dir().join("access.log")).unwrap_or_default();
    log.lines()
        .filter(|line| line.starts_with("\"GET /server/ HTTP/1.1\" 101 "))
        .count()
}

fn through(nginx: &Nginx, connections: usize) {
    common::wait_for("nginx logs every upgrade", Duration::from_secs(10), || {
        upgrades(nginx) == connections
    });
}

#[test]
fn every_message_is_echoed_through_nginx() {
    let echo = WsEcho::start(&[]);
    let nginx = Nginx::builder().ws_proxy("ws", echo.port).start();
    let dir = TempDir::new("ws-nginx");
    let url = format!("ws://127.0.0.1:{}/server/", nginx.port("ws"));
    let doc = ws_run(&["-t1", "-c4", "-d3s", "-R200"], &url, &dir);
    assert_exact(&doc, 200, 3, 4);
    through(&nginx, 4);
}

/// `wss://` to nginx, which proxies to the plain echo server: `--cacert` trusts nginx's
/// certificate as an HTTPS run's does; without it the run stops before any traffic.
#[test]
fn every_message_is_echoed_through_nginx_over_tls() {
    let echo = WsEcho::start(&[]);
    let nginx = Nginx::builder().wss_proxy("wss", echo.port).start();
    let dir = TempDir::new("wss-nginx");
    let url = format!("wss://127.0.0.1:{}/server/", nginx.port("wss"));
    let cacert = nginx.cert_path().display().to_string();
    let doc = ws_run(
        &["-t1", "-c4", "-d3s", "-R200", "--cacert", &cacert],
        &url,
        &dir,
    );
    assert_exact(&doc, 200, 3, 4);
    through(&nginx, 4);
    let refused = run_tsumo(&["ws", "-t1", "-c2", "-d1s", &url], LIMIT);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert_eq!(refused.stderr.lines().count(), 1, "{}", refused.stderr);
    assert!(refused.stderr.contains("--cacert"), "{}", refused.stderr);
}
