//! An output lost after the run, in every mode alike: the `--json` path checked before the run
//! becomes a directory while the run runs, so writing it fails at the end. Every other output
//! (`--html`, and for HTTP `--hgrm` and `--hlog`) is still written, the text report printed, the
//! loss is one `tsumo: --json …` line on stderr, and the exit status is 1 ("output lost").

mod common;

use std::path::Path;
use std::time::Duration;

use common::majiang::Majiang;
use common::nginx::Nginx;
use common::{wait_for, Run, Signalled, TempDir};

/// The run's one `tsumo: ` line is the lost `--json`'s, and it exited 1.
fn assert_json_lost(run: &Run, json: &Path) {
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("tsumo: "))
        .collect();
    let want = format!("tsumo: --json {}: ", json.display());
    assert!(
        lines.len() == 1 && lines[0].starts_with(&want),
        "{:?}",
        run.stderr
    );
    assert!(json.is_dir(), "{run:?}");
}

/// `--html FILE` was written: a whole page.
fn assert_page(html: &Path, run: &Run) {
    let page = std::fs::read_to_string(html).unwrap_or_else(|e| panic!("no page ({e}): {run:?}"));
    assert!(page.starts_with("<!DOCTYPE html>"), "{run:?}");
    assert!(page.trim_end().ends_with("</html>"), "{run:?}");
}

#[test]
fn an_http_run_whose_json_is_lost_writes_every_other_output_and_exits_1() {
    let nginx = Nginx::start();
    let dir = TempDir::new("outputs-http");
    let file = |name: &str| dir.path().join(name);
    let (json, html, hgrm, hlog) = (
        file("run.json"),
        file("run.html"),
        file("run.hgrm"),
        file("run.hlog"),
    );
    let arg = |path: &Path| path.to_str().expect("temp path").to_string();
    let (json_arg, html_arg, hgrm_arg, hlog_arg) = (arg(&json), arg(&html), arg(&hgrm), arg(&hlog));
    let url = nginx.http_url("/index.html");
    let tsumo = Signalled::spawn(&[
        "-t1", "-c1", "-d3s", "-R20", "--json", &json_arg, "--html", &html_arg, "--hgrm",
        &hgrm_arg, "--hlog", &hlog_arg, &url,
    ]);
    // A request answered: the outputs were checked; now --json cannot be written.
    wait_for("a request answered", Duration::from_secs(10), || {
        !nginx.access_log().is_empty()
    });
    std::fs::create_dir(&json).expect("a directory where --json goes");
    let run = tsumo.finish(Duration::from_secs(30));
    assert_json_lost(&run, &json);
    assert!(run.stdout.contains("requests in"), "{run:?}");
    assert_page(&html, &run);
    let hgrm = std::fs::read_to_string(&hgrm).unwrap_or_default();
    assert!(hgrm.contains("#[Mean"), "{run:?}");
    let hlog = std::fs::read_to_string(&hlog).unwrap_or_default();
    assert!(hlog.contains("#[StartTime"), "{run:?}");
}

#[test]
fn a_mahjong_session_whose_json_is_lost_still_writes_its_page_and_exits_1() {
    let server = Majiang::start();
    let dir = TempDir::new("outputs-mahjong");
    let json = dir.path().join("session.json");
    let html = dir.path().join("session.html");
    let url = server.url();
    let tsumo = Signalled::spawn(&[
        "mahjong",
        "-c4",
        "-t1",
        "--think",
        "0",
        "--ramp",
        "1ms",
        "-d3s",
        "--json",
        json.to_str().expect("temp path"),
        "--html",
        html.to_str().expect("temp path"),
        &url,
    ]);
    // The players logged in: the outputs were checked; now --json cannot be written.
    assert_eq!(
        server.wait_session_files(4, Duration::from_secs(10)),
        4,
        "players did not log in"
    );
    std::fs::create_dir(&json).expect("a directory where --json goes");
    let run = tsumo.finish(Duration::from_secs(60));
    assert_json_lost(&run, &json);
    assert!(run.stdout.contains("Games: "), "{run:?}");
    assert_page(&html, &run);
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}
