//! `tsumo compare`: saved runs side by side, with each run's ratio to the first, and — when a
//! label was run several times — a sentence per key metric saying whether the difference between
//! labels is larger than the rounds of one label differ among themselves.
//!
//! Why words under the table: the usual question ("what does nginx cost?") is answered by a few
//! percent, and so is the noise between two runs of the same command; a ratio alone invites
//! reading noise as a result (peers.md §0.7: comparing runs is weak across peer tools). The rule
//! is simple and stated: a difference is *beyond run-to-run noise* when the labels' means differ
//! by more than 1 % and by more than the larger spread (max − min) of the rounds within one
//! label.
//!
//! The reader of saved runs ([`LoadedRun`], [`load`], [`from_value`], [`check_same_mode`]) lives
//! in [`super::saved`]; it is re-exported here so the `compare::` paths used by merge, plot and
//! main keep working.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;

use super::json::SavedRun;
pub use super::saved::{check_same_mode, from_value, load, load_all, LoadedRun, RunData};
use crate::error::Error;
use crate::stats::format::{format_binary, format_metric, format_time_us};
use crate::stats::mahjong::PHASES;
use crate::sys::procstat::ServerUsage;

/// Options of `tsumo compare FILE…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompareOptions {
    pub files: Vec<PathBuf>,
}

/// How a row's numbers are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// µs, printed as wrk prints latencies.
    Time,
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

/// One line of a run's figures: name, value (absent when the run has no such figure), unit.
#[derive(Debug, Clone)]
struct Row {
    name: String,
    value: Option<f64>,
    unit: Unit,
}

fn row(name: impl Into<String>, value: Option<f64>, unit: Unit) -> Row {
    Row {
        name: name.into(),
        value,
        unit,
    }
}

/// The rows of an HTTP run, in table order.
fn http_rows(s: &SavedRun) -> Vec<Row> {
    let c = &s.counters;
    let e = &c.errors;
    // An empty histogram has no percentiles (its summary says 0).
    let has = |p: &super::json::Percentiles| p.count > 0;
    let time =
        |name: &str, us: u64, present: bool| row(name, present.then_some(us as f64), Unit::Time);
    let count = |name: &str, n: u64| row(name, Some(n as f64), Unit::Count);
    let (l, u, sl) = (has(&s.latency), has(&s.uncorrected), has(&s.send_lateness));
    vec![
        row("Elapsed", Some(s.elapsed_s * 1e6), Unit::Time),
        count("Requests", c.requests),
        row("Requests/sec", Some(s.requests_per_sec), Unit::Metric),
        row("Transfer/sec", Some(s.bytes_per_sec), Unit::BytesPerSec),
        time("Latency p50", s.latency.p50, l),
        time("Latency p90", s.latency.p90, l),
        time("Latency p99", s.latency.p99, l),
        time("Latency p99.9", s.latency.p99_9, l),
        time("Latency max", s.latency.max, l),
        time("Uncorrected p50", s.uncorrected.p50, u),
        time("Uncorrected p99", s.uncorrected.p99, u),
        time("Send lateness p99", s.send_lateness.p99, sl),
        count("Errors connect", e.connect),
        count("Errors read", e.read),
        count("Errors write", e.write),
        count("Errors timeout", e.timeout),
        count("Errors status", e.status),
        count("Connections opened", c.connections_opened),
        count("TLS full handshakes", c.tls_full_handshakes),
        count("TLS resumed handshakes", c.tls_resumed_handshakes),
    ]
}

/// A number at a `/`-separated path of a JSON document.
fn num(v: &Value, pointer: &str) -> Option<f64> {
    v.pointer(pointer).and_then(Value::as_f64)
}

/// A percentile of the histogram summary at `summary`, absent when it holds no samples.
fn percentile(v: &Value, summary: &str, field: &str) -> Option<f64> {
    num(v, &format!("{summary}/count"))
        .filter(|n| *n > 0.0)
        .and_then(|_| num(v, &format!("{summary}/{field}")))
}

/// Phase names in the order players go through them, then any others the document has.
pub(crate) fn phase_names(doc: &Value) -> Vec<String> {
    let present: Vec<String> = doc
        .get("phases")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let mut names: Vec<String> = PHASES
        .iter()
        .filter(|p| present.iter().any(|k| k == *p))
        .map(|p| p.to_string())
        .collect();
    names.extend(
        present
            .into_iter()
            .filter(|k| !PHASES.contains(&k.as_str())),
    );
    names
}

