//! The sentence a comparison opens with: how each label compares to the first on the mode's
//! key latency and its key rate, judged by the rule on run-to-run noise (`noise`): `nginx (B)
//! is 12% slower at p99 than backend (A) at the same load; rate equal within run-to-run
//! noise.` With one run per label the noise is not measured, and the sentence says so.

use super::noise::{beyond_noise, mean};
use super::rows::{Row, Unit};
use super::{values_of, Group, LoadedRun};

/// A label's name in the sentence: the label, with its letter when the table heads it so.
fn name(group: &Group<'_>) -> String {
    const LONGEST: usize = 40;
    let label: String = match group.label.chars().count() > LONGEST {
        true => format!(
            "{}…",
            group.label.chars().take(LONGEST - 1).collect::<String>()
        ),
        false => group.label.to_string(),
    };
    match (label.is_empty(), group.heading == group.label) {
        (true, _) => group.heading.clone(),
        (false, true) => label,
        (false, false) => format!("{label} ({})", group.heading),
    }
}

/// `b` against `a` in percent of `a`, rounded, and whether beyond the noise.
fn change(a: &[f64], b: &[f64]) -> Option<(f64, bool)> {
    let (mean_a, mean_b) = (mean(a)?, mean(b)?);
    (mean_a > 0.0).then(|| ((mean_b / mean_a - 1.0) * 100.0, beyond_noise(a, b)))
}

/// The opening sentence, or `None` for one label (nothing to compare) or no key metric both
/// labels have.
pub(super) fn verdict(
    runs: &[LoadedRun],
    per_run: &[(&LoadedRun, Vec<Row>)],
    groups: &[Group<'_>],
) -> Option<String> {
    let [first, others @ ..] = groups else {
        return None;
    };
    let unit_of = |row: &str| {
        per_run
            .iter()
            .find_map(|(_, rows)| rows.iter().find(|r| r.name == row).map(|r| r.unit))
    };
    let keys = runs.first()?.result().key_metrics();
    // The tail speaks for a latency (p99), else the first latency there is.
    let latency = keys
        .iter()
        .filter(|(row, _)| unit_of(row) == Some(Unit::Time))
        .min_by_key(|(row, _)| !row.contains("p99"));
    let rate = keys
        .iter()
        .find(|(row, _)| unit_of(row) == Some(Unit::Metric));
    let repeated = groups.iter().all(|g| g.runs.len() > 1);
    let within = match repeated {
        true => "within run-to-run noise",
        false => "within 1%",
    };
    let same_load = runs
        .windows(2)
        .all(|w| w[0].result().load() == w[1].result().load());
    let mut clauses = Vec::new();
    for group in others {
        let values = |row: &str| {
            (
                values_of(row, per_run, first),
                values_of(row, per_run, group),
            )
        };
        let mut said = Vec::new();
        if let Some((row, metric)) = latency {
            let (a, b) = values(row);
            if let Some((percent, beyond)) = change(&a, &b) {
                let at = match same_load {
                    true => " at the same load",
                    false => "",
                };
                said.push(match beyond {
                    true => format!(
                        "{} is {} at {metric} than {}{at}",
                        name(group),
                        match percent {
                            p if p >= 100.0 => format!("{:.1}× slower", 1.0 + p / 100.0),
                            p if p > 0.0 => format!("{p:.0}% slower"),
                            p => format!("{:.0}% faster", -p),
                        },
                        name(first)
                    ),
                    false => format!(
                        "{} matches {} at {metric}{at}, {within}",
                        name(group),
                        name(first)
                    ),
                });
            }
        }
        if let Some((row, metric)) = rate {
            let (a, b) = values(row);
            if let Some((percent, beyond)) = change(&a, &b) {
                let words = match (beyond, percent > 0.0) {
                    (false, _) => format!("{metric} equal {within}"),
                    (true, more) => format!(
                        "{:.0}% {} {metric}",
                        percent.abs(),
                        if more { "more" } else { "less" }
                    ),
                };
                said.push(match said.is_empty() {
                    true => format!("{} has {words} than {}", name(group), name(first)),
                    false => words,
                });
            }
        }
        if !said.is_empty() {
            clauses.push(said.join("; "));
        }
    }
    if clauses.is_empty() {
        return None;
    }
    let noise = match repeated {
        true => "",
        false => " (one run per label: run-to-run noise not measured)",
    };
    Some(format!("{}{noise}.", clauses.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::super::render;
    use crate::report::tools::saved::{LoadedRun, RunData};

    /// The fixture's direct run as a round of `label`, with this p99 (µs) and rate.
    fn round(label: &str, p99: u64, rate: f64) -> LoadedRun {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/http-direct-v1.json");
        let mut run = crate::report::tools::saved::load(&path).unwrap();
        if let RunData::Http(saved) = &mut run.data {
            saved.label = label.to_string();
            saved.latency.p99 = p99;
            saved.requests_per_sec = rate;
        }
        LoadedRun::new(run.data, &format!("{label}-{p99}.json"))
    }

    fn verdict_line(runs: &[LoadedRun]) -> Option<String> {
        let table = render(runs).unwrap();
        let line = table.lines().find(|l| l.starts_with("Verdict: "))?;
        Some(line["Verdict: ".len()..].to_string())
    }

    #[test]
    fn the_verdict_says_the_difference_and_whether_it_is_beyond_the_noise() {
        let rounds = [
            round("backend", 1000, 200.0),
            round("nginx", 1120, 200.0),
            round("backend", 1020, 200.0),
            round("nginx", 1130, 200.0),
        ];
        assert_eq!(
            verdict_line(&rounds).as_deref(),
            Some(
                "nginx is 11% slower at p99 than backend at the same load; rate equal within \
                 run-to-run noise."
            )
        );
        // The rounds of a label spread wider than the labels differ: no difference claimed.
        let noisy = [
            round("backend", 1000, 200.0),
            round("nginx", 1120, 150.0),
            round("backend", 1300, 200.0),
            round("nginx", 1130, 150.0),
        ];
        let line = verdict_line(&noisy).unwrap();
        assert!(
            line.starts_with("nginx matches backend at p99 at the same load, within run-to-run"),
            "{line}"
        );
        assert!(line.ends_with("; 25% less rate."), "{line}");
        // One run a label: the noise is not measured, and the sentence says so.
        let once = [round("backend", 1000, 200.0), round("nginx", 3300, 200.0)];
        assert_eq!(
            verdict_line(&once).as_deref(),
            Some(
                "nginx is 3.3× slower at p99 than backend at the same load; rate equal within \
                 1% (one run per label: run-to-run noise not measured)."
            )
        );
        // One label: nothing to compare.
        let alone = [round("backend", 1000, 200.0), round("backend", 1010, 200.0)];
        assert_eq!(verdict_line(&alone), None);
    }
}
