//! Answers a command must refuse before it sends anything, and what a result keeps of the
//! command that made it: every output distinct from every other and from every input (each
//! command that writes), objectives that could never hold, one objective twice, a staircase
//! whose steps are one rate, a run reported beside itself; the exact command line in every
//! kind of saved result and on its page; and the wording of a few refusals. Each refusal is
//! exit 2, exactly one `tsumo: ` line on stderr, nothing on stdout, and every file as it was.

mod common;

use std::path::Path;

use std::time::Duration;

use common::faulty::{Behavior, FaultyServer};
use common::majiang::Majiang;
use common::{run_tsumo, TempDir};

/// Nothing listens there: a command that got past its checks would fail to connect, exit 1.
const NOWHERE: &str = "http://127.0.0.1:9/";

/// Runs `tsumo ARGS` in `dir` and checks it was refused with exactly `line` (after
/// `tsumo: `): exit 2, one line, nothing on stdout. The failure, if any, is returned.
fn refused_in(dir: &Path, args: &[&str], line: &str) -> Option<String> {
    let mut command = common::tsumo();
    command.args(args).current_dir(dir);
    let out = common::run_command(command, Duration::from_secs(60));
    let want = format!("tsumo: {line}\n");
    let ok = out.status.code() == Some(2) && out.stdout.is_empty() && out.stderr == want;
    (!ok).then(|| {
        format!(
            "{args:?}: exit {:?}, stdout {:?}, stderr {:?}, wanted {want:?}",
            out.status.code(),
            out.stdout,
            out.stderr
        )
    })
}

/// The files of `dir` with their contents, sorted.
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|entry| {
            let path = entry.expect("entry").path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap_or_default())
        })
        .collect();
    files.sort();
    files
}

