//! What of a response's corrected latency the server caused, and what tsumo added.
//!
//! Per response, on the run's monotonic clock:
//! - I, the intended send time; S, the actual send (stamped once the request's first bytes are
//!   with the kernel); R, the receive time (the kernel's stamp of the read that completed it,
//!   where the kernel stamps); U, when tsumo's thread read it.
//! - corrected latency R − I, as wrk2 defines it (from the intended send);
//! - R′, when the response would have arrived had tsumo sent every request at its earliest
//!   possible moment, given the server's own response times: per connection (and per stream
//!   slot of HTTP/2 and HTTP/3), R′ₖ = max(Iₖ, R′ₖ₋₁) + (Rₖ − Sₖ), never after Rₖ ([`ServerFree`]
//!   keeps R′ₖ₋₁, the `free` of the next response). A connection opened (or failed) at a time
//!   T is free no earlier than T: R′ = max(R′, T), so a connect and a failure are the server's,
//!   as the wait behind its own slowness is;
//! - the server caused R′ − I: its service, plus the wait behind its own slowness that
//!   coordinated-omission correction exists to count;
//! - tsumo added R − R′ = S − max(I, R′ₖ₋₁) before the send (its send delay, and every request
//!   that queued behind it on the connection), and U − R after the response (its read delay),
//!   which no corrected latency includes once R is the kernel's.
//!
//! A stall of tsumo's (a SIGSTOP, a hog on its core) thus stays tsumo's for every request due
//! during it, not only for the first: the ones queued behind it wait on their connection, and
//! that wait is not the server's.
//!
//! In µs, the server's share is the corrected latency less tsumo's send delay, so the two add up
//! to the corrected latency exactly, response by response.

use hdrhistogram::Histogram;

use crate::stats::{new_histogram, to_us};

/// Where a run's receive times come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Timestamps {
    /// The kernel's receive timestamp of the read that completed a response.
    Kernel,
    /// tsumo's clock when its thread read the response (every other load generator's way; and
    /// every run saved before tsumo stamped in the kernel).
    #[default]
    User,
}

impl Timestamps {
    /// The JSON's and the report's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Timestamps::Kernel => "kernel",
            Timestamps::User => "user",
        }
    }
}

/// One response's times, CLOCK_MONOTONIC ns (see the module's letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResponseTimes {
    pub intended: u64,
    /// R′ₖ₋₁: when the connection (or stream slot) would have been free for this request had
    /// tsumo never been late ([`ServerFree::at`]).
    pub free: u64,
    pub sent: u64,
    pub received: u64,
    pub read: u64,
}

/// One response's latency and its split, µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// R − I.
    pub corrected: u64,
    /// R − S.
    pub uncorrected: u64,
    /// corrected − own_send: R′ − I.
    pub server: u64,
    /// S − max(I, R′ₖ₋₁) = R − R′.
    pub own_send: u64,
    /// U − R.
    pub own_read: u64,
    /// U − I: the corrected latency a user-space stamp gives.
    pub user: u64,
}

impl ResponseTimes {
    /// The split of this response (times out of order, which a clamped stamp never gives, count
    /// as 0 rather than wrap).
    pub fn split(&self) -> Split {
        let corrected = to_us(self.received.saturating_sub(self.intended));
        let own_send = to_us(self.sent.saturating_sub(self.intended.max(self.free))).min(corrected);
        Split {
            corrected,
            uncorrected: to_us(self.received.saturating_sub(self.sent)),
            server: corrected - own_send,
            own_send,
            own_read: to_us(self.read.saturating_sub(self.received)),
            user: to_us(self.read.saturating_sub(self.intended)),
        }
    }

    /// R′ of this response: when it would have arrived had tsumo sent it at its earliest
    /// possible moment, max(I, R′ₖ₋₁) + (R − S), never after R (a send ahead of its time within
    /// the pacer's slack is no later than due).
    pub fn server_done(&self) -> u64 {
        self.intended
            .max(self.free)
            .saturating_add(self.received.saturating_sub(self.sent))
            .min(self.received)
    }
}

