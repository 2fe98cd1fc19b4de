//! `tsumo mahjong --stages` and `--stay` against the real majiang-server: players arrive as the
//! profile says (stage by stage, and online interval by interval), every one logs out (at the
//! profile's end, on Ctrl-C) with nothing left on the server, and with `--stay 1` the tables
//! that finished their game leave and others arrive in their place. Also each refused command
//! line: one line, exit 2.
//!
//! A game here lasts long: the server spends at least 400 ms a step, so one hand is 15 to 65 s
//! and tsumo's default rule (four hands) minutes. The profile tests leave games to be cut at the
//! end; the churn test plays one-hand games (`{"場数":0}`) through a hold longer than a hand.

mod common;

use std::time::Duration;

use common::fake_majiang::{FakeMajiang, Fault};
use common::majiang::Majiang;
use common::{run_tsumo, Run, Signalled};
use serde_json::Value;

fn mahjong(args: &[&str], limit: Duration) -> Run {
    let mut all = vec!["mahjong"];
    all.extend_from_slice(args);
    run_tsumo(&all, limit)
}

fn count(doc: &Value, path: &[&str]) -> u64 {
    let mut v = doc;
    for key in path {
        v = &v[key];
    }
    v.as_u64()
        .unwrap_or_else(|| panic!("{path:?} missing in {doc:#}"))
}

/// Logins and logouts both succeeded for every player, and the server keeps no session.
fn assert_everyone_logged_out(doc: &Value, server: &Majiang) -> u64 {
    let logins = count(doc, &["phases", "login", "ok"]);
    assert_eq!(count(doc, &["phases", "login", "failed"]), 0, "{doc:#}");
    assert_eq!(count(doc, &["phases", "logout", "ok"]), logins, "{doc:#}");
    assert_eq!(count(doc, &["phases", "logout", "failed"]), 0, "{doc:#}");
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
    logins
}

/// The level of `3s:0-16,4s:16,2s:16-0` at `t` seconds (players online, rounded up).
fn level(t: f64) -> f64 {
    match t {
        t if t < 3.0 => (16.0 * t / 3.0).ceil(),
        t if t < 7.0 => 16.0,
        t if t < 9.0 => (16.0 * (9.0 - t) / 2.0).ceil(),
        _ => 0.0,
    }
}

/// Up, hold, down: 16 players arrive in the ramp (to one table), none in the hold, the players
/// online at each interval's end follow the profile within a table while it rises and holds
/// (and stay at or above it while it falls: a table leaves after its game, which outlasts the
/// ramp down and is cut at the end); everyone logs out, nothing left on the server.
#[test]
fn players_arrive_as_the_profile_says_and_all_log_out() {
    let server = Majiang::start();
    let url = server.url();
    let run = mahjong(
        &[
            "--stages",
            "3s:0-16,4s:16,2s:16-0",
            "-t2",
            "--think",
            "0",
            "--bot",
            "tsumogiri",
            "--interval",
            "1s",
            "--json",
            "-",
            &url,
        ],
        Duration::from_secs(60),
    );
    run.assert_success();
    let doc = run.json();
    common::schema::assert_valid_doc(common::schema::Kind::Session, &doc);
    assert_eq!(assert_everyone_logged_out(&doc, &server), 16);
    let stages = doc["stages"].as_array().expect("stages");
    assert_eq!(stages.len(), 3, "{doc:#}");
    let arrivals: Vec<u64> = stages.iter().map(|s| count(s, &["arrivals"])).collect();
    assert!(arrivals[0] >= 12 && arrivals[0] <= 16, "{arrivals:?}");
    assert_eq!(arrivals.iter().sum::<u64>(), 16, "{arrivals:?}");
    assert_eq!(count(&stages[2], &["departures"]), 16, "{doc:#}");
    assert_eq!(doc["plan"]["stages"][1]["from"], 16);
    assert_eq!(count(&doc, &["games", "cut"]), 4, "{doc:#}");
    let intervals = doc["intervals"].as_array().expect("intervals");
    assert!(intervals.len() >= 8, "{doc:#}");
    for interval in intervals {
        let end = interval["start_s"].as_f64().unwrap_or(0.0) + 1.0;
        let online = count(interval, &["players", "logged_in"]) as f64;
        if end > 8.5 {
            continue;
        }
        let want = level(end);
        if end <= 7.0 {
            assert!(
                (online - want).abs() <= 4.0,
                "at {end}s: {online} online, {want} due"
            );
        } else {
            assert!(
                online >= want - 4.0,
                "at {end}s: {online} online, {want} due"
            );
        }
    }
}

