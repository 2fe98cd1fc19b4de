//! A WebSocket run as `--dashboard` shows it: the intervals its workers handed over so far,
//! and their sums.

use hdrhistogram::Histogram;

use super::timeline::Interval;
use crate::stats::new_histogram;
use crate::stats::sink::{Handed, Kind, Sums};
use crate::stats::timeline::Interval as _;

/// A WebSocket run's intervals handed over so far.
#[derive(Debug, Clone, Default)]
pub struct Data {
    /// By index: how many workers handed it over, and their sum.
    pub intervals: Handed<Interval>,
    /// Every interval handed over, added up.
    pub totals: Totals,
    /// `-R`, messages per second (`None`: closed loop).
    pub rate: Option<u64>,
}

/// The sums of a run's intervals: the counts, and the round trip (its server's share, the
/// send lateness) unpacked.
#[derive(Debug, Clone)]
pub struct Totals {
    pub counts: Interval,
    pub round_trip: Histogram<u64>,
    pub server: Histogram<u64>,
    pub send_late: Histogram<u64>,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            counts: Interval::default(),
            round_trip: new_histogram(),
            server: new_histogram(),
            send_late: new_histogram(),
        }
    }
}

impl Sums<Interval> for Totals {
    fn add(&mut self, interval: &Interval) {
        let counts = Interval {
            sent: interval.sent,
            answered: interval.answered,
            unanswered: interval.unanswered,
            pushed: interval.pushed,
            disconnects: interval.disconnects,
            ..Interval::default()
        };
        self.counts.add(&counts);
        let _ = self.round_trip.add(interval.round_trip.unpack());
        let _ = self.server.add(interval.server.unpack());
        let _ = self.send_late.add(interval.send_late.unpack());
    }
}

impl Kind for Data {
    type Interval = Interval;
    type Totals = Totals;

    fn intervals(&self) -> &Handed<Interval> {
        &self.intervals
    }

    fn parts_mut(&mut self) -> (&mut Handed<Interval>, &mut Totals) {
        (&mut self.intervals, &mut self.totals)
    }
}
