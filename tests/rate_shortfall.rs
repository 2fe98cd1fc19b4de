//! A fixed-rate run that does not reach its rate says so in one line, with the share reached and
//! the side that held it back — the server (every connection busy waiting for responses) or
//! tsumo itself (its worker thread out of CPU) — and only then. tsumo sending late is said once,
//! with its cause: threads are advised only when its own CPU was the limit.

mod common;

use std::time::Duration;

use common::faulty::{Behavior, FaultyServer};
use common::nginx::Nginx;

/// Runs tsumo with `--json FILE` (the text report stays on stdout); returns both.
fn run(args: &[&str], url: &str) -> (common::Run, serde_json::Value) {
    let dir = common::TempDir::new("shortfall");
    let json = dir.path().join("run.json");
    let json = json.to_str().unwrap();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", json, url]);
    let run = common::run_tsumo(&all, Duration::from_secs(30));
    run.assert_success();
    let doc = serde_json::from_str(&std::fs::read_to_string(json).expect("JSON written"))
        .expect("JSON parses");
    (run, doc)
}

fn shortfall_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|l| l.starts_with("Rate not reached:"))
        .collect()
}

/// Two connections to a server that answers after 50 ms carry at most 40 requests a second: at
/// `-R200` the report names the server.
#[test]
fn a_slow_server_is_named_as_what_held_the_rate_back() {
    let server = FaultyServer::start(Behavior::Slow(Duration::from_millis(50)));
    let (run, doc) = run(&["-t1", "-c2", "-d3s", "-R200"], &server.url("/"));
    let lines = shortfall_lines(&run.stdout);
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    assert!(
        lines[0].contains("held back by the server or the network"),
        "{}",
        lines[0]
    );
    let shortfall = &doc["rate_shortfall"];
    assert_eq!(shortfall["side"], "server", "{shortfall}");
    // At most 40 of 200 req/s: the server's ceiling (a busy machine only lowers it).
    let share = shortfall["share"].as_f64().unwrap();
    assert!(
        share > 0.0 && share < 0.3,
        "40 of 200 req/s at most: {share}"
    );
    assert!(
        shortfall["due_while_busy_share"].as_f64().unwrap() > 0.9,
        "{shortfall}"
    );
}

/// One thread whose script spends ~2 ms of CPU on every request cannot send 20,000 a second to
/// an nginx that could answer them: the report names tsumo. 100 connections and at most ~500
/// requests a second, so that some connection always waits on the script: the thread idles only
/// if nginx takes over 200 ms a response. A machine busy enough for that has made nginx the
/// limit, truthfully (CI once saw 75 ms a response with 0.5 ms a request), so the run is tried
/// again, three tries in all, while the server is named.
#[test]
fn a_starved_generator_is_named_as_what_held_the_rate_back() {
    let nginx = Nginx::start();
    let dir = common::TempDir::new("starved");
    let script = dir.path().join("busy.lua");
    std::fs::write(
        &script,
        "local n = 0\n\
         request = function()\n\
           local t = os.clock() + 0.002\n\
           while os.clock() < t do n = n + 1 end\n\
           return wrk.format(nil, '/index.html')\n\
         end\n",
    )
    .unwrap();
    // Beside a CPU hog on each core a 2 ms request() was once kept off its core past the
    // default 1 s and interrupted, when the limit counted wall time (it counts CPU time since
    // issue 43); a wide limit keeps the time limit out of what this test checks.
    let args = [
        "-t1",
        "-c100",
        "-d3s",
        "-R20000",
        "--script-timeout",
        "10s",
        "-s",
        script.to_str().unwrap(),
    ];
    let url = nginx.http_url("/index.html");
    let (run, doc) = common::up_to_three_tries(
        || run(&args, &url),
        |(run, doc)| {
            // A busy machine may keep the thread off its core: then that load is named.
            let named = shortfall_lines(&run.stdout).join("\n");
            (doc["rate_shortfall"]["side"] == "server" || named.contains("machine's other load"))
                .then(|| format!("the server or the machine was named:\n{}", run.stdout))
        },
    );
    let lines = shortfall_lines(&run.stdout);
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    assert_eq!(doc["rate_shortfall"]["side"], "generator", "{doc:#}");
    // tsumo itself; or, where others used the machine through all three tries (a CPU hog on
    // each core keeps the thread off its core half the time), that load: tsumo's side either
    // way, never the server.
    let others = doc["rate_shortfall"]["machine"]["others_cores"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(
        lines[0].contains("held back by tsumo itself")
            || (others >= 0.5 && lines[0].contains("held back by the machine's other load")),
        "{}",
        lines[0]
    );
}

/// A rate nginx carries with ease: no such line, no such JSON field. 10 requests a second per
/// connection, so the allowance of one in flight per connection (10 of 300) covers a busy
/// moment of this shared machine.
#[test]
fn a_rate_reached_says_nothing() {
    let nginx = Nginx::start();
    let (run, doc) = run(
        &["-t1", "-c10", "-d3s", "-R100"],
        &nginx.http_url("/index.html"),
    );
    assert!(shortfall_lines(&run.stdout).is_empty(), "{}", run.stdout);
    assert!(doc.get("rate_shortfall").is_none(), "{doc}");
    // tsumo's own cost is reported in every HTTP run.
    assert!(
        run.stdout.lines().any(|l| l.starts_with("tsumo: ")),
        "{}",
        run.stdout
    );
    assert!(doc["tsumo"]["cpu_s"].as_f64().unwrap() > 0.0);
    assert!(doc["tsumo"]["peak_rss_bytes"].as_u64().unwrap() > 1 << 20);
    assert_eq!(doc["ended_by"], "duration");
}

/// Issue 19 (11, and the unsent wording): one connection to a server that answers after 1 s,
/// at 20 requests a second for 3.5 s: 4 requests are sent (at 0, 1, 2 and 3 s), the ~56 others
/// already due at the last send are never sent, and the ~10 that fell due behind the response
/// in progress at the end are left out, as that request is (the end falls half-way through a
/// response, never between one and the next send). The never sent belong in the share held
/// back by the server (before: left out, the line said about 67%, as if the server had held
/// back only the sent ones), and the unsent line says its number once.
#[test]
fn requests_never_sent_count_in_the_share_held_back_by_the_server() {
    let server = FaultyServer::start(Behavior::Slow(Duration::from_secs(1)));
    let (run, doc) = run(
        &["-t1", "-c1", "-d3500ms", "-R20", "-T5s"],
        &server.url("/"),
    );
    let unsent = doc["counters"]["unsent"]["busy"].as_u64().unwrap();
    // Due before the last send (about 3 s in: ~60, 4 of them sent), not the ~66 due before the
    // end.
    assert!((45..=62).contains(&unsent), "{doc:#}");
    let unsent_lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("Unsent:"))
        .collect();
    assert_eq!(
        unsent_lines,
        vec![format!(
            "Unsent: {unsent} requests fell due but were never sent while their connection \
             waited for earlier responses"
        )],
        "{}",
        run.stdout
    );
    let shortfall = &doc["rate_shortfall"];
    assert_eq!(shortfall["side"], "server", "{shortfall}");
    let busy_share = shortfall["due_while_busy_share"].as_f64().unwrap();
    // All but the first request fell due while the connection waited (sent late or never).
    assert!(busy_share > 0.9, "{shortfall}");
    let lines = shortfall_lines(&run.stdout);
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    let why = format!(
        "{:.1}% of requests fell due while their connection still waited for a response, \
         {unsent} of them never sent (-c 1).",
        busy_share * 100.0
    );
    assert!(
        lines[0].ends_with(&why),
        "{}\nwanted the end: {why}",
        lines[0]
    );
}

