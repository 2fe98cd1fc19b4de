//! A `tsumo mahjong --stages` session stage by stage: who arrived, left and logged in during
//! each stage, how long arrivals waited for their first game, and the server's pacing and
//! tsumo's lateness while it lasted.

use hdrhistogram::Histogram;

use crate::stats::new_histogram;

/// What one stage of the profile recorded (times in µs).
#[derive(Debug, Clone)]
pub struct StageRecord {
    /// Players that arrived (began to log in) during the stage.
    pub arrivals: u64,
    /// Players that left (logged out, or gave up) during the stage.
    pub departures: u64,
    /// Logins that succeeded during the stage.
    pub logins: u64,
    /// How late each arrival of the stage began to log in after the profile called for it
    /// (µs): the arrivals in flight at once are bounded.
    pub arrival_lateness: Histogram<u64>,
    /// Arrival to the first `START`, of the players that arrived during the stage.
    pub time_to_seat: Histogram<u64>,
    /// Own-draw steps beyond the think time, ended during the stage.
    pub draw_overshoot: Histogram<u64>,
    /// tsumo's reply lateness, of the replies sent during the stage.
    pub reply_lateness: Histogram<u64>,
}

impl Default for StageRecord {
    fn default() -> Self {
        StageRecord {
            arrivals: 0,
            departures: 0,
            logins: 0,
            arrival_lateness: new_histogram(),
            time_to_seat: new_histogram(),
            draw_overshoot: new_histogram(),
            reply_lateness: new_histogram(),
        }
    }
}

impl StageRecord {
    pub fn merge(&mut self, other: &StageRecord) {
        self.arrivals += other.arrivals;
        self.departures += other.departures;
        self.logins += other.logins;
        let _ = self.arrival_lateness.add(&other.arrival_lateness);
        let _ = self.time_to_seat.add(&other.time_to_seat);
        let _ = self.draw_overshoot.add(&other.draw_overshoot);
        let _ = self.reply_lateness.add(&other.reply_lateness);
    }
}

/// Adds `other`'s stages into `into`, stage by stage.
pub fn merge_stages(into: &mut Vec<StageRecord>, other: &[StageRecord]) {
    if into.len() < other.len() {
        into.resize_with(other.len(), StageRecord::default);
    }
    for (mine, theirs) in into.iter_mut().zip(other) {
        mine.merge(theirs);
    }
}
