//! `tsumo capacity` for HTTP: each step of [`crate::capacity::search`] is one complete
//! open-loop run through `web::run`, as an ordinary run makes it, at `-R load` for `--step`,
//! after an unjudged warm-up run at the same load and followed by a pause; it is judged by the
//! `--slo` objectives on its saved run (`report::objectives::step_of_run`). The table of
//! steps, the answer and what broke first are printed at the end; `--json` saves the answer
//! and every step's full run.

use std::io::Write;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{check_outputs, error_exit, fail};
use crate::capacity::{
    self, Capacity, Class, Limit, LoadUnit, SavedCapacity, SearchPlan, StepOutcome, StepRunner,
};
use crate::engine::signals;
use crate::error::ExitStatus;
use crate::plan::{CapacityPlan, JsonOut, Plan};
use crate::report;
use crate::report::json::SavedRun;
use crate::web;

/// `--json`'s document: the answer, then each step's full run in the order run.
#[derive(Debug, Serialize)]
pub struct SavedSearch<'a> {
    pub tool: &'static str,
    pub version: &'static str,
    pub mode: &'static str,
    pub capacity: SavedCapacity,
    pub steps: &'a [SavedRun],
}

/// `tsumo capacity …`: the search, its table and answer, `--json`; exit 0 with an answer, 1
/// when a step's run failed.
pub fn run(plan: &CapacityPlan) -> ExitStatus {
    if let Err(e) = check_outputs(plan.run.json.as_ref(), None) {
        return error_exit(&e);
    }
    let mark = match signals::watch() {
        Ok(mark) => mark,
        Err(e) => return error_exit(&e),
    };
    let mut runner = HttpSteps {
        plan,
        mark,
        runs: Vec::new(),
        failed: None,
        last_end: None,
    };
    let search = SearchPlan {
        from: plan.from,
        to: plan.to,
        resolution: plan.resolution,
        growth: SearchPlan::GROWTH,
        granularity: 1,
    };
    let found = capacity::search(&search, LoadUnit::RequestsPerSec, &mut runner);
    let show = !plan.run.quiet && plan.run.json != Some(JsonOut::Stdout);
    if show {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(render(&found, &runner.runs).as_bytes());
        let _ = out.flush();
    }
    let mut status = ExitStatus::Ran;
    if let Some(json) = &plan.run.json {
        let document = SavedSearch {
            tool: "tsumo",
            version: env!("CARGO_PKG_VERSION"),
            mode: "capacity",
            capacity: found.saved(),
            steps: &runner.runs,
        };
        if let Err(e) = report::schema::write_value(&document, json) {
            status = fail(&format_args!("--json {e}"));
        }
    }
    if let Some(e) = &runner.failed {
        return fail(e);
    }
    status
}

/// Runs the steps and keeps each one's saved run.
struct HttpSteps<'a> {
    plan: &'a CapacityPlan,
    /// The process's signals are read from here: one stops the search.
    mark: usize,
    runs: Vec<SavedRun>,
    /// The error that ended the search (a step's run failed).
    failed: Option<String>,
    /// When the previous step ended: the pause runs from there.
    last_end: Option<Instant>,
}

impl HttpSteps<'_> {
    /// One run at `load` for `duration`, its files left to the search.
    fn step_plan(&self, load: u64, duration: Duration, judged: bool) -> Plan {
        Plan {
            rate: Some(load),
            duration,
            json: None,
            hgrm: None,
            hlog: None,
            quiet: true,
            objectives: if judged {
                self.plan.run.objectives.clone()
            } else {
                Vec::new()
            },
            ..self.plan.run.clone()
        }
    }

    fn stopped(&self) -> Option<StepOutcome> {
        let why = match (&self.failed, signals::since(self.mark)) {
            (Some(_), _) => "the run failed".to_string(),
            (None, Some(signal)) => signal.to_string(),
            (None, None) => return None,
        };
        Some(StepOutcome {
            achieved: 0.0,
            verdicts: Vec::new(),
            limit: Some(Limit::Stopped(why)),
        })
    }

    /// The pause after the previous step, cut short by a signal.
    fn pause(&self) {
        let Some(end) = self.last_end else { return };
        while end.elapsed() < self.plan.pause && signals::since(self.mark).is_none() {
            std::thread::sleep(Duration::from_millis(50).min(self.plan.pause));
        }
    }
}

