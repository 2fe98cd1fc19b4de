//! A mahjong session as a result: its saved type ([`saved`](mod@saved)), its text ([`text`]),
//! its page ([`page`]), its merge ([`merge`]), its intervals over time ([`intervals`]), its
//! measures for objectives and its step of a search over players ([`measures`]); here,
//! [`SavedSession`] through [`SavedResult`]: its compare rows, histograms, lines in
//! `tsumo merge` and verdict, and the session's JSON.

pub mod intervals;
pub mod live;
mod measures;
mod merge;
mod page;
pub mod saved;
pub mod stages;
pub mod text;

use std::any::Any;

use serde_json::Value;

use crate::error::Error;
use crate::plan::JsonOut;
use crate::report::result::{
    cut_by, duration_flag, row, Named, PageContent, Row, SavedResult, Unit,
};
use crate::report::schema::write_value;
use crate::report::timeline;
use crate::slo::Verdict;
use crate::stats::end::EndReason;
use crate::stats::mahjong::RunResult;
use saved::{SavedHistogram, SavedSession};
use text::failure;

/// `"mode"` of a mahjong session's document.
pub const MODE: &str = "mahjong";

/// The session as saved, with the verdict of [`failure`].
pub fn saved(r: &RunResult) -> SavedSession {
    SavedSession {
        failure: failure(r),
        ..SavedSession::from_result(r)
    }
}

pub fn to_json(r: &RunResult) -> Value {
    // Only non-string map keys make to_value fail; SavedSession has none.
    serde_json::to_value(saved(r)).unwrap_or(Value::Null)
}

/// Writes the JSON document to a file or stdout.
pub fn write(r: &RunResult, out: &JsonOut) -> Result<(), Error> {
    write_value(&saved(r), out)
}

impl SavedResult for SavedSession {
    fn title(&self) -> &'static str {
        MODE
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

    fn requests_log(&self) -> Option<&crate::stats::requests::RequestsLog> {
        self.requests_log.as_ref()
    }

    fn requests_log_mut(&mut self) -> Option<&mut Option<crate::stats::requests::RequestsLog>> {
        Some(&mut self.requests_log)
    }

    fn cut_by_signal(&self) -> Option<String> {
        cut_by(self.interrupted, self.ended_by.map(EndReason::name))
    }

    fn text(&self) -> Result<String, Error> {
        Ok(text::render_merged(self))
    }

    /// The session's [`failure`], as saved.
    fn interval_ns(&self) -> Option<u64> {
        timeline::length_ns(&self.intervals)
    }

    fn objectives(&self) -> &[Verdict] {
        &self.objectives
    }

    fn verdict(&self) -> Option<String> {
        self.failure.clone()
    }

    fn plan_key(&self) -> Vec<(&'static str, String)> {
        let plan = &self.plan;
        vec![
            ("duration", format!("{}s", plan.duration_s)),
            ("players", plan.players.to_string()),
            ("games", plan.games.to_string()),
        ]
    }

    fn rows(&self) -> Vec<Row> {
        rows(self)
    }

    fn key_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("Messages in/sec", "messages in/s"),
            ("login p99", "login p99"),
            ("connect p99", "connect p99"),
            ("Draw overshoot p99", "draw overshoot p99"),
            ("Reply lateness p99", "reply lateness p99"),
            ("Server CPU% mean", "server CPU"),
        ]
    }

    fn plottable(&self) -> Vec<&str> {
        self.histogram_names()
    }

    /// `reply_lateness` by default: the one histogram every session fills.
    fn plotted(&self, name: Option<&str>) -> Option<Named<'_>> {
        let saved = self.histogram(name.unwrap_or("reply_lateness"))?;
        let title = format!(
            "Mahjong {} by percentile",
            name.unwrap_or("reply lateness (tsumo's own)")
                .replace('_', " ")
        );
        Some(Named {
            encoded: &saved.histogram,
            title,
        })
    }

    fn load(&self) -> String {
        format!(
            "{} players {}",
            self.plan.players,
            duration_flag(self.plan.duration_s)
        )
    }

    fn shard_line(&self) -> String {
        page::totals(self, "")
    }

    fn merged_line(&self) -> String {
        page::totals(self, " completed")
    }

    fn merge(parts: &[(&SavedSession, &str)], label: &str) -> Result<SavedSession, Error> {
        merge::merge(parts, label)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn page(&self) -> PageContent {
        page::page(self)
    }
}

/// The rows of a session in `tsumo compare`, in table order.
fn rows(s: &SavedSession) -> Vec<Row> {
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
    rows.push(count("Games cut at the end".to_string(), games.cut));
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
