//! A WebSocket run (`tsumo ws …`): the run (on `--dashboard` as it goes), its text report,
//! its JSON, its page, and its verdict (with `--slo`, its objectives; `--junit` and the CI
//! step summary from them).

use super::output::Outputs;
use super::{error_exit, exit_as, fail};
use crate::error::{Error, ExitStatus};
use crate::plan::WsPlan;
use crate::report;
use crate::report::tools::saved::{LoadedRun, RunData};
use crate::report::ws::text::Shown;
use crate::stats::sink::Sink;

/// `tsumo ws …`: the run, its report on stdout, `--json`, `--html`, `--junit`.
pub fn run(plan: &WsPlan) -> ExitStatus {
    super::with_dashboard(&plan.options, || once(plan))
}

fn once(plan: &WsPlan) -> ExitStatus {
    if let Err(e) = super::files::of_ws(plan) {
        return error_exit(&e);
    }
    let (result, script) = match live_run(plan) {
        Ok(run) => run,
        Err(e) => return error_exit(&e),
    };
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
    let counters = &result.record.counters;
    let script_error = (counters.closes.keys())
        .chain(counters.failures.keys())
        .find(|kind| kind.starts_with(crate::wsload::script::SCRIPT_ERROR));
    if let Some(line) = script_error {
        let status = fail(line);
        return outputs.status_or(|| status);
    }
    outputs.status_or(|| exit_as(&saved))
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
