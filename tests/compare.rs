//! `tsumo compare`, `tsumo merge` and `tsumo plot` on real runs: nginx serving a static page
//! ("direct") and a second nginx proxying to it ("nginx"), each run twice by the tsumo binary.
//!
//! What a user would notice is asserted: the table's rows and its B/A ratio, the noise sentences
//! that repeated runs earn, a merge that adds up exactly, an SVG with one curve per run, and one
//! error line with exit code 2 for a bad input.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use common::nginx::Nginx;
use common::{json_u64, run_tsumo, Run, TempDir};

const LIMIT: Duration = Duration::from_secs(30);

/// Two runs against each of the two servers, made once for every test in this file.
struct Runs {
    dir: TempDir,
    direct: [PathBuf; 2],
    proxied: [PathBuf; 2],
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let direct_server = Nginx::start();
        let proxy_body = format!(
            "location / {{ proxy_pass http://127.0.0.1:{}; proxy_http_version 1.1; \
             proxy_set_header Connection \"\"; }}",
            direct_server.http_port()
        );
        let proxy_server = Nginx::builder().server("proxy", &proxy_body).start();
        let proxy_url = format!("http://127.0.0.1:{}/index.html", proxy_server.port("proxy"));
        let direct_url = direct_server.http_url("/index.html");
        let dir = TempDir::new("tsumo-compare");
        let run = |url: &str, label: &str, name: &str| {
            let path = dir.path().join(name);
            let out = path.to_string_lossy().to_string();
            let args = [
                "-t1", "-c4", "-d2s", "-R500", "--label", label, "--quiet", "--json", &out, url,
            ];
            run_tsumo(&args, LIMIT).assert_success();
            path
        };
        // Alternating, so a drift of the machine hits both labels alike.
        let d1 = run(&direct_url, "direct", "direct1.json");
        let p1 = run(&proxy_url, "nginx", "nginx1.json");
        let d2 = run(&direct_url, "direct", "direct2.json");
        let p2 = run(&proxy_url, "nginx", "nginx2.json");
        Runs {
            dir,
            direct: [d1, d2],
            proxied: [p1, p2],
        }
    })
}

fn tsumo(args: &[&Path]) -> Run {
    let args: Vec<&str> = args
        .iter()
        .map(|p| p.to_str().unwrap_or_default())
        .collect();
    run_tsumo(&args, LIMIT)
}

fn load(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("read JSON");
    serde_json::from_str(&text).expect("parse JSON")
}

/// A number as compare prints it: `500.21`, `1.00k`, `27.00us`, `1.09MB`, `1.35×`.
fn parse_number(cell: &str) -> f64 {
    let cell = cell.trim_end_matches('×').trim_end_matches('B');
    let (digits, scale) = match cell.chars().last() {
        Some('k') => (&cell[..cell.len() - 1], 1e3),
        Some('M') => (&cell[..cell.len() - 1], 1e6),
        Some('K') => (&cell[..cell.len() - 1], 1024.0),
        _ => (cell, 1.0),
    };
    digits
        .parse::<f64>()
        .unwrap_or_else(|e| panic!("not a number: {cell:?} ({e})"))
        * scale
}

