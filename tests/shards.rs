//! One run split over several tsumo processes (`--shard I/N`, `--start-at`), merged back with
//! `tsumo merge` from one stream of JSON documents — what a Kubernetes Indexed Job's pods print
//! with `--json - --quiet` — against a real nginx on 127.0.0.1.

mod common;

use std::time::Duration;

use common::majiang::Majiang;
use common::nginx::Nginx;
use common::{json_f64, json_u64, run_tsumo, Run, TempDir};
use tsumo::sys::wallclock::{format_rfc3339, unix_now_ns};

const SHARDS: usize = 4;

/// Runs the `count` shards of one run at once, as the pods of an Indexed Job would: each
/// `tsumo ARGS --shard I/N --start-at START --json - --quiet URL`, each process launched
/// `apart` after the previous one (`--start-at`, not the launch, must set the start). Gives the
/// shards' runs in shard order.
fn run_shards(
    count: usize,
    args: &[&str],
    (url, start_at): (&str, &str),
    apart: Duration,
    limit: Duration,
) -> Vec<Run> {
    let shards: Vec<_> = (1..=count)
        .map(|i| {
            let mut argv: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            let shard = format!("{i}/{count}");
            argv.extend(
                [
                    "--shard",
                    &shard,
                    "--start-at",
                    start_at,
                    "--json",
                    "-",
                    "--quiet",
                    url,
                ]
                .map(String::from),
            );
            let handle = std::thread::spawn(move || {
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                run_tsumo(&argv, limit)
            });
            std::thread::sleep(apart);
            handle
        })
        .collect();
    shards
        .into_iter()
        .map(|h| h.join().expect("shard thread"))
        .collect()
}

