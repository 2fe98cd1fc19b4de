//! A mahjong session (`tsumo mahjong …`), alone or as one side of `--vs`: the report, the JSON,
//! the page, and the session's verdict.

use super::ab::{self, Round, Side};
use super::output::Outputs;
use super::{error_exit, exit_as};
use crate::error::{Error, ExitStatus};
use crate::mahjong::session;
use crate::net::preflight::Probe;
use crate::plan::MahjongPlan;
use crate::report;
use crate::report::tools::saved::{LoadedRun, RunData};
use crate::stats::sink::Sink;

/// `tsumo mahjong …`: the session, or with `--vs` the A/B comparison.
pub fn run(plan: &MahjongPlan) -> ExitStatus {
    super::with_dashboard(&plan.options, || run_or_vs(plan))
}

fn run_or_vs(plan: &MahjongPlan) -> ExitStatus {
    if let Err(e) = super::files::of_session(plan) {
        return error_exit(&e);
    }
    match sides(plan) {
        Some([first, second]) => ab::run::<Mahjong>([&first, &second], &plan.options),
        None => once(plan),
    }
}

/// Runs the session, prints its report, writes its JSON and its page.
fn once(plan: &MahjongPlan) -> ExitStatus {
    let result = match live_session(plan) {
        Ok(result) => result,
        Err(e) => return error_exit(&e),
    };
    let mut outputs = Outputs::of(&plan.options);
    outputs.text(|| report::mahjong::text::render(&result));
    let saved = report::mahjong::saved(&result);
    outputs.json(|| &saved);
    outputs.page(|| LoadedRun::new(RunData::Mahjong(Box::new(saved.clone())), "session"));
    outputs.judged(|| {
        vec![LoadedRun::new(
            RunData::Mahjong(Box::new(saved.clone())),
            "session",
        )]
    });
    outputs.status_or(|| exit_as(&saved))
}

/// One session, shown on the dashboard when there is one.
fn live_session(plan: &MahjongPlan) -> Result<crate::stats::mahjong::RunResult, Error> {
    let feed = crate::dashboard::begin(&plan.options, crate::stats::mahjong::live::Data::default());
    let result = session::run(plan)?;
    if let Some(feed) = feed {
        feed.ended(&result.record.timeline.intervals);
    }
    Ok(result)
}

/// `tsumo mahjong --vs URL2`'s two sides: the session's server, and the second one (with its
/// label); neither writes files of its own.
fn sides(plan: &MahjongPlan) -> Option<[MahjongPlan; 2]> {
    let (vs, [first, second]) = plan.options.vs_sides()?;
    let first = MahjongPlan {
        options: first,
        ..plan.clone()
    };
    let second = MahjongPlan {
        server: vs.clone(),
        options: second,
        ..first.clone()
    };
    Some([first, second])
}

/// Mahjong as a side of `--vs`.
struct Mahjong;

impl Side for Mahjong {
    type Plan = MahjongPlan;
    const MODE: &'static str = report::mahjong::MODE;

    fn label(plan: &MahjongPlan) -> &str {
        &plan.options.label
    }

    fn probe(plan: &MahjongPlan) -> Probe<'_> {
        session::probe(plan)
    }

    fn round(plan: &MahjongPlan) -> Result<Round, Error> {
        let result = live_session(plan)?;
        let saved = report::mahjong::saved(&result);
        Ok(Round {
            text: report::mahjong::text::render(&result),
            // As a single session: sessions left on the server, most players failed.
            error: saved
                .failure
                .as_ref()
                .map(|f| format!("{}: {f}", plan.options.label)),
            data: RunData::Mahjong(Box::new(saved)),
        })
    }
}
