//! `tsumo capacity [the run's options, without -R] --slo EXPR… URL`: parsed with the wrk2
//! line's option table and the search's own options beside it, and the run's options read as
//! an ordinary run's, each step's (every option means the same; `-d`, the run's length, is
//! each step's, as `--step` says it). `--steps` or `--step-count` make it a fixed
//! staircase, the only kind that runs over shards.

use std::ffi::OsString;
use std::time::Duration;

use clap::{Arg, ArgMatches, Command};

use super::error::ArgError;
use super::help::Page;
use super::shared::{self, flag, value, For};
use super::{run_plan, search, slo, units, wrk, Objectives, Options, Parsed};
use crate::capacity::{self, SearchPlan};
use crate::plan::{CapacityPlan, Part, SearchOptions};
use crate::slo::parse_http;

const DEFAULT_FROM: u64 = 100;
const DEFAULT_STEP: Duration = Duration::from_secs(10);
const DEFAULT_WARMUP: Duration = Duration::from_secs(2);
const DEFAULT_PAUSE: Duration = Duration::from_secs(2);

/// The help page's prose around the option list.
const PAGE: Page = Page {
    before: "\
tsumo capacity — how much load a server carries within its objectives

Usage: tsumo capacity [run options, without -R] --slo <EXPR>... <url>
       tsumo capacity [run options] --slo <EXPR>... --steps <R1,R2,...> <url>
       tsumo capacity [run options] --slo <EXPR>... --from <N> --to <N> --step-count <K> <url>

Grows the target rate geometrically from --from until an objective breaks, bisects between
the last rate held and the first broken down to --resolution, and runs the answer once more
to confirm it. Each step is a complete open-loop run at its rate (-R) for --step, after a
warm-up run that is not judged, and followed by a pause, on as many connections as the
rate needs at the server's response time (-c at least, --max-connections at most). A step
where tsumo could not reach the rate, or where the machine ran out of files or ports, ends the search: the answer is then
\"at least\", never tsumo's own limit taken for the server's. Ctrl-C stops the search and
reports the steps run so far.

A fixed staircase (--steps, or --step-count) runs the listed rates in order instead, every
one whatever the last showed, with no bisection, and reads the answer from them: the highest
rate of the unbroken run of held steps from the first. Over several machines, give every
shard the same staircase, --shard I/N, one --start-at and one --run-id: on every shard, step
k's warm-up starts at --start-at + k x (warm-up + step + pause), and its judged run 250ms
(or the pause, if shorter) after the warm-up ends; each shard sends 1/N of each step's rate,
and `tsumo merge` of the shards' --json files computes each step and the capacity exactly
from all of them. A search (without a staircase) does not run over shards: it decides each
step from its own measurements, which machines cannot agree on.
",
    heading: "Options (besides every option of an ordinary run but -R, --stages; see tsumo --help)",
    column: 25,
    after: "\
Example:
  tsumo capacity -t2 -c100 --slo 'p99<20ms' --slo 'errors<0.1%' http://127.0.0.1:8080/
  tsumo capacity -t2 -c100 --slo 'p99<20ms' --steps 10k,20k,40k --shard 1/2 \\
    --start-at 2026-12-01T18:00:00Z --run-id stairs --json shard1.json http://10.0.0.5/

Exit status:
  0  A capacity was found (or \"at least\": every step held, tsumo or the machine was the
     limit, or a signal stopped the search); the answer line says which
  1  The search failed: a step's run failed (the target did not answer, a script error),
     or the server stopped answering during a step (the JSON's `failure` says which)
  2  Bad command line or input, found before any traffic
",
};

/// The search's own options (each takes a value), beside the run's in the parser and first in
/// the help.
pub(super) fn own_args() -> Vec<Arg> {
    vec![
        slo::arg(For::Capacity),
        search::from(For::Capacity, DEFAULT_FROM),
        search::to(For::Capacity),
        search::resolution_arg(),
        value("steps", None, "steps").value_name("LIST").help(
            "A fixed staircase: these target rates in order, rising, two or more,\n\
             comma-separated (--steps 200,400,800); no --from, --to, --resolution",
        ),
        value("step_count", None, "step-count")
            .value_name("K")
            .help(
                "A fixed staircase of K even rates from --from to --to (--from 200\n\
                 --to 1000 --step-count 5: 200,400,600,800,1000), each rounded to a\n\
                 multiple of the shards",
            ),
        search::step(For::Capacity, DEFAULT_STEP),
        search::warmup(For::Capacity, DEFAULT_WARMUP),
        search::pause(For::Capacity, DEFAULT_PAUSE),
        value("max_connections", None, "max-connections")
            .value_name("N")
            .help(
                "The most connections a step opens. -c is the fewest; each step\n\
                 opens what Little's law asks for (rate x the response time of the\n\
                 step below it, x2), and a step that broke while its requests\n\
                 waited for a busy connection runs again (twice at most) with as many\n\
                 as it needed. At N, tsumo's pool is named as the limit (\"at least\"),\n\
                 never the server [default: 10,000, or fewer to fit the open-file\n\
                 limit]",
            ),
        whole_steps(),
    ]
}

/// `--whole-steps`, the search's one option without a value (the last of its own).
fn whole_steps() -> Arg {
    flag("whole_steps", None, "whole-steps").help(
        "Run every held step for its whole --step. By default a step far under\n\
         every objective (errors under half their limit, each pNN under half\n\
         its limit, with enough responses to tell) ends after 2s or 2/5 of\n\
         --step, the longer; a step broken far beyond ends early either way",
    )
}

/// The table the help is rendered from: the search's own options, then the run's options whose
/// help says what they hold in a search (parsed by the run's line), and `-h`.
pub(super) fn command() -> Command {
    super::subcommand("tsumo capacity").args(own_args()).args([
        shared::json(For::Capacity),
        shared::html(For::Capacity),
        shared::junit(For::Capacity),
        shared::help(),
    ])
}

/// The command line's parser: the run's options (each step is an ordinary run, and its `--slo`
/// is the one the search takes) with the search's own.
pub(super) fn parser() -> Command {
    let own = own_args().into_iter().filter(|arg| arg.get_id() != "slo");
    wrk::command()
        .name("tsumo capacity")
        .no_binary_name(true)
        .args(own)
}

pub(super) fn parse(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    let command = parser();
    let matches = super::subcommand_matches(&command, args.clone())?;
    if matches.get_flag("help") || matches.get_flag("version") {
        return Ok(Parsed::Print(PAGE.render(&self::command())));
    }
    let whole_steps = matches.get_flag("whole_steps");
    let options = Options {
        command: &command,
        matches: &matches,
    };
    let mut run = run_plan(&options, &args, Objectives::Search)?;
    not_for_a_search(&run)?;
    let text = |id: &str| matches.get_one::<String>(id);
    let long = |id: &str| super::option_label(&command, id);
    let metric = |id: &str| -> Result<Option<u64>, ArgError> {
        text(id)
            .map(|v| {
                units::parse_metric(v)
                    .map_err(|reason| ArgError::Refused(format!("{} '{v}': {reason}", long(id))))
            })
            .transpose()
    };
    let duration = |id: &str, default: Duration| -> Result<Duration, ArgError> {
        text(id).map_or(Ok(default), |v| {
            units::parse_duration(v)
                .map_err(|reason| ArgError::Refused(format!("{} '{v}': {reason}", long(id))))
        })
    };
    let exprs = matches.get_many::<String>("slo").into_iter().flatten();
    let objectives = super::slo::parse_each(exprs.map(String::as_str), parse_http)?;
    if objectives.is_empty() {
        return Err(ArgError::Refused(
            "tsumo capacity needs at least one --slo: the objectives say what 'carries' means"
                .to_string(),
        ));
    }
    let staircase = staircase(&matches, &run.options.part)?;
    let from = metric("cap_from")?.unwrap_or(DEFAULT_FROM);
    if from == 0 {
        return Err(ArgError::Refused(
            "--from '0': must be at least 1 request/sec".to_string(),
        ));
    }
    let to = metric("cap_to")?;
    if let Some(to) = to {
        if to < from {
            return Err(ArgError::Refused(format!(
                "--to {to} is below --from {from}"
            )));
        }
    }
    let resolution = match text("cap_resolution") {
        Some(text) => search::resolution(text)?,
        None => SearchPlan::RESOLUTION,
    };
    let step = match (text("cap_step"), matches.contains_id("duration")) {
        (Some(_), true) => {
            return Err(ArgError::Refused(
                "-d and --step both set each step's length: give one".to_string(),
            ))
        }
        // -d was read (and checked) by the run's own parser.
        (None, true) => run.options.duration,
        (_, false) => duration("cap_step", DEFAULT_STEP)?,
    };
    if step.is_zero() {
        return Err(ArgError::Refused(
            "--step '0': must be longer than zero".to_string(),
        ));
    }
    let max_connections = max_connections(text("max_connections"), &run, staircase.is_some())?;
    let warmup = duration("cap_warmup", DEFAULT_WARMUP)?;
    let pause = duration("cap_pause", DEFAULT_PAUSE)?;
    run.options.objectives = objectives;
    run.options.duration = step;
    Ok(Parsed::Capacity(Box::new(CapacityPlan {
        run,
        search: SearchOptions {
            from,
            to,
            resolution,
            step,
            warmup,
            pause,
            whole_steps,
        },
        staircase,
        max_connections,
    })))
}

/// What a run's command line may say and a search's may not.
fn not_for_a_search(run: &crate::plan::Plan) -> Result<(), ArgError> {
    let refused = if !run.stages.is_empty() {
        "--stages sets the load over time; tsumo capacity searches for one: use --from and --to"
    } else if run.rate.is_some() {
        "-R is set by the search at each step: use --from and --to"
    } else if run.options.vs.is_some() {
        "--vs compares two runs; tsumo capacity searches one target"
    } else if run.hgrm.is_some() || run.hlog.is_some() {
        "--hgrm and --hlog are one run's files: each step's run is in --json's `steps`"
    } else {
        return Ok(());
    };
    Err(ArgError::Refused(refused.to_string()))
}

/// `--max-connections N`: at least `-c` (this process's share of it, over shards), and a
/// search's only (a staircase runs every step on `-c`).
fn max_connections(
    given: Option<&String>,
    run: &crate::plan::Plan,
    staircase: bool,
) -> Result<Option<usize>, ArgError> {
    let Some(text) = given else { return Ok(None) };
    let bad = |reason: &str| {
        ArgError::Refused(format!(
            "--max-connections '{}': {reason}",
            units::one_line(text)
        ))
    };
    let cap = units::parse_metric(text).map_err(|reason| bad(&reason))?;
    if staircase {
        return Err(ArgError::Refused(
            "--max-connections sizes a search's steps: a staircase runs every step on -c"
                .to_string(),
        ));
    }
    let cap = usize::try_from(cap).map_err(|_| bad("too many"))?;
    if cap < run.connections {
        return Err(ArgError::Refused(format!(
            "--max-connections {cap} is below -c {}: every step opens -c connections at least",
            run.connections
        )));
    }
    Ok(Some(cap))
}

/// `--steps` or `--step-count`: the staircase's target rates (the whole run's), or `None` for
/// a search, which is refused over shards.
fn staircase(matches: &ArgMatches, part: &Part) -> Result<Option<Vec<u64>>, ArgError> {
    let last = |id: &str| matches.get_one::<String>(id);
    let shards = part.shard.count;
    let loads = match (last("steps"), last("step_count")) {
        (None, None) if shards > 1 => {
            return Err(ArgError::Refused(
                "--shard needs a fixed staircase (--steps or --step-count): a search \
                        decides each step from its own measurements, which machines cannot \
                        agree on"
                    .to_string(),
            ))
        }
        (None, None) => return Ok(None),
        (Some(_), Some(_)) => {
            return Err(ArgError::Refused(
                "--steps lists the rates and --step-count counts them from --from to --to: \
                 give one"
                    .to_string(),
            ))
        }
        (Some(list), None) => {
            if last("cap_from").is_some() || last("cap_to").is_some() {
                return Err(ArgError::Refused(
                    "--steps lists every rate: leave out --from and --to (or give them \
                            with --step-count)"
                        .to_string(),
                ));
            }
            listed(list)?
        }
        (None, Some(text)) => {
            let count = units::parse_metric(text)
                .ok()
                .filter(|&n| n >= 2)
                .ok_or_else(|| {
                    ArgError::Refused(format!(
                        "--step-count '{}': a staircase has 2 steps or more",
                        units::one_line(text)
                    ))
                })?;
            let Some(to) = last("cap_to") else {
                return Err(ArgError::Refused(
                    "--step-count needs --to: the staircase's highest rate".to_string(),
                ));
            };
            let to = units::parse_metric(to)
                .map_err(|reason| ArgError::Refused(format!("--to '{to}': {reason}")))?;
            let from = match last("cap_from") {
                Some(v) => units::parse_metric(v)
                    .map_err(|reason| ArgError::Refused(format!("--from '{v}': {reason}")))?,
                None => DEFAULT_FROM,
            };
            if from == 0 || to < from {
                // The search's own checks say it (after this).
                return Ok(Some(Vec::new()));
            }
            let loads = capacity::staircase_loads(from, to, count as usize, shards as u64);
            if (loads.len() as u64) < count {
                // Steps that round to one rate would run once: not the staircase asked for.
                return Err(ArgError::Refused(format!(
                    "--step-count {count} from --from {from} to --to {to} is {} distinct \
                     rate{}, not {count}: give --to further above --from, or fewer steps",
                    loads.len(),
                    if loads.len() == 1 { "" } else { "s" }
                )));
            }
            loads
        }
    };
    if last("cap_resolution").is_some() {
        return Err(ArgError::Refused(
            "--resolution is the bisection's: a staircase runs its steps and does not bisect"
                .to_string(),
        ));
    }
    if shards > 1 && part.start_at.is_none() {
        return Err(ArgError::Refused(
            "a staircase over shards needs --start-at: every shard starts each step at the same \
             offset from that one instant"
                .to_string(),
        ));
    }
    if let Some(odd) = loads.iter().find(|&&l| !l.is_multiple_of(shards as u64)) {
        return Err(ArgError::Refused(format!(
            "--steps: {odd} requests/s does not split evenly into {shards} shards: use \
             multiples of {shards}"
        )));
    }
    Ok(Some(loads))
}

/// `200,400,800`: two rates or more, rising.
fn listed(text: &str) -> Result<Vec<u64>, ArgError> {
    let bad =
        |reason: &str| ArgError::Refused(format!("--steps '{}': {reason}", units::one_line(text)));
    let loads = text
        .split(',')
        .map(|rate| match units::parse_metric(rate.trim()) {
            Ok(0) => Err(bad("every rate is at least 1 request/sec")),
            Ok(rate) => Ok(rate),
            Err(reason) => Err(bad(&reason)),
        })
        .collect::<Result<Vec<u64>, ArgError>>()?;
    if loads.len() < 2 {
        return Err(bad(
            "a staircase lists 2 rates or more, as 200,400,800 (K even steps from --from to \
             --to: --step-count K)",
        ));
    }
    if loads.windows(2).any(|w| w[1] <= w[0]) {
        return Err(bad("the rates must rise, each above the one before"));
    }
    Ok(loads)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> Result<CapacityPlan, String> {
        let mut all: Vec<OsString> = vec!["--slo".into(), "p99<20ms".into()];
        all.extend(args.iter().map(OsString::from));
        all.push("http://127.0.0.1:8080/".into());
        match parse(all).map_err(|e| e.to_string())? {
            Parsed::Capacity(plan) => Ok(*plan),
            _ => Err("not a capacity plan".to_string()),
        }
    }

    #[test]
    fn a_staircase_listed_or_counted() {
        let listed = plan(&["--steps", "200,400,1k"]).unwrap();
        assert_eq!(listed.staircase, Some(vec![200, 400, 1000]));
        let counted = plan(&["--from", "200", "--to", "1000", "--step-count", "5"]).unwrap();
        assert_eq!(counted.staircase, Some(vec![200, 400, 600, 800, 1000]));
        assert_eq!(plan(&[]).unwrap().staircase, None);
        // Over 3 shards, counted rates are multiples of 3; each shard's connections a third.
        let at = crate::sys::wallclock::format_rfc3339(
            crate::sys::wallclock::unix_now_ns() + 600_000_000_000,
        );
        let sharded = plan(&[
            "-c6",
            "--shard",
            "2/3",
            "--start-at",
            &at,
            "--from",
            "100",
            "--to",
            "1000",
            "--step-count",
            "4",
        ])
        .unwrap();
        assert_eq!(sharded.staircase, Some(vec![99, 399, 699, 999]));
        assert_eq!(sharded.run.connections, 2);
        assert_eq!(sharded.run.rate, None);
    }

    #[test]
    fn a_staircase_refuses_what_it_does_not_do() {
        for (args, expected) in [
            (&["--steps", "100,200", "--step-count", "3"][..], "give one"),
            (
                &["--steps", "100,200", "--to", "300"],
                "leave out --from and --to",
            ),
            (
                &["--steps", "100,200", "--resolution", "2%"],
                "does not bisect",
            ),
            (&["--steps", "200,200"], "the rates must rise"),
            (&["--steps", "0,200"], "at least 1 request/sec"),
            (&["--step-count", "3"], "--step-count needs --to"),
            (&["--step-count", "x", "--to", "300"], "2 steps or more"),
            (
                &["--from", "100", "--to", "100", "--step-count", "3"],
                "--step-count 3 from --from 100 to --to 100 is 1 distinct rate, not 3: give \
                 --to further above --from, or fewer steps",
            ),
            (
                &["--from", "100", "--to", "101", "--step-count", "3"],
                "is 2 distinct rates, not 3",
            ),
        ] {
            let e = plan(args).unwrap_err();
            assert!(e.contains(expected), "{args:?}: {e}");
        }
    }
}
