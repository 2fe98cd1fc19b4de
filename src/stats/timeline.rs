//! The run over time: what each interval of `--interval` (1 s by default) recorded, in both
//! modes, so that a spike in second 7 is not averaged away by the totals.
//!
//! Interval `k` is `[t0 + k·length, t0 + (k+1)·length)` from the run's start instant `t0` (with
//! `--start-at`, the same wall-clock span in every shard). Each worker keeps its own intervals
//! (share-nothing, as its recorder); the engine's merge adds them index by index, exactly: a
//! closed interval's histograms are kept V2-serialized (small, and cheap enough on the worker's
//! thread once an interval), and every sample lands in exactly one interval, so the intervals
//! add up to the whole run's histograms and counters.
//!
//! Times here are CLOCK_MONOTONIC nanoseconds (the `timing` clock, which this layer sits below).

use std::collections::BTreeMap;
use std::io::Cursor;
use std::time::Duration;

use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;

use super::{new_histogram, Counters, Errors, Unsent};
pub use crate::sys::procstat::ServerSample;

/// `--interval`'s default.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// The shortest `--interval`.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// Where the intervals of a run fall on CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntervalClock {
    /// The run's start instant.
    pub t0: u64,
    /// One interval, ns (at least 1).
    pub length: u64,
}

impl IntervalClock {
    pub fn new(t0: u64, length: Duration) -> IntervalClock {
        IntervalClock {
            t0,
            length: (length.as_nanos().min(u128::from(u64::MAX)) as u64).max(1),
        }
    }

    /// The interval holding instant `at` (0 for instants before the start).
    pub fn index(&self, at: u64) -> u64 {
        at.saturating_sub(self.t0) / self.length
    }

    /// Where interval `index` ends (the next one begins).
    pub fn end_of(&self, index: u64) -> u64 {
        self.t0
            .saturating_add(index.saturating_add(1).saturating_mul(self.length))
    }
}

/// A histogram kept small while it waits for the end of the run: V2-serialized (without
/// deflate, so packing costs little on a worker's thread); empty for an empty histogram.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Packed(Vec<u8>);

impl Packed {
    pub fn pack(h: &Histogram<u64>) -> Packed {
        if h.is_empty() {
            return Packed::default();
        }
        let mut bytes = Vec::new();
        // Fails only for counts beyond i64, which no interval reaches.
        match V2Serializer::new().serialize(h, &mut bytes) {
            Ok(_) => Packed(bytes),
            Err(_) => Packed::default(),
        }
    }

    /// The histogram, with the run's bounds (an unreadable one, which `pack` never makes, is
    /// empty).
    pub fn unpack(&self) -> Histogram<u64> {
        let mut h = new_histogram();
        if self.0.is_empty() {
            return h;
        }
        let read: Result<Histogram<u64>, _> =
            Deserializer::new().deserialize(&mut Cursor::new(&self.0));
        if let Ok(read) = read {
            let _ = h.add(&read);
        }
        h
    }

    /// Adds `other` into this one, exactly.
    pub fn add(&mut self, other: &Packed) {
        if other.0.is_empty() {
            return;
        }
        if self.0.is_empty() {
            self.0 = other.0.clone();
            return;
        }
        let mut sum = self.unpack();
        let _ = sum.add(other.unpack());
        *self = Packed::pack(&sum);
    }
}

/// What one interval of an HTTP run recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HttpInterval {
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

