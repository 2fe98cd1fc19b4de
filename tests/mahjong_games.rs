//! Full games against the real majiang-server (tests/common/majiang.rs), straight and through
//! an nginx WebSocket reverse proxy: tables of tsumogiri bots and tables of the real player
//! (`--bot shanten`) play one 東風戦 to the end with every phase counted and, for the real
//! player, wins and not one reply the server refused (a discard, riichi, win, kan or call it did
//! not carry out); and one real player at a table with three of majiang-server's own AI players
//! (`--seats 1`). Everyone is logged out afterwards.
//!
//! The server spaces every step by 400 ms or more, so a game takes about three minutes of
//! waiting and little CPU. The games therefore play side by side ([`common::all_at_once`]): each
//! test runs its games at once, and libtest runs the two tests at once.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::majiang::Majiang;
use common::nginx::Nginx;
use common::{json_u64, run_tsumo};
use serde_json::Value;

/// `url` of a server behind a fresh nginx WebSocket proxy: the proxy, kept alive by the caller.
fn through_nginx(server: &Majiang) -> (Nginx, String) {
    let nginx = Nginx::builder().ws_proxy("majiang", server.port()).start();
    let url = format!("http://127.0.0.1:{}/server", nginx.port("majiang"));
    (nginx, url)
}

