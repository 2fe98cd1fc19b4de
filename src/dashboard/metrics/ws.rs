//! `/metrics` of a WebSocket run: messages by what became of them, pushes, disconnects and the
//! corrected round trip.

use hdrhistogram::Histogram;
use prometheus_client::encoding::DescriptorEncoder;

use super::{counter, histogram, Labels, SeriesOf};
use crate::stats::live::LiveRun;
use crate::stats::new_histogram;
use crate::stats::timeline::Interval as _;
use crate::stats::ws::live;
use crate::stats::ws::timeline::Interval;

/// A run's series: runs under one label (the rounds of `--vs`) add up.
#[derive(Debug)]
pub(super) struct Series {
    sum: Interval,
    round_trip: Histogram<u64>,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            sum: Interval::default(),
            round_trip: new_histogram(),
        }
    }
}

impl SeriesOf for Series {
    type Part = live::Data;

    fn add(&mut self, _run: &LiveRun, w: &live::Data) {
        self.sum.add(&w.totals.counts);
        let _ = self.round_trip.add(&w.totals.round_trip);
    }

    /// The messages by fate, the pushes and disconnects, then the round trip.
    fn encode(runs: &[(Labels, Series)], e: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        counter(
            e,
            "ws_messages",
            "WebSocket messages sent, answered (their reply matched) and unanswered (no reply \
             within -T, or none when their connection ended)",
            None,
            runs,
            &[
                ("state", "sent", |s: &Series| s.sum.sent),
                ("state", "answered", |s: &Series| s.sum.answered),
                ("state", "unanswered", |s: &Series| s.sum.unanswered),
            ],
        )?;
        counter(
            e,
            "ws_pushed",
            "Server messages that answered none of tsumo's",
            None,
            runs,
            &[("", "", |s: &Series| s.sum.pushed)],
        )?;
        counter(
            e,
            "ws_disconnects",
            "WebSocket connections the server closed or broke during the run",
            None,
            runs,
            &[("", "", |s: &Series| s.sum.disconnects)],
        )?;
        histogram(
            e,
            "ws_round_trip",
            "WebSocket round trip from each message's intended send time (corrected)",
            runs,
            &[("", "", |s: &Series| Some(&s.round_trip))],
        )
    }
}