/// Every command that writes checks all its outputs against each other and against every
/// file it reads, under any name of the file (`./s.lua` is `s.lua`), before any traffic:
/// `--hlog` onto `--json`, `--html` or `-s`; `--json`/`--html` onto `-s`, `--cacert` or
/// `--rule`; `--html` onto `--hgrm`. The files are left exactly as they were and no new file
/// appears.
#[test]
fn every_output_is_distinct_from_every_other_and_from_every_input() {
    let dir = TempDir::new("tsumo-checks-outputs");
    let saved = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/http-direct-v1.json"
    );
    std::fs::copy(saved, dir.path().join("a.json")).expect("copy fixture");
    std::fs::write(dir.path().join("s.lua"), "wrk.method = \"POST\"\n").expect("write");
    std::fs::write(dir.path().join("ca.pem"), "not a certificate\n").expect("write");
    std::fs::write(dir.path().join("rule.json"), "{}\n").expect("write");
    std::fs::write(dir.path().join("out.txt"), "an earlier output\n").expect("write");
    let before = snapshot(dir.path());
    let overwritten = |flag: &str, path: &str, input: &str, what: &str| {
        format!("{flag} {path} is {input} ({what}): it would be overwritten; write to another file")
    };
    let twice = |flag: &str, path: &str, first: &str| {
        format!(
            "{flag} {path} is the {first} file too: one would overwrite the other; give each its \
             own file"
        )
    };
    let script = "the -s script";
    let cases: Vec<(Vec<&str>, String)> = vec![
        // An HTTP run: --hlog onto every other file of the run.
        (
            vec!["-d1s", "--json", "out.txt", "--hlog", "./out.txt", NOWHERE],
            twice("--hlog", "./out.txt", "--json"),
        ),
        (
            vec!["-d1s", "--html", "out.txt", "--hlog", "out.txt", NOWHERE],
            twice("--hlog", "out.txt", "--html"),
        ),
        (
            vec!["-d1s", "--hgrm", "out.txt", "--hlog", "out.txt", NOWHERE],
            twice("--hlog", "out.txt", "--hgrm"),
        ),
        (
            vec!["-d1s", "-s", "s.lua", "--hlog", "s.lua", NOWHERE],
            overwritten("--hlog", "s.lua", "s.lua", script),
        ),
        // --json or --html onto the script; --html and --hgrm one file.
        (
            vec!["-d1s", "-s", "./s.lua", "--json", "s.lua", NOWHERE],
            overwritten("--json", "s.lua", "./s.lua", script),
        ),
        (
            vec!["-d1s", "-s", "s.lua", "--html", "s.lua", NOWHERE],
            overwritten("--html", "s.lua", "s.lua", script),
        ),
        (
            vec!["-d1s", "--html", "new.html", "--hgrm", "new.html", NOWHERE],
            twice("--hgrm", "new.html", "--html"),
        ),
        (
            vec!["-d1s", "--cacert", "ca.pem", "--json", "ca.pem", NOWHERE],
            overwritten("--json", "ca.pem", "ca.pem", "the --cacert file"),
        ),
        // --vs writes --json and --html.
        (
            vec![
                "-d1s",
                "--vs",
                "http://127.0.0.1:9/b",
                "-s",
                "s.lua",
                "--html",
                "s.lua",
                NOWHERE,
            ],
            overwritten("--html", "s.lua", "s.lua", script),
        ),
        // A capacity search.
        (
            vec![
                "capacity", "--slo", "p99<1s", "-s", "s.lua", "--json", "s.lua", NOWHERE,
            ],
            overwritten("--json", "s.lua", "s.lua", script),
        ),
        (
            vec![
                "capacity", "--slo", "p99<1s", "--json", "out.txt", "--html", "out.txt", NOWHERE,
            ],
            twice("--html", "out.txt", "--json"),
        ),
        // A mahjong session, and its capacity search.
        (
            vec![
                "mahjong",
                "--rule",
                "rule.json",
                "--json",
                "rule.json",
                NOWHERE,
            ],
            overwritten("--json", "rule.json", "rule.json", "the --rule file"),
        ),
        (
            vec![
                "mahjong",
                "--json",
                "out.txt",
                "--html",
                "./out.txt",
                NOWHERE,
            ],
            twice("--html", "./out.txt", "--json"),
        ),
        (
            vec![
                "mahjong",
                "--capacity",
                "--slo",
                "disconnects<1",
                "--cacert",
                "ca.pem",
                "--html",
                "ca.pem",
                NOWHERE,
            ],
            overwritten("--html", "ca.pem", "ca.pem", "the --cacert file"),
        ),
        // The tools that write: -o onto an input.
        (
            vec!["report", "a.json", "-o", "./a.json"],
            overwritten("-o", "./a.json", "a.json", "one of the files to report"),
        ),
        (
            vec!["merge", "a.json", "b.json", "-o", "a.json"],
            overwritten("-o", "a.json", "a.json", "one of the files to merge"),
        ),
    ];
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(args, line)| refused_in(dir.path(), args, line))
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    assert_eq!(snapshot(dir.path()), before, "a file changed or appeared");
}

