//! `--stages` (issue 45): the rate over time. Bad profiles are refused in one line before any
//! traffic; against a real nginx, a run sends exactly the integral of its profile, interval by
//! interval, over several connections and threads. Each stage's own results: its requests the
//! integral and what nginx logged in it (HTTP/1.1, h2c, two shards merged), a stall in a ramp
//! in that stage only and its objective broken there, Ctrl-C and a dead server named by stage.

mod common;

use std::time::Duration;

use common::nginx::Nginx;
use common::schema::Kind;
use common::{json_errors_total, json_f64, json_u64, run_tsumo};

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn bad_profiles_and_clashing_options_exit_2_in_one_line_before_any_traffic() {
    // Nothing listens on port 1: a run that started would fail to connect, exit 1.
    let url = "http://127.0.0.1:1/";
    let cases: &[&[&str]] = &[
        &["--stages", "30s"],
        &["--stages", "30s:"],
        &["--stages", ":100"],
        &["--stages", "30s:100-"],
        &["--stages", "30s:-100"],
        &["--stages", "30s:100--5"],
        &["--stages", "30s:many"],
        &["--stages", "0s:100,0s:100-200"],
        &["--stages", "10s:0,10s:0-0"],
        &["--stages", "10s:100,"],
        &["--stages", "10s:100", "-R", "100"],
        &["--stages", "10s:100", "-d", "10s"],
    ];
    for args in cases {
        let mut all = args.to_vec();
        all.push(url);
        let run = run_tsumo(&all, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stderr.trim().lines().count(), 1, "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
    }
    // A good profile gets past the command line: it tries to connect, and fails (exit 1).
    let run = run_tsumo(&["--stages", "1s:10,0s:10-20,1s:20-0", url], LIMIT);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let run = run_tsumo(
        &["capacity", "--stages", "1s:10", "--to", "100", url],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert!(run.stderr.contains("--from and --to"), "{run:?}");
}

/// Runs `profile` (whose highest rate is `peak` requests/s) against nginx with `args` and
/// checks the counts: every request of the integral sent and answered, none more, and each
/// interval's sends the integral over it, to the sends tsumo made late across an interval's
/// end: one per connection and two of rounding, and at most what `peak` sends in the run's
/// largest send lateness (none on time; a stall of a busy machine's, measured). Returns the
/// JSON.
fn follows(profile: &str, args: &[&str], peak: u64, per_second: &[u64]) -> serde_json::Value {
    let total: u64 = per_second.iter().sum();
    // On a busy machine a request due at the very end can still be in flight when the profile
    // ends, or fall due on a busy connection (never sent): the truth, not what this test counts,
    // so it tries again (as tests/http_nginx.rs does at one rate).
    let (nginx, run, json) = common::up_to_three_tries(
        || {
            let nginx = Nginx::start();
            let url = nginx.http_url("/index.html");
            let mut all = vec!["--stages", profile, "--json", "-"];
            all.extend_from_slice(args);
            all.push(&url);
            let run = run_tsumo(&all, LIMIT);
            let json = run.json();
            (nginx, run, json)
        },
        |(_, _, json)| {
            let requests = json_u64(json, "counters.requests");
            (requests != total).then(|| format!("{requests} of {total} requests answered"))
        },
    );
    run.assert_success();
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    assert_eq!(json_u64(&json, "counters.requests"), total, "{json:#}");
    let intervals = json["intervals"].as_array().expect("intervals");
    let sent: Vec<u64> = intervals.iter().map(|i| json_u64(i, "sent")).collect();
    assert_eq!(sent.iter().sum::<u64>(), total, "{sent:?}");
    let connections = json_u64(&json, "plan.connections");
    let late_us = json_u64(&json, "send_lateness.max");
    let carried_late = (peak * late_us).div_ceil(1_000_000);
    for (k, (&sent, &due)) in sent.iter().zip(per_second).enumerate() {
        assert!(
            sent.abs_diff(due) <= connections + 2 + carried_late,
            "interval {k}: {sent} sent, {due} due (sends up to {late_us}us late): {sent_all:?}",
            sent_all = intervals
                .iter()
                .map(|i| json_u64(i, "sent"))
                .collect::<Vec<_>>()
        );
    }
    assert_eq!(nginx.access_log_wait(total as usize).len() as u64, total);
    json
}

#[test]
fn a_ramp_a_hold_and_a_jump_send_exactly_the_integral_over_threads() {
    // 0 → 400 over 1 s (200), 400 for 1 s, a jump to 800, 800 for 1 s: 1,400 requests.
    let json = follows(
        "1s:0-400,1s:400,0s:400-800,1s:800",
        &["-t2", "-c4"],
        800,
        &[200, 400, 800],
    );
    // The run lasts the sum; the one rate reported is the mean (1,400 over 3 s).
    assert_eq!(json_u64(&json, "plan.rate"), 467, "{json:#}");
}

#[test]
fn a_ramp_down_to_zero_on_one_connection() {
    // 300 for 1 s, then 300 → 0 over 2 s (300): 600 requests.
    follows("1s:300,2s:300-0", &["-t1", "-c1"], 300, &[300, 225, 75]);
}

/// A run's JSON `stages`: `(index, target, requests)` each.
fn stage_counts(json: &serde_json::Value) -> Vec<(u64, u64, u64)> {
    json["stages"]
        .as_array()
        .unwrap_or_else(|| panic!("no stages: {json:#}"))
        .iter()
        .map(|s| {
            (
                json_u64(s, "index"),
                json_u64(s, "target"),
                json_u64(s, "requests"),
            )
        })
        .collect()
}

/// Runs `profile` against `url` with `args`, the JSON to a file (the report on stdout).
fn staged(profile: &str, args: &[&str], url: &str) -> (common::Run, serde_json::Value) {
    let dir = common::TempDir::new("stages");
    let path = dir.path().join("run.json");
    let path_text = path.display().to_string();
    let mut all = vec!["--stages", profile, "--json", &path_text];
    all.extend_from_slice(args);
    all.push(url);
    let run = run_tsumo(&all, LIMIT);
    // Every run's stages in the layout docs/schema/run.schema.json says.
    common::schema::assert_valid(Kind::Run, &[path.as_path()]);
    let json = common::read_json(&path);
    (run, json)
}

/// The requests nginx logged in each stage (by when it logged them, from the run's start),
/// against each stage's requests in the JSON: equal to a request per connection per stage
/// boundary, and those answered across a boundary (up to the largest latency, at the peak).
fn nginx_agrees_per_stage(nginx: &Nginx, json: &serde_json::Value, ends_s: &[f64], peak: u64) {
    let total = json_u64(json, "counters.requests");
    let log = nginx.access_log_wait(total as usize);
    assert_eq!(log.len() as u64, total);
    let start_ms = json_u64(json, "start.actual_unix_ns") / 1_000_000;
    let mut logged = vec![0u64; ends_s.len()];
    for line in &log {
        let at_s = line.logged_ms.saturating_sub(start_ms) as f64 / 1000.0;
        let stage = ends_s
            .iter()
            .position(|&end| at_s < end)
            .unwrap_or(ends_s.len() - 1);
        logged[stage] += 1;
    }
    let connections = json_u64(json, "plan.connections");
    // Logged as answered (to the ms, truncated): up to the largest latency after it was due.
    let across_us = json_u64(json, "latency.max") + 1000;
    let slack = connections + 2 + (peak * across_us).div_ceil(1_000_000);
    let counts = stage_counts(json);
    for (stage, (&nginx_saw, &(index, target, requests))) in logged.iter().zip(&counts).enumerate()
    {
        assert_eq!(requests, target, "stage {index}: {counts:?}");
        let boundaries = if stage == 0 { 1 } else { 2 };
        assert!(
            nginx_saw.abs_diff(requests) <= slack * boundaries,
            "stage {index}: nginx logged {nginx_saw}, tsumo counted {requests} (slack \
             {slack}): {logged:?} {counts:?}"
        );
    }
}

/// Each stage's own requests are its integral exactly (a jump is left out, the others keep the
/// number written), nginx logged as many in each, and the report has a line per stage.
#[test]
fn each_stage_counts_its_integral_and_nginx_logged_as_many() {
    let nginx = Nginx::start();
    let (run, json) = staged(
        "1s:0-400,1s:400,0s:400-800,1s:800",
        &["-t2", "-c4"],
        &nginx.http_url("/index.html"),
    );
    run.assert_success();
    assert_eq!(
        stage_counts(&json),
        [(1, 200, 200), (2, 400, 400), (4, 800, 800)],
        "{json:#}"
    );
    let stage = &json["stages"][2];
    assert_eq!(
        (stage["from"].as_u64(), stage["to"].as_u64()),
        (Some(800), Some(800))
    );
    assert_eq!(json_f64(stage, "start_s"), 2.0);
    assert!(stage["histograms"]["latency"]
        .as_str()
        .is_some_and(|h| h.starts_with("HISTF")));
    assert_eq!(json_u64(stage, "latency.count"), 800);
    assert!(json.get("stopped_in_stage").is_none(), "{json:#}");
    nginx_agrees_per_stage(&nginx, &json, &[1.0, 2.0, 3.0], 800);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("Stages "))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        lines[at + 1].starts_with("  stage 1  0s→1s "),
        "{}",
        run.stdout
    );
    assert!(
        lines[at + 2].starts_with("  stage 2  1s→2s "),
        "{}",
        run.stdout
    );
    assert!(
        lines[at + 3].starts_with("  stage 4  2s→3s "),
        "{}",
        run.stdout
    );
    assert!(lines[at - 1].starts_with("Transfer/sec:"), "{}", run.stdout);
    assert!(lines[at..at + 4].iter().all(|l| l.chars().count() <= 100));
}