/// `-R2000` with a CPU hog on tsumo's core: tsumo sends late, but its thread uses a few percent of
/// the core and waits for it the rest. The warning names the machine's other load, not "add
/// threads (-t)" (which more threads on the same core would not cure). The saved run says the
/// same: its JSON keeps the cause, and `tsumo report` prints the run's line.
#[test]
fn lateness_beside_a_hog_names_the_other_load_not_threads() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = common::TempDir::new("lateness-hog");
    let json = dir.path().join("run.json");
    let args = [
        "-t1",
        "-c10",
        "-d3s",
        "-R2000",
        "--json",
        json.to_str().unwrap(),
        &url,
    ];
    let run = common::up_to_three_tries(
        || {
            let _hog = common::hog::Hog::greedy();
            common::hog::pinned_tsumo(&args, &[], Duration::from_secs(30))
        },
        |run| {
            cause(run)
                .is_none()
                .then(|| format!("tsumo kept to its schedule beside the hog:\n{}", run.stdout))
        },
    );
    run.assert_success();
    // The warning, or (a machine so busy that the rate was not reached) the shortfall's line.
    let said = cause(&run).unwrap_or_default();
    assert!(!said.contains("add threads"), "{said}");
    assert!(said.contains("machine's other load: "), "{said}");
    let doc = common::read_json(&json);
    if said.starts_with("Warning: tsumo fell behind") {
        assert_eq!(doc["behind_schedule"]["cause"], "other_load", "{doc:#}");
    }
    // `tsumo report` of the saved run: its page says the run's line, word for word.
    let page = dir.path().join("run.html");
    let report = common::run_tsumo(
        &[
            "report",
            json.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        Duration::from_secs(30),
    );
    report.assert_success();
    let html = std::fs::read_to_string(&page).expect("the page");
    let escaped = said.replace('&', "&amp;").replace('\'', "&#39;");
    assert!(html.contains(&escaped), "{said}\nnot on the page:\n{html}");
}

/// The line that says why tsumo was late: its warning, or the rate not reached.
fn cause(run: &common::Run) -> Option<String> {
    run.stdout
        .lines()
        .find(|l| l.starts_with("Warning: tsumo fell behind") || l.starts_with("Rate not reached"))
        .map(str::to_string)
}
