//! wrk2's command line, turned into a validated [`Plan`].
//!
//! Existing wrk2 command lines must keep working unchanged (same flags, defaults, unit suffixes,
//! options before or after the URL, script arguments), so clap only splits argv here; values
//! are converted by our own parsers (`units`, `url`, `header`) so every mistake comes back
//! as one line that names the option, the value and the fix — never wrk's bare usage dump and
//! never clap's multi-line report. `main` prefixes the line with `tsumo: ` and exits 2.
//!
//! Differences from wrk2, all deliberate: `-R` is optional (no `-R` runs a closed loop at full
//! speed); `-h` prints help and `-v` the version, both exit 0; durations accept `ms`/`us`;
//! `-H "Name:value"` without a space is accepted instead of silently dropped; the URL fragment
//! is not sent; plus the long options `--insecure`, `--cacert`, `--json`, `--quiet`,
//! `--progress`.
//!
//! Subcommands (`tsumo compare …`) are meant to be dispatched in [`parse`] on the first
//! argument before the wrk2 parser runs; a URL can never be mistaken for a subcommand word.
//!
//! Each option is defined once, as a clap `Arg` with its help: each command's own in its file
//! (`wrk`, `mahjong`, `capacity`, `doctor`, `tools`), those several commands take in `shared`
//! (and `shard`, `bind`, `slo`, `search`, `http2`), and every `--help`'s option list is
//! rendered from its command's table by `help`. `completions` assembles the same tables into one
//! tree for the shell completions and the man page (`tsumo completions`, `tsumo man`).

mod bind;
mod capacity;
mod completions;
mod doctor;
mod error;
mod header;
mod help;
mod http2;
mod mahjong;
mod mahjong_capacity;
mod message;
mod search;
mod shard;
mod shared;
mod slo;
mod stages;
mod tools;
mod units;
mod url;
mod wrk;
mod ws;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command};

use crate::error::Error;
use crate::plan::{CapacityPlan, JsonOut, MahjongPlan, Plan, RunOptions};
use crate::stats::timeline::{DEFAULT_INTERVAL, MIN_INTERVAL};

use message::clap_message;

pub use error::ArgError;
pub use header::parse_header;
pub use units::{parse_duration, parse_metric};
pub use url::parse_url;

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run this plan.
    Run(Box<Plan>),
    /// Search this server's capacity (`tsumo capacity …`).
    Capacity(Box<CapacityPlan>),
    /// Run this mahjong session (`tsumo mahjong …`).
    Mahjong(Box<MahjongPlan>),
    /// Search how many players this server carries (`tsumo mahjong --capacity …`).
    MahjongCapacity(Box<crate::plan::MahjongCapacityPlan>),
    /// Run WebSocket messages at a rate (`tsumo ws …`).
    Ws(Box<crate::plan::WsPlan>),
    /// Check the machine's limits for a planned run (`tsumo doctor …`).
    Doctor(Box<crate::sys::doctor::DoctorPlan>),
    /// Compare saved runs side by side (`tsumo compare …`).
    Compare(crate::report::tools::compare::CompareOptions),
    /// Merge saved runs into one (`tsumo merge …`).
    Merge(crate::report::tools::merge::MergeOptions),
    /// Plot saved runs' latency by percentile (`tsumo plot …`).
    Plot(crate::report::tools::plot::PlotOptions),
    /// Make the HTML page of saved results (`tsumo report …`).
    Report(crate::report::tools::page::ReportOptions),
    /// Print this text on stdout and exit 0 (`--help`, `--version`).
    Print(String),
}

const USAGE: &str = "usage: tsumo [options] <url>";

/// Parses argv (including `argv[0]`).
pub fn parse<I, T>(args: I) -> Result<Parsed, Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let mut parsed = parse_args(&args)?;
    if let Some(part) = parsed.part_mut() {
        part.command = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
    }
    Ok(parsed)
}

impl Parsed {
    /// The part of a run a command that runs one takes.
    fn part_mut(&mut self) -> Option<&mut crate::plan::Part> {
        match self {
            Parsed::Run(plan) => Some(&mut plan.options.part),
            Parsed::Capacity(plan) => Some(&mut plan.run.options.part),
            Parsed::Mahjong(plan) => Some(&mut plan.options.part),
            Parsed::MahjongCapacity(plan) => Some(&mut plan.session.options.part),
            Parsed::Ws(plan) => Some(&mut plan.options.part),
            _ => None,
        }
    }
}

