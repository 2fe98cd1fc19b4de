//! The options both capacity searches take, `tsumo capacity` (over rates) and `tsumo mahjong
//! --capacity` (over players): `--from`, `--to`, `--resolution`, `--step`, `--warmup` and
//! `--pause`, each defined once with the help it shows in each, and `--resolution`'s parser.

use std::time::Duration;

use clap::Arg;

use super::error::ArgError;
use super::shared::{value, For};
use super::units::duration_text;
use crate::capacity::SearchPlan;

/// `--from <N>`: the first step's load.
pub(super) fn from(command: For, default: u64) -> Arg {
    let help = match command {
        For::Mahjong => {
            format!("The first number of players, a multiple of --seats [default: {default}]")
        }
        _ => format!("The first target rate, requests/sec [default: {default}]"),
    };
    value("cap_from", None, "from").value_name("N").help(help)
}

/// `--to <N>`: the most load tried.
pub(super) fn to(command: For) -> Arg {
    value("cap_to", None, "to")
        .value_name("N")
        .help(match command {
            For::Mahjong => "The most players tried [default: no bound]",
            _ => "The highest target rate tried [default: no bound]",
        })
}

/// `--resolution <P>`: where bisection stops.
pub(super) fn resolution_arg() -> Arg {
    let percent = (SearchPlan::RESOLUTION * 1000.0).round() / 10.0;
    value("cap_resolution", None, "resolution")
        .value_name("P")
        .help(format!(
            "Bisect until held and broken are this close [default: {percent}%]"
        ))
}

/// `--step <T>`: each step's judged length.
pub(super) fn step(command: For, default: Duration) -> Arg {
    let default = duration_text(default);
    let help = match command {
        For::Mahjong => format!("Each step's judged play [default: {default}]"),
        _ => format!(
            "Each step's judged length [default: {default}]; -d <T> says the same\n\
             (a run's length, as in wrk2: each step is one run)"
        ),
    };
    value("cap_step", None, "step").value_name("T").help(help)
}

/// `--warmup <T>`: unjudged load before each step.
pub(super) fn warmup(command: For, default: Duration) -> Arg {
    let default = duration_text(default);
    let help = match command {
        For::Mahjong => {
            format!("Play not judged once a step's tables started [default: {default}]")
        }
        _ => format!("Unjudged run at the step's rate before it [default: {default}; 0: none]"),
    };
    value("cap_warmup", None, "warmup")
        .value_name("T")
        .help(help)
}

/// `--pause <T>`: rest after each step.
pub(super) fn pause(command: For, default: Duration) -> Arg {
    let default = duration_text(default);
    let help = match command {
        For::Mahjong => {
            format!("Rest after tables logged out, before the next step [default: {default}]")
        }
        _ => format!(
            "Rest after each step, so its backlog never reaches the next\n\
             [default: {default}]"
        ),
    };
    value("cap_pause", None, "pause").value_name("T").help(help)
}

/// `5%` or `0.05`: a share between 0 and 1 (both excluded).
pub(super) fn resolution(text: &str) -> Result<f64, ArgError> {
    let trimmed = text.trim();
    let share = match trimmed.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => trimmed.parse::<f64>(),
    };
    match share {
        Ok(share) if share > 0.0 && share < 1.0 => Ok(share),
        _ => Err(ArgError::Refused(format!(
            "--resolution '{text}': a share above 0 and below 100%, as 5% or 0.05"
        ))),
    }
}
