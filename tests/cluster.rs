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
            Nodes::Namespaces(cluster) => cluster.command(i, common::TSUMO),
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

    /// Runs `tsumo ARGS` on every node with one `--start-at` (3 s ahead, the same instant for
    /// every shard, so they derive one run id too) and `--json - --quiet URL`, merges their
    /// documents from one stream, and checks what both modes' shards and merge say of the parts.
    fn run_merged(&self, args: &[&str], url: &str) -> ClusterRun {
        let start_at = format_rfc3339(unix_now_ns() + 3_000_000_000);
        let args: Vec<String> = args
            .iter()
            .chain(&["--start-at", &start_at, "--json", "-", "--quiet", url])
            .map(|a| a.to_string())
            .collect();
        let runs = self.run_shards(&args);
        let docs: Vec<serde_json::Value> = runs.iter().map(|r| r.assert_success().json()).collect();
        // The fallback's --bind, saved with the plan: each shard's address, all four merged.
        let bind = |addrs: Vec<String>| match self {
            Nodes::Loopback => serde_json::json!(addrs),
            Nodes::Namespaces(_) => serde_json::Value::Null,
        };
        // Each shard: its place, the run id they share, the start they were given.
        for (i, doc) in docs.iter().enumerate() {
            assert_eq!(doc["shard"]["index"], i + 1, "{doc:#}");
            assert_eq!(doc["shard"]["count"], SHARDS, "{doc:#}");
            assert_eq!(doc["run_id"], docs[0]["run_id"], "{doc:#}");
            assert_eq!(doc["start"]["intended"], start_at.as_str(), "{doc:#}");
            assert_eq!(doc["plan"]["bind"], bind(vec![self.node(i)]), "{doc:#}");
        }
        let (report, merged) = merge(&runs);
        eprintln!("{report}");
        let nodes = (0..SHARDS).map(|i| self.node(i)).collect();
        assert_eq!(merged["plan"]["bind"], bind(nodes), "{merged:#}");
        // The merge's line, then one line per shard.
        let run_id = docs[0]["run_id"].as_str().expect("run_id");
        let lines: Vec<&str> = report.lines().collect();
        let merged_line = format!("Merged {SHARDS} parts of run {run_id}: ");
        assert!(
            lines.iter().any(|l| l.starts_with(&merged_line)),
            "{report}"
        );
        for i in 1..=SHARDS {
            let shard = format!("shard {i}/{SHARDS}");
            assert!(lines.iter().any(|l| l.contains(&shard)), "{report}");
        }
        ClusterRun {
            docs,
            report,
            merged,
        }
    }

    /// How many of `sources` (remote addresses in nginx's log) came from each node, in shard
    /// order; an address that is no node's fails the test.
    fn per_node(&self, sources: impl IntoIterator<Item = String>) -> Vec<usize> {
        let nodes: Vec<String> = (0..SHARDS).map(|i| self.node(i)).collect();
        let mut counts = vec![0; SHARDS];
        for source in sources {
            match nodes.iter().position(|node| *node == source) {
                Some(i) => counts[i] += 1,
                None => panic!("{source} is none of the nodes {nodes:?}"),
            }
        }
        counts
    }
}

/// One run over the nodes, merged: every shard's document, and the merge's report and document.
struct ClusterRun {
    docs: Vec<serde_json::Value>,
    report: String,
    merged: serde_json::Value,
}

