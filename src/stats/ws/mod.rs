//! What a WebSocket run records: each worker's [`Recorder`] (the round trip from each message's
//! intended send time and from its actual send, connect latency, the message counts, failures
//! by kind and close codes, the run interval by interval in [`timeline`]), merged once at the
//! end into the run's [`RunResult`].

pub mod live;
pub mod timeline;

pub mod split;

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::{new_histogram, to_us};
use crate::plan::WsPlan;
use crate::stats::end::EndReason;
use crate::stats::start::StartRecord;
use crate::sys::procstat::ServerUsage;

/// The counts of a run: messages and what became of them, bytes, connections.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters {
    /// Messages written to a socket.
    pub sent: u64,
    /// Replies matched to a message by its sequence number.
    pub answered: u64,
    /// Messages that had no reply within `-T` (their connection went on with the next).
    pub timed_out: u64,
    /// Messages without a reply when their connection ended (the run's end, a close).
    pub unanswered: u64,
    /// Replies that came after their message's `-T`.
    pub late: u64,
    /// Server messages that answer no message of ours.
    pub pushed: u64,
    /// Payload bytes sent and received.
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Connections opened (the upgrade answered 101).
    pub connected: u64,
    /// Connections that could not open, by kind (`refused`, `upgrade answered 404`, `timeout`…).
    pub failures: BTreeMap<String, u64>,
    /// Connections the server closed or broke during the run, by close code or kind.
    pub closes: BTreeMap<String, u64>,
    /// `--ping`: pings sent, and those whose pong came back.
    pub pings: u64,
    pub pongs: u64,
}

impl Counters {
    fn merge(&mut self, other: Counters) {
        self.sent += other.sent;
        self.answered += other.answered;
        self.timed_out += other.timed_out;
        self.unanswered += other.unanswered;
        self.late += other.late;
        self.pushed += other.pushed;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.connected += other.connected;
        self.pings += other.pings;
        self.pongs += other.pongs;
        for (kind, n) in other.failures {
            *self.failures.entry(kind).or_default() += n;
        }
        for (kind, n) in other.closes {
            *self.closes.entry(kind).or_default() += n;
        }
    }
}

/// One worker's record (µs histograms, wrk2's bounds).
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Round trip from each message's intended send time (corrected).
    pub corrected: Histogram<u64>,
    /// Round trip from its actual send (uncorrected).
    pub uncorrected: Histogram<u64>,
    /// TCP connect, TLS and the upgrade, per connection opened.
    pub connect: Histogram<u64>,
    /// The server's share and tsumo's own delay ([`split`]).
    pub breakdown: split::Breakdown,
    /// `--ping`: each pong's round trip from its ping's send.
    pub pong: Histogram<u64>,
    pub counters: Counters,
    /// The run interval by interval (`--interval`).
    pub timeline: timeline::Timeline,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            corrected: new_histogram(),
            uncorrected: new_histogram(),
            connect: new_histogram(),
            breakdown: split::Breakdown::default(),
            pong: new_histogram(),
            counters: Counters::default(),
            timeline: timeline::Timeline::default(),
        }
    }
}

impl Recorder {
    /// A reply to a message due at `intended` and sent at `sent`, received at `now` (ns, one
    /// clock: the kernel's stamp where it stamps).
    pub fn answered(&mut self, intended: u64, sent: u64, now: u64, bytes: usize) {
        let record = |h: &mut Histogram<u64>, from: u64| {
            // Saturating: a value past one day is recorded as one day.
            let us = to_us(now.saturating_sub(from)).max(1);
            h.saturating_record(us);
        };
        record(&mut self.corrected, intended);
        record(&mut self.uncorrected, sent);
        self.counters.answered += 1;
        self.counters.bytes_received += bytes as u64;
    }

    /// A connection opened after `took`.
    pub fn connected(&mut self, took: Duration) {
        let us = to_us(took.as_nanos().min(u64::MAX as u128) as u64).max(1);
        self.connect.saturating_record(us);
        self.counters.connected += 1;
    }

    /// A pong `ns` after its ping.
    pub fn ponged(&mut self, ns: u64) {
        self.pong.saturating_record(to_us(ns).max(1));
        self.counters.pongs += 1;
    }

    /// A connection that did not open, by kind.
    pub fn failed(&mut self, kind: String) {
        *self.counters.failures.entry(kind).or_default() += 1;
    }

    /// A connection the server closed (`close 1000`) or broke (`reset`…) during the run.
    pub fn closed(&mut self, kind: String) {
        *self.counters.closes.entry(kind).or_default() += 1;
    }
}

impl Recorder {
    /// Adds another worker's record.
    pub fn merge(&mut self, other: Self) {
        // Same bounds on every side: an add cannot fail.
        let _ = self.corrected.add(&other.corrected);
        let _ = self.uncorrected.add(&other.uncorrected);
        let _ = self.connect.add(&other.connect);
        self.breakdown.merge(&other.breakdown);
        let _ = self.pong.add(&other.pong);
        self.counters.merge(other.counters);
        self.timeline.merge(&other.timeline);
    }
}

/// A finished WebSocket run.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub plan: WsPlan,
    /// From the start to the shutdown.
    pub elapsed: Duration,
    pub ended_by: EndReason,
    pub record: Recorder,
    /// Each worker's replies in each second (the `Msg/Sec` row).
    pub per_second: Histogram<u64>,
    /// tsumo's own CPU time (user + system) and peak resident memory.
    pub cpu_seconds: f64,
    pub peak_rss_bytes: u64,
    /// Where the receive times came from: `kernel` (its receive stamps) or `user`.
    pub timestamps: &'static str,
    pub server: Option<ServerUsage>,
    pub start: StartRecord,
    /// `--requests`: where the messages' log went.
    pub requests_log: Option<crate::stats::requests::RequestsLog>,
}

impl RunResult {
    /// Messages the schedule had due in the run (`-R` × the time it ran), `None` closed loop.
    pub fn due(&self) -> Option<u64> {
        let rate = self.plan.rate?;
        let d = self.elapsed.min(self.plan.options.duration);
        Some((u128::from(rate) * d.as_nanos() / 1_000_000_000) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_timed_from_its_intended_and_its_actual_send() {
        let mut r = Recorder::default();
        // Due at 0, sent 300 ms late, answered 1 ms after the send.
        r.answered(0, 300_000_000, 301_000_000, 64);
        assert_eq!(r.corrected.max(), r.corrected.highest_equivalent(301_000));
        assert_eq!(r.uncorrected.max(), r.uncorrected.highest_equivalent(1_000));
        let mut other = Recorder::default();
        other.failed("refused".into());
        other.closed("close 1001".into());
        r.merge(other);
        assert_eq!(r.counters.answered, 1);
        assert_eq!(r.counters.failures["refused"], 1);
        assert_eq!(r.counters.closes["close 1001"], 1);
    }
}
