//! What of a message's corrected round trip the server caused, and what tsumo added: the HTTP
//! mode's split (see `stats::http::split`), for a connection with one message in flight.
//!
//! Per message, on the run's monotonic clock: I, its intended send time; S, its actual send;
//! R, the kernel's receive stamp of the read that completed its reply (tsumo's clock where the
//! kernel does not stamp); U, when tsumo's thread read it; F, when the connection would have
//! been free for it had tsumo never been late (the previous reply's R′, see [`Times::free_after`]).
//! - the corrected round trip R − I;
//! - tsumo's send delay S − max(I, F): a message that waited for the previous reply waited
//!   behind the server, which is the server's;
//! - the server's share: the corrected round trip less that delay (R′ − I);
//! - tsumo's read delay U − R, which the corrected round trip leaves out once R is the kernel's;
//! - the send lateness S − I, the wait behind the previous reply included.

use hdrhistogram::Histogram;

use crate::stats::{new_histogram, to_us};

/// One answered message's times, ns (see the module's letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    pub intended: u64,
    pub free: u64,
    pub sent: u64,
    pub received: u64,
    pub read: u64,
}

impl Times {
    /// When the connection is free for the next message had tsumo never been late:
    /// max(I, F) + (R − S), never after R.
    pub fn free_after(&self) -> u64 {
        self.intended
            .max(self.free)
            .saturating_add(self.received.saturating_sub(self.sent))
            .min(self.received)
    }
}

/// The breakdown's histograms, µs, one sample per answered message.
#[derive(Debug, Clone)]
pub struct Breakdown {
    /// The corrected round trip less tsumo's send delay.
    pub server: Histogram<u64>,
    /// tsumo's own delay: send plus read.
    pub own: Histogram<u64>,
    pub own_send: Histogram<u64>,
    pub own_read: Histogram<u64>,
    /// Actual send − intended send.
    pub send_late: Histogram<u64>,
}

impl Default for Breakdown {
    fn default() -> Self {
        Breakdown {
            server: new_histogram(),
            own: new_histogram(),
            own_send: new_histogram(),
            own_read: new_histogram(),
            send_late: new_histogram(),
        }
    }
}

impl Breakdown {
    /// One answered message (times out of order count as 0 rather than wrap).
    pub fn record(&mut self, t: &Times) {
        let corrected = to_us(t.received.saturating_sub(t.intended));
        let own_send = to_us(t.sent.saturating_sub(t.intended.max(t.free))).min(corrected);
        let own_read = to_us(t.read.saturating_sub(t.received));
        self.server.saturating_record(corrected - own_send);
        self.own.saturating_record(own_send + own_read);
        self.own_send.saturating_record(own_send);
        self.own_read.saturating_record(own_read);
        self.send_late
            .saturating_record(to_us(t.sent.saturating_sub(t.intended)));
    }

    /// Adds another worker's (same bounds: an add cannot fail).
    pub fn merge(&mut self, other: &Breakdown) {
        let _ = self.server.add(&other.server);
        let _ = self.own.add(&other.own);
        let _ = self.own_send.add(&other.own_send);
        let _ = self.own_read.add(&other.own_read);
        let _ = self.send_late.add(&other.send_late);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_wait_behind_the_server_is_the_servers_and_a_late_send_tsumos() {
        let mut b = Breakdown::default();
        // Due at 0, the connection free at 0, sent 5 ms late, stamped 1 ms later, read 2 ms
        // after the stamp.
        let late = Times {
            intended: 0,
            free: 0,
            sent: 5 * MS,
            received: 6 * MS,
            read: 8 * MS,
        };
        b.record(&late);
        assert_eq!(late.free_after(), MS);
        assert_eq!(b.server.max(), b.server.highest_equivalent(1_000));
        assert_eq!(b.own_send.max(), b.own_send.highest_equivalent(5_000));
        assert_eq!(b.own_read.max(), b.own_read.highest_equivalent(2_000));
        assert_eq!(b.own.max(), b.own.highest_equivalent(7_000));
        // Due at 0 but the previous reply (the server's) freed the connection at 300 ms: sent
        // then, answered 1 ms later. All 301 ms are the server's; the lateness is 300 ms.
        let behind = Times {
            intended: 0,
            free: 300 * MS,
            sent: 300 * MS,
            received: 301 * MS,
            read: 301 * MS,
        };
        let mut b = Breakdown::default();
        b.record(&behind);
        assert_eq!(b.server.max(), b.server.highest_equivalent(301_000));
        assert_eq!(b.own_send.max(), 0);
        assert_eq!(b.send_late.max(), b.send_late.highest_equivalent(300_000));
        assert_eq!(behind.free_after(), 301 * MS);
    }
}
