//! The line a comparison opens with: one sentence on how each label compares to the first on
//! the mode's key measures, those beyond run-to-run noise first (the rule is in `spread`):
//! `Verdict: nginx against direct at the same load: p50 +67%, server CPU +90% beyond run-to-run
//! noise; rate, p99, the server's p99 within it.` Every key measure is judged, so a cost in one
//! measure is not hidden behind another that did not move. With one run of a label the noise is
//! not measured and no difference is a verdict: the line says so instead. Runs whose receive
//! times come from different clocks (HTTP/3's user-space stamps, HTTP/2's kernel stamps) are not
//! judged on latency at all.

use super::rows::{Row, Unit};
use super::spread::{beyond_spread, mean};
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

/// `b` against `a` in percent of `a`, and whether beyond the noise.
fn change(a: &[f64], b: &[f64]) -> Option<(f64, bool)> {
    let (mean_a, mean_b) = (mean(a)?, mean(b)?);
    (mean_a > 0.0).then(|| ((mean_b / mean_a - 1.0) * 100.0, beyond_spread(a, b)))
}

/// Where a group's receive times come from (`kernel`, `user`, `mixed`); `None` when its mode
/// does not say.
fn stamps(group: &Group<'_>) -> Option<&'static str> {
    let mut said = group.runs.iter().map(|r| r.result().receive_stamps());
    let first = said.next()??;
    Some(match said.all(|s| s == Some(first)) {
        true => first,
        false => "mixed",
    })
}

/// `None` when `a` and `b` time their responses alike; else why their latencies are not
/// comparable: `h3 is timed in user space and h2 by the kernel's receive stamps`.
pub(super) fn timed_apart(a: &Group<'_>, b: &Group<'_>) -> Option<String> {
    let (sa, sb) = (stamps(a)?, stamps(b)?);
    if sa == sb && sa != "mixed" {
        return None;
    }
    let how = |s: &str| match s {
        "kernel" => "by the kernel's receive stamps",
        "user" => "in user space (tsumo's read delay included)",
        _ => "partly in user space, partly by the kernel",
    };
    Some(format!(
        "{} is timed {} and {} {}",
        name(b),
        how(sb),
        name(a),
        how(sa)
    ))
}

/// The opening line (`Verdict: …`, or `No verdict: …` when the noise was not measured), or
/// `None` for one label (nothing to compare) or no key measure both labels have.
pub(super) fn verdict(
    runs: &[LoadedRun],
    per_run: &[(&LoadedRun, Vec<Row>)],
    groups: &[Group<'_>],
) -> Option<String> {
    let [first, others @ ..] = groups else {
        return None;
    };
    if others.is_empty() {
        return None;
    }
    let unit_of = |row: &str| {
        per_run
            .iter()
            .find_map(|(_, rows)| rows.iter().find(|r| r.name == row).map(|r| r.unit))
    };
    let keys = runs.first()?.result().key_metrics();
    let repeated = groups.iter().all(|g| g.runs.len() > 1);
    let same_load = runs
        .windows(2)
        .all(|w| w[0].result().load() == w[1].result().load());
    let at = match same_load {
        true => " at the same load",
        false => "",
    };
    let mut clauses = Vec::new();
    let mut apart_said = Vec::new();
    for group in others {
        let apart = timed_apart(first, group);
        let (mut beyond, mut within) = (Vec::new(), Vec::new());
        for (row, metric) in keys {
            let Some(unit) = unit_of(row) else { continue };
            if apart.is_some() && unit == Unit::Time {
                continue;
            }
            let a = values_of(row, per_run, first);
            let b = values_of(row, per_run, group);
            match change(&a, &b) {
                Some((percent, true)) => beyond.push(format!("{metric} {percent:+.0}%")),
                Some((_, false)) => within.push(*metric),
                None => {}
            }
        }
        if let Some(why) = apart {
            apart_said.push(why);
        }
        if !repeated {
            continue;
        }
        let judged = match (beyond.is_empty(), within.is_empty()) {
            (true, true) => continue,
            (false, true) => format!("{} beyond run-to-run noise", beyond.join(", ")),
            (true, false) => format!("{} within run-to-run noise", within.join(", ")),
            (false, false) => format!(
                "{} beyond run-to-run noise; {} within it",
                beyond.join(", "),
                within.join(", ")
            ),
        };
        clauses.push(format!(
            "{} against {}{at}: {judged}",
            name(group),
            name(first)
        ));
    }
    let apart = match apart_said.is_empty() {
        true => String::new(),
        false => format!(
            "; latency not compared: {}, which are not comparable",
            apart_said.join("; ")
        ),
    };
    // Searches measure their own noise, in their ranges: the line on the ranges judges them.
    let ranged = per_run.iter().all(|(_, rows)| {
        let has = |name: &str| rows.iter().any(|r| r.name == name && r.value.is_some());
        has("Range low") && has("Range high")
    });
    if !repeated && ranged {
        return None;
    }
    if !repeated {
        return Some(format!(
            "No verdict: one run of a label cannot tell a difference from run-to-run noise, so \
             none in the table below is a verdict; run each label several times (the same \
             --label, or --vs with --rounds 3){apart}."
        ));
    }
    if clauses.is_empty() {
        return None;
    }
    Some(format!("Verdict: {}{apart}.", clauses.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::super::render;
    use crate::report::tools::saved::{LoadedRun, RunData};
    use crate::stats::http::split::Timestamps;

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
        let line = table
            .lines()
            .find(|l| l.starts_with("Verdict: ") || l.starts_with("No verdict: "))?;
        Some(line.to_string())
    }

    #[test]
    fn the_verdict_names_every_measure_beyond_the_noise_and_those_within() {
        let rounds = [
            round("backend", 1000, 200.0),
            round("nginx", 1120, 200.0),
            round("backend", 1020, 200.0),
            round("nginx", 1130, 200.0),
        ];
        let line = verdict_line(&rounds).unwrap();
        assert!(
            line.starts_with(
                "Verdict: nginx against backend at the same load: p99 +11% beyond run-to-run \
                 noise; rate, p50, "
            ),
            "{line}"
        );
        assert!(line.ends_with(" within it."), "{line}");
        // The rounds of a label spread wider than the labels differ: no difference claimed on
        // p99, and the rate's drop leads.
        let noisy = [
            round("backend", 1000, 200.0),
            round("nginx", 1120, 150.0),
            round("backend", 1300, 200.0),
            round("nginx", 1130, 150.0),
        ];
        let line = verdict_line(&noisy).unwrap();
        assert!(
            line.starts_with(
                "Verdict: nginx against backend at the same load: rate -25% beyond run-to-run \
                 noise; p50, p99"
            ),
            "{line}"
        );
        // One run a label: the noise is not measured, and no difference is called a verdict.
        let once = [round("backend", 1000, 200.0), round("nginx", 3300, 200.0)];
        let line = verdict_line(&once).unwrap();
        assert!(line.starts_with("No verdict: one run of a label"), "{line}");
        assert!(!line.contains("slower") && !line.contains('%'), "{line}");
        // One label: nothing to compare.
        let alone = [round("backend", 1000, 200.0), round("backend", 1010, 200.0)];
        assert_eq!(verdict_line(&alone), None);
    }

    /// Runs timed by different clocks (HTTP/3 in user space, HTTP/2 by the kernel) are not
    /// judged on latency, and the sentences under the table say so too.
    #[test]
    fn runs_timed_by_different_clocks_are_not_judged_on_latency() {
        let stamped = |label: &str, p99: u64, stamps: Timestamps| {
            let mut run = round(label, p99, 200.0);
            if let RunData::Http(saved) = &mut run.data {
                saved.timestamps = stamps;
            }
            run
        };
        let rounds = [
            stamped("h3", 2000, Timestamps::User),
            stamped("h2", 1000, Timestamps::Kernel),
            stamped("h3", 2010, Timestamps::User),
            stamped("h2", 1010, Timestamps::Kernel),
        ];
        let table = render(&rounds).unwrap();
        let line = verdict_line(&rounds).unwrap();
        assert!(!line.contains("p99"), "{line}");
        assert!(
            line.contains(
                "latency not compared: h2 is timed by the kernel's receive stamps and h3 in user \
                 space"
            ),
            "{line}"
        );
        assert!(
            table.contains("\np99: not comparable: h2 is timed by the kernel's"),
            "{table}"
        );
    }
}