/// The same over HTTP/2 (h2c, prior knowledge, `-m4`).
#[test]
fn each_stage_counts_its_integral_over_http2() {
    let nginx = Nginx::builder()
        .h2_server("h2c", "root @ROOT@/www;", false)
        .start();
    let url = format!("http://127.0.0.1:{}/index.html", nginx.port("h2c"));
    let (run, json) = staged(
        "1s:100-300,1s:300-100",
        &["--http2", "-m4", "-t1", "-c2"],
        &url,
    );
    run.assert_success();
    assert_eq!(
        stage_counts(&json),
        [(1, 200, 200), (2, 200, 200)],
        "{json:#}"
    );
    nginx_agrees_per_stage(&nginx, &json, &[1.0, 2.0], 300);
    assert!(nginx.access_log().iter().all(|l| l.protocol == "HTTP/2.0"));
}

/// Two shards merged have one process's stages: each stage's target and requests its
/// integral, and the merged histograms hold every response.
#[test]
fn two_shards_merged_count_each_stage_as_one_process() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = common::TempDir::new("stage-shards");
    let files: Vec<String> = (0..2)
        .map(|i| dir.path().join(format!("{i}.json")).display().to_string())
        .collect();
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let (url, file) = (url.clone(), files[i].clone());
            std::thread::spawn(move || {
                let shard = format!("{}/2", i + 1);
                run_tsumo(
                    &[
                        "--stages",
                        "1s:0-400,1s:400-200",
                        "-t1",
                        "-c4",
                        "--shard",
                        &shard,
                        "--run-id",
                        "stages",
                        "--json",
                        &file,
                        &url,
                    ],
                    LIMIT,
                )
            })
        })
        .collect();
    let mut parts = Vec::new();
    for (handle, file) in handles.into_iter().zip(&files) {
        handle.join().expect("shard").assert_success();
        parts.push(stage_counts(&common::read_json(std::path::Path::new(file))));
    }
    // Each shard has its connections' layers (of the whole run's 4, 100/s each): shard 1 the
    // connections 0 and 2, the lower layers, shard 2 the others. Each layer's requests are its
    // integral past its phase: 88 + 37 of the ramp's 200, 63 + 12 the rest.
    assert_eq!(parts[0], [(1, 125, 125), (2, 175, 175)]);
    assert_eq!(parts[1], [(1, 75, 75), (2, 125, 125)]);
    let merged = dir.path().join("merged.json");
    let merged_text = merged.display().to_string();
    let run = run_tsumo(&["merge", &files[0], &files[1], "-o", &merged_text], LIMIT);
    run.assert_success();
    common::schema::assert_valid(Kind::Run, &[merged.as_path()]);
    let json = common::read_json(&merged);
    assert_eq!(
        stage_counts(&json),
        [(1, 200, 200), (2, 300, 300)],
        "{json:#}"
    );
    assert_eq!(json_u64(&json["stages"][1], "latency.count"), 300);
    assert!(run.stdout.contains("\n  stage 2  1s→2s "), "{}", run.stdout);
    assert_eq!(nginx.access_log_wait(500).len(), 500);
}

