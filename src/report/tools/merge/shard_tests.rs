//! `tsumo merge` of the shards of one run: the stream reader, the checks and the lines (kept
//! here, in merge's tests, so that `shards` never imports `merge`).

use serde_json::{json, Value};

use super::{merge, summary};
use crate::report::tools::saved::LoadedRun;
use crate::report::tools::shards::{check, documents};

/// Every test shard's `--start-at`: 2026-11-30T18:00:00Z.
const INTENDED: u64 = 1_796_061_600_000_000_000;

/// A shard's document: `index` 1-based, with a run id and a start (`start_ns`, not before
/// [`INTENDED`]).
fn shard_doc(run_id: &str, index: usize, count: usize, start_ns: u64) -> Value {
    let h = crate::report::schema::encode_histogram(&crate::stats::new_histogram());
    let p = json!({"count": 0, "p50": 0, "p75": 0, "p90": 0, "p99": 0, "p99.9": 0,
                   "p99.99": 0, "max": 0, "min": 0, "mean": 0.0, "stdev": 0.0});
    let mut counters = serde_json::to_value(crate::stats::http::Counters::default()).unwrap();
    counters["requests"] = json!(2500 + index as u64);
    json!({
        "tool": "tsumo", "version": "0", "schema": 1, "mode": "http", "label": "x",
        "plan": {"url": "http://127.0.0.1/", "threads": 1, "connections": 2, "duration_s": 5.0,
                 "rate": 500, "timeout_s": 2.0, "script": null, "script_args": [],
                 "headers": [], "latency": false, "u_latency": false, "batch_latency": false,
                 "insecure": false, "cacert": null},
        "elapsed_s": 5.0, "interrupted": false,
        "counters": counters,
        "requests_per_sec": 500.0, "bytes_per_sec": 0.0,
        "latency": p, "uncorrected": p, "send_lateness": p,
        "histograms": {"latency": h, "uncorrected": h, "send_lateness": h, "req_per_sec": h},
        "notes": [], "run_id": run_id, "shard": {"index": index, "count": count},
        "start": {"intended": "2026-11-30T18:00:00Z", "intended_unix_ns": INTENDED,
                  "actual": "2026-11-30T18:00:00Z", "actual_unix_ns": start_ns,
                  "late_ns": start_ns - INTENDED}
    })
}

/// Documents pretty-printed one after another, with a log line between two, as kubectl prints.
fn stream(docs: &[Value]) -> String {
    let mut text = String::new();
    for (i, doc) in docs.iter().enumerate() {
        text.push_str(&serde_json::to_string_pretty(doc).unwrap());
        text.push('\n');
        if i == 0 {
            text.push_str("tsumo: warning: {not json} from a pod's stderr\n");
        }
    }
    text
}

fn runs(docs: &[Value]) -> Vec<LoadedRun> {
    documents(&stream(docs), "logs").unwrap()
}

#[test]
fn a_stream_of_shards_merges_with_a_line_per_shard() {
    let t = 1_796_061_600_000_000_000u64;
    let docs: Vec<Value> = (1..=4)
        .map(|i| shard_doc("r1", i, 4, t + i as u64 * 1_000_000))
        .collect();
    let loaded = runs(&docs);
    assert_eq!(loaded.len(), 4);
    assert_eq!(loaded[2].source, "logs #3");
    assert!(check(&loaded, false).unwrap().is_empty());
    let merged = merge(&loaded, None, false).unwrap();
    let doc = merged.to_json();
    assert_eq!(doc["counters"]["requests"], 10_010);
    assert_eq!(doc["plan"]["rate"], 2000);
    assert_eq!(doc["run_id"], "r1");
    assert!(
        doc.get("shard").is_none() && doc.get("start").is_none(),
        "{doc}"
    );
    let lines = summary(&loaded, &merged);
    assert!(
        lines[0].starts_with("Merged 4 parts of run r1: 2000.0 req/s, 10010 requests"),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].ends_with("start skew 3.000 ms (the latest shard's start after the earliest's)"),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), 5);
    assert!(
        lines[4].contains("shard 4/4")
            && lines[4].contains(
                "start +4.000 ms after --start-at (+3.000 ms after the earliest shard's)"
            ),
        "{}",
        lines[4]
    );
}

