//! `tsumo merge --requests`: the shards' request logs joined into one, ordered by intended time
//! on the earliest shard's clock. The runs are real shards of one run against nginx; their
//! logs are made here (a run's log is in completion order, not by intended time), plain and
//! zstd, and each run's JSON is pointed at its log as `--requests` records it.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use common::nginx::Nginx;
use common::{run_tsumo, TempDir};
use serde_json::{json, Value};
use tsumo::stats::requests::{HEADER, MAGIC};

const SHARDS: usize = 3;
/// Rows per shard's log.
const ROWS: u64 = 40;
/// Each shard's start after the first's, ns: the second started 1 ms after, the third 0.5 ms.
const STARTS: [u64; SHARDS] = [0, 1_000_000, 500_000];
const EPOCH_NS: u64 = 1_796_000_000_000_000_000;

/// The JSON of three shards of one small run against nginx, made once.
fn shard_docs() -> &'static [Value] {
    static DOCS: OnceLock<Vec<Value>> = OnceLock::new();
    DOCS.get_or_init(|| {
        let nginx = Nginx::start();
        let url = nginx.http_url("/index.html");
        (1..=SHARDS)
            .map(|i| {
                let shard = format!("{i}/{SHARDS}");
                let run = run_tsumo(
                    &[
                        "-t1", "-c3", "-R30", "-d1s", "--run-id", "logs", "--shard", &shard,
                        "--json", "-", "--quiet", &url,
                    ],
                    Duration::from_secs(30),
                );
                run.assert_success().json()
            })
            .collect()
    })
}

/// Shard `i`'s row `k`: intended times interleave with the other shards', the connection is
/// `k % 3`, a request in five failed (no receive time, an error kind).
fn row(i: usize, k: u64) -> String {
    let intended = k * 1_000_000 + i as u64 * 333_000;
    let conn = k % 3;
    if k % 5 == 4 {
        format!(
            "{intended},{},,{},{conn},0,,0,77,,,,timeout",
            intended + 40,
            i + 1
        )
    } else {
        format!(
            "{intended},{},{},{},{conn},0,200,615,77,90000,85000,5000,",
            intended + 40,
            intended + 90_000,
            i + 1
        )
    }
}

/// Shard `i`'s rows in completion order (a fixed shuffle of intended order).
fn rows(i: usize) -> Vec<String> {
    (0..ROWS)
        .map(|k| row(i, (k * 17 + i as u64) % ROWS))
        .collect()
}

/// Shard `i`'s row `k` on the merged clock (the earliest shard's start), and its sort key.
fn merged_row(i: usize, k: u64) -> ((u64, u64, u64), String) {
    let offset = STARTS[i] - STARTS.iter().min().unwrap();
    let text = row(i, k);
    let mut fields: Vec<String> = text.split(',').map(str::to_string).collect();
    for time in &mut fields[..3] {
        if !time.is_empty() {
            *time = (time.parse::<u64>().unwrap() + offset).to_string();
        }
    }
    let number = |f: &String| f.parse::<u64>().unwrap();
    let key = (number(&fields[0]), number(&fields[3]), number(&fields[4]));
    (key, fields.join(","))
}

/// A log as the writer lays it out: the magic line, the header, `body` (rows, one a line, the
/// last perhaps cut short); zstd when the name ends in `.zst`.
fn write_log(path: &Path, i: usize, sample: f64, body: &str) {
    let text = format!(
        "{MAGIC}; start_unix_ns={}; run_id=logs; shard={}/{SHARDS}; sample={sample}\n{HEADER}\n{body}",
        EPOCH_NS + STARTS[i],
        i + 1
    );
    let bytes = if path.extension().is_some_and(|e| e == "zst") {
        zstd::encode_all(text.as_bytes(), 3).unwrap()
    } else {
        text.into_bytes()
    };
    std::fs::write(path, bytes).unwrap();
}

/// The shards' files in `dir`: `shard-I.json` pointing at `shard-I.<ext>` (recorded as `log`
/// gives it, else the log's path), with its rows.
struct Shards {
    jsons: Vec<PathBuf>,
    logs: Vec<PathBuf>,
}