/// 16 tsumogiri players (4 tables) play one 東風戦 to the end; returns the JSON result.
fn tsumogiri_tables(url: &str) -> Value {
    let run = run_tsumo(
        &[
            "mahjong", "-c16", "-t2", "--think", "0", "--ramp", "5ms", "-d", "8m", "--json", "-",
            url,
        ],
        Duration::from_secs(9 * 60),
    );
    run.assert_success();
    let doc = run.json();
    assert_eq!(doc["games"]["started"], 4, "{doc:#}");
    assert_eq!(doc["games"]["completed"], 4, "{doc:#}");
    assert_eq!(doc["games"]["aborted"], 0, "{doc:#}");
    assert_eq!(doc["errors"], 0, "{doc:#}");
    assert_eq!(doc["disconnects"], 0, "{doc:#}");
    for name in ["login", "connect", "ready", "formed", "started", "logout"] {
        let (ok, failed) = (format!("phases.{name}.ok"), format!("phases.{name}.failed"));
        assert_eq!(json_u64(&doc, &ok), 16, "{ok}: {doc:#}");
        assert_eq!(json_u64(&doc, &failed), 0, "{failed}: {doc:#}");
    }
    // Tsumogiri tables play exactly four hands of exhaustive draws: 4 deals per table.
    assert_eq!(doc["steps"]["qipai"]["count"], 16, "{doc:#}");
    // Each hand counts in the interval it ended (once per player: 64), not all at the game's
    // end: the "Hands over time" chart was flat at 0 with every hand in the last interval.
    let intervals = doc["intervals"].as_array().expect("intervals");
    let hands: Vec<u64> = intervals
        .iter()
        .map(|i| i["hands"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(hands.iter().sum::<u64>(), 64, "{hands:?}");
    let first = hands.iter().position(|&n| n > 0).unwrap_or(hands.len());
    assert!(
        first < hands.len() / 2,
        "no hand before the game's second half: {hands:?}"
    );
    assert!(
        hands.iter().filter(|&&n| n > 0).count() >= 4,
        "four hands' ends in fewer intervals: {hands:?}"
    );
    // The server paces every step at ≥ 400 ms (a busy machine only adds to it).
    let zimo_p50 = doc["steps"]["zimo"]["p50"].as_u64().unwrap();
    assert!(zimo_p50 >= 395_000, "{doc:#}");
    doc
}

/// `play` against a server of its own, straight or through a fresh nginx proxy; then the server
/// must have no session file left (every player logged out).
fn on_own_server(via_nginx: bool, play: impl Fn(&str)) {
    let server = Majiang::start();
    // The proxy stays up until the session files are checked.
    let (_proxy, url) = match via_nginx {
        true => {
            let (nginx, url) = through_nginx(&server);
            (Some(nginx), url)
        }
        false => (None, server.url()),
    };
    play(&url);
    assert_eq!(
        server.wait_session_files(0, Duration::from_secs(5)),
        0,
        "sessions left behind:\n{}",
        server.log()
    );
}

#[test]
fn tsumogiri_tables_play_full_games_straight_and_through_nginx() {
    common::all_at_once(&[
        ("tsumogiri straight to the server", &|| {
            on_own_server(false, |url| {
                tsumogiri_tables(url);
            })
        }),
        ("tsumogiri through nginx", &|| {
            on_own_server(true, |url| {
                tsumogiri_tables(url);
            })
        }),
    ]);
}

/// The real player's games, each with a server of its own: two tables straight to the server,
/// two through nginx, and one beside three majiang-ai players.
#[test]
fn real_bots_play_full_games_straight_through_nginx_and_with_three_majiang_ai_bots() {
    common::all_at_once(&[
        ("real bots straight to the server", &|| {
            on_own_server(false, |url| {
                real_tables(url, 8);
            })
        }),
        ("real bots through nginx", &|| {
            on_own_server(true, |url| {
                real_tables(url, 8);
            })
        }),
        (
            "real bot with three majiang-ai bots",
            &real_bot_with_three_majiang_ai_bots,
        ),
    ]);
}

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
    // Four hands per table (東風戦, no dealer repeat, and a triple ron is three wins, not the
    // abortive draw 三家和 after which the dealer deals again), counted once per player.
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

/// Kills the processes still running when dropped (a failed test leaves no bot behind).
struct Children(Vec<(String, Child)>);

impl Drop for Children {
    fn drop(&mut self) {
        for (_, child) in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Waits for `child` to exit, for at most `limit`; `None` if it is still running.
fn wait_for(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if started.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Plays one table of [`real_bot_with_three_majiang_ai_bots`], on a server of its own.
fn ai_table() -> AiTable {
    let server = Majiang::start();
    let url = server.url();
    let mut tsumo = common::tsumo()
        .args([
            "mahjong",
            "--seats",
            "1",
            "-c1",
            "--bot",
            "shanten",
            "--think",
            "0",
            "--connect-timeout",
            "60s",
            "-d",
            "6m",
            "--json",
            "-",
            &url,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tsumo");
    let stdout = common::drain(tsumo.stdout.take().expect("stdout piped"));
    // stderr line by line: the room number comes first, the rest is kept for a failure.
    let (room_tx, room_rx) = mpsc::channel();
    let stderr_pipe = tsumo.stderr.take().expect("stderr piped");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stderr_pipe).lines().map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("tsumo: room ") {
                let room: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
                let _ = room_tx.send(room);
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    let mut children = Children(vec![("tsumo".into(), tsumo)]);
    let room = room_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("tsumo prints the room number it opened");
    assert!(
        room.len() == 5 && room.chars().skip(1).all(|c| c.is_ascii_digit()),
        "room {room:?}"
    );

    let client =
        common::majiang::scripts_dir().join("node_modules/@kobalab/majiang-server/bin/client.js");
    let mut bot_output = Vec::new();
    for i in 1..=3 {
        let mut bot = Command::new("node")
            .arg(&client)
            .args(["-r", &room, "-n", &format!("AI{i}"), &url])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run majiang-bot with node");
        bot_output.push((
            common::drain(bot.stdout.take().expect("stdout piped")),
            common::drain(bot.stderr.take().expect("stderr piped")),
        ));
        children.0.push((format!("AI{i}"), bot));
    }

    // A 東風戦 with AI players takes about 150 s; tsumo's -d is 6 minutes.
    let status = wait_for(&mut children.0[0].1, Duration::from_secs(7 * 60));
    let mut bots_exited = Vec::new();
    for (name, bot) in children.0.iter_mut().skip(1) {
        bots_exited.push((name.clone(), wait_for(bot, Duration::from_secs(30))));
    }
    drop(children);
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let bots: Vec<String> = bot_output
        .into_iter()
        .map(|(out, err)| {
            format!(
                "{}{}",
                out.join().unwrap_or_default(),
                err.join().unwrap_or_default()
            )
        })
        .collect();
    let context = format!("tsumo stderr:\n{stderr}\nbots:\n{}", bots.join("\n"));
    AiTable {
        status,
        bots_exited,
        bots,
        stdout,
        context,
        server,
    }
}

/// One table of tsumo's real player and three majiang-ai bots, as it ended.
struct AiTable {
    status: Option<std::process::ExitStatus>,
    bots_exited: Vec<(String, Option<std::process::ExitStatus>)>,
    /// Each bot's stdout and stderr.
    bots: Vec<String>,
    stdout: String,
    context: String,
    server: Majiang,
}

/// One tsumo real bot (`--seats 1`) and three of majiang-server's own AI players
/// (`majiang-bot`, majiang-ai), which join the room tsumo prints: the game ends, tsumo's
/// replies were all carried out, and everyone logged out.
fn real_bot_with_three_majiang_ai_bots() {
    // majiang-ai's bot (its own code, not tsumo's) can lose track of the game on a busy
    // machine: it meets a turn of a hand it never saw dealt and throws in majiang-core. That
    // table is played again; what is checked is tsumo's play beside the bots.
    let table = common::up_to_three_tries(ai_table, |table| {
        let crashed = table
            .bots
            .iter()
            .find(|out| out.contains("TypeError") && out.contains("majiang-core"))?;
        let line = crashed.lines().find(|l| l.starts_with("TypeError"))?;
        table
            .status
            .is_some_and(|s| s.success())
            .then(|| format!("a majiang-ai bot crashed in majiang-core: {line}"))
    });
    let AiTable {
        status,
        bots_exited,
        stdout,
        context,
        server,
        ..
    } = table;
    assert!(
        status.is_some_and(|s| s.success()),
        "tsumo: {status:?}\nstdout:\n{stdout}\n{context}"
    );
    for (name, exited) in &bots_exited {
        assert!(
            exited.is_some_and(|s| s.success()),
            "{name} did not exit cleanly after the game: {exited:?}\n{context}"
        );
    }

    let doc: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{stdout}\n{context}"));
    assert_eq!(doc["games"]["completed"], 1, "{doc:#}");
    assert_eq!(doc["errors"], 0, "{doc:#}");
    assert_eq!(doc["disconnects"], 0, "{doc:#}");
    let bot = &doc["bots"]["shanten"];
    assert_eq!(bot["rejected"], serde_json::json!({}), "{bot:#}");
    assert_eq!(bot["lost_track"], 0, "{bot:#}");
    // Four hands (東風戦, no dealer repeat), for tsumo's one player.
    assert_eq!(bot["hands"], 4, "{bot:#}");
    assert_eq!(
        server.wait_session_files(0, Duration::from_secs(10)),
        0,
        "sessions left behind (tsumo's or the bots'):\n{}",
        server.log()
    );
}