/// The rows of a mahjong session, in table order.
fn mahjong_rows(doc: &Value) -> Vec<Row> {
    let players = num(doc, "/plan/players");
    let elapsed = num(doc, "/elapsed_s").filter(|s| *s > 0.0);
    let mut rows = vec![
        row("Players", players, Unit::Count),
        row("Elapsed", elapsed.map(|s| s * 1e6), Unit::Time),
    ];
    for phase in phase_names(doc) {
        let at = |field: &str| num(doc, &format!("/phases/{phase}/{field}"));
        rows.push(row(format!("{phase} ok"), at("ok"), Unit::Count));
        rows.push(row(format!("{phase} failed"), at("failed"), Unit::Count));
        let summary = format!("/phases/{phase}");
        for p in ["p50", "p99"] {
            let value = percentile(doc, &summary, p);
            rows.push(row(format!("{phase} {p}"), value, Unit::Time));
        }
    }
    for field in ["started", "completed", "aborted"] {
        let value = num(doc, &format!("/games/{field}"));
        rows.push(row(format!("Games {field}"), value, Unit::Count));
    }
    if let Some(steps) = doc.get("steps").and_then(Value::as_object) {
        for kind in steps.keys() {
            for p in ["p50", "p99"] {
                let value = percentile(doc, &format!("/steps/{kind}"), p);
                rows.push(row(format!("Step {kind} {p}"), value, Unit::Time));
            }
        }
    }
    for (name, summary, field) in [
        ("Draw overshoot p99", "/draw_overshoot", "p99"),
        ("Deal overshoot p99", "/deal_overshoot", "p99"),
        ("Start burst p99", "/start_burst", "p99"),
        ("Start burst max", "/start_burst", "max"),
        ("Reply lateness p99", "/reply_lateness", "p99"),
    ] {
        rows.push(row(name, percentile(doc, summary, field), Unit::Time));
    }
    let per_second = |n: Option<f64>| Some(n? / elapsed?);
    let messages_in = num(doc, "/messages/in");
    let messages_out = num(doc, "/messages/out");
    rows.push(row(
        "Messages in/sec",
        per_second(messages_in),
        Unit::Metric,
    ));
    rows.push(row(
        "Messages out/sec",
        per_second(messages_out),
        Unit::Metric,
    ));
    rows.push(row("Disconnects", num(doc, "/disconnects"), Unit::Count));
    rows.push(row("Errors", num(doc, "/errors"), Unit::Count));
    let per_player = |n: Option<f64>| Some(n? / players.filter(|p| *p > 0.0)?);
    let cpu_us = num(doc, "/tsumo/cpu_s").map(|s| s * 1e6);
    let rss = num(doc, "/tsumo/peak_rss_bytes");
    rows.push(row("tsumo CPU per player", per_player(cpu_us), Unit::Time));
    rows.push(row("tsumo RSS per player", per_player(rss), Unit::Bytes));
    rows
}

fn server_rows(server: Option<&ServerUsage>) -> Vec<Row> {
    let s = |f: fn(&ServerUsage) -> f64| server.map(f);
    vec![
        row("Server CPU% mean", s(|s| s.cpu_percent_mean), Unit::Percent),
        row("Server CPU% peak", s(|s| s.cpu_percent_peak), Unit::Percent),
        row(
            "Server RSS mean",
            s(|s| s.rss_bytes_mean as f64),
            Unit::Bytes,
        ),
        row(
            "Server RSS peak",
            s(|s| s.rss_bytes_peak as f64),
            Unit::Bytes,
        ),
    ]
}

fn rows(run: &LoadedRun) -> Vec<Row> {
    let mut rows = match &run.data {
        RunData::Http(saved) => http_rows(saved),
        RunData::Mahjong(doc) => mahjong_rows(doc),
    };
    rows.extend(server_rows(run.server.as_ref()));
    rows
}

fn format_value(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Time => format_time_us(value),
        Unit::Metric => format_metric(value),
        Unit::Bytes => format!("{}B", format_binary(value)),
        Unit::BytesPerSec => format!("{}B", format_binary(value)),
        Unit::Count if value.fract() == 0.0 => format!("{value:.0}"),
        Unit::Count => format!("{value:.1}"),
        Unit::Percent => format!("{value:.1}%"),
    }
}

/// `b / a` as `1.35×`; `-` when it has no meaning (a is 0, or a value is missing).
fn format_ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => format!("{:.2}×", b / a),
        _ => "-".to_string(),
    }
}

