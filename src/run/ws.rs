//! A WebSocket run (`tsumo ws …`): the run (on `--dashboard` as it goes), its text report,
//! its JSON, its page, and its verdict (with `--slo`, its objectives; `--junit` and the CI
//! step summary from them).

use super::ab::{self, Round, Side};
use super::output::Outputs;
use super::{error_exit, exit_as, fail, server_gone};
use crate::error::{Error, ExitStatus};
use crate::net::preflight::Probe;
use crate::plan::WsPlan;
use crate::report;
use crate::report::tools::saved::{LoadedRun, RunData};
use crate::report::ws::text::Shown;
use crate::stats::end::EndReason;
use crate::stats::sink::Sink;
use crate::stats::ws::RunResult;

/// `tsumo ws …`: the run, its report on stdout, `--json`, `--html`, `--junit`; with `--vs` the
/// A/B comparison.
pub fn run(plan: &WsPlan) -> ExitStatus {
    super::with_dashboard(&plan.options, || run_or_vs(plan))
}

fn run_or_vs(plan: &WsPlan) -> ExitStatus {
    if let Err(e) = super::files::of_ws(plan) {
        return error_exit(&e);
    }
    match sides(plan) {
        Some([first, second]) => ab::run::<Ws>([&first, &second], &plan.options),
        None => once(plan),
    }
}

fn once(plan: &WsPlan) -> ExitStatus {
    let (mut result, script) = match live_run(plan) {
        Ok(run) => run,
        Err(e) => return error_exit(&e),
    };
    if gone(&result) {
        result.ended_by = EndReason::ServerGone;
    }
    let saved = report::ws::saved(&result);
    let mut outputs = Outputs::of(&plan.options);
    let shown = Shown {
        latency: plan.options.latency,
        uncorrected: plan.u_latency,
    };
    outputs.text(|| report::ws::text::render(&saved, shown).unwrap_or_else(|e| format!("{e}\n")));
    outputs.json(|| &saved);
    let loaded = || LoadedRun::new(RunData::Ws(Box::new(saved.clone())), "run");
    outputs.page(loaded);
    outputs.judged(|| vec![loaded()]);
    // As wrk: the script's done() runs after the report.
    if let Some(Err(e)) = script.map(|script| script.done(&result)) {
        let status = error_exit(&e);
        return outputs.status_or(|| status);
    }
    // A script error ended its connection (counted with the closes or failed openings): the
    // run fails with its line, after the report, as an HTTP run's script error does.
    if let Some(line) = script_error(&result) {
        let status = fail(line);
        return outputs.status_or(|| status);
    }
    outputs.status_or(|| exit_as(&saved))
}

/// Whether the server went away mid-run (killed, crashed): it ended every connection before
/// the run's duration (connections do not reopen, so the run ended with them), and it no
/// longer answers the pre-flight check ([`server_gone::check`], as a capacity search asks).
/// A server that closed or reset them but still answers only misbehaved.
fn gone(result: &RunResult) -> bool {
    let c = &result.record.counters;
    let ended: u64 = c.closes.values().sum();
    result.ended_by == EndReason::Done
        && c.connected > 0
        && ended >= c.connected
        && server_gone::check(crate::wsload::probe(&result.plan)).is_err()
}

/// The run, shown on the dashboard when there is one.
fn live_run(
    plan: &WsPlan,
) -> Result<(crate::stats::ws::RunResult, Option<crate::wsload::Script>), Error> {
    let data = crate::stats::ws::live::Data {
        rate: plan.rate,
        ..Default::default()
    };
    let feed = crate::dashboard::begin(&plan.options, data);
    let (result, script) = crate::wsload::run(plan)?;
    if let Some(feed) = feed {
        feed.ended(&result.record.timeline.intervals);
    }
    Ok((result, script))
}

/// The first script error that ended a connection (counted with the closes or failed
/// openings), if one did.
fn script_error(result: &crate::stats::ws::RunResult) -> Option<&String> {
    let counters = &result.record.counters;
    (counters.closes.keys())
        .chain(counters.failures.keys())
        .find(|kind| kind.starts_with(crate::wsload::script::SCRIPT_ERROR))
}

/// `tsumo ws --vs URL2`'s two sides: the run's URL, and the second one (with its label);
/// neither writes files of its own.
fn sides(plan: &WsPlan) -> Option<[WsPlan; 2]> {
    let (vs, [first, second]) = plan.options.vs_sides()?;
    let first = WsPlan {
        options: first,
        ..plan.clone()
    };
    let second = WsPlan {
        target: vs.clone(),
        options: second,
        ..first.clone()
    };
    Some([first, second])
}

/// A WebSocket run as a side of `--vs`.
struct Ws;

impl Side for Ws {
    type Plan = WsPlan;
    const MODE: &'static str = report::ws::MODE;

    fn label(plan: &WsPlan) -> &str {
        &plan.options.label
    }

    fn probe(plan: &WsPlan) -> Probe<'_> {
        crate::wsload::probe(plan)
    }

    fn round(plan: &WsPlan) -> Result<Round, Error> {
        let (result, script) = live_run(plan)?;
        let saved = report::ws::saved(&result);
        let shown = Shown {
            latency: plan.options.latency,
            uncorrected: plan.u_latency,
        };
        let text = report::ws::text::render(&saved, shown).unwrap_or_else(|e| format!("{e}\n"));
        // As a single run: a script error (in a connection, or in done()) ends the comparison,
        // and so does a run that failed (no connection opened, nothing answered).
        let done = script.and_then(|script| script.done(&result).err());
        let error = (script_error(&result).cloned())
            .or_else(|| done.map(|e| e.to_string()))
            .or_else(|| saved.failure.clone())
            .map(|e| format!("{}: {e}", plan.options.label));
        Ok(Round {
            text,
            error,
            data: RunData::Ws(Box::new(saved)),
        })
    }
}