#[test]
fn four_shards_started_apart_start_together_and_merge_to_the_whole_rate() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    // One instant 2 s ahead for every shard; the processes start 150 ms apart.
    let start_at = format_rfc3339(unix_now_ns() + 2_000_000_000);
    let runs = run_shards(
        SHARDS,
        &["-t1", "-c8", "-R2000", "-d5s"],
        (&url, &start_at),
        Duration::from_millis(150),
        Duration::from_secs(40),
    );
    let docs: Vec<serde_json::Value> = runs.iter().map(|r| r.assert_success().json()).collect();

    // Each shard: its part, the same run id, and a start on the instant.
    let run_id = docs[0]["run_id"].as_str().expect("run_id").to_string();
    let mut starts = Vec::new();
    for (i, doc) in docs.iter().enumerate() {
        assert_eq!(doc["run_id"], run_id.as_str());
        assert_eq!(doc["shard"]["index"], i + 1);
        assert_eq!(doc["shard"]["count"], SHARDS);
        assert_eq!(doc["plan"]["rate"], 500);
        assert_eq!(doc["plan"]["connections"], 2);
        assert_eq!(doc["start"]["intended"], start_at.as_str());
        // Never before the instant (how late is this busy machine's, not tsumo's: not asserted).
        let late_ns = doc["start"]["late_ns"].as_i64().expect("late_ns");
        assert!(late_ns >= 0, "shard {} started {late_ns} ns early", i + 1);
        starts.push(
            doc["start"]["actual_unix_ns"]
                .as_u64()
                .expect("actual_unix_ns")
                / 1000,
        );
    }
    // The merge's start skew is the latest start after the earliest, to the microsecond.
    let skew_us = starts.iter().max().unwrap() - starts.iter().min().unwrap();
    let skew = format!(
        ", start skew {}.{:03} ms (the latest shard's start after the earliest's)",
        skew_us / 1000,
        skew_us % 1000
    );

    // One stream, as `kubectl logs` prints the pods (with a stray stderr line), on stdin.
    let dir = TempDir::new("tsumo-shards");
    let merged_path = dir.path().join("merged.json");
    let mut stream = String::new();
    for run in &runs {
        stream.push_str(&run.stdout);
        stream.push_str("tsumo: a line of a pod's stderr\n");
    }
    let out = common::merge_stream(&stream, &merged_path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The merged run in wrk2's layout, then its line and one line per shard, last.
    assert!(
        stdout.starts_with("Running ") && stdout.contains("\nRequests/sec: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("Latency Distribution (HdrHistogram"),
        "{stdout}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let first = lines.len().saturating_sub(1 + SHARDS);
    assert!(
        lines[first].starts_with(&format!("Merged 4 parts of run {run_id}: "))
            && lines[first].ends_with(&skew),
        "{stdout}"
    );
    for (i, line) in lines[first + 1..].iter().enumerate() {
        assert!(line.contains(&format!("shard {}/4", i + 1)), "{line}");
        assert!(
            line.contains("req/s")
                && line.contains(" ms after --start-at (+")
                && line.contains(" ms after the earliest shard's)"),
            "{line}"
        );
    }

    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_path).expect("merged.json"))
            .expect("merged JSON");
    // The merge is the sum of its parts; the rate reached is a benchmark's to measure, not a
    // test's on a shared machine.
    assert_eq!(merged["plan"]["rate"], 2000);
    let counts: u64 = docs.iter().map(|d| json_u64(d, "latency.count")).sum();
    assert_eq!(json_u64(&merged, "latency.count"), counts);
    assert_eq!(
        json_u64(&merged, "counters.requests"),
        docs.iter()
            .map(|d| json_u64(d, "counters.requests"))
            .sum::<u64>()
    );
    assert_eq!(json_u64(&merged, "counters.errors.read"), 0);
    assert_eq!(merged["run_id"], run_id.as_str());
    eprintln!("{stdout}");
    merged_intervals_are_the_shards_added_by_wall_clock(&docs, &merged);

    // Three of the four: the missing one is named. Another run's shard: refused.
    let write = |name: &str, docs: &[serde_json::Value]| {
        let path = dir.path().join(name);
        let text: String = docs
            .iter()
            .map(|d| serde_json::to_string_pretty(d).expect("JSON") + "\n")
            .collect();
        std::fs::write(&path, text).expect("write");
        path.display().to_string()
    };
    let out = dir.path().join("out.json").display().to_string();
    let three = write(
        "three.json",
        &[docs[0].clone(), docs[1].clone(), docs[3].clone()],
    );
    let run = run_tsumo(&["merge", &three, "-o", &out], Duration::from_secs(10));
    assert_eq!(run.status.code(), Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "run {run_id} has 4 shards but shard 3/4 is missing"
        )),
        "{}",
        run.stderr
    );
    let mut other = docs[2].clone();
    other["run_id"] = serde_json::json!("another-run");
    let mixed = write(
        "mixed.json",
        &[docs[0].clone(), docs[1].clone(), other, docs[3].clone()],
    );
    let run = run_tsumo(&["merge", &mixed, "-o", &out], Duration::from_secs(10));
    assert_eq!(run.status.code(), Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("is of run another-run but") && run.stderr.contains("do not merge"),
        "{}",
        run.stderr
    );
}

#[test]
fn bad_shards_and_start_times_stop_before_any_traffic() {
    for (args, want) in [
        (
            &["-c10", "--shard", "1/4", "http://127.0.0.1:9/"][..],
            "-c 10 connections do not split evenly into 4 shards: use a multiple of 4 (8 or 12)",
        ),
        (
            &["-c8", "-R999", "--shard", "1/4", "http://127.0.0.1:9/"][..],
            "-R 999 requests/s does not split evenly into 4 shards",
        ),
        (
            &["--start-at", "2001-01-01T00:00:00Z", "http://127.0.0.1:9/"][..],
            "--start-at 2001-01-01T00:00:00Z is ",
        ),
        (
            &[
                "-c8",
                "--shard",
                "2/4",
                "--start-at",
                "+30s",
                "http://127.0.0.1:9/",
            ][..],
            "--start-at +30s counts from each process's own start, so shards launched apart \
             would start apart",
        ),
        (
            &["mahjong", "-c20", "--shard", "2/4", "http://127.0.0.1:9/s"][..],
            "-c 20 players are 5 tables, which do not split evenly into 4 shards",
        ),
    ] {
        let run = run_tsumo(args, Duration::from_secs(10));
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.starts_with(&format!("tsumo: {want}")),
            "{}",
            run.stderr
        );
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    }
}

