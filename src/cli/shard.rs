//! `--shard I/N`, `--shards N`, `--start-at TIME` and `--run-id ID`, shared by the HTTP and the
//! mahjong command lines: how one process takes part in a run split over several machines.
//!
//! The shard comes from `--shard` or, inside a Kubernetes Indexed Job, from
//! `JOB_COMPLETION_INDEX` (0-based) with the count from `--shards` or `TSUMO_SHARDS`. A run that
//! does not split evenly is refused with the numbers that would: a shard with one connection
//! more than another would run at another per-connection rate, and the shards would no longer
//! add up to the one-process schedule.

use std::ffi::OsString;
use std::time::Duration;

use clap::{Arg, ArgMatches};

use super::error::ArgError;
use super::shared::{value, For};
use super::units;
use crate::plan::{Part, Shard};
use crate::sys::wallclock::{format_rfc3339, parse_rfc3339};

/// The environment a shard reads (a function, so tests do not touch the process's own).
pub(super) type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment.
pub(super) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// `--shard <I/N>`.
pub(super) fn shard_arg(command: For) -> Arg {
    value("shard", None, "shard")
        .value_name("I/N")
        .help(match command {
            For::Mahjong => {
                "Run shard I of N (I from 1; one session over several machines):\n\
                 1/N of the tables, with the whole session's player names and\n\
                 ramp. Without it, a Kubernetes Indexed Job's\n\
                 JOB_COMPLETION_INDEX (from 0) with --shards N or TSUMO_SHARDS."
            }
            _ => {
                "Run shard I of N, I counted from 1 (one run over several machines):\n\
                 1/N of -c and of -R, on the send times the whole run would give\n\
                 those connections, so the N shards together send what one process\n\
                 would. -c and -R must divide by N. Without it, a Kubernetes Indexed\n\
                 Job's JOB_COMPLETION_INDEX (counted from 0) picks the shard, with\n\
                 --shards N or the env TSUMO_SHARDS."
            }
        })
}

/// `--shards <N>`.
pub(super) fn shards_arg() -> Arg {
    value("shards", None, "shards")
        .value_name("N")
        .help("The number of shards, for JOB_COMPLETION_INDEX")
}

/// `--start-at <TIME>`.
pub(super) fn start_at_arg(command: For) -> Arg {
    value("start_at", None, "start-at")
        .value_name("TIME")
        .help(match command {
            For::Mahjong => {
                "Check the server first, then start at TIME: RFC 3339\n\
                 (2026-11-30T18:00:00Z), or +30s from now for one process\n\
                 (shards need one RFC 3339 instant)"
            }
            _ => {
                "Resolve, check and connect first, then start at TIME: RFC 3339\n\
                 (2026-11-30T18:00:00Z), or +30s from now for one process (shards\n\
                 need one RFC 3339 instant). The report says how late."
            }
        })
}

/// `--run-id <ID>`.
pub(super) fn run_id_arg(command: For) -> Arg {
    value("run_id", None, "run-id")
        .value_name("ID")
        .help(match command {
            For::Mahjong => "The run's id in --json, checked by tsumo merge",
            _ => {
                "The run's id in --json, checked by tsumo merge [default: the start\n\
                 time and a hash of the command line without --shard, --json, --label]"
            }
        })
}

/// Options that differ between the shards of one run or do not change what runs: left out of
/// a derived run id, so every shard derives the same one (each machine has its own `--bind`
/// addresses).
const NOT_IN_RUN_ID: &[&str] = &[
    "--shard",
    "--bind",
    "--shards",
    "--json",
    "--hgrm",
    "--hlog",
    "--requests",
    "--requests-sample",
    "--html",
    "--run-id",
    "--label",
    "--server-pid",
];
const FLAGS_NOT_IN_RUN_ID: &[&str] = &["--quiet", "--progress"];

/// This process's part of the run. `now_ns`: the wall clock now (Unix ns).
pub(super) fn part(
    matches: &ArgMatches,
    argv: &[OsString],
    env: Env,
    now_ns: u64,
) -> Result<Part, ArgError> {
    let shard = shard(matches, env)?;
    let start_at = start_at(matches, now_ns)?;
    if let (Some(StartAt::FromNow(at)), true) = (start_at, shard.count > 1) {
        // Each process would count from its own launch, and derive its run id from that.
        let text = matches
            .get_one::<String>("start_at")
            .map_or("", |t| t.trim());
        let example = format_rfc3339(at.div_ceil(1_000_000_000) * 1_000_000_000);
        return Err(ArgError::Refused(format!(
            "--start-at {text} counts from each process's own start, so shards launched apart \
             would start apart and derive different run ids: give every shard one instant, \
             worked out once by whatever launches them, e.g. --start-at {example} (in a shell: \
             date -u -d '+30 seconds' +%Y-%m-%dT%H:%M:%SZ)"
        )));
    }
    let start_at = start_at.map(StartAt::unix_ns);
    if start_at.is_some() && matches.get_one::<String>("vs").is_some() {
        // Every round after the first would start on an instant already past.
        return Err(ArgError::Refused(
            "--start-at and --vs do not go together: an A/B run's rounds start one after \
             another"
                .to_string(),
        ));
    }
    let run_id = match matches.get_one::<String>("run_id") {
        Some(id) => {
            let id = id.trim();
            if id.is_empty() || id.len() > 128 || id.chars().any(|c| c.is_control() || c == ' ') {
                return Err(ArgError::Invalid {
                    option: "--run-id".to_string(),
                    value: units::one_line(id),
                    reason: "1 to 128 characters without spaces".to_string(),
                });
            }
            id.to_string()
        }
        None => derived_run_id(argv, start_at.unwrap_or(now_ns)),
    };
    Ok(Part {
        shard,
        start_at,
        run_id,
        // The whole argv is set once parsed (`cli::parse`).
        command: Vec::new(),
    })
}

