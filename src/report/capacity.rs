//! A capacity search as a saved result (`tsumo capacity --json`): the answer (`capacity`),
//! each step's role and outcome, and each step's full saved run (`steps`), through
//! [`SavedResult`] — its text (the table of steps and the answer), its compare rows (the
//! capacities side by side) and its exit verdict. Searches do not merge.

use std::any::Any;

use serde::{Deserialize, Serialize};

use super::chart::{Answer, Objective, Series};
use super::json::SavedRun;
use super::result::{figure, row, Named, PageChart, PageContent, Row, SavedResult, Unit};
use super::schema::{SavedPart, SCHEMA_VERSION};
use crate::capacity::SavedCapacity;
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
    /// Each step's role (`grow`, `bisect`, `confirm`) and outcome (`held`, `broke`,
    /// `generator-limited`, `system-limited`, `stopped`), in the order of `steps`.
    pub roles: Vec<String>,
    pub outcomes: Vec<String>,
    /// Each step's full run, as an ordinary run's `--json` writes it.
    pub steps: Vec<SavedRun>,
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
        let server = capacity.value.and_then(|value| {
            steps
                .iter()
                .rev()
                .find(|s| s.plan.rate == Some(value))
                .and_then(|s| s.server.clone())
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

/// The table of steps, the answer line and what broke first.
pub fn render(search: &SavedSearch) -> String {
    let runs = &search.steps;
    let with_server = runs.iter().any(|r| r.server.is_some());
    let mut header = vec![
        "step", "role", "target", "achieved", "p50", "p99", "max", "errors",
    ];
    if with_server {
        header.extend(["server cpu", "server mem"]);
    }
    header.push("verdict");
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for (i, run) in runs.iter().enumerate() {
        let role = search.roles.get(i).map_or("", String::as_str);
        let outcome = search.outcomes.get(i).map_or("", String::as_str);
        let mut cells = vec![
            (i + 1).to_string(),
            role.to_string(),
            run.plan
                .rate
                .map_or_else(|| "-".to_string(), crate::capacity::grouped),
            format!("{:.1}", run.requests_per_sec),
            micros(run.latency.p50),
            micros(run.latency.p99),
            micros(run.latency.max),
            errors(run),
        ];
        if with_server {
            match &run.server {
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
        self.steps.iter().map(|s| s.elapsed_s).sum()
    }

    fn cut_by_signal(&self) -> Option<String> {
        (self.capacity.limited_by == "stopped").then(|| self.capacity.reason.clone())
    }

    fn stopped_by_error(&self) -> Option<String> {
        self.steps.iter().find_map(|s| s.stopped_by_error())
    }

    fn text(&self) -> Result<String, Error> {
        Ok(render(self))
    }

    /// A step's run failed (a script error, no response at all); else the search answered.
    fn verdict(&self) -> Option<String> {
        self.steps.iter().find_map(|s| s.verdict())
    }

    /// The search is its answer, not a judgement: its steps hold the objectives' verdicts.
    fn objectives(&self) -> &[Verdict] {
        &[]
    }

    fn plan_key(&self) -> Vec<(&'static str, String)> {
        let objectives: Vec<&str> = self
            .steps
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

    fn page(&self) -> PageContent {
        page(self)
    }
}

/// The step that held at the answer (the last one run at it).
fn answer_step(search: &SavedSearch) -> Option<&SavedRun> {
    let value = search.capacity.value?;
    search
        .steps
        .iter()
        .zip(&search.outcomes)
        .rev()
        .find(|(run, outcome)| run.plan.rate == Some(value) && outcome.as_str() == "held")
        .map(|(run, _)| run)
}

/// A search's page: the capacity, what broke, the answer step's figures; the curve.
fn page(search: &SavedSearch) -> PageContent {
    let c = &search.capacity;
    let step = answer_step(search);
    let unit = &c.unit;
    let mut figures = vec![
        figure(
            "capacity",
            "Capacity",
            c.value.map_or("none held".to_string(), |v| {
                format!("{} {unit}", crate::capacity::grouped(v))
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
    if let Some(run) = step {
        let time = |id, name, us: u64| figure(id, name, format_time_us(us as f64), Some(us as f64));
        figures.extend([
            figure(
                "achieved",
                "Achieved there",
                format!("{:.1} req/s", run.requests_per_sec),
                Some(run.requests_per_sec),
            ),
            time("p50", "p50 there", run.latency.p50),
            time("p99", "p99 there", run.latency.p99),
            time("max", "max there", run.latency.max),
            figure("errors", "Errors there", errors(run), None),
        ]);
    }
    let mut lines = vec![c.answer.clone()];
    if let Some(first) = &c.broke_first {
        lines.push(first.clone());
    }
    // The server's limit is the answer line's own words; tsumo's or the machine's is said.
    if !c.reason.is_empty() && c.limited_by != "server" {
        lines.push(format!("Limited by {}: {}", c.limited_by, c.reason));
    }
    if let Some(verdict) = search.verdict() {
        lines.push(format!("Failed: {verdict}"));
    }
    let objectives = search
        .steps
        .first()
        .map(|s| {
            s.objectives
                .iter()
                .map(|v| v.expr.clone())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let mut facts = Vec::new();
    if let Some(first) = search.steps.first() {
        facts.push((
            "Command".to_string(),
            format!(
                "tsumo capacity {} -c{} {}",
                objectives
                    .iter()
                    .map(|o| format!("--slo '{o}'"))
                    .collect::<Vec<_>>()
                    .join(" "),
                first.plan.connections,
                search.url
            ),
        ));
    }
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
    let load = |run: &SavedRun| run.plan.rate.map(|r| r as f64);
    let exprs: Vec<String> = search
        .steps
        .first()
        .map(|s| s.objectives.iter().map(|v| v.expr.clone()).collect())
        .unwrap_or_default();
    let mut charts = Vec::new();
    let ids = [
        "capacity-curve",
        "capacity-curve-2",
        "capacity-curve-3",
        "capacity-curve-4",
    ];
    for (expr, id) in exprs.iter().zip(ids) {
        let verdicts = search.steps.iter().filter_map(|run| {
            let v = run.objectives.iter().find(|v| &v.expr == expr)?;
            Some((load(run)?, v))
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
        let mut points: Vec<(f64, f64)> = search
            .steps
            .iter()
            .filter_map(|run| Some((load(run)?, run.latency.p99 as f64 / 1000.0)))
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