#[test]
fn one_request_reads_singular() {
    let mut doc = shard_doc("r1", 1, 1, INTENDED);
    doc["counters"]["requests"] = json!(1);
    let loaded = runs(&[doc]);
    let merged = merge(&loaded, None, false).unwrap();
    let lines = summary(&loaded, &merged);
    assert!(
        lines[0].starts_with("Merged 1 part of run r1: 500.0 req/s, 1 request, 0 errors"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains(" 500.0 req/s, 1 request, 0 errors,"),
        "{lines:?}"
    );
}

#[test]
fn mixed_runs_missing_and_duplicate_shards_are_named() {
    let t = 1_796_061_600_000_000_000u64;
    let error = |docs: &[Value]| merge(&runs(docs), None, false).unwrap_err().to_string();
    let e = error(&[shard_doc("r1", 1, 2, t), shard_doc("r2", 2, 2, t)]);
    assert!(
        e.contains("logs #2 is of run r2 but logs #1 is of run r1"),
        "{e}"
    );
    let e = error(&[
        shard_doc("r1", 1, 4, t),
        shard_doc("r1", 2, 4, t),
        shard_doc("r1", 4, 4, t),
    ]);
    assert!(
        e.contains("run r1 has 4 shards but shard 3/4 is missing"),
        "{e}"
    );
    let e = error(&[shard_doc("r1", 2, 2, t), shard_doc("r1", 2, 2, t + 1)]);
    assert!(
        e.contains("shard 2/2 of run r1 given twice (logs #1 and logs #2)"),
        "{e}"
    );
    let e = error(&[shard_doc("r1", 1, 2, t), shard_doc("r1", 1, 1, t)]);
    assert!(e.contains("logs #2 is a whole run, not a shard"), "{e}");
    let e = error(&[shard_doc("r1", 1, 2, t), shard_doc("r1", 2, 3, t)]);
    assert!(e.contains("disagree on how many"), "{e}");
    // --force merges what is there, with a warning naming the missing shard.
    let some = runs(&[shard_doc("r1", 1, 3, t), shard_doc("r1", 3, 3, t)]);
    let merged = merge(&some, None, true).unwrap();
    assert!(
        merged
            .warnings
            .iter()
            .any(|w| w.contains("shard 2/3 is missing")),
        "{:?}",
        merged.warnings
    );
    assert!(documents("no json here\n", "x").is_err());
}

/// The merge's line and a shard's line of an HTTP run, to the byte: rate (one decimal),
/// requests, socket errors (a status error is not one), lateness, start skew, source.
#[test]
fn http_lines_are_pinned() {
    let t = 1_796_061_600_000_000_000u64;
    let docs: Vec<Value> = (1..=4)
        .map(|i| {
            let mut doc = shard_doc("r1", i, 4, t + i as u64 * 1_000_000);
            doc["requests_per_sec"] = json!(512.34);
            doc["counters"]["errors"]["read"] = json!(i);
            doc["counters"]["errors"]["status_4xx_5xx"] = json!(7);
            doc["send_lateness"]["p99"] = json!(1250);
            doc
        })
        .collect();
    let loaded = runs(&docs);
    let merged = merge(&loaded, None, false).unwrap();
    let lines = summary(&loaded, &merged);
    assert_eq!(
        lines[0],
        "Merged 4 parts of run r1: 2049.4 req/s, 10010 requests, 10 errors, latency p50 0.00us \
         p99 0.00us, send lateness p99 0.00us, start skew 3.000 ms (the latest shard's start \
         after the earliest's)"
    );
    assert_eq!(
        lines[2],
        "  shard 2/4    512.3 req/s, 2502 requests, 2 errors, send lateness p99 1.25ms, start \
         +2.000 ms after --start-at (+1.000 ms after the earliest shard's)  (logs #2)"
    );
}

/// A shard's start after `--start-at` and after the earliest shard's start are two views of one
/// instant: with one `--start-at` they differ by the earliest shard's lateness, to the digit,
/// and the merge's start skew is the largest "after the earliest". Before, each was rounded on
/// its own from nanoseconds: `start skew 0.003 ms, +0.083 ms` beside the earliest shard's
/// `+0.081 ms`.
#[test]
fn start_figures_reconcile_to_the_digit() {
    let late_ns = [83_400, 80_600, 399_700, 397_100];
    let docs: Vec<Value> = (1..=4)
        .map(|i| shard_doc("r1", i, 4, INTENDED + late_ns[i - 1]))
        .collect();
    let loaded = runs(&docs);
    let merged = merge(&loaded, None, false).unwrap();
    let lines = summary(&loaded, &merged);
    // `… start +A ms after --start-at (+B ms after the earliest shard's)  (logs #k)`.
    let figure = |line: &str, after: &str| -> i64 {
        let before = line.split(after).next().unwrap_or_else(|| panic!("{line}"));
        let number = before.rsplit(['(', ' ']).next().unwrap_or_default();
        (number
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("{number:?} in {line}"))
            * 1000.0)
            .round() as i64
    };
    let late: Vec<i64> = lines[1..]
        .iter()
        .map(|l| figure(l, " ms after --start-at"))
        .collect();
    let after: Vec<i64> = lines[1..]
        .iter()
        .map(|l| figure(l, " ms after the earliest shard's"))
        .collect();
    assert_eq!(late, [83, 80, 399, 397], "{lines:#?}");
    let earliest = *late.iter().min().unwrap();
    let expected: Vec<i64> = late.iter().map(|l| l - earliest).collect();
    assert_eq!(after, expected, "{lines:#?}");
    assert!(
        lines[0].ends_with(", start skew 0.319 ms (the latest shard's start after the earliest's)"),
        "{}",
        lines[0]
    );
}
