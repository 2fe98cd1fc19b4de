//! `tsumo mahjong --capacity`: how many players a majiang-server carries within the `--slo`
//! objectives, each step of [`crate::capacity::search`] a number of players.
//!
//! The load grows as real load does: each step's new tables are one more session (a "cohort",
//! `mahjong::session` on its own thread, its players named after the earlier cohorts'), while
//! the earlier cohorts keep playing, game after game. A step is judged once its new tables are
//! seated and playing (each new table's first game started, or its players failed), after `--warmup`,
//! over `--step` of play: the judged window is the difference of every cohort's recorders read
//! at its start and at its end, so the measures cover that window alone; the step's failures
//! (logins and connects that failed, errors, disconnects) count from the moment its new tables
//! began to log in, so a step whose players could not connect is broken, not judged on those
//! that could. A cohort that ends on its own (none of its tables can play) leaves its record
//! to the step it ended in. Each step is saved as a session (a step's slice of the play). On a
//! terminal a progress line shows the step, its target, the players playing and how the objectives
//! stand over the window so far. When the search needs fewer players (bisection, a
//! confirmation below), the newest cohorts log out, down to at most the count asked for, tables
//! are added back up to it, and the backlog settles during `--pause` before the next judgement.
//! Every player is logged out at the end — on an answer, a limit, an error or Ctrl-C — and
//! sessions left on the server are listed and make the exit 1.
//!
//! Here the search's end: its saved search, its outputs and its exit status. The steps are
//! run in `steps` (over the cohorts of `cohort`), their progress line drawn by `progress`;
//! `window` reads what a judged window says beyond its objectives (the draws due, what disturbed
//! the machine).

mod cohort;
mod progress;
mod steps;
mod window;

use super::output::Outputs;
use super::{error_exit, fail};
use crate::capacity::{self, LoadUnit};
use crate::engine::signals;
use crate::error::ExitStatus;
use crate::mahjong::session;
use crate::net::preflight::preflight_blocking;
use crate::plan::MahjongCapacityPlan;
use crate::report;
use crate::report::capacity::SavedSearch;
use crate::report::tools::saved::{LoadedRun, RunData};
use steps::{Cohorts, Searched};

/// `tsumo mahjong --capacity …`: the search, its table and answer, `--json`; exit 0 with an
/// answer, 1 when sessions were left on the server or a cohort's thread panicked (a cohort
/// whose players failed is its step's errors, said on stderr as it ends).
pub fn run(plan: &MahjongCapacityPlan) -> ExitStatus {
    super::with_dashboard(&plan.session.options, || search(plan))
}

fn search(plan: &MahjongCapacityPlan) -> ExitStatus {
    let session = &plan.session;
    if let Err(e) = super::files::of_session(session) {
        return error_exit(&e);
    }
    let mark = match signals::watch() {
        Ok(mark) => mark,
        Err(e) => return error_exit(&e),
    };
    // A server that does not answer is one line before any step (each step's session checks
    // it again).
    if let Err(e) = preflight_blocking(session::probe(session)) {
        return error_exit(&e);
    }
    let mut runner = Cohorts::new(plan, mark);
    let search_plan = super::search_plan(&plan.search, session.seats as u64);
    let mut found = capacity::search(&search_plan, LoadUnit::Players, &mut runner);
    let Searched {
        steps,
        achieved,
        disturbances,
        left,
        failed,
        error,
        server_failed,
    } = runner.end();
    found.interference = capacity::Disturbance::interference(&disturbances);
    if let (Some(e), true) = (&error, steps.is_empty()) {
        report_left(&left);
        return error_exit(e);
    }
    let roles = found
        .steps
        .iter()
        .take(steps.len())
        .map(|s| (s.role, s.outcome.class()))
        .collect();
    let mut search = SavedSearch::new(
        &session.options.label,
        &session.server.url,
        found.saved(),
        roles,
        steps,
        achieved,
    );
    search.part.command = session.options.part.command.clone();
    search.failure = server_failed.clone().or_else(|| failed.first().cloned());
    search.left_on_server.clone_from(&left);
    search.disturbances = disturbances;
    let mut outputs = Outputs::of(&session.options);
    outputs.text(|| report::capacity::text::render(&search));
    outputs.json(|| &search);
    outputs.page(|| LoadedRun::new(RunData::MahjongCapacity(Box::new(search.clone())), "search"));
    outputs.judged(|| {
        vec![LoadedRun::new(
            RunData::MahjongCapacity(Box::new(search.clone())),
            "search",
        )]
    });
    if let Some(e) = &error {
        report_left(&left);
        return error_exit(e);
    }
    if let Some(line) = &server_failed {
        report_left(&left);
        return fail(line);
    }
    if !left.is_empty() {
        return fail(&left_line(&left));
    }
    if let Some(why) = failed.first() {
        return fail(why);
    }
    outputs.status_or(|| ExitStatus::Ran)
}

fn report_left(left: &[String]) {
    if !left.is_empty() {
        eprintln!("tsumo: {}", left_line(left));
    }
}

/// `2 sessions left on the server (up to 14 days): tsumo12, tsumo13`.
fn left_line(left: &[String]) -> String {
    let shown: Vec<&str> = left.iter().take(10).map(String::as_str).collect();
    let more = if left.len() > shown.len() {
        format!(" and {} more", left.len() - shown.len())
    } else {
        String::new()
    };
    format!(
        "{} session{} left on the server (up to 14 days): {}{more}",
        left.len(),
        if left.len() == 1 { "" } else { "s" },
        shown.join(", ")
    )
}
