//! `--slo EXPR`, repeatable, on the HTTP and the mahjong command lines: the objectives a run is
//! judged by at its end (exit 99 when one broke). The language is [`crate::slo`]'s; here each
//! mistake becomes one line naming the objective as typed.

use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches};

use super::{units, value};
use crate::mahjong::bot::StepKind;
use crate::mahjong::player::STEP_MINIMUM;
use crate::slo::{self, Measure, Objective};

/// The option, for every command's table.
pub(super) fn arg() -> Arg {
    value("slo", None, "slo").action(ArgAction::Append)
}

/// An HTTP run's `--slo`s. `rate>N%` needs a target rate (`-R`); `--vs` compares two runs
/// rather than judging one.
pub(super) fn http(matches: &ArgMatches, has_rate: bool) -> Result<Vec<Objective>, String> {
    let objectives = parse_each(exprs(matches), slo::parse_http)?;
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

/// A mahjong session's `--slo`s: the step kinds are the bot's. A draw's overshoot is timed
/// only when `think` is at least the server's minimum step, so without that an objective on it
/// could never be measured.
pub(super) fn mahjong(matches: &ArgMatches, think: Duration) -> Result<Vec<Objective>, String> {
    let kinds = StepKind::ALL.map(StepKind::as_str);
    let objectives = parse_each(exprs(matches), |expr| slo::parse_mahjong(expr, &kinds))?;
    let minimum = Duration::from_nanos(STEP_MINIMUM);
    let draw = objectives.iter().find(|o| {
        matches!(&o.measure, Measure::Session { histogram, .. } if histogram == "draw_overshoot")
    });
    if let (Some(draw), true) = (draw, think < minimum) {
        return Err(format!(
            "--slo '{}': can never be measured with --think {}: a draw's overshoot is timed \
             only when the think time is at least the server's minimum step, {}ms (give \
             --think {}ms or more)",
            units::one_line(&draw.expr),
            human(think),
            minimum.as_millis(),
            minimum.as_millis()
        ));
    }
    not_with_vs(matches, &objectives)?;
    Ok(objectives)
}

/// The `--slo`s as typed, in order.
fn exprs(matches: &ArgMatches) -> impl Iterator<Item = &str> {
    matches
        .get_many::<String>("slo")
        .into_iter()
        .flatten()
        .map(String::as_str)
}

/// Each `--slo` parsed, every mistake one line naming it; the same objective twice (as typed,
/// or another way: `p99<20ms`, `p99<20000us`) is refused.
pub(super) fn parse_each<'a>(
    exprs: impl IntoIterator<Item = &'a str>,
    parse: impl Fn(&str) -> Result<Objective, String>,
) -> Result<Vec<Objective>, String> {
    let mut objectives: Vec<Objective> = Vec::new();
    for expr in exprs {
        let objective =
            parse(expr).map_err(|reason| units::one_line(&format!("--slo '{expr}': {reason}")))?;
        let same = |o: &&Objective| {
            (&o.measure, o.below, o.limit) == (&objective.measure, objective.below, objective.limit)
        };
        if let Some(earlier) = objectives.iter().find(same) {
            let again = if earlier.expr == objective.expr {
                "is given twice".to_string()
            } else {
                format!("is '{}' again", earlier.expr)
            };
            return Err(units::one_line(&format!(
                "--slo '{}' {again}: give each objective once",
                objective.expr
            )));
        }
        objectives.push(objective);
    }
    Ok(objectives)
}

/// `200ms`, `1.5s`, `0s`: a think time as the message says it.
fn human(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_secs_f64() * 1_000.0)
    }
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
