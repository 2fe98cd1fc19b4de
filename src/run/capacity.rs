//! `tsumo capacity` for HTTP: each step of [`crate::capacity::search`] is one complete
//! open-loop run through `web::run`, as an ordinary run makes it, at `-R load` for `--step`,
//! after an unjudged warm-up run at the same load and followed by a pause; it is judged by the
//! `--slo` objectives on its saved run (`report::objectives::step_of_run`). The table of
//! steps, the answer and what broke first are printed at the end; `--json` saves the answer
//! and every step's full run.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use super::{check_outputs, error_exit, fail};
use crate::capacity::{self, Limit, LoadUnit, SearchPlan, StepOutcome, StepRunner};
use crate::engine::signals;
use crate::error::{Error, ExitStatus};
use crate::plan::{CapacityPlan, JsonOut, Plan};
use crate::report;
use crate::report::capacity::SavedSearch;
use crate::report::json::SavedRun;
use crate::report::saved::{LoadedRun, RunData};
use crate::web;

/// `tsumo capacity …`: the search, its table and answer, `--json`; exit 0 with an answer, 1
/// when a step's run failed.
pub fn run(plan: &CapacityPlan) -> ExitStatus {
    if let Err(e) = check_outputs(plan.run.json.as_ref(), None) {
        return error_exit(&e);
    }
    if let Err(e) = super::check_html(plan.run.html.as_deref(), plan.run.json.as_ref()) {
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
        error: None,
        failed: None,
        last_end: None,
    };
    let search_plan = SearchPlan {
        from: plan.from,
        to: plan.to,
        resolution: plan.resolution,
        growth: SearchPlan::GROWTH,
        granularity: 1,
    };
    let found = capacity::search(&search_plan, LoadUnit::RequestsPerSec, &mut runner);
    let error = runner.error.take();
    let failed = runner.failed.take();
    if let (Some(e), true) = (&error, runner.runs.is_empty()) {
        return error_exit(e);
    }
    let roles = found
        .steps
        .iter()
        .take(runner.runs.len())
        .map(|s| {
            let role = s.role.as_str().to_string();
            (role, s.outcome.class().as_str().to_string())
        })
        .collect();
    let search = SavedSearch::new(
        &plan.run.label,
        &plan.run.target.url,
        found.saved(),
        roles,
        runner.runs,
    );
    let show = !plan.run.quiet && plan.run.json != Some(JsonOut::Stdout);
    if show {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(report::capacity::render(&search).as_bytes());
        let _ = out.flush();
    }
    let mut status = ExitStatus::Ran;
    if let Some(json) = &plan.run.json {
        if let Err(e) = report::schema::write_value(&search, json) {
            status = fail(&format_args!("--json {e}"));
        }
    }
    if let Some(path) = &plan.run.html {
        let loaded = LoadedRun::new(RunData::Capacity(Box::new(search.clone())), "search");
        if let Err(e) = super::write_page(path, loaded) {
            status = fail(&e);
        }
    }
    if let Some(e) = &error {
        return error_exit(e);
    }
    if let Some(e) = &failed {
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
    /// The error that ended the search (a step's run failed: the target did not answer, a
    /// script that does not load), with its own exit status.
    error: Option<Error>,
    /// A script error during a step's run (exit 1).
    failed: Option<String>,
    /// When the previous step ended: the pause runs from there.
    last_end: Option<Instant>,
}

impl HttpSteps<'_> {
    /// One run at `load` for `duration`, its files left to the search; its live status line
    /// (on a terminal, or with `--progress`) begins with the step, its target and how the
    /// objectives stood so far.
    fn step_plan(&self, load: u64, duration: Duration, judged: bool) -> Plan {
        let phase = if judged { "" } else { " warm-up" };
        let show = !self.plan.run.quiet && std::io::stderr().is_terminal();
        Plan {
            progress: self.plan.run.progress || show,
            progress_prefix: format!(
                "step {} at {} req/s{phase}{}: ",
                self.runs.len() + 1,
                capacity::grouped(load),
                self.standing()
            ),
            rate: Some(load),
            duration,
            json: None,
            hgrm: None,
            hlog: None,
            html: None,
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
        let failed = self.failed.is_some() || self.error.is_some();
        let why = match (failed, signals::since(self.mark)) {
            (true, _) => "the run failed".to_string(),
            (false, Some(signal)) => signal.to_string(),
            (false, None) => return None,
        };
        Some(StepOutcome {
            achieved: 0.0,
            verdicts: Vec::new(),
            limit: Some(Limit::Stopped(why)),
        })
    }

    /// `, held at 400, broke at 800 (p99<20ms)`: the highest load held and the lowest broken
    /// so far.
    fn standing(&self) -> String {
        let held = self
            .runs
            .iter()
            .filter(|r| r.objectives.iter().all(|v| v.held))
            .filter_map(|r| r.plan.rate)
            .max();
        let broke = self
            .runs
            .iter()
            .filter(|r| r.objectives.iter().any(|v| !v.held))
            .filter_map(|r| Some((r.plan.rate?, r)))
            .min_by_key(|(rate, _)| *rate);
        let mut said = String::new();
        if let Some(held) = held {
            said.push_str(&format!(", held at {}", capacity::grouped(held)));
        }
        if let Some((rate, run)) = broke {
            let broken: Vec<&str> = run
                .objectives
                .iter()
                .filter(|v| !v.held)
                .map(|v| v.expr.as_str())
                .collect();
            said.push_str(&format!(
                ", broke at {} ({})",
                capacity::grouped(rate),
                broken.join(", ")
            ));
        }
        said
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
                self.error = Some(e);
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
                self.error = Some(e);
                return self.stopped().unwrap_or_else(unreachable_outcome);
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
