//! A WebSocket run's text report: wrk2's layout, counted in messages (`Msg/Sec`,
//! `Messages/sec`, `Transfer/sec`, the latency block with `-L`, the uncorrected one with `-U`),
//! then what a WebSocket run adds: the messages' fates, connect latency, failures by kind and
//! close codes. One renderer, from the saved form, for a run as it ends and a saved file.

use crate::error::Error;
use crate::report::histogram::SavedHistogram;
use crate::report::lines::{counts_said, latency_block, server_line, stats_row};
use crate::stats::format::{format_binary, format_metric, format_time_s, format_time_us};

use super::saved::{SavedWsBreakdown, SavedWsRun};

const SEPARATOR: &str = "----------------------------------------------------------";

/// What the text shows beyond wrk's short form.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown {
    /// `-L`: the corrected distribution.
    pub latency: bool,
    /// `-U`: also the uncorrected one.
    pub uncorrected: bool,
}

/// The whole report; every line ends with `\n`.
pub fn render(s: &SavedWsRun, shown: Shown) -> Result<String, Error> {
    let plan = &s.plan;
    let decode = |h: &SavedHistogram, what: &str| h.decode(&s.label, what);
    let corrected = decode(&s.round_trip, "round_trip")?;
    let per_second = decode(&s.per_second, "per_second")?;
    let mut lines = vec![
        format!(
            "Running {} test @ {}",
            format_time_s(plan.duration_s),
            plan.url
        ),
        format!(
            "  {} threads and {} connections, {}-byte messages",
            plan.threads, plan.connections, plan.size
        ),
    ];
    if plan.rate.is_none() {
        lines.push(
            "  closed loop (no -R): latency is not corrected for coordinated omission".to_string(),
        );
    }
    lines.push(format!(
        "  Thread Stats{:>6}{:>11}{:>8}{:>12}",
        "Avg", "Stdev", "Max", "+/- Stdev"
    ));
    lines.push(stats_row("Latency", &corrected, format_time_us));
    lines.push(stats_row("Msg/Sec", &per_second, format_metric));
    if shown.latency {
        latency_block(&mut lines, &corrected, "Recorded Latency");
        lines.push(SEPARATOR.to_string());
    }
    if shown.uncorrected {
        let uncorrected = decode(&s.round_trip_uncorrected, "round_trip_uncorrected")?;
        lines.push(String::new());
        latency_block(
            &mut lines,
            &uncorrected,
            "Uncorrected Latency (measured without taking delayed starts into account)",
        );
        lines.push(SEPARATOR.to_string());
    }
    totals(&mut lines, s);
    lines.extend(additions(s));
    let mut text = lines.join("\n");
    text.push('\n');
    Ok(text)
}

/// Messages, bytes and rates, as wrk prints requests.
fn totals(lines: &mut Vec<String>, s: &SavedWsRun) {
    let m = &s.messages;
    let per_second = |n: u64| match s.elapsed_s > 0.0 {
        true => n as f64 / s.elapsed_s,
        false => 0.0,
    };
    lines.push(format!(
        "  {} messages in {}, {}B read",
        m.answered,
        format_time_us(s.elapsed_s * 1e6),
        format_binary(m.bytes_received as f64)
    ));
    lines.push(format!("Messages/sec: {:9.2}", per_second(m.answered)));
    lines.push(format!(
        "Transfer/sec: {:>10}B",
        format_binary(per_second(m.bytes_received))
    ));
}

