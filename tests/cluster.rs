//! A cluster on this machine: four network namespaces as four generator nodes, one tsumo shard
//! in each with a Kubernetes Indexed Job's environment (`JOB_COMPLETION_INDEX`,
//! `TSUMO_SHARDS`) and one `--start-at`, against nginx (and majiang-server behind it) in the
//! root namespace on the bridge's address; their `--json -` documents are merged from one
//! stream, as `kubectl logs` of the pods prints them.
//!
//! Where namespaces cannot be made (not root, no netns), the test says so on stderr and runs
//! the four shards as processes bound with `--bind` to 127.0.0.2 … 127.0.0.5 instead
//! (`TSUMO_TEST_NO_NETNS=1` takes that path on purpose).

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use common::majiang::Majiang;
use common::netns::Cluster;
use common::nginx::Nginx;
use common::{json_f64, json_u64, run_command, tsumo, Run};
use tsumo::sys::wallclock::{format_rfc3339, unix_now_ns};

const SHARDS: usize = 4;
const LIMIT: Duration = Duration::from_secs(60);

/// One cluster test at a time: each alone takes what this machine's two cores give.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where the shards run: namespaces, or (the fallback) processes with distinct source
/// addresses on the loopback.
enum Nodes {
    Namespaces(Cluster),
    Loopback,
}

impl Nodes {
    fn create(test: &str) -> Nodes {
        // TSUMO_TEST_NO_NETNS=1 takes the fallback on purpose (to test it).
        let made = match std::env::var_os("TSUMO_TEST_NO_NETNS") {
            Some(_) => Err("TSUMO_TEST_NO_NETNS is set".to_string()),
            None => Cluster::create(SHARDS),
        };
        match made {
            Ok(cluster) => Nodes::Namespaces(cluster),
            Err(e) => {
                eprintln!(
                    "{test}: network namespaces cannot be created here ({e}); FALLING BACK to \
                     {SHARDS} processes bound to 127.0.0.2..{} with --bind",
                    1 + SHARDS
                );
                Nodes::Loopback
            }
        }
    }

    /// The address servers listen on for the nodes (besides 127.0.0.1).
    fn server(&self) -> Option<String> {
        match self {
            Nodes::Namespaces(cluster) => Some(cluster.server.to_string()),
            Nodes::Loopback => None,
        }
    }

    /// The address shard `i`'s traffic comes from.
    fn node(&self, i: usize) -> String {
        match self {
            Nodes::Namespaces(cluster) => cluster.nodes[i].to_string(),
            Nodes::Loopback => format!("127.0.0.{}", 2 + i),
        }
    }

    /// `tsumo ARGS` as shard `i` (0-based) of an Indexed Job would run it.
    fn shard(&self, i: usize, args: &[String]) -> Command {
        let mut command = match self {
            Nodes::Namespaces(cluster) => cluster.command(i, env!("CARGO_BIN_EXE_tsumo")),
            Nodes::Loopback => tsumo(),
        };
        // The subcommand word first; the fallback's --bind after it.
        let (mode, rest) = match args.split_first() {
            Some((word, rest)) if word == "mahjong" => (Some(word), rest),
            _ => (None, args),
        };
        command.args(mode);
        if let Nodes::Loopback = self {
            command.args(["--bind", &self.node(i)]);
        }
        command
            .args(rest)
            .env("JOB_COMPLETION_INDEX", i.to_string())
            .env("TSUMO_SHARDS", SHARDS.to_string());
        command
    }

    /// Runs every shard at once; their runs in shard order.
    fn run_shards(&self, args: &[String]) -> Vec<Run> {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..SHARDS)
                .map(|i| {
                    let command = self.shard(i, args);
                    scope.spawn(move || run_command(command, LIMIT))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("shard thread"))
                .collect()
        })
    }
}

/// `tsumo merge - -o FILE` on the shards' stdout as one stream: its stdout and the merged JSON.
fn merge(runs: &[Run]) -> (String, serde_json::Value) {
    let dir = common::TempDir::new("tsumo-cluster");
    let merged_path = dir.path().join("merged.json");
    let stream: String = runs.iter().map(|r| r.stdout.as_str()).collect();
    let out = common::merge_stream(&stream, &merged_path);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = serde_json::from_str(&std::fs::read_to_string(&merged_path).expect("merged"))
        .expect("merged JSON");
    (stdout, merged)
}

/// A start 3 s ahead, the same instant for every shard (so they derive one run id too).
fn start_at() -> String {
    format_rfc3339(unix_now_ns() + 3_000_000_000)
}

