//! The figures of one run as table rows: what each mode shows, in which unit, in which order.
//!
//! Both kinds are read through their saved types ([`SavedRun`], [`SavedSession`]); a figure a
//! run does not have (an empty histogram's percentiles, a server that was not sampled) is an
//! absent value, shown as `-`.

use super::{LoadedRun, RunData};
use crate::report::json::{Percentiles, SavedRun};
use crate::report::session::{SavedHistogram, SavedSession};
use crate::stats::format::{format_binary, format_metric, format_time_us};
use crate::sys::procstat::ServerUsage;

/// How a row's numbers are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    /// µs, printed as wrk prints latencies.
    Time,
    /// Seconds with 2 decimals, as a session's report prints its length (`Session: 182.01s`).
    Seconds,
    /// A rate or count with metric suffixes (`1.23k`).
    Metric,
    /// Bytes, with binary suffixes and `B`.
    Bytes,
    /// Bytes per second.
    BytesPerSec,
    /// An exact count.
    Count,
    Percent,
}

/// One line of a run's figures: name, value (absent when the run has no such figure), unit.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub(super) name: String,
    pub(super) value: Option<f64>,
    pub(super) unit: Unit,
}

fn row(name: impl Into<String>, value: Option<f64>, unit: Unit) -> Row {
    Row {
        name: name.into(),
        value,
        unit,
    }
}

/// The rows of an HTTP run, in table order.
fn http_rows(s: &SavedRun) -> Vec<Row> {
    let c = &s.counters;
    let e = &c.errors;
    // An empty histogram has no percentiles (its summary says 0).
    let has = |p: &Percentiles| p.count > 0;
    let time =
        |name: &str, us: u64, present: bool| row(name, present.then_some(us as f64), Unit::Time);
    let count = |name: &str, n: u64| row(name, Some(n as f64), Unit::Count);
    let (l, u, sl) = (has(&s.latency), has(&s.uncorrected), has(&s.send_lateness));
    let h2 = c.http2.as_ref();
    vec![
        row("Elapsed", Some(s.elapsed_s * 1e6), Unit::Time),
        count("Requests", c.requests),
        row("Requests/sec", Some(s.requests_per_sec), Unit::Metric),
        row("Transfer/sec", Some(s.bytes_per_sec), Unit::BytesPerSec),
        time("Latency p50", s.latency.p50, l),
        time("Latency p90", s.latency.p90, l),
        time("Latency p99", s.latency.p99, l),
        time("Latency p99.9", s.latency.p99_9, l),
        time("Latency max", s.latency.max, l),
        time("Uncorrected p50", s.uncorrected.p50, u),
        time("Uncorrected p99", s.uncorrected.p99, u),
        time("Send lateness p99", s.send_lateness.p99, sl),
        count("Errors connect", e.connect),
        count("Errors read", e.read),
        count("Errors write", e.write),
        count("Errors timeout", e.timeout),
        count("Errors status", e.status),
        count("Connections opened", c.connections_opened),
        count("TLS full handshakes", c.tls_full_handshakes),
        count("TLS resumed handshakes", c.tls_resumed_handshakes),
        // HTTP/2 runs only (`-` for HTTP/1.1).
        row(
            "HTTP/2 streams per conn",
            s.plan.http2.map(|h| h.streams as f64),
            Unit::Count,
        ),
        row(
            "GOAWAY received",
            h2.map(|h| h.goaways() as f64),
            Unit::Count,
        ),
        row(
            "RST_STREAM received",
            h2.map(|h| h.resets() as f64),
            Unit::Count,
        ),
    ]
}

