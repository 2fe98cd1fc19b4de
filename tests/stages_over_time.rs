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
