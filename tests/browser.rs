//! tsumo's charts and pages in a real browser (headless Chromium): they render with data and
//! without a console message, and a screenshot of each is left under `target/browser/` to look
//! at (the pages' at 1280×800: the answer shows without scrolling). Each kind of page — a run,
//! a mahjong session, a comparison, a capacity search, merged shards — is made by tsumo from a
//! real run, and its headline figures are checked against the JSON's. The harness itself is
//! checked too: it sees console errors and ends a page that never loads.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::browser::{self, html_page};
use common::majiang::Majiang;
use common::serial::SerialServer;
use common::{json_errors_total, json_f64, json_u64, read_json, run_tsumo, TempDir};
use tsumo::sys::wallclock::{format_rfc3339, unix_now_ns};

const BROWSER_LIMIT: Duration = Duration::from_secs(90);

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `tsumo plot` of two saved runs, as a page: one line per run, each with its points, the
/// legend and the percentile axis shown, nothing on the console.
#[test]
fn plot_chart_has_data_in_a_browser() {
    let dir = TempDir::new("tsumo-browser");
    let svg_path = dir.path().join("latency.svg");
    let [direct, proxied] =
        ["http-direct-v1.json", "http-proxied-v1.json"].map(|f| fixture(f).display().to_string());
    let svg_arg = svg_path.display().to_string();
    run_tsumo(
        &["plot", &direct, &proxied, "-o", &svg_arg],
        Duration::from_secs(30),
    )
    .assert_success();
    let svg = std::fs::read_to_string(&svg_path).expect("SVG written");
    let html = dir.path().join("latency.html");
    std::fs::write(&html, html_page("tsumo plot", &svg)).expect("write page");

    let page = browser::open(&html, "plot", BROWSER_LIMIT);
    page.assert_no_console_messages();
    let lines = page.attributes("polyline", "points");
    assert_eq!(lines.len(), 2, "one line per run:\n{}", page.dom);
    for points in &lines {
        let count = points.split_whitespace().count();
        assert!(count > 10, "a line of {count} points: {points:?}");
    }
    for text in ["direct", "proxied", "0%", "90%", "99%", "Percentile"] {
        assert!(
            page.dom.contains(&format!("\n{text}\n</text>")),
            "{text}:\n{}",
            page.dom
        );
    }
    let png = std::fs::read(&page.screenshot).expect("screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
}

/// Console output and uncaught exceptions are caught; the DOM is the one after the scripts.
#[test]
fn the_harness_sees_console_errors_and_the_dom_after_scripts() {
    let dir = TempDir::new("tsumo-browser");
    let html = dir.path().join("noisy.html");
    let body = "<p id=\"p\">before</p>\n<script>\
                document.getElementById('p').textContent = 'after';\
                console.error('broken chart');\
                notAFunction();\
                </script>";
    std::fs::write(&html, html_page("noisy", body)).expect("write page");
    let page = browser::open(&html, "harness-noisy", BROWSER_LIMIT);
    assert!(page.dom.contains("<p id=\"p\">after</p>"), "{}", page.dom);
    assert_eq!(page.console.len(), 2, "{:?}", page.console);
    assert!(
        page.console[0].contains("broken chart"),
        "{:?}",
        page.console
    );
    assert!(
        page.console[1].contains("notAFunction is not defined"),
        "{:?}",
        page.console
    );
    let caught = std::panic::catch_unwind(|| page.assert_no_console_messages());
    assert!(caught.is_err(), "console errors must fail the check");
}

/// A page whose script never ends: the harness fails at its limit and leaves no browser
/// process behind.
#[test]
fn a_page_that_never_loads_is_killed_at_the_limit() {
    let dir = TempDir::new("tsumo-browser");
    let html = dir.path().join("endless.html");
    std::fs::write(&html, html_page("endless", "<script>for (;;) {}</script>"))
        .expect("write page");
    let started = Instant::now();
    let result = std::panic::catch_unwind(|| {
        browser::open(&html, "harness-endless", Duration::from_secs(5))
    });
    let message = match result {
        Ok(page) => panic!("an endless page loaded: {page:?}"),
        Err(e) => e.downcast_ref::<String>().cloned().unwrap_or_default(),
    };
    assert!(message.contains("still running after 5s"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(60));
    // No process is left that was given this page.
    let page = html.display().to_string();
    let left: Vec<String> = std::fs::read_dir("/proc")
        .expect("read /proc")
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&page))
        .collect();
    assert!(left.is_empty(), "left running: {left:?}");
}

