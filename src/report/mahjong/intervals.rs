//! A mahjong session over time as saved: the `intervals` array of its JSON, and their merge.

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::report::timeline::{
    add_histograms, merge_aligned, spans, Addable, IntervalHistogram, IntervalSpan,
};
use crate::stats::mahjong::{self, Players};

/// Players at an interval's end, by where they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedPlayers {
    pub logged_in: u64,
    pub connected: u64,
    pub playing: u64,
}

/// Games in an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedIntervalGames {
    pub started: u64,
    pub completed: u64,
    pub aborted: u64,
    /// Games still being played when the session ended (absent in files of older tsumos,
    /// which counted them as aborted).
    #[serde(default)]
    pub cut: u64,
}

/// The server's step overshoot in an interval, by kind of step, µs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedOvershoot {
    /// Own-draw steps, beyond the think time.
    pub draw: IntervalHistogram,
    /// Deal steps, beyond the server's 400 ms minimum.
    pub deal: IntervalHistogram,
}

/// One interval of a mahjong session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSessionInterval {
    #[serde(flatten)]
    pub span: IntervalSpan,
    /// At the interval's end.
    pub players: SavedPlayers,
    pub games: SavedIntervalGames,
    /// Hands played, counted once per player, in the interval each ended (or its player
    /// stopped; files of older tsumos counted them all when their game ended).
    pub hands: u64,
    pub messages_in: u64,
    pub messages_out: u64,
    pub errors: u64,
    pub overshoot: SavedOvershoot,
}

/// A session's intervals as saved.
pub fn session_intervals(
    timeline: &mahjong::Timeline,
    start_unix_ns: u64,
    elapsed_s: f64,
) -> Vec<SavedSessionInterval> {
    let Some(length) = timeline.length else {
        return Vec::new();
    };
    let dense = timeline.dense();
    let spans = spans(dense.len(), length, start_unix_ns, elapsed_s);
    dense
        .iter()
        .zip(spans)
        .map(|(interval, span)| {
            let Players {
                logged_in,
                connected,
                playing,
            } = interval.players;
            SavedSessionInterval {
                span,
                players: SavedPlayers {
                    logged_in,
                    connected,
                    playing,
                },
                games: SavedIntervalGames {
                    started: interval.games_started,
                    completed: interval.games_completed,
                    aborted: interval.games_aborted,
                    cut: interval.games_cut,
                },
                hands: interval.hands,
                messages_in: interval.messages_in,
                messages_out: interval.messages_out,
                errors: interval.errors,
                overshoot: SavedOvershoot {
                    draw: IntervalHistogram::of(&interval.draw_overshoot.unpack()),
                    deal: IntervalHistogram::of(&interval.deal_overshoot.unpack()),
                },
            }
        })
        .collect()
}
impl Addable for SavedSessionInterval {
    fn span(&self) -> IntervalSpan {
        self.span
    }

    fn span_mut(&mut self) -> &mut IntervalSpan {
        &mut self.span
    }

    fn add(&mut self, other: &Self, source: &str) -> Result<(), Error> {
        self.players.logged_in += other.players.logged_in;
        self.players.connected += other.players.connected;
        self.players.playing += other.players.playing;
        self.games.started += other.games.started;
        self.games.completed += other.games.completed;
        self.games.aborted += other.games.aborted;
        self.games.cut += other.games.cut;
        self.hands += other.hands;
        self.messages_in += other.messages_in;
        self.messages_out += other.messages_out;
        self.errors += other.errors;
        add_histograms(&mut self.overshoot.draw, &other.overshoot.draw, source)?;
        add_histograms(&mut self.overshoot.deal, &other.overshoot.deal, source)?;
        Ok(())
    }
}

/// The intervals of mahjong sessions made side by side (see
/// [`merge_aligned`](crate::report::timeline::merge_aligned)).
pub fn merge_sessions(
    parts: &[(&[SavedSessionInterval], &str)],
) -> Result<Vec<SavedSessionInterval>, Error> {
    merge_aligned(parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;
    use crate::stats::timeline::Packed;

    const S: u64 = 1_000_000_000;

    #[test]
    fn session_intervals_carry_players_games_and_overshoot() {
        let mut timeline = mahjong::Timeline {
            length: Some(S),
            ..mahjong::Timeline::default()
        };
        let mut draw = new_histogram();
        draw.record(1200).unwrap();
        timeline.intervals.insert(
            1,
            crate::stats::mahjong::Interval {
                players: Players {
                    logged_in: 8,
                    connected: 8,
                    playing: 4,
                },
                games_completed: 1,
                hands: 12,
                draw_overshoot: Packed::pack(&draw),
                ..Default::default()
            },
        );
        let saved = session_intervals(&timeline, 5 * S, 1.5);
        assert_eq!(saved.len(), 2);
        assert_eq!(saved[1].players.playing, 4);
        assert_eq!(saved[1].games.completed, 1);
        assert_eq!(saved[1].overshoot.draw.count, 1);
        assert_eq!(saved[1].span.duration_s, 0.5);
        let merged = merge_sessions(&[(&saved, "a"), (&saved, "b")]).unwrap();
        assert_eq!(merged[1].players.logged_in, 16);
        assert_eq!(merged[1].overshoot.draw.count, 2);
        assert_eq!(merged[1].overshoot.draw.max, 1200);
    }
}
