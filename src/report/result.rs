//! The one trait every saved result implements ([`SavedResult`]): an HTTP run (`report::http`),
//! a mahjong session (`report::mahjong`), a capacity search (`report::capacity`). The tools on
//! saved results (`report::tools`) ask a result through it, never by its kind. A kind whose
//! result can be a capacity search's step implements [`SearchStep`] too: what the search asks
//! of a step (its outcome, its objectives judged again after a merge, its row in the table).
//!
//! Why a trait: each tool used to match on the mode, so a new kind of result (or a metric of
//! one) meant an arm in every tool; now it is an implementation beside its saved type, and a
//! new question to every result (an objective's measure) is one more method here.

use std::any::Any;
use std::net::IpAddr;

use hdrhistogram::Histogram;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::capacity::{LoadUnit, StepOutcome};
use crate::error::{Error, ExitStatus};
use crate::report::chart::{Answer, Bound, Objective, Series};
use crate::report::schema::{decode_histogram, SavedPart};
use crate::report::timeline::IntervalSpan;
use crate::slo::{self, Verdict};
use crate::stats::requests::RequestsLog;
use crate::sys::procstat::ServerUsage;

/// `part`, `server` and their `_mut`s for a saved type that holds them as fields named `part`
/// and `server`, as every saved type does: written once, expanded in each `impl SavedResult`.
macro_rules! part_and_server_fields {
    () => {
        fn part(&self) -> &$crate::report::schema::SavedPart {
            &self.part
        }

        fn part_mut(&mut self) -> &mut $crate::report::schema::SavedPart {
            &mut self.part
        }

        fn server(&self) -> Option<&$crate::sys::procstat::ServerUsage> {
            self.server.as_ref()
        }

        fn server_mut(&mut self) -> &mut Option<$crate::sys::procstat::ServerUsage> {
            &mut self.server
        }
    };
}
pub(crate) use part_and_server_fields;

