//! The real player (`--bot shanten`) at tables of its own against the real majiang-server,
//! straight and through nginx: full games with wins, and not one reply the server refused (a
//! discard, riichi, win, kan or call it did not carry out), everyone logged out afterwards.

mod common;

use std::time::Duration;

use common::majiang::Majiang;
use common::nginx::Nginx;
use common::run_tsumo;
use serde_json::Value;

/// `players` real bots play one 東風戦 per table; returns the JSON result after checking what
/// a correct player must show.
fn real_tables(url: &str, players: u64) -> Value {
    let players_arg = format!("-c{players}");
    let run = run_tsumo(
        &[
            "mahjong",
            &players_arg,
            "-t2",
            "--bot",
            "shanten",
            "--think",
            "0",
            "--ramp",
            "5ms",
            "-d",
            "9m",
            "--json",
            "-",
            url,
        ],
        Duration::from_secs(10 * 60),
    );
    run.assert_success();
    let doc = run.json();
    let tables = players / 4;
    assert_eq!(doc["games"]["completed"], tables, "{doc:#}");
    assert_eq!(doc["errors"], 0, "{doc:#}");
    assert_eq!(doc["disconnects"], 0, "{doc:#}");
    let bot = &doc["bots"]["shanten"];
    assert_eq!(bot["rejected"], serde_json::json!({}), "{bot:#}");
    assert_eq!(bot["lost_track"], 0, "{bot:#}");
    // Four hands per table (東風戦, no dealer repeat), counted once per player.
    assert_eq!(bot["hands"], 4 * players, "{bot:#}");
    let wins = bot["tsumo"].as_u64().unwrap_or(0) + bot["ron"].as_u64().unwrap_or(0);
    assert!(
        wins >= tables,
        "at least one win per game on average: {bot:#}"
    );
    // The server ran its win path: hule steps were timed.
    assert!(
        doc["steps"]["hule"]["count"].as_u64().unwrap_or(0) > 0,
        "{doc:#}"
    );
    doc
}

#[test]
fn real_bots_play_straight_to_the_server() {
    let server = Majiang::start();
    real_tables(&server.url(), 8);
    assert_eq!(
        server.wait_session_files(0, Duration::from_secs(5)),
        0,
        "sessions left behind:\n{}",
        server.log()
    );
}

#[test]
fn real_bots_play_through_nginx() {
    let server = Majiang::start();
    let nginx = Nginx::builder().ws_proxy("majiang", server.port()).start();
    let url = format!("http://127.0.0.1:{}/server", nginx.port("majiang"));
    real_tables(&url, 8);
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}