/// A server that stalls 320 ms once, 1.3 s after its first request, inside the ramp of stage 2
/// (1 s → 2 s): that stage's corrected latency and the server's share of it hold the stall,
/// the other stages' p99 stay small, and `--slo` breaks in stage 2, named so (exit 99).
#[test]
fn a_stall_during_a_ramp_is_in_that_stage_and_its_objective_breaks_there() {
    use std::sync::Mutex;
    use std::time::Instant;
    let first: Mutex<Option<Instant>> = Mutex::new(None);
    let addr = common::responder::start(move || {
        let now = Instant::now();
        let first = *first.lock().expect("lock").get_or_insert(now);
        let (from, to) = (
            first + Duration::from_millis(1300),
            first + Duration::from_millis(1620),
        );
        if now >= from && now < to {
            std::thread::sleep(to - now);
        }
    });
    let url = format!("http://{addr}/");
    let (run, json) = staged(
        "1s:200,1s:200-600,1s:200",
        &["-t1", "-c4", "--slo", "p99<100ms"],
        &url,
    );
    assert_eq!(run.status.code(), Some(99), "{run:?}");
    let stages = json["stages"].as_array().expect("stages");
    assert_eq!(stages.len(), 3, "{json:#}");
    assert!(json_u64(&stages[1], "latency.max") >= 300_000, "{json:#}");
    assert!(
        json_u64(&stages[1], "server_latency.max") >= 300_000,
        "{json:#}"
    );
    for other in [&stages[0], &stages[2]] {
        assert!(json_u64(other, "latency.p99") < 100_000, "{json:#}");
        assert_eq!(other["objectives"][0]["held"], true, "{json:#}");
    }
    assert_eq!(stages[1]["objectives"][0]["held"], false, "{json:#}");
    assert!(
        run.stderr
            .contains("p99<100ms broken in stage 2 (200→600 req/s): p99 "),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("  BROKEN  p99<100ms broken in stage 2 (200→600 req/s): p99 "),
        "{run:?}"
    );
}

