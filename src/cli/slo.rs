//! `--slo EXPR`, repeatable, on the HTTP, mahjong and WebSocket command lines: the objectives a run is
//! judged by at its end (exit 99 when one broke). The language is [`crate::slo`]'s; here each
//! mistake becomes one line naming the objective as typed.

use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches};

use super::error::ArgError;
use super::shared::{value, For};
use super::units;
use crate::mahjong::bot::StepKind;
use crate::mahjong::player::STEP_MINIMUM;
use crate::slo::{self, Measure, Objective, Percentile};

/// The option, for every command's table. Its lists are the parser's; a line they make too
/// long is wrapped by the help.
pub(super) fn arg(command: For) -> Arg {
    let percentiles = |last| listed(&Percentile::ALL.map(Percentile::as_str), last);
    let help = match command {
        For::Mahjong => format!(
            "An objective the session must hold, judged at its end and\n\
             printed with its measured value after the report; one broken\n\
             exits 99. Repeatable. MEASURE.PCT<T on {} or a step kind (kaiju, zimo,\n\
             dapai, …), PCT one of {}\n\
             (draw_overshoot.p99<100ms: draws are timed with --think {}\n\
             or more); disconnects<N; errors<N (protocol errors and failed\n\
             phases)",
            slo::SESSION_HISTOGRAMS.join(", "),
            percentiles(", "),
            units::duration_text(Duration::from_nanos(STEP_MINIMUM)),
        ),
        For::Capacity => format!(
            "An objective each step must hold (required, repeatable): {} '<' a duration \
             (on the server's\n\
             latency); errors<N%; rate>N%",
            percentiles(", ")
        ),
        _ => format!(
            "An objective the run must hold, judged at its end and printed\n\
             with its measured value after the report; one broken exits 99.\n\
             Repeatable. {} '<' a\n\
             duration (us, ms, s) on the server's latency: p99<20ms;\n\
             errors<N% of every request due (socket errors, non-2xx/3xx and\n\
             requests never sent): errors<0.1%; rate>N% of -R reached: rate>95%",
            percentiles(" or ")
        ),
    };
    value("slo", None, "slo")
        .action(ArgAction::Append)
        .value_name("EXPR")
        .help(help)
}

/// The option for `tsumo ws`.
pub(super) fn ws_arg() -> Arg {
    let percentiles = listed(&Percentile::ALL.map(Percentile::as_str), " or ");
    value("slo", None, "slo")
        .action(ArgAction::Append)
        .value_name("EXPR")
        .help(format!(
            "An objective the run must hold, judged at its end and printed\n\
             with its measured value after the report; one broken exits 99.\n\
             Repeatable. {percentiles} '<' a\n\
             duration (us, ms, s) on the corrected round trip: p99<20ms;\n\
             errors<N% of the messages due without a reply; rate>N% of -R\n\
             answered: rate>95%; disconnects<N (connections the server closed)"
        ))
}

/// A WebSocket run's `--slo`s. `rate>N%` needs a target rate (`-R`).
pub(super) fn ws(matches: &ArgMatches, has_rate: bool) -> Result<Vec<Objective>, ArgError> {
    let objectives = parse_each(exprs(matches), slo::parse_ws)?;
    needs_rate(&objectives, has_rate)?;
    Ok(objectives)
}

/// Refuses `rate>N%` without a target rate (`-R`).
fn needs_rate(objectives: &[Objective], has_rate: bool) -> Result<(), ArgError> {
    match objectives.iter().find(|o| o.measure == Measure::RateShare) {
        Some(rate) if !has_rate => Err(ArgError::Refused(format!(
            "--slo '{}': needs a target rate (-R); a closed-loop run has none",
            units::one_line(&rate.expr)
        ))),
        _ => Ok(()),
    }
}

/// `a, b, c{last}d`.
fn listed(items: &[&str], last: &str) -> String {
    match items.split_last() {
        Some((final_item, [])) => final_item.to_string(),
        Some((final_item, rest)) => format!("{}{last}{final_item}", rest.join(", ")),
        None => String::new(),
    }
}

/// An HTTP run's `--slo`s. `rate>N%` needs a target rate (`-R`); `--vs` compares two runs
/// rather than judging one.
pub(super) fn http(matches: &ArgMatches, has_rate: bool) -> Result<Vec<Objective>, ArgError> {
    let objectives = parse_each(exprs(matches), slo::parse_http)?;
    needs_rate(&objectives, has_rate)?;
    not_with_vs(matches, &objectives)?;
    Ok(objectives)
}

/// A mahjong session's `--slo`s: the step kinds are the bot's. A draw's overshoot is timed
/// only when `think` is at least the server's minimum step, so without that an objective on it
/// could never be measured.
pub(super) fn mahjong(matches: &ArgMatches, think: Duration) -> Result<Vec<Objective>, ArgError> {
    let kinds = StepKind::ALL.map(StepKind::as_str);
    let objectives = parse_each(exprs(matches), |expr| slo::parse_mahjong(expr, &kinds))?;
    let minimum = Duration::from_nanos(STEP_MINIMUM);
    let draw = objectives.iter().find(|o| {
        matches!(&o.measure, Measure::Session { histogram, .. } if histogram == "draw_overshoot")
    });
    if let (Some(draw), true) = (draw, think < minimum) {
        return Err(ArgError::Refused(format!(
            "--slo '{}': can never be measured with --think {}: a draw's overshoot is timed \
             only when the think time is at least the server's minimum step, {}ms (give \
             --think {}ms or more)",
            units::one_line(&draw.expr),
            human(think),
            minimum.as_millis(),
            minimum.as_millis()
        )));
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
    parse: impl Fn(&str) -> Result<Objective, slo::ParseError>,
) -> Result<Vec<Objective>, ArgError> {
    let mut objectives: Vec<Objective> = Vec::new();
    for expr in exprs {
        let objective = parse(expr).map_err(|reason| ArgError::Objective {
            expr: expr.to_string(),
            reason,
        })?;
        let same = |o: &&Objective| {
            (&o.measure, o.below, o.limit) == (&objective.measure, objective.below, objective.limit)
        };
        if let Some(earlier) = objectives.iter().find(same) {
            let again = if earlier.expr == objective.expr {
                "is given twice".to_string()
            } else {
                format!("is '{}' again", earlier.expr)
            };
            return Err(ArgError::Refused(units::one_line(&format!(
                "--slo '{}' {again}: give each objective once",
                objective.expr
            ))));
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

fn not_with_vs(matches: &ArgMatches, objectives: &[Objective]) -> Result<(), ArgError> {
    if !objectives.is_empty() && matches.contains_id("vs") {
        return Err(ArgError::Refused(
            "--slo judges a single run, not --vs (compare the runs' --json files instead)"
                .to_string(),
        ));
    }
    Ok(())
}
