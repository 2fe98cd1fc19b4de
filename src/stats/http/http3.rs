//! What an HTTP/3 run counts beyond HTTP/1.1's counters: QUIC's handshakes that sent requests
//! in their first flight (0-RTT) and whether the server took them, the packets quinn sent and
//! lost, GOAWAY and the streams a server reset or rejected by HTTP/3 error code, and how
//! connections ended, by kind.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// HTTP/3 counters of one worker, or of a whole run once merged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Http3Counters {
    /// Connections that sent requests in their first flight (`--0rtt`, with a session to
    /// resume), and those of them whose early requests the server accepted.
    pub zero_rtt_sent: u64,
    pub zero_rtt_accepted: u64,
    /// QUIC packets sent, and lost (quinn resends what they carried), over every connection.
    pub packets_sent: u64,
    pub packets_lost: u64,
    pub bytes_lost: u64,
    pub congestion_events: u64,
    pub datagrams_received: u64,
    /// Datagrams the kernel dropped at a full receive buffer of tsumo's QUIC sockets
    /// (`/proc/net/udp`): losses that QUIC recovers, which quinn's counts never show.
    pub receive_buffer_drops: u64,
    /// Connections on which the server sent GOAWAY.
    pub goaway: u64,
    /// Streams the server reset, by HTTP/3 error code name (`H3_REQUEST_REJECTED`, …).
    pub stream_resets: BTreeMap<String, u64>,
    /// Connections that ended during the run, by how (`closed_no_error`, `closed_with_error`,
    /// `idle_timeout`, `reset`, …).
    pub closed: BTreeMap<String, u64>,
}

impl Http3Counters {
    pub fn count_reset(&mut self, code: &str) {
        *self.stream_resets.entry(code.to_string()).or_default() += 1;
    }

    pub fn count_closed(&mut self, how: &str) {
        *self.closed.entry(how.to_string()).or_default() += 1;
    }

    pub fn add(&mut self, other: &Http3Counters) {
        self.zero_rtt_sent += other.zero_rtt_sent;
        self.zero_rtt_accepted += other.zero_rtt_accepted;
        self.packets_sent += other.packets_sent;
        self.packets_lost += other.packets_lost;
        self.bytes_lost += other.bytes_lost;
        self.congestion_events += other.congestion_events;
        self.datagrams_received += other.datagrams_received;
        self.receive_buffer_drops += other.receive_buffer_drops;
        self.goaway += other.goaway;
        for (code, n) in &other.stream_resets {
            *self.stream_resets.entry(code.clone()).or_default() += n;
        }
        for (how, n) in &other.closed {
            *self.closed.entry(how.clone()).or_default() += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add() {
        let mut a = Http3Counters {
            packets_sent: 1000,
            packets_lost: 2,
            ..Default::default()
        };
        let mut b = Http3Counters {
            packets_sent: 1000,
            goaway: 1,
            ..Default::default()
        };
        b.count_reset("H3_REQUEST_CANCELLED");
        b.count_closed("idle_timeout");
        a.add(&b);
        assert_eq!(a.packets_sent, 2000);
        assert_eq!(a.packets_lost, 2);
        assert_eq!(a.goaway, 1);
        assert_eq!(a.stream_resets["H3_REQUEST_CANCELLED"], 1);
        assert_eq!(a.closed["idle_timeout"], 1);
    }
}