/// Ctrl-C in stage 2: the report and the JSON name it, the stages after it are not listed,
/// and the stage cut short was due only what fell due before the signal.
#[test]
fn ctrl_c_names_the_stage_it_stopped_in() {
    let nginx = Nginx::start();
    let dir = common::TempDir::new("stages-sigint");
    let path = dir.path().join("run.json");
    let path_text = path.display().to_string();
    let url = nginx.http_url("/index.html");
    let mut tsumo = common::Signalled::spawn(&[
        "--stages",
        "1s:100,2s:100-300,2s:300",
        "-t1",
        "-c2",
        "--json",
        &path_text,
        &url,
    ]);
    std::thread::sleep(Duration::from_millis(2200));
    tsumo.kill(libc::SIGINT, None);
    let run = tsumo.finish(LIMIT);
    common::schema::assert_valid(Kind::Run, &[path.as_path()]);
    let json = common::read_json(&path);
    assert_eq!(json["ended_by"], "SIGINT", "{json:#}");
    assert_eq!(json_u64(&json, "stopped_in_stage"), 2, "{json:#}");
    let counts = stage_counts(&json);
    assert_eq!(counts.len(), 2, "{json:#}");
    let (_, target, requests) = counts[1];
    assert!(target > 0 && target < 400, "{json:#}");
    assert!(requests.abs_diff(target) <= 2, "{json:#}");
    assert!(json_f64(&json["stages"][1], "ran_s") < 2.0, "{json:#}");
    assert!(run.stdout.contains("\n  stopped in stage 2,"), "{run:?}");
}

