//! `tsumo mahjong` against the real majiang-server (tests/common/majiang.rs), directly and through
//! an nginx WebSocket reverse proxy: runs cut short by `-d` and by Ctrl-C, and the failures a
//! user meets (server down, wrong base path, no cookie, the proxy going away). Every test checks
//! what a user would: games counted, phases counted, and the server's session store empty
//! afterwards — nobody left logged in. Full games played to the end are in mahjong_games.rs.
//! Also tsumo's default rule run in majiang-core itself, on a triple ron.

mod common;

use std::time::Duration;

use common::fake_majiang::{FakeMajiang, Fault};
use common::majiang::Majiang;
use common::nginx::Nginx;
use common::{run_tsumo, Run, Signalled};
use serde_json::Value;

fn mahjong(args: &[&str], limit: Duration) -> Run {
    let mut all = vec!["mahjong"];
    all.extend_from_slice(args);
    run_tsumo(&all, limit)
}

/// `tsumo mahjong -t1 --ramp 0 ARGS --json -` against an in-process server with `fault`.
fn against_fake(fault: Fault, args: &[&str], limit: Duration) -> Run {
    let server = FakeMajiang::start(fault);
    let url = server.url();
    let mut all = vec!["-t1", "--ramp", "0"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-", &url]);
    mahjong(&all, limit)
}

/// A session that failed as a whole: the report and JSON are still written, the exit status is
/// 1, and stderr's last line says why.
fn assert_failed_with(run: &Run, why: &str) {
    assert_eq!(run.status.code(), Some(1), "{}\n{}", run.stdout, run.stderr);
    let last = run.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("tsumo: ") && last.contains(why),
        "{}",
        run.stderr
    );
}

fn phase(doc: &Value, name: &str, field: &str) -> u64 {
    doc["phases"][name][field]
        .as_u64()
        .unwrap_or_else(|| panic!("phases.{name}.{field} missing in {doc:#}"))
}

