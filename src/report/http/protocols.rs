//! What an HTTP run's protocol adds to its report: HTTP/1.1's protocol errors quoted, HTTP/2's
//! grants, GOAWAY and RST_STREAM by code, and HTTP/3's QUIC packets, 0-RTT, GOAWAY, resets and
//! connection ends.

use std::collections::BTreeMap;

use crate::plan::Protocol;
use crate::report::http::saved::SavedPlan;
use crate::stats::http::http2::Http2Counters;
use crate::stats::http::http3::Http3Counters;
use crate::stats::http::protocol::ProtocolErrors;

/// `Protocol errors: 3 unsolicited response, 1 bad chunk size (among the read errors)`, then
/// the first few quoted, one a line. Nothing when there were none.
pub fn protocol_lines(p: &ProtocolErrors) -> Vec<String> {
    let met = p.met();
    if met.is_empty() {
        return Vec::new();
    }
    let counts: Vec<String> = met
        .iter()
        .map(|(kind, n)| format!("{n} {}", kind.name()))
        .collect();
    let mut lines = vec![format!(
        "Protocol errors: {} (among the read errors)",
        counts.join(", ")
    )];
    lines.extend(
        p.first
            .iter()
            .map(|s| format!("  {}: \"{}\"", s.kind.name(), s.excerpt)),
    );
    lines
}

/// `HTTP/2` or `HTTP/3`, as a merged run's header names it.
pub fn protocol_name(plan: &SavedPlan) -> &'static str {
    match plan.protocol {
        Protocol::Http3(_) => "HTTP/3",
        Protocol::Http1 | Protocol::Http2(_) => "HTTP/2",
    }
}

/// What the servers granted (in each connection's first SETTINGS, and the lowest a later one
/// set) and how they ended streams and connections; a grant below `-m` is said in a line of its
/// own.
pub fn http2_lines(h2: &Http2Counters, asked: usize) -> Vec<String> {
    let granted = match (h2.granted_min, h2.granted_max, h2.unlimited) {
        (None, _, _) if h2.settings_seen == 0 => "no SETTINGS seen".to_string(),
        (None, _, _) => "unlimited streams".to_string(),
        (Some(min), Some(max), 0) if min == max => format!("{min} concurrent streams"),
        (Some(min), max, unlimited) => {
            let max = match (max, unlimited) {
                (_, 1..) => "unlimited".to_string(),
                (Some(max), _) => max.to_string(),
                (None, _) => "?".to_string(),
            };
            format!("{min} to {max} concurrent streams")
        }
    };
    let by_code = |counts: &std::collections::BTreeMap<String, u64>| -> String {
        let total: u64 = counts.values().sum();
        if total == 0 {
            return "0".to_string();
        }
        let parts: Vec<String> = counts
            .iter()
            .map(|(code, n)| format!("{n} {code}"))
            .collect();
        format!("{total} ({})", parts.join(", "))
    };
    let lowered = match (h2.lowered, h2.lowered_min) {
        (0, _) | (_, None) => String::new(),
        (n, Some(min)) => format!(
            ", lowered to {min} later on {n} connection{}",
            if n == 1 { "" } else { "s" }
        ),
    };
    let mut lines = vec![format!(
        "HTTP/2: server granted {granted} per connection{lowered} (-m {asked}); GOAWAY \
         received: {}; RST_STREAM received: {}",
        by_code(&h2.goaway),
        by_code(&h2.rst_stream)
    )];
    match h2.lowest_granted().filter(|&min| (min as usize) < asked) {
        Some(0) => lines.push(format!(
            "Note: the server granted only 0 concurrent streams per connection, fewer than -m \
             {asked}: no new stream could start there until it raised the limit; the requests \
             waited on the connection (that wait is in the latency) or were left unsent."
        )),
        Some(min) => lines.push(format!(
            "Note: the server granted only {min} concurrent streams per connection, fewer than \
             -m {asked}: the requests beyond them waited on the connection, and that wait is in \
             the latency."
        )),
        None => {}
    }
    lines
}

