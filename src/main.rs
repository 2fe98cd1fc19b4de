//! tsumo's entry point: parse, run, render, exit code. Nothing else.

use std::io::Write;
use std::process::ExitCode;

use tsumo::cli::{self, Parsed};
use tsumo::plan::{JsonOut, MahjongPlan};
use tsumo::{engine, mahjong, report};

fn main() -> ExitCode {
    let plan = match cli::parse(std::env::args_os()) {
        Ok(Parsed::Run(plan)) => plan,
        Ok(Parsed::Mahjong(plan)) => return run_mahjong(&plan),
        Ok(Parsed::Doctor(plan)) => return tsumo::sys::doctor::run(&plan),
        Ok(Parsed::Compare(options)) => return report::compare::run(&options),
        Ok(Parsed::Merge(options)) => return report::merge::run(&options),
        Ok(Parsed::Plot(options)) => return report::plot::run(&options),
        Ok(Parsed::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(e) => return fail(&e),
    };
    let finished = match engine::run(&plan) {
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
            return fail(&e);
        }
    }
    // A script error stops the run; the report of what ran is printed, then the error.
    if let Some(e) = &finished.script_error {
        return fail(&format_args!("script error: {e}"));
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
        let _ = out.write_all(mahjong::report::render(&result).as_bytes());
        let _ = out.flush();
    }
    if let Some(json) = &plan.json {
        if let Err(e) = mahjong::report::write(&result, json) {
            return fail(&e);
        }
    }
    ExitCode::SUCCESS
}

fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("tsumo: {e}");
    ExitCode::FAILURE
}