/// The server dies 1.5 s into a 10 s profile, in stage 2: the run ends a second or two later,
/// not at the profile's end, with the stages so far written, the one it stopped in named, and
/// fails (exit 1) in one line naming it.
#[test]
fn a_server_that_dies_ends_the_run_in_the_stage_it_died_in() {
    use common::faulty::{Behavior, FaultyServer};
    let server = FaultyServer::start(Behavior::CloseEvery(1_000_000));
    let dir = common::TempDir::new("stages-dies");
    let path = dir.path().join("run.json");
    let path_text = path.display().to_string();
    let url = server.url("/");
    let started = std::time::Instant::now();
    let child = std::thread::spawn(move || {
        run_tsumo(
            &[
                "--stages",
                "1s:50,4s:50-100,5s:100",
                "-t1",
                "-c2",
                "--json",
                &path_text,
                &url,
            ],
            LIMIT,
        )
    });
    std::thread::sleep(Duration::from_millis(1500));
    drop(server);
    let run = child.join().expect("tsumo");
    let took = started.elapsed();
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(took < Duration::from_secs(6), "{took:?}: {run:?}");
    common::schema::assert_valid(Kind::Run, &[path.as_path()]);
    let json = common::read_json(&path);
    assert_eq!(json["ended_by"], "server gone", "{json:#}");
    assert_eq!(json_u64(&json, "stopped_in_stage"), 2, "{json:#}");
    assert!(json_f64(&json, "elapsed_s") < 5.0, "{json:#}");
    let counts = stage_counts(&json);
    assert_eq!(counts.len(), 2, "{json:#}");
    assert!(counts[0].2 >= 48, "{json:#}");
    assert!(counts[1].2 > 0, "{json:#}");
    let line = run.stderr.trim();
    assert_eq!(line.lines().count(), 1, "{run:?}");
    assert!(
        line.starts_with("tsumo: server gone in stage 2 (50→100 req/s): "),
        "{run:?}"
    );
    assert!(run.stdout.contains("\n  stopped in stage 2,"), "{run:?}");
    // The requests never sent once the server was gone are stage 2's, all the run's.
    let unsent = |v: &serde_json::Value| -> u64 {
        ["busy", "connect_failed", "connect_timeout", "late"]
            .iter()
            .map(|why| v[why].as_u64().unwrap_or(0))
            .sum()
    };
    let stages = json["stages"].as_array().expect("stages");
    let per_stage: Vec<u64> = stages.iter().map(|s| unsent(&s["unsent"])).collect();
    let whole = unsent(&json["counters"]["unsent"]);
    assert!(whole > 0, "{json:#}");
    assert_eq!(per_stage, [0, whole], "{json:#}");
    assert!(
        run.stdout.contains(&format!(
            "\n  stage 2: {whole} requests fell due but were never sent"
        )),
        "{run:?}"
    );
}
