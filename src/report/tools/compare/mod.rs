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
//! in [`crate::report::tools::saved`]; it is re-exported here so the `compare::` paths used by merge, plot and
//! main keep working. A run's figures as rows are in `rows` (each row's durations in one unit), the
//! sentences on the run-to-run spread in `spread`, and the verdict the comparison opens with in
//! `verdict`.

mod rows;
mod spread;
mod verdict;

use std::fmt::Write as _;
use std::path::PathBuf;

pub use self::rows::figures_in_one_unit;
use self::rows::{format_ratio, format_value, rows, Row, Unit};
use self::spread::{mean, spread_sentence};
use crate::error::Error;
pub use crate::report::tools::saved::{
    check_same_mode, from_value, load, load_all, LoadedRun, RunData,
};
use crate::stats::format::format_times_us;

/// Options of `tsumo compare FILE…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompareOptions {
    pub files: Vec<PathBuf>,
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

/// The comparison table (and, with repeated runs, the sentences on the spread) of runs of one mode.
/// Runs marked as left out (an A/B round cut short) are named with the reason, not compared;
/// runs that ended early otherwise are compared and named with how they ended.
pub fn render(all: &[LoadedRun]) -> Result<String, Error> {
    let runs = compared(all)?;
    let ended_early = ended_early_lines(all);
    if runs.is_empty() {
        return Ok(format!(
            "Nothing to compare: every run was left out\n{ended_early}"
        ));
    }
    let runs = runs.as_slice();
    let per_run: Vec<(&LoadedRun, Vec<Row>)> = runs.iter().map(|r| (r, rows(r))).collect();
    let groups = groups(runs);
    let names = row_names(&per_run);

    let mut out = String::new();
    write_heading(&mut out, runs, &groups);
    out.push_str(&ended_early);
    if let Some(line) = verdict::verdict(runs, &per_run, &groups) {
        let _ = writeln!(out, "\n{line}");
    }
    let _ = writeln!(out);
    write_table(&mut out, &table(&names, &per_run, &groups));
    write_capacity_ranges(&mut out, &per_run);
    write_spread_sentences(&mut out, runs, &names, &per_run, &groups);
    Ok(out)
}

/// One line per run left out (with the reason) or ended early (with how it ended).
fn ended_early_lines(all: &[LoadedRun]) -> String {
    let mut ended_early = String::new();
    for run in all {
        match (&run.left_out, run.ended_early()) {
            (Some(reason), _) => {
                let _ = writeln!(
                    ended_early,
                    "  {}: {reason}; left out of the comparison",
                    run.source
                );
            }
            (None, Some(early)) => {
                let _ = writeln!(ended_early, "  {}: {early}", run.source);
            }
            (None, None) => {}
        }
    }
    ended_early
}