/// Two mahjong shards of 8 players each (one 16-player session), started on one instant and
/// cut by `-d`: every player logs in under its own name (the whole session's numbering), plays,
/// and logs out; the merge counts 16 of each and the server is left without sessions.
#[test]
fn two_mahjong_shards_are_one_session_of_distinct_players() {
    let server = Majiang::start();
    let url = server.url();
    let start_at = format_rfc3339(unix_now_ns() + 2_000_000_000);
    let runs = run_shards(
        2,
        &[
            "mahjong", "-c16", "-t1", "--think", "0", "--ramp", "5ms", "-d", "5s",
        ],
        (&url, &start_at),
        Duration::ZERO,
        Duration::from_secs(60),
    );
    let docs: Vec<serde_json::Value> = runs.iter().map(|r| r.assert_success().json()).collect();
    for doc in &docs {
        assert_eq!(doc["plan"]["players"], 8);
        assert_eq!(doc["run_id"], docs[0]["run_id"]);
        assert!(json_f64(doc, "start.late_ns") >= 0.0, "{doc:#}");
    }
    let dir = TempDir::new("tsumo-shards-mahjong");
    let stream = dir.path().join("logs.txt");
    std::fs::write(
        &stream,
        runs.iter().map(|r| r.stdout.as_str()).collect::<String>(),
    )
    .expect("write stream");
    let merged_path = dir.path().join("merged.json");
    let merge = run_tsumo(
        &[
            "merge",
            &stream.display().to_string(),
            "-o",
            &merged_path.display().to_string(),
        ],
        Duration::from_secs(10),
    );
    merge.assert_success();
    // The merged session in the session report's layout, then its line and the shards'.
    assert!(
        merge.stdout.starts_with("Mahjong session @ ")
            && merge.stdout.contains("\n    logout        16 ")
            && merge.stdout.contains("\nMerged 2 parts of run "),
        "{}",
        merge.stdout
    );
    let merged: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_path).expect("merged"))
            .expect("merged JSON");
    assert_eq!(merged["plan"]["players"], 16);
    for name in ["login", "connect", "logout"] {
        assert_eq!(merged["phases"][name]["ok"], 16, "{name}: {merged:#}");
        assert_eq!(merged["phases"][name]["failed"], 0, "{name}: {merged:#}");
    }
    assert_eq!(merged["games"]["started"], 4, "{merged:#}");
    // The shards' intervals, added by wall clock: every game started in one of them.
    let intervals = merged["intervals"].as_array().expect("merged intervals");
    let started: u64 = intervals
        .iter()
        .map(|i| i["games"]["started"].as_u64().unwrap())
        .sum();
    assert_eq!(started, 4, "{merged:#}");
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// Issue 23: with `--start-at`, every shard's interval k is the same wall-clock span, and the
/// merge's interval k is their sum: counts, and the latency histograms value by value.
fn merged_intervals_are_the_shards_added_by_wall_clock(
    docs: &[serde_json::Value],
    merged: &serde_json::Value,
) {
    let decode = |v: &serde_json::Value| {
        tsumo::report::schema::decode_histogram(v.as_str().expect("a histogram")).unwrap()
    };
    let intervals = |doc: &serde_json::Value| doc["intervals"].as_array().cloned().unwrap();
    let merged_intervals = intervals(merged);
    let longest = docs.iter().map(|d| intervals(d).len()).max().unwrap();
    assert_eq!(merged_intervals.len(), longest);
    assert!(longest >= 5, "{longest} intervals");
    for (k, sum) in merged_intervals.iter().enumerate() {
        let parts: Vec<serde_json::Value> = docs
            .iter()
            .filter_map(|d| intervals(d).get(k).cloned())
            .collect();
        for part in &parts {
            assert_eq!(part["start_unix_ns"], sum["start_unix_ns"], "interval {k}");
        }
        let completed: u64 = parts.iter().map(|p| json_u64(p, "completed")).sum();
        assert_eq!(json_u64(sum, "completed"), completed, "interval {k}");
        let mut latency = decode(&sum["latency"]["histogram"]);
        let total = latency.clone();
        latency.reset();
        for part in &parts {
            latency.add(decode(&part["latency"]["histogram"])).unwrap();
        }
        assert_eq!(latency, total, "interval {k}");
        assert_eq!(json_u64(sum, "latency.count"), total.len());
    }
}

