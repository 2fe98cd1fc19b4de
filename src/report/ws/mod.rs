//! A WebSocket run as a result: its saved type ([`saved`](mod@saved)), its text ([`text`]),
//! what its objectives measure (`measures`), how runs side by side merge (`merge`: the shards
//! of one run);
//! here, [`SavedWsRun`] through [`SavedResult`]: its rows in `tsumo compare`, its histograms
//! for `tsumo plot`, its verdict. Their page is in `page`, their intervals in [`intervals`].

pub mod intervals;
pub mod live;
mod measures;
mod merge;
mod page;
pub mod saved;
pub mod text;

use std::any::Any;

use crate::error::Error;
use crate::report::result::{
    cut_by, duration_flag, row, Named, PageContent, Row, SavedResult, Unit,
};
use crate::slo::Verdict;
use crate::stats::end::EndReason;
use crate::stats::ws::RunResult;
use saved::SavedWsRun;

/// The `"mode"` of a saved WebSocket run.
pub const MODE: &str = "ws";

/// A finished run's saved form, with its verdict.
pub fn saved(r: &RunResult) -> SavedWsRun {
    let mut saved = SavedWsRun::from_result(r);
    saved.failure = text::failure(&saved);
    // Judged on the saved measures, as a saved run is judged again.
    saved.objectives = crate::slo::judge(&r.plan.options.objectives, &saved);
    saved
}

impl SavedResult for SavedWsRun {
    fn title(&self) -> &'static str {
        "WebSocket"
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

    fn interval_ns(&self) -> Option<u64> {
        crate::report::timeline::length_ns(&self.intervals)
    }

    fn requests_log(&self) -> Option<&crate::stats::requests::RequestsLog> {
        self.requests_log.as_ref()
    }

    fn requests_log_mut(&mut self) -> Option<&mut Option<crate::stats::requests::RequestsLog>> {
        Some(&mut self.requests_log)
    }

    fn cut_by_signal(&self) -> Option<String> {
        let signal = self.ended_by.filter(|e| e.is_signal());
        cut_by(signal.is_some(), signal.map(EndReason::name))
    }

    fn text(&self) -> Result<String, Error> {
        text::render(self, text::Shown::default())
    }

    fn verdict(&self) -> Option<String> {
        self.failure.clone()
    }

    fn objectives(&self) -> &[Verdict] {
        &self.objectives
    }

    fn plan_key(&self) -> Vec<(&'static str, String)> {
        let plan = &self.plan;
        vec![
            ("duration", format!("{}s", plan.duration_s)),
            ("connections", plan.connections.to_string()),
            (
                "rate",
                plan.rate.map_or("closed loop".into(), |r| r.to_string()),
            ),
            ("size", plan.size.to_string()),
        ]
    }

    fn rows(&self) -> Vec<Row> {
        rows(self)
    }

    fn key_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("Messages/sec", "messages/s"),
            ("Round trip p99", "round trip p99"),
            ("Unanswered", "unanswered"),
        ]
    }

    fn plottable(&self) -> Vec<&str> {
        vec!["round_trip", "round_trip_uncorrected", "connect"]
    }

    fn plotted(&self, name: Option<&str>) -> Option<Named<'_>> {
        let (h, title) = match name.unwrap_or("round_trip") {
            "round_trip" => (&self.round_trip, "WebSocket round trip by percentile"),
            "round_trip_uncorrected" => (
                &self.round_trip_uncorrected,
                "WebSocket round trip (uncorrected) by percentile",
            ),
            "connect" => (&self.connections.connect, "WebSocket connect by percentile"),
            _ => return None,
        };
        Some(Named {
            encoded: &h.histogram,
            title: title.to_string(),
        })
    }

    fn load(&self) -> String {
        let rate = self.plan.rate.map_or(String::new(), |r| format!(" -R{r}"));
        format!(
            "-c{}{rate} {}",
            self.plan.connections,
            duration_flag(self.plan.duration_s)
        )
    }

    fn shard_line(&self) -> String {
        totals(self)
    }

    fn merged_line(&self) -> String {
        totals(self)
    }

    fn merge(parts: &[(&SavedWsRun, &str)], label: &str) -> Result<SavedWsRun, Error> {
        merge::merge(parts, label)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn page(&self) -> PageContent {
        page::page(self)
    }
}

/// `N messages answered of M sent`: a run's line in `tsumo merge`'s lists.
fn totals(s: &SavedWsRun) -> String {
    format!(
        "{} messages answered of {} sent",
        s.messages.answered, s.messages.sent
    )
}

fn rows(s: &SavedWsRun) -> Vec<Row> {
    let elapsed = Some(s.elapsed_s).filter(|e| *e > 0.0);
    let m = &s.messages;
    let count = |name: &str, n: u64| row(name, Some(n as f64), Unit::Count);
    let time = |name: &str, us: Option<u64>| row(name, us.map(|us| us as f64), Unit::Time);
    let h = s.round_trip.sampled();
    vec![
        count("Connections", s.plan.connections as u64),
        row("Elapsed", elapsed, Unit::Seconds),
        row(
            "Messages/sec",
            elapsed.map(|e| m.answered as f64 / e),
            Unit::Metric,
        ),
        time("Round trip p50", h.map(|h| h.p50)),
        time("Round trip p99", h.map(|h| h.p99)),
        time("Round trip max", h.map(|h| h.max)),
        time(
            "Uncorrected p99",
            s.round_trip_uncorrected.sampled().map(|h| h.p99),
        ),
        time(
            "Connect p99",
            s.connections.connect.sampled().map(|h| h.p99),
        ),
        count("Sent", m.sent),
        count("Answered", m.answered),
        count("Unanswered", m.unanswered + m.timed_out),
        count("Pushed", m.pushed),
    ]
}
