//! A mahjong session as it goes (`--dashboard`): players by phase, games, step overshoot from
//! the intervals its workers handed over, and the report's charts over time of the whole ones.

use super::page::over_time;
use crate::report::result::{figure, PageContent};
use crate::report::timeline::session_intervals;
use crate::stats::format::format_time_us;
use crate::stats::hdr;
use crate::stats::live::{LiveRun, MahjongLive};
use crate::stats::timeline::{MahjongInterval, MahjongTimeline};

/// The live page's content of a mahjong session.
pub fn content(run: &LiveRun, m: &MahjongLive) -> PageContent {
    let mut timeline = MahjongTimeline {
        length: Some(run.length),
        ..MahjongTimeline::default()
    };
    let mut sum = MahjongInterval::default();
    for (k, (index, (handed, interval))) in m.intervals.iter().enumerate() {
        sum.add(interval);
        if *index == k as u64 && run.is_whole(*index, *handed) {
            timeline.intervals.insert(*index, interval.clone());
        }
    }
    let elapsed_s = timeline.intervals.len() as f64 * run.length as f64 / 1e9;
    let intervals = session_intervals(&timeline, run.start_unix_ns.unwrap_or_default(), elapsed_s);
    let players = intervals.last().map(|i| i.players);
    let count = |id, name: &str, n: Option<u64>| {
        figure(
            id,
            name,
            n.map_or("-".to_string(), |n| n.to_string()),
            n.map(|n| n as f64),
        )
    };
    let draw = sum.draw_overshoot.unpack();
    let deal = sum.deal_overshoot.unpack();
    let p99 = |id, name: &str, h: &hdrhistogram::Histogram<u64>| {
        let v = (!h.is_empty()).then(|| hdr::value_at_percentile(h, 99.0));
        figure(
            id,
            name,
            v.map_or("-".to_string(), |v| format_time_us(v as f64)),
            v.map(|v| v as f64),
        )
    };
    let figures = vec![
        count("logged-in", "Logged in", players.map(|p| p.logged_in)),
        count("connected", "Connected", players.map(|p| p.connected)),
        count("playing", "Playing", players.map(|p| p.playing)),
        count("games-started", "Games started", Some(sum.games_started)),
        count(
            "games-completed",
            "Games completed",
            Some(sum.games_completed),
        ),
        count("errors", "Errors", Some(sum.errors)),
        p99("draw-overshoot-p99", "Draw overshoot p99", &draw),
        p99("deal-overshoot-p99", "Deal overshoot p99", &deal),
    ];
    let mut lines = Vec::new();
    if sum.games_aborted > 0 {
        lines.push(format!("{} games aborted so far", sum.games_aborted));
    }
    PageContent {
        kind: if run.ended {
            "Mahjong session (ended)".to_string()
        } else {
            "Mahjong session (live)".to_string()
        },
        figures,
        lines,
        calm: Vec::new(),
        facts: vec![(
            "Ran".to_string(),
            format!("{elapsed_s:.0}s of whole intervals"),
        )],
        charts: over_time(&intervals),
    }
}