/// Two shards of run `r30` (`-c2 -R20 -d2s` in all) against `url`, started together, each with
/// its own extra arguments; their JSON files in `dir`, in shard order.
fn two_shards(dir: &TempDir, url: &str, own: [&[&str]; 2]) -> Vec<String> {
    let start_at = format_rfc3339(unix_now_ns() + 1_500_000_000);
    let handles: Vec<_> = own
        .iter()
        .enumerate()
        .map(|(i, extra)| {
            let json = dir.path().join(format!("o{}.json", i + 1));
            let json = json.display().to_string();
            let shard = format!("{}/2", i + 1);
            let mut argv: Vec<String> = ["-t1", "-c2", "-R20", "-d2s", "--run-id", "r30"]
                .iter()
                .chain(extra.iter())
                .map(|a| a.to_string())
                .collect();
            argv.extend(
                [
                    "--shard",
                    &shard,
                    "--start-at",
                    &start_at,
                    "--json",
                    &json,
                    "--quiet",
                    url,
                ]
                .map(String::from),
            );
            std::thread::spawn(move || {
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                run_tsumo(&argv, Duration::from_secs(20));
                json
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("shard thread"))
        .collect()
}

/// Issue 30 (6): shards judged by different objectives do not merge, in either order, nor in
/// `tsumo report`: one line naming both files and their objectives, exit 2, nothing written.
/// (Before: merged silently and judged by the first file's objectives, so `merge o1 o2` broke
/// and `merge o2 o1` held.)
#[test]
fn shards_with_different_objectives_are_refused_in_either_order() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = TempDir::new("tsumo-objectives");
    let files = two_shards(&dir, &url, [&["--slo", "p99<1us"], &["--slo", "p99<10s"]]);
    let out = dir.path().join("merged.json").display().to_string();
    let page = dir.path().join("page.html").display().to_string();
    let (o1, o2) = (&files[0], &files[1]);
    for (command, a, b, output) in [
        ("merge", o1, o2, &out),
        ("merge", o2, o1, &out),
        ("report", o1, o2, &page),
        ("report", o2, o1, &page),
    ] {
        let run = run_tsumo(&[command, a, b, "-o", output], Duration::from_secs(10));
        assert_eq!(
            run.status.code(),
            Some(2),
            "{command} {a} {b}: {}",
            run.stderr
        );
        let objectives = |file: &String| match file == o1 {
            true => "p99<1us",
            false => "p99<10s",
        };
        assert_eq!(
            run.stderr,
            format!(
                "tsumo: merge: {a} has objectives {} but {b} has objectives {}: parts of one run \
                 are judged by one set of objectives (give every part the same --slo)\n",
                objectives(a),
                objectives(b)
            )
        );
        assert!(!std::path::Path::new(output).exists(), "{output} written");
    }
}

/// Issue 30 ("merge drops the timeline"): shards with `--interval 500ms` and `1s` merge into a
/// timeline of 1 s intervals, the 500 ms ones added two by two (counts exact), and the merge says
/// so; `400ms` and `1s` do not divide and are refused (one line, exit 2). (Before: the merged
/// JSON had no `intervals`, and nothing said so.)
#[test]
fn shards_with_different_intervals_resample_or_are_refused() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = TempDir::new("tsumo-intervals");
    let files = two_shards(
        &dir,
        &url,
        [&["--interval", "500ms"], &["--interval", "1s"]],
    );
    let out = dir.path().join("merged.json");
    let out_s = out.display().to_string();
    let run = run_tsumo(
        &["merge", &files[0], &files[1], "-o", &out_s],
        Duration::from_secs(10),
    );
    run.assert_success();
    assert_eq!(
        run.stderr,
        format!(
            "tsumo: warning: timeline resampled to intervals of 1 s: {} (0.5 s) added up to it\n",
            files[0]
        )
    );
    let merged = common::read_json(&out);
    let docs: Vec<serde_json::Value> = files
        .iter()
        .map(|f| common::read_json(std::path::Path::new(f)))
        .collect();
    let intervals = merged["intervals"].as_array().expect("merged intervals");
    assert!(intervals.len() >= 2, "{merged:#}");
    for interval in intervals.iter().take(2) {
        assert_eq!(interval["duration_s"], 1.0, "{merged:#}");
    }
    // Every completed request is in the merged timeline, and the first second holds the
    // first two 500 ms intervals and the first 1 s one exactly.
    let completed = |doc: &serde_json::Value, k: usize| json_u64(&doc["intervals"][k], "completed");
    let total: u64 = (0..intervals.len()).map(|k| completed(&merged, k)).sum();
    assert_eq!(total, json_u64(&merged, "counters.requests"), "{merged:#}");
    assert_eq!(
        completed(&merged, 0),
        completed(&docs[0], 0) + completed(&docs[0], 1) + completed(&docs[1], 0),
        "{merged:#}"
    );

    let files = two_shards(
        &dir,
        &url,
        [&["--interval", "400ms"], &["--interval", "1s"]],
    );
    let run = run_tsumo(
        &["merge", &files[0], &files[1], "-o", &out_s],
        Duration::from_secs(10),
    );
    assert_eq!(run.status.code(), Some(2), "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "tsumo: merge: {} has intervals of 0.4 s but {} of 1 s: their timelines do not add \
             up (give every part the same --interval, or ones that divide each other)\n",
            files[0], files[1]
        )
    );
}

