//! One `tsumo ws` run split over two processes (`--shard I/N`, one `--start-at`) against the
//! Node.js echo server (`scripts/ws-echo.js`), merged back with `tsumo merge`: the counts add up
//! to what one process sends (`-R` × duration, every echo matched), the merged histogram holds
//! every shard's samples, the intervals line up, and the files are valid against
//! `docs/schema/ws.schema.json`. Their `--requests` logs merge too (`tsumo merge --requests`):
//! every shard's rows, ordered by intended time.

mod common;

use std::time::Duration;

use common::schema::{assert_valid, Kind};
use common::wsecho::WsEcho;
use common::{json_u64, read_json, run_tsumo, Run, TempDir};
use tsumo::sys::wallclock::{format_rfc3339, unix_now_ns};

const LIMIT: Duration = Duration::from_secs(60);

/// `tsumo ws ARGS --shard I/2 --start-at START --json FILE URL` for both shards at once.
fn two_shards(args: &[&str], url: &str, dir: &TempDir) -> Vec<Run> {
    // Far enough ahead for both processes to connect first, on a whole second.
    let start_ns = (unix_now_ns() / 1_000_000_000 + 3) * 1_000_000_000;
    let start_at = format_rfc3339(start_ns);
    let handles: Vec<_> = (1..=2)
        .map(|i| {
            // `{i}` in an argument is the shard's number (each its own file).
            let mut argv: Vec<String> = args
                .iter()
                .map(|a| a.replace("{i}", &i.to_string()))
                .collect();
            let json = dir.path().join(format!("s{i}.json")).display().to_string();
            let shard = format!("{i}/2");
            argv.extend(
                [
                    "--shard",
                    &shard,
                    "--start-at",
                    &start_at,
                    "--json",
                    &json,
                    url,
                ]
                .map(String::from),
            );
            std::thread::spawn(move || {
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                run_tsumo(&argv, LIMIT)
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("shard thread"))
        .collect()
}

#[test]
fn two_shards_merge_to_one_process_exact_counts() {
    let server = WsEcho::start(&[]);
    let dir = TempDir::new("ws-shards");
    let (rate, seconds, connections) = (200, 2, 4);
    let (r, d, c) = (
        format!("-R{rate}"),
        format!("-d{seconds}s"),
        format!("-c{connections}"),
    );
    let shards = two_shards(&["ws", "-t1", &c, &d, &r], &server.url(), &dir);
    for shard in &shards {
        shard.assert_success();
    }
    let parts: Vec<_> = (1..=2)
        .map(|i| dir.path().join(format!("s{i}.json")))
        .collect();
    let docs: Vec<_> = parts.iter().map(|p| read_json(p)).collect();
    for (i, doc) in docs.iter().enumerate() {
        // Each shard: half the connections at half the rate.
        assert_eq!(json_u64(doc, "plan.connections"), connections / 2, "{doc}");
        assert_eq!(json_u64(doc, "plan.rate"), rate / 2, "{doc}");
        assert_eq!(json_u64(doc, "shard.index"), i as u64 + 1, "{doc}");
        assert_eq!(doc["run_id"], docs[0]["run_id"], "{doc}");
    }
    let merged = dir.path().join("m.json");
    let merged_arg = merged.display().to_string();
    let (p1, p2) = (
        parts[0].display().to_string(),
        parts[1].display().to_string(),
    );
    let run = run_tsumo(&["merge", &p1, &p2, "-o", &merged_arg], LIMIT);
    run.assert_success();
    assert!(
        run.stdout.contains("Merged 2 parts of run"),
        "{}",
        run.stdout
    );
    let doc = read_json(&merged);
    // As one process: -R × duration sent, every echo matched.
    let due = rate * seconds;
    assert_eq!(json_u64(&doc, "messages.due"), due, "{doc}");
    assert_eq!(json_u64(&doc, "messages.sent"), due, "{doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), due, "{doc}");
    assert_eq!(json_u64(&doc, "messages.unanswered"), 0, "{doc}");
    assert_eq!(json_u64(&doc, "messages.timed_out"), 0, "{doc}");
    assert_eq!(json_u64(&doc, "connections.opened"), connections, "{doc}");
    assert_eq!(json_u64(&doc, "plan.connections"), connections, "{doc}");
    assert_eq!(json_u64(&doc, "plan.rate"), rate, "{doc}");
    // The merged histograms hold every shard's samples.
    for name in [
        "round_trip",
        "round_trip_uncorrected",
        "connections.connect",
    ] {
        let count = format!("{name}.count");
        let parts: u64 = docs.iter().map(|d| json_u64(d, &count)).sum();
        assert_eq!(json_u64(&doc, &count), parts, "{name}: {doc}");
    }
    assert_eq!(json_u64(&doc, "round_trip.count"), due, "{doc}");
    // Both shards started on one instant: their intervals line up, one by one.
    let intervals = doc["intervals"].as_array().expect("intervals");
    let part_intervals = docs[0]["intervals"].as_array().expect("intervals");
    assert_eq!(intervals.len(), part_intervals.len(), "{doc}");
    let sent: u64 = intervals.iter().map(|i| json_u64(i, "sent")).sum();
    assert_eq!(sent, due, "{doc}");
    let paths: Vec<&std::path::Path> = parts
        .iter()
        .map(|p| p.as_path())
        .chain([merged.as_path()])
        .collect();
    assert_valid(Kind::Ws, &paths);
}

/// A plain log's rows, each split into its columns (the comment line and the header left out).
fn log_rows(path: &std::path::Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).expect("read the log");
    let mut lines = text.lines();
    assert!(lines
        .next()
        .is_some_and(|l| l.starts_with("# tsumo requests v1;")));
    assert!(lines.next().is_some_and(|l| l.starts_with("intended_ns,")));
    lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn two_shards_logs_merge_into_one_ordered_by_intended_time() {
    let server = WsEcho::start(&[]);
    let dir = TempDir::new("ws-shards-requests");
    let log = dir.path().join("s{i}.csv").display().to_string();
    let shards = two_shards(
        &["ws", "-t1", "-c4", "-d2s", "-R400", "--requests", &log],
        &server.url(),
        &dir,
    );
    for shard in &shards {
        shard.assert_success();
    }
    let part = |name: &str| dir.path().join(name).display().to_string();
    let logs: Vec<_> = (1..=2)
        .map(|i| log_rows(&dir.path().join(format!("s{i}.csv"))))
        .collect();
    let rows: usize = logs.iter().map(Vec::len).sum();
    assert!(logs.iter().all(|l| l.len() > 300), "{rows}");
    let merged_log = part("m.csv");
    let run = run_tsumo(
        &[
            "merge",
            &part("s1.json"),
            &part("s2.json"),
            "-o",
            &part("m.json"),
            "--requests",
            &merged_log,
        ],
        LIMIT,
    );
    run.assert_success();
    let merged = log_rows(std::path::Path::new(&merged_log));
    assert_eq!(merged.len(), rows);
    let intended: Vec<u64> = merged.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(intended.windows(2).all(|w| w[0] <= w[1]), "not ordered");
    // Both shards' rows, by their shard column (0 and 1).
    for shard in ["0", "1"] {
        let n = merged.iter().filter(|r| r[3] == shard).count();
        assert_eq!(
            n,
            logs[shard.parse::<usize>().unwrap()].len(),
            "shard {shard}"
        );
    }
    let doc = read_json(std::path::Path::new(&part("m.json")));
    assert_eq!(json_u64(&doc, "requests_log.rows"), rows as u64, "{doc}");
    assert_eq!(doc["requests_log"]["path"], merged_log.as_str(), "{doc}");
    // Without --requests the merged file has no log of its own (not the first shard's).
    let run = run_tsumo(
        &[
            "merge",
            &part("s1.json"),
            &part("s2.json"),
            "-o",
            &part("n.json"),
        ],
        LIMIT,
    );
    run.assert_success();
    let doc = read_json(std::path::Path::new(&part("n.json")));
    assert!(doc.get("requests_log").is_none(), "{doc}");
}

#[test]
fn an_uneven_split_is_refused_before_any_traffic() {
    let run = run_tsumo(
        &[
            "ws",
            "-t1",
            "-c3",
            "-R100",
            "--shard",
            "1/2",
            "ws://127.0.0.1:9/",
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("-c 3 connections do not split evenly into 2 shards"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}
