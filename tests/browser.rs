//! tsumo's charts in a real browser (headless Chromium): they render with data and without a
//! console message, and a screenshot of each is left under `target/browser/` to look at. The
//! harness itself is checked too: it sees console errors and ends a page that never loads.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::browser::{self, html_page};
use common::{run_tsumo, TempDir};

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
        &Series::new(
            "p99",
            vec![(1000.0, 1.1), (2000.0, 1.4), (4000.0, 3.0), (8000.0, 25.0)],
        ),
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
