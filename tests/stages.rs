//! `--stages` (issue 45): the rate over time. Bad profiles are refused in one line before any
//! traffic; against a real nginx, a run sends exactly the integral of its profile, interval by
//! interval, over several connections and threads.

mod common;

use std::time::Duration;

use common::nginx::Nginx;
use common::{json_errors_total, json_u64, run_tsumo};

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
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let mut all = vec!["--stages", profile, "--json", "-"];
    all.extend_from_slice(args);
    all.push(&url);
    let run = run_tsumo(&all, LIMIT);
    run.assert_success();
    let json = run.json();
    let total: u64 = per_second.iter().sum();
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