fn shards(dir: &Path, exts: [&str; SHARDS], recorded: impl Fn(usize, &Path) -> String) -> Shards {
    let (mut jsons, mut logs) = (Vec::new(), Vec::new());
    for (i, doc) in shard_docs().iter().enumerate() {
        let log = dir.join(format!("shard-{}.{}", i + 1, exts[i]));
        write_log(&log, i, 1.0, &(rows(i).join("\n") + "\n"));
        let mut doc = doc.clone();
        doc["requests_log"] = json!({"path": recorded(i, &log), "rows": ROWS, "sample": 1.0,
                                     "complete": true});
        let path = dir.join(format!("shard-{}.json", i + 1));
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        jsons.push(path);
        logs.push(log);
    }
    Shards { jsons, logs }
}

fn merge(files: &[PathBuf], extra: &[&str]) -> common::Run {
    let mut args: Vec<String> = vec!["merge".into()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.extend(extra.iter().map(|a| a.to_string()));
    let mut command = common::tsumo();
    command.args(&args).env("TSUMO_MERGE_CHUNK_ROWS", "7");
    common::run_command(command, Duration::from_secs(30))
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn shards_logs_merge_into_one_by_intended_time_on_one_clock() {
    let dir = TempDir::new("tsumo-requests-merge");
    // Plain and zstd inputs; the second shard's log recorded where its pod wrote it.
    let shards = shards(dir.path(), ["csv", "csv.zst", "csv"], |i, log| match i {
        1 => "/pod/out/shard-2.csv.zst".to_string(),
        _ => log.display().to_string(),
    });
    let out = dir.path().join("merged.csv.zst");
    let json = dir.path().join("merged.json");
    let run = merge(
        &shards.jsons,
        &[
            "-o",
            &json.display().to_string(),
            "--requests",
            &out.display().to_string(),
        ],
    );
    run.assert_success();
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);

    let text =
        String::from_utf8(zstd::decode_all(&std::fs::read(&out).unwrap()[..]).unwrap()).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            format!("{MAGIC}; start_unix_ns={EPOCH_NS}; run_id=logs; shard=merged; sample=1")
                .as_str()
        )
    );
    assert_eq!(lines.next(), Some(HEADER));
    let merged: Vec<&str> = lines.collect();
    // Every row once, in intended order, its times moved onto the first shard's clock.
    let mut expected: Vec<_> = (0..SHARDS)
        .flat_map(|i| (0..ROWS).map(move |k| merged_row(i, k)))
        .collect();
    expected.sort();
    let expected: Vec<&str> = expected.iter().map(|(_, row)| row.as_str()).collect();
    assert_eq!(merged.len(), SHARDS * ROWS as usize);
    assert_eq!(merged, expected);
    // The second shard started 1 ms after the first: its first row, due at 333 µs of its own
    // clock, is at 1.333 ms of the merged one, sent 40 ns later, received 90 µs later.
    assert!(merged.contains(&"1333000,1333040,1423000,2,0,0,200,615,77,90000,85000,5000,"));

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        doc["requests_log"],
        json!({"path": out.display().to_string(), "rows": SHARDS as u64 * ROWS, "sample": 1.0,
               "complete": true})
    );
    // No chunk of the sort is left beside the output.
    let mut left = names(dir.path());
    left.retain(|n| n.starts_with('.'));
    assert!(left.is_empty(), "{left:?}");

    // Without --requests, the merge has no log: the first shard's is not the merge's.
    let run = merge(&shards.jsons, &["-o", &json.display().to_string()]);
    run.assert_success();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(doc.get("requests_log").is_none(), "{}", doc["requests_log"]);
}