/// The runs of one label, in the order given.
struct Group<'a> {
    label: &'a str,
    runs: Vec<&'a LoadedRun>,
    /// Column heading: the label when it is short, else a letter explained above the table.
    heading: String,
}

/// Labels longer than this are replaced by letters in headings and sentences.
const MAX_HEADING: usize = 24;

fn groups(runs: &[LoadedRun]) -> Vec<Group<'_>> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for run in runs {
        match groups.iter_mut().find(|g| g.label == run.label) {
            Some(g) => g.runs.push(run),
            None => groups.push(Group {
                label: &run.label,
                runs: vec![run],
                heading: String::new(),
            }),
        }
    }
    let letters = groups
        .iter()
        .any(|g| g.label.chars().count() > MAX_HEADING || g.label.is_empty());
    for (i, g) in groups.iter_mut().enumerate() {
        g.heading = if letters {
            letter(i)
        } else {
            g.label.to_string()
        };
    }
    groups
}

/// A, B, …, Z, then R27, R28 …
fn letter(i: usize) -> String {
    match u8::try_from(i).ok().filter(|i| *i < 26) {
        Some(i) => char::from(b'A' + i).to_string(),
        None => format!("R{}", i + 1),
    }
}

/// Values of one row across the runs of a group (runs without the row are skipped).
fn values_of(name: &str, per_run: &[(&LoadedRun, Vec<Row>)], group: &Group<'_>) -> Vec<f64> {
    per_run
        .iter()
        .filter(|(run, _)| group.runs.iter().any(|g| std::ptr::eq(*g, *run)))
        .filter_map(|(_, rows)| rows.iter().find(|r| r.name == name).and_then(|r| r.value))
        .collect()
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The metrics each mode gets a noise sentence for: (row, name in the sentence).
fn key_metrics(mode: &str) -> &'static [(&'static str, &'static str)] {
    if mode == "mahjong" {
        &[
            ("Messages in/sec", "messages in/s"),
            ("login p99", "login p99"),
            ("connect p99", "connect p99"),
            ("Draw overshoot p99", "draw overshoot p99"),
            ("Reply lateness p99", "reply lateness p99"),
            ("Server CPU% mean", "server CPU"),
        ]
    } else {
        &[
            ("Requests/sec", "rate"),
            ("Latency p50", "p50"),
            ("Latency p99", "p99"),
            ("Server CPU% mean", "server CPU"),
        ]
    }
}

/// Spread (max − min) of a group's rounds as a share of their mean, in words.
fn variation(values: &[f64]) -> String {
    let (Some(mean), Some(max), Some(min)) = (
        mean(values),
        values.iter().copied().reduce(f64::max),
        values.iter().copied().reduce(f64::min),
    ) else {
        return "no value".to_string();
    };
    if values.len() < 2 {
        return "one run".to_string();
    }
    if mean <= 0.0 {
        return if max > min {
            "varies".to_string()
        } else {
            "varies 0%".to_string()
        };
    }
    let percent = (max - min) / mean * 100.0;
    if percent == 0.0 || percent >= 1.0 {
        format!("varies {percent:.0}%")
    } else if percent >= 0.1 {
        format!("varies {percent:.1}%")
    } else {
        "varies <0.1%".to_string()
    }
}

/// One sentence: how `b` compares to the first group `a` on one metric, and whether that is
/// more than the rounds of either label differ among themselves.
fn noise_sentence(metric: &str, a: (&Group<'_>, &[f64]), b: (&Group<'_>, &[f64])) -> String {
    let (group_a, values_a) = a;
    let (group_b, values_b) = b;
    let spread = |v: &[f64]| {
        let max = v.iter().copied().fold(f64::MIN, f64::max);
        let min = v.iter().copied().fold(f64::MAX, f64::min);
        max - min
    };
    let (mean_a, mean_b) = (mean(values_a).unwrap_or(0.0), mean(values_b).unwrap_or(0.0));
    let comparison = if mean_a > 0.0 {
        format!(
            "{} is {:.2}× {}",
            group_b.heading,
            mean_b / mean_a,
            group_a.heading
        )
    } else {
        format!("{} {mean_b:.3} vs {} 0", group_b.heading, group_a.heading)
    };
    // A difference under 1 % is no difference worth a word, however steady the rounds were.
    let noise = spread(values_a)
        .max(spread(values_b))
        .max(0.01 * mean_a.abs().max(mean_b.abs()));
    let verdict = if (mean_b - mean_a).abs() > noise {
        "beyond run-to-run noise"
    } else {
        "within run-to-run noise"
    };
    format!(
        "{metric}: {comparison}; {verdict} ({} {}, {} {} between rounds)",
        group_a.heading,
        variation(values_a),
        group_b.heading,
        variation(values_b)
    )
}

