//! A capacity search as a result, over steps of any kind that is a [`SearchStep`]: its saved
//! type ([`saved`]), its text, the table of steps and the answer ([`text`]), its page, the
//! answer and the curves ([`page`]), and its merge ([`merge`]): a search does not merge, the
//! shards of a fixed staircase do, each step's results merged exactly, judged again, and the
//! capacity read from the merged steps. Here, [`SavedSearch`] through [`SavedResult`]: its
//! compare rows (the capacities side by side) and its exit verdict. Nothing here names a kind
//! of step: what differs by kind is asked through [`SearchStep`].

mod merge;
mod page;
pub mod saved;
pub mod text;

use std::any::Any;

use crate::error::Error;
use crate::report::result::{row, Named, PageContent, Row, SavedResult, SearchStep, Unit};
use crate::slo::Verdict;
pub use saved::SavedSearch;
use text::{left_line, rates};

/// `"mode"` of a capacity search's document.
pub const MODE: &str = "capacity";

impl<S: SearchStep> SavedResult for SavedSearch<S> {
    fn title(&self) -> &'static str {
        MODE
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn url(&self) -> &str {
        &self.url
    }

    crate::report::result::part_and_server_fields!();

    fn elapsed_s(&self) -> f64 {
        self.steps.iter().map(|s| s.elapsed_s()).sum()
    }

    fn cut_by_signal(&self) -> Option<String> {
        // The signal alone (`SIGINT`), not the reason's `at 2000: SIGINT`: read as "cut short
        // by SIGINT after 4.44s". Older files have only the reason.
        (self.capacity.limited_by == "stopped")
            .then(|| {
                self.capacity.signal.clone().unwrap_or_else(|| {
                    let reason = &self.capacity.reason;
                    reason
                        .split_once(": ")
                        .map_or(reason.clone(), |(_, s)| s.to_string())
                })
            })
            .filter(|signal| signal.starts_with("SIG"))
    }

    fn stopped_by_error(&self) -> Option<String> {
        self.steps.iter().find_map(|s| s.stopped_by_error())
    }

    fn text(&self) -> Result<String, Error> {
        Ok(text::render(self))
    }

    /// The search failed (the server stopped answering), sessions were left on the server, or
    /// a step's run failed (a script error, no response at all); else the search answered.
    fn verdict(&self) -> Option<String> {
        let mut said: Vec<String> = self
            .failure
            .iter()
            .cloned()
            .chain(left_line(self))
            .collect();
        said.extend(self.steps.iter().find_map(|s| s.verdict()));
        (!said.is_empty()).then(|| said.join("; "))
    }

    /// The search is its answer, not a judgement: its steps hold the objectives' verdicts.
    fn objectives(&self) -> &[Verdict] {
        &[]
    }

    fn plan_key(&self) -> Vec<(&'static str, String)> {
        let views = self.views();
        let objectives: Vec<&str> = views
            .first()
            .map(|s| s.objectives.iter().map(|v| v.expr.as_str()).collect())
            .unwrap_or_default();
        let staircase = if self.staircase.is_empty() {
            "none (a search)".to_string()
        } else {
            rates(&self.staircase)
        };
        vec![
            ("unit", self.capacity.unit.clone()),
            ("objectives", objectives.join(" ")),
            ("staircase", staircase),
        ]
    }

    fn rows(&self) -> Vec<Row> {
        let c = &self.capacity;
        let lowest_broken = c.broke.iter().min().map(|&l| l as f64);
        let floor = c.limited_by != "server";
        let mut rows = vec![
            row(
                "Capacity",
                c.value
                    .filter(|_| c.limited_by == "server")
                    .map(|v| v as f64),
                Unit::Metric,
            ),
            row("Lowest broken", lowest_broken, Unit::Metric),
            // A floor's range is the floor: no ratio against it.
            row("Range low", c.range.map(|r| r[0] as f64), Unit::Metric).floor_if(floor),
            row("Range high", c.range.map(|r| r[1] as f64), Unit::Metric).floor_if(floor),
            row("Steps", Some(self.steps.len() as f64), Unit::Count),
            row("Elapsed", Some(self.elapsed_s() * 1e6), Unit::Time),
            row(
                "Whole duration",
                self.whole_s().map(|s| s * 1e6),
                Unit::Time,
            ),
        ];
        // A floor ("at least": tsumo, the machine, --to or a signal ended the search) is a row
        // of its own, never read across from a capacity that the server set.
        if floor {
            rows.insert(
                1,
                row(
                    "Capacity, at least",
                    c.value.map(|v| v as f64),
                    Unit::Metric,
                )
                .floor_if(true),
            );
        }
        rows
    }