/// The rows of the table, in the order the first run that has each row lists it; only rows
/// some run has a value for (server rows only when sampled).
fn row_names(per_run: &[(&LoadedRun, Vec<Row>)]) -> Vec<(String, Unit)> {
    let mut names: Vec<(String, Unit)> = Vec::new();
    for (_, rows) in per_run {
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
    names
}

/// The opening line (how many runs of which mode) and one line per label with its runs.
fn write_heading(out: &mut String, runs: &[LoadedRun], groups: &[Group<'_>]) {
    let repeated = groups.iter().any(|g| g.runs.len() > 1);
    let _ = writeln!(
        out,
        "Comparing {} {} run{}{}",
        runs.len(),
        runs[0].title(),
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
    for g in groups {
        let sources: Vec<&str> = g.runs.iter().map(|r| r.source.as_str()).collect();
        let name = if g.heading == g.label {
            String::new()
        } else {
            format!("{} = ", g.heading)
        };
        let _ = writeln!(out, "  {name}{}  ({})", g.label, sources.join(", "));
    }
}

/// The table's cells: a header, the runs per label when a label was repeated, then per row its
/// name, one value per group and one ratio per group after the first.
fn table(
    names: &[(String, Unit)],
    per_run: &[(&LoadedRun, Vec<Row>)],
    groups: &[Group<'_>],
) -> Vec<Vec<String>> {
    let mut header = vec![String::new()];
    header.extend(groups.iter().map(|g| g.heading.clone()));
    header.extend(
        groups
            .iter()
            .skip(1)
            .map(|g| format!("{}/{}", g.heading, groups[0].heading)),
    );
    let mut table = vec![header];
    if groups.iter().any(|g| g.runs.len() > 1) {
        let mut cells = vec!["Runs".to_string()];
        cells.extend(groups.iter().map(|g| g.runs.len().to_string()));
        cells.extend(groups.iter().skip(1).map(|_| String::new()));
        table.push(cells);
    }
    for (name, unit) in names {
        table.push(row_cells(name, *unit, per_run, groups));
    }
    table
}

/// One row of the table: its name, each group's mean, and each group's ratio to the first.
fn row_cells(
    name: &str,
    unit: Unit,
    per_run: &[(&LoadedRun, Vec<Row>)],
    groups: &[Group<'_>],
) -> Vec<String> {
    let means: Vec<Option<f64>> = groups
        .iter()
        .map(|g| mean(&values_of(name, per_run, g)))
        .collect();
    let mut cells = vec![name.to_string()];
    match unit {
        // A row of durations in one unit, so 0.89ms does not stand beside 542.00us.
        Unit::Time => cells.extend(format_times_us(&means)),
        _ => cells.extend(means.iter().map(|m| match m {
            Some(v) => format_value(*v, unit),
            None => "-".to_string(),
        })),
    }
    // No ratio of a floor ("at least 16k"), nor against one.
    let floors: Vec<bool> = groups
        .iter()
        .map(|g| {
            per_run
                .iter()
                .filter(|(run, _)| g.runs.iter().any(|r| std::ptr::eq(*r, *run)))
                .any(|(_, rows)| rows.iter().any(|r| r.name == name && r.floor))
        })
        .collect();
    cells.extend(
        means
            .iter()
            .zip(&floors)
            .skip(1)
            .map(|(m, floor)| match floors[0] || *floor {
                true => "-".to_string(),
                false => format_ratio(means[0], *m),
            }),
    );
    cells
}

/// The table's cells in columns: the names left-aligned, the figures right-aligned.
fn write_table(out: &mut String, table: &[Vec<String>]) {
    let columns = table[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            let widest = table.iter().map(|r| r[c].chars().count()).max();
            widest.unwrap_or(0) + 2
        })
        .collect();
    for cells in table {
        let mut line = format!("  {:<width$}", cells[0], width = widths[0]);
        for (cell, width) in cells.iter().zip(&widths).skip(1) {
            let _ = write!(line, "{cell:>width$}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

/// Two capacity searches: whether their ranges keep them apart.
fn write_capacity_ranges(out: &mut String, per_run: &[(&LoadedRun, Vec<Row>)]) {
    let range = |(_, rows): &(&LoadedRun, Vec<Row>)| {
        let at = |name: &str| rows.iter().find(|r| r.name == name).and_then(|r| r.value);
        Some((at("Range low")?, at("Range high")?))
    };
    let Some(first) = per_run.first().and_then(range) else {
        return;
    };
    for other in per_run.iter().skip(1) {
        let Some(second) = range(other) else { continue };
        let apart = second.0 > first.1 || first.0 > second.1;
        let _ = writeln!(
            out,
            "\nCapacity ranges: {} {:.0}–{:.0}, {} {:.0}–{:.0}: {}",
            per_run[0].0.source,
            first.0,
            first.1,
            other.0.source,
            second.0,
            second.1,
            if apart {
                "apart, a difference beyond what each search's noise moved"
            } else {
                "they overlap, no difference beyond what each search's noise moved"
            }
        );
    }
}

/// With repeated runs of every label, a sentence per key metric and label: whether it differs
/// from the first beyond run-to-run noise. (With one run of a label the opening line said that
/// no difference is a verdict.)
fn write_spread_sentences(
    out: &mut String,
    runs: &[LoadedRun],
    names: &[(String, Unit)],
    per_run: &[(&LoadedRun, Vec<Row>)],
    groups: &[Group<'_>],
) {
    if groups.len() < 2 || groups.iter().any(|g| g.runs.len() < 2) {
        return;
    }
    let _ = writeln!(out);
    for (row_name, metric) in runs[0].result().key_metrics() {
        let Some((_, unit)) = names.iter().find(|(n, _)| n == row_name) else {
            continue;
        };
        let first = values_of(row_name, per_run, &groups[0]);
        for g in groups.iter().skip(1) {
            let values = values_of(row_name, per_run, g);
            if first.is_empty() || values.is_empty() {
                continue;
            }
            let sentence = match verdict::timed_apart(&groups[0], g) {
                Some(why) if *unit == Unit::Time => {
                    format!("{metric}: not comparable: {why}")
                }
                _ => spread_sentence(metric, (&groups[0], &first), (g, &values)),
            };
            let _ = writeln!(out, "{sentence}");
        }
    }
}

/// The line a comparison opens with (see `verdict`), for the page; `None` for one label.
pub fn verdict_of(all: &[LoadedRun]) -> Option<String> {
    let runs: Vec<LoadedRun> = all
        .iter()
        .filter(|r| r.left_out.is_none())
        .cloned()
        .collect();
    let per_run: Vec<(&LoadedRun, Vec<Row>)> = runs.iter().map(|r| (r, rows(r))).collect();
    verdict::verdict(&runs, &per_run, &groups(&runs))
}

/// The runs of `all` a comparison compares: one mode (else the error), those left out (an A/B
/// round cut short) aside.
fn compared(all: &[LoadedRun]) -> Result<Vec<LoadedRun>, Error> {
    check_same_mode(all, "compare")?;
    Ok(all
        .iter()
        .filter(|r| r.left_out.is_none())
        .cloned()
        .collect())
}

/// The comparison table of runs of one mode as cells (a header row, then one row per figure),
/// as [`render`] prints it; empty when every run was left out. For the Markdown summary.
pub fn cells(all: &[LoadedRun]) -> Result<Vec<Vec<String>>, Error> {
    let runs = compared(all)?;
    if runs.is_empty() {
        return Ok(Vec::new());
    }
    let per_run: Vec<(&LoadedRun, Vec<Row>)> = runs.iter().map(|r| (r, rows(r))).collect();
    Ok(table(&row_names(&per_run), &per_run, &groups(&runs)))
}

/// `tsumo compare FILE…`: prints the table; a bad input (one run given twice, too) is the error
/// (main prints it, exit 2).
pub fn run(options: &CompareOptions) -> Result<(), Error> {
    let runs = load_all(&options.files)?;
    // One run given twice would count twice in its label's mean, and "vary 0 %".
    crate::report::tools::saved::refuse_duplicates(&runs, "compare")?;
    let table = render(&runs)?;
    print!("{table}");
    Ok(())
}
