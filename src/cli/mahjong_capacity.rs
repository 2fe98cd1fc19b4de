//! `tsumo mahjong --capacity --slo EXPR… [--from N] [--to N] [--resolution P] [--step T]
//! [--warmup T] [--pause T] URL`: the search over players, spelled under `tsumo mahjong` so that
//! every session option (`--seats`, `--think`, `--bot`, `-t`, `--server-pid`…) means what it
//! means for one session; the players (`-c`), the games and the length are the search's.

use std::time::Duration;

use clap::parser::ValueSource;
use clap::{Arg, ArgMatches};

use super::error::ArgError;
use super::shared::{flag, For};
use super::{search, units, Parsed};
use crate::capacity::SearchPlan;
use crate::plan::{MahjongCapacityPlan, MahjongPlan, SearchOptions};

const DEFAULT_FROM: u64 = 16;
const DEFAULT_STEP: Duration = Duration::from_secs(10);
const DEFAULT_WARMUP: Duration = Duration::from_secs(2);
const DEFAULT_PAUSE: Duration = Duration::from_secs(2);
/// `--logout-timeout`'s default counts the players of the whole search, up to this when
/// `--to` is not given.
const LOGOUT_PLAYERS_WITHOUT_TO: usize = 8_192;

/// The search's options, under a heading of their own in the session's table: `--capacity`,
/// then its own (meaningless without it).
pub(super) fn args() -> Vec<Arg> {
    vec![
        flag("capacity", None, "capacity").help(
            "Search instead of one session: start at --from players, add\n\
             tables (the earlier ones play on) doubling the players until\n\
             an objective breaks, bisect down to --resolution, confirm the\n\
             answer. Each step is judged once its new tables have started,\n\
             after --warmup, over --step of play. Fewer players (bisecting):\n\
             the newest tables log out and the backlog settles for --pause.\n\
             Tables play games until the search ends; every player logs\n\
             out at the end. Needs --slo; -c, -d and --games are the search's",
        ),
        search::from(For::Mahjong, DEFAULT_FROM),
        search::to(For::Mahjong),
        search::resolution_arg(),
        search::step(For::Mahjong, DEFAULT_STEP),
        search::warmup(For::Mahjong, DEFAULT_WARMUP),
        search::pause(For::Mahjong, DEFAULT_PAUSE),
    ]
    .into_iter()
    .map(|arg| {
        arg.help_heading(
            "Capacity search (how many players the server carries within the --slo objectives)",
        )
    })
    .collect()
}

/// A session's command line with a search option but no `--capacity`.
pub(super) fn not_without(matches: &ArgMatches) -> Result<(), ArgError> {
    let given = |arg: &&Arg| {
        arg.get_id() != "capacity"
            && matches.value_source(arg.get_id().as_str()) == Some(ValueSource::CommandLine)
    };
    match args().iter().find(given).and_then(Arg::get_long) {
        Some(long) => Err(ArgError::Refused(format!(
            "--{long} is an option of the capacity search: add --capacity"
        ))),
        None => Ok(()),
    }
}

/// The session's options the search sets itself, or that have no place in it: each refused
/// with what to do instead.
fn refuse_session_options(matches: &ArgMatches) -> Result<(), ArgError> {
    for (id, name, fix) in [
        (
            "players",
            "-c",
            "the search sets the players: use --from and --to",
        ),
        (
            "games",
            "--games",
            "the tables play games until the search ends",
        ),
        (
            "duration",
            "-d",
            "the search sets each step's length: use --step",
        ),
        (
            "start_when_full",
            "--start-when-full",
            "each table starts when full already",
        ),
        (
            "vs",
            "--vs",
            "compare two searches' --json files with tsumo compare",
        ),
        ("shard", "--shard", "a capacity search runs on one machine"),
        ("start_at", "--start-at", "a capacity search starts now"),
        (
            "requests",
            "--requests",
            "one file would mix the steps' replies; log a single session",
        ),
    ] {
        if matches.value_source(id) == Some(ValueSource::CommandLine) {
            return Err(ArgError::Refused(format!(
                "{name} is not for --capacity: {fix}"
            )));
        }
    }
    Ok(())
}

/// The search's plan around the session's; one line for each mistake.
pub(super) fn plan(
    matches: &ArgMatches,
    mut session: MahjongPlan,
    default_logout: Option<fn(usize) -> Duration>,
) -> Result<Parsed, ArgError> {
    let text = |id: &str| matches.get_one::<String>(id);
    let metric = |id: &str, name: &str| -> Result<Option<u64>, ArgError> {
        text(id)
            .map(|v| {
                units::parse_metric(v)
                    .map_err(|reason| ArgError::Refused(format!("{name} '{v}': {reason}")))
            })
            .transpose()
    };
    let duration = |id: &str, name: &str, default: Duration| -> Result<Duration, ArgError> {
        text(id).map_or(Ok(default), |v| {
            units::parse_duration(v)
                .map_err(|reason| ArgError::Refused(format!("{name} '{v}': {reason}")))
        })
    };
    if session.options.objectives.is_empty() {
        return Err(ArgError::Refused(
            "tsumo mahjong --capacity needs at least one --slo (e.g. 'draw_overshoot.p99<100ms'): \
             the objectives say what 'carries' means"
                .to_string(),
        ));
    }
    refuse_session_options(matches)?;
    let seats = session.seats as u64;
    let from = metric("cap_from", "--from")?.unwrap_or(DEFAULT_FROM.max(seats));
    if from == 0 || from % seats != 0 {
        return Err(ArgError::Refused(format!(
            "--from '{from}': must be a positive multiple of {seats} ({seats} tsumo players to a \
             table; see --seats)"
        )));
    }
    let to = metric("cap_to", "--to")?;
    if let Some(to) = to {
        if to < from {
            return Err(ArgError::Refused(format!(
                "--to {to} is below --from {from}"
            )));
        }
        if to < seats {
            return Err(ArgError::Refused(format!(
                "--to '{to}': must be at least one table ({seats} players)"
            )));
        }
    }
    let resolution = match text("cap_resolution") {
        Some(text) => search::resolution(text)?,
        None => SearchPlan::RESOLUTION,
    };
    let step = duration("cap_step", "--step", DEFAULT_STEP)?;
    if step.is_zero() {
        return Err(ArgError::Refused(
            "--step '0': must be longer than zero".to_string(),
        ));
    }
    let warmup = duration("cap_warmup", "--warmup", DEFAULT_WARMUP)?;
    let pause = duration("cap_pause", "--pause", DEFAULT_PAUSE)?;
    if let Some(default_logout) = default_logout {
        let most = to.map_or(LOGOUT_PLAYERS_WITHOUT_TO, |to| to as usize);
        session.logout_timeout = default_logout(most);
    }
    // Every table plays on, game after game, until the search logs it out.
    session.games = u32::MAX;
    session.lockstep = false;
    session.players = from as usize;
    Ok(Parsed::MahjongCapacity(Box::new(MahjongCapacityPlan {
        session,
        search: SearchOptions {
            from,
            to,
            resolution,
            step,
            warmup,
            pause,
            whole_steps: true,
        },
    })))
}
