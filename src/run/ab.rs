//! `--vs URL2`, both modes: the same load against two targets, alternated round by round so
//! that a shared machine's drift hits both alike, then compared. One loop; each mode gives its
//! two plans and runs one round through [`Side`].

use std::io::Write;

use super::{error_exit, fail, fail_as};
use crate::engine::signals;
use crate::error::{Error, ExitStatus};
use crate::net::preflight::{self, Probe};
use crate::plan::JsonOut;
use crate::report;
use crate::report::tools::saved::{LoadedRun, RunData, SavedRounds};

/// One mode as the A/B loop runs it.
pub trait Side {
    /// The mode's plan: one side of the comparison.
    type Plan;
    /// `"http"` or `"mahjong"`, as the comparison's file says.
    const MODE: &'static str;
    /// The side's name in the rounds' headings and the table.
    fn label(plan: &Self::Plan) -> &str;
    /// What the pre-flight check of this side's target is told.
    fn probe(plan: &Self::Plan) -> Probe<'_>;
    /// Runs one round of this side.
    fn round(plan: &Self::Plan) -> Result<Round, Error>;
}

/// One finished run of an A/B comparison.
pub struct Round {
    /// Its text report.
    pub text: String,
    pub data: RunData,
    /// What made it fail (a script error; a session's failure): the comparison ends after it,
    /// exit 1.
    pub error: Option<String>,
}

/// What the comparison prints and writes, besides its two sides.
pub struct Output<'a> {
    /// `--rounds`.
    pub rounds: u32,
    /// The rounds' reports and the table go to stdout.
    pub show: bool,
    pub json: Option<&'a JsonOut>,
    /// `--html FILE`: the comparison's page.
    pub html: Option<&'a std::path::Path>,
}

/// Both sides answer before round 1, or nothing runs; then the rounds, the table and the file.
pub fn run<S: Side>(sides: [&S::Plan; 2], output: &Output<'_>) -> ExitStatus {
    match preflight_both::<S>(sides) {
        Ok(()) => compare_rounds::<S>(sides, output),
        Err(failed) => failed,
    }
}

/// Both targets of an A/B run (each with its label) answer before round 1, or nothing runs:
/// the failure, named by the label, is the exit status.
fn preflight_both<S: Side>(sides: [&S::Plan; 2]) -> Result<(), ExitStatus> {
    for side in sides {
        if let Err(e) = preflight::preflight_blocking(S::probe(side)) {
            let (status, line) = labelled(S::label(side), &e);
            return Err(fail_as(status, &line));
        }
    }
    Ok(())
}

/// An error of one side of an A/B run: its line, named by the side's label, and its status.
fn labelled(label: &str, e: &Error) -> (ExitStatus, String) {
    (e.exit_status(), format!("{label}: {e}"))
}

/// The A/B loop of both modes: rounds alternate the two sides. Ends with the comparison table;
/// `--json` gets every run. A signal (or an error) ends the whole comparison, not only its
/// round: the run it cut short is left out of the comparison, and the text and the JSON say so.
fn compare_rounds<S: Side>(sides: [&S::Plan; 2], output: &Output<'_>) -> ExitStatus {
    let Output {
        rounds,
        show,
        json,
        html,
    } = *output;
    // One handler for the process, from here on: a signal between two rounds, or while a
    // round prepares, ends the comparison before that round sends anything (its engine reads
    // the same handler and stops at once on a signal it had not seen).
    let watched_from = match signals::watch() {
        Ok(mark) => mark,
        Err(e) => return error_exit(&e),
    };
    let signalled = || signals::since(watched_from);
    let mut runs: Vec<LoadedRun> = Vec::new();
    let mut ended_by: Option<String> = None;
    let mut error: Option<String> = None;
    // A round that could not start for bad input (a script that does not load) is a 2.
    let mut error_status = ExitStatus::Failed;
    let mut stopped = String::new();
    'rounds: for round in 1..=rounds {
        for side in sides {
            let label = S::label(side);
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
            let done = match S::round(side) {
                Ok(done) => done,
                Err(e) => {
                    // A signal while the round prepared stopped it before it sent anything.
                    if let Some(signal) = signalled() {
                        stopped = stopped_before(signal, &runs);
                        ended_by = Some(signal.to_string());
                        break 'rounds;
                    }
                    let (status, line) = labelled(label, &e);
                    error = Some(line);
                    error_status = status;
                    break 'rounds;
                }
            };
            let name = format!("{label} round {round}");
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
                let _ = writeln!(out, "== {label}, round {round} of {rounds}{mark} ==");
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
            match report::tools::compare::render(&runs) {
                Ok(table) => print!("{table}"),
                Err(e) => return error_exit(&e),
            }
        }
    }
    if let Some(json) = json {
        let document = SavedRounds::new(S::MODE, &runs, rounds, ended_by, error.clone());
        if let Err(e) = report::schema::write_value(&document, json) {
            let failed = fail(&format_args!("--json {e}"));
            if error.is_none() {
                return failed;
            }
        }
    }
    if let (Some(path), false) = (html, runs.is_empty()) {
        let written = report::tools::page::render_comparison(&runs)
            .and_then(|page| report::tools::page::write(&page, path, "--html"));
        if let Err(e) = written {
            let failed = fail(&e);
            if error.is_none() {
                return failed;
            }
        }
    }
    match error {
        Some(e) => fail_as(error_status, &e),
        None => ExitStatus::Ran,
    }
}
