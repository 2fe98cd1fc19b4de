//! An HTTP run as `--dashboard` shows it: the intervals its workers handed over so far, and
//! their sums (the report's intervals, added up: no second bookkeeping).

use hdrhistogram::Histogram;

use super::Interval;
use crate::plan::Stage;
use crate::stats::new_histogram;
use crate::stats::sink::{Handed, Kind, Sums};

/// An HTTP run's intervals handed over so far, and their sums.
#[derive(Debug, Clone, Default)]
pub struct Data {
    /// The target rate (`-R`, or with `--stages` the profile's mean), when paced.
    pub rate: Option<u64>,
    /// `--stages`: the whole run's profile (this process runs its share of it); empty without.
    pub stages: Vec<Stage>,
    /// The shards the profile is split over (1 for a whole run).
    pub shards: u64,
    /// By index: how many workers handed it over, and their sum.
    pub intervals: Handed<Interval>,
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

impl Sums<Interval> for Totals {
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
    type Totals = Totals;

    fn intervals(&self) -> &Handed<Interval> {
        &self.intervals
    }

    fn parts_mut(&mut self) -> (&mut Handed<Interval>, &mut Totals) {
        (&mut self.intervals, &mut self.totals)
    }
}
