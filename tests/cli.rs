//! The command line as a user meets it: the real binary, its exit code and what lands on
//! stdout and stderr. Scripts rely on exit 2 with exactly one `tsumo: ` line for every bad
//! command line, and on `-h`/`-v` printing to stdout with exit 0. No server is needed: every
//! command line here is rejected before the engine starts, except in the exit-status table
//! (0 ran, 1 failed, 2 bad input), which runs against an in-process server.

mod common;

use std::process::Output;
use std::time::Duration;

use common::faulty::{Behavior, FaultyServer};
use common::{run_tsumo, TempDir};

fn tsumo(args: &[&str]) -> Output {
    match common::tsumo().args(args).output() {
        Ok(output) => output,
        Err(e) => panic!("cannot run tsumo: {e}"),
    }
}

/// Each bad command line and the start of the one line it must print (after `tsumo: `).
const BAD: &[(&[&str], &str)] = &[
    (
        &["--slo", "p99<20", "http://127.0.0.1/"],
        "--slo 'p99<20': no unit in 20 (use us, ms or s)",
    ),
    (
        &["--slo", "rate>95%", "http://127.0.0.1/"],
        "--slo 'rate>95%': needs a target rate (-R); a closed-loop run has none",
    ),
    (
        &[
            "--slo",
            "draw_overshoot.p99<100ms",
            "-R1",
            "http://127.0.0.1/",
        ],
        "--slo 'draw_overshoot.p99<100ms': draw_overshoot.p99 is a mahjong measure",
    ),
    (
        &[
            "--slo",
            "p99<20ms",
            "--vs",
            "http://127.0.0.1:1/",
            "http://127.0.0.1/",
        ],
        "--slo judges a single run, not --vs",
    ),
    (
        &["mahjong", "--slo", "p99<20ms", "http://127.0.0.1/"],
        "--slo 'p99<20ms': p99 is an HTTP measure; in a session say which histogram",
    ),
    (
        &[
            "mahjong",
            "--slo",
            "draw_overshoot.p99<1",
            "http://127.0.0.1/",
        ],
        "--slo 'draw_overshoot.p99<1': no unit in 1 (use us, ms or s)",
    ),
    (
        &["-m4", "http://127.0.0.1/"],
        "-m/--streams needs --http2 or --http3",
    ),
    (
        &["--http2", "-m0", "http://127.0.0.1/"],
        "invalid value '0' for -m: must be at least 1",
    ),
    (
        &["--h2-window", "1m", "http://127.0.0.1/"],
        "--h2-window needs --http2",
    ),
    (
        &["--http2", "--h2-max-frame", "1k", "http://127.0.0.1/"],
        "invalid value '1k' for --h2-max-frame: must be 16k to 16m-1 bytes",
    ),
    (
        &["--http2", "--h2-window", "4g", "http://127.0.0.1/"],
        "invalid value '4g' for --h2-window: must be 1 to 2^31-1 bytes",
    ),
    (
        &["--http2", "--vs-http1", "http://127.0.0.1/"],
        "--vs-http1 needs --vs URL",
    ),
    (&["--foo", "http://127.0.0.1/"], "unknown option '--foo'"),
    (&["http://127.0.0.1/", "-x"], "unknown option '-x'"),
    (&["http://127.0.0.1/", "-c"], "option '-c' needs a value"),
    (
        &["http://127.0.0.1/", "--rate"],
        "option '-R' needs a value",
    ),
    (
        &["--quiet=yes", "http://127.0.0.1/"],
        "option '--quiet' does not take a value",
    ),
    (
        &["-d", "1.5", "http://127.0.0.1/"],
        "invalid value '1.5' for -d:",
    ),
    (
        &["-c", "1k5", "http://127.0.0.1/"],
        "invalid value '1k5' for -c:",
    ),
    (
        &["-R", "10s", "http://127.0.0.1/"],
        "invalid value '10s' for -R:",
    ),
    (
        &["-T", "1k", "http://127.0.0.1/"],
        "invalid value '1k' for -T:",
    ),
    (
        &["-t", "-1", "http://127.0.0.1/"],
        "invalid value '-1' for -t:",
    ),
    (&["-t", "", "http://127.0.0.1/"], "invalid value '' for -t:"),
    (
        &["-c", "99999999999999999999", "http://127.0.0.1/"],
        "invalid value '99999999999999999999' for -c:",
    ),
    (
        &["-t0", "http://127.0.0.1/"],
        "invalid value '0' for -t: must be at least 1",
    ),
    (
        &["-t2", "-c1", "http://127.0.0.1/"],
        "-c 1 is fewer connections than -t 2 threads; each thread needs at least one connection",
    ),
    (&["-d0", "http://127.0.0.1/"], "invalid value '0' for -d:"),
    (&["-R0", "http://127.0.0.1/"], "invalid value '0' for -R:"),
    (&["-T0", "http://127.0.0.1/"], "invalid value '0' for -T:"),
    (&[], "missing URL (usage: tsumo [options] <url>)"),
    (&["-t1", "-c1", "-d1s"], "missing URL"),
    (&["localhost:8080"], "invalid URL 'localhost:8080':"),
    (
        &["ftp://x"],
        "invalid URL 'ftp://x': scheme must be http or https",
    ),
    (&["http://"], "invalid URL 'http://': missing host"),
    (
        &["http://127.0.0.1:0/"],
        "invalid URL 'http://127.0.0.1:0/': port",
    ),
    (
        &["http://127.0.0.1:65536/"],
        "invalid URL 'http://127.0.0.1:65536/': port",
    ),
    (&["http://[::1/"], "invalid URL 'http://[::1/':"),
    (
        &["http://127.0.0.1/a b"],
        "invalid URL 'http://127.0.0.1/a b':",
    ),
    (
        &["-H", "NoColon", "http://127.0.0.1/"],
        "invalid header 'NoColon' for -H:",
    ),
    (
        &["-H", ": value", "http://127.0.0.1/"],
        "invalid header ': value' for -H:",
    ),
    (
        &["--json", "", "http://127.0.0.1/"],
        "option '--json' needs a value",
    ),
    (
        &["--interval", "0", "http://127.0.0.1/"],
        "invalid value '0' for --interval: must be at least 10ms",
    ),
    (
        &["--interval", "often", "http://127.0.0.1/"],
        "invalid value 'often' for --interval:",
    ),
    (
        &["mahjong", "--interval", "5ms", "http://127.0.0.1/"],
        "invalid value '5ms' for --interval: must be at least 10ms",
    ),
];