/// A saved result of any mode, as the tools on saved results read it.
pub trait SavedResult: std::fmt::Debug {
    /// How messages name the kind (`an HTTP run`, `a capacity run`): the kind's `MODE` (the
    /// `"mode"` its document is saved with), but `HTTP` for `http`.
    fn title(&self) -> &'static str;
    /// The result's name in comparisons (`--label`; empty when none was saved).
    fn label(&self) -> &str;
    /// The target URL as typed.
    fn url(&self) -> &str;
    /// Where the file stands in a run (its run id, shard, start and sources).
    fn part(&self) -> &SavedPart;
    fn part_mut(&mut self) -> &mut SavedPart;
    /// The server's CPU and memory, when the run sampled them (`--server-pid`).
    fn server(&self) -> Option<&ServerUsage>;
    fn server_mut(&mut self) -> &mut Option<ServerUsage>;
    /// Wall time, seconds.
    fn elapsed_s(&self) -> f64;
    /// The length of its timeline's intervals (`--interval`), ns, when it has two or more.
    fn interval_ns(&self) -> Option<u64> {
        None
    }
    /// Where its latencies' receive times come from (`kernel`, `user`): a comparison does not
    /// judge the latency of runs timed differently. `None`: the mode times every run alike.
    fn receive_stamps(&self) -> Option<&'static str> {
        None
    }
    /// `--requests`: where its per-request log went (a kind that keeps none: `None`).
    fn requests_log(&self) -> Option<&RequestsLog> {
        None
    }
    /// The same, to set (`tsumo merge --requests`); `None` for a kind that keeps none.
    fn requests_log_mut(&mut self) -> Option<&mut Option<RequestsLog>> {
        None
    }
    /// The signal that cut the run short, if one did.
    fn cut_by_signal(&self) -> Option<String>;
    /// The error that stopped the run before its plan ended, in words (a script error).
    fn stopped_by_error(&self) -> Option<String> {
        None
    }

    /// The text report from the saved document, in the mode's usual layout (what `tsumo merge`
    /// prints for the merged result).
    fn text(&self) -> Result<String, Error>;
    /// The exit verdict: `None` when the run ran (status 0), else the line it failed with
    /// (status 1: errors, or sessions left on the server).
    fn verdict(&self) -> Option<String>;
    /// `--slo`'s objectives as judged on this result (none without `--slo`).
    fn objectives(&self) -> &[Verdict];
    /// `--slo` judged on each stage of a `--stages` run: the stage in words (`stage 3
    /// (2,000→8,000 req/s)`) and its verdicts; none without stages or objectives.
    fn stage_objectives(&self) -> Vec<(String, &[Verdict])> {
        Vec::new()
    }
    /// How tsumo exits on this result, with the line it says: 1 and the verdict's line when
    /// the run failed, else 99 and the broken objectives when one broke, else 0.
    fn exit(&self) -> (ExitStatus, Option<String>) {
        if let Some(line) = self.verdict() {
            return (ExitStatus::Failed, Some(line));
        }
        match slo::broken_line(self.objectives()) {
            Some(line) => (ExitStatus::ObjectiveBroken, Some(line)),
            None => (ExitStatus::Ran, None),
        }
    }

    /// What must be the same for two results to be parts of one run, besides the mode and the
    /// URL: `(what, value)` in one order for every result of a mode.
    fn plan_key(&self) -> Vec<(&'static str, String)>;
    /// The comparison table's rows, in order (the server's rows are added by `compare`).
    fn rows(&self) -> Vec<Row>;
    /// The rows that get a sentence on run-to-run noise: (row, name in the sentence).
    fn key_metrics(&self) -> &'static [(&'static str, &'static str)];

    /// The names of the histograms [`SavedResult::plotted`] finds, for a message.
    fn plottable(&self) -> Vec<&str>;
    /// The histogram called `name` (`None`: the mode's default), with the plot's title.
    fn plotted(&self, name: Option<&str>) -> Option<Named<'_>>;
    /// The load, as the plot's subtitle says it (`-R2000 -c50 -d10s`, `16 players -d60s`).
    fn load(&self) -> String;

    /// A shard's line in `tsumo merge`: its totals (rate or players, errors, lateness).
    fn shard_line(&self) -> String;
    /// The merged result's line in `tsumo merge`.
    fn merged_line(&self) -> String;

    /// Parts of one run (each with its source), merged exactly into one; every part is of this
    /// type (the caller refuses a mix of modes first).
    fn merge(parts: &[(&Self, &str)], label: &str) -> Result<Self, Error>
    where
        Self: Sized;

    /// For [`SavedResult::merge`]'s caller, which holds results by the trait.
    fn as_any(&self) -> &dyn Any;

    /// What its page shows (`--html`, `tsumo report`), as plain data: `report::tools::page` lays it
    /// out, adds the run id and shards from [`SavedResult::part`], and overlays several.
    fn page(&self) -> PageContent;
}

/// A result that can be one step of a capacity search: everything `report::capacity` asks of
/// a step, so that the search's saved type, text, page and merge hold no arm per kind.
pub trait SearchStep:
    SavedResult + Clone + PartialEq + Serialize + DeserializeOwned + 'static
{
    /// What such a search's load is counted in.
    const UNIT: LoadUnit;
    /// The search, as its messages name it: `capacity search`, `search over players`.
    const SEARCH: &'static str;
    /// The capacity table's columns of this kind's steps, after `step` and `role` (and before
    /// the server's and the verdict).
    const COLUMNS: &'static [&'static str];
    /// What a step's achieved load is counted in on the page (`req/s`, `playing`).
    const ACHIEVED_UNIT: &'static str;
    /// What the page's p50, p99 and max of a step are of, as a prefix (`draw overshoot `), or
    /// empty for the latency.
    const MEASURE: &'static str;
    /// Whether the shards of one fixed staircase of such steps merge into one.
    const STAIRCASES_MERGE: bool;

    /// This step's outcome: held, broke, or limited by tsumo or the machine.
    fn step_outcome(&self) -> StepOutcome;
    /// Its objectives judged again on what it holds now (after a merge of its parts): parsed
    /// again from their `expr`; one that no longer parses is left out.
    fn judge_again(&self) -> Vec<Verdict>;
    /// The step as the capacity table and page show it; `achieved`: the load the search saved
    /// for it (players seated and playing), for a kind whose result does not say it.
    fn step_view(&self, achieved: Option<u64>) -> StepView<'_>;
    /// The command line that runs such a search again, for files saved before the command
    /// line was: `objectives` is the `--slo` options, `url` the target.
    fn search_command(&self, objectives: &str, url: &str) -> String;
}

