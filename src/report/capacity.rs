//! A capacity search as a saved result (`tsumo capacity --json`, `tsumo mahjong --capacity
//! --json`): the answer (`capacity`), each step's role and outcome, and each step's saved
//! result (`steps`: an HTTP step's full run; a mahjong step's judged window of play, as a
//! session), through [`SavedResult`] — its text (the table of steps and the answer), its
//! compare rows (the capacities side by side) and its exit verdict. Searches do not merge.

use std::any::Any;

use serde::{Deserialize, Serialize};

use super::json::SavedRun;
use super::result::{row, Named, Row, SavedResult, Unit};
use super::schema::{SavedPart, SCHEMA_VERSION};
use super::session::SavedSession;
use crate::capacity::SavedCapacity;
use crate::error::Error;
use crate::slo::Verdict;
use crate::sys::procstat::ServerUsage;

/// `"mode"` of a capacity search's document.
pub const MODE: &str = "capacity";

/// A capacity search as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSearch {
    /// Always `"tsumo"`.
    pub tool: String,
    pub version: String,
    pub schema: u32,
    /// `"capacity"`.
    pub mode: String,
    /// The search's name in comparisons (`--label`; default: the URL).
    pub label: String,
    /// The target URL as typed.
    pub url: String,
    /// The answer.
    pub capacity: SavedCapacity,
    /// Each step's role (`grow`, `bisect`, `confirm`) and outcome (`held`, `broke`,
    /// `generator-limited`, `system-limited`, `stopped`), in the order of `steps`.
    pub roles: Vec<String>,
    pub outcomes: Vec<String>,
    /// Each step: an HTTP step's full run, as an ordinary run's `--json` writes it; a
    /// mahjong step's judged window of play, as a session's `--json` writes one.
    pub steps: SearchSteps,
    /// A mahjong step's players seated and playing at the end of its window, in the order of
    /// `steps` (none for HTTP, whose runs say what they achieved).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub achieved: Vec<u64>,
    /// The server's CPU and memory during the step that held at the answer (`--server-pid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerUsage>,
    #[serde(flatten)]
    pub part: SavedPart,
}

impl SavedSearch {
    pub fn new(
        label: &str,
        url: &str,
        capacity: SavedCapacity,
        roles_and_outcomes: Vec<(String, String)>,
        steps: Vec<SavedRun>,
    ) -> SavedSearch {
        Self::of_steps(
            label,
            url,
            capacity,
            roles_and_outcomes,
            SearchSteps::Runs(steps),
            Vec::new(),
        )
    }

    /// A search over players: each step's window as a session, and its players seated and
    /// playing.
    pub fn of_sessions(
        label: &str,
        url: &str,
        capacity: SavedCapacity,
        roles_and_outcomes: Vec<(String, String)>,
        steps: Vec<SavedSession>,
        achieved: Vec<u64>,
    ) -> SavedSearch {
        Self::of_steps(
            label,
            url,
            capacity,
            roles_and_outcomes,
            SearchSteps::Sessions(steps),
            achieved,
        )
    }

    fn of_steps(
        label: &str,
        url: &str,
        capacity: SavedCapacity,
        roles_and_outcomes: Vec<(String, String)>,
        steps: SearchSteps,
        achieved: Vec<u64>,
    ) -> SavedSearch {
        let server = capacity.value.and_then(|value| {
            steps
                .views(&achieved)
                .into_iter()
                .rev()
                .find(|s| s.target == Some(value))
                .and_then(|s| s.server.cloned())
        });
        let (roles, outcomes) = roles_and_outcomes.into_iter().unzip();
        SavedSearch {
            tool: "tsumo".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            schema: SCHEMA_VERSION,
            mode: MODE.to_string(),
            label: label.to_string(),
            url: url.to_string(),
            capacity,
            roles,
            outcomes,
            steps,
            achieved,
            server,
            part: SavedPart {
                merged_from: Vec::new(),
                run_id: None,
                shard: None,
                start: None,
            },
        }
    }
}