/// The cells after the row name of the table row named `name`.
fn table_row(table: &str, name: &str) -> Vec<String> {
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with(name) && !l.contains(':'))
        .unwrap_or_else(|| panic!("no row {name:?} in:\n{table}"));
    line.trim_start()[name.len()..]
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn compare_shows_rows_ratios_and_spread_sentences() {
    let r = runs();
    let [d1, d2] = &r.direct;
    let [p1, p2] = &r.proxied;
    let out = tsumo(&[Path::new("compare"), d1, p1, d2, p2]);
    out.assert_success();
    let table = &out.stdout;
    let header = table
        .lines()
        .find(|l| l.contains("nginx/direct"))
        .unwrap_or_else(|| panic!("no ratio heading:\n{table}"));
    assert!(
        header.contains("direct") && header.contains("nginx"),
        "{header}"
    );
    for name in [
        "Requests/sec",
        "Transfer/sec",
        "Latency p50",
        "Latency p90",
        "Latency p99",
        "Latency p99.9",
        "Latency max",
        "Server's latency p50",
        "Server's latency p99",
        "tsumo's own delay p99",
        "Uncorrected p50",
        "Uncorrected p99",
        "Send lateness p99",
        "Errors connect",
        "Errors read",
        "Errors write",
        "Errors timeout",
        "Errors 4xx/5xx",
        "Connections opened",
        "TLS full handshakes",
        "TLS resumed handshakes",
    ] {
        assert_eq!(table_row(table, name).len(), 3, "{name}:\n{table}");
    }
    // Columns are the means of each label's two runs; the ratio is nginx / direct.
    let rate = |p: &PathBuf| load(p)["requests_per_sec"].as_f64().unwrap_or(0.0);
    let direct_mean = (rate(d1) + rate(d2)) / 2.0;
    let nginx_mean = (rate(p1) + rate(p2)) / 2.0;
    let cells = table_row(table, "Requests/sec");
    assert!(
        (parse_number(&cells[0]) - direct_mean).abs() < 0.01,
        "{cells:?}"
    );
    assert!(
        (parse_number(&cells[1]) - nginx_mean).abs() < 0.01,
        "{cells:?}"
    );
    let ratio = parse_number(&cells[2]);
    assert!(
        (ratio - nginx_mean / direct_mean).abs() <= 0.006,
        "{cells:?}"
    );
    assert_eq!(table_row(table, "Runs"), ["2", "2"]);
    // One sentence per key metric, in words.
    for metric in ["rate", "p50", "p99", "the server's p99"] {
        let line = table
            .lines()
            .find(|l| l.starts_with(&format!("{metric}: nginx is ")))
            .unwrap_or_else(|| panic!("no sentence for {metric}:\n{table}"));
        assert!(line.contains("× direct; "), "{line}");
        assert!(
            line.contains("within run-to-run noise") || line.contains("beyond run-to-run noise"),
            "{line}"
        );
        assert!(line.contains("(direct varies ") && line.ends_with(" between rounds)"));
    }
    // The opening line: every key measure judged, in one sentence.
    let verdict = table
        .lines()
        .find(|l| l.starts_with("Verdict: "))
        .unwrap_or_else(|| panic!("no verdict:\n{table}"));
    assert!(
        verdict.starts_with("Verdict: nginx against direct at the same load: "),
        "{verdict}"
    );
    for metric in ["rate", "p50", "p99", "the server's p99"] {
        assert!(verdict.contains(metric), "{metric}: {verdict}");
    }
    // A single run per label: no verdict, and no difference called one (it read "nginx is 85%
    // slower at p99" where three rounds of --vs found p99 within noise).
    let single = tsumo(&[Path::new("compare"), d1, p1]);
    single.assert_success();
    let text = &single.stdout;
    assert!(!text.contains("run-to-run noise ("), "{text}");
    assert!(
        !text.contains("Verdict: ") && !text.contains("slower"),
        "{text}"
    );
    assert!(
        text.contains(
            "\nNo verdict: one run of a label cannot tell a difference from \
             run-to-run noise"
        ),
        "{text}"
    );
}

