//! `tsumo compare`, `tsumo merge` and `tsumo plot`: the command lines of the tools that read
//! saved `--json` results. Same conventions as the run commands: options before or after the
//! files, every mistake one line that says what to do; the work is in `report::{compare, merge,
//! plot}`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::error::ArgError;
use super::help::Page;
use super::shared::{self, file, flag, value, For};
use super::{subcommand_matches, Parsed};
use crate::plan::JsonOut;
use crate::report::tools::compare::CompareOptions;
use crate::report::tools::merge::MergeOptions;
use crate::report::tools::page::ReportOptions;
use crate::report::tools::plot::PlotOptions;

const COMPARE_PAGE: Page = Page {
    before: "\
tsumo compare — saved runs side by side

Usage: tsumo compare <run.json>...

One column per label (a run's --label, else its URL), holding the mean of that label's runs,
then each label's ratio to the first (B/A). HTTP runs compare on rate, transfer, corrected and
uncorrected latency percentiles, send lateness, errors by kind, connections opened, TLS
handshakes and, when sampled (--server-pid), the server's CPU and memory. Mahjong sessions
compare on phases, games, step intervals, overshoots, reply lateness, messages, errors and
CPU/memory per player. Runs of both modes cannot be mixed.

Give each label several runs (rounds): the comparison opens with one verdict on every key
measure (rate, p50, p99, the server's p99, server CPU), those beyond run-to-run noise first, and
a sentence under the table says the same of each: beyond noise is larger than the spread
(max - min) of one label's rounds. With one run of a label there is no verdict. Runs timed by
different clocks (h3 in user space, h2 by the kernel) are not judged on latency. A run given
twice is refused.

Example:
  tsumo -R2000 -d30s --json direct1.json http://127.0.0.1:8080/   (and direct2, nginx1, nginx2)
  tsumo compare direct1.json direct2.json nginx1.json nginx2.json
",
    heading: "Options",
    column: 24,
    after: "\
Exit status: 0 the table was printed; 2 a bad command line, or a file that cannot be read,
does not parse or is of a newer format.
",
};

const MERGE_PAGE: Page = Page {
    before: "\
tsumo merge — one result from runs that went on at the same time

Usage: tsumo merge <run.json>... -o <merged.json>

For runs from several processes or machines against one server, started together: histograms
are added exactly and percentiles recomputed from the sum, counters are summed, elapsed time is
the longest, and rates are the totals over it. Works for HTTP runs and for mahjong sessions
(phases, games, steps, messages); runs of both modes cannot be mixed. Runs of different plans
(URL, duration, rate, players) are refused unless --force, and so is a file given twice.

Shards (--shard I/N): a file may hold several documents one after another, and '-' reads
them from stdin, as `kubectl logs` prints the pods of an Indexed Job run with --json - --quiet
(lines between the documents that are not JSON are skipped). Shards of different run ids are
refused, and so is a shard given twice; a missing shard is named and refused (--force merges
the others). Prints the merged run and one line per shard: rate, errors, send lateness and
its start after --start-at and after the earliest shard's; the merge's start skew is the latest
start after the earliest (on stderr when -o is '-').

--requests FILE merges the runs' request logs (each run's --requests, found where its JSON
says, else beside the JSON) into one, ordered by intended time: times count from the earliest
shard's start, rows are sorted in chunks on disk beside FILE, so any size fits.

Example:
  kubectl logs -l job-name=tsumo --tail=-1 | tsumo merge - -o merged.json
  tsumo merge shard-*.json -o merged.json --requests merged.csv.zst
",
    heading: "Options",
    column: 25,
    after: "\
Exit status: 0 merged; 1 the merged file could not be written; 2 a bad command line, a
file that cannot be read, does not parse or is newer, or runs that do not merge.
",
};

const PLOT_PAGE: Page = Page {
    before: "\
tsumo plot — latency by percentile of saved runs, as an SVG chart

Usage: tsumo plot <run.json>... -o <chart.svg>

One line per run on HdrHistogram's percentile axis (0%, 90%, 99%, 99.9% ... evenly spaced),
latency in ms, drawn from the whole saved histogram. HTTP runs plot corrected latency; mahjong
sessions plot tsumo's reply lateness unless --metric names another histogram.
",
    heading: "Options",
    column: 24,
    after: "\
Exit status: 0 plotted; 1 the chart could not be written; 2 a bad command line, or a
file that cannot be read, does not parse or is newer.
",
};

const REPORT_PAGE: Page = Page {
    before: "\
tsumo report — the HTML page of saved results, or their Markdown summary

Usage: tsumo report <run.json>... -o <page.html>
       tsumo report --markdown <run.json>... [-o <summary.md>]

One self-contained file (inline CSS and SVG, nothing fetched): the answer first — target and
achieved rate (and the \"not reached\" line), p50, p99, max, errors, or a search's capacity
and what broke — then the command, target, plan, version, run id and shards, then the charts:
latency by percentile (corrected and uncorrected), latency, rate, errors and send lateness
over time, the server's CPU and memory when sampled; a mahjong session's players by phase,
step overshoot and games over time.

  One file                 that run's page (an HTTP run, a mahjong session)
  Several files            a comparison: their figures and the compare table, runs overlaid
  A capacity search        its curves: each objective's measure against offered load
  The shards of one run    the merged run, with one line per shard (--shard's --json files)

The same page as --html FILE on a run, a --vs comparison or tsumo capacity.

--markdown writes the summary a run appends to GITHUB_STEP_SUMMARY, for any CI page or merge
request: the answer line, the figures as a table, each objective's verdict, and for several
files their comparison table (docs/ci.md).
",
    heading: "Options",
    column: 24,
    after: "\
Exit status: 0 written; 1 the page could not be written; 2 a bad command line, or a
file that cannot be read, does not parse or is newer, or runs of two modes.
",
};

/// A command that takes files plus the given options, then `-h`.
fn command(name: &'static str, options: Vec<Arg>) -> Command {
    super::subcommand(name).args(options).args([
        shared::help(),
        Arg::new("files")
            .index(1)
            .action(ArgAction::Append)
            .num_args(0..)
            .value_parser(clap::value_parser!(PathBuf)),
    ])
}

/// `-o, --output <FILE>`: where a tool writes its result.
fn output_arg(tool: For) -> Arg {
    file("output", Some('o'), "output").help(match tool {
        For::Merge => "Where to write the merged JSON ('-' for stdout) [required]",
        For::Plot => "Where to write the SVG ('-' for stdout) [required]",
        _ => "Where to write the page [required; with --markdown, stdout without it]",
    })
}

/// `tsumo compare`'s table.
pub(super) fn compare_command() -> Command {
    command("tsumo compare", vec![])
}

/// `tsumo merge`'s table.
pub(super) fn merge_command() -> Command {
    command(
        "tsumo merge",
        vec![
            output_arg(For::Merge),
            shared::label(For::Merge),
            flag("force", None, "force")
                .help("Merge runs of different plans (a warning names each difference)"),
            file("requests", None, "requests").help(
                "Merge the runs' request logs (their --requests) into one FILE,\n\
                 ordered by intended time (zstd when FILE ends in .zst)",
            ),
        ],
    )
}

/// `tsumo plot`'s table.
pub(super) fn plot_command() -> Command {
    command(
        "tsumo plot",
        vec![
            output_arg(For::Plot),
            value("metric", None, "metric").value_name("NAME").help(
                "HTTP: latency (default), uncorrected, send_lateness, server_latency.\n\
                 Mahjong: reply_lateness (default), draw_overshoot, deal_overshoot,\n\
                 start_burst, games, a phase (login, connect, ...) or a step kind",
            ),
        ],
    )
}

/// `tsumo report`'s table.
pub(super) fn report_command() -> Command {
    command(
        "tsumo report",
        vec![
            output_arg(For::Report),
            flag("markdown", None, "markdown").help(
                "Write a Markdown summary instead of the page (stdout without -o):\n\
                 the answer, the figures, each objective's verdict, a comparison",
            ),
        ],
    )
}

fn files(matches: &ArgMatches, usage: &str) -> Result<Vec<PathBuf>, ArgError> {
    let files: Vec<PathBuf> = matches
        .get_many::<PathBuf>("files")
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if files.is_empty() {
        return Err(ArgError::Refused(format!(
            "no result files given (usage: {usage})"
        )));
    }
    Ok(files)
}

fn output(matches: &ArgMatches, usage: &str) -> Result<PathBuf, ArgError> {
    matches
        .get_one::<PathBuf>("output")
        .cloned()
        .ok_or_else(|| {
            ArgError::Refused(format!(
                "missing -o FILE: where to write the result (usage: {usage})"
            ))
        })
}

/// `tsumo compare FILE…` (the arguments after `compare`).
pub fn parse_compare(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    const USAGE: &str = "tsumo compare <run.json>...";
    let command = compare_command();
    let m = subcommand_matches(&command, args)?;
    if m.get_flag("help") {
        return Ok(Parsed::Print(COMPARE_PAGE.render(&command)));
    }
    Ok(Parsed::Compare(CompareOptions {
        files: files(&m, USAGE)?,
    }))
}

/// `tsumo merge FILE… -o OUT [--label NAME]`.
pub fn parse_merge(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    const USAGE: &str = "tsumo merge <run.json>... -o <merged.json>";
    let command = merge_command();
    let m = subcommand_matches(&command, args)?;
    if m.get_flag("help") {
        return Ok(Parsed::Print(MERGE_PAGE.render(&command)));
    }
    let files = files(&m, USAGE)?;
    let output = output(&m, USAGE)?;
    Ok(Parsed::Merge(MergeOptions {
        files,
        output: if output.as_os_str() == "-" {
            JsonOut::Stdout
        } else {
            JsonOut::File(output)
        },
        label: m.get_one::<String>("label").cloned(),
        force: m.get_flag("force"),
        requests: m.get_one::<PathBuf>("requests").cloned(),
    }))
}

/// `tsumo plot FILE… -o OUT.svg [--metric NAME]`.
pub fn parse_plot(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    const USAGE: &str = "tsumo plot <run.json>... -o <chart.svg>";
    let command = plot_command();
    let m = subcommand_matches(&command, args)?;
    if m.get_flag("help") {
        return Ok(Parsed::Print(PLOT_PAGE.render(&command)));
    }
    let files = files(&m, USAGE)?;
    let output = output(&m, USAGE)?;
    Ok(Parsed::Plot(PlotOptions {
        files,
        output,
        metric: m.get_one::<String>("metric").cloned(),
    }))
}

/// `tsumo report FILE… -o OUT.html`.
pub fn parse_report(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    const USAGE: &str = "tsumo report <run.json>... -o <page.html>";
    let command = report_command();
    let m = subcommand_matches(&command, args)?;
    if m.get_flag("help") {
        return Ok(Parsed::Print(REPORT_PAGE.render(&command)));
    }
    let files = files(&m, USAGE)?;
    let markdown = m.get_flag("markdown");
    let output = match m.get_one::<PathBuf>("output") {
        None if markdown => PathBuf::from("-"),
        _ => output(&m, USAGE)?,
    };
    Ok(Parsed::Report(ReportOptions {
        files,
        output,
        markdown,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn compare_takes_files() {
        match parse_compare(args(&["a.json", "b.json"])) {
            Ok(Parsed::Compare(o)) => {
                assert_eq!(o.files, [PathBuf::from("a.json"), PathBuf::from("b.json")])
            }
            other => panic!("{other:?}"),
        }
        match parse_compare(args(&["--help"])) {
            Ok(Parsed::Print(text)) => assert!(text.contains("Usage: tsumo compare")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn merge_and_plot_options_anywhere() {
        match parse_merge(args(&[
            "a.json",
            "-o",
            "all.json",
            "b.json",
            "--label",
            "x",
            "--requests",
            "all.csv.zst",
        ])) {
            Ok(Parsed::Merge(o)) => {
                assert_eq!(o.files.len(), 2);
                assert_eq!(o.output, JsonOut::File(PathBuf::from("all.json")));
                assert_eq!(o.label.as_deref(), Some("x"));
                assert_eq!(o.requests, Some(PathBuf::from("all.csv.zst")));
            }
            other => panic!("{other:?}"),
        }
        match parse_merge(args(&["a.json", "-o-"])) {
            Ok(Parsed::Merge(o)) => assert_eq!(o.output, JsonOut::Stdout),
            other => panic!("{other:?}"),
        }
        match parse_plot(args(&["-o", "l.svg", "a.json", "--metric", "uncorrected"])) {
            Ok(Parsed::Plot(o)) => {
                assert_eq!(o.output, PathBuf::from("l.svg"));
                assert_eq!(o.metric.as_deref(), Some("uncorrected"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn errors_are_one_line() {
        let cases: [(Result<Parsed, ArgError>, &str); 6] = [
            (parse_compare(args(&[])), "no result files given"),
            (
                parse_compare(args(&["--bogus", "a"])),
                "unknown option '--bogus'",
            ),
            (parse_merge(args(&["a.json"])), "missing -o FILE"),
            (
                parse_merge(args(&["-o", "x.json"])),
                "no result files given",
            ),
            (
                parse_plot(args(&["a.json", "-o"])),
                "option '-o' needs a value",
            ),
            (parse_plot(args(&["a.json"])), "missing -o FILE"),
        ];
        for (result, needle) in cases {
            match result {
                Err(e) => {
                    let e = e.to_string();
                    assert!(e.contains(needle), "{e}");
                    assert!(!e.contains('\n'), "{e}");
                }
                Ok(p) => panic!("parsed: {p:?}"),
            }
        }
    }
}
