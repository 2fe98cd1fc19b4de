//! `--vs URL2`, both modes: the same load against two targets, alternated round by round so
//! that a shared machine's drift hits both alike, then compared. One loop; each mode gives its
//! two plans and runs one round through [`Side`].

use super::output::Outputs;
use super::{error_exit, fail_as};
use crate::engine::signals;
use crate::error::{Error, ExitStatus};
use crate::net::preflight::{self, Probe};
use crate::plan::RunOptions;
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

/// Both sides answer before round 1, or nothing runs; then the rounds, the table and the file.
/// `options` are the command's (`--rounds`, and what it prints and writes), not a side's.
pub fn run<S: Side>(sides: [&S::Plan; 2], options: &RunOptions) -> ExitStatus {
    match preflight_both::<S>(sides) {
        Ok(()) => compare_rounds::<S>(sides, options),
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
fn compare_rounds<S: Side>(sides: [&S::Plan; 2], options: &RunOptions) -> ExitStatus {
    let rounds = options.rounds;
    let mut outputs = Outputs::of(options);
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
            let (loaded, error_of_round) =
                round_run(done, &name, (label, round, rounds), &mut outputs);
            // A run cut short, or stopped by its script, would skew its label's mean.
            let cut_by = loaded.cut_by_signal();
            runs.push(loaded);
            // The round's own signal, or one that came as it ended.
            if let Some(signal) = cut_by.or_else(|| signalled().map(str::to_string)) {
                stopped =
                    format!("Stopped by {signal} in {name} of {rounds}: no later round was run.");
                ended_by = Some(signal);
            }
            error = error_of_round;
            if ended_by.is_some() || error.is_some() {
                break 'rounds;
            }
        }
    }
    if error.is_some() && ended_by.is_none() {
        ended_by = Some("error".to_string());
    }
    if outputs.shows_text() {
        if !stopped.is_empty() {
            outputs.text(|| format!("{stopped}\n"));
        }
        if !runs.is_empty() {
            match report::tools::compare::render(&runs) {
                Ok(table) => outputs.text(|| table),
                Err(e) => return error_exit(&e),
            }
        }
    }
    let command = &options.part.command;
    outputs.json(|| SavedRounds::new(S::MODE, &runs, rounds, ended_by, error.clone(), command));
    outputs.judged(|| runs.clone());
    // Nothing ran: no page.
    if !runs.is_empty() {
        outputs.comparison_page(&runs);
    }
    // A round's error is the verdict, whatever else failed.
    match error {
        Some(e) => fail_as(error_status, &e),
        None => outputs.status_or(|| ExitStatus::Ran),
    }
}

/// A round's run named `name` (`{label} round {round}`), its text shown; left out of the
/// comparison when cut short or stopped by its script (either would skew its label's mean).
/// With the round's error.
fn round_run(
    done: Round,
    name: &str,
    (label, round, rounds): (&str, u32, u32),
    outputs: &mut Outputs,
) -> (LoadedRun, Option<String>) {
    let mut loaded = LoadedRun::new(done.data, name);
    if loaded.cut_by_signal().is_some() || done.error.is_some() {
        loaded.left_out = loaded.ended_early().or_else(|| done.error.clone());
    }
    outputs.text(|| {
        let mark = match loaded.ended_early() {
            Some(early) => format!(" ({early})"),
            None => String::new(),
        };
        format!(
            "== {label}, round {round} of {rounds}{mark} ==\n{}\n",
            done.text
        )
    });
    (loaded, done.error)
}
