//! Objectives (`--slo`) on saved results, whatever their kind: the verdict lines printed after
//! the report, the exit status they give, the refusal of parts judged by different objectives,
//! and what every kind's step of a capacity search is judged by ([`StepOutcome`]: held, broke,
//! or limited by tsumo or the machine). Each kind's measures are in its own folder
//! (`http/measures.rs`, `mahjong/measures.rs`).

use crate::capacity::{Limit, StepOutcome, SystemLimit};
use crate::error::{Error, ExitStatus};
use crate::mahjong::bot::StepKind;
use crate::slo::{self, Verdict};

/// tsumo's send lateness (HTTP) or reply lateness (mahjong) p99 beyond which a step is tsumo's
/// limit whatever the objectives say: it sent that far behind its own schedule.
const GENERATOR_LATENESS_US: u64 = 10_000;

/// A worker thread's share of a core (on average over the threads) at which tsumo was out
/// of CPU.
const GENERATOR_CPU: f64 = 0.9;

/// The lines printed after the report: a head, then each objective, its verdict and what was
/// measured. None without objectives.
pub fn lines(verdicts: &[Verdict]) -> Vec<String> {
    if verdicts.is_empty() {
        return Vec::new();
    }
    let broken = verdicts.iter().filter(|v| !v.held).count();
    let head = match broken {
        0 => format!("Objectives: all {} held", verdicts.len()),
        n => format!("Objectives: {n} of {} broken", verdicts.len()),
    };
    let width = verdicts.iter().map(|v| v.expr.len()).max().unwrap_or(0);
    let mut lines = vec![head];
    for v in verdicts {
        let verdict = if v.held { "held" } else { "BROKEN" };
        lines.push(format!(
            "  {verdict:<6}  {:<width$}  {}",
            v.expr,
            v.measured_text()
        ));
    }
    lines
}

/// 99 when an objective broke, else 0 (a run that failed has returned 1 before this).
pub fn status(verdicts: &[Verdict]) -> ExitStatus {
    if verdicts.iter().any(|v| !v.held) {
        ExitStatus::ObjectiveBroken
    } else {
        ExitStatus::Ran
    }
}

/// Refuses parts of one run (each with its source) whose objectives differ: their merge is
/// judged by one set of objectives, and which set would depend on the order of the files.
pub fn refuse_different(parts: &[(&[Verdict], &str)]) -> Result<(), Error> {
    fn set(verdicts: &[Verdict]) -> std::collections::BTreeSet<&str> {
        verdicts.iter().map(|v| v.expr.as_str()).collect()
    }
    let Some(&(first, first_source)) = parts.first() else {
        return Ok(());
    };
    let named = |verdicts: &[Verdict]| {
        let exprs: Vec<&str> = verdicts.iter().map(|v| v.expr.as_str()).collect();
        match exprs.is_empty() {
            true => "no objectives".to_string(),
            false => format!("objectives {}", exprs.join(" ")),
        }
    };
    for &(other, source) in &parts[1..] {
        if set(other) != set(first) {
            return Err(Error::Usage(format!(
                "merge: {first_source} has {} but {source} has {}: parts of one run are judged \
                 by one set of objectives (give every part the same --slo)",
                named(first),
                named(other)
            )));
        }
    }
    Ok(())
}

/// Why tsumo was the limit, if it was: its lateness p99 beyond [`GENERATOR_LATENESS_US`] or
/// beyond half of a broken latency objective's limit (then the break cannot be the server's),
/// or its threads out of CPU.
pub(crate) fn late_or_busy(
    what: &str,
    lateness_us: u64,
    verdicts: &[Verdict],
    cpu_s: Option<f64>,
    elapsed_s: f64,
    threads: usize,
) -> Option<String> {
    let lateness = slo::format_value(lateness_us as f64, slo::Unit::Micros);
    if lateness_us > GENERATOR_LATENESS_US {
        return Some(format!("tsumo's {what} p99 {lateness}"));
    }
    // A latency judged on the server's share has tsumo's delay taken out already.
    let eaten = verdicts.iter().find(|v| {
        !v.held
            && v.unit == slo::Unit::Micros
            && v.judged_on.is_none()
            && limit_of(&v.expr) <= 2.0 * lateness_us as f64
    });
    if let Some(v) = eaten {
        return Some(format!(
            "tsumo's {what} p99 {lateness} is half of {} or more",
            v.expr
        ));
    }
    let cores = cpu_s? / elapsed_s.max(1e-9);
    (cores >= GENERATOR_CPU * threads.max(1) as f64).then(|| {
        format!(
            "tsumo used {cores:.2} cores of its {threads} thread{}",
            if threads == 1 { "" } else { "s" }
        )
    })
}

/// The limit of a latency objective as typed, µs (∞ when it does not parse as one).
fn limit_of(expr: &str) -> f64 {
    slo::parse_http(expr)
        .or_else(|_| slo::parse_mahjong(expr, &StepKind::ALL.map(StepKind::as_str)))
        .map_or(f64::INFINITY, |o| o.limit)
}

pub(crate) fn outcome(
    achieved: f64,
    verdicts: &[Verdict],
    system: Option<SystemLimit>,
    generator: Option<String>,
) -> StepOutcome {
    let limit = system
        .map(Limit::System)
        .or(generator.map(Limit::Generator));
    StepOutcome {
        achieved,
        verdicts: verdicts.to_vec(),
        limit,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A saved file of `tests/fixtures`, read with serde alone (not through the reader of
    /// saved files, which is above this module).
    pub(crate) fn fixture<T: serde::de::DeserializeOwned>(name: &str) -> T {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn verdict_lines_and_status() {
        let verdicts = vec![
            Verdict {
                expr: "p99<20ms".into(),
                measured: Some(4_120.0),
                unit: slo::Unit::Micros,
                held: true,
                judged_on: None,
            },
            Verdict {
                expr: "errors<0.1%".into(),
                measured: Some(2.3),
                unit: slo::Unit::Percent,
                held: false,
                judged_on: None,
            },
            Verdict {
                expr: "rate>95%".into(),
                measured: None,
                unit: slo::Unit::Percent,
                held: false,
                judged_on: None,
            },
        ];
        assert_eq!(
            lines(&verdicts),
            [
                "Objectives: 2 of 3 broken",
                "  held    p99<20ms     p99 4.1ms",
                "  BROKEN  errors<0.1%  errors 2.3%",
                "  BROKEN  rate>95%     rate not measured",
            ]
        );
        assert_eq!(status(&verdicts), ExitStatus::ObjectiveBroken);
        assert_eq!(
            slo::broken_line(&verdicts).as_deref(),
            Some("objectives broken: errors<0.1% (errors 2.3%), rate>95% (rate not measured)")
        );
        assert_eq!(slo::broken_line(&verdicts[..1]), None);
        assert_eq!(status(&verdicts[..1]), ExitStatus::Ran);
        assert_eq!(lines(&verdicts[..1])[0], "Objectives: all 1 held");
        assert!(lines(&[]).is_empty());
    }
}
