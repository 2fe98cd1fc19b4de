//! One command's run, from its plan to its exit status: each mode's run with its report and
//! files (`http`, `mahjong`, `ws`), the A/B rounds of `--vs` (`ab`: one loop for both modes, over
//! the small [`ab::Side`] trait each mode's runner implements), the capacity searches
//! (`capacity`, `mahjong_capacity`), and what every one of them writes at its end, one way
//! (`output`: each output written, each failure its line, one exit status for a lost one).
//!
//! Why a module of its own: the binary only parses, runs, renders and exits; what a finished
//! run writes, in which order, and which status it ends with is the library's, tested there.

pub mod ab;
pub mod capacity;
mod ci;
pub mod files;
pub mod http;
pub mod mahjong;
pub mod mahjong_capacity;
pub mod output;
mod pool;
mod server_gone;
mod steady;
pub mod ws;

use crate::capacity::SearchPlan;
use crate::error::{Error, ExitStatus};
use crate::plan::{RunOptions, SearchOptions};
use crate::report::result::SavedResult;

/// Runs a command with its `--dashboard`, when asked for: bound before anything runs (an
/// address in use or not this machine's is bad input, exit 2), closed at the end (kept up for
/// `--dashboard-linger`); then what it leaves for a CI system (`--junit`, the step summary:
/// [`ci`]).
fn with_dashboard(options: &RunOptions, command: impl FnOnce() -> ExitStatus) -> ExitStatus {
    let dashboard = match crate::dashboard::Dashboard::open(options) {
        Ok(dashboard) => dashboard,
        Err(e) => return error_exit(&e),
    };
    let status = ci::finish(options, command());
    if let Some(dashboard) = dashboard {
        dashboard.close();
    }
    status
}

/// A capacity step at `load` begins: on the dashboard, when there is one.
pub(crate) fn live_step_begins(unit: crate::capacity::LoadUnit, load: u64) {
    if let Some(live) = crate::stats::live::get() {
        live.step_begins(unit.as_str(), load);
    }
}

/// A capacity step was judged: its line (as on stderr) on the dashboard, when there is one.
pub(crate) fn live_step_judged(outcome: &crate::capacity::StepOutcome, line: &str) {
    if let Some(live) = crate::stats::live::get() {
        live.step_judged(outcome.class().as_str(), line.to_string());
    }
}

/// The dashboard's chart of a capacity search so far, when there is a dashboard: the steps
/// judged (at `loads`, of `classes`), drawn as the search's page draws them, with no answer yet.
pub(crate) fn live_search_so_far<S: crate::report::result::SearchStep + Clone>(
    (label, url): (&str, &str),
    unit: crate::capacity::LoadUnit,
    steps: &[S],
    (loads, classes): (&[u64], &[crate::capacity::Class]),
) {
    let Some(live) = crate::stats::live::get() else {
        return;
    };
    let of = |class: crate::capacity::Class| -> Vec<u64> {
        loads
            .iter()
            .zip(classes)
            .filter(|(_, c)| **c == class)
            .map(|(load, _)| *load)
            .collect()
    };
    let so_far = crate::capacity::SavedCapacity {
        value: None,
        unit: unit.as_str().to_string(),
        limited_by: "searching".to_string(),
        reason: String::new(),
        answer: "searching".to_string(),
        broke_first: None,
        held: of(crate::capacity::Class::Held),
        broke: of(crate::capacity::Class::Broke),
        disturbed: Vec::new(),
        range: None,
        trials: Vec::new(),
        signal: None,
    };
    let mut search = crate::report::capacity::SavedSearch::new(
        label,
        url,
        so_far,
        Vec::new(),
        steps.to_vec(),
        Vec::new(),
    );
    // A step's role is the search's to say; the charts draw each step by its outcome.
    search.outcomes = classes.to_vec();
    let content = SavedResult::page(&search);
    live.search_charts(crate::report::tools::live::charts(
        &content,
        "the search so far",
    ));
}

/// The status a finished run exits with, from its saved result (its line on stderr).
pub fn exit_as(saved: &dyn SavedResult) -> ExitStatus {
    match saved.exit() {
        (status, Some(line)) => fail_as(status, &line),
        (status, None) => status,
    }
}

