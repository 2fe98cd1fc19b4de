//! The wrk2 command line's option table and its help page: wrk2's options with wrk2's names
//! and units (`-t -c -d -R -s -H -L -U -B -T`, `--u_latency`, `--batch_latency`), then ours.
//! The options other commands share come from `shared` (and `shard`, `bind`, `slo`, `http2`),
//! and the help's option list is rendered from this table.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::error::ArgError;
use super::help::Page;
use super::shared::{self, file, flag, value, For};
use super::units::duration_text;
use super::{bind, header, http2, shard, slo, stages, url, Options};
use crate::plan::{RequestsOut, Stage, Target};
use crate::timing::stages::Profile;

pub(super) const DEFAULT_THREADS: usize = 2;
pub(super) const DEFAULT_CONNECTIONS: usize = 10;
pub(super) const DEFAULT_DURATION: Duration = Duration::from_secs(10);
pub(super) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
pub(super) const DEFAULT_SCRIPT_TIMEOUT: Duration = Duration::from_secs(1);
pub(super) const DEFAULT_ROUNDS: usize = 3;

/// The help page's prose around the option lists.
pub(super) const PAGE: Page = Page {
    before: "\
tsumo — a constant-rate HTTP(S) load generator, compatible with wrk2

Usage: tsumo [options] <url> [script arguments...]
",
    heading: "Options",
    column: 25,
    after: "\
Options may come before or after the URL. Arguments after the URL, and everything
after '--', are passed to the script's init(args).

Units:
  <N>  A whole number, optionally with a suffix k, M, G, T or P (each x1000,
       case-insensitive, so 1m is one million): -c 1k, -R 50k
  <T>  Seconds, optionally with a suffix s, m (minutes) or h, or — unlike wrk2 —
       ms or us: -d 2m, -T 500ms

Examples:
  tsumo -t2 -c100 -d30s -R2000 -L http://127.0.0.1:8080/index.html
  tsumo -c 8 -d 1m --json run.json https://example.com/api?id=1
  tsumo -R2000 -d10s --label direct http://127.0.0.1:8080/ --vs http://127.0.0.1:80/ --vs-label nginx

Other commands (each has --help):
  tsumo mahjong      bot players in mahjong games against a majiang-server
  tsumo ws           WebSocket messages at a constant rate, each round trip timed
  tsumo capacity     the highest rate a server carries within its --slo objectives
  tsumo compare      side-by-side table of saved runs (--json files)
  tsumo merge        add up runs from several processes or machines
  tsumo plot         latency-by-percentile chart of saved runs (SVG)
  tsumo report       the HTML page of saved runs (one run, a comparison, a search, shards)
  tsumo doctor       find the system limits that would cap a test
  tsumo completions  the shell completion script (bash, zsh, fish, elvish, powershell)
  tsumo man          tsumo's manual page, every command's options (tsumo man | man -l -)

Exit status (every command):
  0  The run ran: its report says how it went (errors among responses, a rate not
     reached and a run cut short by a signal included)
  1  The run failed: no response at all, a script error during the run or in done(),
     sessions left on the server, most players failed, a doctor check FAILs, output
     lost, or the target did not answer (resolve, connect, TLS)
  2  Bad command line or input, found before any traffic: an option or its value, a
     file it names (a --script that does not load, --rule, --cacert, a saved run that
     does not parse or is newer), an output that cannot be written or that is another
     output or an input, an objective that could never hold, --bind addresses not on
     this host, -c beyond the open-file limit, runs that do not merge
  99 The run ran and an objective (--slo) broke: the report and the JSON say which
",
};

/// `tsumo --help`.
pub(super) fn help() -> String {
    PAGE.render(&command())
}