impl HttpInterval {
    pub fn add(&mut self, other: &HttpInterval) {
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
pub struct HttpTimeline {
    /// Requests written so far (the counters have no such count).
    sent: u64,
    open: Option<Box<Open>>,
    /// One interval, ns, once known.
    pub length: Option<u64>,
    /// Closed intervals by index.
    pub closed: BTreeMap<u64, HttpInterval>,
}

/// Where a recorder keeps the run's histograms of what its timeline records.
pub struct WholeMut<'a> {
    pub latency: &'a mut Histogram<u64>,
    pub send_lateness: &'a mut Histogram<u64>,
    pub server_latency: &'a mut Histogram<u64>,
    pub own_delay: &'a mut Histogram<u64>,
}

impl HttpTimeline {
    /// Starts interval 0 at the run's start.
    pub fn start(&mut self, clock: IntervalClock, counters: &Counters) {
        self.length = Some(clock.length);
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

    /// Whether `at` is past the open interval's end ([`HttpTimeline::roll`] is due).
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
        closed: impl FnOnce(u64, &HttpInterval),
    ) {
        let Some(mut open) = self.open.take() else {
            return;
        };
        let (index, interval) = self.interval_of(&open, counters);
        closed(index, &interval);
        self.closed.entry(index).or_default().add(&interval);
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

    fn interval_of(&self, open: &Open, counters: &Counters) -> (u64, HttpInterval) {
        let now = Totals::of(counters, self.sent);
        let was = open.at_open;
        let interval = HttpInterval {
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
    /// histograms already: [`HttpTimeline::roll`] adds each as it closes).
    pub fn add_open_to(&self, into: WholeMut<'_>) {
        if let Some(open) = &self.open {
            let _ = into.latency.add(&open.latency);
            let _ = into.send_lateness.add(&open.send_lateness);
            let _ = into.server_latency.add(&open.server_latency);
            let _ = into.own_delay.add(&open.own_delay);
        }
    }

    /// Every interval, the open one included (as it stands with `counters`).
    pub fn intervals(&self, counters: &Counters) -> BTreeMap<u64, HttpInterval> {
        let mut all = self.closed.clone();
        if let Some(open) = &self.open {
            let (index, interval) = self.interval_of(open, counters);
            all.entry(index).or_default().add(&interval);
        }
        all
    }

    /// Adds another worker's intervals (`counters`: its counters) into this one's closed ones.
    pub fn merge(&mut self, other: &HttpTimeline, counters: &Counters) {
        self.length = self.length.or(other.length);
        for (index, interval) in other.intervals(counters) {
            self.closed.entry(index).or_default().add(&interval);
        }
    }
}

fn errors_since(now: &Errors, was: &Errors) -> Errors {
    Errors {
        connect: now.connect - was.connect,
        read: now.read - was.read,
        write: now.write - was.write,
        timeout: now.timeout - was.timeout,
        status: now.status - was.status,
        protocol: now.protocol - was.protocol,
    }
}

/// The server's samples that fell in one interval (by the middle of the span each covers).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServerInterval {
    pub samples: u64,
    /// The mean of the samples' CPU figures, percent of one core.
    pub cpu_percent: f64,
    /// The highest resident memory sampled.
    pub rss_bytes: u64,
}

/// The server's samples by interval; samples from before the start are left out.
pub fn server_by_interval(
    samples: &[ServerSample],
    clock: IntervalClock,
) -> BTreeMap<u64, ServerInterval> {
    let mut by_index: BTreeMap<u64, ServerInterval> = BTreeMap::new();
    for sample in samples {
        let middle = sample.at.saturating_sub(sample.span / 2);
        if middle < clock.t0 {
            continue;
        }
        let interval = by_index.entry(clock.index(middle)).or_default();
        let n = interval.samples as f64;
        interval.cpu_percent = (interval.cpu_percent * n + sample.cpu_percent) / (n + 1.0);
        interval.samples += 1;
        interval.rss_bytes = interval.rss_bytes.max(sample.rss_bytes);
    }
    by_index
}

/// An HTTP run's intervals, ready to save: every index from 0 to the last.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTimeline {
    /// One interval, ns.
    pub length: u64,
    /// The wall-clock instant of the run's start (Unix ns): interval `k` starts `k·length` after.
    pub start_unix_ns: u64,
    pub intervals: Vec<(HttpInterval, Option<ServerInterval>)>,
}

impl RunTimeline {
    /// Lays out a merged timeline, with the server's samples beside it.
    pub fn new(
        timeline: &HttpTimeline,
        clock: IntervalClock,
        start_unix_ns: u64,
        server: &[ServerSample],
    ) -> RunTimeline {
        let mut server = server_by_interval(server, clock);
        let last = timeline.closed.keys().next_back().copied();
        let intervals = match last {
            None => Vec::new(),
            Some(last) => (0..=last)
                .map(|k| {
                    let interval = timeline.closed.get(&k).cloned().unwrap_or_default();
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

/// Players of a mahjong session's worker at an interval's end, by where they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Players {
    pub logged_in: u64,
    pub connected: u64,
    pub playing: u64,
}

/// What one interval of a mahjong session recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MahjongInterval {
    /// At the interval's end, summed over the workers.
    pub players: Players,
    pub games_started: u64,
    pub games_completed: u64,
    pub games_aborted: u64,
    /// Games still being played when the session ended (the `-d` limit, a signal).
    pub games_cut: u64,
    /// Hands played, per player, in the interval each ended (or its player stopped).
    pub hands: u64,
    pub messages_in: u64,
    pub messages_out: u64,
    pub errors: u64,
    /// Own-draw steps beyond the think time, deal steps beyond the server's minimum, µs.
    pub draw_overshoot: Packed,
    pub deal_overshoot: Packed,
    /// tsumo's reply lateness (actual − intended reply time), µs: for `--dashboard`, not saved.
    pub reply_lateness: Packed,
    /// WebSockets the server closed (or that failed) before the player was done: for
    /// `--dashboard`, not saved.
    pub disconnects: u64,
}

impl MahjongInterval {
    pub fn add(&mut self, other: &MahjongInterval) {
        self.players.logged_in += other.players.logged_in;
        self.players.connected += other.players.connected;
        self.players.playing += other.players.playing;
        self.games_started += other.games_started;
        self.games_completed += other.games_completed;
        self.games_aborted += other.games_aborted;
        self.games_cut += other.games_cut;
        self.hands += other.hands;
        self.messages_in += other.messages_in;
        self.messages_out += other.messages_out;
        self.errors += other.errors;
        self.draw_overshoot.add(&other.draw_overshoot);
        self.deal_overshoot.add(&other.deal_overshoot);
        self.reply_lateness.add(&other.reply_lateness);
        self.disconnects += other.disconnects;
    }
}

/// The cumulative figures of a mahjong worker an interval is the difference of.
#[derive(Debug, Clone)]
pub struct MahjongTotals {
    pub games_started: u64,
    pub games_completed: u64,
    pub games_aborted: u64,
    pub games_cut: u64,
    pub hands: u64,
    pub messages_in: u64,
    pub messages_out: u64,
    pub errors: u64,
    pub draw_overshoot: Histogram<u64>,
    pub deal_overshoot: Histogram<u64>,
    pub reply_lateness: Histogram<u64>,
    pub disconnects: u64,
}

impl Default for MahjongTotals {
    fn default() -> Self {
        MahjongTotals {
            games_started: 0,
            games_completed: 0,
            games_aborted: 0,
            games_cut: 0,
            hands: 0,
            messages_in: 0,
            messages_out: 0,
            errors: 0,
            draw_overshoot: new_histogram(),
            deal_overshoot: new_histogram(),
            reply_lateness: new_histogram(),
            disconnects: 0,
        }
    }
}

impl MahjongTotals {
    /// The interval from `was` to these totals, with the players at its end.
    pub fn since(&self, was: &MahjongTotals, players: Players) -> MahjongInterval {
        let histogram_since = |now: &Histogram<u64>, was: &Histogram<u64>| {
            let mut h = now.clone();
            // Totals only grow, so the difference never goes below zero.
            let _ = h.subtract(was);
            Packed::pack(&h)
        };
        MahjongInterval {
            players,
            games_started: self.games_started - was.games_started,
            games_completed: self.games_completed - was.games_completed,
            games_aborted: self.games_aborted - was.games_aborted,
            games_cut: self.games_cut - was.games_cut,
            hands: self.hands - was.hands,
            messages_in: self.messages_in - was.messages_in,
            messages_out: self.messages_out - was.messages_out,
            errors: self.errors - was.errors,
            draw_overshoot: histogram_since(&self.draw_overshoot, &was.draw_overshoot),
            deal_overshoot: histogram_since(&self.deal_overshoot, &was.deal_overshoot),
            reply_lateness: histogram_since(&self.reply_lateness, &was.reply_lateness),
            disconnects: self.disconnects - was.disconnects,
        }
    }
}

/// A mahjong session's intervals (one worker's, or once merged the session's).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MahjongTimeline {
    /// One interval, ns, once known.
    pub length: Option<u64>,
    pub intervals: BTreeMap<u64, MahjongInterval>,
}

impl MahjongTimeline {
    pub fn merge(&mut self, other: &MahjongTimeline) {
        self.length = self.length.or(other.length);
        for (index, interval) in &other.intervals {
            self.intervals.entry(*index).or_default().add(interval);
        }
    }

    /// Every index from 0 to the last (empty ones included).
    pub fn dense(&self) -> Vec<MahjongInterval> {
        let Some(&last) = self.intervals.keys().next_back() else {
            return Vec::new();
        };
        (0..=last)
            .map(|k| self.intervals.get(&k).cloned().unwrap_or_default())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Recorder;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_clock_places_instants_in_intervals_from_the_start() {
        let clock = IntervalClock::new(5_000 * MS, Duration::from_secs(1));
        assert_eq!(clock.index(4_000 * MS), 0);
        assert_eq!(clock.index(5_999 * MS), 0);
        assert_eq!(clock.index(6_000 * MS), 1);
        assert_eq!(clock.end_of(2), 8_000 * MS);
    }

    #[test]
    fn packed_histograms_add_exactly() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for v in 1..=1000u64 {
            a.record(v * 7).unwrap();
            b.record(v * 13 + 5).unwrap();
        }
        let mut packed = Packed::pack(&a);
        packed.add(&Packed::pack(&b));
        packed.add(&Packed::default());
        let mut sum = a.clone();
        sum.add(&b).unwrap();
        assert_eq!(packed.unpack(), sum);
        assert_eq!(Packed::pack(&new_histogram()), Packed::default());
        assert!(Packed::default().unpack().is_empty());
    }

    /// Two workers record over four intervals (a gap in one): merged, the intervals add up to
    /// the whole run's histograms and counts exactly.
    #[test]
    fn worker_intervals_merge_and_add_up_to_the_run() {
        let t0 = 1_000 * MS;
        let clock = IntervalClock::new(t0, Duration::from_secs(1));
        let mut whole = Recorder::new();
        let mut merged = Recorder::new();
        for worker in 0..2u64 {
            let mut rec = Recorder::new();
            rec.start_timeline(clock);
            for i in 0..400u64 {
                // Worker 1 is idle in interval 2.
                let at = t0 + i * 10 * MS;
                if worker == 1 && clock.index(at) == 2 {
                    continue;
                }
                rec.roll_to(at);
                rec.counters.requests += 1;
                rec.count_sent(1);
                let corrected = 100 + (i * 37 + worker) % 5000;
                rec.record_latency(&crate::stats::split::Split {
                    corrected,
                    uncorrected: 50,
                    server: corrected - 3,
                    own_send: 3,
                    own_read: 1,
                    user: corrected + 1,
                });
                rec.record_send_lateness(i % 7);
                if i % 50 == 0 {
                    rec.counters.errors.timeout += 1;
                }
            }
            rec.counters.unsent.busy += 3;
            whole.merge(&rec);
            merged.merge(&rec);
        }
        let intervals = merged.timeline.intervals(&merged.counters);
        assert_eq!(intervals.keys().copied().collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(intervals[&2].completed, 100);
        assert_eq!(intervals[&3].unsent.busy, 6);
        let mut latency = new_histogram();
        let mut lateness = new_histogram();
        let (mut completed, mut sent, mut timeouts) = (0, 0, 0);
        for interval in intervals.values() {
            latency.add(interval.latency.unpack()).unwrap();
            lateness.add(interval.send_lateness.unpack()).unwrap();
            completed += interval.completed;
            sent += interval.sent;
            timeouts += interval.errors.timeout;
            assert_eq!(interval.latency.unpack().len(), interval.completed);
        }
        assert_eq!(latency, whole.latency);
        assert_eq!(lateness, whole.send_lateness);
        assert_eq!(completed, whole.counters.requests);
        assert_eq!(sent, 700);
        assert_eq!(timeouts, whole.counters.errors.timeout);
    }

    #[test]
    fn server_samples_fall_in_the_interval_their_span_is_mostly_in() {
        let t0 = 10_000 * MS;
        let clock = IntervalClock::new(t0, Duration::from_secs(1));
        let sample = |at: u64, cpu: f64, rss: u64| ServerSample {
            at,
            span: 1_000 * MS,
            cpu_percent: cpu,
            rss_bytes: rss,
        };
        let samples = [
            sample(t0 - 100 * MS, 99.0, 1),
            sample(t0 + 900 * MS, 20.0, 10),
            sample(t0 + 1_900 * MS, 40.0, 30),
            sample(t0 + 2_100 * MS, 60.0, 20),
        ];
        let by = server_by_interval(&samples, clock);
        assert_eq!(by.len(), 2);
        assert_eq!(by[&0].samples, 1);
        assert_eq!(by[&0].cpu_percent, 20.0);
        assert_eq!(by[&1].samples, 2);
        assert_eq!(by[&1].cpu_percent, 50.0);
        assert_eq!(by[&1].rss_bytes, 30);
    }

    #[test]
    fn mahjong_intervals_are_differences_of_totals() {
        let mut was = MahjongTotals::default();
        let mut now = MahjongTotals::default();
        was.draw_overshoot.record(100).unwrap();
        now.draw_overshoot.record(100).unwrap();
        now.draw_overshoot.record(300).unwrap();
        now.games_completed = 2;
        now.hands = 9;
        let players = Players {
            logged_in: 4,
            connected: 4,
            playing: 4,
        };
        let interval = now.since(&was, players);
        assert_eq!(interval.games_completed, 2);
        assert_eq!(interval.hands, 9);
        assert_eq!(interval.players, players);
        let draw = interval.draw_overshoot.unpack();
        assert_eq!((draw.len(), draw.count_at(300)), (1, 1));
        let mut timeline = MahjongTimeline::default();
        timeline.intervals.insert(2, interval.clone());
        let mut merged = MahjongTimeline::default();
        merged.merge(&timeline);
        merged.merge(&timeline);
        let dense = merged.dense();
        assert_eq!(dense.len(), 3);
        assert_eq!(dense[2].players.playing, 8);
        assert_eq!(dense[2].draw_overshoot.unpack().len(), 2);
    }
}
