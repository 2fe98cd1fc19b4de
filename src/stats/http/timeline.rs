//! An HTTP run over time: what each interval recorded (requests, bytes, errors and the
//! latencies), one worker's open interval and closed ones, and the run's intervals laid out
//! to save beside the server's samples.
//!
//! A recorder's open interval is closed by the clock value of the response that passes its end,
//! or by the worker's timer; the closed interval is handed to the recorder's sink too.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::counters::{Counters, Errors, Unsent};
use crate::stats::new_histogram;
use crate::stats::timeline::{
    self, server_by_interval, IntervalClock, Packed, ServerInterval, ServerSample,
};

/// What one interval of an HTTP run recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Interval {
    /// Requests written (each request of a pipelined batch; an HTTP/2 request sent again counts
    /// again).
    pub sent: u64,
    /// Complete responses.
    pub completed: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub errors: Errors,
    /// Requests due but never sent; counted when the run ends, so they are in the last interval.
    pub unsent: Unsent,
    /// Corrected latency, µs.
    pub latency: Packed,
    /// Send lateness, µs.
    pub send_lateness: Packed,
    /// What the server caused of the corrected latency, µs.
    pub server_latency: Packed,
    /// tsumo's own delay (send and read) per response, µs.
    pub own_delay: Packed,
}

impl Interval {
    pub fn add(&mut self, other: &Interval) {
        self.sent += other.sent;
        self.completed += other.completed;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.errors.add(&other.errors);
        self.unsent.add(&other.unsent);
        self.latency.add(&other.latency);
        self.send_lateness.add(&other.send_lateness);
        self.server_latency.add(&other.server_latency);
        self.own_delay.add(&other.own_delay);
    }
}

impl timeline::Interval for Interval {
    fn add(&mut self, other: &Self) {
        Interval::add(self, other);
    }
}

/// The cumulative counts an interval is the difference of.
#[derive(Debug, Clone, Copy, Default)]
struct Totals {
    sent: u64,
    requests: u64,
    bytes_read: u64,
    bytes_written: u64,
    errors: Errors,
    unsent: Unsent,
}

impl Totals {
    fn of(counters: &Counters, sent: u64) -> Totals {
        Totals {
            sent,
            requests: counters.requests,
            bytes_read: counters.bytes_read,
            bytes_written: counters.bytes_written,
            errors: counters.errors,
            unsent: counters.unsent,
        }
    }
}

/// The interval being recorded, on a worker.
#[derive(Debug, Clone)]
struct Open {
    clock: IntervalClock,
    index: u64,
    /// Where `index` ends: the one comparison a record makes.
    ends_at: u64,
    latency: Histogram<u64>,
    send_lateness: Histogram<u64>,
    server_latency: Histogram<u64>,
    own_delay: Histogram<u64>,
    /// The counts when this interval began.
    at_open: Totals,
}

/// One worker's intervals of an HTTP run (or, once merged, the run's).
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Requests written so far (the counters have no such count).
    sent: u64,
    open: Option<Box<Open>>,
    /// Closed intervals by index, and their length once known.
    pub closed: timeline::Timeline<Interval>,
}

/// Where a recorder keeps the run's histograms of what its timeline records.
pub struct WholeMut<'a> {
    pub latency: &'a mut Histogram<u64>,
    pub send_lateness: &'a mut Histogram<u64>,
    pub server_latency: &'a mut Histogram<u64>,
    pub own_delay: &'a mut Histogram<u64>,
}

impl Timeline {
    /// Starts interval 0 at the run's start.
    pub fn start(&mut self, clock: IntervalClock, counters: &Counters) {
        self.closed.length = Some(clock.length);
        self.open = Some(Box::new(Open {
            clock,
            index: 0,
            ends_at: clock.end_of(0),
            latency: new_histogram(),
            send_lateness: new_histogram(),
            server_latency: new_histogram(),
            own_delay: new_histogram(),
            at_open: Totals::of(counters, self.sent),
        }));
    }

    /// Whether `at` is past the open interval's end ([`Timeline::roll`] is due).
    #[inline]
    pub fn is_due(&self, at: u64) -> bool {
        self.open.as_ref().is_some_and(|open| at >= open.ends_at)
    }

    /// Closes the open interval, adding its histograms into the run's (`whole`), and opens the
    /// one holding `at`; `closed` is shown the interval closed (`--dashboard` hands it over).
    #[cold]
    pub fn roll(
        &mut self,
        at: u64,
        counters: &Counters,
        whole: WholeMut<'_>,
        closed: impl FnOnce(u64, &Interval),
    ) {
        let Some(mut open) = self.open.take() else {
            return;
        };
        let (index, interval) = self.interval_of(&open, counters);
        closed(index, &interval);
        self.closed.add(index, &interval);
        let _ = whole.latency.add(&open.latency);
        let _ = whole.send_lateness.add(&open.send_lateness);
        let _ = whole.server_latency.add(&open.server_latency);
        let _ = whole.own_delay.add(&open.own_delay);
        open.latency.reset();
        open.send_lateness.reset();
        open.server_latency.reset();
        open.own_delay.reset();
        open.index = open.clock.index(at);
        open.ends_at = open.clock.end_of(open.index);
        open.at_open = Totals::of(counters, self.sent);
        self.open = Some(open);
    }

