//! The Markdown summary of results, for the page a CI system shows beside a job: the answer
//! line, the run's main figures as a table, each objective's verdict, and for several runs (a
//! `--vs` comparison, files given together) the comparison table, with no links (a CI page
//! shows it as it is). One function ([`render`]) for both places it goes: a run's
//! `GITHUB_STEP_SUMMARY` (`run::ci`) and `tsumo report --markdown FILE…` for saved results.

use std::fmt::Write as _;

use super::compare;
use super::saved::LoadedRun;
use crate::error::Error;
use crate::report::kinds::SearchStepOf;
use crate::slo::Verdict;

/// The summary of `runs`: one result's, or (several) their comparison's.
pub fn render(runs: &[LoadedRun]) -> Result<String, Error> {
    super::saved::refuse_duplicates(runs, "report")?;
    let mut out = String::new();
    match runs {
        [] => return Err(Error::Usage("nothing to report: no runs given".to_string())),
        [one] => one_result(&mut out, one),
        _ => comparison(&mut out, runs)?,
    }
    Ok(out)
}

/// `tsumo report --markdown FILE… [-o OUT]`: the summary of the files' runs, to `-o` (`-`, its
/// default: stdout).
pub fn run(options: &super::page::ReportOptions) -> Result<(), Error> {
    let text = render(&compare::load_all(&options.files)?)?;
    let output = &options.output;
    if output.as_os_str() == "-" {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        // A closed stdout (`| head`) is not an error of the summary's.
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        return Ok(());
    }
    super::page::write(&text, output, "-o")
}

/// The summary of a command that failed before it had a result: its name and the line it
/// failed with.
pub fn failed(name: &str, line: &str) -> String {
    format!(
        "### tsumo: {}\n\n**Failed:** {}\n\n",
        cell(name),
        cell(line)
    )
}

fn one_result(out: &mut String, run: &LoadedRun) {
    let result = run.result();
    let page = result.page();
    let _ = writeln!(out, "### tsumo: {} {}\n", page.kind, cell(&run.label));
    let steps = run.data.steps();
    // A search's answer is its first line (its capacity); a run's, how it ended.
    let (answer, notes_from) = match (steps.is_empty(), page.lines.first()) {
        (false, Some(capacity)) if result.verdict().is_none() => (cell(capacity), 1),
        _ => (answer(run), 0),
    };
    let _ = writeln!(out, "**{answer}**\n");
    let notes: Vec<&String> = page.lines[notes_from.min(page.lines.len())..]
        .iter()
        .filter(|line| !line.starts_with("Objective ") && !line.starts_with("Failed: "))
        .collect();
    for line in &notes {
        let _ = writeln!(out, "- {}", cell(line));
    }
    if !notes.is_empty() {
        out.push('\n');
    }
    if !page.figures.is_empty() {
        let names = page.figures.iter().map(|f| cell(&f.name)).collect();
        let shown = page.figures.iter().map(|f| cell(&f.shown)).collect();
        table(out, &[names, shown]);
    }
    steps_table(out, &steps);
    let stages = result.stage_objectives();
    let mut judged = vec![(stages.first().map(|_| "whole run"), result.objectives())];
    judged.extend(stages.iter().map(|(stage, v)| (Some(stage.as_str()), *v)));
    objectives(out, &judged);
}