/// `--stay 1` through a hold longer than a one-hand game: each table leaves after its game and
/// a new one arrives in its place, so more players log in than are ever online at once; all of
/// them log out.
#[test]
fn stay_one_game_churns_players_through_a_hold() {
    let server = Majiang::start();
    let url = server.url();
    let dir = common::TempDir::new("tsumo-mahjong-stay");
    let rule = dir.path().join("one-hand.json");
    std::fs::write(&rule, r#"{"場数":0}"#).expect("write the rule");
    let rule = rule.display().to_string();
    let run = mahjong(
        &[
            "--stages",
            "1s:0-8,75s:8",
            "--stay",
            "1",
            "-t1",
            "--think",
            "0",
            "--rule",
            &rule,
            "--json",
            "-",
            &url,
        ],
        Duration::from_secs(150),
    );
    run.assert_success();
    let doc = run.json();
    let logins = assert_everyone_logged_out(&doc, &server);
    assert!(logins > 8 && logins.is_multiple_of(4), "{logins} logins");
    assert!(count(&doc, &["games", "completed"]) >= 1, "{doc:#}");
    let stages = doc["stages"].as_array().expect("stages");
    assert_eq!(count(&stages[0], &["arrivals"]), 8, "{doc:#}");
    assert_eq!(count(&stages[1], &["arrivals"]), logins - 8, "{doc:#}");
    // Those that left after their game, in the hold; the rest at its end.
    assert!(count(&stages[1], &["departures"]) >= 4, "{doc:#}");
    assert!(
        count(&stages[1], &["time_to_seat", "count"]) >= 4,
        "{doc:#}"
    );
}

/// Ctrl-C in the hold: every player logs out, the report and the JSON name the stage.
#[test]
fn ctrl_c_mid_stage_logs_everyone_out_and_names_the_stage() {
    let server = Majiang::start();
    let url = server.url();
    let dir = common::TempDir::new("tsumo-mahjong-stages-int");
    let json = dir.path().join("session.json").display().to_string();
    let mut tsumo = Signalled::spawn(&[
        "mahjong",
        "--stages",
        "2s:0-8,5m:8",
        "-t2",
        "--think",
        "0",
        "--json",
        &json,
        &url,
    ]);
    assert_eq!(
        server.wait_session_files(8, Duration::from_secs(15)),
        8,
        "players did not log in"
    );
    std::thread::sleep(Duration::from_secs(2));
    tsumo.kill(libc::SIGINT, None);
    let Run { status, stdout, .. } = tsumo.finish(Duration::from_secs(30));
    assert!(status.success(), "{status:?}\n{stdout}");
    assert!(stdout.contains("interrupted by SIGINT"), "{stdout}");
    assert!(stdout.contains("Stopped in stage 2"), "{stdout}");
    let doc = common::read_json(std::path::Path::new(&json));
    assert_eq!(doc["stopped_in_stage"], 2, "{doc:#}");
    assert_eq!(assert_everyone_logged_out(&doc, &server), 8);
}

/// A server that never answers `ROOM`: each table fails to form within --connect-timeout, its
/// players log out and are not replaced (a failing server is not flooded), and the session
/// fails as one without a profile does.
#[test]
fn tables_that_cannot_form_log_out_and_are_not_replaced() {
    let server = FakeMajiang::start(Fault::RoomNeverAnswered);
    let url = server.url();
    let run = mahjong(
        &[
            "--stages",
            "0s:0-8,4s:8",
            "-t1",
            "--connect-timeout",
            "1s",
            "--json",
            "-",
            &url,
        ],
        Duration::from_secs(60),
    );
    let doc = run.json();
    assert_eq!(run.status.code(), Some(1), "{doc:#}\n{}", run.stderr);
    assert_eq!(count(&doc, &["phases", "login", "ok"]), 8, "{doc:#}");
    assert_eq!(count(&doc, &["phases", "formed", "failed"]), 8, "{doc:#}");
    assert_eq!(count(&doc, &["phases", "logout", "ok"]), 8, "{doc:#}");
    assert_eq!(count(&doc["stages"][0], &["arrivals"]), 8, "{doc:#}");
    assert_eq!(count(&doc["stages"][0], &["departures"]), 8, "{doc:#}");
}

/// Each refused command line: exit 2, one line naming what to change.
#[test]
fn bad_profiles_and_conflicts_are_one_line_exit_2() {
    let url = "http://127.0.0.1:9/server";
    for (args, needle) in [
        (&["--stages", "3s"][..], "--stages"),
        (&["--stages", "3s:-4"][..], "must not be negative"),
        (&["--stages", "3s:0"][..], "every rate is 0"),
        (&["--stages", "3s:8", "--stay", "0"][..], "--stay"),
        (&["--stages", "3s:8", "--stay", "x"][..], "--stay"),
        (&["--stay", "1"][..], "--stay is for --stages"),
        (&["--stages", "3s:8", "-c", "8"][..], "leave out -c"),
        (
            &["--stages", "3s:8", "--ramp", "1ms"][..],
            "leave out --ramp",
        ),
        (&["--stages", "3s:8", "-d", "5s"][..], "leave out -d"),
        (
            &["--stages", "3s:8", "--games", "2"][..],
            "leave out --games",
        ),
    ] {
        let mut all: Vec<&str> = args.to_vec();
        all.push(url);
        let run = mahjong(&all, Duration::from_secs(20));
        assert_eq!(run.status.code(), Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(needle), "{args:?}: {}", run.stderr);
    }
}
