//! tsumo's entry point: parse, run, render, exit code. Nothing else.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use tsumo::cli::{self, Parsed};
use tsumo::net::preflight::{self, Probe};
use tsumo::plan::{JsonOut, MahjongPlan, Plan};
use tsumo::report::saved::{LoadedRun, RunData};
use tsumo::{http, mahjong, report, sys};

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
                return fail(&e);
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
                JsonOut::File(path) => sys::output::check_writable("-o", path),
                JsonOut::Stdout => Ok(()),
            };
            return exit(checked.and_then(|()| report::merge::run(&options)));
        }
        Ok(Parsed::Plot(options)) => {
            let output = (options.output.as_os_str() != "-").then_some(options.output.as_path());
            return exit(
                output
                    .map_or(Ok(()), |path| sys::output::check_writable("-o", path))
                    .and_then(|()| report::plot::run(&options)),
            );
        }
        Ok(Parsed::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(e) => return fail(&e),
    };
    if let Err(e) = check_outputs(plan.json.as_ref(), plan.hgrm.as_deref()) {
        return fail(&e);
    }
    match plan.vs {
        Some(_) => run_ab(&plan),
        None => run_http(&plan),
    }
}

/// One HTTP run: report, the script's `done()`, JSON, `.hgrm`.
fn run_http(plan: &Plan) -> ExitCode {
    let finished = match http::run(plan) {
        Ok(finished) => finished,
        Err(e) => return fail(&e),
    };
    let result = &finished.result;
    if !plan.quiet && plan.json != Some(JsonOut::Stdout) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(report::text::render(result).as_bytes());
        let _ = out.flush();
    }
    // As wrk: the script's done() runs after the report, in the main Lua state.
    if let Some(script) = &finished.script {
        if let Err(e) = script.done(result) {
            return fail(&e);
        }
    }
    if let Some(json) = &plan.json {
        if let Err(e) = report::json::write(result, json) {
            return fail(&format_args!("--json {e}"));
        }
    }
    if let Some(path) = &plan.hgrm {
        if let Err(e) = report::hgrm::write_hgrm(&result.latency, path) {
            return fail(&format_args!("--hgrm {e}"));
        }
    }
    // A script error stops the run; the report of what ran is printed, then the error.
    if let Some(e) = &finished.script_error {
        return fail(&format_args!("script error: {e}"));
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
    ExitCode::SUCCESS
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
        ..plan.clone()
    };
    let second = Plan {
        target: vs.clone(),
        label: plan.vs_label.clone().unwrap_or_else(|| vs.url.clone()),
        http2: if plan.vs_http1 { None } else { plan.http2 },
        ..first.clone()
    };
    let show = !plan.quiet && plan.json != Some(JsonOut::Stdout);
    let probes = [&first, &second].map(|run| (run.label.as_str(), http::probe(run)));
    if let Err(failed) = preflight_both(probes) {
        return failed;
    }
    compare_rounds(
        [&first, &second],
        plan.rounds,
        show,
        plan.json.as_ref(),
        |run| {
            let finished = http::run(run).map_err(|e| format!("{}: {e}", run.label))?;
            if let Some(e) = &finished.script_error {
                return Err(format!("script error: {e}"));
            }
            let saved = report::json::SavedRun::from_result(&finished.result);
            Ok((
                run.label.clone(),
                report::text::render(&finished.result),
                RunData::Http(Box::new(saved)),
            ))
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
        [&first, &second],
        plan.rounds,
        show,
        plan.json.as_ref(),
        |run| {
            let result = mahjong::session::run(run).map_err(|e| format!("{}: {e}", run.label))?;
            let saved = report::session::SavedSession::from_result(&result);
            Ok((
                run.label.clone(),
                report::mahjong::render(&result),
                RunData::Mahjong(Box::new(saved)),
            ))
        },
    )
}

/// Both targets of an A/B run (each with its label) answer before round 1, or nothing runs:
/// the failure, named by the label, is the exit code.
fn preflight_both(probes: [(&str, Probe<'_>); 2]) -> Result<(), ExitCode> {
    for (label, probe) in probes {
        if let Err(e) = preflight::preflight_blocking(probe) {
            return Err(fail(&format_args!("{label}: {e}")));
        }
    }
    Ok(())
}

/// The A/B loop of both modes: `run` runs one of the two plans and gives its label, text report
/// and saved result; rounds alternate the two so that a shared machine's drift hits both alike.
/// Ends with the comparison table; `--json` gets every run.
fn compare_rounds<P>(
    plans: [&P; 2],
    rounds: u32,
    show: bool,
    json: Option<&JsonOut>,
    mut run: impl FnMut(&P) -> Result<(String, String, RunData), String>,
) -> ExitCode {
    let mut runs: Vec<LoadedRun> = Vec::new();
    // `--json` gets every run that finished, in the order run, also when a later one fails.
    let write_json = |runs: &[LoadedRun]| {
        /// `--json` of an A/B session: every run's document.
        #[derive(serde::Serialize)]
        struct Rounds<'a> {
            runs: Vec<&'a RunData>,
        }
        let Some(json) = json else {
            return Ok(());
        };
        let all = Rounds {
            runs: runs.iter().map(|r| &r.data).collect(),
        };
        report::json::write_value(&all, json).map_err(|e| format!("--json {e}"))
    };
    for round in 1..=rounds {
        for plan in plans {
            let (label, text, data) = match run(plan) {
                Ok(done) => done,
                Err(e) => {
                    if let Err(written) = write_json(&runs) {
                        eprintln!("tsumo: {written}");
                    }
                    return fail(&e);
                }
            };
            if show {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "== {label}, round {round} of {rounds} ==");
                let _ = out.write_all(text.as_bytes());
                let _ = writeln!(out);
                let _ = out.flush();
            }
            runs.push(LoadedRun::new(data, &format!("{label} round {round}")));
        }
    }
    if show {
        match report::compare::render(&runs) {
            Ok(table) => print!("{table}"),
            Err(e) => return fail(&e),
        }
    }
    if let Err(e) = write_json(&runs) {
        return fail(&e);
    }
    ExitCode::SUCCESS
}

/// `tsumo mahjong …`: run the session, print its report, write its JSON.
fn run_mahjong(plan: &MahjongPlan) -> ExitCode {
    let result = match mahjong::session::run(plan) {
        Ok(result) => result,
        Err(e) => return fail(&e),
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
        None => ExitCode::SUCCESS,
    }
}

/// `--json FILE` (or `-o FILE`) and `--hgrm FILE` can be written: checked before any traffic.
fn check_outputs(json: Option<&JsonOut>, hgrm: Option<&Path>) -> Result<(), tsumo::error::Error> {
    if let Some(JsonOut::File(path)) = json {
        sys::output::check_writable("--json", path)?;
    }
    if let Some(path) = hgrm {
        sys::output::check_writable("--hgrm", path)?;
    }
    Ok(())
}

/// The exit code of a command that either worked or failed with one error line.
fn exit(result: Result<(), tsumo::error::Error>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("tsumo: {e}");
    ExitCode::FAILURE
}
