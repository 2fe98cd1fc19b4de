//! The figures of one run as table rows: each result gives its own
//! ([`SavedResult::rows`](crate::report::result::SavedResult::rows)), the server's are added
//! here, and the numbers are printed by their unit. A figure a run does not have (an empty
//! histogram's percentiles, a server that was not sampled) is an absent value, shown as `-`.

use super::LoadedRun;
pub(super) use crate::report::result::{row, Row, Unit};
use crate::report::result::{Figure, PageContent};
use crate::stats::format::{format_binary, format_metric, format_time_us, format_times_us};
use crate::sys::procstat::ServerUsage;

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

/// Every row of a run: its mode's, then the server's.
pub(super) fn rows(run: &LoadedRun) -> Vec<Row> {
    let mut rows = run.result().rows();
    rows.extend(server_rows(run.server()));
    rows
}

pub(super) fn format_value(value: f64, unit: Unit) -> String {
    match unit {
        Unit::Time => format_time_us(value),
        Unit::Seconds => format!("{value:.2}s"),
        Unit::Metric => format_metric(value),
        Unit::Bytes => format!("{}B", format_binary(value)),
        Unit::BytesPerSec => format!("{}B", format_binary(value)),
        Unit::Count if value.fract() == 0.0 => format!("{value:.0}"),
        Unit::Count => format!("{value:.1}"),
        Unit::Percent => format!("{value:.1}%"),
    }
}

/// Each run's figures as shown, a column of durations (every run's figure shown as the time
/// of its value in µs) in one unit, as the compare table's rows are.
pub fn figures_in_one_unit(pages: &[PageContent]) -> Vec<Vec<String>> {
    let mut shown: Vec<Vec<String>> = pages
        .iter()
        .map(|p| p.figures.iter().map(|f| f.shown.clone()).collect())
        .collect();
    let Some(first) = pages.first() else {
        return shown;
    };
    for (j, figure) in first.figures.iter().enumerate() {
        let column: Vec<Option<&Figure>> = pages
            .iter()
            .map(|p| p.figures.get(j).filter(|f| f.id == figure.id))
            .collect();
        let is_time = |f: &&Figure| f.value.is_some_and(|v| f.shown == format_time_us(v));
        if column.iter().all(|f| f.as_ref().is_some_and(is_time)) {
            let values: Vec<Option<f64>> = column.iter().map(|f| f.and_then(|f| f.value)).collect();
            for (i, text) in format_times_us(&values).into_iter().enumerate() {
                shown[i][j] = text;
            }
        }
    }
    shown
}

/// `b / a` as `1.35×`; `-` when it has no meaning (a is 0, or a value is missing).
pub(super) fn format_ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 => format!("{:.2}×", b / a),
        _ => "-".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::report::mahjong::saved::SavedSession;
    use crate::report::tools::saved::{LoadedRun, RunData};

    fn session(label: &str) -> LoadedRun {
        let saved: SavedSession = serde_json::from_str(include_str!(
            "../../../../tests/fixtures/mahjong-direct-v1.json"
        ))
        .expect("the fixture is a session");
        LoadedRun::new(RunData::Mahjong(Box::new(saved)), label)
    }

    #[test]
    fn a_step_only_a_later_session_saw_sits_among_the_steps() {
        let first = session("a");
        let mut second = session("b");
        if let RunData::Mahjong(s) = &mut second.data {
            let zimo = s.steps["zimo"].clone();
            s.steps.insert("pingju".to_string(), zimo);
        }
        let table = crate::report::tools::compare::render(&[first, second]).expect("comparable");
        let at = |row: &str| {
            table
                .find(row)
                .unwrap_or_else(|| panic!("no {row} row in:\n{table}"))
        };
        assert!(at("Step pingju p50") > at("Step zimo p99"), "{table}");
        assert!(at("Step pingju p99") < at("Draw overshoot p99"), "{table}");
        assert!(at("Step pingju p99") < at("Server RSS peak"), "{table}");
    }
}