/// An objective no run can hold (an upper limit of 0), or one a session can never measure (a
/// draw's overshoot is timed only when `--think` is at least the server's 400 ms step), is
/// refused with why, instead of sending traffic to break it at every load.
#[test]
fn objectives_that_can_never_hold_are_refused() {
    let dir = TempDir::new("tsumo-checks-never");
    let draw = "--slo 'draw_overshoot.p99<100ms': can never be measured with --think 200ms: a \
                draw's overshoot is timed only when the think time is at least the server's \
                minimum step, 400ms (give --think 400ms or more)";
    let cases: &[(&[&str], &str)] = &[
        (
            &["-d1s", "--slo", "p99<0ms", NOWHERE],
            "--slo 'p99<0ms': can never hold: no latency is below 0",
        ),
        (
            &["-d1s", "--slo", "errors<0%", NOWHERE],
            "--slo 'errors<0%': can never hold: no share is below 0%",
        ),
        (
            &[
                "capacity",
                "--slo",
                "p99<20ms",
                "--slo",
                "errors<0%",
                NOWHERE,
            ],
            "--slo 'errors<0%': can never hold: no share is below 0%",
        ),
        (
            &["mahjong", "--slo", "disconnects<0", NOWHERE],
            "--slo 'disconnects<0': can never hold: no count is below 0 (disconnects<1 allows \
             none)",
        ),
        (
            &[
                "mahjong",
                "--think",
                "200ms",
                "--slo",
                "draw_overshoot.p99<100ms",
                NOWHERE,
            ],
            draw,
        ),
        (
            &[
                "mahjong",
                "--capacity",
                "--think",
                "200ms",
                "--slo",
                "draw_overshoot.p99<100ms",
                NOWHERE,
            ],
            draw,
        ),
    ];
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(args, line)| refused_in(dir.path(), args, line))
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The same objective given twice (as typed, or another way), a staircase whose steps are one
/// rate, and `tsumo report` of one run beside itself are refused as `merge` refuses it.
#[test]
fn one_objective_twice_a_one_rate_staircase_and_a_run_beside_itself_are_refused() {
    let dir = TempDir::new("tsumo-checks-twice");
    let saved = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/http-direct-v1.json"
    );
    std::fs::copy(saved, dir.path().join("a.json")).expect("copy fixture");
    std::fs::copy(saved, dir.path().join("copy.json")).expect("copy fixture");
    let before = snapshot(dir.path());
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "-d1s", "--slo", "p99<20ms", "--slo", "p99<20ms", "--slo", "p99<20ms", NOWHERE,
            ],
            "--slo 'p99<20ms' is given twice: give each objective once",
        ),
        (
            &[
                "capacity",
                "--slo",
                "p99<20ms",
                "--slo",
                "p99 < 20000us",
                NOWHERE,
            ],
            "--slo 'p99 < 20000us' is 'p99<20ms' again: give each objective once",
        ),
        (
            &[
                "mahjong",
                "--slo",
                "disconnects<1",
                "--slo",
                "disconnects<1",
                NOWHERE,
            ],
            "--slo 'disconnects<1' is given twice: give each objective once",
        ),
        (
            &[
                "capacity",
                "--slo",
                "p99<20ms",
                "--from",
                "100",
                "--to",
                "100",
                "--step-count",
                "3",
                NOWHERE,
            ],
            "--step-count 3 from --from 100 to --to 100 is 1 distinct rate, not 3: give --to \
             further above --from, or fewer steps",
        ),
        (
            &["report", "a.json", "a.json", "-o", "page.html"],
            "report: a.json and a.json are the same run; give each run once",
        ),
        (
            &["report", "a.json", "copy.json", "-o", "page.html"],
            "report: a.json and copy.json are the same run; give each run once",
        ),
    ];
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(args, line)| refused_in(dir.path(), args, line))
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    assert_eq!(snapshot(dir.path()), before, "a file changed or appeared");
}

/// Refusals in one plain line: an `--slo` with a newline in it (escaped, not three lines), the
/// default `-c` that does not split over shards (not "-c 4 … 1 tables"), a capacity search
/// whose `-s` file is missing (no "capacity: step 1 …" line before it).
#[test]
fn refusals_say_it_in_one_plain_line() {
    let dir = TempDir::new("tsumo-checks-wording");
    let cases: &[(&[&str], &str)] = &[
        (
            &["-d1s", "--slo", "p99<2\n0ms", NOWHERE],
            "--slo 'p99<2\\n0ms': unknown unit '\\n0ms' in 2\\n0ms (use us, ms or s)",
        ),
        (
            &["capacity", "--slo", "p9\n9<20ms", NOWHERE],
            "--slo 'p9\\n9<20ms': unknown measure 'p9\\n9' (an HTTP run's are p50, p75, p90, \
             p99, p99.9, p99.99, max, errors or rate)",
        ),
        (
            &["mahjong", "--shard", "1/2", NOWHERE],
            "the default 4 players (no -c) are 1 table, which does not split evenly into 2 \
             shards: give -c a multiple of 8 players (8)",
        ),
        (
            &[
                "capacity",
                "--slo",
                "p99<20ms",
                "-s",
                "missing.lua",
                NOWHERE,
            ],
            "missing.lua: cannot open missing.lua: No such file or directory",
        ),
    ];
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(args, line)| refused_in(dir.path(), args, line))
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// The page's `<code>` of the Command fact, as the page escapes it.
fn command_on_page(page: &str) -> Option<String> {
    let start = page.find("data-fact=\"command\"><code>")? + "data-fact=\"command\"><code>".len();
    let end = start + page[start..].find("</code>")?;
    Some(page[start..end].to_string())
}