/// Issue 30: the page of two shards merged (`tsumo report o1 o2`) and of their merged file
/// says "merged" once in its title: the default label says it already ("merged (2 runs)").
/// (Before: "HTTP run — merged (2 runs) (merged)".)
#[test]
fn a_merged_runs_page_says_merged_once() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = TempDir::new("tsumo-merged-title");
    let files = two_shards(&dir, &url, [&[], &[]]);
    let merged = dir.path().join("merged.json").display().to_string();
    let merge = run_tsumo(
        &["merge", &files[0], &files[1], "-o", &merged],
        Duration::from_secs(10),
    );
    merge.assert_success();
    // The shards and their merge, against the run's schema.
    let saved: Vec<&std::path::Path> = files
        .iter()
        .chain([&merged])
        .map(std::path::Path::new)
        .collect();
    common::schema::assert_valid(common::schema::Kind::Run, &saved);
    let page = dir.path().join("page.html");
    let page_arg = page.display().to_string();
    for inputs in [&files[..], &[merged.clone()][..]] {
        let mut args = vec!["report"];
        args.extend(inputs.iter().map(String::as_str));
        args.extend(["-o", &page_arg]);
        run_tsumo(&args, Duration::from_secs(10)).assert_success();
        let html = std::fs::read_to_string(&page).expect("page written");
        let title = html
            .split_once("<title>")
            .and_then(|(_, rest)| rest.split_once("</title>"))
            .map(|(title, _)| title)
            .expect("a title");
        assert_eq!(title, "tsumo: HTTP run — merged (2 runs)", "{inputs:?}");
        assert!(!html.contains("(merged)"), "{inputs:?}: {html}");
    }
}
