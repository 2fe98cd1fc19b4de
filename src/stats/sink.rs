//! Where recording hands its intervals: a recorder knows only the [`Sink`] it was given, not
//! who reads it (`--dashboard`'s live state is the one there is), and a kind's part of what a
//! keeping sink holds ([`Kind`]: its intervals handed over, their sums).

use std::collections::BTreeMap;

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
/// kind: what its workers handed over so far, and their sums (each kind's `live` in its
/// folder).
pub trait Kind: std::fmt::Debug + Send + 'static {
    type Interval: Clone + Send + 'static;
    /// Adds an interval one worker handed over.
    fn take(&mut self, index: u64, interval: &Self::Interval);
    /// The run ended with these intervals, each whole (`workers` handed it over).
    fn end(&mut self, workers: usize, intervals: &BTreeMap<u64, Self::Interval>);
    /// The last index handed over.
    fn last_index(&self) -> Option<u64>;
}
