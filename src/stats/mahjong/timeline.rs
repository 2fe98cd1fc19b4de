//! A mahjong session over time: what each interval recorded (players, games, messages, the
//! server's pacing), as the difference of a worker's totals at its ends.

use hdrhistogram::Histogram;

use crate::stats::new_histogram;
use crate::stats::timeline::{self, Packed};

/// Players of a mahjong session's worker at an interval's end, by where they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Players {
    pub logged_in: u64,
    pub connected: u64,
    pub playing: u64,
}

/// What one interval of a mahjong session recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Interval {
    /// At the interval's end, summed over the workers.
    pub players: Players,
    pub games_started: u64,
    pub games_completed: u64,
    pub games_aborted: u64,
    /// Games still being played when the session ended (the `-d` limit, a signal).
    pub games_cut: u64,
    /// Hands played, per player, in the interval each ended (or its player stopped).
    pub hands: u64,
    pub messages_in: u64,
    pub messages_out: u64,
    pub errors: u64,
    /// Own-draw steps beyond the think time, deal steps beyond the server's minimum, µs.
    pub draw_overshoot: Packed,
    pub deal_overshoot: Packed,
    /// tsumo's reply lateness (actual − intended reply time), µs: for `--dashboard`, not saved.
    pub reply_lateness: Packed,
    /// WebSockets the server closed (or that failed) before the player was done: for
    /// `--dashboard`, not saved.
    pub disconnects: u64,
}

impl Interval {
    pub fn add(&mut self, other: &Interval) {
        self.players.logged_in += other.players.logged_in;
        self.players.connected += other.players.connected;
        self.players.playing += other.players.playing;
        self.games_started += other.games_started;
        self.games_completed += other.games_completed;
        self.games_aborted += other.games_aborted;
        self.games_cut += other.games_cut;
        self.hands += other.hands;
        self.messages_in += other.messages_in;
        self.messages_out += other.messages_out;
        self.errors += other.errors;
        self.draw_overshoot.add(&other.draw_overshoot);
        self.deal_overshoot.add(&other.deal_overshoot);
        self.reply_lateness.add(&other.reply_lateness);
        self.disconnects += other.disconnects;
    }
}

/// The cumulative figures of a mahjong worker an interval is the difference of.
#[derive(Debug, Clone)]
pub struct Totals {
    pub games_started: u64,
    pub games_completed: u64,
    pub games_aborted: u64,
    pub games_cut: u64,
    pub hands: u64,
    pub messages_in: u64,
    pub messages_out: u64,
    pub errors: u64,
    pub draw_overshoot: Histogram<u64>,
    pub deal_overshoot: Histogram<u64>,
    pub reply_lateness: Histogram<u64>,
    pub disconnects: u64,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            games_started: 0,
            games_completed: 0,
            games_aborted: 0,
            games_cut: 0,
            hands: 0,
            messages_in: 0,
            messages_out: 0,
            errors: 0,
            draw_overshoot: new_histogram(),
            deal_overshoot: new_histogram(),
            reply_lateness: new_histogram(),
            disconnects: 0,
        }
    }
}

impl Totals {
    /// The interval from `was` to these totals, with the players at its end.
    pub fn since(&self, was: &Totals, players: Players) -> Interval {
        let histogram_since = |now: &Histogram<u64>, was: &Histogram<u64>| {
            let mut h = now.clone();
            // Totals only grow, so the difference never goes below zero.
            let _ = h.subtract(was);
            Packed::pack(&h)
        };
        Interval {
            players,
            games_started: self.games_started - was.games_started,
            games_completed: self.games_completed - was.games_completed,
            games_aborted: self.games_aborted - was.games_aborted,
            games_cut: self.games_cut - was.games_cut,
            hands: self.hands - was.hands,
            messages_in: self.messages_in - was.messages_in,
            messages_out: self.messages_out - was.messages_out,
            errors: self.errors - was.errors,
            draw_overshoot: histogram_since(&self.draw_overshoot, &was.draw_overshoot),
            deal_overshoot: histogram_since(&self.deal_overshoot, &was.deal_overshoot),
            reply_lateness: histogram_since(&self.reply_lateness, &was.reply_lateness),
            disconnects: self.disconnects - was.disconnects,
        }
    }
}

impl timeline::Interval for Interval {
    fn add(&mut self, other: &Self) {
        Interval::add(self, other);
    }
}

/// A mahjong session's intervals (one worker's, or once merged the session's).
pub type Timeline = timeline::Timeline<Interval>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mahjong_intervals_are_differences_of_totals() {
        let mut was = Totals::default();
        let mut now = Totals::default();
        was.draw_overshoot.record(100).unwrap();
        now.draw_overshoot.record(100).unwrap();
        now.draw_overshoot.record(300).unwrap();
        now.games_completed = 2;
        now.hands = 9;
        let players = Players {
            logged_in: 4,
            connected: 4,
            playing: 4,
        };
        let interval = now.since(&was, players);
        assert_eq!(interval.games_completed, 2);
        assert_eq!(interval.hands, 9);
        assert_eq!(interval.players, players);
        let draw = interval.draw_overshoot.unpack();
        assert_eq!((draw.len(), draw.count_at(300)), (1, 1));
        let mut timeline = Timeline::default();
        timeline.intervals.insert(2, interval.clone());
        let mut merged = Timeline::default();
        merged.merge(&timeline);
        merged.merge(&timeline);
        let dense = merged.dense();
        assert_eq!(dense.len(), 3);
        assert_eq!(dense[2].players.playing, 8);
        assert_eq!(dense[2].draw_overshoot.unpack().len(), 2);
    }
}
