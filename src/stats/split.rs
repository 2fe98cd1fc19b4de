//! What of a response's corrected latency the server caused, and what tsumo added.
//!
//! Per response, on the run's monotonic clock:
//! - I, the intended send time; F, when its connection became free (the previous response's
//!   receive time, or the connect); S, the actual send; R, the receive time (the kernel's stamp
//!   of the read that completed it, where the kernel stamps); U, when tsumo's thread read it.
//! - corrected latency R − I, as wrk2 defines it (from the intended send);
//! - the server caused (R − S) + max(0, F − I): its service, plus the wait behind its own
//!   slowness that coordinated-omission correction exists to count;
//! - tsumo added S − max(I, F) before the send (its send delay on a free connection), and
//!   U − R after the response (its read delay), which no corrected latency includes once R is the
//!   kernel's.
//!
//! In µs, the server's share is the corrected latency less tsumo's send delay, so the two add up
//! to the corrected latency exactly, response by response.

use hdrhistogram::Histogram;

use super::{new_histogram, to_us};

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
    /// corrected − own_send.
    pub server: u64,
    /// S − max(I, F).
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
}
