//! Saved files of today's layout keep loading: the fixtures under `tests/fixtures/` were written
//! by tsumo before the saved mahjong session became a typed document (`*-v1.json`: HTTP runs by
//! the binary against a local nginx, mahjong sessions by the writer from [`session`] below).

use std::path::PathBuf;
use std::time::Duration;

use tsumo::cli::{self, Parsed};
use tsumo::plan::{JsonOut, MahjongPlan};
use tsumo::stats::mahjong::{MahjongRecorder, MahjongResult, PHASES};
use tsumo::sys::procstat::ServerUsage;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A session's plan as the command line makes it.
fn plan(label: &str) -> MahjongPlan {
    let args = [
        "tsumo",
        "mahjong",
        "-c",
        "8",
        "-t",
        "2",
        "-d",
        "90s",
        "--think",
        "20ms",
        "--games",
        "2",
        "--timer",
        "5+10",
        "--label",
        label,
        "http://127.0.0.1:4615/server",
    ];
    match cli::parse(args) {
        Ok(Parsed::Mahjong(plan)) => *plan,
        other => panic!("not a mahjong plan: {other:?}"),
    }
}

/// A finished session with every histogram kind filled (one left empty), `offset` µs apart
/// from another label's.
fn session(label: &str, offset: u64) -> MahjongResult {
    let mut record = MahjongRecorder::default();
    for (i, name) in PHASES.iter().enumerate() {
        let phase = record.phase(name);
        for n in 0..8u64 {
            phase.success(1000 * (i as u64 + 1) + 37 * n + offset);
        }
        if *name == "connect" {
            phase.failure();
        }
    }
    record.games_started = 2;
    record.games_completed = 2;
    record.game_time.record(61_000_000 + offset).unwrap();
    record.game_time.record(64_500_000).unwrap();
    for n in 0..40u64 {
        record.step("dapai", 20_000 + 113 * n + offset);
        record.step("zimo", 400_000 + 17 * n);
        record
            .draw_overshoot
            .record(50 + n * 3 + offset / 10)
            .unwrap();
        record.reply_lateness.record(80 + n * 11).unwrap();
    }
    record.step("qipai", 401_000 + offset);
    record.start_burst.record(1500 + offset).unwrap();
    record.messages_in = 12_345 + offset;
    record.messages_out = 3_210;
    record.bytes_in = 2_345_678;
    record.bytes_out = 123_456;
    record.disconnects = 1;
    record.protocol_error("unexpected message 'x'".to_string());
    MahjongResult {
        plan: plan(label),
        elapsed: Duration::from_micros(130_250_000 + offset),
        interrupted: false,
        timed_out: false,
        record,
        cpu_seconds: 1.25,
        peak_rss_bytes: 12_582_912,
        server: Some(ServerUsage {
            pids: vec![4242],
            samples: 131,
            cpu_percent_mean: 12.5 + offset as f64 / 100.0,
            cpu_percent_peak: 40.0,
            rss_bytes_mean: 50_000_000,
            rss_bytes_peak: 52_000_000,
        }),
    }
}

/// Writes the mahjong fixtures with the writer of the tsumo being built (run once, on the
/// layout the fixtures are meant to keep).
#[test]
#[ignore]
fn write_mahjong_fixtures() {
    for (label, offset) in [("direct", 0), ("nginx", 300)] {
        let out = JsonOut::File(fixture(&format!("mahjong-{label}-v1.json")));
        tsumo::report::mahjong::write(&session(label, offset), &out).unwrap();
    }
}