    fn interval_of(&self, open: &Open, counters: &Counters) -> (u64, Interval) {
        let now = Totals::of(counters, self.sent);
        let was = open.at_open;
        let interval = Interval {
            sent: now.sent - was.sent,
            completed: now.requests - was.requests,
            bytes_read: now.bytes_read - was.bytes_read,
            bytes_written: now.bytes_written - was.bytes_written,
            errors: errors_since(&now.errors, &was.errors),
            unsent: Unsent {
                busy: now.unsent.busy - was.unsent.busy,
                connect_failed: now.unsent.connect_failed - was.unsent.connect_failed,
                connect_timeout: now.unsent.connect_timeout - was.unsent.connect_timeout,
                late: now.unsent.late - was.unsent.late,
            },
            latency: Packed::pack(&open.latency),
            send_lateness: Packed::pack(&open.send_lateness),
            server_latency: Packed::pack(&open.server_latency),
            own_delay: Packed::pack(&open.own_delay),
        };
        (open.index, interval)
    }

    #[inline]
    pub fn count_sent(&mut self, requests: u64) {
        self.sent += requests;
    }

    /// Records one response: its corrected latency, what the server caused of it and tsumo's
    /// own delay, µs. False when no interval is open (the caller records them itself).
    #[inline]
    pub fn record_latency(&mut self, corrected_us: u64, server_us: u64, own_us: u64) -> bool {
        let Some(open) = &mut self.open else {
            return false;
        };
        open.latency.saturating_record(corrected_us);
        open.server_latency.saturating_record(server_us);
        open.own_delay.saturating_record(own_us);
        true
    }

    /// Records a send's lateness, µs; false when no interval is open.
    #[inline]
    pub fn record_send_lateness(&mut self, lateness_us: u64) -> bool {
        let Some(open) = &mut self.open else {
            return false;
        };
        open.send_lateness.saturating_record(lateness_us);
        true
    }

    /// Adds the open interval's histograms into `into` (the closed ones' are in the run's
    /// histograms already: [`Timeline::roll`] adds each as it closes).
    pub fn add_open_to(&self, into: WholeMut<'_>) {
        if let Some(open) = &self.open {
            let _ = into.latency.add(&open.latency);
            let _ = into.send_lateness.add(&open.send_lateness);
            let _ = into.server_latency.add(&open.server_latency);
            let _ = into.own_delay.add(&open.own_delay);
        }
    }

    /// Every interval, the open one included (as it stands with `counters`).
    pub fn intervals(&self, counters: &Counters) -> BTreeMap<u64, Interval> {
        let mut all = self.closed.intervals.clone();
        if let Some(open) = &self.open {
            let (index, interval) = self.interval_of(open, counters);
            all.entry(index).or_default().add(&interval);
        }
        all
    }

    /// Adds another worker's intervals (`counters`: its counters) into this one's closed ones.
    pub fn merge(&mut self, other: &Timeline, counters: &Counters) {
        self.closed.length = self.closed.length.or(other.closed.length);
        for (index, interval) in other.intervals(counters) {
            self.closed.add(index, &interval);
        }
    }
}

pub(super) fn errors_since(now: &Errors, was: &Errors) -> Errors {
    Errors {
        connect: now.connect - was.connect,
        read: now.read - was.read,
        write: now.write - was.write,
        timeout: now.timeout - was.timeout,
        status: now.status - was.status,
        protocol: now.protocol - was.protocol,
    }
}

/// An HTTP run's intervals, ready to save: every index from 0 to the last.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTimeline {
    /// One interval, ns.
    pub length: u64,
    /// The wall-clock instant of the run's start (Unix ns): interval `k` starts `k·length` after.
    pub start_unix_ns: u64,
    pub intervals: Vec<(Interval, Option<ServerInterval>)>,
}

impl RunTimeline {
    /// Lays out a merged timeline, with the server's samples beside it.
    pub fn new(
        timeline: &Timeline,
        clock: IntervalClock,
        start_unix_ns: u64,
        server: &[ServerSample],
    ) -> RunTimeline {
        let mut server = server_by_interval(server, clock);
        let last = timeline.closed.intervals.keys().next_back().copied();
        let intervals = match last {
            None => Vec::new(),
            Some(last) => (0..=last)
                .map(|k| {
                    let interval = timeline
                        .closed
                        .intervals
                        .get(&k)
                        .cloned()
                        .unwrap_or_default();
                    (interval, server.remove(&k))
                })
                .collect(),
        };
        RunTimeline {
            length: clock.length,
            start_unix_ns,
            intervals,
        }
    }
}