/// A search's steps: each one's load, role, outcome and objectives as judged on it.
fn steps_table(out: &mut String, steps: &[SearchStepOf<'_>]) {
    if steps.is_empty() {
        return;
    }
    let mut rows = vec![["Step", "Load", "Role", "Outcome", "Objectives"]
        .map(String::from)
        .to_vec()];
    for (number, step) in (1..).zip(steps) {
        let load = step.load.map_or_else(
            || "-".to_string(),
            |load| format!("{} {}", crate::capacity::grouped(load), step.unit),
        );
        let verdicts: Vec<String> = step
            .objectives
            .iter()
            .map(|v| {
                let word = if v.held { "held" } else { "**BROKEN**" };
                format!("`{}` {word} ({})", code(&v.expr), cell(&v.measured_text()))
            })
            .collect();
        rows.push(vec![
            number.to_string(),
            cell(&load),
            cell(step.role),
            cell(step.outcome),
            verdicts.join(", "),
        ]);
    }
    table(out, &rows);
}

/// A comparison: its opening line (which side was faster, or that they were alike), its table,
/// then each run's objectives.
fn comparison(out: &mut String, runs: &[LoadedRun]) -> Result<(), Error> {
    let mut distinct: Vec<&str> = Vec::new();
    for run in runs {
        if !distinct.contains(&run.label.as_str()) {
            distinct.push(&run.label);
        }
    }
    let _ = writeln!(out, "### tsumo: {}\n", cell(&distinct.join(" vs ")));
    match compare::verdict_of(runs) {
        Some(line) => {
            let _ = writeln!(out, "**{}**\n", cell(&line));
        }
        None => {
            let _ = writeln!(out, "**{} runs compared**\n", runs.len());
        }
    }
    for run in runs {
        if let Some(why) = &run.left_out {
            let _ = writeln!(
                out,
                "- {}: {}; left out of the comparison",
                cell(&run.source),
                cell(why)
            );
        }
    }
    let cells: Vec<Vec<String>> = compare::cells(runs)?
        .iter()
        .map(|row| row.iter().map(|c| cell(c)).collect())
        .collect();
    if !cells.is_empty() {
        table(out, &cells);
    }
    let judged: Vec<(Option<&str>, &[Verdict])> = runs
        .iter()
        .map(|r| (Some(r.source.as_str()), r.result().objectives()))
        .collect();
    objectives(out, &judged);
    Ok(())
}

/// The answer line: how the run ended and what its objectives say.
fn answer(run: &LoadedRun) -> String {
    let result = run.result();
    if let Some(line) = result.verdict().or_else(|| result.stopped_by_error()) {
        return format!("Failed: {}", cell(&line));
    }
    let verdicts = result.objectives();
    let head = crate::report::objectives::lines(verdicts)
        .into_iter()
        .next()
        .unwrap_or_else(|| "Ran (no objectives)".to_string());
    match result.cut_by_signal() {
        Some(signal) => format!("{head}; cut short by {signal}"),
        None => head,
    }
}

/// Each objective's verdict (`judged`: each run, named when there are several, with its
/// verdicts); nothing when no run had objectives.
fn objectives(out: &mut String, judged: &[(Option<&str>, &[Verdict])]) {
    if judged.iter().all(|(_, verdicts)| verdicts.is_empty()) {
        return;
    }
    let named = judged.iter().any(|(name, _)| name.is_some());
    let mut rows = vec![{
        let mut header: Vec<String> = Vec::new();
        if named {
            header.push("Run".to_string());
        }
        header.extend(["Objective", "Verdict", "Measured"].map(String::from));
        header
    }];
    for (name, verdicts) in judged {
        for v in *verdicts {
            let mut row = Vec::new();
            if named {
                row.push(cell(name.unwrap_or_default()));
            }
            row.push(format!("`{}`", code(&v.expr)));
            row.push(if v.held { "held" } else { "**BROKEN**" }.to_string());
            row.push(cell(&v.measured_text()));
            rows.push(row);
        }
    }
    table(out, &rows);
}

/// A pipe table: the first row its header; its cells are Markdown already ([`cell`] escapes
/// text).
fn table(out: &mut String, rows: &[Vec<String>]) {
    let Some(header) = rows.first() else {
        return;
    };
    let line = |row: &Vec<String>| format!("| {} |", row.join(" | "));
    let _ = writeln!(out, "{}", line(header));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    for row in &rows[1..] {
        let _ = writeln!(out, "{}", line(row));
    }
    out.push('\n');
}

/// An objective as typed, for a code span in a table cell (`<` read as it is there, but a
/// pipe still ends the cell and a backtick the span).
fn code(expr: &str) -> String {
    expr.replace('`', "'").replace('|', "\\|")
}

/// Text as it reads in a table cell or a line: Markdown's and HTML's special characters
/// escaped, one line.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_escapes_what_markdown_and_html_would_read() {
        assert_eq!(cell("a|b <c> *d*\nx"), "a\\|b &lt;c&gt; \\*d\\* x");
        let mut out = String::new();
        table(
            &mut out,
            &[
                vec!["".into(), cell("a|b")],
                vec!["`p99<1ms`".into(), "1".into()],
            ],
        );
        assert_eq!(out, "|  | a\\|b |\n|---|---|\n| `p99<1ms` | 1 |\n\n");
    }
}