/// One step as the capacity table and page read it, whatever its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct StepView<'a> {
    /// The load offered (a rate, players).
    pub target: Option<u64>,
    /// An HTTP step's connections (a search opens what each step needs): a column of its own.
    pub connections: Option<usize>,
    pub achieved: String,
    pub achieved_value: Option<f64>,
    /// The step's measure (latency, a draw's overshoot), µs.
    pub p50: u64,
    pub p99: u64,
    pub max: u64,
    /// `0`, or each kind of error that happened.
    pub errors: String,
    pub server: Option<&'a ServerUsage>,
    pub objectives: &'a [Verdict],
}

/// A result's page as plain data: the answer first (figures and lines), then the facts of the
/// run, then its charts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageContent {
    /// What the page is of: `HTTP run`, `Mahjong session`, `Capacity search`.
    pub kind: String,
    /// The headline figures, in order.
    pub figures: Vec<Figure>,
    /// The answer's lines: the rate not reached, the capacity and what broke, the verdict. A
    /// line is shown as a warning by its words (`Failed`, `BROKE`, `Broke first` …)…
    pub lines: Vec<String>,
    /// …except these of them, shown plainly: what broke first on a search that found its
    /// answer is the answer's reason, not an alarm.
    pub calm: Vec<String>,
    /// `(what, value)`: the command, target, plan, version.
    pub facts: Vec<(String, String)>,
    pub charts: Vec<PageChart>,
}

/// A headline figure: `id` marks it on the page (`data-figure`), `value` is the number as the
/// JSON holds it (`data-value`), `shown` is how the page prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub id: &'static str,
    pub name: String,
    pub shown: String,
    pub value: Option<f64>,
}

pub fn figure(id: &'static str, name: &str, shown: String, value: Option<f64>) -> Figure {
    Figure {
        id,
        name: name.to_string(),
        shown,
        value,
    }
}

/// One chart of a page, as plain data for `report::chart`; `id` names its container.
#[derive(Debug, Clone, PartialEq)]
pub enum PageChart {
    /// Latency by percentile: one curve per series (points of `chart::percentile_points`).
    Percentile {
        id: &'static str,
        title: String,
        y_what: String,
        curves: Vec<Series>,
    },
    /// Lines against seconds from the start; `per_shard`: the series a merged run's page
    /// draws once more for each shard.
    OverTime {
        id: &'static str,
        title: String,
        y_label: String,
        series: Vec<Series>,
        per_shard: Option<usize>,
        /// Where each stage of a `--stages` run starts (none without).
        bounds: Vec<Bound>,
    },
    /// A measure against offered load (a line, and each trial marked by its outcome), with
    /// the objective and the answer marked.
    Capacity {
        id: &'static str,
        title: String,
        axes: (String, String),
        measured: Vec<Series>,
        objectives: Vec<Objective>,
        answer: Option<Answer>,
    },
}

impl PageChart {
    pub fn id(&self) -> &'static str {
        match self {
            PageChart::Percentile { id, .. }
            | PageChart::OverTime { id, .. }
            | PageChart::Capacity { id, .. } => id,
        }
    }

    /// This chart over time titled `title` and drawing `series` (no series drawn again per
    /// shard); any other chart as it is.
    pub fn drawing(&self, title: String, series: Vec<Series>) -> PageChart {
        match self {
            PageChart::OverTime {
                id,
                y_label,
                bounds,
                ..
            } => PageChart::OverTime {
                id,
                title,
                y_label: y_label.clone(),
                series,
                per_shard: None,
                bounds: bounds.clone(),
            },
            other => other.clone(),
        }
    }

    /// The points a capacity chart plots (its curve, its objectives' limits, its answer's
    /// load): what the charts drawn beside it hold on their axes too. None for other charts.
    pub fn plotted_points(&self) -> Vec<(f64, f64)> {
        let PageChart::Capacity {
            measured,
            objectives,
            answer,
            ..
        } = self
        else {
            return Vec::new();
        };
        let mut points: Vec<(f64, f64)> = measured.iter().flat_map(|s| s.points.clone()).collect();
        points.extend(objectives.iter().map(|o| (0.0, o.y)));
        points.extend(answer.iter().map(|a| (a.x, 0.0)));
        points
    }
}

