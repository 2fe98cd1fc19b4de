//! `tsumo mahjong --stages` over shards and when its server dies, against the real
//! majiang-server: two shard processes split one profile (tables `t mod 2`), and their merge
//! counts what one process would, stage by stage; a server killed mid-profile ends the session
//! with its stages so far and `ended_by: "server gone"`, exit 1. And `tsumo merge` of saved
//! parts, HTTP and mahjong, says so when any part's server went away.

mod common;

use std::path::Path;
use std::time::Duration;

use common::majiang::Majiang;
use common::{run_tsumo, Run, Signalled, TempDir};
use serde_json::{json, Value};
use tsumo::sys::wallclock::{format_rfc3339, unix_now_ns};

fn count(doc: &Value, path: &[&str]) -> u64 {
    let mut v = doc;
    for key in path {
        v = &v[key];
    }
    v.as_u64()
        .unwrap_or_else(|| panic!("{path:?} missing in {doc:#}"))
}

/// Writes `docs` to `name` in `dir`, one after another, and gives its path.
fn write(dir: &TempDir, name: &str, docs: &[Value]) -> String {
    let path = dir.path().join(name);
    let text: String = docs
        .iter()
        .map(|d| serde_json::to_string_pretty(d).expect("JSON") + "\n")
        .collect();
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
}

/// `tsumo merge FILES -o OUT`: its run and the merged document.
fn merge(dir: &TempDir, files: &[&str]) -> (Run, Value) {
    let out = dir.path().join("merged.json").display().to_string();
    let mut args = vec!["merge"];
    args.extend_from_slice(files);
    args.extend(["-o", &out]);
    let run = run_tsumo(&args, Duration::from_secs(20));
    assert!(run.status.code() != Some(2), "{}", run.stderr);
    let doc = common::read_json(Path::new(&out));
    (run, doc)
}

/// Two shards of `2s:0-16,3s:16,2s:16-0 --stay 1` on one instant, against one server: each
/// takes two of the four tables, and the merge has every player logged in and out, nothing
/// left on the server, and the arrivals per stage one process has.
#[test]
fn two_shards_split_a_profile_and_merge_to_one_process() {
    let server = Majiang::start();
    let url = server.url();
    let start_at = format_rfc3339(unix_now_ns() + 4_000_000_000);
    let shards: Vec<_> = (1..=2)
        .map(|i| {
            let (url, start_at) = (url.clone(), start_at.clone());
            std::thread::spawn(move || {
                let shard = format!("{i}/2");
                run_tsumo(
                    &[
                        "mahjong",
                        "--stages",
                        "2s:0-16,3s:16,2s:16-0",
                        "--stay",
                        "1",
                        "-t1",
                        "--think",
                        "0",
                        "--bot",
                        "tsumogiri",
                        "--shard",
                        &shard,
                        "--start-at",
                        &start_at,
                        "--json",
                        "-",
                        "--quiet",
                        &url,
                    ],
                    Duration::from_secs(60),
                )
            })
        })
        .collect();
    let runs: Vec<Run> = shards
        .into_iter()
        .map(|h| h.join().expect("shard thread"))
        .collect();
    let docs: Vec<Value> = runs
        .iter()
        .map(|run| {
            run.assert_success();
            run.json()
        })
        .collect();
    for doc in &docs {
        // Tables 0 and 2, or 1 and 3: eight players each, all in the ramp up.
        let arrivals: u64 = doc["stages"]
            .as_array()
            .expect("stages")
            .iter()
            .map(|s| count(s, &["arrivals"]))
            .sum();
        assert_eq!(arrivals, 8, "{doc:#}");
        assert_eq!(count(doc, &["plan", "players"]), 8, "{doc:#}");
    }
    let dir = TempDir::new("tsumo-mahjong-shards");
    let parts = write(&dir, "parts.json", &docs);
    let (run, doc) = merge(&dir, &[&parts]);
    assert!(run.status.success(), "{}\n{}", run.stdout, run.stderr);
    let logins = count(&doc, &["phases", "login", "ok"]);
    assert_eq!(logins, 16, "{doc:#}");
    assert_eq!(count(&doc, &["phases", "login", "failed"]), 0, "{doc:#}");
    assert_eq!(count(&doc, &["phases", "logout", "ok"]), logins, "{doc:#}");
    assert_eq!(count(&doc, &["phases", "logout", "failed"]), 0, "{doc:#}");
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
    let stages = doc["stages"].as_array().expect("merged stages");
    assert_eq!(stages.len(), 3, "{doc:#}");
    let arrivals: Vec<u64> = stages.iter().map(|s| count(s, &["arrivals"])).collect();
    assert!(arrivals[0] >= 12 && arrivals[0] <= 16, "{arrivals:?}");
    assert_eq!(arrivals.iter().sum::<u64>(), 16, "{arrivals:?}");
    assert_eq!(count(&stages[2], &["departures"]), 16, "{doc:#}");
    let logins_in_stages: u64 = stages.iter().map(|s| count(s, &["logins"])).sum();
    assert_eq!(logins_in_stages, 16, "{doc:#}");
    // Time to seat: the shards' histograms added exactly.
    for (i, stage) in stages.iter().enumerate() {
        let parts: u64 = docs
            .iter()
            .filter_map(|d| d["stages"].as_array()?.get(i).cloned())
            .map(|s| count(&s, &["time_to_seat", "count"]))
            .sum();
        assert_eq!(count(stage, &["time_to_seat", "count"]), parts, "{doc:#}");
    }
}