impl ClusterRun {
    /// The merge's count at `path`, checked to be the sum of the shards' counts there.
    fn summed(&self, path: &str) -> u64 {
        let shards: u64 = self.docs.iter().map(|doc| json_u64(doc, path)).sum();
        assert_eq!(
            json_u64(&self.merged, path),
            shards,
            "{path}\n{}",
            self.report
        );
        shards
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

#[test]
fn four_nodes_at_20000_requests_per_second_merge_to_the_whole_run() {
    let _alone = one_at_a_time();
    let nodes = Nodes::create("cluster http");
    let mut nginx = Nginx::builder();
    if let Some(addr) = nodes.server() {
        nginx = nginx.also_listen(&addr);
    }
    let nginx = nginx.start();
    let host = nodes.server().unwrap_or_else(|| "127.0.0.1".to_string());
    let url = format!("http://{host}:{}/index.html", nginx.http_port());
    let run = nodes.run_merged(&["-t1", "-c40", "-R20000", "-d5s"], &url);
    let report = &run.report;
    for doc in &run.docs {
        assert_eq!(doc["plan"]["rate"], 5000, "{doc:#}");
    }
    // The merged run in wrk2's layout before the lines.
    assert!(report.contains("\nRequests/sec: "), "{report}");
    // The merge is exactly the sum of its parts (not a rate: this 2-core machine is shared, and
    // a busy moment leaves requests unsent; the rate is a benchmark's to measure).
    assert_eq!(run.merged["plan"]["rate"], 20_000, "{report}");
    run.summed("latency.count");
    run.summed("counters.unsent.busy");
    assert_eq!(common::json_errors_total(&run.merged), 0, "{report}");
    let elapsed = json_f64(&run.merged, "elapsed_s");
    let longest = run
        .docs
        .iter()
        .map(|d| json_f64(d, "elapsed_s"))
        .fold(0.0, f64::max);
    assert_eq!(elapsed, longest, "{report}");
    let over_interval: f64 = run
        .docs
        .iter()
        .map(|d| json_f64(d, "requests_per_sec") * json_f64(d, "elapsed_s") / elapsed)
        .sum();
    let rate = json_f64(&run.merged, "requests_per_sec");
    assert!(
        (rate - over_interval).abs() <= 1e-6 * over_interval,
        "merged rate {rate}/s is not the shards' requests over the longest interval \
         ({over_interval}/s)\n{report}"
    );

    // nginx saw each node's address: each shard's counted requests, plus at most one in flight
    // per connection when the run ended.
    let requests = run.summed("counters.requests") as usize;
    assert!(requests > 0, "{report}");
    let log = nginx.access_log_wait(requests);
    let by_node = nodes.per_node(log.into_iter().map(|l| l.remote_addr));
    for (i, n) in by_node.iter().enumerate() {
        let counted = json_u64(&run.docs[i], "counters.requests") as usize;
        let connections = json_u64(&run.docs[i], "plan.connections") as usize;
        assert!(
            (counted..=counted + connections).contains(n),
            "{}: nginx logged {n}, the shard counted {counted}",
            nodes.node(i)
        );
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
    let args = [
        "mahjong", "-c256", "-t1", "--think", "0", "--ramp", "5ms", "-d", "10s",
    ];
    let run = nodes.run_merged(&args, &url);
    let report = &run.report;
    for doc in &run.docs {
        assert_eq!(doc["plan"]["players"], 64, "{doc:#}");
    }
    // The session report of all 256 players before the lines.
    assert!(
        report.starts_with("Mahjong session @ ") && report.contains("\n  256 "),
        "{report}"
    );
    assert_eq!(run.summed("plan.players"), 256);
    for phase in ["login", "connect", "logout"] {
        assert_eq!(
            run.summed(&format!("phases.{phase}.ok")),
            256,
            "{phase}: {report}"
        );
        assert_eq!(
            run.summed(&format!("phases.{phase}.failed")),
            0,
            "{phase}: {report}"
        );
    }
    assert_eq!(run.summed("games.started"), 64, "{report}");
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
    // Each node's 64 players logged in from its own address.
    let logins = nginx
        .access_log_wait(3 * 256)
        .into_iter()
        .filter(|l| l.uri.starts_with("/server/auth/"))
        .map(|l| l.remote_addr);
    assert_eq!(nodes.per_node(logins), [64; SHARDS], "logins by node");
}
