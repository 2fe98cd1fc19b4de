//! The nginx-vs-backend features on a run's command line, against real nginx: `--server-pid`
//! (the server's CPU and memory in the report and JSON), `--vs … --rounds` (both targets in
//! alternating rounds, then the comparison table) and `--hgrm` (the plotter's file).

mod common;

use std::time::Duration;

use common::nginx::Nginx;
use common::{json_f64, json_u64, run_tsumo, wait_for, Run, Signalled, TempDir};

/// The page on the backend directly, and through the proxy.
fn index_urls(backend: &Nginx, proxy: &Nginx) -> (String, String) {
    (
        backend.http_url("/index.html"),
        format!("http://127.0.0.1:{}/index.html", proxy.port("proxy")),
    )
}

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
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(run.stdout.is_empty());
    assert_eq!(
        run.stderr.trim(),
        "tsumo: --server-pid 999999999: no such process"
    );
}

#[test]
fn vs_alternates_rounds_and_ends_with_the_comparison() {
    let (backend, proxy) = backend_and_proxy();
    let (direct, through) = index_urls(&backend, &proxy);
    let dir = TempDir::new("ab");
    let json = dir.path().join("ab.json");
    // The dashboard follows both sides, and ends on the comparison's page.
    let port = common::free_port();
    let at = format!("127.0.0.1:{port}");
    let watch = common::prometheus::Watch::start(port);
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
            "--dashboard",
            &at,
            "--dashboard-linger",
            "1s",
            "--json",
            json.to_str().unwrap(),
            &direct,
        ],
        Duration::from_secs(60),
    );
    let common::prometheus::Watched { metrics, page, .. } = watch.stop();
    run.assert_success();
    for label in ["direct", "nginx"] {
        let series = format!("label=\"{label}\"");
        assert!(
            metrics
                .lines()
                .any(|l| l.starts_with("tsumo_requests_total{") && l.contains(&series)),
            "{label}: {metrics}"
        );
    }
    assert!(page.contains("HTTP run comparison"), "{page}");
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
    // One sentence first, on every key measure; `tsumo compare` of the same runs says the same.
    let verdict = |text: &str| {
        let line = text
            .lines()
            .find(|l| l.contains("verdict: ") || l.starts_with("Verdict: "));
        line.unwrap_or_else(|| panic!("no verdict:\n{text}"))
            .to_string()
    };
    let said = verdict(table);
    assert!(
        said.starts_with("Verdict: nginx against direct at the same load: "),
        "{said}"
    );
    let again = run_tsumo(
        &["compare", json.to_str().unwrap()],
        Duration::from_secs(10),
    );
    again.assert_success();
    assert_eq!(verdict(&again.stdout), said);
    // The JSON is a tsumo file of its own kind, and holds every run, labelled.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        [&doc["tool"], &doc["kind"], &doc["mode"], &doc["ended_by"]],
        ["tsumo", "vs", "http", "rounds"],
        "{doc:#}"
    );
    assert_eq!(doc["schema"], 1);
    common::schema::assert_valid(common::schema::Kind::Vs, &[&json]);
    // The comparison's own command line, as given, after the binary's path.
    let command: Vec<&str> = doc["command"]
        .as_array()
        .unwrap_or_else(|| panic!("no command: {doc:#}"))
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    assert_eq!(command[1..5], ["-t1", "-c4", "-d2s", "-R400"], "{doc:#}");
    assert_eq!(command.last(), Some(&direct.as_str()), "{doc:#}");
    assert_eq!(doc["rounds"], 2);
    assert_eq!(doc["left_out"], serde_json::json!([]));
    let labels: Vec<&str> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["direct", "nginx", "direct", "nginx"]);
    // compare and plot take it as its runs; merge refuses it, saying why, in one line.
    let json_arg = json.to_str().unwrap();
    let compare = run_tsumo(&["compare", json_arg], Duration::from_secs(20));
    compare.assert_success();
    assert!(
        compare.stdout.starts_with("Comparing 4 HTTP runs")
            && compare.stdout.contains(&format!(
                "  direct  ({json_arg}: direct round 1, {json_arg}: direct round 2)"
            )),
        "{}",
        compare.stdout
    );
    let svg = dir.path().join("ab.svg");
    let plot = run_tsumo(
        &["plot", json_arg, "-o", svg.to_str().unwrap()],
        Duration::from_secs(20),
    );
    plot.assert_success();
    let svg = std::fs::read_to_string(&svg).expect("SVG written");
    assert_eq!(svg.matches("<polyline").count(), 4);
    let merged = dir.path().join("merged.json");
    let merge = run_tsumo(
        &["merge", json_arg, "-o", merged.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_eq!(merge.status.code(), Some(2), "{merge:?}");
    assert_eq!(merge.stderr.lines().count(), 1, "{}", merge.stderr);
    assert!(
        merge.stderr.contains("A/B comparison (--vs)")
            && merge.stderr.contains("not parts of one run"),
        "{}",
        merge.stderr
    );
    assert!(!merged.exists());
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
    let doc = common::read_json(&json);
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

/// Ctrl-C (or SIGTERM) in the second target's first round of `--rounds 3` ends the whole
/// comparison: no later round runs, the round it cut short is left out of the comparison, and
/// both the text and the JSON say which run and why.
#[test]
fn a_signal_ends_the_whole_comparison_and_leaves_the_cut_run_out() {
    let (backend, proxy) = backend_and_proxy();
    let (direct, through) = index_urls(&backend, &proxy);
    let dir = TempDir::new("ab-signal");
    let json = dir.path().join("ab.json");
    let mut tsumo = Signalled::spawn(&[
        "-t1",
        "-c2",
        "-d3s",
        "-R100",
        "--label",
        "direct",
        "--vs",
        &through,
        "--vs-label",
        "nginx",
        "--rounds",
        "3",
        "--json",
        json.to_str().unwrap(),
        &direct,
    ]);
    // The proxy's first request: the second run (nginx, round 1) has started.
    wait_for(
        "the nginx round never started",
        Duration::from_secs(30),
        || !proxy.access_log().is_empty(),
    );
    std::thread::sleep(Duration::from_millis(300));
    tsumo.kill(libc::SIGINT, None);
    let Run {
        status,
        stdout,
        stderr,
        ..
    } = tsumo.finish(Duration::from_secs(30));
    assert!(status.success(), "{status:?}\n{stdout}\n{stderr}");
    let headers: Vec<&str> = stdout.lines().filter(|l| l.starts_with("== ")).collect();
    assert_eq!(headers.len(), 2, "{stdout}");
    assert_eq!(headers[0], "== direct, round 1 of 3 ==");
    assert!(
        headers[1].starts_with("== nginx, round 1 of 3 (cut short by SIGINT after "),
        "{stdout}"
    );
    assert!(
        stdout.contains("Stopped by SIGINT in nginx round 1 of 3: no later round was run."),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n  nginx round 1: cut short by SIGINT after ")
            && stdout.contains("; left out of the comparison\n"),
        "{stdout}"
    );
    assert!(stdout.contains("Comparing 1 HTTP run\n"), "{stdout}");
    let doc = common::read_json(&json);
    assert_eq!(doc["ended_by"], "SIGINT", "{doc:#}");
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(2));
    assert_eq!(doc["runs"][1]["ended_by"], "SIGINT");
    assert_eq!(doc["left_out"].as_array().map(Vec::len), Some(1), "{doc:#}");
    assert_eq!(doc["left_out"][0]["run"], 1);
    assert_eq!(doc["left_out"][0]["label"], "nginx");
    assert_eq!(doc["left_out"][0]["round"], 1);
    assert!(
        doc["left_out"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("cut short by SIGINT after ")),
        "{doc:#}"
    );
}

/// tsumo's own CPU time is each run's, not the process's so far: the runs' `tsumo.cpu_s` add
/// up to no more than the whole process used (as the kernel counts it for its parent).
#[test]
fn each_run_counts_its_own_cpu() {
    let (backend, proxy) = backend_and_proxy();
    let (direct, through) = index_urls(&backend, &proxy);
    let dir = TempDir::new("ab-cpu");
    let json = dir.path().join("ab.json");
    #[expect(
        clippy::zombie_processes,
        reason = "reaped by wait4 below, which gives its CPU time too"
    )]
    let child = common::tsumo()
        .args([
            "-t1",
            "-c2",
            "-d1s",
            "-R200",
            "--vs",
            &through,
            "--rounds",
            "2",
            "--quiet",
            "--json",
            json.to_str().unwrap(),
            &direct,
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn tsumo");
    let mut status = 0;
    // SAFETY: wait4(2) on our own child, into zeroed out-parameters.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status}"
    );
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let process_cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    let doc = common::read_json(&json);
    let runs = doc["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 4);
    let per_run: Vec<f64> = runs.iter().map(|r| json_f64(r, "tsumo.cpu_s")).collect();
    let sum: f64 = per_run.iter().sum();
    assert!(
        sum <= process_cpu + 0.001,
        "the runs' CPU {per_run:?} adds up to {sum:.3}s, more than the process used ({process_cpu:.3}s)"
    );
}

/// The same in `tsumo mahjong --vs`: SIGINT mid-game in the first round ends the comparison
/// once its players have logged out; the second target's round never starts.
#[test]
fn a_signal_ends_a_mahjong_comparison() {
    let server = common::majiang::Majiang::start();
    let url = server.url();
    let dir = TempDir::new("ab-mahjong-signal");
    let json = dir.path().join("ab.json");
    let mut tsumo = Signalled::spawn(&[
        "mahjong",
        "-c4",
        "-t1",
        "--think",
        "0",
        "--ramp",
        "0",
        "-d",
        "5m",
        "--label",
        "a",
        "--vs",
        &url,
        "--vs-label",
        "b",
        "--rounds",
        "2",
        "--json",
        json.to_str().unwrap(),
        &url,
    ]);
    assert_eq!(
        server.wait_session_files(4, Duration::from_secs(30)),
        4,
        "players did not log in"
    );
    std::thread::sleep(Duration::from_secs(1));
    tsumo.kill(libc::SIGINT, None);
    // Round b would play its game to the end (minutes): ending well before is the point.
    let Run {
        status,
        stdout,
        stderr,
        ..
    } = tsumo.finish(Duration::from_secs(40));
    assert!(status.success(), "{status:?}\n{stdout}\n{stderr}");
    let headers: Vec<&str> = stdout.lines().filter(|l| l.starts_with("== ")).collect();
    assert_eq!(headers.len(), 1, "{stdout}");
    assert!(
        headers[0].starts_with("== a, round 1 of 2 (cut short by SIGINT after "),
        "{stdout}"
    );
    assert!(
        stdout.contains("Stopped by SIGINT in a round 1 of 2: no later round was run."),
        "{stdout}"
    );
    assert!(
        stdout.contains("Nothing to compare: every run was left out"),
        "{stdout}"
    );
    let doc = common::read_json(&json);
    assert_eq!(doc["mode"], "mahjong", "{doc:#}");
    assert_eq!(doc["ended_by"], "SIGINT");
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(1));
    assert_eq!(doc["left_out"][0]["run"], 0);
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// A signal while the second target's round prepares (its script loading, after the first
/// round ended and before its engine started) ends the comparison before that round sends
/// anything: no request reaches the proxy. (Before, that round ran its whole `-d` first.)
#[test]
fn a_signal_while_a_round_prepares_stops_it_before_it_sends_anything() {
    let (backend, proxy) = backend_and_proxy();
    let (direct, through) = index_urls(&backend, &proxy);
    let dir = TempDir::new("ab-signal-prep");
    let json = dir.path().join("ab.json");
    let loads = dir.path().join("loads");
    // Each load of the script (the main state and one per thread, before a round's engine
    // starts) says so, then takes a second: the first load after the first round sent is the
    // second round's preparation.
    let script = dir.path().join("slow_load.lua");
    std::fs::write(
        &script,
        format!(
            "local f = io.open('{}', 'a') f:write('loaded\\n') f:close()\n\
             os.execute('sleep 1')\n",
            loads.display()
        ),
    )
    .unwrap();
    let mut tsumo = Signalled::spawn(&[
        "-t1",
        "-c2",
        "-d1s",
        "-R100",
        "-s",
        script.to_str().unwrap(),
        "--script-timeout",
        "10s",
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
    ]);
    let loaded = || {
        std::fs::read_to_string(&loads)
            .map(|s| s.lines().count())
            .unwrap_or(0)
    };
    wait_for(
        "the first round never sent",
        Duration::from_secs(60),
        || !backend.access_log().is_empty(),
    );
    let first_round = loaded();
    wait_for(
        "the second round never began to prepare",
        Duration::from_secs(60),
        || loaded() > first_round,
    );
    // SIGTERM: system(3), under os.execute, ignores SIGINT while its child runs.
    tsumo.kill(libc::SIGTERM, None);
    let Run {
        status,
        stdout,
        stderr,
        ..
    } = tsumo.finish(Duration::from_secs(30));
    assert!(status.success(), "{status:?}\n{stdout}\n{stderr}");
    let headers: Vec<&str> = stdout.lines().filter(|l| l.starts_with("== ")).collect();
    assert_eq!(headers, ["== direct, round 1 of 2 =="], "{stdout}");
    assert!(
        stdout.contains("Stopped by SIGTERM after direct round 1 of 2: no later round was run."),
        "{stdout}\n{stderr}"
    );
    assert!(proxy.access_log().is_empty(), "{:?}", proxy.access_log());
    let doc = common::read_json(&json);
    assert_eq!(doc["ended_by"], "SIGTERM", "{doc:#}");
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(1), "{doc:#}");
}