/// The argv as a shell would take it back, HTML-escaped as on the page.
fn shell_line(argv: &[&str]) -> String {
    let word = |w: &str| {
        let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
        if !w.is_empty() && w.chars().all(safe) {
            w.to_string()
        } else {
            format!("'{}'", w.replace('\'', "'\\''"))
        }
    };
    let line: Vec<String> = argv.iter().map(|w| word(w)).collect();
    line.join(" ")
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The exact command line is saved in the JSON (`command`: argv as given, `-s`, `-H`, `-t` and
/// the search's options included) of a run and of a capacity search, and the page shows it
/// (the run's own page, and `tsumo report` of the saved file); a file without one (an older
/// tsumo's) still loads, its page showing the line rebuilt from its plan.
#[test]
fn the_exact_command_line_is_saved_and_shown() {
    let dir = TempDir::new("tsumo-checks-command");
    let path = |name: &str| dir.path().join(name).display().to_string();
    let server = FaultyServer::start(Behavior::CloseEvery(u64::MAX));
    let url = server.url("/");
    let script = path("post.lua");
    std::fs::write(&script, "wrk.method = \"POST\"\nwrk.body = \"it's\"\n").expect("write");
    let (json, html, report) = (path("run.json"), path("run.html"), path("report.html"));
    let binary = common::TSUMO;
    let args = [
        "-t1",
        "-c1",
        "-d1s",
        "-R20",
        "-s",
        &script,
        "-H",
        "X-Test: it's <here>",
        "--slo",
        "p99<2s",
        "--json",
        &json,
        "--html",
        &html,
        &url,
    ];
    run_tsumo(&args, Duration::from_secs(30)).assert_success();
    let argv: Vec<&str> = std::iter::once(binary).chain(args).collect();
    let saved = common::read_json(Path::new(&json));
    assert_eq!(saved["command"], serde_json::json!(argv), "{saved}");
    let page = std::fs::read_to_string(&html).expect("page");
    assert_eq!(command_on_page(&page), Some(shell_line(&argv)));
    run_tsumo(&["report", &json, "-o", &report], Duration::from_secs(30)).assert_success();
    let page = std::fs::read_to_string(&report).expect("page");
    assert_eq!(command_on_page(&page), Some(shell_line(&argv)));

    // A capacity search (a staircase of two short steps): the search's options too.
    let (json, html) = (path("search.json"), path("search.html"));
    let args = [
        "capacity",
        "-t1",
        "-c1",
        "--slo",
        "p99<2s",
        "--steps",
        "10,20",
        "--step",
        "1s",
        "--warmup",
        "0s",
        "--pause",
        "0s",
        "-H",
        "X-Test: 1",
        "--json",
        &json,
        "--html",
        &html,
        &url,
    ];
    run_tsumo(&args, Duration::from_secs(60)).assert_success();
    let argv: Vec<&str> = std::iter::once(binary).chain(args).collect();
    let saved = common::read_json(Path::new(&json));
    assert_eq!(saved["command"], serde_json::json!(argv), "{saved}");
    let page = std::fs::read_to_string(&html).expect("page");
    assert_eq!(command_on_page(&page), Some(shell_line(&argv)));

    // An older file has no command line: it loads, and its page rebuilds one from the plan.
    let old = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/http-direct-v1.json"
    );
    run_tsumo(&["report", old, "-o", &report], Duration::from_secs(30)).assert_success();
    let page = std::fs::read_to_string(&report).expect("page");
    let rebuilt = command_on_page(&page).expect("a Command fact");
    assert!(rebuilt.starts_with("tsumo "), "{rebuilt}");
}

/// A mahjong session saves its command line and shows it on its page, as a run does.
#[test]
fn a_session_saves_its_command_line_too() {
    let server = Majiang::start();
    let url = server.url();
    let dir = TempDir::new("tsumo-checks-session");
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (json, html) = (path("session.json"), path("session.html"));
    let args = [
        "mahjong",
        "-c4",
        "-t1",
        "--think",
        "0",
        "--ramp",
        "1ms",
        "-d",
        "3s",
        "--label",
        "it's here",
        "--json",
        &json,
        "--html",
        &html,
        &url,
    ];
    run_tsumo(&args, Duration::from_secs(60)).assert_success();
    let argv: Vec<&str> = std::iter::once(common::TSUMO).chain(args).collect();
    let saved = common::read_json(Path::new(&json));
    assert_eq!(saved["command"], serde_json::json!(argv), "{saved}");
    let page = std::fs::read_to_string(&html).expect("page");
    assert_eq!(command_on_page(&page), Some(shell_line(&argv)));
}