impl StepRunner for HttpSteps<'_> {
    fn run_step(&mut self, load: u64) -> StepOutcome {
        self.pause();
        if let Some(stopped) = self.stopped() {
            return stopped;
        }
        let number = self.runs.len() + 1;
        let unit = LoadUnit::RequestsPerSec.as_str();
        eprintln!(
            "capacity: step {number} at {} {unit} ({} warm-up, then {} judged)",
            capacity::grouped(load),
            human(self.plan.warmup),
            human(self.plan.step)
        );
        if !self.plan.warmup.is_zero() {
            if let Err(e) = web::run(&self.step_plan(load, self.plan.warmup, false)) {
                self.failed = Some(e.to_string());
            }
            if let Some(stopped) = self.stopped() {
                self.last_end = Some(Instant::now());
                return stopped;
            }
        }
        let finished = web::run(&self.step_plan(load, self.plan.step, true));
        self.last_end = Some(Instant::now());
        let finished = match finished {
            Ok(finished) => finished,
            Err(e) => {
                self.failed = Some(e.to_string());
                return self.stopped().unwrap_or_else(|| unreachable_outcome());
            }
        };
        let saved = SavedRun {
            script_error: finished.script_error.as_ref().map(ToString::to_string),
            ..SavedRun::from_result(&finished.result)
        };
        let mut outcome = report::objectives::step_of_run(&saved);
        if let Some(e) = &finished.script_error {
            self.failed = Some(format!("script error: {e}"));
        }
        if finished.result.interrupted || self.failed.is_some() {
            if let Some(stopped) = self.stopped() {
                outcome.limit = stopped.limit;
            }
        }
        eprintln!("capacity: step {number}: {}", step_line(&outcome));
        self.runs.push(saved);
        outcome
    }
}

/// Never reached: `failed` was just set, so [`HttpSteps::stopped`] answers.
fn unreachable_outcome() -> StepOutcome {
    StepOutcome {
        achieved: 0.0,
        verdicts: Vec::new(),
        limit: Some(Limit::Stopped("the run failed".to_string())),
    }
}

/// `achieved 1,480 requests/sec: p99<20ms held (p99 3.1ms) → held`.
fn step_line(outcome: &StepOutcome) -> String {
    let verdicts: Vec<String> = outcome
        .verdicts
        .iter()
        .map(|v| {
            let word = if v.held { "held" } else { "BROKEN" };
            format!("{} {word} ({})", v.expr, v.measured_text())
        })
        .collect();
    let class = match &outcome.limit {
        Some(Limit::Generator(why)) => format!("generator-limited: {why}"),
        Some(Limit::System(limit)) => format!("system-limited: {}", limit.describe()),
        Some(Limit::Stopped(why)) => format!("stopped: {why}"),
        None => outcome.class().as_str().to_string(),
    };
    format!(
        "achieved {} requests/sec: {} -> {class}",
        capacity::grouped(outcome.achieved.round() as u64),
        verdicts.join(", ")
    )
}

fn human(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The table of steps, the answer line and what broke first.
pub fn render(found: &Capacity, runs: &[SavedRun]) -> String {
    let with_server = runs.iter().any(|r| r.server.is_some());
    let mut header = vec![
        "step", "role", "target", "achieved", "p50", "p99", "max", "errors",
    ];
    if with_server {
        header.extend(["server cpu", "server mem"]);
    }
    header.push("verdict");
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for (i, (step, run)) in found.steps.iter().zip(runs).enumerate() {
        let mut row = vec![
            (i + 1).to_string(),
            step.role.as_str().to_string(),
            capacity::grouped(step.load),
            format!("{:.1}", run.requests_per_sec),
            micros(run.latency.p50),
            micros(run.latency.p99),
            micros(run.latency.max),
            errors(run),
        ];
        if with_server {
            match &run.server {
                Some(s) => row.extend([
                    format!("{:.0}%", s.cpu_percent_mean),
                    format!("{:.1}MB", s.rss_bytes_peak as f64 / 1e6),
                ]),
                None => row.extend(["-".to_string(), "-".to_string()]),
            }
        }
        let broken: Vec<String> = step
            .outcome
            .broken()
            .map(|v| format!("{} ({})", v.expr, v.measured_text()))
            .collect();
        row.push(match step.outcome.class() {
            Class::Broke => format!("broke: {}", broken.join(", ")),
            class => class.as_str().to_string(),
        });
        rows.push(row);
    }
    let columns = rows[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::from("Capacity search (requests/sec)\n");
    for row in &rows {
        let cells: Vec<String> = row
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
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str(&found.line());
    out.push('\n');
    if let Some(first) = found.broke_first() {
        out.push_str(&first);
        out.push('\n');
    }
    out
}

/// A latency in µs, as the report writes it.
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