#[test]
fn bad_command_lines_fail_with_one_line() {
    let mut failures = Vec::new();
    for (args, want) in BAD {
        let out = tsumo(args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ok = out.status.code() == Some(2)
            && stdout.is_empty()
            && stderr.ends_with('\n')
            && stderr.lines().count() == 1
            && stderr.starts_with(&format!("tsumo: {want}"));
        if !ok {
            failures.push(format!(
                "{args:?}: exit {:?}, stdout {stdout:?}, stderr {stderr:?}, wanted 'tsumo: {want}…'",
                out.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn help_prints_usage_on_stdout() {
    for flag in ["-h", "--help"] {
        let out = tsumo(&[flag]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{flag}");
        assert!(out.stderr.is_empty(), "{flag}");
        assert!(stdout.contains("Usage: tsumo"), "{flag}: {stdout}");
        for option in ["--connections", "--rate", "--timeout", "--json", "500ms"] {
            assert!(stdout.contains(option), "{flag}: help lacks {option}");
        }
        for status in ["Exit status", "\n  0  ", "\n  1  ", "\n  2  ", "\n  99 "] {
            assert!(stdout.contains(status), "{flag}: help lacks {status:?}");
        }
    }
    // Each command's own help says its exit statuses too.
    for command in ["mahjong", "doctor", "compare", "merge", "plot", "report"] {
        let out = tsumo(&[command, "--help"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{command}");
        assert!(stdout.contains("Exit status: 0 "), "{command}: {stdout}");
        assert!(
            stdout.contains("; 2 ") || stdout.contains("\n2 "),
            "{command}: {stdout}"
        );
    }
}

#[test]
fn version_prints_name_and_version() {
    for args in [&["-v"][..], &["--version"], &["http://127.0.0.1/", "-v"]] {
        let out = tsumo(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("tsumo {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
}

/// Too many connections for the open-file limit: refused before any traffic, naming `ulimit -n`
/// (the hard limit is lowered for the child only, so tsumo cannot raise its way out).
#[test]
fn connections_beyond_the_open_file_limit_are_refused_up_front() {
    use std::os::unix::process::CommandExt;
    let mut command = common::tsumo();
    command.args(["-c", "200", "-d1s", "http://127.0.0.1:9/"]);
    // SAFETY: setrlimit(2) is async-signal-safe, as the child between fork and exec needs.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 100,
                rlim_max: 100,
            };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let out = command.output().expect("run tsumo");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("ulimit -n"), "{stderr}");
}

/// `--rounds` and `--vs-label` without `--vs` (in both modes), or `--hgrm` with it: one line,
/// exit 2, not a run that silently ignores them.
#[test]
fn ab_options_without_vs_are_refused() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--rounds", "2", "http://127.0.0.1:9/"],
            "tsumo: --rounds needs --vs URL",
        ),
        (
            &["--vs-label", "b", "http://127.0.0.1:9/"],
            "tsumo: --vs-label needs --vs URL",
        ),
        (
            &["mahjong", "--rounds", "2", "http://127.0.0.1:9/"],
            "tsumo: --rounds needs --vs URL",
        ),
        (
            &[
                "--vs",
                "http://127.0.0.1:9/b",
                "--hgrm",
                "x.hgrm",
                "http://127.0.0.1:9/",
            ],
            "tsumo: --hgrm goes with a single run, not --vs",
        ),
        (
            &[
                "--vs",
                "http://127.0.0.1:9/b",
                "--hlog",
                "x.hlog",
                "http://127.0.0.1:9/",
            ],
            "tsumo: --hlog goes with a single run, not --vs",
        ),
    ];
    for (args, want) in cases {
        let out = tsumo(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with(want), "{args:?}: {stderr}");
    }
}

/// An output file that is another output or an input, under any name of it (`./a.json` is
/// `a.json`; a file not written yet included): refused with one line before any work, and the
/// file is left as it was.
#[test]
fn outputs_never_overwrite_an_input_or_each_other() {
    let dir = std::env::temp_dir().join(format!("tsumo-cli-outputs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let shard = dir.join("s1.json");
    std::fs::write(&shard, "shard 1\n").expect("write");
    let run_in_dir = |args: &[&str]| {
        common::tsumo()
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("run tsumo")
    };
    let cases: &[(&[&str], &str)] = &[
        (
            &["merge", "s1.json", "s2.json", "-o", "./s1.json"],
            "tsumo: -o ./s1.json is s1.json (one of the files to merge): it would be overwritten",
        ),
        (
            &["plot", "s1.json", "-o", "s1.json"],
            "tsumo: -o s1.json is s1.json (one of the files to plot)",
        ),
        // Neither file there yet; port 9 answers nothing, so any traffic would fail otherwise.
        (
            &[
                "--json",
                "run.json",
                "--hgrm",
                "./run.json",
                "http://127.0.0.1:9/",
            ],
            "tsumo: --hgrm ./run.json is the --json file too",
        ),
        (
            &[
                "--json",
                "s1.json",
                "--hgrm",
                "s1.json",
                "http://127.0.0.1:9/",
            ],
            "tsumo: --hgrm s1.json is the --json file too",
        ),
    ];
    for (args, want) in cases {
        let out = run_in_dir(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with(want), "{args:?}: {stderr}");
    }
    assert_eq!(std::fs::read_to_string(&shard).expect("read"), "shard 1\n");
    assert!(!dir.join("run.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The exit statuses a script tells apart, in every command: 0 the run ran, 1 the run failed
/// (nothing answers, no response, a failed check), 2 bad command line or input (an option, a
/// file named on the command line, an output path, saved runs that do not belong together),
/// 99 the run ran and an objective (`--slo`) broke. Each failure is one `tsumo: ` line on
/// stderr.
#[test]
fn exit_statuses_tell_ran_failed_and_bad_input_apart() {
    let dir = TempDir::new("tsumo-cli-exit");
    let path = |name: &str| dir.path().join(name).display().to_string();
    // Never `Connection: close` in practice: a plain keep-alive server.
    let server = FaultyServer::start(Behavior::CloseEvery(u64::MAX));
    let url = server.url("/");
    // Connects (the kernel completes them) but never answers: the pre-flight passes.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent = format!("http://{}/", silent.local_addr().expect("addr"));
    let refused = format!("http://127.0.0.1:{}/", common::free_port());
    let (saved, not_json) = (path("run.json"), path("not.json"));
    std::fs::write(&not_json, "not JSON\n").expect("write");
    let (missing, no_dir) = (path("missing.lua"), path("no-dir/run.json"));
    fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
        [&["-t1", "-c1", "-d1s", "-R20"][..], extra].concat()
    }

    let clean = run_tsumo(&with(&["--json", &saved, &url]), Duration::from_secs(30));
    assert_eq!(clean.status.code(), Some(0), "{clean:?}");
    assert!(clean.stderr.is_empty(), "{clean:?}");
    let held = run_tsumo(&with(&["--slo", "p99<10s", &url]), Duration::from_secs(30));
    assert_eq!(held.status.code(), Some(0), "{held:?}");
    assert!(held.stdout.contains("Objectives: all 1 held"), "{held:?}");
    let compared = run_tsumo(&["compare", &saved], Duration::from_secs(30));
    assert_eq!(compared.status.code(), Some(0), "{compared:?}");

    let cases: &[(Vec<&str>, i32, &str)] = &[
        // An objective broke: 99 (no response comes back within 1us); one held: 0.
        (
            with(&["--slo", "p99<1us", "--slo", "p99<1s", &url]),
            99,
            "objectives broken: p99<1us (server's p99 ",
        ),
        // The run failed, an objective too: still 1.
        (
            with(&["--slo", "p99<1us", "-T", "500ms", &silent]),
            1,
            "no response was received",
        ),
        // The run failed: 1.
        (with(&[&refused]), 1, "unable to connect to 127.0.0.1:"),
        (
            with(&["-T", "500ms", &silent]),
            1,
            "no response was received",
        ),
        (with(&["--vs", &refused, &url]), 1, &refused),
        (vec!["mahjong", "-c4", &refused], 1, "unable to connect to"),
        // doctor's target check fails; its report is on stdout, nothing on stderr.
        (vec!["doctor", &refused], 1, ""),
        // Bad command line or input: 2.
        (vec!["--nope", &url], 2, "unknown option '--nope'"),
        (vec!["-c1"], 2, ""),
        (with(&["-s", &missing, &silent]), 2, &missing),
        (
            with(&["--vs", &silent, "-s", &missing, &silent]),
            2,
            &silent,
        ),
        (with(&["--json", &no_dir, &url]), 2, "--json"),
        (vec!["mahjong", "--rule", &missing, &url], 2, "--rule"),
        (
            vec!["mahjong", "--nope", &url],
            2,
            "unknown option '--nope'",
        ),
        (vec!["doctor", "--nope"], 2, "unknown option '--nope'"),
        (vec!["compare", &missing], 2, &missing),
        (vec!["compare", &not_json], 2, &not_json),
        (
            vec!["merge", &saved, &saved, "-o", "-"],
            2,
            "are the same run",
        ),
        (vec!["merge", &saved], 2, "missing -o FILE"),
        (vec!["plot", &not_json, "-o", "-"], 2, &not_json),
    ];
    let mut wrong = Vec::new();
    for (args, status, needle) in cases {
        let out = run_tsumo(args, Duration::from_secs(30));
        let stderr_ok = match (*status, args[0]) {
            (1, "doctor") => out.stderr.is_empty() && out.stdout.contains("FAIL"),
            _ => {
                out.stderr.lines().count() == 1
                    && out.stderr.starts_with("tsumo: ")
                    && out.stderr.contains(needle)
            }
        };
        if out.status.code() != Some(*status) || !stderr_ok {
            wrong.push(format!(
                "{args:?}: wanted {status} and {needle:?}, got {:?}, stderr {:?}",
                out.status.code(),
                out.stderr
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// `tsumo report`'s bad input: one line, exit 2, no page written.
#[test]
fn report_refuses_bad_input_in_one_line() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/http-direct-v1.json"
    );
    let session = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mahjong-direct-v1.json"
    );
    let dir = common::TempDir::new("report-cli");
    let page = dir.path().join("page.html");
    let page = page.to_str().unwrap();
    for (args, says) in [
        (vec!["report", fixture], "missing -o FILE"),
        (vec!["report", "-o", page], "no result files given"),
        (
            vec!["report", "/nonexistent/run.json", "-o", page],
            "/nonexistent/run.json",
        ),
        (
            vec!["report", fixture, session, "-o", page],
            "give runs of one mode",
        ),
        (
            vec!["report", fixture, "-o", fixture],
            "it would be overwritten",
        ),
        (
            vec!["report", fixture, "-o", "/nonexistent/page.html"],
            "/nonexistent/page.html",
        ),
    ] {
        let out = tsumo(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!std::path::Path::new(page).exists(), "{args:?}");
    }
    // A run's --html and --json naming one file: refused before any traffic.
    let out = tsumo(&[
        "-d1s",
        "--json",
        page,
        "--html",
        page,
        "http://127.0.0.1:9/",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--html"), "{stderr}");
    let out = tsumo(&["report", fixture, "-o", page]);
    assert_eq!(out.status.code(), Some(0));
    let html = std::fs::read_to_string(page).expect("page written");
    assert!(html.starts_with("<!DOCTYPE html>"));
}
