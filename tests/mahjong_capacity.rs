//! `tsumo mahjong --capacity` against the real majiang-server (tests/common/majiang.rs): a small
//! search terminates with its answer, each step adds tables while the earlier ones play on,
//! the JSON reads back and compares, a search behind a real nginx with a connection limit
//! finds exactly that limit, Ctrl-C stops the search, and nobody is left logged in
//! afterwards. Plus the bad command lines, each one line and exit 2.

mod common;

use std::time::Duration;

use common::majiang::Majiang;
use common::nginx::Nginx;
use common::{run_tsumo, Run, Signalled, TempDir};
use serde_json::Value;

/// A search's options kept small: 1 s think time (draw overshoot is measured from 400 ms up),
/// short steps.
const SMALL: [&str; 10] = [
    "--capacity",
    "-t1",
    "--ramp",
    "1ms",
    "--step",
    "3s",
    "--warmup",
    "1s",
    "--pause",
    "1s",
];

fn search(extra: &[&str], url: &str) -> Run {
    let mut args = vec!["mahjong"];
    args.extend_from_slice(&SMALL);
    args.extend_from_slice(extra);
    args.push(url);
    run_tsumo(&args, Duration::from_secs(150))
}

fn strings(doc: &Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} missing in {doc:#}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

/// Every step held up to --to: "at least 8 players"; the second step kept the first step's
/// table playing and added one; each step is a session (its judged window); everyone logged
/// out; the file reads back through `tsumo compare`.
#[test]
fn a_search_bounded_by_to_holds_every_step_and_logs_everyone_out() {
    let server = Majiang::start();
    let url = server.url();
    let dir = TempDir::new("tsumo-mjcap");
    let json = dir.path().join("search.json");
    let json_arg = json.to_string_lossy().to_string();
    // The dashboard follows the search: its steps' sessions and verdicts.
    let port = common::free_port();
    let at = format!("127.0.0.1:{port}");
    let watch = common::prometheus::Watch::start(port);
    let run = search(
        &[
            "--slo",
            "draw_overshoot.p99<60s",
            "--slo",
            "disconnects<1",
            "--from",
            "4",
            "--to",
            "8",
            "--dashboard",
            &at,
            "--dashboard-linger",
            "1s",
            "--json",
            &json_arg,
        ],
        &url,
    );
    let common::prometheus::Watched {
        metrics,
        page,
        live,
        most_logged_in,
    } = watch.stop();
    run.assert_success();
    assert!(
        metrics.contains("tsumo_capacity_steps_total{") && metrics.contains("verdict=\"held\"} 2"),
        "{metrics}"
    );
    assert!(metrics.contains("tsumo_games_started_total{"), "{metrics}");
    assert!(page.contains("Capacity search"), "{page}");
    // While it ran: the steps judged so far, and their chart.
    assert!(live.contains("Step 1 at 4 players"), "{live}");
    assert!(live.contains("id=\"search-so-far\""), "{live}");
    // Step 2's new table beside step 1's: the page shows both sessions' players as one.
    assert_eq!(most_logged_in, 8.0, "{live}");
    assert!(
        run.stdout.contains("Capacity: at least 8 players ("),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("Capacity search (players)"),
        "{}",
        run.stdout
    );
    // Step 2 added one table of 4 while step 1's table played on.
    assert!(
        run.stderr
            .contains("capacity: step 2 at 8 players (4 playing on, 4 new;"),
        "{}",
        run.stderr
    );
    assert_eq!(
        run.stderr.matches("capacity: logging out").count(),
        1,
        "{}",
        run.stderr
    );
    let doc = common::read_json(&json);
    assert_eq!(doc["mode"], "capacity");
    assert_eq!(doc["capacity"]["unit"], "players");
    assert_eq!(doc["capacity"]["value"], 8);
    assert_eq!(doc["capacity"]["limited_by"], "to");
    assert_eq!(strings(&doc, "roles"), ["grow", "grow"]);
    assert_eq!(strings(&doc, "outcomes"), ["held", "held"]);
    let steps = doc["steps"].as_array().expect("steps");
    let players: Vec<u64> = steps
        .iter()
        .map(|s| s["plan"]["players"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(players, [4, 8]);
    for step in steps {
        assert_eq!(step["mode"], "mahjong", "{step:#}");
        assert!(step["draw_overshoot"]["count"].as_u64().unwrap_or(0) > 0);
    }
    assert_eq!(doc["achieved"], serde_json::json!([4, 8]));
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
    assert_eq!(server.session_names(), Vec::<String>::new());
    // The search loads back into compare (once: a run given twice is refused).
    let compared = run_tsumo(&["compare", &json_arg], Duration::from_secs(30));
    compared.assert_success();
    assert!(compared.stdout.contains("Capacity"), "{}", compared.stdout);
}

/// The players' WebSocket connects (error kinds `connect: …`) counted in step `index`.
fn connect_errors(doc: &Value, index: usize) -> u64 {
    let step = &doc["steps"][index];
    step["error_kinds"]
        .as_object()
        .unwrap_or_else(|| panic!("no error_kinds in step {index}: {step:#}"))
        .iter()
        .filter(|(kind, _)| kind.starts_with("connect: "))
        .map(|(_, group)| group["count"].as_u64().unwrap_or(0))
        .sum()
}

/// A real nginx in front of majiang-server lets 8 WebSockets through at once
/// (`limit_conn … 8` on the socket.io location; logins and logouts unlimited): the 9th
/// player's upgrade is answered 503, so a step of more than 8 players has errors and
/// `errors<1` breaks exactly above 8. Grow 4, 8, 16 (broke), bisect 12 (broke), confirm 8
/// (held), each break beyond doubt (16 and 8 errors against `errors<1`), so run once: the capacity is 8, the step at the answer held and the next one up broke on the
/// errors objective, and every player is logged out, those whose upgrade got 503 too.
#[test]
fn a_proxy_connection_limit_is_found_exactly_and_everyone_logged_out() {
    const LIMIT: usize = 8;
    let server = Majiang::start();
    let upstream = server.port();
    let proxy = |limited: &str| {
        format!(
            "proxy_pass http://127.0.0.1:{upstream};
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;{limited}"
        )
    };
    let websocket = proxy(&format!(
        "
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection \"upgrade\";
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
            limit_conn ws {LIMIT};
            limit_conn_status 503;"
    ));
    let nginx = Nginx::builder()
        // A key that is never empty: one count for the whole server.
        .http_snippet("limit_conn_zone $server_port zone=ws:1m;")
        .server(
            "majiang",
            &format!(
                "location /server/socket.io/ {{ {websocket} }}
        location /server/ {{ {} }}",
                proxy("")
            ),
        )
        .start();
    let url = format!("http://127.0.0.1:{}/server", nginx.port("majiang"));
    let dir = TempDir::new("tsumo-mjcap-limit");
    let json = dir.path().join("search.json");
    let json_arg = json.to_string_lossy().to_string();
    let run = search(
        &[
            "--slo",
            "errors<1",
            "--from",
            "4",
            "--to",
            "16",
            "--json",
            &json_arg,
            // The progress line, each second on stderr (not a terminal here).
            "--progress",
            // Replies that cost tsumo no thought: on a busy machine its lateness must not make
            // a broken step tsumo's limit.
            "--bot",
            "tsumogiri",
        ],
        &url,
    );
    run.assert_success();
    let doc = common::read_json(&json);
    let capacity = &doc["capacity"];
    assert_eq!(capacity["value"], 8, "{doc:#}\n{}", run.stderr);
    assert_eq!(capacity["unit"], "players");
    assert_eq!(
        capacity["limited_by"], "server",
        "{capacity:#}\n{}",
        run.stderr
    );
    assert_eq!(
        strings(&doc, "roles"),
        ["grow", "grow", "grow", "bisect", "confirm"]
    );
    assert_eq!(
        strings(&doc, "outcomes"),
        ["held", "held", "broke", "broke", "held"]
    );
    let players: Vec<u64> = doc["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["plan"]["players"].as_u64().unwrap_or(0))
        .collect();
    // Each break beyond doubt is run once (issue 43), and the answer is confirmed.
    assert_eq!(players, [4, 8, 16, 12, 8]);
    assert_eq!(capacity["trials"], serde_json::json!([1, 1, 1, 1, 2]));
    // The range spans the step from 8 to 12 at least (wider on a busy machine).
    let range = |i: usize| capacity["range"][i].as_u64().unwrap_or_default();
    assert!(range(0) <= 8 && range(1) >= 12, "{capacity:#}");
    assert_eq!(capacity["held"], serde_json::json!([4, 8, 8]));
    assert_eq!(capacity["broke"], serde_json::json!([16, 12]));
    // The step just above the answer broke, on the errors objective: its players beyond the
    // limit could not connect, each once (after its retries).
    assert_eq!(capacity["reason"], "broke at 12: errors<1 (errors 8)");
    // Each objective at the lowest load it broke at.
    assert_eq!(
        capacity["broke_first"],
        "Broke first: errors<1 at 12 (errors 8)"
    );
    let connects: Vec<u64> = (0..5).map(|i| connect_errors(&doc, i)).collect();
    assert_eq!(connects, [0, 0, 8, 4, 0], "{doc:#}");
    // Each player that could not connect: its error, and its failed connect phase.
    for (index, errors) in [0u8, 0, 16, 8, 0].into_iter().enumerate() {
        let verdict = &doc["steps"][index]["objectives"][0];
        assert_eq!(verdict["expr"], "errors<1");
        assert_eq!(
            verdict["measured"].as_f64(),
            Some(f64::from(errors)),
            "step {}: {verdict:#}",
            index + 1
        );
        assert_eq!(verdict["held"], errors == 0, "step {}", index + 1);
    }
    // The progress line: led by the lag a player feels (as a session's progress line is), then the
    // step, its target, what held and broke so far, the window's verdicts.
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains(" players") && l.contains("step "))
        .filter(|l| !l.starts_with("capacity: "))
        .collect();
    assert!(
        !lines.is_empty() && lines.iter().all(|l| l.starts_with("draw over think ")),
        "{}",
        run.stderr
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" (worst of the last draws); step ")),
        "no draw on any progress line:\n{}",
        run.stderr
    );
    let live = |start: &str, verdict: &str| {
        lines.iter().any(|l| {
            l.split_once("; ")
                .is_some_and(|(_, line)| line.starts_with(start) && line.ends_with(verdict))
        })
    };
    assert!(
        live(
            "step 3 at 16 players (held at 8): judged ",
            ": errors<1 BROKEN (errors 16)"
        ),
        "{}",
        run.stderr
    );
    assert!(
        live(
            "step 5 at 8 players (held at 8; broke at 12: errors<1): judged ",
            ": errors<1 held (errors 0)"
        ),
        "{}",
        run.stderr
    );
    // Stdout: the answer. Stderr: the sessions whose players could not connect, said as they
    // ended (or were logged out).
    assert!(
        run.stdout
            .contains("Capacity: 8 players (errors<1 held at 8; broke at 12: errors 8)"),
        "{}",
        run.stdout
    );
    for players in [8, 4] {
        let said = format!("capacity: a session of {players} players");
        assert!(run.stderr.contains(&said), "{said}: {}", run.stderr);
    }
    // Nobody left on the server, the players refused at the proxy included.
    assert_eq!(server.wait_session_files(0, Duration::from_secs(10)), 0);
    assert_eq!(server.session_names(), Vec::<String>::new());
}

/// An objective the first step cannot hold: "below 4 players", one step, everyone logged out.
#[test]
fn a_first_step_that_breaks_answers_below_from() {
    let server = Majiang::start();
    let url = server.url();
    let run = search(
        &[
            // No reply is sent within 1us of its time (errors<0, which no step could hold
            // either, is refused before the search).
            "--slo",
            "reply_lateness.max<1us",
            "--from",
            "4",
            "--to",
            "8",
            "--json",
            "-",
        ],
        &url,
    );
    run.assert_success();
    let doc = run.json();
    common::schema::assert_valid_doc(common::schema::Kind::Capacity, &doc);
    assert_eq!(doc["capacity"]["value"], Value::Null);
    let outcomes = strings(&doc, "outcomes");
    assert_eq!(outcomes.len(), 1, "{doc:#}");
    // Broken by the objective, or (on a machine too busy for tsumo to reply in time) put down
    // to tsumo: never read as a capacity.
    assert!(
        outcomes[0] == "broke" || outcomes[0] == "generator-limited",
        "{outcomes:?}"
    );
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// Ctrl-C during a step: the search stops, reports the steps run, and logs everyone out.
#[test]
fn ctrl_c_stops_the_search_and_logs_everyone_out() {
    let server = Majiang::start();
    let url = server.url();
    let mut args = vec!["mahjong"];
    args.extend_from_slice(&SMALL);
    args.extend_from_slice(&[
        "--slo",
        "draw_overshoot.p99<60s",
        "--from",
        "4",
        "--to",
        "64",
        "--step",
        "30s",
        &url,
    ]);
    let mut tsumo = Signalled::spawn(&args);
    assert_eq!(
        server.wait_session_files(4, Duration::from_secs(20)),
        4,
        "players did not log in"
    );
    std::thread::sleep(Duration::from_secs(3));
    tsumo.kill(libc::SIGINT, None);
    let run = tsumo.finish(Duration::from_secs(60));
    assert!(run.status.success(), "{run:?}");
    assert!(
        run.stdout.contains("the search stopped at 4"),
        "{}",
        run.stdout
    );
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

#[test]
fn bad_command_lines_are_one_line_and_exit_2() {
    let url = "http://127.0.0.1:1/server";
    let slo = "draw_overshoot.p99<100ms";
    for (args, needle) in [
        (vec!["--capacity", url], "needs at least one --slo"),
        (
            vec!["--capacity", "--slo", slo, "--from", "6", url],
            "--from '6': must be a positive multiple of 4",
        ),
        (
            vec![
                "--capacity",
                "--slo",
                slo,
                "--seats",
                "3",
                "--from",
                "16",
                url,
            ],
            "multiple of 3",
        ),
        (
            vec!["--capacity", "--slo", slo, "--from", "16", "--to", "8", url],
            "--to 8 is below --from 16",
        ),
        (
            vec!["--capacity", "--slo", "p99<10ms", url],
            "--slo 'p99<10ms': p99 is an HTTP measure",
        ),
        (vec!["--from", "16", "--slo", slo, url], "add --capacity"),
        (
            vec!["--capacity", "--slo", slo, "-c", "8", url],
            "-c is not for --capacity",
        ),
        (
            vec!["--capacity", "--slo", slo, "--games", "2", url],
            "--games is not for --capacity",
        ),
        (
            vec!["--capacity", "--slo", slo, "--resolution", "0", url],
            "--resolution '0'",
        ),
    ] {
        let mut all = vec!["mahjong"];
        all.extend_from_slice(&args);
        let run = run_tsumo(&all, Duration::from_secs(20));
        assert_eq!(run.status.code(), Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
    }
}

/// The server not answering: one line, exit 1, as for a session.
#[test]
fn server_down_is_one_clear_line() {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}/server");
    let run = run_tsumo(
        &[
            "mahjong",
            "--capacity",
            "--slo",
            "draw_overshoot.p99<100ms",
            &url,
        ],
        Duration::from_secs(30),
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("tsumo: unable to connect to 127.0.0.1:"),
        "{}",
        run.stderr
    );
}

/// The server frozen (SIGSTOP) inside a judged step (issue 43, item 3): the step saw far fewer
/// draws than its players' think time made due, so it has not held, whatever its objectives
/// measured on the few draws that came: broken (`draws>N`), or not measured (disturbed), said
/// on its line. The server thawed once the step is judged: the search goes on and everyone
/// logs out.
#[test]
fn a_step_the_server_froze_in_has_not_held() {
    use std::io::{BufRead, BufReader};
    let server = Majiang::start();
    let url = server.url();
    let pid = server.pid() as libc::pid_t;
    let mut args: Vec<&str> = vec!["mahjong"];
    args.extend_from_slice(&SMALL);
    args.extend_from_slice(&[
        "--step",
        "6s",
        "--slo",
        "draw_overshoot.p99<60s",
        "--from",
        "16",
        "--to",
        "16",
        "--json",
        "-",
        &url,
    ]);
    // Killed if the test fails: a leftover would play on beside the tests after it.
    let mut child = common::spawn_piped(&args);
    let stdout = common::drain(child.stdout.take().expect("stdout"));
    let mut stderr = String::new();
    let mut frozen = false;
    for line in BufReader::new(child.stderr.take().expect("stderr"))
        .lines()
        .map_while(Result::ok)
    {
        if line.starts_with("capacity: step 1 at ") {
            // Seated and warmed up in about 2 s; frozen early in the 6 s judged window.
            std::thread::sleep(Duration::from_millis(2_500));
            // SAFETY: kill(2) on the server this test started.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
            frozen = true;
        }
        if frozen && line.starts_with("capacity: step 1: ") {
            // SAFETY: as above.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
            frozen = false;
        }
        stderr.push_str(&line);
        stderr.push('\n');
    }
    if frozen {
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGCONT) };
    }
    let status = child.wait().expect("wait");
    let stdout = stdout.join().expect("stdout");
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("{e}: {status}\n{stdout}\n{stderr}");
    });
    let outcomes = strings(&doc, "outcomes");
    let draws = &doc["steps"][0]["draw_overshoot"]["count"];
    assert!(
        outcomes[0] == "broke" || outcomes[0] == "disturbed",
        "{outcomes:?}: {draws} draws\n{stderr}"
    );
    let first = stderr
        .lines()
        .find(|l| l.starts_with("capacity: step 1: "))
        .expect("step 1 judged");
    assert!(first.contains("draws>"), "{first}");
    assert!(
        stderr.contains("draws where") && stderr.contains("were due"),
        "{stderr}"
    );
    assert_eq!(server.wait_session_files(0, Duration::from_secs(10)), 0);
}
