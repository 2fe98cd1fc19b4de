//! A WebSocket run as saved to JSON (`tsumo ws --json`): [`SavedWsRun`] is the schema, written
//! and read. The conventions are the other kinds': µs for latencies, seconds as floats
//! (`*_s`), every histogram kept whole beside its summary ([`SavedHistogram`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::intervals::SavedWsInterval;
use crate::report::histogram::SavedHistogram;
use crate::report::schema::{first_schema, SavedPart, SCHEMA_VERSION};
use crate::slo::Verdict;
use crate::stats::end::EndReason;
use crate::stats::ws::RunResult;
use crate::sys::procstat::ServerUsage;
use crate::sys::usage::OwnUsage;

/// One WebSocket run as saved to JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedWsRun {
    /// Always `"tsumo"`.
    pub tool: String,
    pub version: String,
    /// Always `"ws"`.
    pub mode: String,
    #[serde(default = "first_schema")]
    pub schema: u32,
    /// The run's name in comparisons (`--label`; default: the URL).
    pub label: String,
    pub plan: SavedWsPlan,
    #[serde(flatten)]
    pub part: SavedPart,
    /// From the start to the shutdown, seconds.
    pub elapsed_s: f64,
    /// What ended it: `duration`, `SIGINT`, `SIGTERM`, `SIGHUP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<EndReason>,
    /// Round trip from each message's intended send time (µs).
    pub round_trip: SavedHistogram,
    /// Round trip from each message's actual send (µs).
    pub round_trip_uncorrected: SavedHistogram,
    /// Each worker's replies per second, sampled once a second (the `Msg/Sec` row).
    pub per_second: SavedHistogram,
    pub messages: SavedWsMessages,
    /// The server's share and tsumo's own delay (absent in files from before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub breakdown: Option<SavedWsBreakdown>,
    pub connections: SavedWsConnections,
    /// tsumo's own CPU and peak memory.
    pub tsumo: OwnUsage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerUsage>,
    /// Why the run failed (no connection opened, nothing answered); absent when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// `--slo`: each objective with what the run measured, as in an HTTP run's file; absent
    /// without objectives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objectives: Vec<Verdict>,
    /// The run interval by interval (`--interval`, 1 s by default).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<SavedWsInterval>,
    /// `--requests`: where the log of every message went, as an HTTP run's; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_log: Option<crate::stats::requests::RequestsLog>,
}

/// What was asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedWsPlan {
    pub url: String,
    pub threads: usize,
    pub connections: usize,
    /// Messages per second (`-R`); absent: closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<u64>,
    /// Bytes per message.
    pub size: usize,
    pub duration_s: f64,
    pub timeout_s: f64,
    /// `--connect-rate`: connections opened per second; absent: all at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_rate: Option<u64>,
    /// `--ping`: seconds between a connection's pings; absent: none sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ping_s: Option<f64>,
}

/// The messages and what became of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedWsMessages {
    /// What the schedule had due in the run (`-R` × its time); absent in a closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due: Option<u64>,
    pub sent: u64,
    pub answered: u64,
    /// No reply within `-T`: the connection went on with the next message.
    pub timed_out: u64,
    /// No reply when the connection ended.
    pub unanswered: u64,
    /// Replies after their message's `-T`.
    pub late: u64,
    /// Server messages that answered none of ours.
    pub pushed: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

/// What of the corrected round trip the server caused and what tsumo added (µs, one sample
/// per answered message; see `stats::ws::split`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedWsBreakdown {
    /// Where the receive times came from: `kernel` (its receive stamps) or `user`.
    pub timestamps: String,
    /// The corrected round trip less tsumo's send delay.
    pub server: SavedHistogram,
    /// tsumo's own delay: send plus read.
    pub own: SavedHistogram,
    pub own_send: SavedHistogram,
    pub own_read: SavedHistogram,
    /// Actual send − intended send.
    pub send_late: SavedHistogram,
}

/// The connections: opened, failed to open (by kind), ended by the server (by close code).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedWsConnections {
    pub opened: u64,
    /// TCP connect, TLS and the upgrade (µs).
    pub connect: SavedHistogram,
    pub failures: BTreeMap<String, u64>,
    pub closes: BTreeMap<String, u64>,
    /// `--ping`: the pings and their pongs; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pings: Option<SavedWsPings>,
}