/// The option table, in the help's order.
pub(super) fn command() -> Command {
    Command::new("tsumo")
        .disable_help_flag(true)
        .disable_version_flag(true)
        .disable_help_subcommand(true)
        // A repeated option wins, as with getopt; unique prefixes of long options work too.
        .args_override_self(true)
        .infer_long_args(true)
        .args([
            shared::connections(For::Run, DEFAULT_CONNECTIONS),
            shared::duration(For::Run, DEFAULT_DURATION),
            shared::threads(For::Run, DEFAULT_THREADS),
            value("rate", Some('R'), "rate").value_name("N").help(
                "Target throughput in requests/s, total over all connections.\n\
                 Without -R: closed loop, each connection as fast as it can.",
            ),
            value("stages", None, "stages").value_name("PROFILE").help(
                "Instead of -R and -d: the rate over time, as comma-separated\n\
                 DURATION:RATE (a hold) or DURATION:FROM-TO (a linear ramp;\n\
                 over 0s, a jump): 30s:0-2000,2m:2000,0s:2000-8000",
            ),
            file("script", Some('s'), "script").help("Lua script file (wrk's scripting API)"),
            value("script_timeout", None, "script-timeout")
                .value_name("T")
                .help(format!(
                    "Interrupt a script hook call that uses more CPU time, as a\n\
                     script error at its file:line [default: {}]; one that waits\n\
                     is interrupted at 10 times it. 0: no limit, and LuaJIT\n\
                     compiles the script (a compiled loop cannot be\n\
                     interrupted, so with a limit the compiler is off)",
                    duration_text(DEFAULT_SCRIPT_TIMEOUT)
                )),
            value("header", Some('H'), "header")
                .action(ArgAction::Append)
                .value_name("H")
                .help(
                    "Add a request header, 'Name: value'. Repeatable; a later\n\
                     header with the same name replaces the earlier one.",
                ),
            shared::latency(For::Run),
            flag("u_latency", Some('U'), "u_latency")
                .help("Also print the uncorrected latency distribution (implies -L)"),
            flag("batch_latency", Some('B'), "batch_latency")
                .help("With pipelining, measure only the last response of each batch"),
            value("timeout", Some('T'), "timeout")
                .value_name("T")
                .help(format!(
                    "Per-request timeout [default: {}]",
                    duration_text(DEFAULT_TIMEOUT)
                )),
            slack(),
            shared::insecure(For::Run),
            shared::cacert(For::Run),
            shared::json(For::Run),
            shared::quiet(For::Run),
            shared::progress(For::Run),
            shared::label(For::Run),
            shared::server_pid(),
            file("hgrm", None, "hgrm")
                .help("Also write the latency distribution for HdrHistogram's plotter"),
            slo::arg(For::Run),
            shared::interval(For::Run),
            file("hlog", None, "hlog").help(
                "Also write the corrected latency of each interval as an HdrHistogram\n\
                 interval log (HistogramLogAnalyzer, hdr-plot)",
            ),
            file("requests", None, "requests").help(
                "Also write every request as one CSV row (times, connection, status,\n\
                 bytes, latency, error); zstd-compressed when FILE ends in .zst",
            ),
            value("requests_sample", None, "requests-sample")
                .value_name("F")
                .help("With --requests, log this fraction of the requests, in (0, 1]"),
            shared::html(For::Run),
            shared::junit(For::Run),
            shared::dashboard(),
            shared::dashboard_linger(),
            shared::prometheus_rw(),
            shared::vs(For::Run),
            shared::vs_label(For::Run),
            shared::rounds(DEFAULT_ROUNDS),
            shard::shard_arg(For::Run),
            shard::shards_arg(),
            bind::arg(For::Run),
            shard::start_at_arg(For::Run),
            shard::run_id_arg(For::Run),
            shared::help(),
            flag("version", Some('v'), "version").help("Print the version"),
        ])
        .args(http2::args())
        .args([
            Arg::new("url").index(1).action(ArgAction::Set),
            Arg::new("script_args")
                .index(2)
                .action(ArgAction::Append)
                .num_args(0..),
        ])
}

/// `--slack <T|auto>`: how close to its time a send must be.
fn slack() -> Arg {
    value("slack", None, "slack").value_name("T|auto").help(
        "With -R: sends due within one slot of T share one wake-up of the\n\
         thread, each sent at its time or up to T after it (the lateness is\n\
         reported, and in the corrected latency). 0: each send to the\n\
         microsecond at any rate, for up to a core per thread [default: auto:\n\
         0 below 8,000 req/s per thread, 100us there, 250us from 20,000]",
    )
}

/// The widest `--slack`: a coarser pacer is a burst generator, not a constant rate.
const MAX_SLACK: Duration = Duration::from_millis(10);

/// The load of a wrk2 command line: read (or defaulted) first, checked once the URL and the
/// headers are read, so a mistake in either is reported in the order it always was.
pub(super) struct Load {
    pub threads: usize,
    pub connections: usize,
    pub duration: Duration,
    pub rate: Option<u64>,
    /// `--stages` (empty without it): `duration` is then their sum and `rate` is `None`.
    pub stages: Vec<Stage>,
    pub timeout: Duration,
    /// `None`: no limit (`--script-timeout 0`).
    pub script_timeout: Option<Duration>,
}

impl Load {
    pub fn read(options: &Options) -> Result<Self, ArgError> {
        let stages = stages_of(options)?;
        let total = stages.iter().map(|stage| stage.duration_ns).sum();
        Ok(Load {
            threads: options.count("threads")?.unwrap_or(DEFAULT_THREADS),
            connections: options.count("connections")?.unwrap_or(DEFAULT_CONNECTIONS),
            duration: match stages.is_empty() {
                true => options.duration("duration")?.unwrap_or(DEFAULT_DURATION),
                false => Duration::from_nanos(total),
            },
            rate: options.metric("rate")?,
            stages,
            timeout: options.duration("timeout")?.unwrap_or(DEFAULT_TIMEOUT),
            script_timeout: match options.duration("script_timeout")? {
                Some(limit) if limit.is_zero() => None,
                Some(limit) => Some(limit),
                None => Some(DEFAULT_SCRIPT_TIMEOUT),
            },
        })
    }