/// What tsumo adds after `Transfer/sec`.
fn additions(s: &SavedWsRun) -> Vec<String> {
    let m = &s.messages;
    let due = match m.due {
        Some(due) => format!(" (of {due} due)"),
        None => String::new(),
    };
    let mut lines = vec![format!(
        "Messages: {} sent{due}, {} answered, {} unanswered, {} pushed",
        m.sent,
        m.answered,
        m.unanswered + m.timed_out,
        m.pushed
    )];
    if m.timed_out > 0 || m.late > 0 {
        lines.push(format!(
            "  {} without a reply within -T {}, {} replies after it",
            m.timed_out,
            format_time_s(s.plan.timeout_s),
            m.late
        ));
    }
    let t = |us: u64| format_time_us(us as f64);
    if let Some(b) = &s.breakdown {
        breakdown(&mut lines, b, t);
    }
    let c = &s.connections;
    let connect = &c.connect;
    let connect = match connect.sampled() {
        Some(h) => format!(": p50 {}, p99 {}, max {}", t(h.p50), t(h.p99), t(h.max)),
        None => String::new(),
    };
    let pace = match s.plan.connect_rate {
        Some(rate) => format!(" at {rate}/s"),
        None => String::new(),
    };
    lines.push(format!(
        "Connections: {} of {} opened{pace}{connect}",
        c.opened, s.plan.connections
    ));
    if let Some(p) = &c.pings {
        let pong = match p.round_trip.sampled() {
            Some(h) => format!(": p50 {}, p99 {}, max {}", t(h.p50), t(h.p99), t(h.max)),
            None => String::new(),
        };
        lines.push(format!(
            "Pings: {} sent, {} ponged{pong}",
            p.sent, p.answered
        ));
    }
    let counts = |map: &std::collections::BTreeMap<String, u64>| {
        let kinds: Vec<(&str, u64)> = map.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        counts_said(&kinds)
    };
    if !c.failures.is_empty() {
        lines.push(format!("  failed to open: {}", counts(&c.failures)));
    }
    if !c.closes.is_empty() {
        lines.push(format!("  ended by the server: {}", counts(&c.closes)));
    }
    if let Some(server) = &s.server {
        lines.push(server_line(server));
    }
    if let Some(failure) = &s.failure {
        lines.push(format!("Failed: {failure}"));
    }
    lines.extend(crate::report::objectives::lines(&s.objectives));
    lines
}

/// The server's share and tsumo's own delay, when a message was answered.
fn breakdown(lines: &mut Vec<String>, b: &SavedWsBreakdown, t: impl Fn(u64) -> String) {
    let (Some(server), Some(own)) = (b.server.sampled(), b.own.sampled()) else {
        return;
    };
    let source = match b.timestamps.as_str() {
        "kernel" => "kernel receive timestamps",
        _ => "user-space timestamps: tsumo's read delay is in it",
    };
    lines.push(format!(
        "Server's latency: p50 {}, p99 {}, max {} (the corrected round trip less tsumo's own \
         delay; {source})",
        t(server.p50),
        t(server.p99),
        t(server.max)
    ));
    let p99 = |h: &SavedHistogram| h.sampled().map_or(0, |h| h.p99);
    lines.push(format!(
        "tsumo's own delay: p50 {}, p99 {} (send {}, read {}); sends late: p99 {}, max {}",
        t(own.p50),
        t(own.p99),
        t(p99(&b.own_send)),
        t(p99(&b.own_read)),
        t(p99(&b.send_late)),
        t(b.send_late.sampled().map_or(0, |h| h.max))
    ));
}

/// Why a run failed, if it did: no connection opened, the server gone mid-run, or not one
/// message answered.
pub fn failure(s: &SavedWsRun) -> Option<String> {
    let c = &s.connections;
    if s.ended_by == Some(crate::stats::end::EndReason::ServerGone) {
        let kinds: Vec<(&str, u64)> = c.closes.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        return Some(format!(
            "server gone {:.1}s into the run: it ended every connection ({}) and refused a new \
             one",
            s.elapsed_s,
            counts_said(&kinds)
        ));
    }
    if c.opened == 0 {
        let why = match c.failures.is_empty() {
            true => String::new(),
            false => {
                let kinds: Vec<(&str, u64)> =
                    c.failures.iter().map(|(k, n)| (k.as_str(), *n)).collect();
                format!(" ({})", counts_said(&kinds))
            }
        };
        return Some(format!("no connection opened{why}"));
    }
    (s.messages.answered == 0).then(|| "no message was answered".to_string())
}