/// The comparison table (and, with repeated runs, the noise sentences) of runs of one mode.
pub fn render(runs: &[LoadedRun]) -> Result<String, Error> {
    check_same_mode(runs, "compare")?;
    let per_run: Vec<(&LoadedRun, Vec<Row>)> = runs.iter().map(|r| (r, rows(r))).collect();
    let groups = groups(runs);
    // Row order: as the first run that has each row lists it; server rows only when sampled.
    let mut names: Vec<(String, Unit)> = Vec::new();
    for (_, rows) in &per_run {
        for r in rows {
            if !names.iter().any(|(n, _)| *n == r.name) {
                names.push((r.name.clone(), r.unit));
            }
        }
    }
    let any_value = |name: &str| {
        per_run
            .iter()
            .any(|(_, rows)| rows.iter().any(|r| r.name == name && r.value.is_some()))
    };
    names.retain(|(name, _)| any_value(name));

    let mut out = String::new();
    let repeated = groups.iter().any(|g| g.runs.len() > 1);
    let _ = writeln!(
        out,
        "Comparing {} {} run{}{}",
        runs.len(),
        runs[0].mode(),
        if runs.len() == 1 { "" } else { "s" },
        if repeated {
            let labels = match groups.len() {
                1 => "1 label".to_string(),
                n => format!("{n} labels"),
            };
            format!(" ({labels}; columns are means of each label's runs)")
        } else {
            String::new()
        }
    );
    for g in &groups {
        let sources: Vec<&str> = g.runs.iter().map(|r| r.source.as_str()).collect();
        let name = if g.heading == g.label {
            String::new()
        } else {
            format!("{} = ", g.heading)
        };
        let _ = writeln!(out, "  {name}{}  ({})", g.label, sources.join(", "));
    }
    let _ = writeln!(out);

    // Cells: row name, one value per group, one ratio per group after the first.
    let mut header = vec![String::new()];
    header.extend(groups.iter().map(|g| g.heading.clone()));
    header.extend(
        groups
            .iter()
            .skip(1)
            .map(|g| format!("{}/{}", g.heading, groups[0].heading)),
    );
    let mut table = vec![header];
    if repeated {
        let mut cells = vec!["Runs".to_string()];
        cells.extend(groups.iter().map(|g| g.runs.len().to_string()));
        cells.extend(groups.iter().skip(1).map(|_| String::new()));
        table.push(cells);
    }
    for (name, unit) in &names {
        let means: Vec<Option<f64>> = groups
            .iter()
            .map(|g| mean(&values_of(name, &per_run, g)))
            .collect();
        let mut cells = vec![name.clone()];
        cells.extend(means.iter().map(|m| match m {
            Some(v) => format_value(*v, *unit),
            None => "-".to_string(),
        }));
        cells.extend(means.iter().skip(1).map(|m| format_ratio(means[0], *m)));
        table.push(cells);
    }
    let columns = table[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            let widest = table.iter().map(|r| r[c].chars().count()).max();
            widest.unwrap_or(0) + 2
        })
        .collect();
    for cells in &table {
        let mut line = format!("  {:<width$}", cells[0], width = widths[0]);
        for (cell, width) in cells.iter().zip(&widths).skip(1) {
            let _ = write!(line, "{cell:>width$}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }

    if groups.len() > 1 && repeated {
        let _ = writeln!(out);
        for (row_name, metric) in key_metrics(runs[0].mode()) {
            if !names.iter().any(|(n, _)| n == row_name) {
                continue;
            }
            let first = values_of(row_name, &per_run, &groups[0]);
            for g in groups.iter().skip(1) {
                let values = values_of(row_name, &per_run, g);
                if first.is_empty() || values.is_empty() {
                    continue;
                }
                let sentence = noise_sentence(metric, (&groups[0], &first), (g, &values));
                let _ = writeln!(out, "{sentence}");
            }
        }
    } else if groups.len() > 1 {
        let _ = writeln!(
            out,
            "\nOne run per label: run each several times (same --label) to tell a difference \
             from run-to-run noise."
        );
    }
    Ok(out)
}

/// `tsumo compare FILE…`: prints the table; a bad input is the error (main prints it, exit 1).
pub fn run(options: &CompareOptions) -> Result<(), Error> {
    let table = render(&load_all(&options.files)?)?;
    print!("{table}");
    Ok(())
}