/// The rows of a mahjong session, in table order.
fn mahjong_rows(s: &SavedSession) -> Vec<Row> {
    let players = s.plan.players as f64;
    let elapsed = Some(s.elapsed_s).filter(|e| *e > 0.0);
    let count = |name: String, n: u64| row(name, Some(n as f64), Unit::Count);
    let time = |name: String, us: Option<u64>| row(name, us.map(|us| us as f64), Unit::Time);
    type Pick = fn(&SavedHistogram) -> u64;
    let p50_p99: [(&str, Pick); 2] = [("p50", |h| h.p50), ("p99", |h| h.p99)];
    let mut rows = vec![
        count("Players".to_string(), s.plan.players),
        row("Elapsed", elapsed, Unit::Seconds),
    ];
    for name in s.phase_names() {
        let Some(phase) = s.phases.get(name) else {
            continue;
        };
        rows.push(count(format!("{name} ok"), phase.ok));
        rows.push(count(format!("{name} failed"), phase.failed));
        for (p, pick) in p50_p99 {
            rows.push(time(
                format!("{name} {p}"),
                phase.latency.sampled().map(pick),
            ));
        }
    }
    let games = &s.games;
    rows.push(count("Games started".to_string(), games.started));
    rows.push(count("Games completed".to_string(), games.completed));
    rows.push(count("Games aborted".to_string(), games.aborted));
    // Every known step, present or not: a step only a later session saw (a drawn hand) then
    // sits among the steps, not after the server's rows.
    for kind in s.step_kinds() {
        let h = s.steps.get(kind).and_then(SavedHistogram::sampled);
        for (p, pick) in p50_p99 {
            rows.push(time(format!("Step {kind} {p}"), h.map(pick)));
        }
    }
    let (p99, max): (Pick, Pick) = (|h| h.p99, |h| h.max);
    for (name, h, pick) in [
        ("Draw overshoot p99", &s.draw_overshoot, p99),
        ("Deal overshoot p99", &s.deal_overshoot, p99),
        ("Start burst p99", &s.start_burst, p99),
        ("Start burst max", &s.start_burst, max),
        ("Reply lateness p99", &s.reply_lateness, p99),
    ] {
        rows.push(time(name.to_string(), h.sampled().map(pick)));
    }
    let per_second = |n: u64| elapsed.map(|e| n as f64 / e);
    let messages = &s.messages;
    rows.push(row(
        "Messages in/sec",
        per_second(messages.received),
        Unit::Metric,
    ));
    rows.push(row(
        "Messages out/sec",
        per_second(messages.sent),
        Unit::Metric,
    ));
    rows.push(count("Disconnects".to_string(), s.disconnects));
    rows.push(count("Errors".to_string(), s.errors));
    let per_player = |n: f64| (players > 0.0).then(|| n / players);
    let cpu_us = s.tsumo.cpu_s * 1e6;
    let rss = s.tsumo.peak_rss_bytes as f64;
    rows.push(row("tsumo CPU per player", per_player(cpu_us), Unit::Time));
    rows.push(row("tsumo RSS per player", per_player(rss), Unit::Bytes));
    rows
}

fn server_rows(server: Option<&ServerUsage>) -> Vec<Row> {
    let s = |f: fn(&ServerUsage) -> f64| server.map(f);
    vec![
        row("Server CPU% mean", s(|s| s.cpu_percent_mean), Unit::Percent),
        row("Server CPU% peak", s(|s| s.cpu_percent_peak), Unit::Percent),
        row(
            "Server RSS mean",
            s(|s| s.rss_bytes_mean as f64),
            Unit::Bytes,
        ),
        row(
            "Server RSS peak",
            s(|s| s.rss_bytes_peak as f64),
            Unit::Bytes,
        ),
    ]
}

/// Every row of a run: its mode's, then the server's.
pub(super) fn rows(run: &LoadedRun) -> Vec<Row> {
    let mut rows = match &run.data {
        RunData::Http(saved) => http_rows(saved),
        RunData::Mahjong(session) => mahjong_rows(session),
    };
    rows.extend(server_rows(run.server()));
    rows
}

pub(super) fn format_value(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Time => format_time_us(value),
        Unit::Seconds => format!("{value:.2}s"),
        Unit::Metric => format_metric(value),
        Unit::Bytes => format!("{}B", format_binary(value)),
        Unit::BytesPerSec => format!("{}B", format_binary(value)),
        Unit::Count if value.fract() == 0.0 => format!("{value:.0}"),
        Unit::Count => format!("{value:.1}"),
        Unit::Percent => format!("{value:.1}%"),
    }
}

/// `b / a` as `1.35×`; `-` when it has no meaning (a is 0, or a value is missing).
pub(super) fn format_ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => format!("{:.2}×", b / a),
        _ => "-".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::report::saved::{LoadedRun, RunData};
    use crate::report::session::SavedSession;

    fn session(label: &str) -> LoadedRun {
        let saved: SavedSession = serde_json::from_str(include_str!(
            "../../../tests/fixtures/mahjong-direct-v1.json"
        ))
        .expect("the fixture is a session");
        LoadedRun::new(RunData::Mahjong(Box::new(saved)), label)
    }

    #[test]
    fn a_step_only_a_later_session_saw_sits_among_the_steps() {
        let first = session("a");
        let mut second = session("b");
        if let RunData::Mahjong(s) = &mut second.data {
            let zimo = s.steps["zimo"].clone();
            s.steps.insert("pingju".to_string(), zimo);
        }
        let table = crate::report::compare::render(&[first, second]).expect("comparable");
        let at = |row: &str| {
            table
                .find(row)
                .unwrap_or_else(|| panic!("no {row} row in:\n{table}"))
        };
        assert!(at("Step pingju p50") > at("Step zimo p99"), "{table}");
        assert!(at("Step pingju p99") < at("Draw overshoot p99"), "{table}");
        assert!(at("Step pingju p99") < at("Server RSS peak"), "{table}");
    }
}
