//! Objectives (`--slo`) on saved results: each measure read from a [`SavedRun`] or a
//! [`SavedSession`] (the [`Measured`] of [`crate::slo`]), the verdict lines printed after the
//! report, the exit status they give, and a step of a capacity search read from a saved result
//! ([`StepOutcome`]: held, broke, or limited by tsumo or the machine).
//!
//! Measured on the saved layout, not the live result, so that a file read back (a merge of
//! shards, a staircase's steps) is judged exactly as the run was.

use super::json::SavedRun;
use super::session::SavedSession;
use crate::capacity::{Limit, StepOutcome, SystemLimit};
use crate::error::{Error, ExitStatus};
use crate::mahjong::bot::StepKind;
use crate::slo::{self, Measure, Measured, Objective, Percentile, Verdict};
use crate::stats::hdr;
use crate::stats::shortfall::Side;

/// tsumo's send lateness (HTTP) or reply lateness (mahjong) p99 beyond which a step is tsumo's
/// limit whatever the objectives say: it sent that far behind its own schedule.
const GENERATOR_LATENESS_US: u64 = 10_000;

/// A worker thread's share of a core (on average over the threads) at which tsumo was out
/// of CPU.
const GENERATOR_CPU: f64 = 0.9;

impl Measured for SavedRun {
    fn measure(&self, measure: &Measure) -> Option<f64> {
        let c = &self.counters;
        match measure {
            Measure::Latency(p) => {
                // What the server caused, where the run has it (tsumo's own delay left out).
                let l = self.server_latency.as_ref().unwrap_or(&self.latency);
                let value = match p {
                    Percentile::P50 => l.p50,
                    Percentile::P75 => l.p75,
                    Percentile::P90 => l.p90,
                    Percentile::P99 => l.p99,
                    Percentile::P99_9 => l.p99_9,
                    Percentile::P99_99 => l.p99_99,
                    Percentile::Max => l.max,
                };
                (l.count > 0).then_some(value as f64)
            }
            Measure::ErrorShare => {
                // Every request due ends as a response, a socket error or never sent.
                let socket = c.errors.socket_total();
                let unsent = c.unsent.total();
                let due = c.requests + socket + unsent;
                let errors = socket + c.errors.status + unsent;
                (due > 0).then(|| errors as f64 * 100.0 / due as f64)
            }
            Measure::RateShare => {
                let target = self.plan.rate.filter(|&rate| rate > 0)?;
                Some(self.requests_per_sec * 100.0 / target as f64)
            }
            _ => None,
        }
    }

    fn judged_on(&self, measure: &Measure) -> Option<&'static str> {
        (matches!(measure, Measure::Latency(_)) && self.server_latency.is_some())
            .then_some("server_latency")
    }
}

impl Measured for SavedSession {
    fn measure(&self, measure: &Measure) -> Option<f64> {
        match measure {
            Measure::Session {
                histogram,
                percentile,
            } => {
                let h = self.histogram(histogram)?.sampled()?;
                let value = match percentile {
                    Percentile::P50 => h.p50,
                    Percentile::P90 => h.p90,
                    Percentile::P99 => h.p99,
                    Percentile::Max => h.max,
                    other => {
                        let decoded = h.decode(&self.label, histogram).ok()?;
                        hdr::value_at_percentile(&decoded, other.value())
                    }
                };
                Some(value as f64)
            }
            Measure::Disconnects => Some(self.disconnects as f64),
            Measure::SessionErrors => {
                let failed: u64 = self.phases.values().map(|p| p.failed).sum();
                Some((self.errors + failed) as f64)
            }
            _ => None,
        }
    }
}

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

/// A saved run's objectives judged again on what it holds now (a merge of its parts): parsed
/// again from their `expr`; one that no longer parses is left out.
pub fn judge_run_again(saved: &SavedRun) -> Vec<Verdict> {
    let objectives: Vec<Objective> = saved
        .objectives
        .iter()
        .filter_map(|v| slo::parse_http(&v.expr).ok())
        .collect();
    slo::judge(&objectives, saved)
}