/// Each step's saved result: runs for HTTP, sessions (each a step's judged window) for
/// mahjong. Written as the plain list either way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SearchSteps {
    Runs(Vec<SavedRun>),
    Sessions(Vec<SavedSession>),
}

/// One step as the table and the trait read it, whichever kind it is.
struct StepView<'a> {
    target: Option<u64>,
    achieved: String,
    p50: u64,
    p99: u64,
    max: u64,
    errors: String,
    server: Option<&'a ServerUsage>,
    objectives: &'a [Verdict],
    elapsed_s: f64,
    result: &'a dyn SavedResult,
}

impl SearchSteps {
    pub fn len(&self) -> usize {
        match self {
            SearchSteps::Runs(runs) => runs.len(),
            SearchSteps::Sessions(sessions) => sessions.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn views<'a>(&'a self, achieved: &[u64]) -> Vec<StepView<'a>> {
        match self {
            SearchSteps::Runs(runs) => runs
                .iter()
                .map(|run| StepView {
                    target: run.plan.rate,
                    achieved: format!("{:.1}", run.requests_per_sec),
                    p50: run.latency.p50,
                    p99: run.latency.p99,
                    max: run.latency.max,
                    errors: errors(run),
                    server: run.server.as_ref(),
                    objectives: &run.objectives,
                    elapsed_s: run.elapsed_s,
                    result: run,
                })
                .collect(),
            SearchSteps::Sessions(sessions) => sessions
                .iter()
                .enumerate()
                .map(|(i, session)| {
                    let draw = &session.draw_overshoot;
                    StepView {
                        target: Some(session.plan.players),
                        achieved: achieved
                            .get(i)
                            .map_or_else(|| "-".to_string(), |&n| crate::capacity::grouped(n)),
                        p50: draw.p50,
                        p99: draw.p99,
                        max: draw.max,
                        errors: session_errors(session),
                        server: session.server.as_ref(),
                        objectives: &session.objectives,
                        elapsed_s: session.elapsed_s,
                        result: session,
                    }
                })
                .collect(),
        }
    }
}

/// The table of steps, the answer line and what broke first.
pub fn render(search: &SavedSearch) -> String {
    let views = search.steps.views(&search.achieved);
    let with_server = views.iter().any(|r| r.server.is_some());
    let mut header = match search.steps {
        SearchSteps::Runs(_) => vec![
            "step", "role", "target", "achieved", "p50", "p99", "max", "errors",
        ],
        SearchSteps::Sessions(_) => vec![
            "step", "role", "players", "playing", "draw p50", "draw p99", "draw max", "errors",
        ],
    };
    if with_server {
        header.extend(["server cpu", "server mem"]);
    }
    header.push("verdict");
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for (i, run) in views.iter().enumerate() {
        let role = search.roles.get(i).map_or("", String::as_str);
        let outcome = search.outcomes.get(i).map_or("", String::as_str);
        let mut cells = vec![
            (i + 1).to_string(),
            role.to_string(),
            run.target
                .map_or_else(|| "-".to_string(), crate::capacity::grouped),
            run.achieved.clone(),
            micros(run.p50),
            micros(run.p99),
            micros(run.max),
            run.errors.clone(),
        ];
        if with_server {
            match run.server {
                Some(s) => cells.extend([
                    format!("{:.0}%", s.cpu_percent_mean),
                    format!("{:.1}MB", s.rss_bytes_peak as f64 / 1e6),
                ]),
                None => cells.extend(["-".to_string(), "-".to_string()]),
            }
        }
        let broken: Vec<String> = run
            .objectives
            .iter()
            .filter(|v| !v.held)
            .map(|v| format!("{} ({})", v.expr, v.measured_text()))
            .collect();
        cells.push(match outcome {
            "broke" => format!("broke: {}", broken.join(", ")),
            other => other.to_string(),
        });
        rows.push(cells);
    }
    let columns = rows[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!("Capacity search ({})\n", search.capacity.unit);
    for cells in &rows {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if c + 1 == columns {
                    cell.clone()
                } else {
                    format!("{cell:>width$}", width = widths[c])
                }
            })
            .collect();
        out.push_str("  ");
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str(&search.capacity.answer);
    out.push('\n');
    if let Some(first) = &search.capacity.broke_first {
        out.push_str(first);
        out.push('\n');
    }
    out
}

