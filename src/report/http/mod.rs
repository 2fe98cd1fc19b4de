//! An HTTP run (HTTP/1.1 or HTTP/2) as a result: its saved type ([`saved`]), wrk2's text
//! ([`text`]), its page ([`page`]), its merge ([`merge`]), its measures for objectives and its
//! step of a capacity search ([`measures`]), its intervals over time ([`intervals`]), and its
//! own outputs (`.hgrm` in [`hgrm`], the interval log in [`hlog`]); here, [`SavedRun`] through
//! [`SavedResult`]: its rows, its histograms, its lines in `tsumo merge` and its verdict.

pub mod hgrm;
pub mod hlog;
pub mod intervals;
pub mod live;
mod measures;
mod merge;
mod page;
mod percentiles;
pub mod protocols;
pub mod saved;
pub mod stages;
pub mod text;

use std::any::Any;

use crate::error::{Error, ExitStatus};
use crate::report::result::{
    cut_by, duration_flag, row, Named, PageContent, Row, SavedResult, Unit,
};
use crate::report::timeline;
use crate::slo::{self, Verdict};
use crate::stats::end::EndReason;
use crate::stats::format::format_time_us;
use saved::Percentiles;
use saved::SavedRun;

/// `"mode"` of an HTTP run's document (and of files that have none: the first tsumos').
pub const MODE: &str = "http";

/// The histograms a plot can show, the default first (`server_latency` only in runs that split
/// the latency: files of older tsumos have no such histogram).
const PLOTTED: [&str; 4] = ["latency", "uncorrected", "send_lateness", "server_latency"];

impl SavedResult for SavedRun {
    fn title(&self) -> &'static str {
        "HTTP"
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn url(&self) -> &str {
        &self.plan.url
    }

    crate::report::result::part_and_server_fields!();

    fn elapsed_s(&self) -> f64 {
        self.elapsed_s
    }

    fn cut_by_signal(&self) -> Option<String> {
        cut_by(self.interrupted, self.ended_by.map(EndReason::name))
    }

