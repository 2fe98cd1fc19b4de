//! The nginx-vs-backend features on a run's command line, against real nginx: `--server-pid`
//! (the server's CPU and memory in the report and JSON), `--vs … --rounds` (both targets in
//! alternating rounds, then the comparison table) and `--hgrm` (the plotter's file).

mod common;

use std::time::Duration;

use common::nginx::Nginx;
use common::{json_f64, json_u64, run_tsumo, TempDir};

/// A proxy block in front of a backend nginx: the pair every test here compares.
fn backend_and_proxy() -> (Nginx, Nginx) {
    let backend = Nginx::start();
    let proxy = Nginx::builder()
        .server(
            "proxy",
            &format!(
                "location / {{ proxy_pass http://127.0.0.1:{}; proxy_http_version 1.1; \
                 proxy_set_header Connection \"\"; }}",
                backend.http_port()
            ),
        )
        .start();
    (backend, proxy)
}

#[test]
fn server_pid_reports_the_nginx_workers_cpu_and_memory() {
    let nginx = Nginx::start();
    let pid = nginx.master_pid().to_string();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &[
            "-t1",
            "-c8",
            "-d3s",
            "--server-pid",
            &pid,
            "--json",
            "-",
            &url,
        ],
        Duration::from_secs(20),
    );
    run.assert_success();
    let doc = run.json();
    // Closed loop: the worker did some work (how much is this shared machine's to say).
    let cpu = json_f64(&doc, "server.cpu_percent_mean");
    assert!(cpu > 0.0, "server CPU {cpu}%: {doc:#}");
    assert!(json_f64(&doc, "server.cpu_percent_peak") >= cpu);
    let rss = json_f64(&doc, "server.rss_bytes_peak");
    assert!((1e6..1e9).contains(&rss), "server RSS {rss}: {doc:#}");
    assert!(json_f64(&doc, "server.samples") >= 3.0, "{doc:#}");

    // The text report has the line too.
    let run = run_tsumo(
        &["-t1", "-c2", "-d2s", "-R200", "--server-pid", &pid, &url],
        Duration::from_secs(20),
    );
    run.assert_success();
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("Server CPU: ") && l.contains(&format!("PID {pid}"))),
        "{}",
        run.stdout
    );
}

#[test]
fn a_missing_server_pid_stops_before_any_traffic() {
    let nginx = Nginx::start();
    let run = run_tsumo(
        &["-d1s", "--server-pid", "999999999", &nginx.http_url("/")],
        Duration::from_secs(20),
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(run.stdout.is_empty());
    assert_eq!(
        run.stderr.trim(),
        "tsumo: --server-pid 999999999: no such process"
    );
}

#[test]
fn vs_alternates_rounds_and_ends_with_the_comparison() {
    let (backend, proxy) = backend_and_proxy();
    let direct = backend.http_url("/index.html");
    let through = format!("http://127.0.0.1:{}/index.html", proxy.port("proxy"));
    let dir = TempDir::new("ab");
    let json = dir.path().join("ab.json");
    let run = run_tsumo(
        &[
            "-t1",
            "-c4",
            "-d2s",
            "-R400",
            "--label",
            "direct",
            "--vs",
            &through,
            "--vs-label",
            "nginx",
            "--rounds",
            "2",
            "--json",
            json.to_str().unwrap(),
            &direct,
        ],
        Duration::from_secs(60),
    );
    run.assert_success();
    // Rounds alternate: direct, nginx, direct, nginx.
    let headers: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("== "))
        .collect();
    assert_eq!(
        headers,
        [
            "== direct, round 1 of 2 ==",
            "== nginx, round 1 of 2 ==",
            "== direct, round 2 of 2 ==",
            "== nginx, round 2 of 2 =="
        ],
        "{}",
        run.stdout
    );
    // Then the comparison, with a ratio column and the noise sentences.
    let table = run
        .stdout
        .split("Comparing 4 HTTP runs")
        .nth(1)
        .unwrap_or_else(|| panic!("no comparison:\n{}", run.stdout));
    assert!(table.contains("nginx/direct"), "{table}");
    let rate = table
        .lines()
        .find(|l| l.trim_start().starts_with("Requests/sec"))
        .unwrap_or_else(|| panic!("{table}"));
    // A ratio, whatever the two targets reached on this shared machine.
    assert!(rate.trim_end().ends_with('×'), "{rate}");
    let sentence = table
        .lines()
        .find(|l| l.starts_with("rate: nginx is "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        sentence.contains("× direct; ") && sentence.contains(" run-to-run noise"),
        "{sentence}"
    );
    // The JSON holds every run, labelled.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let labels: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["direct", "nginx", "direct", "nginx"]);
    // Both targets really were loaded: the proxy passed its share on to the backend, which
    // also took the direct rounds.
    let (proxied, served) = (proxy.access_log().len(), backend.access_log().len());
    assert!(
        proxied > 0 && served > proxied,
        "proxy {proxied} lines, backend {served} lines"
    );
}

#[test]
fn hgrm_file_has_the_plotters_layout() {
    let nginx = Nginx::start();
    let dir = TempDir::new("hgrm");
    let path = dir.path().join("run.hgrm");
    let json = dir.path().join("run.json");
    let run = run_tsumo(
        &[
            "-t1",
            "-c2",
            "-d2s",
            "-R500",
            "--quiet",
            "--hgrm",
            path.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            &nginx.http_url("/index.html"),
        ],
        Duration::from_secs(20),
    );
    run.assert_success();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("JSON written")).unwrap();
    let text = std::fs::read_to_string(&path).expect("hgrm written");
    let mut lines = text.lines();
    assert_eq!(
        lines
            .next()
            .map(str::split_whitespace)
            .map(Iterator::collect::<Vec<_>>),
        Some(vec![
            "Value",
            "Percentile",
            "TotalCount",
            "1/(1-Percentile)"
        ])
    );
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.split_whitespace().count() == 4 && !l.contains("Value"))
        .collect();
    assert!(rows.len() > 20, "{text}");
    let last_count: u64 = rows
        .last()
        .and_then(|r| r.split_whitespace().nth(2))
        .and_then(|c| c.parse().ok())
        .unwrap();
    // The last row counts every sample of the run's latency histogram.
    assert_eq!(last_count, json_u64(&doc, "latency.count"), "{text}");
    assert!(text.contains("#[Mean    ="), "{text}");
    assert!(text.contains("#[Buckets ="), "{text}");
}