    fn key_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[("Capacity", "capacity")]
    }

    fn plottable(&self) -> Vec<&str> {
        Vec::new()
    }

    fn plotted(&self, _name: Option<&str>) -> Option<Named<'_>> {
        None
    }

    fn load(&self) -> String {
        format!("capacity search, {} steps", self.steps.len())
    }

    fn shard_line(&self) -> String {
        self.capacity.answer.clone()
    }

    fn merged_line(&self) -> String {
        self.capacity.answer.clone()
    }

    fn merge(parts: &[(&Self, &str)], label: &str) -> Result<Self, Error> {
        merge::merge_staircases(parts, label)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn page(&self) -> PageContent {
        page::page(self)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::http::saved::SavedRun;
    use crate::slo::Unit as SloUnit;
    use crate::stats::start::StartRecord;

    /// When the search's first run (step 1's warm-up) began, ns since the epoch.
    pub(crate) const FIRST_START_NS: u64 = 1_700_000_000_000_000_000;

    /// A search over HTTP steps made of `tests/fixtures`' direct run: each trial `(rate, p99
    /// in µs, outcome)` in the order run, judged `p99<50ms`, 1 s each, a step every 3 s (1 s
    /// of warm-up and 1 s of pause between); the answer `value`, limited by `limited_by`.
    pub(crate) fn search(
        trials: &[(u64, u64, &str)],
        value: Option<u64>,
        limited_by: &str,
    ) -> SavedSearch<SavedRun> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/http-direct-v1.json");
        let text = std::fs::read_to_string(path).unwrap();
        let fixture: SavedRun = serde_json::from_str(&text).unwrap();
        let steps: Vec<SavedRun> = trials
            .iter()
            .enumerate()
            .map(|(i, &(rate, p99, outcome))| {
                let mut run = fixture.clone();
                run.plan.rate = Some(rate);
                run.latency.p99 = p99;
                run.elapsed_s = 1.0;
                let start = FIRST_START_NS + 1_000_000_000 + i as u64 * 3_000_000_000;
                run.part.start = Some(StartRecord::new(None, start));
                run.objectives = vec![Verdict {
                    expr: "p99<50ms".to_string(),
                    measured: Some(p99 as f64),
                    unit: SloUnit::Micros,
                    held: outcome != "broke",
                    judged_on: None,
                }];
                run
            })
            .collect();
        let mut capacity =
            crate::capacity::judge_staircase(crate::capacity::LoadUnit::RequestsPerSec, Vec::new())
                .saved();
        capacity.value = value;
        capacity.limited_by = limited_by.to_string();
        capacity.broke = trials
            .iter()
            .filter(|t| t.2 == "broke")
            .map(|t| t.0)
            .collect();
        capacity.broke_first = Some("Broke first: p99<50ms at 600 (p99 90.0ms)".to_string());
        let roles = trials
            .iter()
            .map(|t| {
                let class = serde_json::from_value(serde_json::json!(t.2)).unwrap();
                (crate::capacity::Role::Grow, class)
            })
            .collect();
        let mut search = SavedSearch::new("s", "http://x/", capacity, roles, steps, Vec::new());
        search.part.start = Some(StartRecord::new(None, FIRST_START_NS));
        search
    }

    /// The whole duration runs from the first warm-up to the last step's end; the judged time
    /// is the steps' own.
    #[test]
    fn a_search_lasts_from_its_first_warm_up_to_its_last_steps_end() {
        let s = search(
            &[
                (200, 2_000, "held"),
                (800, 6_000_000, "broke"),
                (400, 3_000, "held"),
            ],
            Some(400),
            "server",
        );
        // Step 3 starts 1 + 2 × 3 s after the first warm-up, and lasts 1 s.
        assert_eq!(s.whole_s(), Some(8.0));
        assert_eq!(s.elapsed_s(), 3.0);
        let rows = s.rows();
        let whole = rows.iter().find(|r| r.name == "Whole duration").unwrap();
        assert_eq!(whole.value, Some(8.0e6));
        // Steps that do not say when they started: unknown, not a guess.
        let mut old = s.clone();
        old.part.start = None;
        for step in &mut old.steps {
            step.part.start = None;
        }
        assert_eq!(old.whole_s(), None);
    }
}