/// majiang-server killed 1.5 s into a profile of a minute: the session ends within seconds,
/// not at the profile's end, with the stages it reached, `ended_by: "server gone"`, exit 1.
#[test]
fn a_server_killed_mid_profile_ends_the_session_with_its_stages_so_far() {
    let server = Majiang::start();
    let url = server.url();
    let dir = TempDir::new("tsumo-mahjong-gone");
    let json = dir.path().join("session.json").display().to_string();
    let tsumo = Signalled::spawn(&[
        "mahjong",
        "--stages",
        "1s:0-8,60s:8",
        "-t1",
        "--think",
        "0",
        "--bot",
        "tsumogiri",
        "--json",
        &json,
        &url,
    ]);
    // Killed at 1.5 s, once every player is logged in (a busy machine may take longer).
    let spawned = std::time::Instant::now();
    assert_eq!(
        server.wait_session_files(8, Duration::from_secs(15)),
        8,
        "players did not log in"
    );
    std::thread::sleep(Duration::from_millis(1500).saturating_sub(spawned.elapsed()));
    // SAFETY: kill(2) on the test's own child, not reaped yet.
    assert_eq!(
        unsafe { libc::kill(server.pid() as libc::pid_t, libc::SIGKILL) },
        0
    );
    let run = tsumo.finish(Duration::from_secs(30));
    assert!(
        run.wall < Duration::from_secs(30),
        "ran {:?}: the session waited for the profile's end",
        run.wall
    );
    assert_eq!(run.status.code(), Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("the server went away"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("Stopped in stage 2"), "{}", run.stdout);
    let doc = common::read_json(Path::new(&json));
    assert_eq!(doc["ended_by"], "server gone", "{doc:#}");
    assert_eq!(doc["stopped_in_stage"], 2, "{doc:#}");
    let stages = doc["stages"].as_array().expect("stages");
    assert_eq!(stages.len(), 2, "{doc:#}");
    assert_eq!(count(&stages[0], &["arrivals"]), 8, "{doc:#}");
    let failure = doc["failure"].as_str().expect("failure");
    assert!(failure.starts_with("server gone in stage 2"), "{failure}");
}

/// A merge of saved parts where one part's server went away says so: `ended_by` "server
/// gone" and the earliest stage a part saw it go in, whichever part comes first (HTTP runs
/// and mahjong sessions alike).
#[test]
fn a_merge_of_parts_ends_by_a_server_gone_in_any_part() {
    let dir = TempDir::new("tsumo-merge-gone");
    for fixture in ["http-direct-v1.json", "mahjong-direct-v1.json"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(fixture);
        let base = common::read_json(&path);
        let part = |ended_by: &str, stage: Option<u64>| {
            let mut doc = base.clone();
            doc["ended_by"] = json!(ended_by);
            if let Some(stage) = stage {
                doc["stopped_in_stage"] = json!(stage);
            }
            doc
        };
        let a = write(&dir, "a.json", &[part("duration", None)]);
        let b = write(&dir, "b.json", &[part("server gone", Some(3))]);
        let c = write(&dir, "c.json", &[part("server gone", Some(2))]);
        let (_, doc) = merge(&dir, &[&a, &b, &c]);
        assert_eq!(doc["ended_by"], "server gone", "{fixture}: {doc:#}");
        assert_eq!(doc["stopped_in_stage"], 2, "{fixture}: {doc:#}");
        // Without a server gone: the first part's, as before.
        let d = write(&dir, "d.json", &[part("done", None)]);
        let (_, doc) = merge(&dir, &[&a, &d]);
        assert_eq!(doc["ended_by"], "duration", "{fixture}: {doc:#}");
    }
}