/// `--ping`'s pings: sent, answered by a pong, and the pong's round trip (µs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedWsPings {
    pub sent: u64,
    pub answered: u64,
    pub round_trip: SavedHistogram,
}

impl SavedWsRun {
    /// The saved form of a finished run (without its verdict: see [`super::saved`]).
    pub fn from_result(r: &RunResult) -> SavedWsRun {
        let plan = &r.plan;
        let record = &r.record;
        let c = &record.counters;
        SavedWsRun {
            tool: "tsumo".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            mode: super::MODE.to_string(),
            schema: SCHEMA_VERSION,
            label: plan.options.label.clone(),
            plan: SavedWsPlan {
                url: plan.target.url.clone(),
                threads: plan.options.threads,
                connections: plan.connections,
                rate: plan.rate,
                size: plan.size,
                duration_s: plan.options.duration.as_secs_f64(),
                timeout_s: plan.timeout.as_secs_f64(),
                connect_rate: plan.connect_rate,
                ping_s: plan.ping.map(|p| p.as_secs_f64()),
            },
            part: SavedPart::of(&plan.options.part, &r.start),
            elapsed_s: r.elapsed.as_secs_f64(),
            ended_by: Some(r.ended_by),
            round_trip: SavedHistogram::of(&record.corrected),
            round_trip_uncorrected: SavedHistogram::of(&record.uncorrected),
            per_second: SavedHistogram::of(&r.per_second),
            messages: SavedWsMessages {
                due: r.due(),
                sent: c.sent,
                answered: c.answered,
                timed_out: c.timed_out,
                unanswered: c.unanswered,
                late: c.late,
                pushed: c.pushed,
                bytes_sent: c.bytes_sent,
                bytes_received: c.bytes_received,
            },
            breakdown: Some(SavedWsBreakdown {
                timestamps: r.timestamps.to_string(),
                server: SavedHistogram::of(&record.breakdown.server),
                own: SavedHistogram::of(&record.breakdown.own),
                own_send: SavedHistogram::of(&record.breakdown.own_send),
                own_read: SavedHistogram::of(&record.breakdown.own_read),
                send_late: SavedHistogram::of(&record.breakdown.send_late),
            }),
            connections: SavedWsConnections {
                opened: c.connected,
                connect: SavedHistogram::of(&record.connect),
                failures: c.failures.clone(),
                closes: c.closes.clone(),
                pings: plan.ping.map(|_| SavedWsPings {
                    sent: c.pings,
                    answered: c.pongs,
                    round_trip: SavedHistogram::of(&record.pong),
                }),
            },
            tsumo: OwnUsage {
                cpu_seconds: r.cpu_seconds,
                peak_rss_bytes: r.peak_rss_bytes,
            },
            server: r.server.clone(),
            failure: None,
            objectives: Vec::new(),
            intervals: super::intervals::saved(
                &record.timeline,
                r.start.intended_unix_ns.unwrap_or(r.start.actual_unix_ns),
                r.elapsed.as_secs_f64(),
            ),
            requests_log: r.requests_log.clone(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::stats::new_histogram;

    /// A run with nothing recorded, for the measures' tests.
    pub(crate) fn run() -> SavedWsRun {
        let empty = SavedHistogram::of(&new_histogram());
        SavedWsRun {
            tool: "tsumo".into(),
            version: String::new(),
            mode: super::super::MODE.into(),
            schema: SCHEMA_VERSION,
            label: "ws".into(),
            plan: SavedWsPlan {
                url: "ws://127.0.0.1/".into(),
                threads: 1,
                connections: 1,
                rate: Some(100),
                size: 64,
                duration_s: 10.0,
                timeout_s: 2.0,
                connect_rate: None,
                ping_s: None,
            },
            part: SavedPart::default(),
            elapsed_s: 10.0,
            ended_by: None,
            round_trip: empty.clone(),
            round_trip_uncorrected: empty.clone(),
            per_second: empty.clone(),
            messages: SavedWsMessages::default(),
            connections: SavedWsConnections {
                opened: 1,
                connect: empty,
                failures: BTreeMap::new(),
                closes: BTreeMap::new(),
                pings: None,
            },
            breakdown: None,
            tsumo: OwnUsage::default(),
            server: None,
            failure: None,
            objectives: Vec::new(),
            intervals: Vec::new(),
            requests_log: None,
        }
    }
}
