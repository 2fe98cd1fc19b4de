//! A capacity search's text: the table of steps (the kind's columns from [`SearchStep`]),
//! the answer line, what broke first, and what failed.

use super::SavedSearch;
use crate::capacity::{Class, Disturbance, Limit};
use crate::report::result::{SearchStep, StepView};

/// The table of steps, the answer line and what broke first.
pub fn render<S: SearchStep>(search: &SavedSearch<S>) -> String {
    let views = search.views();
    let with_server = views.iter().any(|r| r.server.is_some());
    let mut header = vec!["step", "role"];
    header.extend(S::COLUMNS);
    if with_server {
        header.extend(["server cpu", "server mem"]);
    }
    header.push("verdict");
    let mut rows: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for (i, run) in views.iter().enumerate() {
        let role = search.roles.get(i).map_or("", |role| role.as_str());
        let outcome = search.outcomes.get(i).copied();
        // A load's second or third trial: `bisect #2`.
        let role = match search.capacity.trials.get(i) {
            Some(&trial) if trial > 1 => format!("{role} #{trial}"),
            _ => role.to_string(),
        };
        let mut cells = vec![
            (i + 1).to_string(),
            role,
            run.target
                .map_or_else(|| "-".to_string(), crate::capacity::grouped),
        ];
        if let Some(connections) = run.connections {
            cells.push(crate::capacity::grouped(connections as u64));
        }
        cells.extend([
            run.achieved.clone(),
            micros(run.p50),
            micros(run.p99),
            micros(run.max),
            run.errors.clone(),
        ]);
        if with_server {
            match run.server {
                Some(s) => cells.extend([
                    format!("{:.0}%", s.cpu_percent_mean),
                    format!("{:.1}MB", s.rss_bytes_peak as f64 / 1e6),
                ]),
                None => cells.extend(["-".to_string(), "-".to_string()]),
            }
        }
        // Disturbed by the step itself (tsumo's own unsent requests), else by the machine.
        let own = search
            .steps
            .get(i)
            .and_then(|s| match s.step_outcome().limit {
                Some(Limit::Disturbed(why)) => Some(why),
                _ => None,
            });
        cells.push(verdict(run, outcome, own, search.disturbances.get(i)));
        rows.push(cells);
    }
    let columns = rows[0].len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let what = if search.staircase.is_empty() {
        "search"
    } else {
        "staircase"
    };
    let mut out = format!("Capacity {what} ({})\n", search.capacity.unit);
    for cells in &rows {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if c + 1 == columns {
                    cell.clone()
                } else {
                    format!("{cell:>width$}", width = widths[c])
                }
            })
            .collect();
        out.push_str("  ");
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str(&search.capacity.answer);
    out.push('\n');
    if let Some(first) = &search.capacity.broke_first {
        out.push_str(first);
        out.push('\n');
    }
    let failed = search.failure.iter().cloned().chain(left_line(search));
    for line in failed {
        out.push_str(&format!("Failed: {line}\n"));
    }
    out
}

/// A step's verdict cell: its outcome, with the objectives it broke, or the disturbance that
/// disturbed it.
fn verdict(
    run: &StepView<'_>,
    outcome: Option<Class>,
    own: Option<String>,
    disturbance: Option<&Disturbance>,
) -> String {
    let broken: Vec<String> = run
        .objectives
        .iter()
        .filter(|v| !v.held)
        .map(|v| format!("{} ({})", v.expr, v.measured_text()))
        .collect();
    match outcome {
        Some(Class::Broke) => format!("broke: {}", broken.join(", ")),
        // The step where the server stopped answering, with what it had broken by then.
        Some(Class::ServerFailed) if !broken.is_empty() => {
            format!("server-failed: {}", broken.join(", "))
        }
        Some(Class::Disturbed) => match (own, disturbance) {
            (Some(why), _) => format!("disturbed: {why}"),
            (None, Some(disturbance)) => format!("disturbed: {}", disturbance.describe()),
            (None, None) => "disturbed".to_string(),
        },
        other => other.map_or("", Class::as_str).to_string(),
    }
}

/// `16 sessions left on the server: tsumo8, tsumo9, … and 6 more (all in the JSON's
/// left_on_server)`.
pub(super) fn left_line<S>(search: &SavedSearch<S>) -> Option<String> {
    let left = &search.left_on_server;
    if left.is_empty() {
        return None;
    }
    let shown: Vec<&str> = left.iter().take(10).map(String::as_str).collect();
    let more = match left.len() - shown.len() {
        0 => String::new(),
        n => format!(" and {n} more (all in the JSON's left_on_server)"),
    };
    Some(format!(
        "{} session{} left on the server: {}{more}",
        left.len(),
        if left.len() == 1 { "" } else { "s" },
        shown.join(", ")
    ))
}

/// A latency in µs, in three figures.
pub(super) fn micros(us: u64) -> String {
    match us {
        0..=999 => format!("{us}us"),
        1_000..=999_999 => format!("{:.2}ms", us as f64 / 1e3),
        _ => format!("{:.2}s", us as f64 / 1e6),
    }
}

/// `100,200,600`.
pub(super) fn rates(loads: &[u64]) -> String {
    let said: Vec<String> = loads.iter().map(u64::to_string).collect();
    said.join(",")
}
