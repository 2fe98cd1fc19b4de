//! A `--stages` run over time, against nginx: each saved interval carries the profile's target
//! over it (and a `-R` run's its rate), the page (`--html`) draws the target against what was
//! sent with each stage's start marked and renders in headless Chromium without a console
//! message, and `/metrics`' `tsumo_target_rate` is the profile's rate at the moment scraped.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::browser;
use common::nginx::Nginx;
use common::prometheus::get;
use common::schema::{assert_valid, Kind};
use common::{free_port, read_json, run_tsumo, Signalled, TempDir};

const LIMIT: Duration = Duration::from_secs(90);

/// Each interval's `target_rate`, in order.
fn targets(doc: &serde_json::Value) -> Vec<Option<f64>> {
    doc["intervals"]
        .as_array()
        .expect("intervals")
        .iter()
        .map(|i| i["target_rate"].as_f64())
        .collect()
}

/// The markup of the page's chart `id` (its `<figure>`).
fn chart<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom
        .find(&format!("data-chart=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id}"));
    let chart = &dom[at..];
    &chart[..chart.find("</figure>").expect("a closed chart")]
}

#[test]
fn intervals_carry_the_profiles_target_and_the_page_marks_the_stages() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = TempDir::new("tsumo-stages-page");
    let [json, html] = ["run.json", "run.html"].map(|f| dir.path().join(f).display().to_string());
    // 0 → 400 over 1 s (200), 400 for 1 s, a jump (stage 3) to 800, 800 for 1 s.
    run_tsumo(
        &[
            "--stages",
            "1s:0-400,1s:400,0s:400-800,1s:800",
            "-t1",
            "-c4",
            "--json",
            &json,
            "--html",
            &html,
            "--quiet",
            &url,
        ],
        LIMIT,
    )
    .assert_success();
    let doc = read_json(Path::new(&json));
    let whole: Vec<Option<f64>> = targets(&doc).into_iter().take(3).collect();
    assert_eq!(whole, [Some(200.0), Some(400.0), Some(800.0)], "{doc:#}");
    assert_eq!(doc["plan"]["stages"].as_array().map(Vec::len), Some(4));
    assert_valid(Kind::Run, &[Path::new(&json)]);

    let page = browser::open_sized(Path::new(&html), "page-stages", LIMIT, (1280, 800));
    page.assert_no_console_messages();
    // The headline's target is the profile and the share of its integral sent, not the mean
    // rate as if `-R` (which stays its value).
    let target = page
        .dom
        .find("data-figure=\"target\"")
        .map(|at| &page.dom[at..(at + 400).min(page.dom.len())])
        .unwrap_or_else(|| panic!("no target figure:\n{}", page.dom));
    assert!(
        target.contains("stages 0→400→800 req/s over 3 s, ")
            && target.contains("% of the integral sent"),
        "{target}"
    );
    assert_eq!(
        browser::figure_value(&page.dom, "data-figure=\"target\""),
        Some(467.0)
    );
    for id in ["rate-over-time", "latency-over-time"] {
        let chart = chart(&page.dom, id);
        for stage in ["stage 1", "stage 2", "stage 4"] {
            assert!(chart.contains(stage), "{id}: no {stage}:\n{chart}");
        }
        // The jump lasts nothing: no band of its own.
        assert!(!chart.contains("stage 3"), "{id}: a jump marked:\n{chart}");
    }
    let rate = chart(&page.dom, "rate-over-time");
    let legend_has = |name: &str| {
        rate.split("<text").any(|t| {
            t.split('>')
                .nth(1)
                .is_some_and(|v| v.trim().starts_with(name))
        })
    };
    assert!(legend_has("target"), "no target line:\n{rate}");
    // The target's line follows the profile: three levels, not the one mean.
    let lines = browser::Page {
        dom: rate.to_string(),
        console: Vec::new(),
        screenshot: Default::default(),
    }
    .attributes("polyline", "points");
    let target_line = &lines[0];
    let ys: std::collections::BTreeSet<&str> = target_line
        .split_whitespace()
        .filter_map(|p| p.split(',').nth(1))
        .collect();
    assert!(ys.len() >= 3, "target's line {target_line}");
}

#[test]
fn a_constant_rates_intervals_carry_its_rate() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &[
            "-R300", "-d2s", "-t1", "-c2", "--json", "-", "--quiet", &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let doc = run.json();
    let all = targets(&doc);
    assert!(all.len() >= 2, "{doc:#}");
    assert!(all.iter().all(|t| *t == Some(300.0)), "{all:?}");
}