    /// With `--stages`, the one rate of this process where one is needed (the report's target,
    /// the shortfall): the profile's mean, divided by the shards; `None` without it.
    pub fn mean_rate(&self, shards: usize) -> Option<u64> {
        let profile = (!self.stages.is_empty()).then(|| Profile::new(&self.stages))?;
        Some((profile.mean() / shards.max(1) as u64).max(1))
    }

    /// One line naming the first number out of range.
    pub fn check(&self, options: &Options) -> Result<(), ArgError> {
        let (threads, connections) = (self.threads, self.connections);
        if threads == 0 {
            return Err(options.invalid("threads", "must be at least 1"));
        }
        if connections == 0 {
            return Err(options.invalid("connections", "must be at least 1"));
        }
        if connections < threads {
            return Err(ArgError::Refused(format!(
                "-c {connections} is fewer connections than -t {threads} threads; \
                 each thread needs at least one connection"
            )));
        }
        if self.duration.is_zero() {
            return Err(options.invalid("duration", "must be longer than zero"));
        }
        if self.rate == Some(0) {
            return Err(options.invalid(
                "rate",
                "must be at least 1 (leave out -R to run at full speed)",
            ));
        }
        if self.timeout.is_zero() {
            return Err(options.invalid("timeout", "must be longer than zero"));
        }
        Ok(())
    }
}

/// `--stages`, refused with `-R` or `-d` (it sets both); empty without it.
fn stages_of(options: &Options) -> Result<Vec<Stage>, ArgError> {
    let matches = options.matches;
    let Some(text) = matches.try_get_one::<String>("stages").ok().flatten() else {
        return Ok(Vec::new());
    };
    for (id, name) in [("rate", "-R"), ("duration", "-d")] {
        if matches.get_one::<String>(id).is_some() {
            return Err(ArgError::Refused(format!(
                "--stages sets the rate and the duration over time: leave out {name}"
            )));
        }
    }
    stages::parse(text).map_err(|reason| options.invalid("stages", &reason))
}

/// The `-H` headers, a later one of a name replacing an earlier one.
pub(super) fn headers(matches: &ArgMatches) -> Result<Vec<(String, String)>, ArgError> {
    let mut headers = Vec::new();
    for text in matches.get_many::<String>("header").into_iter().flatten() {
        let (name, value) = header::parse_header(text).map_err(|reason| {
            ArgError::Refused(format!("invalid header '{text}' for -H: {reason}"))
        })?;
        header::add_header(&mut headers, name, value);
    }
    Ok(headers)
}

/// `--slack`: `None` for `auto` (or not given), else at most [`MAX_SLACK`].
pub(super) fn slack_of(options: &Options) -> Result<Option<Duration>, ArgError> {
    match options.matches.get_one::<String>("slack").map(|s| s.trim()) {
        None | Some("auto") => Ok(None),
        Some(_) => match options.duration("slack")? {
            Some(slack) if slack > MAX_SLACK => {
                Err(options.invalid("slack", "must be at most 10ms"))
            }
            slack => Ok(slack),
        },
    }
}

/// The `--vs` target and `--rounds` (the `--vs-*` options only with `--vs`).
pub(super) fn vs_and_rounds(options: &Options) -> Result<(Option<Target>, u32), ArgError> {
    let matches = options.matches;
    let vs = match matches.get_one::<String>("vs") {
        Some(text) => Some(url::parse_url(text).map_err(|reason| {
            ArgError::Refused(format!("invalid URL '{text}' for --vs: {reason}"))
        })?),
        None => None,
    };
    let rounds = super::ab_rounds(options, DEFAULT_ROUNDS)?;
    Ok((vs, rounds))
}

/// `--requests FILE` and `--requests-sample F`: the sample a fraction in (0, 1], and only with
/// the log; neither with `--vs` (one file would hold only one of its runs). `None` where the
/// command has no such option (`tsumo capacity`).
pub(super) fn requests(options: &Options) -> Result<Option<RequestsOut>, ArgError> {
    let matches = options.matches;
    let path = matches.try_get_one::<PathBuf>("requests").ok().flatten();
    let sample = matches
        .try_get_one::<String>("requests_sample")
        .ok()
        .flatten();
    let Some(path) = path else {
        return match sample {
            Some(_) => Err(ArgError::Refused(
                "--requests-sample needs --requests FILE (the log it samples)".to_string(),
            )),
            None => Ok(None),
        };
    };
    if matches.try_contains_id("vs").unwrap_or(false) {
        return Err(ArgError::Refused(
            "--requests goes with a single run, not --vs (one file would mix its rounds)"
                .to_string(),
        ));
    }
    let sample = match sample {
        None => 1.0,
        Some(text) => match text.trim().parse::<f64>() {
            Ok(f) if f > 0.0 && f <= 1.0 => f,
            _ => {
                return Err(options.invalid(
                    "requests_sample",
                    "a fraction of the requests, more than 0 and at most 1",
                ))
            }
        },
    };
    Ok(Some(RequestsOut {
        path: path.clone(),
        sample,
    }))
}