#[test]
fn merge_adds_runs_exactly() {
    let r = runs();
    let [d1, d2] = &r.direct;
    let out_path = r.dir.path().join("merged.json");
    let merged = tsumo(&[Path::new("merge"), d1, d2, Path::new("-o"), &out_path]);
    merged.assert_success();
    assert_eq!(merged.stderr, "", "same URL: no warning");
    common::schema::assert_valid(
        common::schema::Kind::Run,
        &[d1.as_path(), d2.as_path(), out_path.as_path()],
    );
    let (a, b, m) = (load(d1), load(d2), load(&out_path));
    assert_eq!(m["label"], "merged (2 runs)");
    for counter in ["requests", "bytes_read", "connections_opened"] {
        let path = format!("counters.{counter}");
        assert_eq!(
            json_u64(&m, &path),
            json_u64(&a, &path) + json_u64(&b, &path),
            "{counter}"
        );
    }
    // The rate is the total over the merged interval (the longer run's).
    let rate = m["requests_per_sec"].as_f64().unwrap_or(0.0);
    let over_interval = json_u64(&m, "counters.requests") as f64 / m["elapsed_s"].as_f64().unwrap();
    assert!(
        (rate / over_interval - 1.0).abs() < 1e-3,
        "{rate} vs {over_interval}"
    );
    // Each run's rate over the merged interval, added: exactly, whatever the runs reached.
    let elapsed = m["elapsed_s"].as_f64().unwrap();
    let part = |d: &serde_json::Value| {
        d["requests_per_sec"].as_f64().unwrap_or(0.0) * d["elapsed_s"].as_f64().unwrap() / elapsed
    };
    let parts = part(&a) + part(&b);
    assert!((rate - parts).abs() <= 1e-9 * parts, "{rate} vs {parts}");
    assert_eq!(
        json_u64(&m, "latency.count"),
        json_u64(&a, "latency.count") + json_u64(&b, "latency.count")
    );
    // The split merges exactly too: every histogram's count, and the exact sums.
    for path in [
        "server_latency.count",
        "own_delay.total.count",
        "own_delay.read.count",
        "user_latency.count",
        "counters.latency_sums.corrected_us",
        "counters.latency_sums.server_us",
        "counters.latency_sums.own_send_us",
    ] {
        assert_eq!(
            json_u64(&m, path),
            json_u64(&a, path) + json_u64(&b, path),
            "{path}"
        );
    }
    assert_eq!(m["timestamps"], a["timestamps"]);
    // The top bucket of the sum is the higher of the two tops.
    assert_eq!(
        json_u64(&m, "latency.max"),
        json_u64(&a, "latency.max").max(json_u64(&b, "latency.max"))
    );
    let p50 = json_u64(&m, "latency.p50");
    let lower = json_u64(&a, "latency.p50").min(json_u64(&b, "latency.p50"));
    let upper = json_u64(&a, "latency.p50").max(json_u64(&b, "latency.p50"));
    assert!(lower <= p50 && p50 <= upper, "{lower} <= {p50} <= {upper}");
    assert_eq!(m["merged_from"].as_array().map(Vec::len), Some(2));

    // A merge of one run is that run, but for its label, the list of sources, and the
    // judgement of tsumo's own lateness (`behind_schedule`), which a merge does not carry: a
    // part's judgement is not the whole's (a busy machine writes one here).
    let one_path = r.dir.path().join("one.json");
    let one = tsumo(&[
        Path::new("merge"),
        d1,
        Path::new("-o"),
        &one_path,
        Path::new("--label"),
        Path::new("direct"),
    ]);
    one.assert_success();
    let mut one = load(&one_path);
    if let Some(map) = one.as_object_mut() {
        map.remove("merged_from");
    }
    let mut a_judged = a.clone();
    if let Some(map) = a_judged.as_object_mut() {
        map.remove("behind_schedule");
    }
    assert_eq!(one, a_judged);

    // Different URLs: not parts of one run, refused; merged with a warning under --force.
    let mixed_path = r.dir.path().join("mixed.json");
    let mixed_args = [
        Path::new("merge"),
        d1,
        &r.proxied[0],
        Path::new("-o"),
        &mixed_path,
    ];
    let refused = tsumo(&mixed_args);
    assert_eq!(refused.status.code(), Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.starts_with("tsumo: merge: URL "),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert!(!mixed_path.exists());
    let mut forced_args = mixed_args.to_vec();
    forced_args.push(Path::new("--force"));
    let mixed = tsumo(&forced_args);
    mixed.assert_success();
    assert!(mixed
        .stderr
        .starts_with("tsumo: warning: merging runs of different plans: URL "));
    assert_eq!(mixed.stderr.lines().count(), 1, "{}", mixed.stderr);

    // One run given twice would count twice: refused.
    let twice = tsumo(&[Path::new("merge"), d1, d1, Path::new("-o"), &mixed_path]);
    assert_eq!(twice.status.code(), Some(2), "{}", twice.stderr);
    assert!(
        twice.stderr.contains("are the same run"),
        "{}",
        twice.stderr
    );
    let copy = r.dir.path().join("copy.json");
    std::fs::copy(d1, &copy).unwrap();
    let copied = tsumo(&[Path::new("merge"), d1, &copy, Path::new("-o"), &mixed_path]);
    assert_eq!(copied.status.code(), Some(2), "{}", copied.stderr);
    assert!(
        copied.stderr.contains("are the same run"),
        "{}",
        copied.stderr
    );
}

/// A 1 s run and a 3 s run are not parts of one run: refused. Forced, their rate is the total
/// over the longer run, not the sum of both rates (which would count the short one's rate for
/// all 3 s).
#[test]
fn merge_refuses_runs_of_different_durations_and_forced_counts_the_whole_interval() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = TempDir::new("merge-durations");
    let short = dir.path().join("short.json");
    let long = dir.path().join("long.json");
    for (duration, path) in [("1s", &short), ("3s", &long)] {
        let run = run_tsumo(
            &[
                "-t1",
                "-c2",
                "-R200",
                "-d",
                duration,
                "--json",
                path.to_str().unwrap(),
                &url,
            ],
            Duration::from_secs(20),
        );
        run.assert_success();
    }
    let out = dir.path().join("merged.json");
    let refused = tsumo(&[Path::new("merge"), &short, &long, Path::new("-o"), &out]);
    assert_eq!(refused.status.code(), Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.starts_with("tsumo: merge: duration 1s "),
        "{}",
        refused.stderr
    );
    let forced = tsumo(&[
        Path::new("merge"),
        &short,
        &long,
        Path::new("-o"),
        &out,
        Path::new("--force"),
    ]);
    forced.assert_success();
    let m = load(&out);
    let (s, l) = (load(&short), load(&long));
    let requests = json_u64(&m, "counters.requests") as f64;
    let rate = m["requests_per_sec"].as_f64().unwrap();
    // The requests of both over the longer run's interval (not the sum of the two rates).
    let elapsed = m["elapsed_s"].as_f64().unwrap();
    assert_eq!(elapsed, l["elapsed_s"].as_f64().unwrap());
    assert!(
        (rate / (requests / elapsed) - 1.0).abs() < 1e-3,
        "{rate} for {requests} requests in {elapsed} s"
    );
    let sum_of_rates =
        s["requests_per_sec"].as_f64().unwrap() + l["requests_per_sec"].as_f64().unwrap();
    assert!(rate < sum_of_rates, "{rate} vs {sum_of_rates}");
}

