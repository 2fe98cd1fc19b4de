//! An HTTP run (`tsumo URL`), alone or as one side of `--vs`: the report, the JSON, the page,
//! `.hgrm`, `.hlog`, then the script's `done()`; errors last.

use super::ab::{self, Round, Side};
use super::output::Outputs;
use super::{error_exit, exit_as, fail};
use crate::error::{Error, ExitStatus};
use crate::net::preflight::Probe;
use crate::plan::Plan;
use crate::report;
use crate::report::tools::saved::{LoadedRun, RunData};
use crate::stats::sink::Sink;
use crate::web;

/// `tsumo URL …`: the run, or with `--vs` the A/B comparison.
pub fn run(plan: &Plan) -> ExitStatus {
    super::with_dashboard(&plan.options, || run_or_vs(plan))
}

fn run_or_vs(plan: &Plan) -> ExitStatus {
    if let Err(e) = super::files::of_run(plan) {
        return error_exit(&e);
    }
    match sides(plan) {
        Some([first, second]) => ab::run::<Http>([&first, &second], &plan.options),
        None => once(plan),
    }
}

/// One HTTP run: report, JSON, page, `.hgrm`, `.hlog`, then the script's `done()`; errors last.
fn once(plan: &Plan) -> ExitStatus {
    let finished = match live_run(plan) {
        Ok(finished) => finished,
        Err(e) => return error_exit(&e),
    };
    let result = &finished.result;
    let mut outputs = Outputs::of(&plan.options);
    outputs.text(|| report::http::text::render(result));
    let saved = saved_run(&finished);
    // The results are saved before done() runs: an error or a hang in it cannot lose them.
    outputs.json(|| &saved);
    outputs.page(|| LoadedRun::new(RunData::Http(Box::new(saved.clone())), "run"));
    outputs.judged(|| {
        vec![LoadedRun::new(
            RunData::Http(Box::new(saved.clone())),
            "run",
        )]
    });
    outputs.file("--hgrm", plan.hgrm.as_deref(), |path| {
        report::http::hgrm::write_hgrm(&result.latency, path)
    });
    if let Some(timeline) = &result.timeline {
        outputs.file("--hlog", plan.hlog.as_deref(), |path| {
            report::http::hlog::write_hlog(timeline, result.elapsed, path)
        });
    }
    // As wrk: the script's done() runs after the report, in the main Lua state.
    let mut done_failed = false;
    if let Some(script) = &finished.script {
        if let Err(e) = script.done(result) {
            done_failed = true;
            fail(&e);
        }
    }
    // A script error stops the run: the report of what ran is printed, then the verdict says
    // the error, whatever else failed.
    if finished.script_error.is_some() {
        return exit_as(&saved);
    }
    outputs.status_or(|| {
        if done_failed {
            ExitStatus::Failed
        } else if finished.abandoned > 0 {
            fail(&format_args!(
                "{} worker threads never ended (a script hook that does not return?)",
                finished.abandoned
            ))
        } else {
            exit_as(&saved)
        }
    })
}

/// One HTTP run, shown on the dashboard when there is one.
pub(super) fn live_run(plan: &Plan) -> Result<web::Finished, crate::error::Error> {
    let data = crate::stats::http::live::Data {
        rate: plan.rate,
        stages: plan.stages.clone(),
        shards: plan.options.part.shard.count as u64,
        ..Default::default()
    };
    let feed = crate::dashboard::begin(&plan.options, data);
    let finished = web::run(plan)?;
    if let (Some(feed), Some(timeline)) = (feed, &finished.result.timeline) {
        let intervals = (0u64..).zip(timeline.intervals.iter().map(|(i, _)| i.clone()));
        feed.ended(&intervals.collect());
    }
    Ok(finished)
}

/// A run's JSON document, with the script error that stopped it (if one did).
fn saved_run(finished: &web::Finished) -> report::http::saved::SavedRun {
    report::http::saved::SavedRun {
        script_error: finished.script_error.as_ref().map(ToString::to_string),
        requests_log: finished.requests_log.clone(),
        ..report::http::saved::SavedRun::from_result(&finished.result)
    }
}

/// `--vs URL2`'s two sides: the run's target, and the second one (its label, HTTP/1.1 with
/// `--vs-http1`, HTTP/2 with `--vs-http2`); neither writes files of its own.
fn sides(plan: &Plan) -> Option<[Plan; 2]> {
    let (vs, [first, second]) = plan.options.vs_sides()?;
    let first = Plan {
        options: first,
        hgrm: None,
        hlog: None,
        requests: None,
        ..plan.clone()
    };
    let second = Plan {
        target: vs.clone(),
        options: second,
        protocol: plan.vs_protocol,
        ..first.clone()
    };
    Some([first, second])
}

/// HTTP as a side of `--vs`.
struct Http;

impl Side for Http {
    type Plan = Plan;
    const MODE: &'static str = report::http::MODE;

    fn label(plan: &Plan) -> &str {
        &plan.options.label
    }

    fn probe(plan: &Plan) -> Probe<'_> {
        web::probe(plan)
    }

    fn round(plan: &Plan) -> Result<Round, Error> {
        let finished = live_run(plan)?;
        Ok(Round {
            text: report::http::text::render(&finished.result),
            data: RunData::Http(Box::new(saved_run(&finished))),
            error: finished
                .script_error
                .as_ref()
                .map(|e| format!("script error: {e}")),
        })
    }
}
