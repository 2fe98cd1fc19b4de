//! tsumo's entry point: parse, run, render, exit code. Nothing else.

use std::io::Write;
use std::process::ExitCode;

use tsumo::cli::{self, Parsed};
use tsumo::plan::{JsonOut, MahjongPlan, Plan};
use tsumo::{http, mahjong, report};

fn main() -> ExitCode {
    let plan = match cli::parse(std::env::args_os()) {
        Ok(Parsed::Run(plan)) => plan,
        Ok(Parsed::Mahjong(plan)) => {
            return match plan.vs {
                Some(_) => run_mahjong_ab(&plan),
                None => run_mahjong(&plan),
            }
        }
        Ok(Parsed::Doctor(plan)) => {
            let target = tsumo::net::preflight::doctor_check(&plan);
            return tsumo::sys::doctor::run(&plan, target);
        }
        Ok(Parsed::Compare(options)) => return exit(report::compare::run(&options)),
        Ok(Parsed::Merge(options)) => return exit(report::merge::run(&options)),
        Ok(Parsed::Plot(options)) => return exit(report::plot::run(&options)),
        Ok(Parsed::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(e) => return fail(&e),
    };
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
            return fail(&e);
        }
    }
    if let Some(path) = &plan.hgrm {
        if let Err(e) = report::hgrm::write_hgrm(&result.latency, path) {
            return fail(&e);
        }
    }
    // A script error stops the run; the report of what ran is printed, then the error.
    if let Some(e) = &finished.script_error {
        return fail(&format_args!("script error: {e}"));
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
        ..first.clone()
    };
    let show = !plan.quiet && plan.json != Some(JsonOut::Stdout);
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
            let document =
                serde_json::to_value(report::json::SavedRun::from_result(&finished.result))
                    .map_err(|e| e.to_string())?;
            Ok((
                run.label.clone(),
                report::text::render(&finished.result),
                document,
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
    compare_rounds(
        [&first, &second],
        plan.rounds,
        show,
        plan.json.as_ref(),
        |run| {
            let result = mahjong::session::run(run).map_err(|e| format!("{}: {e}", run.label))?;
            Ok((
                run.label.clone(),
                report::mahjong::render(&result),
                report::mahjong::to_json(&result),
            ))
        },
    )
}

/// The A/B loop of both modes: `run` runs one of the two plans and gives its label, text report
/// and JSON document; rounds alternate the two so that a shared machine's drift hits both alike.
/// Ends with the comparison table; `--json` gets every run.
fn compare_rounds<P>(
    plans: [&P; 2],
    rounds: u32,
    show: bool,
    json: Option<&JsonOut>,
    mut run: impl FnMut(&P) -> Result<(String, String, serde_json::Value), String>,
) -> ExitCode {
    let mut runs = Vec::new();
    let mut documents = Vec::new();
    for round in 1..=rounds {
        for plan in plans {
            let (label, text, document) = match run(plan) {
                Ok(done) => done,
                Err(e) => return fail(&e),
            };
            if show {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "== {label}, round {round} of {rounds} ==");
                let _ = out.write_all(text.as_bytes());
                let _ = writeln!(out);
                let _ = out.flush();
            }
            let source = format!("{label} round {round}");
            match report::compare::from_value(document.clone(), &source) {
                Ok(loaded) => runs.push(loaded),
                Err(e) => return fail(&e),
            }
            documents.push(document);
        }
    }
    if show {
        match report::compare::render(&runs) {
            Ok(table) => print!("{table}"),
            Err(e) => return fail(&e),
        }
    }
    if let Some(json) = json {
        let all = serde_json::json!({ "runs": documents });
        if let Err(e) = report::json::write_value(&all, json) {
            return fail(&e);
        }
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
            return fail(&e);
        }
    }
    ExitCode::SUCCESS
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