/// The page's other charts, from plain data as the page will give them: lines over time and a
/// capacity curve, each line with its points, nothing on the console.
#[test]
fn over_time_and_capacity_charts_have_data_in_a_browser() {
    use tsumo::report::chart::{self, Answer, Objective, Series, Titles};
    let titles = |title: &str| Titles {
        title: title.to_string(),
        subtitle: "-R1000 -c10 -d6s".to_string(),
    };
    let seconds = |f: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> {
        (1..=6).map(|s| (f64::from(s), f(f64::from(s)))).collect()
    };
    let latency = chart::over_time(
        &titles("Latency over time"),
        "Latency (ms)",
        &[
            Series::new("p50", seconds(&|_| 0.6)),
            Series::new("p99", seconds(&|s| if s == 4.0 { 9.0 } else { 1.8 })),
            Series::new("max", seconds(&|s| if s == 4.0 { 31.0 } else { 4.0 })),
        ],
    )
    .expect("latency over time");
    let capacity = chart::capacity(
        &titles("Capacity"),
        ("Offered load (req/s)", "p99 (ms)"),
        &[Series::new(
            "p99",
            vec![(1000.0, 1.1), (2000.0, 1.4), (4000.0, 3.0), (8000.0, 25.0)],
        )],
        &[Objective {
            name: "objective: p99 ≤ 10 ms".to_string(),
            y: 10.0,
        }],
        Some(&Answer {
            name: "capacity: 4000 req/s".to_string(),
            x: 4000.0,
        }),
    )
    .expect("capacity");
    let dir = TempDir::new("tsumo-browser");
    for (name, svg, points) in [
        ("chart-over-time", latency, vec![6, 6, 6]),
        ("chart-capacity", capacity, vec![4, 2, 2]),
    ] {
        let html = dir.path().join(format!("{name}.html"));
        std::fs::write(&html, html_page(name, &svg)).expect("write page");
        let page = browser::open(&html, name, BROWSER_LIMIT);
        page.assert_no_console_messages();
        let counts: Vec<usize> = page
            .attributes("polyline", "points")
            .iter()
            .map(|p| p.split_whitespace().count())
            .collect();
        assert_eq!(counts, points, "{name}:\n{}", page.dom);
    }
}

/// Where the pages' screenshots are looked at: 1280×800, the answer must show without scrolling.
const PAGE_WINDOW: (u32, u32) = (1280, 800);

/// Opens a tsumo page: nothing on the console, nothing fetched (no script, link or `src`),
/// and each chart container holds an SVG with a line of at least two points.
fn open_page(html: &Path, name: &str) -> browser::Page {
    let page = browser::open_sized(html, name, BROWSER_LIMIT, PAGE_WINDOW);
    page.assert_no_console_messages();
    let text = std::fs::read_to_string(html).expect("the page");
    for fetched in ["<script", "<link", " src=", "@import", "url("] {
        assert!(!text.contains(fetched), "{name}: {fetched} in the page");
    }
    assert!(page.dom.contains("id=\"answer\""), "{name}: no answer");
    for (chart, counts) in chart_points(&page) {
        assert!(
            counts.iter().any(|n| *n >= 1),
            "{name}: chart {chart} has no line of data: {counts:?}"
        );
    }
    page
}

/// Each chart container's `data-chart` id, with the point counts of its lines.
fn chart_points(page: &browser::Page) -> Vec<(String, Vec<usize>)> {
    page.dom
        .split("<figure class=\"chart\"")
        .skip(1)
        .map(|chart| {
            let chart = &chart[..chart.find("</figure>").expect("a closed chart")];
            let id = chart
                .split("data-chart=\"")
                .nth(1)
                .and_then(|v| v.split('"').next())
                .unwrap_or("")
                .to_string();
            let one = browser::Page {
                dom: chart.to_string(),
                console: Vec::new(),
                screenshot: PathBuf::new(),
            };
            let counts = one
                .attributes("polyline", "points")
                .iter()
                .map(|p| p.split_whitespace().count())
                .collect();
            (id, counts)
        })
        .collect()
}

