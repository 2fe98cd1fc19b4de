//! A WebSocket run over time: what each interval recorded (messages and their fates, the
//! round trip, the connections the server ended), as the difference of a worker's totals at
//! its ends, so that the intervals add up to the run exactly.

use hdrhistogram::Histogram;

use super::Recorder;
use crate::stats::timeline::{self, Packed};

/// What one interval of a WebSocket run recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Interval {
    pub sent: u64,
    pub answered: u64,
    /// Timed out, or unanswered when their connection ended.
    pub unanswered: u64,
    pub pushed: u64,
    /// Connections the server closed or broke.
    pub disconnects: u64,
    /// The corrected round trip of the messages answered in it, µs.
    pub round_trip: Packed,
    /// Their round trip's share the server caused, and how late tsumo sent them, µs
    /// (`stats::ws::split`): for `--dashboard`, not saved.
    pub server: Packed,
    pub send_late: Packed,
}

impl timeline::Interval for Interval {
    fn add(&mut self, other: &Interval) {
        self.sent += other.sent;
        self.answered += other.answered;
        self.unanswered += other.unanswered;
        self.pushed += other.pushed;
        self.disconnects += other.disconnects;
        self.round_trip.add(&other.round_trip);
        self.server.add(&other.server);
        self.send_late.add(&other.send_late);
    }
}

/// A WebSocket run's intervals by index.
pub type Timeline = timeline::Timeline<Interval>;

/// The cumulative figures of a worker an interval is the difference of.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    sent: u64,
    answered: u64,
    unanswered: u64,
    pushed: u64,
    disconnects: u64,
    round_trip: Option<Histogram<u64>>,
    server: Option<Histogram<u64>>,
    send_late: Option<Histogram<u64>>,
}

impl Totals {
    /// A worker's totals now.
    pub fn of(r: &Recorder) -> Totals {
        let c = &r.counters;
        Totals {
            sent: c.sent,
            answered: c.answered,
            unanswered: c.timed_out + c.unanswered,
            pushed: c.pushed,
            disconnects: c.closes.values().sum(),
            round_trip: Some(r.corrected.clone()),
            server: Some(r.breakdown.server.clone()),
            send_late: Some(r.breakdown.send_late.clone()),
        }
    }

    /// The interval from `was` to these totals.
    pub fn since(&self, was: &Totals) -> Interval {
        Interval {
            sent: self.sent - was.sent,
            answered: self.answered - was.answered,
            unanswered: self.unanswered - was.unanswered,
            pushed: self.pushed - was.pushed,
            disconnects: self.disconnects - was.disconnects,
            round_trip: difference(&self.round_trip, &was.round_trip),
            server: difference(&self.server, &was.server),
            send_late: difference(&self.send_late, &was.send_late),
        }
    }
}

/// A histogram's samples since `was`.
fn difference(now: &Option<Histogram<u64>>, was: &Option<Histogram<u64>>) -> Packed {
    match (now, was) {
        (Some(now), Some(was)) => {
            let mut h = now.clone();
            // Totals only grow, so the difference never goes below zero.
            let _ = h.subtract(was);
            Packed::pack(&h)
        }
        (Some(now), None) => Packed::pack(now),
        _ => Packed::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ws_intervals_are_differences_of_totals() {
        let mut r = Recorder::default();
        r.counters.sent = 3;
        r.answered(0, 0, 2_000_000, 64);
        let was = Totals::of(&r);
        r.counters.sent += 2;
        r.answered(0, 0, 5_000_000, 64);
        r.counters.timed_out += 1;
        r.closed("close 1001".into());
        let first = was.since(&Totals::default());
        let second = Totals::of(&r).since(&was);
        assert_eq!((first.sent, first.answered), (3, 1));
        assert_eq!((second.sent, second.answered, second.unanswered), (2, 1, 1));
        assert_eq!(second.disconnects, 1);
        let h = second.round_trip.unpack();
        assert_eq!((h.len(), h.max()), (1, h.highest_equivalent(5_000)));
    }
}
