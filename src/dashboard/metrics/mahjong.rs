//! `/metrics` of a mahjong session: players by where they are, games, hands, messages,
//! errors and disconnects, the reply lateness and the server's pacing of game steps.

use hdrhistogram::Histogram;
use prometheus_client::encoding::DescriptorEncoder;

use super::{counter, gauge, histogram, Labels, SeriesOf};
use crate::stats::live::LiveRun;
use crate::stats::mahjong::{live, Interval};
use crate::stats::new_histogram;

/// A session's series: sessions under one label (a search's steps of tables, playing at once;
/// the rounds of --vs) add up: their players, games and overshoot.
#[derive(Debug)]
pub(super) struct Series {
    /// The last whole interval's players.
    last: Interval,
    sum: Interval,
    draw_overshoot: Histogram<u64>,
    deal_overshoot: Histogram<u64>,
    reply_lateness: Histogram<u64>,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            last: Interval::default(),
            sum: Interval::default(),
            draw_overshoot: new_histogram(),
            deal_overshoot: new_histogram(),
            reply_lateness: new_histogram(),
        }
    }
}

impl SeriesOf for Series {
    type Part = live::Data;

    fn add(&mut self, run: &LiveRun, m: &live::Data) {
        // The players at the last whole interval's end.
        let last = m
            .intervals
            .iter()
            .rev()
            .find(|(&index, (handed, _))| run.is_whole(index, *handed))
            .map(|(_, (_, interval))| Interval {
                players: interval.players,
                ..Interval::default()
            })
            .unwrap_or_default();
        self.last.add(&last);
        self.sum.add(&m.totals.counts);
        let _ = self.draw_overshoot.add(&m.totals.draw_overshoot);
        let _ = self.deal_overshoot.add(&m.totals.deal_overshoot);
        let _ = self.reply_lateness.add(&m.totals.reply_lateness);
    }

    /// The sessions' players, games, hands, messages and errors, then their lateness and
    /// the server's pacing.
    fn encode(runs: &[(Labels, Series)], e: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        gauge(
            e,
            "players",
            "Players at the last whole interval's end, by where they are",
            runs,
            &[
                ("phase", "logged_in", |s: &Series| {
                    Some(s.last.players.logged_in as f64)
                }),
                ("phase", "connected", |s: &Series| {
                    Some(s.last.players.connected as f64)
                }),
                ("phase", "playing", |s: &Series| {
                    Some(s.last.players.playing as f64)
                }),
            ],
        )?;
        counter(
            e,
            "games_started",
            "Games started",
            None,
            runs,
            &[("", "", |s: &Series| s.sum.games_started)],
        )?;
        counter(
            e,
            "games_ended",
            "Games ended, by how",
            None,
            runs,
            &[
                ("how", "completed", |s: &Series| s.sum.games_completed),
                ("how", "aborted", |s: &Series| s.sum.games_aborted),
                ("how", "cut", |s: &Series| s.sum.games_cut),
            ],
        )?;
        counter(
            e,
            "hands",
            "Hands dealt, per player",
            None,
            runs,
            &[("", "", |s: &Series| s.sum.hands)],
        )?;
        counter(
            e,
            "messages",
            "WebSocket messages, by direction",
            None,
            runs,
            &[
                ("direction", "in", |s: &Series| s.sum.messages_in),
                ("direction", "out", |s: &Series| s.sum.messages_out),
            ],
        )?;
        counter(
            e,
            "session_errors",
            "Errors of the session's players (failed logins, sockets lost, bad frames)",
            None,
            runs,
            &[("", "", |s: &Series| s.sum.errors)],
        )?;
        counter(
            e,
            "disconnects",
            "WebSockets the server closed (or that failed) before the player was done",
            None,
            runs,
            &[("", "", |s: &Series| s.sum.disconnects)],
        )?;
        histogram(
            e,
            "reply_lateness",
            "How late tsumo's players replied after their intended reply time",
            runs,
            &[("", "", |s: &Series| Some(&s.reply_lateness))],
        )?;
        histogram(
            e,
            "step_overshoot",
            "Game steps beyond their due time, by kind: own draws beyond the think time, \
             deals beyond the server's minimum",
            runs,
            &[
                ("kind", "draw", |s: &Series| Some(&s.draw_overshoot)),
                ("kind", "deal", |s: &Series| Some(&s.deal_overshoot)),
            ],
        )
    }
}