/// The chart ids of a page, in order.
fn chart_ids(page: &browser::Page) -> Vec<String> {
    chart_points(page).into_iter().map(|(id, _)| id).collect()
}

/// The number behind headline figure `id` (of run `run` on a comparison's page).
fn figure(page: &browser::Page, id: &str, run: Option<usize>) -> f64 {
    let needle = match run {
        Some(i) => format!("data-run=\"{i}\" data-figure=\"{id}\""),
        None => format!("data-figure=\"{id}\""),
    };
    browser::figure_value(&page.dom, &needle)
        .unwrap_or_else(|| panic!("no figure {needle} with a value:\n{}", page.dom))
}

/// An HTTP run's figures as its JSON has them: target and achieved rate, p50, p99, max, errors.
fn assert_http_figures(page: &browser::Page, doc: &serde_json::Value, run: Option<usize>) {
    assert_eq!(figure(page, "target", run), json_f64(doc, "plan.rate"));
    assert_eq!(
        figure(page, "achieved", run),
        json_f64(doc, "requests_per_sec")
    );
    for p in ["p50", "p99", "max"] {
        assert_eq!(
            figure(page, p, run),
            json_f64(doc, &format!("latency.{p}")),
            "{p}"
        );
    }
    assert_eq!(figure(page, "errors", run), json_errors_total(doc) as f64);
}

/// A run's page (`--html`), and the same page from its JSON (`tsumo report`): the figures
/// are the JSON's, every chart has data, the server's CPU and memory are drawn.
#[test]
fn a_runs_page_shows_its_json_and_charts_in_a_browser() {
    let server = SerialServer::start(Duration::from_micros(100));
    let dir = TempDir::new("tsumo-page");
    let [json, html, again] =
        ["run.json", "run.html", "again.html"].map(|f| dir.path().join(f).display().to_string());
    let pid = std::process::id().to_string();
    let url = server.url("/");
    run_tsumo(
        &[
            "-t1",
            "-c4",
            "-R200",
            "-d3s",
            "--server-pid",
            &pid,
            "--json",
            &json,
            "--html",
            &html,
            "--quiet",
            &url,
        ],
        Duration::from_secs(60),
    )
    .assert_success();
    run_tsumo(&["report", &json, "-o", &again], Duration::from_secs(30)).assert_success();
    let written = std::fs::read_to_string(&html).expect("--html written");
    assert_eq!(
        written,
        std::fs::read_to_string(&again).expect("report written"),
        "tsumo report makes the page --html made"
    );
    let doc = read_json(Path::new(&json));
    let page = open_page(Path::new(&html), "page-run");
    assert_http_figures(&page, &doc, None);
    assert_eq!(
        chart_ids(&page),
        [
            "latency-by-percentile",
            "latency-over-time",
            "rate-over-time",
            "errors-over-time",
            "lateness-over-time",
            "server-cpu-over-time",
            "server-memory-over-time"
        ]
    );
    // Corrected and uncorrected, each a curve.
    let percentile = &chart_points(&page)[0].1;
    assert!(
        percentile.iter().filter(|n| **n > 10).count() >= 2,
        "{percentile:?}"
    );
    for text in ["/tsumo -t1 -c4 -R200 -d3s --server-pid", "Run id", "Shard"] {
        assert!(page.dom.contains(text), "{text}:\n{}", page.dom);
    }
}