/// `--shard I/N`, else `JOB_COMPLETION_INDEX` with `--shards N` or `TSUMO_SHARDS`.
fn shard(matches: &ArgMatches, env: Env) -> Result<Shard, ArgError> {
    let count_option = matches
        .get_one::<String>("shards")
        .map(|text| {
            count(text).ok_or_else(|| ArgError::Invalid {
                option: "--shards".to_string(),
                value: units::one_line(text),
                reason: "expected the number of shards, at least 1".to_string(),
            })
        })
        .transpose()?;
    if let Some(text) = matches.get_one::<String>("shard") {
        let invalid = |reason: &str| ArgError::Invalid {
            option: "--shard".to_string(),
            value: units::one_line(text),
            reason: reason.to_string(),
        };
        let (i, n) = text
            .split_once('/')
            .and_then(|(i, n)| Some((count(i)?, count(n)?)))
            .ok_or_else(|| invalid("expected I/N, e.g. 2/4 for shard 2 of 4 (I counted from 1)"))?;
        if i > n {
            return Err(invalid(&format!(
                "shard {i} of {n} does not exist; shards are counted from 1 to {n}"
            )));
        }
        if let Some(shards) = count_option.filter(|&c| c != n) {
            return Err(ArgError::Refused(format!(
                "--shard {text} says {n} shards but --shards says {shards}; give one of them"
            )));
        }
        return Ok(Shard {
            index: i - 1,
            count: n,
        });
    }
    let index = env("JOB_COMPLETION_INDEX");
    let count_env = env("TSUMO_SHARDS");
    let shards = match (count_option, &count_env) {
        (Some(n), _) => Some(n),
        (None, Some(text)) => Some(count(text).ok_or_else(|| {
            ArgError::Refused(format!(
                "TSUMO_SHARDS='{}' is not a number of shards (at least 1)",
                units::one_line(text)
            ))
        })?),
        (None, None) => None,
    };
    match (index, shards) {
        (None, None) => Ok(Shard::WHOLE),
        (None, Some(n)) => Err(ArgError::Refused(format!(
            "{n} shards, but which one is this? Give --shard I/N (I from 1 to {n}), or run in a \
             Kubernetes Indexed Job, which sets JOB_COMPLETION_INDEX"
        ))),
        (Some(text), None) => Err(ArgError::Refused(format!(
            "JOB_COMPLETION_INDEX={} is set (a Kubernetes Indexed Job) but not the number of \
             shards: give --shards N or set TSUMO_SHARDS to the Job's completions",
            units::one_line(&text)
        ))),
        (Some(text), Some(n)) => {
            let index: usize = text.trim().parse().map_err(|_| {
                ArgError::Refused(format!(
                    "JOB_COMPLETION_INDEX='{}' is not an index (0, 1, …)",
                    units::one_line(&text)
                ))
            })?;
            if index >= n {
                return Err(ArgError::Refused(format!(
                    "JOB_COMPLETION_INDEX={index} but only {n} shards (indexes 0 to {}): the \
                     Job's completions and --shards/TSUMO_SHARDS must agree",
                    n - 1
                )));
            }
            Ok(Shard { index, count: n })
        }
    }
}

/// A count of at least 1 (plain digits).
fn count(text: &str) -> Option<usize> {
    text.trim().parse::<usize>().ok().filter(|&n| n >= 1)
}

/// `--start-at` resolved: an instant given as such, or one counted from this process's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StartAt {
    /// `2026-11-30T18:00:00Z`: the same instant in every process given it.
    Absolute(u64),
    /// `+30s`: now plus the wait, so each process has its own.
    FromNow(u64),
}

impl StartAt {
    fn unix_ns(self) -> u64 {
        match self {
            StartAt::Absolute(ns) | StartAt::FromNow(ns) => ns,
        }
    }
}