    fn receive_stamps(&self) -> Option<&'static str> {
        Some(self.timestamps.as_str())
    }

    fn stopped_by_error(&self) -> Option<String> {
        let e = self.script_error.as_ref()?;
        Some(format!("stopped by a script error: {e}"))
    }

    fn text(&self) -> Result<String, Error> {
        text::render_merged(self)
    }

    /// A script error stopped the run, or no response came back at all.
    fn interval_ns(&self) -> Option<u64> {
        timeline::length_ns(&self.intervals)
    }

    fn objectives(&self) -> &[Verdict] {
        &self.objectives
    }

    fn stage_objectives(&self) -> Vec<(String, &[Verdict])> {
        self.stages
            .iter()
            .filter(|s| !s.objectives.is_empty())
            .map(|s| (s.title(), s.objectives.as_slice()))
            .collect()
    }

    fn verdict(&self) -> Option<String> {
        if let Some(e) = &self.script_error {
            return Some(format!("script error: {e}"));
        }
        let c = &self.counters;
        if self.ended_by == Some(EndReason::ServerGone) {
            return Some(stages::server_gone(&self.stages, self.stopped_in_stage, c));
        }
        if c.requests == 0 {
            return Some(format!(
                "no response was received ({} socket errors, {} requests never sent)",
                c.errors.socket_total(),
                c.unsent.total()
            ));
        }
        stages::no_response(&self.stages, c)
    }

    /// As every result exits, but objectives that held only without the requests tsumo itself
    /// left unsent fail the run (1): tsumo did not deliver the load, so it cannot vouch for the
    /// server, nor blame it (99).
    fn exit(&self) -> (ExitStatus, Option<String>) {
        if let Some(line) = self.verdict() {
            return (ExitStatus::Failed, Some(line));
        }
        // The whole run's breaches, then each stage's (`--stages`).
        let in_stages = stages::broken(&self.stages).join("; ");
        let broken = match (slo::broken_line(&self.objectives), in_stages.is_empty()) {
            (Some(line), true) => Some(line),
            (Some(line), false) => Some(format!("{line}; {in_stages}")),
            (None, false) => Some(format!("objectives broken: {in_stages}")),
            (None, true) => None,
        };
        if broken.is_some() {
            return (ExitStatus::ObjectiveBroken, broken);
        }
        match self.broken_by_own_unsent() {
            Some(why) => {
                let line =
                    format!("the run did not deliver its load: {why}; not the server's doing");
                (ExitStatus::Failed, Some(line))
            }
            None => (ExitStatus::Ran, None),
        }
    }

    fn plan_key(&self) -> Vec<(&'static str, String)> {
        let plan = &self.plan;
        let rate = plan
            .rate
            .map_or("none (closed loop)".into(), |r| format!("{r}/s"));
        let protocol = plan.protocol_short();
        vec![
            ("duration", format!("{}s", plan.duration_s)),
            ("rate", rate),
            ("protocol", protocol),
        ]
    }

    fn rows(&self) -> Vec<Row> {
        let s = self;
        let c = &s.counters;
        let e = &c.errors;
        // An empty histogram has no percentiles (its summary says 0).
        let has = |p: &Percentiles| p.count > 0;
        let time = |name: &str, us: u64, present: bool| {
            row(name, present.then_some(us as f64), Unit::Time)
        };
        let count = |name: &str, n: u64| row(name, Some(n as f64), Unit::Count);
        let (l, u, sl) = (has(&s.latency), has(&s.uncorrected), has(&s.send_lateness));
        // What the server caused and what tsumo added, beside the corrected latency they split:
        // absent in files of older tsumos, so a comparison of old runs has no such rows and an
        // old run beside a new one shows `-` (never a 0 it did not measure).
        let server = s.server_latency.filter(has);
        let own = s.own_delay.map(|o| o.total).filter(has);
        let split = |name: &str, p: Option<Percentiles>, us: fn(&Percentiles) -> u64| {
            row(name, p.map(|p| us(&p) as f64), Unit::Time)
        };
        let h2 = c.http2.as_ref();
        let h3 = c.http3.as_ref();
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
            split("Server's latency p50", server, |p| p.p50),
            split("Server's latency p99", server, |p| p.p99),
            split("tsumo's own delay p99", own, |p| p.p99),
            time("Uncorrected p50", s.uncorrected.p50, u),
            time("Uncorrected p99", s.uncorrected.p99, u),
            time("Send lateness p99", s.send_lateness.p99, sl),
            count("Errors connect", e.connect),
            count("Errors read", e.read),
            count("Errors write", e.write),
            count("Errors timeout", e.timeout),
            count("Errors 4xx/5xx", e.status),
            count("Connections opened", c.connections_opened),
            count("TLS full handshakes", c.tls_full_handshakes),
            count("TLS resumed handshakes", c.tls_resumed_handshakes),
            // HTTP/2 runs only (`-` for HTTP/1.1).
            row(
                "HTTP/2 streams per conn",
                s.plan.protocol.http2().map(|h| h.streams as f64),
                Unit::Count,
            ),
            // HTTP/3 runs only.
            row(
                "HTTP/3 streams per conn",
                s.plan.protocol.http3().map(|h| h.streams as f64),
                Unit::Count,
            ),
            row(
                "QUIC packets lost",
                h3.map(|h| h.packets_lost as f64),
                Unit::Count,
            ),
            row(
                "GOAWAY received",
                h2.map(|h| h.goaways() as f64)
                    .or(h3.map(|h| h.goaway as f64)),
                Unit::Count,
            ),
            row(
                "RST_STREAM received",
                h2.map(|h| h.resets() as f64),
                Unit::Count,
            ),
        ]
    }

    fn key_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("Requests/sec", "rate"),
            ("Latency p50", "p50"),
            ("Latency p99", "p99"),
            ("Server's latency p99", "the server's p99"),
            ("Server CPU% mean", "server CPU"),
        ]
    }

    /// The run's own: a file of an older tsumo is not offered a `server_latency` it lacks.
    fn plottable(&self) -> Vec<&str> {
        let split = self.histograms.split.is_some();
        PLOTTED
            .into_iter()
            .filter(|name| split || *name != "server_latency")
            .collect()
    }

    fn plotted(&self, name: Option<&str>) -> Option<Named<'_>> {
        let h = &self.histograms;
        let encoded = match name.unwrap_or(PLOTTED[0]) {
            "latency" => &h.latency,
            "uncorrected" => &h.uncorrected,
            "send_lateness" => &h.send_lateness,
            // A file without the split has no such histogram: `plot` says so, as for any name.
            "server_latency" => &h.split.as_ref()?.server_latency,
            _ => return None,
        };
        let title = match name {
            None | Some("latency") => {
                "Latency by percentile (corrected for coordinated omission)".to_string()
            }
            Some("server_latency") => {
                "Server's latency by percentile (the corrected latency less tsumo's own delay)"
                    .to_string()
            }
            Some(m) => format!("{} by percentile", m.replace('_', " ")),
        };
        Some(Named { encoded, title })
    }

    fn load(&self) -> String {
        let plan = &self.plan;
        let rate = plan
            .rate
            .map_or("closed loop".to_string(), |r| format!("-R{r}"));
        let streams = match plan.streams() {
            Some(_) => format!(" {}", plan.protocol_short()),
            None => String::new(),
        };
        format!(
            "{rate} -c{}{streams} {}",
            plan.connections,
            duration_flag(plan.duration_s)
        )
    }

    fn shard_line(&self) -> String {
        format!(
            "{}, send lateness p99 {}",
            page::totals(self),
            format_time_us(self.send_lateness.p99 as f64)
        )
    }

    fn merged_line(&self) -> String {
        format!(
            "{}, latency p50 {} p99 {}, send lateness p99 {}",
            page::totals(self),
            format_time_us(self.latency.p50 as f64),
            format_time_us(self.latency.p99 as f64),
            format_time_us(self.send_lateness.p99 as f64)
        )
    }

    fn merge(parts: &[(&SavedRun, &str)], label: &str) -> Result<SavedRun, Error> {
        merge::merge(parts, label)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn requests_log(&self) -> Option<&crate::stats::requests::RequestsLog> {
        self.requests_log.as_ref()
    }

    fn requests_log_mut(&mut self) -> Option<&mut Option<crate::stats::requests::RequestsLog>> {
        Some(&mut self.requests_log)
    }

    fn page(&self) -> PageContent {
        page::page(self)
    }
}