/// [`parse`], before the command line is kept in the plan.
fn parse_args(args: &[OsString]) -> Result<Parsed, Error> {
    let args = args.to_vec();
    // A subcommand is the first argument; a URL can never be mistaken for one.
    match args.get(1).and_then(|a| a.to_str()) {
        Some("mahjong") => mahjong::parse(args[2..].to_vec()).map_err(Error::from),
        Some("ws") => ws::parse(args[2..].to_vec()).map_err(Error::from),
        Some("capacity") => capacity::parse(args[2..].to_vec()).map_err(Error::from),
        Some("doctor") => doctor::parse(args[2..].to_vec()).map_err(Error::from),
        Some("compare") => tools::parse_compare(args[2..].to_vec()).map_err(Error::from),
        Some("merge") => tools::parse_merge(args[2..].to_vec()).map_err(Error::from),
        Some("plot") => tools::parse_plot(args[2..].to_vec()).map_err(Error::from),
        Some("report") => tools::parse_report(args[2..].to_vec()).map_err(Error::from),
        Some("completions") => {
            completions::parse_completions(args[2..].to_vec()).map_err(Error::from)
        }
        Some("man") => completions::parse_man(args[2..].to_vec()).map_err(Error::from),
        _ => parse_wrk(args).map_err(Error::from),
    }
}

