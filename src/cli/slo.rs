//! `--slo EXPR`, repeatable, on the HTTP and the mahjong command lines: the objectives a run is
//! judged by at its end (exit 99 when one broke). The language is [`crate::slo`]'s; here each
//! mistake becomes one line naming the objective as typed.

use clap::{Arg, ArgAction, ArgMatches};

use super::{units, value};
use crate::mahjong::bot::StepKind;
use crate::slo::{self, Measure, Objective};

/// The option, for every command's table.
pub(super) fn arg() -> Arg {
    value("slo", None, "slo").action(ArgAction::Append)
}

/// An HTTP run's `--slo`s. `rate>N%` needs a target rate (`-R`); `--vs` compares two runs
/// rather than judging one.
pub(super) fn http(matches: &ArgMatches, has_rate: bool) -> Result<Vec<Objective>, String> {
    let objectives = parse_each(matches, slo::parse_http)?;
    if let Some(rate) = objectives.iter().find(|o| o.measure == Measure::RateShare) {
        if !has_rate {
            return Err(format!(
                "--slo '{}': needs a target rate (-R); a closed-loop run has none",
                units::one_line(&rate.expr)
            ));
        }
    }
    not_with_vs(matches, &objectives)?;
    Ok(objectives)
}

/// A mahjong session's `--slo`s: the step kinds are the bot's.
pub(super) fn mahjong(matches: &ArgMatches) -> Result<Vec<Objective>, String> {
    let kinds = StepKind::ALL.map(StepKind::as_str);
    let objectives = parse_each(matches, |expr| slo::parse_mahjong(expr, &kinds))?;
    not_with_vs(matches, &objectives)?;
    Ok(objectives)
}

fn parse_each(
    matches: &ArgMatches,
    parse: impl Fn(&str) -> Result<Objective, String>,
) -> Result<Vec<Objective>, String> {
    matches
        .get_many::<String>("slo")
        .into_iter()
        .flatten()
        .map(|expr| {
            parse(expr).map_err(|reason| format!("--slo '{}': {reason}", units::one_line(expr)))
        })
        .collect()
}

fn not_with_vs(matches: &ArgMatches, objectives: &[Objective]) -> Result<(), String> {
    if !objectives.is_empty() && matches.contains_id("vs") {
        return Err(
            "--slo judges a single run, not --vs (compare the runs' --json files instead)"
                .to_string(),
        );
    }
    Ok(())
}
