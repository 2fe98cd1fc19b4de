//! `tsumo capacity [the run's options, without -R and -d] --slo EXPR… URL`: the search's own
//! options are taken out of the command line first, and the rest is the wrk2 command line of
//! each step's run, parsed as an ordinary run's (every option means the same).

use std::ffi::OsString;
use std::time::Duration;

use super::{parse_wrk, units, Parsed};
use crate::capacity::SearchPlan;
use crate::plan::CapacityPlan;
use crate::slo;

const DEFAULT_FROM: u64 = 100;
const DEFAULT_STEP: Duration = Duration::from_secs(10);
const DEFAULT_WARMUP: Duration = Duration::from_secs(2);
const DEFAULT_PAUSE: Duration = Duration::from_secs(2);

const HELP: &str = "\
tsumo capacity — how much load a server carries within its objectives

Usage: tsumo capacity [run options, without -R and -d] --slo <EXPR>... <url>

Grows the target rate geometrically from --from until an objective breaks, bisects between
the last rate held and the first broken down to --resolution, and runs the answer once more
to confirm it. Each step is a complete open-loop run at its rate (-R) for --step, after a
warm-up run that is not judged, and followed by a pause. A step where tsumo could not reach
the rate, or where the machine ran out of files or ports, ends the search: the answer is then
\"at least\", never tsumo's own limit taken for the server's. Ctrl-C stops the search and
reports the steps run so far.

Options (besides every option of an ordinary run but -R and -d; see tsumo --help):
      --slo <EXPR>       An objective each step must hold (required, repeatable): p50, p90,
                         p99, p99.9, max '<' a duration; errors<N%; rate>N%
      --from <N>         The first target rate, requests/sec [default: 100]
      --to <N>           The highest target rate tried [default: no bound]
      --resolution <P>   Bisect until held and broken are this close [default: 5%]
      --step <T>         Each step's judged length [default: 10s]
      --warmup <T>       Unjudged run at the step's rate before it [default: 2s; 0: none]
      --pause <T>        Rest after each step, so its backlog never reaches the next
                         [default: 2s]
      --json <FILE>      Write `capacity` (the answer) and `steps` (each step's full run)

Example:
  tsumo capacity -t2 -c100 --slo 'p99<20ms' --slo 'errors<0.1%' http://127.0.0.1:8080/

Exit status:
  0  A capacity was found (or \"at least\": every step held, or tsumo or the machine was
     the limit); the answer line says which
  1  The search failed: a step's run failed (the target did not answer, a script error)
  2  Bad command line or input, found before any traffic
";

/// The search's options with a value, taken out of the wrk2 command line.
const OWN: [&str; 7] = [
    "--slo",
    "--from",
    "--to",
    "--resolution",
    "--step",
    "--warmup",
    "--pause",
];

pub(super) fn parse(args: Vec<OsString>) -> Result<Parsed, String> {
    let mut own: Vec<(&'static str, String)> = Vec::new();
    let mut rest: Vec<OsString> = vec![OsString::from("tsumo capacity")];
    let mut iter = args.into_iter();
    while let Some(arg) = iter.next() {
        let Some(text) = arg.to_str() else {
            rest.push(arg);
            continue;
        };
        if text == "--" {
            rest.push(arg);
            rest.extend(iter.by_ref());
            break;
        }
        if text == "-h" || text == "--help" {
            return Ok(Parsed::Print(HELP.to_string()));
        }
        let found = OWN.iter().find_map(|&name| {
            if text == name {
                Some((name, None))
            } else {
                text.strip_prefix(name)
                    .and_then(|v| v.strip_prefix('='))
                    .map(|v| (name, Some(v.to_string())))
            }
        });
        match found {
            Some((name, Some(value))) => own.push((name, value)),
            Some((name, None)) => match iter.next().and_then(|v| v.into_string().ok()) {
                Some(value) => own.push((name, value)),
                None => return Err(format!("{name} needs a value (tsumo capacity --help)")),
            },
            None => rest.push(arg),
        }
    }
    let Parsed::Run(run) = parse_wrk(rest)? else {
        return Ok(Parsed::Print(HELP.to_string()));
    };
    let mut run = *run;
    if run.rate.is_some() {
        return Err("-R is set by the search at each step: use --from and --to".to_string());
    }
    if run.vs.is_some() {
        return Err("--vs compares two runs; tsumo capacity searches one target".to_string());
    }
    if run.hgrm.is_some() || run.hlog.is_some() {
        return Err(
            "--hgrm and --hlog are one run's files: each step's run is in --json's \
             `steps`"
                .to_string(),
        );
    }
    if run.part.shard.count > 1 {
        return Err("--shard: a capacity search runs on one machine".to_string());
    }
    let last = |name: &str| own.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| v);
    let metric = |name: &str| -> Result<Option<u64>, String> {
        last(name)
            .map(|v| units::parse_metric(v).map_err(|reason| format!("{name} '{v}': {reason}")))
            .transpose()
    };
    let duration = |name: &str, default: Duration| -> Result<Duration, String> {
        last(name).map_or(Ok(default), |v| {
            units::parse_duration(v).map_err(|reason| format!("{name} '{v}': {reason}"))
        })
    };
    let mut objectives = Vec::new();
    for (_, expr) in own.iter().filter(|(n, _)| *n == "--slo") {
        let objective = slo::parse_http(expr)
            .map_err(|reason| format!("--slo '{}': {reason}", units::one_line(expr)))?;
        objectives.push(objective);
    }
    if objectives.is_empty() {
        return Err(
            "tsumo capacity needs at least one --slo: the objectives say what 'carries' means"
                .to_string(),
        );
    }
    let from = metric("--from")?.unwrap_or(DEFAULT_FROM);
    if from == 0 {
        return Err("--from '0': must be at least 1 request/sec".to_string());
    }
    let to = metric("--to")?;
    if let Some(to) = to {
        if to < from {
            return Err(format!("--to {to} is below --from {from}"));
        }
    }
    let resolution = match last("--resolution") {
        Some(text) => resolution(text)?,
        None => SearchPlan::RESOLUTION,
    };
    let step = duration("--step", DEFAULT_STEP)?;
    if step.is_zero() {
        return Err("--step '0': must be longer than zero".to_string());
    }
    let warmup = duration("--warmup", DEFAULT_WARMUP)?;
    let pause = duration("--pause", DEFAULT_PAUSE)?;
    // Leaving -d out is the way: the step's length is --step.
    if run.duration != super::DEFAULT_DURATION {
        return Err("-d is set by the search: use --step for each step's length".to_string());
    }
    run.objectives = objectives;
    run.duration = step;
    Ok(Parsed::Capacity(Box::new(CapacityPlan {
        run,
        from,
        to,
        resolution,
        step,
        warmup,
        pause,
    })))
}

/// `5%` or `0.05`: a share between 0 and 1 (both excluded).
pub(super) fn resolution(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let share = match trimmed.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => trimmed.parse::<f64>(),
    };
    match share {
        Ok(share) if share > 0.0 && share < 1.0 => Ok(share),
        _ => Err(format!(
            "--resolution '{text}': a share above 0 and below 100%, as 5% or 0.05"
        )),
    }
}