/// A latency in µs, in three figures.
fn micros(us: u64) -> String {
    match us {
        0..=999 => format!("{us}us"),
        1_000..=999_999 => format!("{:.2}ms", us as f64 / 1e3),
        _ => format!("{:.2}s", us as f64 / 1e6),
    }
}

/// `0`, or each kind that happened: `status 12, timeout 3, unsent 40`.
fn errors(run: &SavedRun) -> String {
    let e = &run.counters.errors;
    let kinds = [
        ("connect", e.connect),
        ("read", e.read),
        ("write", e.write),
        ("timeout", e.timeout),
        ("status", e.status),
        ("protocol", e.protocol),
        ("unsent", run.counters.unsent.total()),
    ];
    let said: Vec<String> = kinds
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect();
    if said.is_empty() {
        "0".to_string()
    } else {
        said.join(", ")
    }
}

/// `0`, or `errors 3, disconnects 1`.
fn session_errors(session: &SavedSession) -> String {
    let kinds = [
        ("errors", session.errors),
        ("disconnects", session.disconnects),
    ];
    let said: Vec<String> = kinds
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect();
    if said.is_empty() {
        "0".to_string()
    } else {
        said.join(", ")
    }
}

impl SavedResult for SavedSearch {
    fn mode(&self) -> &'static str {
        "capacity"
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn url(&self) -> &str {
        &self.url
    }

    fn part(&self) -> &SavedPart {
        &self.part
    }

    fn part_mut(&mut self) -> &mut SavedPart {
        &mut self.part
    }

    fn server(&self) -> Option<&ServerUsage> {
        self.server.as_ref()
    }

    fn server_mut(&mut self) -> &mut Option<ServerUsage> {
        &mut self.server
    }

    fn elapsed_s(&self) -> f64 {
        self.steps
            .views(&self.achieved)
            .iter()
            .map(|s| s.elapsed_s)
            .sum()
    }

    fn cut_by_signal(&self) -> Option<String> {
        (self.capacity.limited_by == "stopped").then(|| self.capacity.reason.clone())
    }

    fn stopped_by_error(&self) -> Option<String> {
        let views = self.steps.views(&self.achieved);
        views.iter().find_map(|s| s.result.stopped_by_error())
    }

    fn text(&self) -> Result<String, Error> {
        Ok(render(self))
    }

    /// A step's run failed (a script error, no response at all); else the search answered.
    fn verdict(&self) -> Option<String> {
        let views = self.steps.views(&self.achieved);
        views.iter().find_map(|s| s.result.verdict())
    }

    /// The search is its answer, not a judgement: its steps hold the objectives' verdicts.
    fn objectives(&self) -> &[Verdict] {
        &[]
    }

    fn plan_key(&self) -> Vec<(&'static str, String)> {
        let views = self.steps.views(&self.achieved);
        let objectives: Vec<&str> = views
            .first()
            .map(|s| s.objectives.iter().map(|v| v.expr.as_str()).collect())
            .unwrap_or_default();
        vec![
            ("unit", self.capacity.unit.clone()),
            ("objectives", objectives.join(" ")),
        ]
    }

    fn rows(&self) -> Vec<Row> {
        let c = &self.capacity;
        let lowest_broken = c.broke.iter().min().map(|&l| l as f64);
        vec![
            row("Capacity", c.value.map(|v| v as f64), Unit::Metric),
            row("Lowest broken", lowest_broken, Unit::Metric),
            row("Steps", Some(self.steps.len() as f64), Unit::Count),
            row("Elapsed", Some(self.elapsed_s() * 1e6), Unit::Time),
        ]
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

    fn merge(parts: &[(&SavedSearch, &str)], _label: &str) -> Result<SavedSearch, Error> {
        Err(Error::File {
            path: parts
                .first()
                .map_or_else(String::new, |(_, s)| s.to_string()),
            reason: "a capacity search does not merge (each machine's search ran on its own)"
                .to_string(),
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
