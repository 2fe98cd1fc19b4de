//! `tsumo mahjong --stages` leaves nobody behind on a slow server: logouts answered `503` past
//! `--logout-timeout` are retried while the server takes connections, a login answered after
//! its try gave up has its session logged out too, and a worker's arrivals in flight are
//! bounded (their lateness reported per stage). The stand-in server (`fake_majiang`) answers
//! logins late and logouts wrongly on demand, and counts the sessions left on it.

mod common;

use std::time::Duration;

use common::fake_majiang::{Accounts, FakeMajiang, Fault};
use common::run_tsumo;
use serde_json::Value;

fn count(doc: &Value, path: &[&str]) -> u64 {
    let mut v = doc;
    for key in path {
        v = &v[key];
    }
    v.as_u64()
        .unwrap_or_else(|| panic!("{path:?} missing in {doc:#}"))
}

/// `tsumo mahjong --stages PROFILE -t1 ARGS… URL`, its JSON on stdout.
fn session(server: &FakeMajiang, profile: &str, args: &[&str]) -> Value {
    let url = server.url();
    let mut all = vec!["mahjong", "--stages", profile, "-t1", "--json", "-"];
    all.extend_from_slice(args);
    all.push(&url);
    let run = run_tsumo(&all, Duration::from_secs(90));
    run.json()
}

/// Logouts answered `503` for 3 s, with `--logout-timeout 1s`: they go on past the timeout
/// (the server still takes connections) and end every session.
#[test]
fn logouts_failing_past_the_timeout_are_retried_while_the_server_answers() {
    let server = FakeMajiang::with_accounts(
        Fault::RoomNeverAnswered,
        Accounts {
            logout_fails_for: Duration::from_secs(3),
            ..Accounts::default()
        },
    );
    let doc = session(
        &server,
        "0s:0-4,2s:4",
        &["--connect-timeout", "1s", "--logout-timeout", "1s"],
    );
    assert_eq!(server.sessions_left(), 0, "{doc:#}");
    assert_eq!(count(&doc, &["phases", "logout", "ok"]), 4, "{doc:#}");
    assert_eq!(count(&doc, &["logouts", "retried"]), 4, "{doc:#}");
    assert_eq!(count(&doc, &["logouts", "past_timeout"]), 4, "{doc:#}");
    assert!(doc.get("left_on_server").is_none(), "{doc:#}");
}

/// The first login answers after 2 s, past `--connect-timeout 500ms`: the player logs in again
/// and plays on, and the session the late answer made is logged out with it.
#[test]
fn a_login_answered_after_its_try_gave_up_is_logged_out_too() {
    let server = FakeMajiang::with_accounts(
        Fault::RoomNeverAnswered,
        Accounts {
            first_login_delay: Duration::from_secs(2),
            ..Accounts::default()
        },
    );
    let doc = session(&server, "0s:0-4,3s:4", &["--connect-timeout", "500ms"]);
    assert_eq!(server.sessions_left(), 0, "{doc:#}");
    assert_eq!(count(&doc, &["phases", "login", "ok"]), 4, "{doc:#}");
    assert_eq!(count(&doc, &["phases", "logout", "ok"]), 4, "{doc:#}");
    assert_eq!(count(&doc, &["logouts", "late_logins"]), 1, "{doc:#}");
    assert!(doc.get("left_on_server").is_none(), "{doc:#}");
}

/// 96 players due at once on a server that takes 300 ms a login: at most 32 log in at once
/// (one thread's arrivals in flight), the rest arrive late — and the stage says how late.
#[test]
fn arrivals_in_flight_are_bounded_and_their_lateness_reported() {
    let server = FakeMajiang::with_accounts(
        Fault::RoomNeverAnswered,
        Accounts {
            login_delay: Duration::from_millis(300),
            ..Accounts::default()
        },
    );
    let doc = session(&server, "0s:0-96,3s:96", &["--connect-timeout", "5s"]);
    let most = server.most_logins_at_once();
    assert!(most <= 32, "{most} logins at once\n{doc:#}");
    assert_eq!(server.sessions_left(), 0, "{doc:#}");
    let stage = &doc["stages"][0];
    assert_eq!(count(stage, &["arrivals"]), 96, "{doc:#}");
    // Three waves of 32: the last began two logins (600 ms) late at least.
    assert!(
        count(stage, &["arrival_lateness", "max"]) >= 500_000,
        "{doc:#}"
    );
    assert_eq!(count(stage, &["arrival_lateness", "count"]), 96, "{doc:#}");
}