/// The wrk2-compatible command line. Errors are the one-line message.
fn parse_wrk(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    let command = wrk::command();
    let matches = command
        .clone()
        .try_get_matches_from(args.clone())
        .map_err(|e| ArgError::Clap(clap_message(&command, &e)))?;

    let options = Options {
        command: &command,
        matches: &matches,
    };
    if matches.get_flag("help") {
        return Ok(Parsed::Print(wrk::help()));
    }
    if matches.get_flag("version") {
        return Ok(Parsed::Print(format!(
            "tsumo {}\n",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let plan = run_plan(&options, &args[1..], Objectives::Run)?;
    Ok(Parsed::Run(Box::new(plan)))
}

/// Whose `--slo` a run's command line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Objectives {
    /// The run's own: judged at its end.
    Run,
    /// A capacity search's, judged at each step: the search parses them.
    Search,
}

/// An HTTP run's plan from its parsed command line: the wrk2 line's, or `tsumo capacity`'s (the
/// same options, each step a run); `argv` is the command line after the program's name.
fn run_plan(
    options: &Options<'_>,
    argv: &[OsString],
    objectives: Objectives,
) -> Result<Plan, ArgError> {
    let matches = options.matches;
    let load = wrk::Load::read(options)?;
    let Some(url) = matches.get_one::<String>("url") else {
        return Err(ArgError::Refused(format!("missing URL ({USAGE})")));
    };
    let target = url::parse_url(url)
        .map_err(|reason| ArgError::Refused(format!("invalid URL '{url}': {reason}")))?;
    let headers = wrk::headers(matches)?;
    load.check(options)?;
    let slack = wrk::slack_of(options)?;
    let part = shard::part(
        matches,
        argv,
        &shard::process_env,
        crate::sys::wallclock::unix_now_ns(),
    )?;
    let (connections, rate) =
        shard::split_http(load.connections, load.rate, load.threads, part.shard)?;
    let rate = load.mean_rate(part.shard.count).or(rate);
    let bind = bind::parse(matches)?;
    let json = json_out(path_option(matches, "json"));
    let u_latency = matches.get_flag("u_latency");

    let server_pids = server_pids(matches)?;
    let (vs, rounds) = wrk::vs_and_rounds(options)?;
    let https = |scheme| scheme == crate::plan::Scheme::Https;
    let vs_https = vs.as_ref().map(|vs| https(vs.scheme));
    let protocols = http2::parse(options, https(target.scheme), vs_https)?;
    let objectives = match objectives {
        Objectives::Run => slo::http(matches, rate.is_some())?,
        Objectives::Search => Vec::new(),
    };

    Ok(Plan {
        target,
        options: RunOptions {
            threads: load.threads,
            duration: load.duration,
            part,
            bind,
            latency: matches.get_flag("latency") || u_latency,
            insecure: matches.get_flag("insecure"),
            cacert: path_option(matches, "cacert"),
            json,
            quiet: matches.get_flag("quiet"),
            progress: matches.get_flag("progress"),
            label: matches
                .get_one::<String>("label")
                .cloned()
                .unwrap_or_else(|| url.clone()),
            server_pids,
            interval: interval(options)?,
            html: path_option(matches, "html"),
            junit: path_option(matches, "junit"),
            vs,
            vs_label: matches.get_one::<String>("vs_label").cloned(),
            rounds,
            objectives,
            dashboard: shared::dashboard_at(options)?,
            remote_write: shared::remote_write(options)?,
        },
        connections,
        rate,
        stages: load.stages,
        script: path_option(matches, "script"),
        script_timeout: load.script_timeout,
        headers,
        u_latency,
        batch_latency: matches.get_flag("batch_latency"),
        timeout: load.timeout,
        slack,
        progress_prefix: String::new(),
        end_early: None,
        hgrm: path_option(matches, "hgrm"),
        hlog: path_option(matches, "hlog"),
        requests: wrk::requests(options)?,
        protocol: protocols.run,
        vs_protocol: protocols.vs,
        script_args: matches
            .get_many::<String>("script_args")
            .into_iter()
            .flatten()
            .cloned()
            .collect(),
    })
}

/// `--json PATH` as the output it names: `-` for stdout.
fn json_out(path: Option<PathBuf>) -> Option<JsonOut> {
    match path {
        Some(p) if p.as_os_str() == "-" => Some(JsonOut::Stdout),
        Some(p) => Some(JsonOut::File(p)),
        None => None,
    }
}

/// `--rounds` (`default` when not given), checked with the other options that shape an A/B
/// comparison ([`only_with_vs`]).
fn ab_rounds(options: &Options, default: usize) -> Result<u32, ArgError> {
    only_with_vs(options.matches)?;
    let rounds = options.count("rounds")?.unwrap_or(default);
    if rounds == 0 {
        return Err(options.invalid("rounds", "must be at least 1"));
    }
    u32::try_from(rounds).map_err(|_| options.invalid("rounds", "number is too large"))
}

/// `--rounds` and `--vs-label` shape an A/B comparison: without `--vs` they are a mistake, not
/// something to ignore; and `--hgrm` has no place in one.
fn only_with_vs(matches: &ArgMatches) -> Result<(), ArgError> {
    if matches.contains_id("vs") {
        // The A/B loop writes no .hgrm: one file would hold only one of its runs.
        if matches.contains_id("hgrm") {
            return Err(ArgError::Refused(
                "--hgrm goes with a single run, not --vs (tsumo plot draws every run \
                        of the --vs --json file)"
                    .to_string(),
            ));
        }
        // A mahjong session has no --hlog to give.
        if matches.try_contains_id("hlog").unwrap_or(false) {
            return Err(ArgError::Refused(
                "--hlog goes with a single run, not --vs (each run of the --vs \
                        --json file has its intervals)"
                    .to_string(),
            ));
        }
        return Ok(());
    }
    for (id, flag, what) in [
        ("rounds", "--rounds", "the rounds of an A/B comparison"),
        ("vs_label", "--vs-label", "the name of its second target"),
    ] {
        if matches.contains_id(id) {
            return Err(ArgError::Refused(format!("{flag} needs --vs URL ({what})")));
        }
    }
    Ok(())
}

/// A subcommand's parser (`tsumo mahjong …`, `tsumo doctor …`): our own help and errors, the
/// last of a repeated option wins, unique prefixes of long options work — as for wrk2's line.
fn subcommand(name: &'static str) -> Command {
    Command::new(name)
        .no_binary_name(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .disable_help_subcommand(true)
        .args_override_self(true)
        .infer_long_args(true)
}

/// Parses a subcommand's `args` with `command`; a clap error becomes our one line.
fn subcommand_matches(command: &Command, args: Vec<OsString>) -> Result<ArgMatches, ArgError> {
    command
        .clone()
        .try_get_matches_from(args)
        .map_err(|e| ArgError::Clap(clap_message(command, &e)))
}

/// The positional arguments of a subcommand that takes one URL: the URL, and whatever follows
/// it, kept (not refused by clap) so that [`extra_argument`] can name it in our own words.
fn url_args() -> [Arg; 2] {
    [
        Arg::new("url").index(1).action(ArgAction::Set),
        Arg::new("extra")
            .index(2)
            .action(ArgAction::Append)
            .num_args(0..),
    ]
}

/// The first argument after the URL of [`url_args`], which no subcommand takes.
fn extra_argument(matches: &ArgMatches) -> Option<&String> {
    matches
        .get_many::<String>("extra")
        .and_then(|mut v| v.next())
}

/// How messages name an option: its short form when it has one (`-c`), else `--json`.
fn option_label(command: &Command, id: &str) -> String {
    let arg = command.get_arguments().find(|a| a.get_id() == id);
    match (arg.and_then(Arg::get_short), arg.and_then(Arg::get_long)) {
        (Some(short), _) => format!("-{short}"),
        (None, Some(long)) => format!("--{long}"),
        (None, None) => id.to_string(),
    }
}

/// A parsed command line and the command it was parsed with: turns option values into numbers
/// and durations, and names the option and the value as typed when one is wrong. Shared by the
/// wrk2 line and every subcommand.
pub(crate) struct Options<'a> {
    pub command: &'a Command,
    pub matches: &'a ArgMatches,
}

impl Options<'_> {
    /// `invalid value 'X' for -t: reason`, quoting the value as typed.
    pub fn invalid(&self, id: &str, reason: &str) -> ArgError {
        let typed = self
            .matches
            .get_one::<String>(id)
            .map(String::as_str)
            .unwrap_or_default();
        // Escaped: a value with a newline must not break the one-line error.
        ArgError::Invalid {
            option: option_label(self.command, id),
            value: units::one_line(typed),
            reason: reason.to_string(),
        }
    }

    /// A number with wrk's metric suffixes.
    pub fn metric(&self, id: &str) -> Result<Option<u64>, ArgError> {
        self.matches
            .get_one::<String>(id)
            .map(|text| units::parse_metric(text).map_err(|reason| self.invalid(id, &reason)))
            .transpose()
    }

    /// A metric count that must also fit the platform's `usize` (threads, connections).
    pub fn count(&self, id: &str) -> Result<Option<usize>, ArgError> {
        self.metric(id)?
            .map(|n| usize::try_from(n).map_err(|_| self.invalid(id, "number is too large")))
            .transpose()
    }

    /// A duration with wrk's suffixes (and ms, us).
    pub fn duration(&self, id: &str) -> Result<Option<Duration>, ArgError> {
        self.matches
            .get_one::<String>(id)
            .map(|text| units::parse_duration(text).map_err(|reason| self.invalid(id, &reason)))
            .transpose()
    }
}

/// `--server-pid`, repeatable: process ids (existence is checked when sampling starts).
pub(crate) fn server_pids(matches: &ArgMatches) -> Result<Vec<u32>, ArgError> {
    matches
        .get_many::<String>("server_pid")
        .into_iter()
        .flatten()
        .map(|text| {
            text.trim()
                .parse::<u32>()
                .ok()
                .filter(|&pid| pid > 0)
                .ok_or_else(|| ArgError::Invalid {
                    option: "--server-pid".to_string(),
                    value: text.clone(),
                    reason: "expected a process id".to_string(),
                })
        })
        .collect()
}

/// `--interval`: the length of the run's intervals, at least [`MIN_INTERVAL`].
pub(crate) fn interval(options: &Options<'_>) -> Result<Duration, ArgError> {
    match options.duration("interval")? {
        None => Ok(DEFAULT_INTERVAL),
        Some(length) if length < MIN_INTERVAL => {
            Err(options.invalid("interval", "must be at least 10ms"))
        }
        Some(length) => Ok(length),
    }
}

/// A file option (clap already refuses an empty name).
fn path_option(matches: &ArgMatches, id: &str) -> Option<PathBuf> {
    matches.get_one::<PathBuf>(id).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Plan, String> {
        let argv = std::iter::once("tsumo").chain(args.iter().copied());
        match parse(argv) {
            Ok(Parsed::Run(plan)) => Ok(*plan),
            Ok(Parsed::Print(text)) => Err(format!("printed: {text}")),
            Ok(Parsed::Mahjong(plan)) => Err(format!("mahjong plan: {plan:?}")),
            Ok(Parsed::Capacity(plan)) => Err(format!("capacity plan: {plan:?}")),
            Ok(Parsed::MahjongCapacity(plan)) => Err(format!("capacity plan: {plan:?}")),
            Ok(Parsed::Doctor(plan)) => Err(format!("doctor plan: {plan:?}")),
            Ok(Parsed::Ws(plan)) => Err(format!("ws plan: {plan:?}")),
            Ok(Parsed::Compare(o)) => Err(format!("compare: {o:?}")),
            Ok(Parsed::Merge(o)) => Err(format!("merge: {o:?}")),
            Ok(Parsed::Plot(o)) => Err(format!("plot: {o:?}")),
            Ok(Parsed::Report(o)) => Err(format!("report: {o:?}")),
            Err(e) => Err(e.to_string()),
        }
    }

    fn plan(args: &[&str]) -> Plan {
        match run(args) {
            Ok(plan) => plan,
            Err(e) => panic!("{args:?}: {e}"),
        }
    }

    fn error(args: &[&str]) -> String {
        match run(args) {
            Ok(plan) => panic!("{args:?} parsed: {plan:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn defaults() {
        let p = plan(&["http://localhost:8080/"]);
        assert_eq!(p.options.threads, 2);
        assert_eq!(p.connections, 10);
        assert_eq!(p.options.duration, Duration::from_secs(10));
        assert_eq!(p.rate, None);
        assert_eq!(p.timeout, Duration::from_secs(2));
        assert_eq!(p.script, None);
        assert!(p.headers.is_empty());
        assert!(!p.options.latency && !p.u_latency && !p.batch_latency);
        assert!(!p.options.insecure && !p.options.quiet && !p.options.progress);
        assert_eq!(p.options.cacert, None);
        assert_eq!(p.options.json, None);
        assert!(p.script_args.is_empty());
        assert_eq!(p.target.explicit_port, Some(8080));
    }

    #[test]
    fn every_option() {
        let p = plan(&[
            "-t4",
            "-c",
            "1k",
            "-d2m",
            "-R",
            "50k",
            "-s",
            "x.lua",
            "-H",
            "X-A: 1",
            "-L",
            "-B",
            "-T",
            "500ms",
            "-k",
            "--cacert",
            "ca.pem",
            "--json",
            "out.json",
            "--quiet",
            "--progress",
            "https://h/p",
        ]);
        assert_eq!((p.options.threads, p.connections), (4, 1000));
        assert_eq!(p.options.duration, Duration::from_secs(120));
        assert_eq!(p.rate, Some(50_000));
        assert_eq!(p.script, Some(PathBuf::from("x.lua")));
        assert_eq!(p.headers, vec![("X-A".to_string(), "1".to_string())]);
        assert!(p.options.latency && !p.u_latency && p.batch_latency);
        assert_eq!(p.timeout, Duration::from_millis(500));
        assert!(p.options.insecure && p.options.quiet && p.options.progress);
        assert_eq!(p.options.cacert, Some(PathBuf::from("ca.pem")));
        assert_eq!(
            p.options.json,
            Some(JsonOut::File(PathBuf::from("out.json")))
        );
    }

    #[test]
    fn long_forms() {
        let p = plan(&[
            "--threads=3",
            "--connections",
            "6",
            "--duration",
            "1h",
            "--rate=10",
            "--script=s.lua",
            "--header",
            "A: b",
            "--latency",
            "--batch_latency",
            "--timeout",
            "5",
            "--insecure",
            "--json",
            "-",
            "http://h",
        ]);
        assert_eq!((p.options.threads, p.connections, p.rate), (3, 6, Some(10)));
        assert_eq!(p.options.duration, Duration::from_secs(3600));
        assert_eq!(p.timeout, Duration::from_secs(5));
        assert!(p.options.latency && p.batch_latency && p.options.insecure);
        assert_eq!(p.options.json, Some(JsonOut::Stdout));
        // getopt_long accepts unique prefixes.
        assert_eq!(plan(&["--conn", "4", "http://h"]).connections, 4);
    }

    #[test]
    fn slack_is_auto_unless_given() {
        assert_eq!(plan(&["-R1000", "http://h"]).slack, None);
        assert_eq!(plan(&["--slack", "auto", "http://h"]).slack, None);
        assert_eq!(
            plan(&["--slack", "0", "http://h"]).slack,
            Some(Duration::ZERO)
        );
        assert_eq!(
            plan(&["--slack=250us", "http://h"]).slack,
            Some(Duration::from_micros(250))
        );
        assert_eq!(
            plan(&["--slack", "10ms", "http://h"]).slack,
            Some(Duration::from_millis(10))
        );
    }

    #[test]
    fn u_latency_implies_latency() {
        let p = plan(&["-U", "http://h"]);
        assert!(p.options.latency && p.u_latency);
        let p = plan(&["--u_latency", "http://h"]);
        assert!(p.options.latency && p.u_latency);
    }

    #[test]
    fn options_after_the_url_and_script_args() {
        // wrk2.md §1.1, verified against wrk.
        let p = plan(&[
            "-R1",
            "-d1s",
            "-s",
            "args.lua",
            "http://h/",
            "foo",
            "-t1",
            "-c1",
            "bar",
            "--",
            "-x",
            "baz",
        ]);
        assert_eq!((p.options.threads, p.connections), (1, 1));
        assert_eq!(p.script_args, ["foo", "bar", "-x", "baz"]);
        assert_eq!(p.target.url, "http://h/");

        let p = plan(&["http://h", "-t1", "-c1", "--", "--help", "-v", "--", "x"]);
        assert_eq!(p.script_args, ["--help", "-v", "--", "x"]);
        let p = plan(&["--", "http://h", "-t9"]);
        assert_eq!(p.options.threads, 2);
        assert_eq!(p.script_args, ["-t9"]);
    }

    #[test]
    fn repeated_options_last_wins_and_headers_accumulate() {
        let p = plan(&[
            "-t1", "-t3", "-c9", "-H", "A: 1", "-H", "B:2", "-H", "a: 3", "http://h",
        ]);
        assert_eq!(p.options.threads, 3);
        assert_eq!(
            p.headers,
            vec![
                ("a".to_string(), "3".to_string()),
                ("B".to_string(), "2".to_string())
            ]
        );
    }

    #[test]
    fn connections_spread_over_threads() {
        let p = plan(&["-t3", "-c10", "http://h"]);
        let per_thread: Vec<usize> = (0..3).map(|t| p.connections_for_thread(t)).collect();
        assert_eq!(per_thread, [4, 3, 3]);
        let p = plan(&["-t4", "-c4", "http://h"]);
        assert!((0..4).all(|t| p.connections_for_thread(t) == 1));
        let p = plan(&["-t1", "-c1k", "http://h"]);
        assert_eq!(p.connections_for_thread(0), 1000);
    }

    #[test]
    fn help_and_version() {
        for args in [["-h"], ["--help"]] {
            let argv = std::iter::once("tsumo").chain(args);
            match parse(argv) {
                Ok(Parsed::Print(text)) => assert!(text.contains("Usage: tsumo")),
                other => panic!("{other:?}"),
            }
        }
        match parse(["tsumo", "http://h", "-v"]) {
            Ok(Parsed::Print(text)) => {
                assert_eq!(text, format!("tsumo {}\n", env!("CARGO_PKG_VERSION")))
            }
            other => panic!("{other:?}"),
        }
    }

    /// Every command's option table, and the words that print its help.
    fn every_command() -> Vec<(Command, &'static [&'static str])> {
        vec![
            (wrk::command(), &["--help"]),
            (mahjong::command(), &["mahjong", "--help"]),
            (capacity::command(), &["capacity", "--help"]),
            (doctor::command(), &["doctor", "-h"]),
            (tools::compare_command(), &["compare", "--help"]),
            (tools::merge_command(), &["merge", "--help"]),
            (tools::plot_command(), &["plot", "-h"]),
            (tools::report_command(), &["report", "--help"]),
        ]
    }

    /// Each command's help lists exactly the options of its table, each with its text and the
    /// name of its value.
    #[test]
    fn help_mentions_every_option() {
        for (command, words) in every_command() {
            let argv = std::iter::once("tsumo").chain(words.iter().copied());
            let Ok(Parsed::Print(text)) = parse(argv) else {
                panic!("{words:?} printed no help")
            };
            let listed: Vec<&str> = text
                .lines()
                .filter(|line| line.starts_with("  -") || line.starts_with("      --"))
                .collect();
            let options: Vec<&Arg> = command
                .get_arguments()
                .filter(|arg| !arg.is_positional())
                .collect();
            for arg in &options {
                let names = help::names(arg);
                let shown = listed.iter().any(|line| {
                    line.strip_prefix(names.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
                });
                assert!(shown, "{words:?}: {names}");
                assert!(arg.get_help().is_some(), "{words:?}: {names} has no help");
                let takes_value = arg.get_action().takes_values();
                assert_eq!(
                    takes_value,
                    arg.get_value_names().is_some(),
                    "{words:?}: {names}"
                );
            }
            for line in listed {
                let long = line.trim_start().split(' ').find(|w| w.starts_with("--"));
                let long = long.map(|w| w.trim_start_matches('-'));
                assert!(
                    options.iter().any(|arg| arg.get_long() == long),
                    "{words:?} shows an option it does not take: {line}"
                );
            }
        }
        assert!(wrk::help().contains("ms"));
        // What capacity shows besides its own options is the run's (its parser's) too.
        let run = wrk::command();
        for arg in capacity::command().get_arguments() {
            let long = arg.get_long();
            let own = capacity::own_args().iter().any(|a| a.get_long() == long);
            assert!(
                own || run.get_arguments().any(|r| r.get_long() == long),
                "{long:?}"
            );
        }
    }

    #[test]
    fn error_messages() {
        let cases: &[(&[&str], &str)] = &[
            (
                &["--foo", "http://h"],
                "unknown option '--foo' (see tsumo --help)",
            ),
            (
                &["-x", "http://h"],
                "unknown option '-x' (see tsumo --help)",
            ),
            (&["http://h", "-c"], "option '-c' needs a value"),
            (&["http://h", "--connections"], "option '-c' needs a value"),
            (&["http://h", "--json"], "option '--json' needs a value"),
            (
                &["--latency=yes", "http://h"],
                "option '-L' does not take a value",
            ),
            (
                &["-d", "1.5", "http://h"],
                "invalid value '1.5' for -d: fractions",
            ),
            (
                &["-t", "-1", "http://h"],
                "invalid value '-1' for -t: must not be negative",
            ),
            (
                &["-c", "10s", "http://h"],
                "invalid value '10s' for -c: unknown suffix 's'",
            ),
            (
                &["-t0", "http://h"],
                "invalid value '0' for -t: must be at least 1",
            ),
            (
                &["-c0", "http://h"],
                "invalid value '0' for -c: must be at least 1",
            ),
            (
                &["-t2", "-c1", "http://h"],
                "-c 1 is fewer connections than -t 2 threads; \
                 each thread needs at least one connection",
            ),
            (
                &["-d0", "http://h"],
                "invalid value '0' for -d: must be longer than zero",
            ),
            (
                &["-R0", "http://h"],
                "invalid value '0' for -R: must be at least 1",
            ),
            (
                &["-T0ms", "http://h"],
                "invalid value '0ms' for -T: must be longer than zero",
            ),
            (
                &["--slack", "11ms", "http://h"],
                "invalid value '11ms' for --slack: must be at most 10ms",
            ),
            (
                &["--slack", "soon", "http://h"],
                "invalid value 'soon' for --slack:",
            ),
            (&[], "missing URL (usage: tsumo [options] <url>)"),
            (&["-t1"], "missing URL (usage: tsumo [options] <url>)"),
            (
                &["ftp://x"],
                "invalid URL 'ftp://x': scheme must be http or https",
            ),
            (
                &["http://h:0/"],
                "invalid URL 'http://h:0/': port '0' must be",
            ),
            (
                &["-H", "nocolon", "http://h"],
                "invalid header 'nocolon' for -H:",
            ),
            (
                &["-H", ": v", "http://h"],
                "invalid header ': v' for -H: the header name is empty",
            ),
            (&["--json", "", "http://h"], "option '--json' needs a value"),
            (&["--c", "1", "http://h"], "unknown option '--c'"),
        ];
        for (args, want) in cases {
            let got = error(args);
            assert!(got.starts_with(want), "{args:?}: {got}");
            assert!(!got.contains('\n'), "{args:?}: {got:?}");
            assert!(!got.starts_with("error"), "{args:?}: {got}");
        }
    }
}
