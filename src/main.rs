//! tsumo's entry point: parse, run, render, exit code (0 ran, 1 failed, 2 bad input, 99 an
//! objective broke: see [`ExitStatus`]). Nothing else.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use tsumo::cli::{self, Parsed};
use tsumo::error::{Error, ExitStatus};
use tsumo::net::preflight::{self, Probe};
use tsumo::plan::{JsonOut, MahjongPlan, Plan};
use tsumo::report::saved::{LoadedRun, RunData, SavedRounds};
use tsumo::{mahjong, report, sys, web};

/// mimalloc: the many small, short-lived allocations of an HTTP/2 request (hyper's headers and
/// streams) cost less than in glibc's malloc (the crate docs' layout section, BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit` (4 in mimalloc.h's `mi_option_e`, v2 and v3): 0 commits
/// arena memory as it is used. The default (commit eagerly on systems that overcommit) made a
/// 4,096-player session 40 % larger (19.7 KB per player against 14.2 with glibc's malloc; 14.4
/// with this set to 0). It must be set before the first allocation reserves the first arena,
/// so a constructor (`.init_array`) sets it, before Rust's runtime allocates anything.
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

#[used]
#[link_section = ".init_array"]
static SET_ALLOCATOR_OPTIONS: extern "C" fn() = set_allocator_options;

extern "C" fn set_allocator_options() {
    // SAFETY: mi_option_set has no precondition; it runs once, before any thread exists.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
}