/// [`judge_run_again`] for a session.
pub fn judge_session_again(saved: &SavedSession) -> Vec<Verdict> {
    let kinds = StepKind::ALL.map(StepKind::as_str);
    let objectives: Vec<Objective> = saved
        .objectives
        .iter()
        .filter_map(|v| slo::parse_mahjong(&v.expr, &kinds).ok())
        .collect();
    slo::judge(&objectives, saved)
}

/// One step of a capacity search, from its saved run: the machine's limit first (EMFILE,
/// EADDRNOTAVAIL, connections that could not be opened), then tsumo's (the rate held back on
/// its side, its send lateness, its CPU), else the objectives' verdicts.
pub fn step_of_run(saved: &SavedRun) -> StepOutcome {
    let c = &saved.counters;
    let shortfall = saved.rate_shortfall.as_ref();
    let lateness = saved.send_lateness.p99;
    let system = if c.emfile > 0 {
        Some(SystemLimit::OpenFiles)
    } else if c.eaddrnotavail > 0 {
        Some(SystemLimit::EphemeralPorts)
    } else if shortfall.is_some_and(|s| s.side == Side::Connect) {
        Some(SystemLimit::Refused)
    } else {
        None
    };
    let generator = match shortfall {
        Some(s) if s.side == Side::Generator || s.side == Side::Hung => Some(s.line()),
        _ => late_or_busy(
            "send lateness",
            lateness,
            &saved.objectives,
            saved.tsumo.map(|t| t.cpu_seconds),
            saved.elapsed_s,
            saved.plan.threads,
        ),
    };
    outcome(saved.requests_per_sec, &saved.objectives, system, generator)
}

/// One step of a capacity search over players, from its saved session. tsumo's lateness or
/// CPU limits only a step where a time objective broke: a player's late reply only lengthens
/// the server's measures, so a step that held with it held for the server too (a busy shared
/// machine must not end a search that held), and it cannot make the server refuse a player or
/// drop a socket, so errors and disconnects that broke alone are the server's (or the
/// machine's).
pub fn step_of_session(saved: &SavedSession) -> StepOutcome {
    let lateness = saved.reply_lateness.sampled().map_or(0, |h| h.p99);
    let time_broke = saved
        .objectives
        .iter()
        .any(|v| !v.held && v.unit == slo::Unit::Micros);
    let generator = time_broke
        .then(|| {
            late_or_busy(
                "reply lateness",
                lateness,
                &saved.objectives,
                Some(saved.tsumo.cpu_s),
                saved.elapsed_s,
                saved.plan.threads as usize,
            )
        })
        .flatten();
    let seated = saved.phases.get("formed").map_or(0, |p| p.ok);
    outcome(
        seated as f64,
        &saved.objectives,
        system_of(saved),
        generator,
    )
}

/// The machine's limit in a session's errors, by the OS's words for it: EMFILE, EADDRNOTAVAIL,
/// a refused connection.
fn system_of(saved: &SavedSession) -> Option<SystemLimit> {
    let said = |needles: [&str; 2]| {
        saved.error_kinds.keys().any(|kind| {
            let kind = kind.to_ascii_lowercase();
            needles.iter().any(|n| kind.contains(n))
        })
    };
    if said(["too many open files", "os error 24)"]) {
        Some(SystemLimit::OpenFiles)
    } else if said(["cannot assign requested address", "os error 99)"]) {
        Some(SystemLimit::EphemeralPorts)
    } else if said(["connection refused", "os error 111)"]) {
        Some(SystemLimit::Refused)
    } else {
        None
    }
}