#[test]
fn plot_draws_one_curve_per_run() {
    let r = runs();
    let [d1, d2] = &r.direct;
    let [p1, p2] = &r.proxied;
    let svg_path = r.dir.path().join("latency.svg");
    let out = tsumo(&[
        Path::new("plot"),
        d1,
        d2,
        p1,
        p2,
        Path::new("-o"),
        &svg_path,
    ]);
    out.assert_success();
    let svg = std::fs::read_to_string(&svg_path).expect("read SVG");
    check_well_formed(&svg);
    assert!(svg.starts_with("<svg ") && svg.contains(r#" xmlns="http://www.w3.org/2000/svg""#));
    assert_eq!(svg.matches("<polyline").count(), 4, "{svg}");
    // plotters writes each text on a line of its own inside its element.
    let text = |t: &str| svg.contains(&format!(">\n{t}\n</text>"));
    assert!(text("direct") && text("nginx"), "{svg}");
    assert!(text("nginx (round 2)"), "{svg}");
    // The subtitle says what was run: the load, once when every run had the same (the targets
    // are in the legend; their URLs would be mostly port numbers).
    assert!(text("-R500 -c4 -d2s, every run"), "{svg}");
    assert!(!svg.contains("127.0.0.1"), "{svg}");
    for tick in ["0%", "90%", "99%", "99.9%"] {
        assert!(text(tick), "{tick}");
    }
    // Keep one for people to look at.
    let _ = std::fs::copy(&svg_path, "/tmp/tsumo-plot-sample.svg");
}

/// The SVG parses as XML (roxmltree, a dev-dependency) with `<svg>` as its root.
fn check_well_formed(xml: &str) {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("not XML ({e}):\n{xml}"));
    assert!(doc.root_element().has_tag_name("svg"), "{xml}");
}

#[test]
fn bad_inputs_are_one_line_and_exit_2() {
    let r = runs();
    let dir = r.dir.path();
    let not_tsumo = dir.join("not-tsumo.json");
    std::fs::write(&not_tsumo, "{\"hello\": 1}\n").expect("write");
    let not_json = dir.join("not-json.json");
    std::fs::write(&not_json, "Running 2s test\n").expect("write");
    // A whole session as `tsumo mahjong --json` writes it (the typed reader wants every field).
    let mahjong =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mahjong-direct-v1.json");
    let missing = dir.join("missing.json");
    let d1 = &r.direct[0];
    let out_path = dir.join("out");
    let cases: Vec<(Vec<&Path>, &str)> = vec![
        (vec![Path::new("compare"), d1, &missing], "missing.json: "),
        (
            vec![Path::new("compare"), d1, &not_tsumo],
            "not a tsumo JSON result",
        ),
        (
            vec![Path::new("compare"), &not_json],
            "not a tsumo JSON result",
        ),
        (
            vec![Path::new("compare"), d1, &mahjong],
            "cannot compare an HTTP run",
        ),
        (
            vec![Path::new("merge"), &mahjong, d1, Path::new("-o"), &out_path],
            "cannot merge a mahjong run",
        ),
        (
            vec![Path::new("plot"), d1, &mahjong, Path::new("-o"), &out_path],
            "cannot plot an HTTP run",
        ),
        (
            vec![Path::new("plot"), d1, &missing, Path::new("-o"), &out_path],
            "missing.json",
        ),
        (vec![Path::new("merge"), d1], "missing -o FILE"),
        (vec![Path::new("compare")], "no result files given"),
        // One run given twice would count twice in its label's mean ("direct varies 0%").
        (
            vec![Path::new("compare"), d1, d1, &r.proxied[0]],
            "are the same run; give each run once",
        ),
    ];
    for (args, needle) in cases {
        let out = tsumo(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(
            out.stderr.starts_with("tsumo: "),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{args:?}");
    }
    assert!(!out_path.exists(), "nothing written on an error");
}

/// A session's length is in seconds in the table, as its report's `Session: 130.25s` line
/// says it (not `2.17m` beside it).
#[test]
fn a_sessions_elapsed_is_in_the_seconds_of_its_report() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let out = tsumo(&[
        Path::new("compare"),
        &fixtures.join("mahjong-direct-v1.json"),
        &fixtures.join("mahjong-nginx-v1.json"),
    ]);
    out.assert_success();
    assert_eq!(
        table_row(&out.stdout, "Elapsed")[..2],
        ["130.25s", "130.25s"],
        "{}",
        out.stdout
    );
}
