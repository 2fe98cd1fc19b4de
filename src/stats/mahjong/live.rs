//! A mahjong session as `--dashboard` shows it: the intervals its workers handed over so far,
//! and their sums; sessions playing side by side (a search over players seats each step's
//! tables as a session of its own) added up as one.

use hdrhistogram::Histogram;

use super::Interval;
use crate::stats::new_histogram;
use crate::stats::sink::{Handed, Kind, Sums};

/// A mahjong session's intervals handed over so far.
#[derive(Debug, Clone, Default)]
pub struct Data {
    /// By index: how many workers handed it over, and their sum.
    pub intervals: Handed<Interval>,
    /// Every interval handed over, added up.
    pub totals: Totals,
}

/// The sums of a session's intervals.
#[derive(Debug, Clone)]
pub struct Totals {
    /// The counts (the players are the last interval's sum; the histograms are below).
    pub counts: Interval,
    pub draw_overshoot: Histogram<u64>,
    pub deal_overshoot: Histogram<u64>,
    pub reply_lateness: Histogram<u64>,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            counts: Interval::default(),
            draw_overshoot: new_histogram(),
            deal_overshoot: new_histogram(),
            reply_lateness: new_histogram(),
        }
    }
}

impl Totals {
    /// Adds another session's sums.
    fn merge(&mut self, other: &Totals) {
        self.counts.add(&other.counts);
        let _ = self.draw_overshoot.add(&other.draw_overshoot);
        let _ = self.deal_overshoot.add(&other.deal_overshoot);
        let _ = self.reply_lateness.add(&other.reply_lateness);
    }
}

impl Data {
    /// Adds a session that began `offset` intervals after this sum's clock, interval by
    /// interval.
    pub fn add_at(&mut self, offset: u64, other: &Data) {
        for (k, (handed, interval)) in &other.intervals {
            let (count, total) = self.intervals.entry(offset + k).or_default();
            *count += handed;
            total.add(interval);
        }
        self.totals.merge(&other.totals);
    }

    /// Counts an interval before a session began as handed over by its workers: they had
    /// nothing to hand (`began`: where each session began, and its workers).
    pub fn before_began(&mut self, began: &[(u64, usize)]) {
        for (index, (count, _)) in self.intervals.iter_mut() {
            *count += began
                .iter()
                .filter(|(offset, _)| offset > index)
                .map(|(_, workers)| workers)
                .sum::<usize>();
        }
    }
}

impl Sums<Interval> for Totals {
    fn add(&mut self, interval: &Interval) {
        let counts = Interval {
            draw_overshoot: Default::default(),
            deal_overshoot: Default::default(),
            reply_lateness: Default::default(),
            ..interval.clone()
        };
        self.counts.add(&counts);
        let _ = self.draw_overshoot.add(interval.draw_overshoot.unpack());
        let _ = self.deal_overshoot.add(interval.deal_overshoot.unpack());
        let _ = self.reply_lateness.add(interval.reply_lateness.unpack());
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