#[test]
fn a_row_cut_short_and_an_incomplete_log_are_warned_of() {
    let dir = TempDir::new("tsumo-requests-merge-cut");
    let shards = shards(dir.path(), ["csv", "csv", "csv.zst"], |_, log| {
        log.display().to_string()
    });
    // The first shard was killed mid-row; the third's log stopped on a full disk.
    let body = rows(0).join("\n") + "\n" + &row(0, ROWS)[..9];
    write_log(&shards.logs[0], 0, 1.0, &body);
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&shards.jsons[2]).unwrap()).unwrap();
    doc["requests_log"]["complete"] = json!(false);
    doc["requests_log"]["error"] = json!("No space left on device");
    std::fs::write(&shards.jsons[2], doc.to_string()).unwrap();

    let out = dir.path().join("merged.csv");
    let json = dir.path().join("merged.json");
    let run = merge(
        &shards.jsons,
        &[
            "-o",
            &json.display().to_string(),
            "--requests",
            &out.display().to_string(),
        ],
    );
    run.assert_success();
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("warning"))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", run.stderr);
    assert!(
        warnings.iter().any(
            |w| w.contains("1 rows that do not parse left out") && w.contains("shard-1.csv: 1")
        ),
        "{}",
        run.stderr
    );
    assert!(
        warnings.iter().any(|w| w.contains("shard-3.csv.zst (")
            && w.contains("shard-3.json's) is incomplete (No space left on device)")),
        "{}",
        run.stderr
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 2 + SHARDS * ROWS as usize);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["requests_log"]["rows"], SHARDS as u64 * ROWS);
    assert_eq!(doc["requests_log"]["complete"], false);
}

/// A bad input: exit 2, one line on stderr that says `what`, and nothing written.
fn refused(dir: &Path, files: &[PathBuf], out: &Path, json: &Path, what: &str) {
    let before = names(dir);
    let run = merge(
        files,
        &[
            "-o",
            &json.display().to_string(),
            "--requests",
            &out.display().to_string(),
        ],
    );
    assert_eq!(run.status.code(), Some(2), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains(what), "{what}: {}", run.stderr);
    assert_eq!(names(dir), before, "{what}");
}

#[test]
fn bad_inputs_are_refused_in_one_line_before_anything_is_written() {
    let dir = TempDir::new("tsumo-requests-merge-bad");
    let d = dir.path();
    let shards = shards(d, ["csv", "csv", "csv.zst"], |_, log| {
        log.display().to_string()
    });
    let (out, json) = (d.join("merged.csv"), d.join("merged.json"));
    let edit = |k: usize, change: &dyn Fn(&mut Value)| {
        let path = d.join(format!("edited-{k}.json"));
        let mut doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&shards.jsons[k]).unwrap()).unwrap();
        change(&mut doc);
        std::fs::write(&path, doc.to_string()).unwrap();
        let mut files = shards.jsons.clone();
        files[k] = path;
        files
    };
    let files = edit(1, &|doc| {
        doc.as_object_mut().unwrap().remove("requests_log");
    });
    refused(
        d,
        &files,
        &out,
        &json,
        "has no requests_log (it ran without --requests)",
    );
    let files = edit(1, &|doc| {
        doc["requests_log"]["path"] = json!("/pod/out/gone.csv")
    });
    refused(
        d,
        &files,
        &out,
        &json,
        "/pod/out/gone.csv: request log not found",
    );
    let not_a_log = d.join("not-a-log.csv");
    std::fs::write(&not_a_log, "intended_ns,sent_ns\n1,2\n").unwrap();
    let files = edit(2, &|doc| {
        doc["requests_log"]["path"] = json!(not_a_log.display().to_string())
    });
    refused(
        d,
        &files,
        &out,
        &json,
        "not-a-log.csv: not a tsumo request log",
    );
    let half = d.join("half.csv");
    write_log(&half, 2, 0.5, "");
    let files = edit(2, &|doc| {
        doc["requests_log"]["path"] = json!(half.display().to_string())
    });
    refused(
        d,
        &files,
        &out,
        &json,
        "the logs sample different fractions (1 in ",
    );
    let files = edit(2, &|doc| {
        doc["requests_log"]["path"] = json!(shards.logs[0].display().to_string())
    });
    refused(d, &files, &out, &json, "name one request log");
    refused(
        d,
        &shards.jsons,
        &shards.logs[1],
        &json,
        "would be overwritten",
    );
    refused(d, &shards.jsons, &json, &json, "is the --requests file too");
    // -o onto a log is refused too.
    refused(
        d,
        &shards.jsons,
        &out,
        &shards.logs[0],
        "would be overwritten",
    );
}
