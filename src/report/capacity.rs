//! A capacity search as a saved result (`tsumo capacity --json`, `tsumo mahjong --capacity
//! --json`): the answer (`capacity`), each step's role and outcome, and each step's saved
//! result (`steps`: an HTTP step's full run; a mahjong step's judged window of play, as a
//! session), through [`SavedResult`] — its text (the table of steps and the answer), its
//! compare rows (the capacities side by side) and its exit verdict. A search does not merge;
//! the shards of a fixed staircase (HTTP) do: each step's runs merged exactly, judged again,
//! and the capacity read from the merged steps.

use std::any::Any;

use serde::{Deserialize, Serialize};

use super::chart::{Answer, Objective, Series};
use super::json::SavedRun;
use super::objectives;
use super::result::{figure, row, Named, PageChart, PageContent, Row, SavedResult, Unit};
use super::schema::{SavedPart, SCHEMA_VERSION};
use super::session::SavedSession;
use crate::capacity::{self, Limit, LoadUnit, Role, SavedCapacity, Step, StepOutcome};
use crate::error::Error;
use crate::slo::{self, Verdict};
use crate::stats::format::format_time_us;
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
    /// Each step's role (`grow`, `bisect`, `confirm`, `staircase`) and outcome (`held`, `broke`,
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
    /// A fixed staircase's target rates, the whole run's (absent for a search): what the
    /// shards of one staircase share, and what `tsumo merge` checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub staircase: Vec<u64>,
    /// The line the search failed with (exit 1): the server stopped answering, a session's
    /// thread failed; absent when it did not fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// A search over players: the players whose logout tsumo did not see answered (their
    /// sessions may stay on the server), all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_on_server: Vec<String>,
    /// The machine during each step, in the order of `steps` (tsumo's lateness max interval by
    /// interval, others' CPU, steal): why a step was judged disturbed and run again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub noise: Vec<crate::capacity::Noise>,
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
            staircase: Vec::new(),
            failure: None,
            left_on_server: Vec::new(),
            noise: Vec::new(),
            part: SavedPart {
                merged_from: Vec::new(),
                run_id: None,
                shard: None,
                start: None,
                command: Vec::new(),
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
    /// An HTTP step's connections (a search opens what each step needs).
    connections: Option<usize>,
    achieved: String,
    achieved_value: Option<f64>,
    p50: u64,
    p99: u64,
    max: u64,
    errors: String,
    server: Option<&'a ServerUsage>,
    objectives: &'a [Verdict],
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

    /// An HTTP search's runs (a search over players has sessions).
    pub fn runs(&self) -> Option<&[SavedRun]> {
        match self {
            SearchSteps::Runs(runs) => Some(runs),
            SearchSteps::Sessions(_) => None,
        }
    }

    /// Each step as a result, whichever kind it is.
    fn results(&self) -> Vec<&dyn SavedResult> {
        match self {
            SearchSteps::Runs(runs) => runs.iter().map(|r| r as &dyn SavedResult).collect(),
            SearchSteps::Sessions(sessions) => {
                sessions.iter().map(|s| s as &dyn SavedResult).collect()
            }
        }
    }

    /// Each step's objectives as judged: the expressions of the first step's.
    fn objectives(&self) -> Vec<String> {
        self.results()
            .first()
            .map(|first| first.objectives().iter().map(|v| v.expr.clone()).collect())
            .unwrap_or_default()
    }

    fn views<'a>(&'a self, achieved: &[u64]) -> Vec<StepView<'a>> {
        match self {
            SearchSteps::Runs(runs) => runs
                .iter()
                .map(|run| StepView {
                    target: run.plan.rate,
                    connections: Some(run.plan.connections),
                    achieved: format!("{:.1}", run.requests_per_sec),
                    achieved_value: Some(run.requests_per_sec),
                    p50: run.latency.p50,
                    p99: run.latency.p99,
                    max: run.latency.max,
                    errors: errors(run),
                    server: run.server.as_ref(),
                    objectives: &run.objectives,
                })
                .collect(),
            SearchSteps::Sessions(sessions) => sessions
                .iter()
                .enumerate()
                .map(|(i, session)| {
                    let draw = &session.draw_overshoot;
                    StepView {
                        target: Some(session.plan.players),
                        connections: None,
                        achieved: achieved
                            .get(i)
                            .map_or_else(|| "-".to_string(), |&n| crate::capacity::grouped(n)),
                        achieved_value: achieved.get(i).map(|&n| n as f64),
                        p50: draw.p50,
                        p99: draw.p99,
                        max: draw.max,
                        errors: session_errors(session),
                        server: session.server.as_ref(),
                        objectives: &session.objectives,
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
            "step", "role", "target", "conns", "achieved", "p50", "p99", "max", "errors",
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
        // A load's second or third trial: `bisect #2`.
        let role = match search.capacity.trials.get(i) {
            Some(&trial) if trial > 1 => format!("{role} #{trial}"),
            _ => role.to_string(),
        };
        let mut cells = vec![
            (i + 1).to_string(),
            role,
            run.target
                .map_or_else(|| "-".to_string(), crate::capacity::grouped),
        ];
        if let Some(connections) = run.connections {
            cells.push(crate::capacity::grouped(connections as u64));
        }
        cells.extend([
            run.achieved.clone(),
            micros(run.p50),
            micros(run.p99),
            micros(run.max),
            run.errors.clone(),
        ]);
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
            // The step where the server stopped answering, with what it had broken by then.
            "server-failed" if !broken.is_empty() => {
                format!("server-failed: {}", broken.join(", "))
            }
            "disturbed" => match search.noise.get(i) {
                Some(noise) => format!("disturbed: {}", noise.describe()),
                None => "disturbed".to_string(),
            },
            other => other.to_string(),
        });
        rows.push(cells);
    }
    let columns = rows[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let what = if search.staircase.is_empty() {
        "search"
    } else {
        "staircase"
    };
    let mut out = format!("Capacity {what} ({})\n", search.capacity.unit);
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
    let failed = search.failure.iter().cloned().chain(left_line(search));
    for line in failed {
        out.push_str(&format!("Failed: {line}\n"));
    }
    out
}

/// `16 sessions left on the server: tsumo8, tsumo9, … and 6 more (all in the JSON's
/// left_on_server)`.
fn left_line(search: &SavedSearch) -> Option<String> {
    let left = &search.left_on_server;
    if left.is_empty() {
        return None;
    }
    let shown: Vec<&str> = left.iter().take(10).map(String::as_str).collect();
    let more = match left.len() - shown.len() {
        0 => String::new(),
        n => format!(" and {n} more (all in the JSON's left_on_server)"),
    };
    Some(format!(
        "{} session{} left on the server: {}{more}",
        left.len(),
        if left.len() == 1 { "" } else { "s" },
        shown.join(", ")
    ))
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
    counts_said(&kinds)
}

/// `0`, or each kind counted more than once: `read 2, status 5`.
fn counts_said(kinds: &[(&str, u64)]) -> String {
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
    counts_said(&kinds)
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

    super::result::part_and_server_fields!();

    fn elapsed_s(&self) -> f64 {
        self.steps.results().iter().map(|s| s.elapsed_s()).sum()
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
        self.steps
            .results()
            .iter()
            .find_map(|s| s.stopped_by_error())
    }

    fn text(&self) -> Result<String, Error> {
        Ok(render(self))
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
        said.extend(self.steps.results().iter().find_map(|s| s.verdict()));
        (!said.is_empty()).then(|| said.join("; "))
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
        let mut rows = vec![
            row(
                "Capacity",
                c.value
                    .filter(|_| c.limited_by == "server")
                    .map(|v| v as f64),
                Unit::Metric,
            ),
            row("Lowest broken", lowest_broken, Unit::Metric),
            row("Range low", c.range.map(|r| r[0] as f64), Unit::Metric),
            row("Range high", c.range.map(|r| r[1] as f64), Unit::Metric),
            row("Steps", Some(self.steps.len() as f64), Unit::Count),
            row("Elapsed", Some(self.elapsed_s() * 1e6), Unit::Time),
        ];
        // A floor ("at least": tsumo, the machine, --to or a signal ended the search) is a row
        // of its own, never read across from a capacity that the server set.
        if c.limited_by != "server" {
            rows.insert(
                1,
                row(
                    "Capacity, at least",
                    c.value.map(|v| v as f64),
                    Unit::Metric,
                ),
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

    fn merge(parts: &[(&SavedSearch, &str)], label: &str) -> Result<SavedSearch, Error> {
        merge_staircases(parts, label)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn page(&self) -> PageContent {
        page(self)
    }
}

/// The step that held at the answer (the last one run at it).
fn answer_step<'a>(search: &SavedSearch, views: &'a [StepView<'a>]) -> Option<&'a StepView<'a>> {
    let value = search.capacity.value?;
    views
        .iter()
        .zip(&search.outcomes)
        .rev()
        .find(|(view, outcome)| view.target == Some(value) && outcome.as_str() == "held")
        .map(|(view, _)| view)
}

/// What set an answer other than the server, in words: `Limited by --to: every step held up
/// to 10,000 requests/sec`, `Stopped at 2000: SIGINT`.
fn limited_line(c: &crate::capacity::SavedCapacity) -> String {
    let value = c.value.map_or("-".to_string(), crate::capacity::grouped);
    match c.limited_by.as_str() {
        "to" => format!("Limited by --to: every step held up to {value} {}", c.unit),
        "generator" => format!("Limited by the generator {}", c.reason),
        "system" => format!("Limited by the machine {}", c.reason),
        "stopped" => format!("Stopped {}", c.reason),
        "noise" => format!("Cannot tell {}", c.reason),
        other => format!("Limited by {other}: {}", c.reason),
    }
}

/// A search's page: the capacity, what broke, the answer step's figures; the curve.
fn page(search: &SavedSearch) -> PageContent {
    let c = &search.capacity;
    let views = search.steps.views(&search.achieved);
    let step = answer_step(search, &views);
    let unit = &c.unit;
    let (achieved_unit, measure) = match search.steps {
        SearchSteps::Runs(_) => ("req/s", ""),
        SearchSteps::Sessions(_) => ("playing", "draw overshoot "),
    };
    let mut figures = vec![
        figure(
            "capacity",
            "Capacity",
            c.value.map_or("none held".to_string(), |v| {
                // Only the server's limit is the capacity itself; any other is a floor.
                let floor = if c.limited_by == "server" {
                    ""
                } else {
                    "at least "
                };
                format!("{floor}{} {unit}", crate::capacity::grouped(v))
            }),
            c.value.map(|v| v as f64),
        ),
        figure(
            "broke",
            "Lowest broken",
            c.broke.iter().min().map_or("none".to_string(), |v| {
                format!("{} {unit}", crate::capacity::grouped(*v))
            }),
            c.broke.iter().min().map(|v| *v as f64),
        ),
    ];
    if let Some(view) = step {
        let time = |id, name: &str, us: u64| {
            figure(
                id,
                &format!("{measure}{name} there"),
                format_time_us(us as f64),
                Some(us as f64),
            )
        };
        figures.extend([
            figure(
                "achieved",
                "Achieved there",
                format!("{} {achieved_unit}", view.achieved),
                view.achieved_value,
            ),
            time("p50", "p50", view.p50),
            time("p99", "p99", view.p99),
            time("max", "max", view.max),
            figure("errors", "Errors there", view.errors.clone(), None),
        ]);
    }
    let mut lines = vec![c.answer.clone()];
    if let Some(first) = &c.broke_first {
        lines.push(first.clone());
    }
    // The server's limit is the answer line's own words; tsumo's or the machine's is said.
    if !c.reason.is_empty() && c.limited_by != "server" {
        lines.push(limited_line(c));
    }
    if let Some(verdict) = search.verdict() {
        lines.push(format!("Failed: {verdict}"));
    }
    let objectives = search.steps.objectives();
    let slos = objectives
        .iter()
        .map(|o| format!("--slo '{o}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let command = match &search.steps {
        SearchSteps::Runs(runs) => runs.first().map(|first| {
            format!(
                "tsumo capacity {slos} -c{} {}",
                first.plan.connections, search.url
            )
        }),
        SearchSteps::Sessions(sessions) => sessions
            .first()
            .map(|_| format!("tsumo mahjong --capacity {slos} {}", search.url)),
    };
    let mut facts: Vec<(String, String)> = command
        .map(|command| ("Command".to_string(), command))
        .into_iter()
        .collect();
    facts.extend([
        ("Target".to_string(), search.url.clone()),
        (
            "Plan".to_string(),
            format!(
                "{} steps ({}), objectives {}",
                search.steps.len(),
                search.roles.join(", "),
                objectives.join(", ")
            ),
        ),
        (
            "Ran".to_string(),
            format!("{:.2}s of steps", search.elapsed_s()),
        ),
        ("Version".to_string(), format!("tsumo {}", search.version)),
    ]);
    PageContent {
        kind: "Capacity search".to_string(),
        figures,
        lines,
        facts,
        charts: curves(search),
    }
}

/// One curve per objective (its measure against offered load, its limit across), or p99
/// against load when the search had none; the answer marked on each.
fn curves(search: &SavedSearch) -> Vec<PageChart> {
    let c = &search.capacity;
    let answer = c.value.map(|v| Answer {
        name: format!("capacity: {} {}", crate::capacity::grouped(v), c.unit),
        x: v as f64,
    });
    let x_label = format!("Offered load ({})", c.unit);
    let views = search.steps.views(&search.achieved);
    let load = |view: &StepView| view.target.map(|r| r as f64);
    let exprs = search.steps.objectives();
    let mut charts = Vec::new();
    let ids = [
        "capacity-curve",
        "capacity-curve-2",
        "capacity-curve-3",
        "capacity-curve-4",
    ];
    for (expr, id) in exprs.iter().zip(ids) {
        let verdicts = views.iter().filter_map(|view| {
            let v = view.objectives.iter().find(|v| &v.expr == expr)?;
            Some((load(view)?, v))
        });
        let Some(unit) = verdicts.clone().next().map(|(_, v)| v.unit) else {
            continue;
        };
        let scale = |value: f64| match unit {
            slo::Unit::Micros => value / 1000.0,
            _ => value,
        };
        let unit_name = match unit {
            slo::Unit::Micros => "ms",
            slo::Unit::Percent => "%",
            slo::Unit::Count => "count",
        };
        let mut points: Vec<(f64, f64)> = verdicts
            .filter_map(|(x, v)| Some((x, scale(v.measured?))))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let name = slo::name_of(expr).to_string();
        let objectives = slo::parse_http(expr)
            .or_else(|_| slo::parse_mahjong(expr, &[]))
            .ok()
            .map(|o| Objective {
                name: format!("objective: {expr}"),
                y: scale(o.limit),
            })
            .into_iter()
            .collect();
        charts.push(PageChart::Capacity {
            id,
            title: format!("{name} against offered load"),
            axes: (x_label.clone(), format!("{name} ({unit_name})")),
            measured: Series::new(name, points),
            objectives,
            answer: answer.clone(),
        });
    }
    if charts.is_empty() {
        let mut points: Vec<(f64, f64)> = views
            .iter()
            .filter_map(|view| Some((load(view)?, view.p99 as f64 / 1000.0)))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        charts.push(PageChart::Capacity {
            id: ids[0],
            title: "p99 against offered load".to_string(),
            axes: (x_label, "p99 (ms)".to_string()),
            measured: Series::new("p99", points),
            objectives: Vec::new(),
            answer,
        });
    }
    charts
}

/// The shards of one staircase as one: every step's runs merged exactly (the merge of saved
/// runs, which judges the objectives again on the sums), each merged step's outcome, and the
/// capacity read from the merged steps. A search is refused, and so are staircases of other
/// rates; a step that not every shard ran ends the merged staircase there, as stopped.
fn merge_staircases(parts: &[(&SavedSearch, &str)], label: &str) -> Result<SavedSearch, Error> {
    let refuse = |reason: String| Err(Error::Usage(format!("merge: {reason}")));
    let Some(&(first, first_source)) = parts.first() else {
        return refuse("nothing to merge".to_string());
    };
    for &(part, source) in parts {
        if part.steps.runs().is_none() {
            return refuse(format!(
                "{source} is a search over players, which does not merge: each search chose \
                 its steps from its own measurements"
            ));
        }
        if part.staircase.is_empty() {
            return refuse(format!(
                "{source} is a capacity search, which does not merge: each search chose its \
                 steps from its own measurements (a fixed staircase, --steps, merges)"
            ));
        }
        if part.staircase != first.staircase {
            return refuse(format!(
                "{source} ran the staircase {} but {first_source} ran {}: shards of one \
                 staircase run the same steps",
                rates(&part.staircase),
                rates(&first.staircase)
            ));
        }
    }
    let ran = parts.iter().map(|(p, _)| p.steps.len()).min().unwrap_or(0);
    let mut steps = Vec::new();
    let mut runs = Vec::new();
    for (index, &load) in first.staircase.iter().enumerate() {
        if index == ran {
            let short: Vec<&str> = parts
                .iter()
                .filter(|(p, _)| p.steps.len() == ran)
                .map(|(_, source)| *source)
                .collect();
            let why = format!(
                "{} ran {ran} of {} steps",
                short.join(", "),
                first.staircase.len()
            );
            steps.push(Step {
                load,
                role: Role::Staircase,
                trial: 1,
                outcome: StepOutcome {
                    achieved: 0.0,
                    verdicts: Vec::new(),
                    limit: Some(Limit::Stopped(why)),
                },
            });
            break;
        }
        let step_parts: Vec<(&SavedRun, &str)> = parts
            .iter()
            .filter_map(|(p, s)| Some((p.steps.runs()?.get(index)?, *s)))
            .collect();
        let mut merged = <SavedRun as SavedResult>::merge(&step_parts, &step_parts[0].0.label)?;
        // The server's figures stand only when every shard sampled the same processes.
        let pids = |run: &SavedRun| run.server.as_ref().map(|s| s.pids.clone());
        if step_parts
            .iter()
            .any(|(run, _)| pids(run) != pids(step_parts[0].0))
        {
            merged.server = None;
        }
        merged.part = SavedPart {
            merged_from: Vec::new(),
            run_id: first.part.run_id.clone(),
            shard: None,
            start: None,
            command: Vec::new(),
        };
        steps.push(Step {
            load,
            role: Role::Staircase,
            trial: 1,
            outcome: merged_outcome(&step_parts, &merged),
        });
        runs.push(merged);
    }
    let found = capacity::judge_staircase(LoadUnit::RequestsPerSec, steps);
    let roles = found
        .steps
        .iter()
        .take(runs.len())
        .map(|s| {
            let role = s.role.as_str().to_string();
            (role, s.outcome.class().as_str().to_string())
        })
        .collect();
    let mut search = SavedSearch::new(label, &first.url, found.saved(), roles, runs);
    search.staircase = first.staircase.clone();
    Ok(search)
}

/// A merged step's outcome: the objectives judged on the sums, unless a shard's own run was
/// tsumo's or the machine's limit (then the whole step does not speak for the server), or
/// was cut short by a signal.
fn merged_outcome(parts: &[(&SavedRun, &str)], merged: &SavedRun) -> StepOutcome {
    let own: Vec<(StepOutcome, &str)> = parts
        .iter()
        .map(|(run, source)| (objectives::step_of_run(run), *source))
        .collect();
    let limit = |system: bool| {
        own.iter()
            .find_map(|(outcome, source)| match &outcome.limit {
                Some(Limit::System(limit)) if system => Some(Limit::System(*limit)),
                Some(Limit::Generator(why)) if !system => {
                    Some(Limit::Generator(format!("{why} ({source})")))
                }
                _ => None,
            })
    };
    let stopped = parts
        .iter()
        .find(|(run, _)| run.interrupted)
        .map(|(run, source)| {
            let why = run
                .ended_by
                .clone()
                .unwrap_or_else(|| "a signal".to_string());
            Limit::Stopped(format!("{why} ({source})"))
        });
    StepOutcome {
        achieved: merged.requests_per_sec,
        verdicts: merged.objectives.clone(),
        limit: limit(true).or_else(|| limit(false)).or(stopped),
    }
}

/// `100,200,600`.
fn rates(loads: &[u64]) -> String {
    let said: Vec<String> = loads.iter().map(u64::to_string).collect();
    said.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::schema::SavedShard;
    use crate::slo::Unit as SloUnit;

    /// An HTTP run of `tests/fixtures` as one shard's step: `-R rate`, `requests` answered in
    /// its 1 s, judged `rate>90%`.
    fn step(rate: u64, requests: u64) -> SavedRun {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/http-direct-v1.json");
        let text = std::fs::read_to_string(path).unwrap();
        let mut run: SavedRun = serde_json::from_str(&text).unwrap();
        run.plan.rate = Some(rate);
        run.counters.requests = requests;
        run.elapsed_s = 1.0;
        run.requests_per_sec = requests as f64;
        let share = run.requests_per_sec * 100.0 / rate as f64;
        run.objectives = vec![Verdict {
            expr: "rate>90%".to_string(),
            measured: Some(share),
            unit: SloUnit::Percent,
            held: share > 90.0,
            judged_on: None,
        }];
        run
    }

    /// Shard `index` of 2 of a staircase with these steps.
    fn shard(index: usize, staircase: &[u64], steps: Vec<SavedRun>) -> SavedSearch {
        let capacity = capacity::judge_staircase(LoadUnit::RequestsPerSec, Vec::new()).saved();
        let roles = steps
            .iter()
            .map(|_| ("staircase".to_string(), "held".to_string()))
            .collect();
        let mut search = SavedSearch::new("direct", "http://x/", capacity, roles, steps);
        search.staircase = staircase.to_vec();
        search.part.run_id = Some("stairs".to_string());
        search.part.shard = Some(SavedShard { index, count: 2 });
        search
    }

    #[test]
    fn a_staircases_shards_merge_step_by_step() {
        // Each shard sends half: 50 of 100 (all answered), 100 of 200 (80 answered).
        let a = shard(1, &[100, 200], vec![step(50, 50), step(100, 80)]);
        let b = shard(2, &[100, 200], vec![step(50, 50), step(100, 80)]);
        let merged = merge_staircases(&[(&a, "a.json"), (&b, "b.json")], "both").unwrap();
        assert_eq!(merged.label, "both");
        assert_eq!(merged.staircase, [100, 200]);
        let requests: Vec<u64> = merged
            .steps
            .runs()
            .unwrap_or_default()
            .iter()
            .map(|s| s.counters.requests)
            .collect();
        assert_eq!(requests, [100, 160]);
        let rates: Vec<Option<u64>> = merged
            .steps
            .runs()
            .unwrap_or_default()
            .iter()
            .map(|s| s.plan.rate)
            .collect();
        assert_eq!(rates, [Some(100), Some(200)]);
        assert_eq!(merged.outcomes, ["held", "broke"]);
        assert_eq!(merged.roles, ["staircase", "staircase"]);
        assert_eq!(merged.capacity.value, Some(100));
        assert_eq!(merged.capacity.limited_by, "server");
        assert_eq!(
            merged.capacity.answer,
            "Capacity: 100 requests/sec (rate>90% held at 100; broke at 200: rate 80.0%)"
        );
        assert!(render(&merged).starts_with("Capacity staircase (requests/sec)\n"));
        // A merged step is the whole run's: no shard, the run's id.
        assert_eq!(merged.steps.runs().unwrap_or_default()[0].part.shard, None);
        assert_eq!(
            merged.steps.runs().unwrap_or_default()[0]
                .part
                .run_id
                .as_deref(),
            Some("stairs")
        );
    }

    /// tsumo behind its schedule on one shard: the merged step is tsumo's limit, not the
    /// server's, and says which shard.
    #[test]
    fn a_shards_own_limit_is_the_merged_steps() {
        let mut late = step(50, 50);
        late.send_lateness.p99 = 20_000;
        let a = shard(1, &[100, 200], vec![step(50, 50), step(100, 100)]);
        let b = shard(2, &[100, 200], vec![late, step(100, 100)]);
        let merged = merge_staircases(&[(&a, "a.json"), (&b, "b.json")], "both").unwrap();
        assert_eq!(merged.capacity.limited_by, "generator");
        assert_eq!(merged.capacity.value, None);
        assert!(
            merged.capacity.reason.ends_with("(b.json)"),
            "{}",
            merged.capacity.reason
        );
    }

    /// A shard that ran fewer steps (stopped): the merge ends there, as stopped.
    #[test]
    fn a_short_shard_ends_the_merged_staircase() {
        let a = shard(1, &[100, 200], vec![step(50, 50), step(100, 100)]);
        let b = shard(2, &[100, 200], vec![step(50, 50)]);
        let merged = merge_staircases(&[(&a, "a.json"), (&b, "b.json")], "both").unwrap();
        assert_eq!(merged.steps.len(), 1);
        assert_eq!(merged.capacity.limited_by, "stopped");
        assert_eq!(merged.capacity.value, Some(100));
        assert_eq!(merged.capacity.reason, "at 200: b.json ran 1 of 2 steps");
    }

    #[test]
    fn other_staircases_and_searches_do_not_merge() {
        let a = shard(1, &[100, 200], vec![step(50, 50)]);
        let b = shard(2, &[100, 400], vec![step(50, 50)]);
        let e = merge_staircases(&[(&a, "a.json"), (&b, "b.json")], "x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "merge: b.json ran the staircase 100,400 but a.json ran 100,200: shards of one \
             staircase run the same steps"
        );
        assert_eq!(e.exit_status(), crate::error::ExitStatus::BadInput);
        let mut search = b.clone();
        search.staircase.clear();
        let e = merge_staircases(&[(&a, "a.json"), (&search, "s.json")], "x").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("merge: s.json is a capacity search, which does not merge"),
            "{e}"
        );
    }
}
