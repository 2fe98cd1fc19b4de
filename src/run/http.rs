//! An HTTP run (`tsumo URL`), alone or as one side of `--vs`: the report, the JSON, `.hgrm`,
//! then the script's `done()`; errors last.

use std::io::Write;

use super::ab::{self, Round, Side};
use super::{error_exit, exit_as, fail};
use crate::error::{Error, ExitStatus};
use crate::net::preflight::Probe;
use crate::plan::{JsonOut, Plan, RunOptions};
use crate::report;
use crate::report::saved::{LoadedRun, RunData};
use crate::web;

/// `tsumo URL …`: the run, or with `--vs` the A/B comparison.
pub fn run(plan: &Plan) -> ExitStatus {
    if let Err(e) = super::files::of_run(plan) {
        return error_exit(&e);
    }
    match sides(plan) {
        Some([first, second]) => ab::run::<Http>(
            [&first, &second],
            &ab::Output {
                rounds: plan.options.rounds,
                show: !plan.options.quiet && plan.options.json != Some(JsonOut::Stdout),
                json: plan.options.json.as_ref(),
                html: plan.options.html.as_deref(),
            },
        ),
        None => once(plan),
    }
}

/// One HTTP run: report, JSON, `.hgrm`, then the script's `done()`; errors last.
fn once(plan: &Plan) -> ExitStatus {
    let finished = match web::run(plan) {
        Ok(finished) => finished,
        Err(e) => return error_exit(&e),
    };
    let result = &finished.result;
    if !plan.options.quiet && plan.options.json != Some(JsonOut::Stdout) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(report::text::render(result).as_bytes());
        let _ = out.flush();
    }
    let saved = saved_run(&finished);
    // The results are saved before done() runs: an error or a hang in it cannot lose them.
    let mut failed = false;
    if let Some(json) = &plan.options.json {
        if let Err(e) = report::schema::write_value(&saved, json) {
            failed = true;
            fail(&format_args!("--json {e}"));
        }
    }
    if let Some(path) = &plan.options.html {
        let loaded = LoadedRun::new(RunData::Http(Box::new(saved.clone())), "run");
        if let Err(e) = super::write_page(path, loaded) {
            failed = true;
            fail(&e);
        }
    }
    if let Some(path) = &plan.hgrm {
        if let Err(e) = report::hgrm::write_hgrm(&result.latency, path) {
            failed = true;
            fail(&format_args!("--hgrm {e}"));
        }
    }
    if let (Some(path), Some(timeline)) = (&plan.hlog, &result.timeline) {
        if let Err(e) = report::hlog::write_hlog(timeline, result.elapsed, path) {
            failed = true;
            fail(&format_args!("--hlog {e}"));
        }
    }
    // As wrk: the script's done() runs after the report, in the main Lua state.
    if let Some(script) = &finished.script {
        if let Err(e) = script.done(result) {
            failed = true;
            fail(&e);
        }
    }
    // A script error stops the run: the report of what ran is printed, then the verdict says
    // the error, whatever else failed.
    if finished.script_error.is_none() {
        if failed {
            return ExitStatus::Failed;
        }
        if finished.abandoned > 0 {
            return fail(&format_args!(
                "{} worker threads never ended (a script hook that does not return?)",
                finished.abandoned
            ));
        }
    }
    exit_as(&saved)
}

/// A run's JSON document, with the script error that stopped it (if one did).
fn saved_run(finished: &web::Finished) -> report::json::SavedRun {
    report::json::SavedRun {
        script_error: finished.script_error.as_ref().map(ToString::to_string),
        ..report::json::SavedRun::from_result(&finished.result)
    }
}

/// `--vs URL2`'s two sides: the run's target, and the second one (its label, and HTTP/1.1 with
/// `--vs-http1`); neither writes files of its own.
fn sides(plan: &Plan) -> Option<[Plan; 2]> {
    let vs = plan.options.vs.as_ref()?;
    let first = Plan {
        options: RunOptions {
            vs: None,
            json: None,
            html: None,
            ..plan.options.clone()
        },
        hgrm: None,
        hlog: None,
        ..plan.clone()
    };
    let second = Plan {
        target: vs.clone(),
        options: RunOptions {
            label: plan
                .options
                .vs_label
                .clone()
                .unwrap_or_else(|| vs.url.clone()),
            ..first.options.clone()
        },
        http2: if plan.vs_http1 { None } else { plan.http2 },
        ..first.clone()
    };
    Some([first, second])
}

/// HTTP as a side of `--vs`.
struct Http;

impl Side for Http {
    type Plan = Plan;
    const MODE: &'static str = "http";

    fn label(plan: &Plan) -> &str {
        &plan.options.label
    }

    fn probe(plan: &Plan) -> Probe<'_> {
        web::probe(plan)
    }

    fn round(plan: &Plan) -> Result<Round, Error> {
        let finished = web::run(plan)?;
        Ok(Round {
            text: report::text::render(&finished.result),
            data: RunData::Http(Box::new(saved_run(&finished))),
            error: finished
                .script_error
                .as_ref()
                .map(|e| format!("script error: {e}")),
        })
    }
}