/// How long after the send's stamp a write may return and still be a write, not a stall of
/// tsumo's: a write to loopback takes tens of µs; a preemption or a stop takes a scheduler's
/// slice (≥ 0.75 ms) or more.
pub const HELD_UP: u64 = 200_000;

/// An HTTP/2 or HTTP/3 send's time, S: stamped at the hand-off to hyper, or to h3 and quinn
/// (`before`); but when the first write at or after it returned (`out`, 0: unknown; HTTP/3: when
/// the first datagram at or after it was sent) more than [`HELD_UP`] later, the library wrote the
/// request later (the burst after a stall of tsumo's), and the send is that write's.
/// (HTTP/1.1 stamps before its own write, as wrk2 does: measured against the kernel's transmit
/// stamps, within 126 µs of them.) Without it, hyper's delay would read as the server's: the
/// server's share then misses at most what of its own time passed between the write and its
/// return (its response is clamped to no earlier than the send), never gains tsumo's delay.
#[inline]
pub fn send_stamp(before: u64, out: u64) -> u64 {
    if out.saturating_sub(before) > HELD_UP {
        out
    } else {
        before
    }
}

/// R′ of one connection, or of one stream slot of a multiplexed connection: when it would have
/// been free for its next request had tsumo sent every request at its earliest possible moment
/// (see the module). One number of state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerFree(u64);

impl ServerFree {
    /// The `free` of the next response's [`ResponseTimes`].
    #[inline]
    pub fn at(self) -> u64 {
        self.0
    }

    /// A response came: the next is free from its R′.
    #[inline]
    pub fn answered(&mut self, times: &ResponseTimes) {
        self.0 = times.server_done();
    }

    /// The connection opened, or a request failed, at `at` (the server's, as its slowness is):
    /// free no earlier than that.
    #[inline]
    pub fn not_before(&mut self, at: u64) {
        self.0 = self.0.max(at);
    }
}

/// Exact sums of the recorded latencies, µs (histograms keep 3 significant figures; these show
/// the split adding up to the last µs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LatencySums {
    pub corrected_us: u64,
    pub server_us: u64,
    pub own_send_us: u64,
    pub own_read_us: u64,
}

impl LatencySums {
    #[inline]
    pub fn add_one(&mut self, split: &Split) {
        self.corrected_us += split.corrected;
        self.server_us += split.server;
        self.own_send_us += split.own_send;
        self.own_read_us += split.own_read;
    }

    pub fn add(&mut self, other: &LatencySums) {
        self.corrected_us += other.corrected_us;
        self.server_us += other.server_us;
        self.own_send_us += other.own_send_us;
        self.own_read_us += other.own_read_us;
    }
}

/// The split's histograms, µs, one sample per response recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct SplitHistograms {
    /// What the server caused.
    pub server: Histogram<u64>,
    /// tsumo's own delay: send plus read, per response.
    pub own: Histogram<u64>,
    pub own_send: Histogram<u64>,
    pub own_read: Histogram<u64>,
    /// The corrected latency as a user-space stamp gives it.
    pub user: Histogram<u64>,
}

impl Default for SplitHistograms {
    fn default() -> Self {
        SplitHistograms {
            server: new_histogram(),
            own: new_histogram(),
            own_send: new_histogram(),
            own_read: new_histogram(),
            user: new_histogram(),
        }
    }
}

impl SplitHistograms {
    #[inline]
    pub fn record(&mut self, split: &Split) {
        self.server.saturating_record(split.server);
        self.own.saturating_record(split.own_send + split.own_read);
        self.own_send.saturating_record(split.own_send);
        self.own_read.saturating_record(split.own_read);
        self.user.saturating_record(split.user);
    }

