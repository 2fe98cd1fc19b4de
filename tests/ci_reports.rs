//! What tsumo leaves for a CI system, read by real readers: `--junit` by junitparser (each
//! objective a case, a broken one a failure whose message holds the measured value, a failed
//! run a `run` case that says why, a capacity search one suite per step), and the Markdown of
//! `GITHUB_STEP_SUMMARY` and `tsumo report --markdown` rendered by Python-Markdown with its
//! `tables` extension (a `<table>` appears). A `--junit` path onto an input or another output
//! is refused in one line, exit 2, before any traffic.
//!
//! The readers come from scripts/.venv, which `scripts/test` makes (pinned versions in
//! scripts/requirements-readers.txt); without it, the tests that read say so and skip.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use common::majiang::Majiang;
use common::nginx::Nginx;
use common::{run_command, run_tsumo, Run, TempDir};

const LIMIT: Duration = Duration::from_secs(120);

/// The venv's python with junitparser and Markdown; `None` (and a line saying so) when
/// scripts/test has not made it.
fn readers() -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/.venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    eprintln!(
        "skipped: no {} (scripts/test makes it: junitparser and Markdown from \
         scripts/requirements-readers.txt)",
        python.display()
    );
    None
}

/// Runs `python -c SCRIPT ARGS…`, failing the test on an error.
fn python(python: &Path, script: &str, args: &[&str]) -> String {
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("run the venv's python");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The JUnit file as junitparser reads it: each suite with its counts, properties and cases,
/// each case with its results (`Failure` …, message, type) and output.
fn junit(py: &Path, file: &Path) -> Vec<Value> {
    const READ: &str = r#"
import json, sys
from junitparser import JUnitXml
xml = JUnitXml.fromfile(sys.argv[1])
suites = []
for suite in xml:
    cases = [{
        "name": case.name,
        "classname": case.classname,
        "results": [{"kind": type(r).__name__, "message": r.message, "type": r.type}
                    for r in case.result],
        "out": case.system_out,
    } for case in suite]
    suites.append({"name": suite.name, "tests": suite.tests, "failures": suite.failures,
                   "properties": {p.name: p.value for p in suite.properties()},
                   "cases": cases})
print(json.dumps(suites))
"#;
    let text = python(py, READ, &[file.to_str().expect("temp path")]);
    serde_json::from_str::<Vec<Value>>(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The Markdown rendered to HTML by Python-Markdown with `tables`.
fn rendered(py: &Path, markdown: &str) -> String {
    const RENDER: &str = r#"
import sys, markdown
print(markdown.markdown(sys.stdin.read() if sys.argv[1] == "-" else open(sys.argv[1]).read(),
                        extensions=["tables"]))
"#;
    let dir = TempDir::new("ci-md");
    let file = dir.path().join("summary.md");
    std::fs::write(&file, markdown).expect("write the summary");
    python(py, RENDER, &[file.to_str().expect("temp path")])
}

/// The cases of a suite: (name, failure message when it failed).
fn cases(suite: &Value) -> Vec<(String, Option<String>)> {
    suite["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| {
            let failure = case["results"]
                .as_array()
                .and_then(|r| r.iter().find(|r| r["kind"] == "Failure"))
                .map(|r| r["message"].as_str().unwrap_or_default().to_string());
            (
                case["name"].as_str().unwrap_or_default().to_string(),
                failure,
            )
        })
        .collect()
}

/// A search's suites: its own (`url`), then one per step in order, `URL: step N at LOAD`, the
/// first at `first` and the last at `last` (a step the machine disturbed is run again: one
/// suite more).
fn assert_step_suites(suites: &[Value], url: &str, first: &str, last: &str) {
    let names: Vec<&str> = suites.iter().filter_map(|s| s["name"].as_str()).collect();
    assert!(names.len() >= 3 && names[0] == url, "{names:?}");
    for (i, name) in names[1..].iter().enumerate() {
        assert!(
            name.starts_with(&format!("{url}: step {} at ", i + 1)),
            "{names:?}"
        );
    }
    assert!(names[1].ends_with(&format!(" at {first}")), "{names:?}");
    assert!(
        names[names.len() - 1].ends_with(&format!(" at {last}")),
        "{names:?}"
    );
}

/// `tsumo ARGS` with `GITHUB_STEP_SUMMARY` set to `summary`.
fn run_with_summary(args: &[&str], summary: &Path) -> Run {
    let mut command = common::tsumo();
    command.env("GITHUB_STEP_SUMMARY", summary).args(args);
    run_command(command, LIMIT)
}

fn arg(path: &Path) -> &str {
    path.to_str().expect("temp path")
}

#[test]
fn a_run_that_held_is_a_passing_suite_and_its_summary_a_table_appended() {
    let nginx = Nginx::start();
    let dir = TempDir::new("ci-held");
    let (xml, summary) = (dir.path().join("run.xml"), dir.path().join("summary.md"));
    // A step before this one wrote its own summary: kept.
    std::fs::write(&summary, "## before\n\n").expect("an earlier step's summary");
    let url = nginx.http_url("/index.html");
    let run = run_with_summary(
        &[
            "-t1",
            "-c2",
            "-d2s",
            "-R50",
            "--slo",
            "p99<10s",
            "--slo",
            "errors<1%",
            "--junit",
            arg(&xml),
            "--label",
            "nginx <local>",
            &url,
        ],
        &summary,
    );
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let Some(py) = readers() else { return };
    let suites = junit(&py, &xml);
    assert_eq!(suites.len(), 1, "{suites:?}");
    assert_eq!(suites[0]["name"], "nginx <local>");
    assert_eq!(suites[0]["failures"], 0);
    assert_eq!(
        cases(&suites[0]),
        [
            ("run".to_string(), None),
            ("p99<10s".to_string(), None),
            ("errors<1%".to_string(), None)
        ]
    );
    let out = suites[0]["cases"][1]["out"].as_str().unwrap_or_default();
    assert!(
        out.starts_with("p99<10s: ") && out.contains("p99 "),
        "{out}"
    );

    let text = std::fs::read_to_string(&summary).expect("the summary");
    assert!(
        text.starts_with("## before\n\n### tsumo: HTTP run "),
        "{text}"
    );
    let html = rendered(&py, &text);
    assert!(html.contains("<h2>before</h2>"), "{html}");
    assert_eq!(html.matches("<table>").count(), 2, "{html}");
    assert!(html.contains("nginx &lt;local&gt;"), "{html}");
    assert!(
        html.contains("<strong>Objectives: all 2 held</strong>"),
        "{html}"
    );
    assert!(html.contains("<code>p99&lt;10s</code>"), "{html}");
    assert!(!html.contains("<a "), "no links: {html}");
}

#[test]
fn a_broken_objective_is_a_failure_with_the_value_and_exit_99() {
    let nginx = Nginx::start();
    let dir = TempDir::new("ci-broken");
    let (xml, summary) = (dir.path().join("run.xml"), dir.path().join("summary.md"));
    let url = nginx.http_url("/index.html");
    let run = run_with_summary(
        &[
            "-t1",
            "-c2",
            "-d2s",
            "-R50",
            "--slo",
            "p99<1us",
            "--slo",
            "p99<10s",
            "--junit",
            arg(&xml),
            &url,
        ],
        &summary,
    );
    assert_eq!(run.status.code(), Some(99), "{run:?}");
    let Some(py) = readers() else { return };
    let suites = junit(&py, &xml);
    assert_eq!(suites[0]["failures"], 1, "{suites:?}");
    let cases = cases(&suites[0]);
    assert_eq!(cases[0], ("run".to_string(), None));
    let (name, failure) = &cases[1];
    assert_eq!(name, "p99<1us");
    let failure = failure.as_deref().unwrap_or_default();
    assert!(
        failure.starts_with("p99<1us: ") && failure.contains("p99 "),
        "{failure}"
    );
    assert_eq!(cases[2], ("p99<10s".to_string(), None));
    let html = rendered(&py, &std::fs::read_to_string(&summary).expect("summary"));
    assert!(
        html.contains("<strong>Objectives: 1 of 2 broken</strong>"),
        "{html}"
    );
    assert!(html.contains("<strong>BROKEN</strong>"), "{html}");
}

#[test]
fn a_run_that_failed_is_a_run_case_that_says_why_and_exit_1() {
    let dir = TempDir::new("ci-failed");
    let (xml, summary) = (dir.path().join("run.xml"), dir.path().join("summary.md"));
    // Nothing listens there.
    let url = format!("http://127.0.0.1:{}/", common::free_port());
    let run = run_with_summary(
        &[
            "-t1",
            "-c1",
            "-d1s",
            "-R10",
            "--slo",
            "p99<1s",
            "--junit",
            arg(&xml),
            "--label",
            "gone",
            &url,
        ],
        &summary,
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let Some(py) = readers() else { return };
    let suites = junit(&py, &xml);
    assert_eq!(suites.len(), 1, "{suites:?}");
    assert_eq!(suites[0]["name"], "gone");
    let cases = cases(&suites[0]);
    assert_eq!(cases.len(), 1, "{cases:?}");
    assert_eq!(cases[0].0, "run");
    let why = cases[0].1.as_deref().unwrap_or_default();
    assert!(why.contains("Connection refused"), "{why}");
    let html = rendered(&py, &std::fs::read_to_string(&summary).expect("summary"));
    assert!(html.contains("<strong>Failed:</strong>"), "{html}");
    assert!(html.contains("Connection refused"), "{html}");
}

#[test]
fn a_capacity_search_is_one_suite_for_it_and_one_per_step() {
    let nginx = Nginx::start();
    let dir = TempDir::new("ci-capacity");
    let (xml, summary) = (dir.path().join("search.xml"), dir.path().join("summary.md"));
    let url = nginx.http_url("/index.html");
    let run = run_with_summary(
        &[
            "capacity",
            "-t1",
            "-c2",
            "--slo",
            "p99<10s",
            "--steps",
            "20,40",
            "--step",
            "1s",
            "--junit",
            arg(&xml),
            "--quiet",
            &url,
        ],
        &summary,
    );
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let Some(py) = readers() else { return };
    let suites = junit(&py, &xml);
    assert_step_suites(&suites, &url, "20 requests/sec", "40 requests/sec");
    for step in &suites[1..] {
        // Held, or on a busy machine limited by tsumo's lateness: either way judged, and said.
        let (name, _) = &cases(step)[0];
        assert_eq!(name, "p99<10s", "{step}");
        assert!(step["properties"]["outcome"].is_string(), "{step}");
        assert_eq!(step["properties"]["role"], "staircase", "{step}");
    }
    // The summary: the capacity as its answer line, and a row per step.
    let html = rendered(&py, &std::fs::read_to_string(&summary).expect("summary"));
    assert!(html.contains("<p><strong>Capacity: "), "{html}");
    assert!(html.contains("<th>Step</th>"), "{html}");
    assert!(html.contains("<td>40 requests/sec</td>"), "{html}");
}

#[test]
fn report_markdown_renders_a_saved_run_and_a_vs_pair_as_tables() {
    let nginx = Nginx::start();
    let dir = TempDir::new("ci-report");
    let (run_json, vs_json, vs_xml) = (
        dir.path().join("run.json"),
        dir.path().join("vs.json"),
        dir.path().join("vs.xml"),
    );
    let (a, b) = (nginx.http_url("/index.html"), nginx.http_url("/"));
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d1s",
            "-R20",
            "--slo",
            "p99<10s",
            "--json",
            arg(&run_json),
            "--quiet",
            &a,
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let vs = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d1s",
            "-R20",
            "--vs",
            &b,
            "--rounds",
            "1",
            "--label",
            "A",
            "--vs-label",
            "B",
            "--json",
            arg(&vs_json),
            "--junit",
            arg(&vs_xml),
            "--quiet",
            &a,
        ],
        LIMIT,
    );
    assert_eq!(vs.status.code(), Some(0), "{vs:?}");

    let one = run_tsumo(&["report", "--markdown", arg(&run_json)], LIMIT);
    assert_eq!(one.status.code(), Some(0), "{one:?}");
    assert!(one.stdout.starts_with("### tsumo: HTTP run "), "{one:?}");
    let out = dir.path().join("pair.md");
    let pair = run_tsumo(
        &["report", "--markdown", arg(&vs_json), "-o", arg(&out)],
        LIMIT,
    );
    assert_eq!(pair.status.code(), Some(0), "{pair:?}");
    let Some(py) = readers() else { return };
    let html = rendered(&py, &one.stdout);
    assert_eq!(html.matches("<table>").count(), 2, "{html}");
    assert!(html.contains("<code>p99&lt;10s</code>"), "{html}");
    let html = rendered(&py, &std::fs::read_to_string(&out).expect("-o written"));
    assert!(html.contains("<h3>tsumo: A vs B</h3>"), "{html}");
    assert!(
        html.contains("<th>A</th>") && html.contains("<th>B</th>"),
        "{html}"
    );
    assert!(html.contains("<th>B/A</th>"), "{html}");
    assert!(!html.contains("<a "), "no links: {html}");

    // --vs --junit (which takes no --slo): a suite per run, each saying it ran.
    let suites = junit(&py, &vs_xml);
    let names: Vec<&str> = suites.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["A: A round 1", "B: B round 1"], "{suites:?}");
    for suite in &suites {
        assert_eq!(cases(suite), [("run".to_string(), None)]);
    }
}

