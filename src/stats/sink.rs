//! Where recording hands its intervals: a recorder knows only the [`Sink`] it was given, not
//! who reads it (`--dashboard`'s live state is the one there is), and a kind's part of what a
//! keeping sink holds ([`Kind`]: its intervals handed over, their sums).

use std::collections::BTreeMap;

use super::timeline::Interval;

/// Where a recorder hands each interval it closes, and a run's whole timeline when it ends
/// (`--dashboard`'s live state is one): called once an interval, never per request. A
/// worker's own; it never waits.
pub trait Sink<I>: Send + Sync + std::fmt::Debug {
    /// A worker closed interval `index`.
    fn closed(&self, index: u64, interval: &I);
    /// The run ended with these intervals (its merged timeline's, every one).
    fn ended(&self, intervals: &BTreeMap<u64, I>);
}

/// What a sink that keeps the intervals (`--dashboard`'s live state) holds of one run of a
/// kind: what its workers handed over so far, by index, and their sums (each kind's `live` in
/// its folder). Handing over and the end are written once, here.
pub trait Kind: std::fmt::Debug + Send + 'static {
    type Interval: Interval + Send + 'static;
    /// The intervals added up (counts, and histograms unpacked).
    type Totals: Sums<Self::Interval>;
    /// By index: how many workers handed it over, and their sum.
    fn intervals(&self) -> &Handed<Self::Interval>;
    /// The same, and the sums, to change.
    fn parts_mut(&mut self) -> (&mut Handed<Self::Interval>, &mut Self::Totals);

    /// Adds an interval one worker handed over.
    fn take(&mut self, index: u64, interval: &Self::Interval) {
        let (intervals, totals) = self.parts_mut();
        let (count, sum) = intervals.entry(index).or_default();
        *count += 1;
        sum.add(interval);
        totals.add(interval);
    }

    /// The run ended with these intervals, each whole (`workers` handed it over).
    fn end(&mut self, workers: usize, ended: &BTreeMap<u64, Self::Interval>) {
        let (intervals, totals) = self.parts_mut();
        *intervals = ended
            .iter()
            .map(|(&k, interval)| (k, (workers, interval.clone())))
            .collect();
        *totals = Self::Totals::default();
        for interval in ended.values() {
            totals.add(interval);
        }
    }

    /// The last index handed over.
    fn last_index(&self) -> Option<u64> {
        self.intervals().keys().next_back().copied()
    }
}

/// Intervals handed over, by index: how many workers handed each over, and their sum.
pub type Handed<I> = BTreeMap<u64, (usize, I)>;

/// A kind's sums of its intervals.
pub trait Sums<I>: Default {
    fn add(&mut self, interval: &I);
}