/// Why tsumo was the limit, if it was: its lateness p99 beyond [`GENERATOR_LATENESS_US`] or
/// beyond half of a broken latency objective's limit (then the break cannot be the server's),
/// or its threads out of CPU.
fn late_or_busy(
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

fn outcome(
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
mod tests {
    use super::*;
    use crate::stats::shortfall::Shortfall;

    /// A saved file of `tests/fixtures`, read as `saved` reads it (serde alone), without
    /// importing `saved` (which imports `capacity`, which judges merged steps here).
    fn fixture<T: serde::de::DeserializeOwned>(name: &str) -> T {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn http_fixture() -> SavedRun {
        fixture("http-direct-v1.json")
    }

    fn session_fixture() -> SavedSession {
        fixture("mahjong-direct-v1.json")
    }

    fn http(exprs: &[&str]) -> Vec<Objective> {
        exprs.iter().map(|e| slo::parse_http(e).unwrap()).collect()
    }

    fn mahjong(exprs: &[&str]) -> Vec<Objective> {
        let kinds = StepKind::ALL.map(StepKind::as_str);
        exprs
            .iter()
            .map(|e| slo::parse_mahjong(e, &kinds).unwrap())
            .collect()
    }

    #[test]
    fn a_saved_run_is_measured_from_its_fields() {
        let mut run = http_fixture();
        let p99 = run.latency.p99 as f64;
        let verdicts = slo::judge(&http(&["p99<1s", "max<1us", "p99.9<1s"]), &run);
        assert_eq!(verdicts[0].measured, Some(p99));
        assert!(verdicts[0].held);
        assert_eq!(verdicts[1].measured, Some(run.latency.max as f64));
        assert!(!verdicts[1].held);
        assert_eq!(verdicts[2].measured, Some(run.latency.p99_9 as f64));
        // 95 responses, 5 of them non-2xx; 4 timeouts, 1 never sent: 10 errors of 100 due.
        run.counters.requests = 95;
        run.counters.errors = Default::default();
        run.counters.errors.status = 5;
        run.counters.errors.timeout = 4;
        run.counters.unsent = Default::default();
        run.counters.unsent.busy = 1;
        let errors = slo::judge(&http(&["errors<10%", "errors<10.1%"]), &run);
        assert_eq!(errors[0].measured, Some(10.0));
        assert_eq!(
            (errors[0].held, errors[1].held),
            (false, true),
            "{errors:?}"
        );
        // The rate reached, as a share of -R.
        run.plan.rate = Some(2_000);
        run.requests_per_sec = 1_900.0;
        let rate = slo::judge(&http(&["rate>95%", "rate>94.9%"]), &run);
        assert_eq!(rate[0].measured, Some(95.0));
        assert_eq!((rate[0].held, rate[1].held), (false, true));
        run.plan.rate = None;
        assert_eq!(slo::judge(&http(&["rate>95%"]), &run)[0].measured, None);
    }

    #[test]
    fn a_saved_session_is_measured_from_its_histograms() {
        let session = session_fixture();
        let verdicts = slo::judge(
            &mahjong(&[
                "draw_overshoot.p99<100ms",
                "draw_overshoot.p99.9<100ms",
                "dapai.max<10s",
                "disconnects<1",
                "errors<1",
                "gang.p99<1s",
            ]),
            &session,
        );
        assert_eq!(
            verdicts[0].measured,
            Some(session.draw_overshoot.p99 as f64)
        );
        let decoded = session.draw_overshoot.decode("t", "d").unwrap();
        assert_eq!(
            verdicts[1].measured,
            Some(hdr::value_at_percentile(&decoded, 99.9) as f64)
        );
        assert_eq!(
            verdicts[2].measured,
            Some(session.steps["dapai"].max as f64)
        );
        assert_eq!(verdicts[3].measured, Some(session.disconnects as f64));
        let failed: u64 = session.phases.values().map(|p| p.failed).sum();
        assert_eq!(verdicts[4].measured, Some((session.errors + failed) as f64));
        // No kan was played: nothing measured, which does not hold.
        if !session.steps.contains_key("gang") {
            assert_eq!(verdicts[5].measured, None);
            assert!(!verdicts[5].held);
        }
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

    #[test]
    fn a_step_names_who_was_the_limit() {
        let mut run = http_fixture();
        run.objectives = slo::judge(&http(&["p99<1s"]), &run);
        run.rate_shortfall = None;
        run.send_lateness.p99 = 100;
        run.tsumo = None;
        let step = step_of_run(&run);
        assert_eq!(step.limit, None);
        assert_eq!(step.class(), crate::capacity::Class::Held);
        // tsumo far behind its own schedule.
        run.send_lateness.p99 = 25_000;
        assert_eq!(
            step_of_run(&run).limit,
            Some(Limit::Generator("tsumo's send lateness p99 25.0ms".into()))
        );
        // Half of a broken latency objective eaten by tsumo's lateness.
        run.send_lateness.p99 = 600;
        run.objectives = slo::judge(&http(&["p99<1ms"]), &run);
        run.objectives[0].held = false;
        assert_eq!(
            step_of_run(&run).limit,
            Some(Limit::Generator(
                "tsumo's send lateness p99 600us is half of p99<1ms or more".into()
            ))
        );
        // The machine first: out of ports.
        run.counters.eaddrnotavail = 3;
        assert_eq!(
            step_of_run(&run).limit,
            Some(Limit::System(SystemLimit::EphemeralPorts))
        );
        // The rate held back by tsumo's CPU.
        run.counters.eaddrnotavail = 0;
        run.send_lateness.p99 = 0;
        run.rate_shortfall = Some(Shortfall {
            target_rate: 100,
            achieved_rate: 50.0,
            share: 0.5,
            side: Side::Generator,
            due_while_busy_share: 0.0,
            unsent_while_busy: 0,
            busiest_thread_runnable: 0.99,
            busiest_thread_cpu: 0.98,
            send_lateness_p99_us: 0,
            connections: 4,
            connect_errors: 0,
            hung_threads: 0,
        });
        assert!(matches!(
            step_of_run(&run).limit,
            Some(Limit::Generator(why)) if why.contains("held back by tsumo itself")
        ));
    }

    #[test]
    fn a_sessions_late_replies_limit_only_a_step_whose_time_objective_broke() {
        let mut session = session_fixture();
        session.elapsed_s = 10.0;
        session.tsumo.cpu_s = 0.0;
        session.reply_lateness.count = session.reply_lateness.count.max(1);
        session.reply_lateness.p99 = 50_000;
        let judged = |session: &mut SavedSession, exprs: &[&str], measured: &[f64]| {
            session.objectives = mahjong(exprs)
                .iter()
                .zip(measured)
                .map(|(o, &m)| Verdict {
                    expr: o.expr.clone(),
                    measured: Some(m),
                    unit: o.measure.unit(),
                    held: o.holds(m),
                    judged_on: None,
                })
                .collect();
            step_of_session(session).limit
        };
        // Only errors broke: the server's, however late tsumo was.
        let objectives = ["errors<1", "draw_overshoot.p99<100ms"];
        assert_eq!(judged(&mut session, &objectives, &[8.0, 20_000.0]), None);
        // Everything held: the server held, late replies or not.
        assert_eq!(judged(&mut session, &objectives, &[0.0, 20_000.0]), None);
        // A time objective broke: the late replies explain it.
        assert!(matches!(
            judged(&mut session, &objectives, &[0.0, 150_000.0]),
            Some(Limit::Generator(why)) if why.contains("reply lateness p99 50.0ms")
        ));
        assert!(matches!(
            judged(&mut session, &objectives, &[8.0, 150_000.0]),
            Some(Limit::Generator(_))
        ));
        // On time: a broken time objective is the server's.
        session.reply_lateness.p99 = 1_000;
        assert_eq!(judged(&mut session, &objectives, &[0.0, 150_000.0]), None);
    }
}
