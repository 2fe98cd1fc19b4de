//! A mahjong session as it goes (`--dashboard`): players by phase, games, step overshoot from
//! the intervals its workers handed over, and the report's charts over time of the whole ones.

use super::intervals::{session_intervals, SavedSessionInterval};
use super::page::over_time;
use crate::report::result::{figure, PageContent};
use crate::report::timeline;
use crate::stats::format::format_time_us;
use crate::stats::hdr;
use crate::stats::live::LiveRun;
use crate::stats::mahjong::live;

/// The whole intervals of the current session laid out so far.
pub type Laid = timeline::Laid<SavedSessionInterval>;

/// The live page's content of a mahjong session (`laid`: what earlier renders laid out).
pub fn content(run: &LiveRun, m: &live::Data, laid: &mut Laid) -> PageContent {
    let elapsed_s = laid.lay(run, &m.intervals, session_intervals, |i| {
        &mut i.span.start_s
    });
    let intervals = &laid.intervals;
    let t = &m.totals;
    let sum = &t.counts;
    let players = intervals.last().map(|i| i.players);
    let count = |id, name: &str, n: Option<u64>| {
        figure(
            id,
            name,
            n.map_or("-".to_string(), |n| n.to_string()),
            n.map(|n| n as f64),
        )
    };
    let (draw, deal, reply) = (&t.draw_overshoot, &t.deal_overshoot, &t.reply_lateness);
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
        p99("draw-overshoot-p99", "Draw overshoot p99", draw),
        p99("deal-overshoot-p99", "Deal overshoot p99", deal),
        p99("reply-lateness-p99", "Reply lateness p99", reply),
        count("disconnects", "Disconnects", Some(sum.disconnects)),
    ];
    let mut lines = Vec::new();
    if sum.games_aborted > 0 {
        lines.push(format!("{} games aborted so far", sum.games_aborted));
    }
    if sum.games_cut > 0 {
        lines.push(format!("{} games cut at the end", sum.games_cut));
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
        charts: over_time(intervals),
    }
}