    /// Records what a running timeline does not: the send and read delays and the user-space
    /// latency (the server's latency and the own total go through the timeline's intervals).
    #[inline]
    pub fn record_beside_timeline(&mut self, split: &Split) {
        self.own_send.saturating_record(split.own_send);
        self.own_read.saturating_record(split.own_read);
        self.user.saturating_record(split.user);
    }

    /// Adds `other` in, exactly (same bounds on both sides).
    pub fn add(&mut self, other: &SplitHistograms) {
        let _ = self.server.add(&other.server);
        let _ = self.own.add(&other.own);
        let _ = self.own_send.add(&other.own_send);
        let _ = self.own_read.add(&other.own_read);
        let _ = self.user.add(&other.user);
    }

    /// Every histogram, in the order server, own, own_send, own_read, user (the saved order).
    pub fn parts_mut(&mut self) -> [&mut Histogram<u64>; 5] {
        [
            &mut self.server,
            &mut self.own,
            &mut self.own_send,
            &mut self.own_read,
            &mut self.user,
        ]
    }

    /// Whether nothing was recorded (a run saved before the split).
    pub fn is_empty(&self) -> bool {
        self.server.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    #[test]
    fn the_split_adds_up_to_the_corrected_latency() {
        // Due at 100, connection free at 90, sent 130 (tsumo late by 30), answered at 5,140,
        // read at 5,900.
        let on_time = ResponseTimes {
            intended: 100 * US,
            free: 90 * US,
            sent: 130 * US,
            received: 5_140 * US,
            read: 5_900 * US,
        }
        .split();
        assert_eq!(on_time.corrected, 5_040);
        assert_eq!(on_time.own_send, 30);
        assert_eq!(on_time.server, 5_010);
        assert_eq!(on_time.uncorrected, 5_010);
        assert_eq!(on_time.own_read, 760);
        assert_eq!(on_time.user, 5_800);
        // Due at 100 while the connection was busy until 2,000 (the server's slowness), sent 2,010.
        let behind = ResponseTimes {
            intended: 100 * US,
            free: 2_000 * US,
            sent: 2_010 * US,
            received: 7_010 * US,
            read: 7_020 * US,
        }
        .split();
        assert_eq!(behind.own_send, 10);
        assert_eq!(behind.server, 5_000 + 1_900);
        assert_eq!(behind.server + behind.own_send, behind.corrected);
        // Rounding to µs never breaks the sum.
        let odd = ResponseTimes {
            intended: 1_499,
            free: 0,
            sent: 2_501,
            received: 4_499,
            read: 4_499,
        }
        .split();
        assert_eq!(odd.server + odd.own_send, odd.corrected);
    }

    /// One connection's requests due every `interval`, answered `service` after each send,
    /// sent by a tsumo that cannot send before `awake(t)`: the splits, as the connection's
    /// [`ServerFree`] gives them.
    fn connection(
        due: u64,
        interval: u64,
        service: u64,
        awake: impl Fn(u64) -> u64,
    ) -> Vec<(ResponseTimes, Split)> {
        let mut free = ServerFree::default();
        let mut received = 0;
        (0..due)
            .map(|k| {
                let intended = k * interval;
                let sent = awake(intended.max(received));
                received = sent + service;
                let times = ResponseTimes {
                    intended,
                    free: free.at(),
                    sent,
                    received,
                    read: awake(received),
                };
                free.answered(&times);
                (times, times.split())
            })
            .collect()
    }

    #[test]
    fn requests_queued_behind_a_stall_of_tsumos_are_not_the_servers() {
        // 5 ms apart, answered in 200 us; tsumo stopped from 12 ms to 162 ms (a SIGSTOP): 30
        // requests fall due in the stall, then go out one after the other, each behind the last.
        let stalled = |t: u64| {
            if (12_000 * US..162_000 * US).contains(&t) {
                162_000 * US
            } else {
                t
            }
        };
        let splits = connection(60, 5_000 * US, 200 * US, stalled);
        let behind = splits
            .iter()
            .filter(|(t, _)| t.sent > t.intended.max(t.free) + US)
            .count();
        assert!(behind >= 30, "{behind} sent late");
        for (times, split) in &splits {
            // The server's share is its own 200 us, every time; the rest is tsumo's.
            assert_eq!(split.server, 200, "{times:?} {split:?}");
            assert_eq!(split.server + split.own_send, split.corrected, "{times:?}");
        }
        // The stall shows in the corrected latency: the first request due in it waited 147 ms.
        let worst = splits.iter().map(|(_, s)| s.corrected).max();
        assert_eq!(worst, Some(147_200));
        // The old rule (free = the previous response's real arrival) charged the queue to the
        // server: the second request due in the stall read ~145 ms of "server".
        let queued = splits[4].0;
        let old = ResponseTimes {
            free: splits[3].0.received,
            ..queued
        }
        .split();
        assert!(old.server > 140_000, "{old:?}");
    }

    #[test]
    fn a_slow_server_keeps_its_whole_queue() {
        // Answers take 7 ms at 5 ms apart, tsumo always on time: the queue that grows on the
        // connection is the server's, to the last µs.
        for (times, split) in connection(40, 5_000 * US, 7_000 * US, |t| t) {
            assert_eq!(split.own_send, 0, "{times:?}");
            assert_eq!(split.server, split.corrected, "{times:?}");
        }
    }

    #[test]
    fn a_stall_behind_a_slow_server_is_tsumos_only_for_what_it_added() {
        // Answers take 7 ms at 5 ms apart (a queue of the server's), and tsumo stalls 30 ms
        // once: the server's share is what it would have been with no stall.
        let quiet = connection(40, 5_000 * US, 7_000 * US, |t| t);
        let stalled = |t: u64| {
            if (50_000 * US..80_000 * US).contains(&t) {
                80_000 * US
            } else {
                t
            }
        };
        let hit = connection(40, 5_000 * US, 7_000 * US, stalled);
        for ((_, q), (times, h)) in quiet.iter().zip(&hit) {
            assert_eq!(h.server, q.server, "{times:?}");
            assert_eq!(h.server + h.own_send, h.corrected, "{times:?}");
        }
        assert!(hit.iter().any(|(_, h)| h.own_send >= 20_000));
    }

    #[test]
    fn a_connect_and_a_pipelined_batch() {
        // A reconnect at 50 ms: the connection is free from then (the connect is the server's).
        let mut free = ServerFree::default();
        free.answered(&ResponseTimes {
            intended: 0,
            free: 0,
            sent: 0,
            received: 300 * US,
            read: 300 * US,
        });
        free.not_before(50_000 * US);
        assert_eq!(free.at(), 50_000 * US);
        // A batch of three due at 40 ms, sent at 52 ms (tsumo 2 ms late after the connect): every
        // response is timed from the batch's send, from the R′ before the batch.
        let before = free.at();
        let mut last = 0;
        for received in [52_100 * US, 52_200 * US, 52_300 * US] {
            let times = ResponseTimes {
                intended: 40_000 * US,
                free: before,
                sent: 52_000 * US,
                received,
                read: received,
            };
            let split = times.split();
            assert_eq!(split.own_send, 2_000);
            assert_eq!(split.server, 10_000 + (received - 52_000 * US) / US);
            free.answered(&times);
            last = times.server_done();
        }
        assert_eq!(free.at(), last);
        assert_eq!(last, 50_300 * US);
        // R′ is never after R: a send ahead of its time within the slack.
        let early = ResponseTimes {
            intended: 1_000 * US,
            free: 0,
            sent: 900 * US,
            received: 1_000 * US,
            read: 1_000 * US,
        };
        assert_eq!(early.server_done(), 1_000 * US);
        assert_eq!(early.split().own_send, 0);
    }
}