/// An error that ended tsumo: its line, and the status its kind says (2 for bad input).
pub fn error_exit(e: &Error) -> ExitStatus {
    fail_as(e.exit_status(), e)
}

/// A run that failed: its line, exit 1.
pub fn fail(e: &dyn std::fmt::Display) -> ExitStatus {
    fail_as(ExitStatus::Failed, e)
}

/// Prints `tsumo: LINE` on stderr and gives `status` back.
pub fn fail_as(status: ExitStatus, e: &dyn std::fmt::Display) -> ExitStatus {
    eprintln!("tsumo: {e}");
    if status == ExitStatus::Failed {
        ci::said(e.to_string());
    }
    status
}

/// A search's plan from its options (either search's): its loads multiples of `granularity`.
fn search_plan(search: &SearchOptions, granularity: u64) -> SearchPlan {
    SearchPlan {
        from: search.from,
        to: search.to,
        resolution: search.resolution,
        growth: SearchPlan::GROWTH,
        granularity,
        trials: SearchPlan::TRIALS,
    }
}

/// A capacity step's line on stderr: what it achieved (`achieved 1,480 requests/sec`, `16
/// playing`), each objective's verdict, and the step's class: `… p99<20ms held (p99 3.1ms)
/// -> held`.
fn step_line(outcome: &crate::capacity::StepOutcome, achieved: &str) -> String {
    use crate::capacity::Limit;
    let verdicts: Vec<String> = outcome.verdicts.iter().map(verdict_text).collect();
    let class = match &outcome.limit {
        Some(Limit::Generator(why)) => format!("generator-limited: {why}"),
        Some(Limit::System(limit)) => format!("system-limited: {}", limit.describe()),
        Some(Limit::Stopped(why)) => format!("stopped: {why}"),
        Some(Limit::ServerFailed(why)) => format!("server-failed: {why}"),
        Some(Limit::Pool(pool)) => format!(
            "pool-limited: {:.1} % of requests fell due on a busy connection ({} connections)",
            f64::from(pool.busy_permille) / 10.0,
            pool.connections
        ),
        Some(Limit::Disturbed(why)) => format!("disturbed: {why}; run again"),
        Some(Limit::Unstable(why)) => format!("unstable: {why}"),
        None => outcome.class().as_str().to_string(),
    };
    format!("{achieved}: {} -> {class}", verdicts.join(", "))
}

/// `p99<20ms held (p99 3.1ms)`, `errors<1 BROKEN (errors 16)`: an objective's verdict as a
/// step's line and the progress line say it.
fn verdict_text(v: &crate::slo::Verdict) -> String {
    let word = if v.held { "held" } else { "BROKEN" };
    format!("{} {word} ({})", v.expr, v.measured_text())
}

/// ` (held at 400; broke at 800: p99<20ms)`: how a search stands, as its progress lines say it:
/// the highest load held so far, the lowest broken and what broke there; empty before the
/// first step ends. `steps` are each ended step's load and verdicts.
fn standing<'a>(steps: impl IntoIterator<Item = (u64, &'a [crate::slo::Verdict])>) -> String {
    let mut held = None;
    let mut broke: Option<(u64, &[crate::slo::Verdict])> = None;
    for (load, verdicts) in steps {
        if verdicts.iter().all(|v| v.held) {
            held = held.max(Some(load));
        } else if broke.is_none_or(|(lowest, _)| load < lowest) {
            broke = Some((load, verdicts));
        }
    }
    let mut said = Vec::new();
    if let Some(load) = held {
        said.push(format!("held at {}", crate::capacity::grouped(load)));
    }
    if let Some((load, verdicts)) = broke {
        let broken: Vec<&str> = verdicts
            .iter()
            .filter(|v| !v.held)
            .map(|v| v.expr.as_str())
            .collect();
        said.push(format!(
            "broke at {}: {}",
            crate::capacity::grouped(load),
            broken.join(", ")
        ));
    }
    if said.is_empty() {
        String::new()
    } else {
        format!(" ({})", said.join("; "))
    }
}

/// `2s`, or `1500ms`: a step's lengths as the step lines say them.
fn human(d: std::time::Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}