/// `tsumo_target_rate` from `/metrics` on `port`, once it is there.
fn scrape_target(port: u16) -> Option<f64> {
    let (_, text) = get(port, "/metrics")?;
    text.lines()
        .find(|l| l.starts_with("tsumo_target_rate"))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn metrics_target_follows_the_profile() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let port = free_port();
    let at = format!("127.0.0.1:{port}");
    let mut tsumo = Signalled::spawn(&[
        "--stages",
        "4s:100,4s:300",
        "-t1",
        "-c4",
        "--quiet",
        "--dashboard",
        &at,
        &url,
    ]);
    let started = Instant::now();
    let mut seen = Vec::new();
    while started.elapsed() < Duration::from_secs(30) && !tsumo.exited() {
        if let Some(target) = scrape_target(port) {
            if seen.last() != Some(&target) {
                seen.push(target);
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let run = tsumo.finish(LIMIT);
    run.assert_success();
    // The hold at 100, then the one at 300 (and 0 once the profile is over, if scraped then).
    assert!(seen.len() >= 2, "targets scraped: {seen:?}");
    assert_eq!(seen[..2], [100.0, 300.0], "targets scraped: {seen:?}");
}

/// A ramp from 0 on `-c20` opens its connections as the rate comes to need them, not all
/// before the start: each connection carries its layer of the rate (a tenth of the peak, 10/s),
/// so nginx saw them connect over the whole ramp (each connection's first request's time less
/// its connection's age), the last one's first request near its end, never more than `-c`, and
/// the run sent its integral.
#[test]
fn a_ramp_opens_its_connections_as_they_come_due() {
    let dir = TempDir::new("tsumo-stages-connections");
    let log = dir.path().join("connects.log");
    let nginx = Nginx::builder()
        .http_snippet(&format!(
            "log_format connects '$connection $connection_requests $msec $connection_time';\n\
             access_log {} connects;",
            log.display()
        ))
        .start();
    let url = nginx.http_url("/index.html");
    // 0 → 200 over 2 s (200), 200 for 1 s: connection g's layer starts as the rate passes 10·g,
    // at g / 10 s, and its first request is due within 0.15 s of that.
    let run = run_tsumo(
        &[
            "--stages",
            "2s:0-200,1s:200",
            "-t2",
            "-c20",
            "--json",
            "-",
            "--quiet",
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let doc = run.json();
    assert_eq!(doc["counters"]["requests"].as_u64(), Some(400), "{doc:#}");
    nginx.access_log_wait(400);
    let text = std::fs::read_to_string(&log).expect("the connects log");
    // Each connection's first request and connect instants, from its first request's line.
    let firsts: Vec<(f64, f64)> = text
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f.as_slice() {
                [_, "1", msec, age] => {
                    let msec = msec.parse::<f64>().ok()?;
                    Some((msec, msec - age.parse::<f64>().ok()?))
                }
                _ => None,
            }
        })
        .collect();
    let connects: Vec<f64> = firsts.iter().map(|&(_, connect)| connect).collect();
    assert!(
        !connects.is_empty() && connects.len() <= 20,
        "{} connections:\n{text}",
        connects.len()
    );
    let opened = doc["counters"]["connections_opened"].as_u64();
    assert!(opened.is_some_and(|n| n <= 20), "{opened:?} opened");
    let first = connects.iter().copied().fold(f64::INFINITY, f64::min);
    let last = connects.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // Connection 19's first request is due 1.9 s to 2.05 s in, opened 0.1 s before: about
    // 1.8 s after the first (at 1:1 of the rate, 0.62 s in, all within 0.5 s).
    assert!(
        last - first >= 1.2,
        "connections opened within {:.3}s of each other: {connects:?}",
        last - first
    );
    let start_s = doc["start"]["actual_unix_ns"].as_u64().expect("start") as f64 / 1e9;
    let latest = firsts
        .iter()
        .map(|&(at, _)| at - start_s)
        .fold(0.0, f64::max);
    assert!(
        firsts.len() == 20 && latest >= 1.5,
        "the last of {} connections' first request {latest:.3}s in: {firsts:?}",
        firsts.len()
    );
}

/// A Lua script with `request`, `response` and `done` follows the profile: the integral sent
/// and answered, as `done` counts it and nginx logs it.
#[test]
fn a_script_run_follows_the_profile() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/");
    let dir = TempDir::new("tsumo-stages-script");
    let script = dir.path().join("hooks.lua");
    std::fs::write(
        &script,
        "request = function() return wrk.format(nil, \"/index.html\") end\n\
         response = function(status, headers, body) end\n\
         done = function(summary, latency, requests)\n\
           io.write(string.format(\"done: %d requests\\n\", summary.requests))\n\
         end\n",
    )
    .expect("the script");
    // 0 → 200 over 1 s (100), 200 for 1 s: 300 requests.
    let run = run_tsumo(
        &[
            "--stages",
            "1s:0-200,1s:200",
            "-t1",
            "-c2",
            "-s",
            &script.display().to_string(),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    assert!(run.stdout.contains("done: 300 requests"), "{}", run.stdout);
    assert_eq!(nginx.access_log_wait(300).len(), 300);
}

/// `--vs` with `--stages`: each side runs the whole profile.
#[test]
fn each_side_of_vs_runs_the_whole_profile() {
    let nginx = Nginx::start();
    let (a, b) = (
        nginx.http_url("/index.html"),
        nginx.http_url("/index.html?b"),
    );
    let dir = TempDir::new("tsumo-stages-vs");
    let json = dir.path().join("vs.json");
    let run = run_tsumo(
        &[
            "--stages",
            "1s:0-200,1s:200",
            "-t1",
            "-c2",
            "--vs",
            &b,
            "--rounds",
            "1",
            "--json",
            &json.display().to_string(),
            &a,
        ],
        LIMIT,
    );
    run.assert_success();
    let log = nginx.access_log_wait(600);
    let side_b = log.iter().filter(|l| l.uri.ends_with("?b")).count();
    assert_eq!((log.len(), side_b), (600, 300), "{}", run.stdout);
    let doc = read_json(&json);
    let requests: Vec<u64> = doc["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("{doc:#}"))
        .iter()
        .map(|r| r["counters"]["requests"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(requests, [300, 300], "{doc:#}");
}