/// `-d` ends the session mid-game: everyone is logged out and the report says so. The games
/// still being played were cut at the limit, not aborted (nothing went wrong with them), in the
/// text and the JSON.
#[test]
fn duration_limit_logs_everyone_out_mid_game() {
    let server = Majiang::start();
    let url = server.url();
    let dir = common::TempDir::new("tsumo-mahjong-cut");
    let json = dir.path().join("session.json").display().to_string();
    let run = mahjong(
        &[
            "-c8", "-t2", "--think", "0", "--ramp", "1ms", "-d", "4s", "--json", &json, &url,
        ],
        Duration::from_secs(60),
    );
    run.assert_success();
    assert!(
        run.stdout.contains("stopped at the -d limit"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("Games: 2 started, 0 completed, 2 cut at the -d limit, 0 aborted"),
        "{}",
        run.stdout
    );
    let doc = common::read_json(std::path::Path::new(&json));
    assert_eq!(doc["games"]["cut"], 2, "{doc:#}");
    assert_eq!(doc["games"]["aborted"], 0, "{doc:#}");
    // Without a think time the server sets the pace: the lead line says the lag is not measured.
    assert!(
        run.stdout.lines().nth(2).is_some_and(|l| l.starts_with(
            "  Lag a player feels (draw over think): not measured: --think under 400ms"
        )),
        "{}",
        run.stdout
    );
    let logout = run
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("logout"))
        .unwrap_or_else(|| panic!("no logout row:\n{}", run.stdout));
    assert_eq!(
        logout.split_whitespace().nth(1),
        Some("8"),
        "{}",
        run.stdout
    );
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// The lag a player at the table feels (how much later than its think time each own draw came)
/// leads the report, right under the plan line, and the progress line.
#[test]
fn the_lag_a_player_feels_leads_the_report_and_the_progress_line() {
    let server = Majiang::start();
    let url = server.url();
    let dir = common::TempDir::new("tsumo-mahjong-lag");
    let json = dir.path().join("session.json").display().to_string();
    let text = mahjong(
        &[
            "-c4",
            "-t1",
            "--think",
            "400ms",
            "--ramp",
            "0",
            "-d",
            "8s",
            "--progress",
            "--json",
            &json,
            &url,
        ],
        Duration::from_secs(60),
    );
    text.assert_success();
    let doc = common::read_json(std::path::Path::new(&json));
    let draws = doc["draw_overshoot"]["count"].as_u64().unwrap_or(0);
    assert!(draws > 0, "{doc:#}");
    let lead = text.stdout.lines().nth(2).unwrap_or_default();
    assert!(
        lead.starts_with("  Lag a player feels (draw over think): p50 ")
            && lead.ends_with(&format!(" over {draws} draws")),
        "{}",
        text.stdout
    );
    let progress: Vec<&str> = text.stderr.lines().filter(|l| l.starts_with('[')).collect();
    assert!(
        progress.iter().all(|l| l.contains("] draw over think ")),
        "{}",
        text.stderr
    );
    assert!(
        progress
            .iter()
            .any(|l| l.contains("(worst of the last draws); ")),
        "no draw on any progress line:\n{}",
        text.stderr
    );
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// A signal mid-game (Ctrl-C, or the SIGTERM that `timeout`, CI runners and Kubernetes send):
/// report printed, exit 0, nobody left logged in.
fn assert_signal_logs_everyone_out(signal: libc::c_int, name: &str) {
    let server = Majiang::start();
    let url = server.url();
    let mut tsumo = Signalled::spawn(&[
        "mahjong", "-c8", "-t2", "--think", "0", "--ramp", "1ms", "-d", "5m", &url,
    ]);
    assert!(
        server.wait_session_files(8, Duration::from_secs(10)) == 8,
        "players did not log in"
    );
    std::thread::sleep(Duration::from_secs(3));
    tsumo.kill(signal, None);
    let Run { status, stdout, .. } = tsumo.finish(Duration::from_secs(20));
    assert!(status.success(), "{status:?}\n{stdout}");
    assert!(
        stdout.contains(&format!("interrupted by {name}")),
        "{stdout}"
    );
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

#[test]
fn ctrl_c_logs_everyone_out() {
    assert_signal_logs_everyone_out(libc::SIGINT, "SIGINT");
}

#[test]
fn sigterm_logs_everyone_out() {
    assert_signal_logs_everyone_out(libc::SIGTERM, "SIGTERM");
}

#[test]
fn server_down_is_one_clear_line() {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}/server");
    let run = mahjong(&["-c4", &url], Duration::from_secs(20));
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run
        .stderr
        .starts_with("tsumo: unable to connect to 127.0.0.1:"));
}

/// A wrong base path: every login is refused (404, no cookie), counted and explained; the
/// session still ends promptly.
#[test]
fn wrong_base_path_counts_failed_logins() {
    let server = Majiang::start();
    let url = format!("http://127.0.0.1:{}/wrong", server.port());
    let run = mahjong(
        &["-c4", "-t1", "--ramp", "0", "--json", "-", &url],
        Duration::from_secs(30),
    );
    assert_failed_with(
        &run,
        "most players failed before they could play: 4 of 4 (login 4); most often login: \
         answered 404 without a MAJIANG cookie (wrong base path?)",
    );
    let doc = run.json();
    common::schema::assert_valid_doc(common::schema::Kind::Session, &doc);
    assert_eq!(phase(&doc, "login", "failed"), 4, "{doc:#}");
    assert_eq!(phase(&doc, "login", "ok"), 0);
    assert_eq!(doc["games"]["started"], 0);
    let first = doc["first_errors"][0].as_str().unwrap_or_default();
    assert!(
        first.contains("404") && first.contains("base path"),
        "{first}"
    );
    assert_eq!(server.session_files(), 0);
}

/// A login answered without a session cookie (here: an nginx location standing in for a
/// misconfigured proxy): counted as a failed login, with the reason.
#[test]
fn login_without_cookie_is_a_counted_failure() {
    let nginx = Nginx::builder()
        .server("nocookie", "location /server/ { return 302 /; }")
        .start();
    let url = format!("http://127.0.0.1:{}/server", nginx.port("nocookie"));
    let run = mahjong(
        &["-c4", "-t1", "--ramp", "0", "--json", "-", &url],
        Duration::from_secs(30),
    );
    assert_failed_with(
        &run,
        "most players failed before they could play: 4 of 4 (login 4)",
    );
    let doc = run.json();
    assert_eq!(phase(&doc, "login", "failed"), 4, "{doc:#}");
    let first = doc["first_errors"][0].as_str().unwrap_or_default();
    assert!(first.contains("without a MAJIANG cookie"), "{first}");
}

/// The proxy goes away mid-game: every socket is closed under the players. Disconnects are
/// counted, the games are aborted, and the run ends on its own — no hang.
#[test]
fn sockets_closed_by_the_server_side_are_counted_without_a_hang() {
    let server = Majiang::start();
    let nginx = Nginx::builder().ws_proxy("majiang", server.port()).start();
    let url = format!("http://127.0.0.1:{}/server", nginx.port("majiang"));
    let handle = std::thread::spawn(move || {
        mahjong(
            &[
                "-c4",
                "-t1",
                "--think",
                "0",
                "--ramp",
                "0",
                "--retries",
                "1",
                "--connect-timeout",
                "2s",
                // The logouts try again until their bound: the proxy does not come back.
                "--logout-timeout",
                "3s",
                "-d",
                "2m",
                "--json",
                "-",
                &url,
            ],
            Duration::from_secs(60),
        )
    });
    assert_eq!(server.wait_session_files(4, Duration::from_secs(10)), 4);
    std::thread::sleep(Duration::from_secs(3));
    drop(nginx);
    let run = handle.join().expect("tsumo thread");
    // Sessions left on the server are a failure of the run, said in one line.
    assert_failed_with(
        &run,
        "tsumo did not see 4 sessions logged out; they may stay on the server up to 14 days (its \
         session lifetime) unless logged out later: tsumo",
    );
    let doc = run.json();
    assert_eq!(doc["disconnects"], 4, "{doc:#}");
    assert_eq!(doc["games"]["aborted"], 1, "{doc:#}");
    // The proxy is gone, so the logouts cannot reach the server: counted, not hidden, and
    // every player left on the server is named.
    assert_eq!(phase(&doc, "logout", "failed"), 4, "{doc:#}");
    let mut left: Vec<&str> = doc["left_on_server"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    left.sort_unstable();
    assert_eq!(left, ["tsumo0", "tsumo1", "tsumo2", "tsumo3"], "{doc:#}");
    let logout_errors: u64 = doc["error_kinds"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(kind, _)| kind.starts_with("logout: "))
        .map(|(_, group)| group["count"].as_u64().unwrap())
        .sum();
    assert_eq!(logout_errors, 4, "{doc:#}");
}

/// `--vs`: the same session against a second server (here: the proxy in front of the first),
/// then the comparison table; everyone logged out of both.
#[test]
fn vs_compares_two_sessions() {
    let server = Majiang::start();
    let nginx = Nginx::builder().ws_proxy("majiang", server.port()).start();
    let direct = server.url();
    let proxied = format!("http://127.0.0.1:{}/server", nginx.port("majiang"));
    let run = mahjong(
        &[
            "-c4",
            "-t1",
            "--think",
            "0",
            "--ramp",
            "0",
            "-d",
            "3s",
            "--label",
            "direct",
            "--vs",
            &proxied,
            "--vs-label",
            "nginx",
            &direct,
        ],
        Duration::from_secs(60),
    );
    run.assert_success();
    let headers: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("== "))
        .collect();
    assert_eq!(
        headers,
        ["== direct, round 1 of 1 ==", "== nginx, round 1 of 1 =="],
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Comparing 2 mahjong runs"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("nginx/direct"), "{}", run.stdout);
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// A server that accepts connections but never answers a login: the `-d` limit still ends the
/// session (not after the login timeout × tries, 90 s by default: the test's 30 s limit would
/// kill it), and a session in which no one could log in exits 1 and says so.
#[test]
fn logins_never_answered_end_at_the_duration_limit() {
    let server = common::faulty::FaultyServer::start(common::faulty::Behavior::NeverAnswers);
    let url = server.url("/server");
    let run = mahjong(&["-c4", "-t1", "-d", "3s", &url], Duration::from_secs(30));
    assert_eq!(run.status.code(), Some(1), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "most players failed before they could play: 4 of 4 (login 4); most often \
                       login: no answer by the end of the run"
        ),
        "{}",
        run.stderr
    );
}

/// The seed's own outage, scaled to this machine: players through an nginx WebSocket proxy at
/// its open-file limit (its error log fills with `accept4() failed (24: Too many open files)`).
/// The run must say plainly what broke — errors grouped by kind, the same counts in the text
/// report and the JSON, exit status 1 — and leave the server clean: the logouts, spread out and
/// retried within their own bound, get through once the sockets are closed; any session that
/// could not be logged out is named.
#[test]
fn a_proxy_at_its_open_file_limit_is_reported_and_the_server_left_clean() {
    let server = Majiang::start();
    let nginx = Nginx::builder()
        .main_snippet("worker_rlimit_nofile 192;")
        .worker_connections(192)
        .ws_proxy("majiang", server.port())
        .start();
    let url = format!("http://127.0.0.1:{}/server", nginx.port("majiang"));
    let dir = std::env::temp_dir().join(format!("tsumo-outage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("outage.json");
    let run = mahjong(
        &[
            "-c256",
            "-t2",
            "--think",
            "200ms",
            "--ramp",
            "2ms",
            "--connect-timeout",
            "3s",
            "--retries",
            "2",
            "-d",
            "15s",
            "--json",
            json.to_str().unwrap(),
            &url,
        ],
        Duration::from_secs(120),
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        nginx.error_log().contains("Too many open files"),
        "the proxy never hit its limit:\n{}",
        nginx.error_log()
    );
    // What broke, said plainly, and the same in text and JSON.
    assert_failed_with(&run, "most players failed before they could play: ");
    let errors = doc["errors"].as_u64().unwrap();
    assert!(errors > 0, "{doc:#}");
    assert!(
        run.stdout.contains(&format!("errors: {errors}, failed: ")),
        "{}",
        run.stdout
    );
    let kinds = doc["error_kinds"].as_object().unwrap();
    let by_kind: u64 = kinds.values().map(|g| g["count"].as_u64().unwrap()).sum();
    assert_eq!(by_kind, errors, "{doc:#}");
    for (kind, group) in kinds {
        assert!(
            run.stdout
                .contains(&format!("{:>6}  {kind}", group["count"])),
            "{kind} not in the report:\n{}",
            run.stdout
        );
    }
    // Nothing left on the server that the report does not name.
    let left = doc["left_on_server"].as_array().map_or(0, Vec::len);
    assert_eq!(phase(&doc, "logout", "failed") as usize, left, "{doc:#}");
    assert_eq!(
        server.wait_session_files(left, Duration::from_secs(10)),
        left,
        "sessions on the server after the run"
    );
    assert_eq!(left, 0, "{doc:#}");
}

/// The line tsumo exits 1 with is also the JSON's `failure`.
fn assert_json_failure(run: &Run, why: &str) {
    let doc = run.json();
    let failure = doc["failure"].as_str().unwrap_or_default();
    assert!(failure.contains(why), "{doc:#}");
    let last = run.stderr.lines().last().unwrap_or_default();
    assert_eq!(last, format!("tsumo: {failure}"), "{}", run.stderr);
}

/// `--seats 2` and no players from outside: the rooms never fill, so no table forms. That is
/// a failed session (exit 1), with the reason in one line and in the JSON; everyone is logged
/// out, and no player waits in the play phase for a game that cannot start.
#[test]
fn tables_that_never_fill_fail_the_session_with_the_reason() {
    let server = Majiang::start();
    let url = server.url();
    let run = mahjong(
        &[
            "--seats",
            "2",
            "-c4",
            "-t1",
            "--ramp",
            "0",
            "--games",
            "2",
            "--connect-timeout",
            "2s",
            "-d",
            "60s",
            "--json",
            "-",
            &url,
        ],
        Duration::from_secs(90),
    );
    let why = "most players failed before they could play: 4 of 4 (formed 4); most often form: \
               room not full within --connect-timeout (--seats 2: the other 2 seats wait for \
               players from outside)";
    assert_failed_with(&run, why);
    assert_json_failure(&run, why);
    let doc = run.json();
    assert_eq!(phase(&doc, "formed", "failed"), 4, "{doc:#}");
    assert_eq!(phase(&doc, "formed", "ok"), 0, "{doc:#}");
    assert_eq!(doc["games"]["started"], 0, "{doc:#}");
    assert_eq!(doc["ended_by"], "done", "{doc:#}");
    let group = &doc["error_kinds"][why.rsplit("most often ").next().unwrap()];
    assert_eq!(group["count"], 2, "one per table: {doc:#}");
    assert!(
        group["first"][0]
            .as_str()
            .is_some_and(|e| e.ends_with("2 of 4 seats taken")),
        "{doc:#}"
    );
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// A server that logs players in and says `HELLO` but never answers `ROOM`: no table forms,
/// the session fails (exit 1) and says why.
#[test]
fn a_server_that_never_answers_room_fails_the_session() {
    let run = against_fake(
        Fault::RoomNeverAnswered,
        &["-c4", "--connect-timeout", "1s", "-d", "60s"],
        Duration::from_secs(90),
    );
    let why = "most players failed before they could play: 4 of 4 (formed 4); most often form: \
               no answer to ROOM (create a room) within --connect-timeout";
    assert_failed_with(&run, why);
    assert_json_failure(&run, why);
    let doc = run.json();
    assert_eq!(phase(&doc, "ready", "ok"), 4, "{doc:#}");
    assert_eq!(phase(&doc, "formed", "failed"), 4, "{doc:#}");
    assert_eq!(phase(&doc, "logout", "ok"), 4, "{doc:#}");
}

/// Eight upgrades answered with eight different wrong `Sec-WebSocket-Accept` values are one
/// kind of error, not eight groups of one: the random value is in the quoted example.
#[test]
fn mismatched_accept_headers_are_one_error_group() {
    let run = against_fake(
        Fault::BadAccept,
        &["-c8", "--retries", "1"],
        Duration::from_secs(60),
    );
    assert_failed_with(&run, "8 of 8 (connect 8)");
    let doc = run.json();
    let kinds = doc["error_kinds"].as_object().expect("error_kinds");
    let kind = "connect: WebSocket handshake failed: Sec-WebSocket-Accept does not match the key";
    assert_eq!(kinds.keys().collect::<Vec<_>>(), [kind], "{doc:#}");
    assert_eq!(kinds[kind]["count"], 8, "{doc:#}");
    let first = kinds[kind]["first"][0].as_str().unwrap_or_default();
    assert!(
        first.contains("does not match the key (expected"),
        "{first}"
    );
}

/// The wording of the report: one of each in the singular, durations as typed (`--think 1h`
/// is `1h`, not `60.00m`), no latency for a phase nobody passed.
#[test]
fn the_plan_line_reads_as_typed() {
    let server = Majiang::start();
    let url = server.url();
    let run = mahjong(
        &[
            "--seats",
            "1",
            "-c1",
            "-t1",
            "--think",
            "1h",
            "--ramp",
            "0",
            "--games",
            "1",
            "--connect-timeout",
            "1s",
            &url,
        ],
        Duration::from_secs(60),
    );
    assert!(
        run.stdout.lines().any(|l| l
            == "  1 shanten player at 1 table, 1 thread, think 1h, ramp 0, 1 game per table, \
                lockstep phases"),
        "{}",
        run.stdout
    );
    // A phase nobody passed has no latency to show, not `0.00us`.
    let formed: Vec<&str> = run
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("formed"))
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        formed,
        ["formed", "0", "1", "-", "-", "-", "-"],
        "{}",
        run.stdout
    );
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// The shanten tables are built while the session is prepared, before the start gate opens:
/// a player's first decision does not pay for them inside the run (they took 200 ms, which
/// showed as the server's deal overshoot and as tsumo's reply lateness).
#[test]
fn shanten_tables_are_built_before_the_session_starts() {
    use tsumo::cli::Parsed;
    use tsumo::mahjong::hand::shanten;
    let server = Majiang::start();
    let url = server.url();
    let Ok(Parsed::Mahjong(plan)) = tsumo::cli::parse(["tsumo", "mahjong", "-c4", &url]) else {
        panic!("not a mahjong plan");
    };
    // This test process builds them nowhere else (the other tests run the binary).
    assert!(!shanten::is_built());
    let _mode = tsumo::mahjong::session::MahjongMode::prepare(&plan).expect("prepare");
    assert!(shanten::is_built());
}

/// Think times end on the worker's pacer (as HTTP sends do), in 1 ms slots: held replies are
/// sent and timed, and the report and the JSON say how they were paced.
#[test]
fn think_times_end_on_the_pacer_and_the_report_says_so() {
    let server = Majiang::start();
    let url = server.url();
    let args = [
        "-c4", "-t1", "--think", "50ms", "--ramp", "0", "-d", "6s", "--json", "-", &url,
    ];
    let run = mahjong(&args, Duration::from_secs(60));
    run.assert_success();
    let doc = run.json();
    assert_eq!(doc["plan"]["think_slack_us"], 1000, "{doc:#}");
    assert!(
        doc["reply_lateness"]["count"].as_u64().unwrap_or(0) > 0,
        "held replies were sent and timed: {doc:#}"
    );
    assert_eq!(doc["errors"], 0, "{doc:#}");
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
    let text = mahjong(
        &[
            "-c4", "-t1", "--think", "50ms", "--ramp", "0", "-d", "6s", &url,
        ],
        Duration::from_secs(60),
    );
    text.assert_success();
    assert!(
        text.stdout.lines().any(|l| l
            == "    (think times end in 1000us slots of the worker's pacer: in the reply \
                lateness)"),
        "{}",
        text.stdout
    );
}

/// `--slo` on a session: the verdicts after the report and in the JSON, exit 99 when one broke,
/// and every player logged out all the same.
#[test]
fn objectives_judge_a_session_and_a_broken_one_exits_99() {
    let server = Majiang::start();
    let url = server.url();
    let dir = common::TempDir::new("tsumo-mahjong-slo");
    let json = dir.path().join("session.json").display().to_string();
    let run = mahjong(
        &[
            "-c4",
            "-t1",
            "--think",
            "0",
            "--ramp",
            "0",
            "--bot",
            "tsumogiri",
            "-d",
            "5s",
            "--slo",
            "disconnects<1",
            "--slo",
            "dapai.p99<1us",
            "--slo",
            "errors<1",
            "--json",
            &json,
            &url,
        ],
        Duration::from_secs(120),
    );
    assert_eq!(
        run.status.code(),
        Some(99),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stderr
            .starts_with("tsumo: objectives broken: dapai.p99<1us (dapai.p99 "),
        "{}",
        run.stderr
    );
    let tail: Vec<&str> = run.stdout.lines().rev().take(4).collect();
    assert_eq!(tail[3], "Objectives: 1 of 3 broken", "{}", run.stdout);
    assert_eq!(tail[2], "  held    disconnects<1  disconnects 0");
    assert!(
        tail[1].starts_with("  BROKEN  dapai.p99<1us  dapai.p99 "),
        "{tail:?}"
    );
    assert_eq!(tail[0], "  held    errors<1       errors 0");
    let doc = common::read_json(std::path::Path::new(&json));
    let objectives = doc["objectives"].as_array().expect("objectives");
    let held: Vec<bool> = objectives.iter().map(|o| o["held"] == true).collect();
    assert_eq!(held, [true, false, true], "{doc:#}");
    assert_eq!(
        objectives[1]["measured"],
        doc["steps"]["dapai"]["p99"].as_f64().unwrap()
    );
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// Issue 23's timeline for sessions: `--interval 500ms` gives intervals with the players by
/// phase at each end, games and hands, and the step overshoot by kind; added up they are the
/// session's totals, the overshoot histograms value by value.
#[test]
fn timeline_intervals_carry_players_by_phase_and_add_up() {
    let server = Majiang::start();
    let url = server.url();
    let run = mahjong(
        &[
            "-c8",
            "-t2",
            "--think",
            "0",
            "--ramp",
            "1ms",
            "-d",
            "4s",
            "--interval",
            "500ms",
            "--json",
            "-",
            &url,
        ],
        Duration::from_secs(60),
    );
    run.assert_success();
    let doc = run.json();
    let intervals = doc["intervals"].as_array().expect("an intervals array");
    assert!(intervals.len() >= 8, "{} intervals", intervals.len());
    let field = |i: &Value, a: &str, b: &str| i[a][b].as_u64().unwrap_or_else(|| panic!("{i:#}"));
    assert!(
        intervals
            .iter()
            .any(|i| field(i, "players", "playing") == 8),
        "no interval ends with all 8 playing: {intervals:#?}"
    );
    let last = intervals.last().unwrap();
    assert_eq!(field(last, "players", "logged_in"), 0, "{last:#}");
    for (k, interval) in intervals.iter().enumerate() {
        assert_eq!(interval["start_s"].as_f64(), Some(k as f64 * 0.5));
    }
    let sum = |a: &str, b: &str| intervals.iter().map(|i| field(i, a, b)).sum::<u64>();
    assert_eq!(
        sum("games", "started"),
        doc["games"]["started"].as_u64().unwrap()
    );
    assert_eq!(
        sum("games", "aborted"),
        doc["games"]["aborted"].as_u64().unwrap()
    );
    assert_eq!(sum("games", "cut"), doc["games"]["cut"].as_u64().unwrap());
    let hands: u64 = intervals.iter().map(|i| i["hands"].as_u64().unwrap()).sum();
    let bot_hands: u64 = doc["bots"]
        .as_object()
        .unwrap()
        .values()
        .map(|b| b["hands"].as_u64().unwrap())
        .sum();
    assert_eq!(hands, bot_hands);
    assert!(hands > 0, "{doc:#}");
    let decode = |v: &Value| tsumo::report::schema::decode_histogram(v.as_str().unwrap()).unwrap();
    for (kind, whole) in [("draw", "draw_overshoot"), ("deal", "deal_overshoot")] {
        let mut total = decode(&doc[whole]["histogram"]);
        let expected = total.clone();
        total.reset();
        for interval in intervals {
            let h = decode(&interval["overshoot"][kind]["histogram"]);
            assert_eq!(h.len(), field(&interval["overshoot"], kind, "count"));
            total.add(&h).unwrap();
        }
        assert_eq!(total, expected, "{kind}");
    }
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// tsumo's default rule in majiang-core itself (the library majiang-server plays games with):
/// a triple ron is three wins and the game keeps its 4 hands. Under majiang-core's own
/// `最大同時和了数` 2 the same discard is the abortive draw 三家和 and the dealer deals a fifth
/// hand (tests/fixtures/triple_ron.js).
#[test]
fn a_triple_ron_under_the_default_rule_is_three_wins_and_the_game_keeps_four_hands() {
    let core = common::majiang::scripts_dir().join("node_modules/@kobalab/majiang-core");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/triple_ron.js");
    let game = |rule: &Value| -> Value {
        let mut node = std::process::Command::new("node");
        node.arg(&script).arg(&core).arg(rule.to_string());
        let run = common::run_command(node, Duration::from_secs(60));
        run.assert_success().json()
    };
    let rule = tsumo::mahjong::rules::default_rule();
    assert_eq!(
        game(&rule),
        serde_json::json!({"hands": 4, "first": ["hule", "hule", "hule"]})
    );
    let mut two = rule.clone();
    two["最大同時和了数"] = serde_json::json!(2);
    assert_eq!(
        game(&two),
        serde_json::json!({"hands": 5, "first": ["pingju 三家和"]})
    );
}