#[test]
fn four_nodes_at_20000_requests_per_second_merge_to_the_whole_run() {
    const RATE: f64 = 20_000.0;
    let _alone = one_at_a_time();
    let nodes = Nodes::create("cluster http");
    let mut nginx = Nginx::builder();
    if let Some(addr) = nodes.server() {
        nginx = nginx.also_listen(&addr);
    }
    let nginx = nginx.start();
    let host = nodes.server().unwrap_or_else(|| "127.0.0.1".to_string());
    let url = format!("http://{host}:{}/index.html", nginx.http_port());
    let args: Vec<String> = [
        "-t1",
        "-c40",
        "-R20000",
        "-d5s",
        "--start-at",
        &start_at(),
        "--json",
        "-",
        "--quiet",
        &url,
    ]
    .map(String::from)
    .to_vec();
    let runs = nodes.run_shards(&args);
    let docs: Vec<serde_json::Value> = runs.iter().map(|r| r.assert_success().json()).collect();
    for (i, doc) in docs.iter().enumerate() {
        assert_eq!(doc["shard"]["index"], i + 1, "{doc:#}");
        assert_eq!(doc["shard"]["count"], SHARDS);
        assert_eq!(doc["plan"]["rate"], 5000);
        assert_eq!(doc["run_id"], docs[0]["run_id"]);
    }
    let (report, merged) = merge(&runs);
    eprintln!("{report}");
    let lines: Vec<&str> = report.lines().collect();
    assert!(report.contains("\nRequests/sec: "), "{report}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Merged 4 parts of run ")),
        "{report}"
    );
    for i in 1..=SHARDS {
        assert!(
            lines.iter().any(|l| l.contains(&format!("shard {i}/4"))),
            "{report}"
        );
    }
    let rate = json_f64(&merged, "requests_per_sec");
    assert!(
        (rate - RATE).abs() / RATE < 0.01,
        "merged rate {rate}/s is not within 1% of {RATE}\n{report}"
    );
    let counts: u64 = docs.iter().map(|d| json_u64(d, "latency.count")).sum();
    assert_eq!(json_u64(&merged, "latency.count"), counts);
    assert_eq!(common::json_errors_total(&merged), 0, "{report}");

    // nginx saw each node's address, with a quarter of the requests each.
    let requests = json_u64(&merged, "counters.requests") as usize;
    let log = nginx.access_log_wait(requests);
    let mut by_source: BTreeMap<String, usize> = BTreeMap::new();
    for line in &log {
        *by_source.entry(line.remote_addr.clone()).or_default() += 1;
    }
    let want: Vec<String> = (0..SHARDS).map(|i| nodes.node(i)).collect();
    let seen: Vec<String> = by_source.keys().cloned().collect();
    assert_eq!(seen, want, "{by_source:?}");
    for (addr, n) in &by_source {
        let share = *n as f64 / requests as f64;
        assert!((share - 0.25).abs() < 0.01, "{addr}: {n} of {requests}");
    }
}

#[test]
fn four_nodes_of_64_mahjong_players_all_play_and_log_out() {
    let _alone = one_at_a_time();
    let nodes = Nodes::create("cluster mahjong");
    let server = Majiang::start();
    let mut nginx = Nginx::builder().ws_proxy("majiang", server.port());
    if let Some(addr) = nodes.server() {
        nginx = nginx.also_listen(&addr);
    }
    let nginx = nginx.start();
    let host = nodes.server().unwrap_or_else(|| "127.0.0.1".to_string());
    let url = format!("http://{host}:{}/server", nginx.port("majiang"));
    let args: Vec<String> = [
        "mahjong",
        "-c256",
        "-t1",
        "--think",
        "0",
        "--ramp",
        "5ms",
        "-d",
        "10s",
        "--start-at",
        &start_at(),
        "--json",
        "-",
        "--quiet",
        &url,
    ]
    .map(String::from)
    .to_vec();
    let runs = nodes.run_shards(&args);
    let docs: Vec<serde_json::Value> = runs.iter().map(|r| r.assert_success().json()).collect();
    for (i, doc) in docs.iter().enumerate() {
        assert_eq!(doc["shard"]["index"], i + 1, "{doc:#}");
        assert_eq!(doc["plan"]["players"], 64);
    }
    let (report, merged) = merge(&runs);
    eprintln!("{report}");
    // The session report of all 256 players, then the merged line and the shards' lines.
    assert!(
        report.starts_with("Mahjong session @ ") && report.contains("\n  256 "),
        "{report}"
    );
    assert!(report.contains("\nMerged 4 parts of run "), "{report}");
    assert_eq!(merged["plan"]["players"], 256);
    for phase in ["login", "connect", "logout"] {
        assert_eq!(merged["phases"][phase]["ok"], 256, "{phase}: {report}");
        assert_eq!(merged["phases"][phase]["failed"], 0, "{phase}: {report}");
    }
    assert_eq!(merged["games"]["started"], 64, "{report}");
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
    // Each node's 64 players logged in from its own address.
    let logins: Vec<String> = nginx
        .access_log_wait(3 * 256)
        .into_iter()
        .filter(|l| l.uri.starts_with("/server/auth/"))
        .map(|l| l.remote_addr)
        .collect();
    for i in 0..SHARDS {
        let node = nodes.node(i);
        let n = logins.iter().filter(|a| **a == node).count();
        assert_eq!(n, 64, "logins from {node}");
    }
}