/// QUIC's packets and 0-RTT, HTTP/3's GOAWAY, resets and connection ends, as the report says
/// them.
pub fn http3_lines(h3: &Http3Counters) -> Vec<String> {
    let mut lines = vec![format!(
        "QUIC packets: {} sent, {} lost ({:.3}%, {} bytes; quinn resent what they carried), \
         {} congestion events",
        h3.packets_sent,
        h3.packets_lost,
        percent(h3.packets_lost, h3.packets_sent),
        h3.bytes_lost,
        h3.congestion_events
    )];
    if h3.receive_buffer_drops > 0 {
        lines.push(format!(
            "Warning: the kernel dropped {} datagrams at full receive buffers of tsumo's QUIC \
             sockets (each asks for {} KiB, held to net.core.rmem_max): losses QUIC recovered, \
             in the latency; raise net.core.rmem_max (`tsumo doctor --http3`)",
            h3.receive_buffer_drops,
            crate::sys::udp::QUIC_RECEIVE_BUFFER >> 10
        ));
    }
    if h3.zero_rtt_sent > 0 {
        lines.push(format!(
            "0-RTT: {} connections sent requests in their first flight, {} accepted by the \
             server",
            h3.zero_rtt_sent, h3.zero_rtt_accepted
        ));
    }
    if h3.goaway > 0 {
        lines.push(format!(
            "HTTP/3 GOAWAY: on {} connections (their unsent requests went on new ones)",
            h3.goaway
        ));
    }
    if !h3.stream_resets.is_empty() {
        lines.push(format!(
            "HTTP/3 streams reset by the server: {}",
            by_name(&h3.stream_resets)
        ));
    }
    if !h3.closed.is_empty() {
        lines.push(format!(
            "QUIC connections ended during the run: {}",
            by_name(&h3.closed)
        ));
    }
    lines
}

fn percent(part: u64, whole: u64) -> f64 {
    match whole {
        0 => 0.0,
        _ => part as f64 * 100.0 / whole as f64,
    }
}

/// `A 3, B 1`.
fn by_name(counts: &BTreeMap<String, u64>) -> String {
    counts
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http3_lines_say_what_quic_and_the_server_did() {
        let mut h3 = Http3Counters {
            packets_sent: 2000,
            packets_lost: 2,
            goaway: 1,
            zero_rtt_sent: 3,
            zero_rtt_accepted: 2,
            receive_buffer_drops: 7,
            ..Default::default()
        };
        h3.count_reset("H3_REQUEST_CANCELLED");
        h3.count_closed("idle_timeout");
        let lines = http3_lines(&h3);
        assert!(lines[0].starts_with("QUIC packets: 2000 sent, 2 lost (0.100%"));
        assert!(lines.iter().any(|l| l.contains("0-RTT: 3 connections")));
        assert!(lines.iter().any(|l| l.contains("H3_REQUEST_CANCELLED 1")));
        assert!(lines.iter().any(|l| l.contains("idle_timeout 1")));
        assert!(lines.iter().any(|l| l.starts_with("HTTP/3 GOAWAY: on 1")));
        assert!(lines.iter().any(|l| l.contains("dropped 7 datagrams")));
    }

    /// A saved plan's protocol is the `http2` or `http3` field it always was (neither for
    /// HTTP/1.1), read into one of three and written back unchanged; a file holding both reads
    /// as HTTP/3, as the reports always took it.
    #[test]
    fn a_saved_protocol_round_trips_from_todays_fields() {
        let plan = |extra: serde_json::Value| {
            let mut plan = serde_json::json!({
                "url": "https://x/", "threads": 1, "connections": 2, "duration_s": 1.0,
                "rate": 100, "timeout_s": 2.0, "script": null, "script_args": [],
                "headers": [], "latency": false, "u_latency": false, "batch_latency": false,
                "insecure": false, "cacert": null, "protocol": "h2",
            });
            plan.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            plan
        };
        let h2 = serde_json::json!({"http2": {"streams": 4, "window": 65536, "max_frame": 16384,
            "header_table": 4096}});
        let h3 = serde_json::json!({"http3": {"streams": 8, "zero_rtt": true}});
        let cases = [
            (serde_json::json!({}), "HTTP/1.1"),
            (h2, "HTTP/2 -m4"),
            (h3, "HTTP/3 -m8"),
        ];
        for (extra, short) in cases {
            let doc = plan(extra);
            let saved: SavedPlan = serde_json::from_value(doc.clone()).unwrap();
            assert_eq!(saved.protocol_short(), short);
            assert_eq!(saved.alpn, "h2");
            assert_eq!(serde_json::to_value(&saved).unwrap(), doc);
        }
        let both = plan(
            serde_json::json!({"http2": {"streams": 4, "window": 1, "max_frame": 1,
            "header_table": 1}, "http3": {"streams": 2, "zero_rtt": false}}),
        );
        let saved: SavedPlan = serde_json::from_value(both).unwrap();
        assert_eq!(
            saved.protocol,
            Protocol::Http3(crate::plan::Http3 {
                streams: 2,
                zero_rtt: false
            })
        );
    }
}