/// `--start-at 2026-11-30T18:00:00Z` or `--start-at +30s`, as Unix ns; a time not in the
/// future is refused.
fn start_at(matches: &ArgMatches, now_ns: u64) -> Result<Option<StartAt>, ArgError> {
    let Some(text) = matches.get_one::<String>("start_at") else {
        return Ok(None);
    };
    let invalid = |reason: String| ArgError::Invalid {
        option: "--start-at".to_string(),
        value: units::one_line(text),
        reason,
    };
    let at = match text.trim().strip_prefix('+') {
        Some(after) => {
            let wait = units::parse_duration(after).map_err(&invalid)?;
            if wait.is_zero() {
                return Err(invalid("the wait must be longer than zero".to_string()));
            }
            StartAt::FromNow(
                now_ns.saturating_add(wait.as_nanos().min(u128::from(u64::MAX)) as u64),
            )
        }
        None => StartAt::Absolute(parse_rfc3339(text.trim()).map_err(|e| invalid(e.to_string()))?),
    };
    let at_ns = at.unix_ns();
    if at_ns <= now_ns {
        let ago = Duration::from_nanos(now_ns - at_ns);
        return Err(ArgError::Refused(format!(
            "--start-at {text} is {:.3}s in the past (now {}); give a later time, or +30s from now",
            ago.as_secs_f64(),
            format_rfc3339(now_ns)
        )));
    }
    Ok(Some(at))
}

/// `20261130T180000Z-1a2b3c4d`: the start (second) and a hash of the command line without the
/// options in [`NOT_IN_RUN_ID`], so the shards of one command line and start agree on it.
pub(super) fn derived_run_id(argv: &[OsString], start_ns: u64) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut skip_value = false;
    for arg in argv {
        let arg = arg.to_string_lossy();
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let name = arg.split('=').next().unwrap_or_default();
        if NOT_IN_RUN_ID.contains(&name) {
            skip_value = !arg.contains('=');
            continue;
        }
        if FLAGS_NOT_IN_RUN_ID.contains(&name) {
            continue;
        }
        for byte in arg.bytes().chain([0]) {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    let start = format_rfc3339(start_ns / 1_000_000_000 * 1_000_000_000);
    let compact: String = start.chars().filter(|c| *c != '-' && *c != ':').collect();
    format!("{compact}-{:08x}", (hash >> 32) ^ (hash & 0xffff_ffff))
}

/// HTTP: this shard's connections and rate; an uneven split is refused with the nearest even
/// ones.
pub(super) fn split_http(
    connections: usize,
    rate: Option<u64>,
    threads: usize,
    shard: Shard,
) -> Result<(usize, Option<u64>), ArgError> {
    let n = shard.count;
    if n == 1 {
        return Ok((connections, rate));
    }
    if !connections.is_multiple_of(n) {
        let lower = connections / n * n;
        return Err(ArgError::Refused(format!(
            "-c {connections} connections do not split evenly into {n} shards: use a multiple \
             of {n} ({})",
            nearest(lower, n)
        )));
    }
    if let Some(rate) = rate {
        if !rate.is_multiple_of(n as u64) {
            let lower = (rate / n as u64 * n as u64) as usize;
            return Err(ArgError::Refused(format!(
                "-R {rate} requests/s does not split evenly into {n} shards: use a multiple of \
                 {n} ({})",
                nearest(lower, n)
            )));
        }
    }
    let local = connections / n;
    if local < threads {
        return Err(ArgError::Refused(format!(
            "-c {connections} over {n} shards is {local} connections per shard, fewer than -t \
             {threads} threads; use -c {} or fewer threads",
            threads * n
        )));
    }
    Ok((local, rate.map(|r| r / n as u64)))
}

/// Mahjong: this shard's players (whole tables); an uneven split is refused. `given`: the
/// players came from `-c`, not its default.
pub(super) fn split_players(
    players: usize,
    seats: usize,
    shard: Shard,
    given: bool,
) -> Result<usize, ArgError> {
    let n = shard.count;
    let tables = players / seats;
    if !tables.is_multiple_of(n) {
        let lower = tables / n * n * seats;
        let (players, fix) = if given {
            (format!("-c {players} players"), "use")
        } else {
            (format!("the default {players} players (no -c)"), "give -c")
        };
        let tables = match tables {
            1 => "1 table, which does not".to_string(),
            _ => format!("{tables} tables, which do not"),
        };
        return Err(ArgError::Refused(format!(
            "{players} are {tables} split evenly into {n} shards: {fix} a multiple of {} \
             players ({})",
            seats * n,
            nearest(lower, seats * n)
        )));
    }
    Ok(players / n)
}

/// Mahjong under `--stages`: the most players this shard has online at once, in whole tables
/// (`players`: the profile's peak in whole tables). The shard takes the tables `t` with
/// `t mod N == I` of the profile's level at every instant (see `mahjong::arrivals`), so any
/// profile splits, and the shards together follow it exactly; a shard the peak leaves without
/// a table still gets one to size its threads for.
pub(super) fn split_profile(players: usize, seats: usize, shard: Shard) -> usize {
    let (tables, n) = (players / seats.max(1), shard.count.max(1));
    let mine = tables / n + usize::from(shard.index < tables % n);
    mine.max(1) * seats
}

/// `8 or 12`: the multiples of `step` around a value (`lower` is the one below).
fn nearest(lower: usize, step: usize) -> String {
    if lower == 0 {
        step.to_string()
    } else {
        format!("{lower} or {}", lower + step)
    }
}

#[cfg(test)]
mod tests;