#[test]
fn a_mahjong_session_with_an_objective_leaves_its_cases() {
    let server = Majiang::start();
    let dir = TempDir::new("ci-mahjong");
    let xml = dir.path().join("session.xml");
    let run = run_tsumo(
        &[
            "mahjong",
            "-c4",
            "-t1",
            "--think",
            "0",
            "--ramp",
            "0",
            "--bot",
            "tsumogiri",
            "-d",
            "3s",
            "--slo",
            "errors<1",
            "--slo",
            "dapai.p99<1us",
            "--junit",
            arg(&xml),
            "--quiet",
            &server.url(),
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(99), "{run:?}");
    let Some(py) = readers() else { return };
    let suites = junit(&py, &xml);
    let cases = cases(&suites[0]);
    assert_eq!(cases[0], ("run".to_string(), None), "{cases:?}");
    assert_eq!(cases[1], ("errors<1".to_string(), None), "{cases:?}");
    assert_eq!(cases[2].0, "dapai.p99<1us");
    let failure = cases[2].1.as_deref().unwrap_or_default();
    assert!(
        failure.starts_with("dapai.p99<1us: dapai.p99 "),
        "{failure}"
    );
}

#[test]
fn a_junit_path_onto_an_input_or_another_output_is_refused_before_any_traffic() {
    let dir = TempDir::new("ci-clash");
    let script = dir.path().join("s.lua");
    std::fs::write(&script, "").expect("a script");
    let file = dir.path().join("out");
    // Nothing listens: a check after traffic would say so instead.
    let url = format!("http://127.0.0.1:{}/", common::free_port());
    for (args, said) in [
        (
            vec!["-s", arg(&script), "--junit", arg(&script)],
            "(the -s script)",
        ),
        (
            vec!["--json", arg(&file), "--junit", arg(&file)],
            "the --json file too",
        ),
        (
            vec!["--html", arg(&file), "--junit", arg(&file)],
            "the --html file too",
        ),
        (
            vec!["--junit", arg(&file), "--hlog", arg(&file)],
            "the --junit file too",
        ),
    ] {
        let mut all = vec!["-t1", "-c1", "-d1s", "-R10"];
        all.extend(args);
        all.push(&url);
        let run = run_tsumo(&all, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{all:?}: {run:?}");
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{all:?}: {run:?}");
        assert!(
            lines[0].starts_with("tsumo: --") && lines[0].contains(said),
            "{all:?}: {run:?}"
        );
    }
    assert!(!file.exists());
    assert_eq!(std::fs::read_to_string(&script).ok().as_deref(), Some(""));
}

#[test]
fn a_search_over_players_is_one_suite_per_step_too() {
    let server = Majiang::start();
    let dir = TempDir::new("ci-mahjong-capacity");
    let xml = dir.path().join("search.xml");
    let run = run_tsumo(
        &[
            "mahjong",
            "--capacity",
            "-t1",
            "--ramp",
            "1ms",
            "--step",
            "2s",
            "--warmup",
            "1s",
            "--pause",
            "1s",
            "--from",
            "4",
            "--to",
            "8",
            "--think",
            "0",
            "--slo",
            "errors<1",
            "--junit",
            arg(&xml),
            "--quiet",
            &server.url(),
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let Some(py) = readers() else { return };
    let suites = junit(&py, &xml);
    assert_step_suites(&suites, &server.url(), "4 players", "8 players");
    for step in &suites[1..] {
        assert_eq!(cases(step)[0].0, "errors<1", "{step}");
    }
}

#[test]
fn a_stages_run_has_a_suite_per_stage_with_its_objectives() {
    let nginx = Nginx::start();
    let dir = TempDir::new("ci-stages");
    let (xml, summary) = (dir.path().join("run.xml"), dir.path().join("summary.md"));
    let url = nginx.http_url("/index.html");
    let run = run_with_summary(
        &[
            "-t1",
            "-c2",
            "--stages",
            "1s:0-40,1s:40",
            "--slo",
            "p99<1us",
            "--slo",
            "p99<10s",
            "--junit",
            arg(&xml),
            &url,
        ],
        &summary,
    );
    assert_eq!(run.status.code(), Some(99), "{run:?}");
    let Some(py) = readers() else { return };
    let suites = junit(&py, &xml);
    let names: Vec<&str> = suites.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(suites.len(), 3, "the run, then each stage: {names:?}");
    assert!(names[1].ends_with(": stage 1 (0→40 req/s)"), "{names:?}");
    assert!(names[2].ends_with(": stage 2 (40 req/s)"), "{names:?}");
    for suite in &suites[1..] {
        let cases = cases(suite);
        assert_eq!(cases.len(), 2, "{cases:?}");
        assert!(cases[0]
            .1
            .as_deref()
            .is_some_and(|f| f.starts_with("p99<1us: ")));
        assert_eq!(cases[1].1, None, "{cases:?}");
    }
    let html = rendered(&py, &std::fs::read_to_string(&summary).expect("summary"));
    assert!(html.contains("stage 2 (40 req/s)"), "{html}");
}