/// `(x, y)` points of a result's intervals: `x` where each interval ends (seconds from the
/// start), `y` from `value`; intervals `value` gives nothing for are left out, and so is a
/// last interval shorter than half the others (the run's few ms after its last whole one:
/// its rate over 3 ms would be a spike of nothing).
pub fn over_intervals<T>(
    intervals: &[T],
    span: impl Fn(&T) -> IntervalSpan,
    value: impl Fn(&T) -> Option<f64>,
) -> Vec<(f64, f64)> {
    let longest = intervals
        .iter()
        .map(|i| span(i).duration_s)
        .fold(0.0, f64::max);
    intervals
        .iter()
        .filter(|i| span(i).duration_s >= longest / 2.0)
        .filter_map(|i| Some((span(i).start_s + span(i).duration_s, value(i)?)))
        .collect()
}

/// A histogram of a result found by name: its saved encoding and what a chart calls it.
#[derive(Debug, Clone, PartialEq)]
pub struct Named<'a> {
    /// base64 HdrHistogram compressed V2 (`HISTF…`).
    pub encoded: &'a str,
    pub title: String,
}

/// How a row's numbers are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// µs, printed as wrk prints latencies.
    Time,
    /// Seconds with 2 decimals, as a session's report prints its length (`Session: 182.01s`).
    Seconds,
    /// A rate or count with metric suffixes (`1.23k`).
    Metric,
    /// Bytes, with binary suffixes and `B`.
    Bytes,
    /// Bytes per second.
    BytesPerSec,
    /// An exact count.
    Count,
    Percent,
}

/// One line of a result's figures: name, value (absent when the result has no such figure),
/// unit.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    pub value: Option<f64>,
    pub unit: Unit,
    /// The value is a floor (a search that ended before the server's limit: "at least"): no
    /// ratio is taken against it, nor of it.
    pub floor: bool,
}

pub fn row(name: impl Into<String>, value: Option<f64>, unit: Unit) -> Row {
    Row {
        name: name.into(),
        value,
        unit,
        floor: false,
    }
}

impl Row {
    /// The row's value as a floor when `floor`.
    pub fn floor_if(mut self, floor: bool) -> Row {
        self.floor = floor;
        self
    }
}

/// Adds the saved histogram `encoded` into `sum` (histograms of wrk2's layout always add);
/// `source` and `what` name it in the error.
pub fn add_encoded(
    sum: &mut Histogram<u64>,
    encoded: &str,
    source: &str,
    what: &str,
) -> Result<(), Error> {
    let h = decode_histogram(encoded).map_err(|e| Error::File {
        path: source.to_string(),
        reason: format!("histogram '{what}': {e}"),
    })?;
    sum.add(&h).map_err(|e| Error::File {
        path: source.to_string(),
        reason: format!("histogram '{what}' does not add up: {e:?}"),
    })
}

/// Adds a part's `--bind` addresses to the merge's: every part's, each once, in the parts'
/// order (each machine of a sharded run has its own).
pub fn add_sources(all: &mut Vec<IpAddr>, part: &[IpAddr]) {
    for addr in part {
        if !all.contains(addr) {
            all.push(*addr);
        }
    }
}

/// The signal that cut a saved run short (`ended_by`, or "a signal" in files that do not name
/// it), when it was cut short.
pub fn cut_by(interrupted: bool, ended_by: Option<&str>) -> Option<String> {
    interrupted.then(|| ended_by.unwrap_or("a signal").to_string())
}

/// `-d10s`, or `-d1500ms` for a duration that is not whole seconds.
pub fn duration_flag(seconds: f64) -> String {
    if seconds.fract() == 0.0 {
        format!("-d{}s", seconds as u64)
    } else {
        format!("-d{}ms", (seconds * 1000.0).round() as u64)
    }
}
