//! `/metrics` of a WebSocket run: messages by what became of them against the target rate,
//! pushes, disconnects, the corrected round trip and its server's share, and the send lateness.

use hdrhistogram::Histogram;
use prometheus_client::encoding::DescriptorEncoder;

use super::{counter, gauge, histogram, Labels, SeriesOf};
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
    server: Histogram<u64>,
    send_late: Histogram<u64>,
    /// `-R` (`None`: closed loop).
    rate: Option<u64>,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            sum: Interval::default(),
            round_trip: new_histogram(),
            server: new_histogram(),
            send_late: new_histogram(),
            rate: None,
        }
    }
}

impl SeriesOf for Series {
    type Part = live::Data;

    fn add(&mut self, _run: &LiveRun, w: &live::Data) {
        self.sum.add(&w.totals.counts);
        let _ = self.round_trip.add(&w.totals.round_trip);
        let _ = self.server.add(&w.totals.server);
        let _ = self.send_late.add(&w.totals.send_late);
        self.rate = self.rate.max(w.rate);
    }

    /// The messages by fate and the target rate, the pushes and disconnects, then the round trip
    /// and the send lateness.
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
        gauge(
            e,
            "ws_target_rate",
            "tsumo ws: -R, messages per second (absent: closed loop)",
            runs,
            &[("", "", |s: &Series| s.rate.map(|r| r as f64))],
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
        )?;
        histogram(
            e,
            "ws_server_round_trip",
            "WebSocket round trip less tsumo's send delay: the server's share",
            runs,
            &[("", "", |s: &Series| Some(&s.server))],
        )?;
        histogram(
            e,
            "ws_send_lateness",
            "How late tsumo sent each answered WebSocket message after its due time",
            runs,
            &[("", "", |s: &Series| Some(&s.send_late))],
        )
    }
}