/// `--vs`'s page: each run's figures as the comparison's JSON has them, the compare table, and
/// the runs overlaid on every chart.
#[test]
fn a_comparisons_page_overlays_its_runs_in_a_browser() {
    let a = SerialServer::start(Duration::from_micros(100));
    let b = SerialServer::start(Duration::from_micros(300));
    let dir = TempDir::new("tsumo-page");
    let [json, html] = ["vs.json", "vs.html"].map(|f| dir.path().join(f).display().to_string());
    let (url_a, url_b) = (a.url("/"), b.url("/"));
    run_tsumo(
        &[
            "-t1",
            "-c2",
            "-R100",
            "-d2s",
            "--label",
            "a",
            &url_a,
            "--vs",
            &url_b,
            "--vs-label",
            "b",
            "--rounds",
            "1",
            "--json",
            &json,
            "--html",
            &html,
            "--quiet",
        ],
        Duration::from_secs(60),
    )
    .assert_success();
    let doc = read_json(Path::new(&json));
    let runs = doc["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    let page = open_page(Path::new(&html), "page-comparison");
    for (i, run) in runs.iter().enumerate() {
        assert_http_figures(&page, run, Some(i));
    }
    assert!(page.dom.contains("Compare table"), "{}", page.dom);
    let points = chart_points(&page);
    // Two runs, corrected, server's and uncorrected each; over time, one line of each run.
    assert_eq!(points[0].1.len(), 6, "{points:?}");
    for (chart, counts) in &points[1..] {
        assert!(counts.len() >= 2, "{chart}: {counts:?}");
    }
}

/// `tsumo capacity --html`: the capacity and the answer step's figures as the JSON has them,
/// and the curve: one point per step, the objective and the answer marked.
#[test]
fn a_capacity_searchs_page_plots_its_curve_in_a_browser() {
    let server = SerialServer::start(Duration::from_millis(2));
    let dir = TempDir::new("tsumo-page");
    let [json, html] =
        ["capacity.json", "capacity.html"].map(|f| dir.path().join(f).display().to_string());
    let url = server.url("/");
    run_tsumo(
        &[
            "capacity",
            "-t1",
            "-c4",
            "--slo",
            "p99<100ms",
            "--from",
            "200",
            "--step",
            "1s",
            "--warmup",
            "0",
            "--pause",
            "200ms",
            "--resolution",
            "30%",
            "--json",
            &json,
            "--html",
            &html,
            "--quiet",
            &url,
        ],
        Duration::from_secs(120),
    )
    .assert_success();
    let doc = read_json(Path::new(&json));
    let page = open_page(Path::new(&html), "page-capacity");
    let capacity = doc["capacity"]["value"].as_f64().expect("a capacity");
    assert_eq!(figure(&page, "capacity", None), capacity);
    let steps = doc["steps"].as_array().expect("steps");
    let answer = steps
        .iter()
        .zip(doc["outcomes"].as_array().expect("outcomes"))
        .rev()
        .find(|(s, o)| s["plan"]["rate"].as_f64() == Some(capacity) && *o == "held")
        .map(|(s, _)| s)
        .expect("the step at the answer");
    assert_eq!(figure(&page, "p99", None), json_f64(answer, "latency.p99"));
    let points = chart_points(&page);
    assert_eq!(points[0].0, "capacity-curve");
    // The measure at every load (a line by load, whatever order the search ran them in), the
    // objective across, the answer up; each trial a marker, held apart from broke.
    let mut loads: Vec<u64> = steps
        .iter()
        .filter_map(|s| s["plan"]["rate"].as_u64())
        .collect();
    loads.sort_unstable();
    loads.dedup();
    assert_eq!(points[0].1, [loads.len(), 2, 2], "{points:?}");
    let held = doc["outcomes"]
        .as_array()
        .expect("outcomes")
        .iter()
        .filter(|o| *o == "held")
        .count();
    let chart = &page.dom[page
        .dom
        .find("data-chart=\"capacity-curve\"")
        .expect("the curve")..];
    let chart = &chart[..chart.find("</figure>").expect("a closed chart")];
    assert!(chart.matches("<circle").count() >= held, "{chart}");
    for text in ["objective: p99&lt;100ms", "capacity: "] {
        assert!(page.dom.contains(text), "{text}:\n{}", page.dom);
    }
    // The answer card carries its verdict and its range; the broken card is above it (never
    // "Capacity 15,600" beside "Lowest broken 15,200").
    let card = &page.dom[page
        .dom
        .find("data-figure=\"capacity\"")
        .expect("the capacity card")..];
    let card = &card[..card.find("</div></div>").expect("a closed card")];
    assert!(card.contains("Capacity: "), "{card}");
    if doc["capacity"]["limited_by"] == "server" {
        assert!(
            card.contains("Capacity: the server&#39;s limit")
                || card.contains("Capacity: the server's limit"),
            "{card}"
        );
    }
    if let Some([low, high]) = doc["capacity"]["range"].as_array().map(|r| [&r[0], &r[1]]) {
        let range = format!("range {}–{}", low, high);
        assert!(card.contains(&range), "{range}: {card}");
    }
    if let Some(broke) = browser::figure_value(&page.dom, "data-figure=\"broke\"") {
        assert!(broke > capacity, "broke {broke} beside capacity {capacity}");
    }
}

/// The shards of one run given to `tsumo report`: the merged run's page, its figures as
/// `tsumo merge` gives them, a line per shard on the rate and latency charts.
#[test]
fn a_merged_runs_page_has_per_shard_lines_in_a_browser() {
    let server = SerialServer::start(Duration::from_micros(100));
    let dir = TempDir::new("tsumo-page");
    let url = server.url("/");
    let start_at = format_rfc3339(unix_now_ns() + 1_500_000_000);
    let shards: Vec<String> = (1..=2)
        .map(|i| {
            dir.path()
                .join(format!("shard{i}.json"))
                .display()
                .to_string()
        })
        .collect();
    let handles: Vec<_> = shards
        .iter()
        .enumerate()
        .map(|(i, json)| {
            let argv: Vec<String> = [
                "-t1",
                "-c4",
                "-R200",
                "-d3s",
                "--shard",
                &format!("{}/2", i + 1),
                "--start-at",
                &start_at,
                "--json",
                json,
                "--quiet",
                &url,
            ]
            .map(String::from)
            .to_vec();
            std::thread::spawn(move || {
                let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
                run_tsumo(&argv, Duration::from_secs(60)).assert_success();
            })
        })
        .collect();
    for h in handles {
        h.join().expect("shard");
    }
    let [merged, html] =
        ["merged.json", "merged.html"].map(|f| dir.path().join(f).display().to_string());
    run_tsumo(
        &["merge", &shards[0], &shards[1], "-o", &merged],
        Duration::from_secs(30),
    )
    .assert_success();
    run_tsumo(
        &["report", &shards[0], &shards[1], "-o", &html],
        Duration::from_secs(30),
    )
    .assert_success();
    let doc = read_json(Path::new(&merged));
    let page = open_page(Path::new(&html), "page-merged");
    assert_http_figures(&page, &doc, None);
    let points = chart_points(&page);
    let rate = points
        .iter()
        .find(|(id, _)| id == "rate-over-time")
        .expect("rate chart");
    // target, sent, completed, and each shard's completed.
    assert_eq!(rate.1.len(), 5, "{points:?}");
    for text in ["shard 1/2 completed", "shard 2/2 completed", "Shards"] {
        assert!(page.dom.contains(text), "{text}:\n{}", page.dom);
    }
}

/// `tsumo mahjong --html` against the real majiang-server: players, logins, games, the draw
/// overshoot and errors as the JSON has them; players by phase, overshoot and games drawn.
#[test]
fn a_mahjong_sessions_page_shows_its_json_and_charts_in_a_browser() {
    let server = Majiang::start();
    let dir = TempDir::new("tsumo-page");
    let [json, html] =
        ["session.json", "session.html"].map(|f| dir.path().join(f).display().to_string());
    let url = server.url();
    let run = run_tsumo(
        &[
            "mahjong", "-c4", "-t1", "--think", "0", "--ramp", "1ms", "-d", "4s", "--json", &json,
            "--html", &html, "--quiet", &url,
        ],
        Duration::from_secs(90),
    );
    assert!(
        std::path::Path::new(&html).exists(),
        "no page: {}\n{}",
        run.stdout,
        run.stderr
    );
    let doc = read_json(Path::new(&json));
    let page = open_page(Path::new(&html), "page-mahjong");
    assert_eq!(
        figure(&page, "target", None),
        json_f64(&doc, "plan.players")
    );
    assert_eq!(
        figure(&page, "achieved", None),
        json_f64(&doc, "phases.login.ok")
    );
    assert_eq!(figure(&page, "errors", None), json_f64(&doc, "errors"));
    // The draw overshoot, else the deal overshoot, else tsumo's reply lateness.
    let shown = ["draw_overshoot", "deal_overshoot", "reply_lateness"]
        .into_iter()
        .find(|h| json_u64(&doc, &format!("{h}.count")) > 0)
        .expect("a sampled histogram");
    for p in ["p50", "p99", "max"] {
        assert_eq!(
            figure(&page, p, None),
            json_f64(&doc, &format!("{shown}.{p}")),
            "{shown} {p}"
        );
    }
    let ids = chart_ids(&page);
    for id in [
        "players-over-time",
        "overshoot-over-time",
        "games-over-time",
        "hands-over-time",
    ] {
        assert!(ids.iter().any(|i| i == id), "{id}: {ids:?}");
    }
}
