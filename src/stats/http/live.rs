//! An HTTP run as `--dashboard` shows it: the intervals its workers handed over so far, and
//! their sums (the report's intervals, added up: no second bookkeeping).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::Interval;
use crate::stats::new_histogram;
use crate::stats::sink::Kind;

/// An HTTP run's intervals handed over so far, and their sums.
#[derive(Debug, Clone, Default)]
pub struct Data {
    /// The target rate (`-R`), when paced.
    pub rate: Option<u64>,
    /// By index: how many workers handed it over, and their sum.
    pub intervals: BTreeMap<u64, (usize, Interval)>,
    /// Every interval handed over, added up (counts and histograms).
    pub totals: Totals,
}

/// The sums of an HTTP run's intervals.
#[derive(Debug, Clone)]
pub struct Totals {
    /// The counts (the interval's histograms left empty: they are below, unpacked).
    pub counts: Interval,
    pub latency: Histogram<u64>,
    pub server_latency: Histogram<u64>,
    pub send_lateness: Histogram<u64>,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            counts: Interval::default(),
            latency: new_histogram(),
            server_latency: new_histogram(),
            send_lateness: new_histogram(),
        }
    }
}

impl Totals {
    fn add(&mut self, interval: &Interval) {
        let counts = Interval {
            latency: Default::default(),
            send_lateness: Default::default(),
            server_latency: Default::default(),
            own_delay: Default::default(),
            ..interval.clone()
        };
        self.counts.add(&counts);
        let _ = self.latency.add(interval.latency.unpack());
        let _ = self.server_latency.add(interval.server_latency.unpack());
        let _ = self.send_lateness.add(interval.send_lateness.unpack());
    }
}

impl Kind for Data {
    type Interval = Interval;

    fn take(&mut self, index: u64, interval: &Interval) {
        let (count, sum) = self.intervals.entry(index).or_default();
        *count += 1;
        sum.add(interval);
        self.totals.add(interval);
    }

    fn end(&mut self, workers: usize, intervals: &BTreeMap<u64, Interval>) {
        self.totals = Totals::default();
        self.intervals = intervals
            .iter()
            .map(|(&k, interval)| (k, (workers, interval.clone())))
            .collect();
        for interval in intervals.values() {
            self.totals.add(interval);
        }
    }

    fn last_index(&self) -> Option<u64> {
        self.intervals.keys().next_back().copied()
    }
}