fn main() -> ExitCode {
    let plan = match cli::parse(std::env::args_os()) {
        Ok(Parsed::Run(plan)) => plan,
        Ok(Parsed::Mahjong(plan)) => {
            if let Err(e) = check_outputs(plan.json.as_ref(), None) {
                return error_exit(&e);
            }
            return match plan.vs {
                Some(_) => run_mahjong_ab(&plan),
                None => run_mahjong(&plan),
            };
        }
        Ok(Parsed::Doctor(plan)) => {
            let network = tsumo::net::preflight::doctor_checks(&plan);
            return tsumo::sys::doctor::run(&plan, network);
        }
        Ok(Parsed::Compare(options)) => return exit(report::compare::run(&options)),
        Ok(Parsed::Merge(options)) => {
            let checked = match &options.output {
                JsonOut::File(path) => {
                    check_tool_output(path, &options.files, "the files to merge")
                }
                JsonOut::Stdout => Ok(()),
            };
            return exit(checked.and_then(|()| report::merge::run(&options)));
        }
        Ok(Parsed::Plot(options)) => {
            let output = (options.output.as_os_str() != "-").then_some(options.output.as_path());
            return exit(
                output
                    .map_or(Ok(()), |path| {
                        check_tool_output(path, &options.files, "the files to plot")
                    })
                    .and_then(|()| report::plot::run(&options)),
            );
        }
        Ok(Parsed::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(e) => return error_exit(&e),
    };
    if let Err(e) = check_outputs(plan.json.as_ref(), plan.hgrm.as_deref()) {
        return error_exit(&e);
    }
    if let Some(hlog) = &plan.hlog {
        if let Err(e) = sys::output::check_writable("--hlog", hlog) {
            return error_exit(&e);
        }
    }
    match plan.vs {
        Some(_) => run_ab(&plan),
        None => run_http(&plan),
    }
}

/// One HTTP run: report, JSON, `.hgrm`, then the script's `done()`; errors last.
fn run_http(plan: &Plan) -> ExitCode {
    let finished = match web::run(plan) {
        Ok(finished) => finished,
        Err(e) => return error_exit(&e),
    };
    let result = &finished.result;
    if !plan.quiet && plan.json != Some(JsonOut::Stdout) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(report::text::render(result).as_bytes());
        let _ = out.flush();
    }
    // The results are saved before done() runs: an error or a hang in it cannot lose them.
    let mut failed = false;
    if let Some(json) = &plan.json {
        if let Err(e) = report::schema::write_value(&saved_run(&finished), json) {
            failed = true;
            fail(&format_args!("--json {e}"));
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
    // A script error stops the run; the report of what ran is printed, then the error.
    if let Some(e) = &finished.script_error {
        return fail(&format_args!("script error: {e}"));
    }
    if failed {
        return ExitCode::FAILURE;
    }
    if finished.abandoned > 0 {
        return fail(&format_args!(
            "{} worker threads never ended (a script hook that does not return?)",
            finished.abandoned
        ));
    }
    if result.counters.requests == 0 {
        let errors = result.counters.errors.socket_total();
        return fail(&format_args!(
            "no response was received ({errors} socket errors, {} requests never sent)",
            result.counters.unsent.total()
        ));
    }
    match report::objectives::broken_in_run(result) {
        Some(broken) => fail_as(ExitStatus::ObjectiveBroken, &broken),
        None => ExitCode::SUCCESS,
    }
}

/// A run's JSON document, with the script error that stopped it (if one did).
fn saved_run(finished: &web::Finished) -> report::json::SavedRun {
    report::json::SavedRun {
        script_error: finished.script_error.as_ref().map(ToString::to_string),
        ..report::json::SavedRun::from_result(&finished.result)
    }
}

/// `--vs URL2`: the same load against both targets, alternated round by round, then compared.
fn run_ab(plan: &Plan) -> ExitCode {
    let Some(vs) = &plan.vs else {
        return run_http(plan);
    };
    let first = Plan {
        vs: None,
        json: None,
        hgrm: None,
        hlog: None,
        ..plan.clone()
    };
    let second = Plan {
        target: vs.clone(),
        label: plan.vs_label.clone().unwrap_or_else(|| vs.url.clone()),
        http2: if plan.vs_http1 { None } else { plan.http2 },
        ..first.clone()
    };
    let show = !plan.quiet && plan.json != Some(JsonOut::Stdout);
    let probes = [&first, &second].map(|run| (run.label.as_str(), web::probe(run)));
    if let Err(failed) = preflight_both(probes) {
        return failed;
    }
    compare_rounds(
        "http",
        [&first, &second],
        plan.rounds,
        show,
        plan.json.as_ref(),
        |run| {
            let finished = web::run(run).map_err(|e| labelled(&run.label, &e))?;
            Ok(Round {
                label: run.label.clone(),
                text: report::text::render(&finished.result),
                data: RunData::Http(Box::new(saved_run(&finished))),
                error: finished
                    .script_error
                    .as_ref()
                    .map(|e| format!("script error: {e}")),
            })
        },
    )
}

/// `tsumo mahjong --vs URL2`: the same session against both servers, alternated, then compared.
fn run_mahjong_ab(plan: &MahjongPlan) -> ExitCode {
    let Some(vs) = &plan.vs else {
        return run_mahjong(plan);
    };
    let first = MahjongPlan {
        vs: None,
        json: None,
        ..plan.clone()
    };
    let second = MahjongPlan {
        server: vs.clone(),
        label: plan.vs_label.clone().unwrap_or_else(|| vs.url.clone()),
        ..first.clone()
    };
    let show = !plan.quiet && plan.json != Some(JsonOut::Stdout);
    let probes = [&first, &second].map(|run| (run.label.as_str(), mahjong::session::probe(run)));
    if let Err(failed) = preflight_both(probes) {
        return failed;
    }
    compare_rounds(
        "mahjong",
        [&first, &second],
        plan.rounds,
        show,
        plan.json.as_ref(),
        |run| {
            let result = mahjong::session::run(run).map_err(|e| labelled(&run.label, &e))?;
            let saved = report::mahjong::saved(&result);
            Ok(Round {
                label: run.label.clone(),
                text: report::mahjong::render(&result),
                // As a single session: sessions left on the server, most players failed.
                error: saved
                    .failure
                    .as_ref()
                    .map(|f| format!("{}: {f}", run.label)),
                data: RunData::Mahjong(Box::new(saved)),
            })
        },
    )
}

/// Both targets of an A/B run (each with its label) answer before round 1, or nothing runs:
/// the failure, named by the label, is the exit code.
fn preflight_both(probes: [(&str, Probe<'_>); 2]) -> Result<(), ExitCode> {
    for (label, probe) in probes {
        if let Err(e) = preflight::preflight_blocking(probe) {
            let (status, line) = labelled(label, &e);
            return Err(fail_as(status, &line));
        }
    }
    Ok(())
}

/// An error of one side of an A/B run: its line, named by the side's label, and its status.
fn labelled(label: &str, e: &Error) -> (ExitStatus, String) {
    (e.exit_status(), format!("{label}: {e}"))
}

/// One finished run of an A/B comparison.
struct Round {
    label: String,
    /// Its text report.
    text: String,
    data: RunData,
    /// What made it fail (a script error; a session's failure): the comparison ends after it,
    /// exit 1.
    error: Option<String>,
}

/// The A/B loop of both modes: `run` runs one of the two plans; rounds alternate the two so
/// that a shared machine's drift hits both alike. Ends with the comparison table; `--json` gets
/// every run. A signal (or an error) ends the whole comparison, not only its round: the run it
/// cut short is left out of the comparison, and the text and the JSON say so.
fn compare_rounds<P>(
    mode: &'static str,
    plans: [&P; 2],
    rounds: u32,
    show: bool,
    json: Option<&JsonOut>,
    mut run: impl FnMut(&P) -> Result<Round, (ExitStatus, String)>,
) -> ExitCode {
    // One handler for the process, from here on: a signal between two rounds, or while a
    // round prepares, ends the comparison before that round sends anything (its engine reads
    // the same handler and stops at once on a signal it had not seen).
    let watched_from = match tsumo::engine::signals::watch() {
        Ok(mark) => mark,
        Err(e) => return error_exit(&e),
    };
    let signalled = || tsumo::engine::signals::since(watched_from);
    let mut runs: Vec<LoadedRun> = Vec::new();
    let mut ended_by: Option<String> = None;
    let mut error: Option<String> = None;
    // A round that could not start for bad input (a script that does not load) is a 2.
    let mut error_status = ExitStatus::Failed;
    let mut stopped = String::new();
    'rounds: for round in 1..=rounds {
        for plan in plans {
            let stopped_before = |signal: &str, runs: &[LoadedRun]| match runs.last() {
                Some(last) => format!(
                    "Stopped by {signal} after {} of {rounds}: no later round was run.",
                    last.source
                ),
                None => format!("Stopped by {signal} before round 1: nothing was run."),
            };
            if let Some(signal) = signalled() {
                stopped = stopped_before(signal, &runs);
                ended_by = Some(signal.to_string());
                break 'rounds;
            }
            let done = match run(plan) {
                Ok(done) => done,
                Err((status, e)) => {
                    // A signal while the round prepared stopped it before it sent anything.
                    if let Some(signal) = signalled() {
                        stopped = stopped_before(signal, &runs);
                        ended_by = Some(signal.to_string());
                        break 'rounds;
                    }
                    error = Some(e);
                    error_status = status;
                    break 'rounds;
                }
            };
            let name = format!("{} round {round}", done.label);
            let mut loaded = LoadedRun::new(done.data, &name);
            // A run cut short, or stopped by its script, would skew its label's mean.
            let cut_by = loaded.cut_by_signal();
            if cut_by.is_some() || done.error.is_some() {
                loaded.left_out = loaded.ended_early().or_else(|| done.error.clone());
            }
            if show {
                let mut out = std::io::stdout().lock();
                let mark = match loaded.ended_early() {
                    Some(early) => format!(" ({early})"),
                    None => String::new(),
                };
                let _ = writeln!(out, "== {}, round {round} of {rounds}{mark} ==", done.label);
                let _ = out.write_all(done.text.as_bytes());
                let _ = writeln!(out);
                let _ = out.flush();
            }
            runs.push(loaded);
            // The round's own signal, or one that came as it ended.
            if let Some(signal) = cut_by.or_else(|| signalled().map(str::to_string)) {
                stopped =
                    format!("Stopped by {signal} in {name} of {rounds}: no later round was run.");
                ended_by = Some(signal);
            }
            error = done.error;
            if ended_by.is_some() || error.is_some() {
                break 'rounds;
            }
        }
    }
    if error.is_some() && ended_by.is_none() {
        ended_by = Some("error".to_string());
    }
    if show {
        if !stopped.is_empty() {
            println!("{stopped}");
        }
        if !runs.is_empty() {
            match report::compare::render(&runs) {
                Ok(table) => print!("{table}"),
                Err(e) => return error_exit(&e),
            }
        }
    }
    if let Some(json) = json {
        let document = SavedRounds::new(mode, &runs, rounds, ended_by, error.clone());
        if let Err(e) = report::schema::write_value(&document, json) {
            let failed = fail(&format_args!("--json {e}"));
            if error.is_none() {
                return failed;
            }
        }
    }
    match error {
        Some(e) => fail_as(error_status, &e),
        None => ExitCode::SUCCESS,
    }
}

/// `tsumo mahjong …`: run the session, print its report, write its JSON.
fn run_mahjong(plan: &MahjongPlan) -> ExitCode {
    let result = match mahjong::session::run(plan) {
        Ok(result) => result,
        Err(e) => return error_exit(&e),
    };
    if !plan.quiet && plan.json != Some(JsonOut::Stdout) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(report::mahjong::render(&result).as_bytes());
        let _ = out.flush();
    }
    if let Some(json) = &plan.json {
        if let Err(e) = report::mahjong::write(&result, json) {
            return fail(&format_args!("--json {e}"));
        }
    }
    match report::mahjong::failure(&result) {
        Some(failure) => fail(&failure),
        None => match report::objectives::broken_in_session(&result) {
            Some(broken) => fail_as(ExitStatus::ObjectiveBroken, &broken),
            None => ExitCode::SUCCESS,
        },
    }
}

/// `--json FILE` (or `-o FILE`) and `--hgrm FILE` can be written, and are two files: checked
/// before any traffic.
fn check_outputs(json: Option<&JsonOut>, hgrm: Option<&Path>) -> Result<(), Error> {
    if let (Some(JsonOut::File(json)), Some(hgrm)) = (json, hgrm) {
        sys::output::check_distinct(("--json", json), ("--hgrm", hgrm))?;
    }
    if let Some(JsonOut::File(path)) = json {
        sys::output::check_writable("--json", path)?;
    }
    if let Some(path) = hgrm {
        sys::output::check_writable("--hgrm", path)?;
    }
    Ok(())
}

/// A tool's `-o FILE` is not one of its inputs and can be written: checked before any work.
fn check_tool_output(path: &Path, inputs: &[std::path::PathBuf], what: &str) -> Result<(), Error> {
    let files: Vec<&Path> = inputs
        .iter()
        .map(|p| p.as_path())
        .filter(|p| p.as_os_str() != "-")
        .collect();
    sys::output::check_not_input("-o", path, &files, what)?;
    sys::output::check_writable("-o", path)
}

/// The exit code of a command that either worked or failed with one error line.
fn exit(result: Result<(), Error>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => error_exit(&e),
    }
}

/// An error that ended tsumo: its line, and the status its kind says (2 for bad input).
fn error_exit(e: &Error) -> ExitCode {
    fail_as(e.exit_status(), e)
}

/// A run that failed: its line, exit 1.
fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    fail_as(ExitStatus::Failed, e)
}

fn fail_as(status: ExitStatus, e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("tsumo: {e}");
    status.into()
}
