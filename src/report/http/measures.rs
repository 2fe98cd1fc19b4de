//! What objectives measure on an HTTP run ([`Measured`] for [`SavedRun`]), its objectives
//! judged again after a merge, and its outcome as a step of a capacity search (through
//! [`SearchStep`]).
//!
//! Measured on the saved layout, not the live result, so that a file read back (a merge of
//! shards, a staircase's steps) is judged exactly as the run was.

use super::saved::SavedRun;
use crate::capacity::{Class, Limit, LoadUnit, StepOutcome, SystemLimit};
use crate::report::lines::counts_said;
use crate::report::objectives::{late_or_busy, outcome};
use crate::report::result::{SearchStep, StepView};
use crate::slo::{self, Measure, Measured, Objective, Verdict};
use crate::stats::http::shortfall::{Shortfall, Side};

impl Measured for SavedRun {
    fn measure(&self, measure: &Measure) -> Option<f64> {
        match measure {
            Measure::Latency(p) => {
                // What the server caused, where the run has it (tsumo's own delay left out).
                let l = self.server_latency.as_ref().unwrap_or(&self.latency);
                l.at(*p)
            }
            Measure::ErrorShare => error_share(self, Own::LeftOut),
            Measure::RateShare => rate_share(self, Own::LeftOut),
            _ => None,
        }
    }

    fn judged_on(&self, measure: &Measure) -> Option<&'static str> {
        match measure {
            Measure::Latency(_) => self.server_latency.is_some().then_some("server_latency"),
            Measure::ErrorShare | Measure::RateShare => {
                (self.counters.unsent.late > 0).then_some(WITHOUT_OWN_UNSENT)
            }
            _ => None,
        }
    }
}

/// A verdict's `judged_on` when the requests tsumo itself left unsent were left out.
pub const WITHOUT_OWN_UNSENT: &str = "without_own_unsent";

/// Whether tsumo's own unsent requests ([`Unsent::late`](crate::stats::http::Unsent::late)) count.
#[derive(Clone, Copy, PartialEq)]
enum Own {
    /// Left out: what the server caused (how objectives are judged).
    LeftOut,
    /// Counted as failed: what the run delivered.
    Counted,
}

/// Every request due ends as a response, a socket error or never sent: the failed share, %.
fn error_share(run: &SavedRun, own: Own) -> Option<f64> {
    let c = &run.counters;
    let socket = c.errors.socket_total();
    let unsent = match own {
        Own::LeftOut => c.unsent.by_server(),
        Own::Counted => c.unsent.total(),
    };
    let due = c.requests + socket + unsent;
    let errors = socket + c.errors.status + unsent;
    (due > 0).then(|| errors as f64 * 100.0 / due as f64)
}

/// Requests/sec completed over the target, %: with tsumo's own unsent left out, over the rate
/// it did send (the target less those).
fn rate_share(run: &SavedRun, own: Own) -> Option<f64> {
    let target = run.plan.rate.filter(|&rate| rate > 0)? as f64;
    let own_rate = match own {
        Own::LeftOut => run.counters.unsent.late as f64 / run.elapsed_s.max(1e-9),
        Own::Counted => 0.0,
    };
    Some(run.requests_per_sec * 100.0 / (target - own_rate).max(1e-9))
}

impl SavedRun {
    /// The objectives that held on what the server caused but break with the requests tsumo
    /// itself left unsent counted as failed (issue 43): `tsumo did not send 215 requests …`,
    /// `None` when none. Such a run says nothing of the server at its load: a capacity step
    /// is disturbed (run again), a plain run fails (exit 1), never blaming the server.
    pub fn broken_by_own_unsent(&self) -> Option<String> {
        let late = self.counters.unsent.late;
        if late == 0 {
            return None;
        }
        let broken: Vec<String> = self
            .objectives
            .iter()
            .filter(|v| v.held)
            .filter_map(|v| {
                let objective = slo::parse_http(&v.expr).ok()?;
                let counted = match objective.measure {
                    Measure::ErrorShare => error_share(self, Own::Counted),
                    Measure::RateShare => rate_share(self, Own::Counted),
                    _ => return None,
                }?;
                (!objective.holds(counted)).then(|| {
                    let text = slo::format_value(counted, slo::Unit::Percent);
                    format!("{} ({} {text} with them)", v.expr, v.name())
                })
            })
            .collect();
        (!broken.is_empty()).then(|| {
            format!(
                "tsumo did not send {late} request{} (behind its own schedule, their \
                 connection free): {} held only without them",
                if late == 1 { "" } else { "s" },
                broken.join(", ")
            )
        })
    }
}

impl SearchStep for SavedRun {
    const UNIT: LoadUnit = LoadUnit::RequestsPerSec;
    const SEARCH: &'static str = "capacity search";
    const COLUMNS: &'static [&'static str] =
        &["target", "conns", "achieved", "p50", "p99", "max", "errors"];
    const ACHIEVED_UNIT: &'static str = "req/s";
    const MEASURE: &'static str = "";
    const STAIRCASES_MERGE: bool = true;

    /// The machine's limit first (EMFILE, EADDRNOTAVAIL, connections that could not be
    /// opened), then tsumo's (the rate held back on its side, its send lateness, its CPU), else
    /// the objectives' verdicts: held only without the requests tsumo left unsent is disturbed.
    fn step_outcome(&self) -> StepOutcome {
        let c = &self.counters;
        let shortfall = self.rate_shortfall.as_ref();
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
                self.send_lateness.p99,
                &self.objectives,
                self.tsumo.map(|t| t.cpu_seconds),
                self.elapsed_s,
                self.plan.threads,
            ),
        };
        let mut step = outcome(self.requests_per_sec, &self.objectives, system, generator);
        // Held only without the requests tsumo itself did not send: tsumo's failure, not the
        // server's; a break on the server's share stands whatever tsumo left unsent.
        // So is a rate that tsumo's own unsent requests held back: it did not deliver the load.
        if step.limit.is_none() && step.class() == Class::Held {
            let late = shortfall
                .filter(|s| s.side == Side::Late)
                .map(Shortfall::line);
            step.limit = self.broken_by_own_unsent().or(late).map(Limit::Disturbed);
        }
        step
    }

    fn judge_again(&self) -> Vec<Verdict> {
        let objectives: Vec<Objective> = self
            .objectives
            .iter()
            .filter_map(|v| slo::parse_http(&v.expr).ok())
            .collect();
        slo::judge(&objectives, self)
    }

    fn step_view(&self, _achieved: Option<u64>) -> StepView<'_> {
        StepView {
            target: self.plan.rate,
            connections: Some(self.plan.connections),
            achieved: format!("{:.1}", self.requests_per_sec),
            achieved_value: Some(self.requests_per_sec),
            p50: self.latency.p50,
            p99: self.latency.p99,
            max: self.latency.max,
            errors: errors(self),
            server: self.server.as_ref(),
            objectives: &self.objectives,
        }
    }

    fn search_command(&self, objectives: &str, url: &str) -> String {
        format!(
            "tsumo capacity {objectives} -c{} {url}",
            self.plan.connections
        )
    }
}

/// `0`, or each kind that happened: `4xx/5xx 12, timeout 3, unsent 40`.
fn errors(run: &SavedRun) -> String {
    let e = &run.counters.errors;
    let kinds = [
        ("connect", e.connect),
        ("read", e.read),
        ("write", e.write),
        ("timeout", e.timeout),
        ("4xx/5xx", e.status),
        ("protocol", e.protocol),
        ("unsent", run.counters.unsent.total()),
    ];
    counts_said(&kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http_fixture() -> SavedRun {
        crate::report::objectives::tests::fixture("http-direct-v1.json")
    }

    fn http(exprs: &[&str]) -> Vec<Objective> {
        exprs.iter().map(|e| slo::parse_http(e).unwrap()).collect()
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

    /// Issue 43: a run at 500 r/s for 5 s that tsumo left 215 requests unsent (8.6 %) while
    /// the server answered every request it was sent.
    fn left_unsent(late: u64, busy: u64, status: u64) -> SavedRun {
        let mut run = http_fixture();
        run.plan.rate = Some(500);
        run.elapsed_s = 5.0;
        run.counters.requests = 2_500 - late - busy;
        run.requests_per_sec = run.counters.requests as f64 / 5.0;
        run.counters.errors = Default::default();
        run.counters.errors.status = status;
        run.counters.unsent = crate::stats::http::Unsent {
            late,
            busy,
            ..Default::default()
        };
        run.rate_shortfall = None;
        run.send_lateness.p99 = 100;
        run.tsumo = None;
        run.objectives = slo::judge(&http(&["errors<1%", "rate>95%", "p99<1s"]), &run);
        run
    }

    #[test]
    fn objectives_broken_only_by_tsumos_own_unsent_requests_are_tsumos() {
        use crate::report::result::SavedResult;
        let run = left_unsent(215, 0, 0);
        // Judged on what the server did: every request it was sent answered, at the rate sent.
        let [errors, rate, _] = &run.objectives[..] else {
            panic!("{:?}", run.objectives)
        };
        assert_eq!((errors.measured, errors.held), (Some(0.0), true));
        assert_eq!(errors.judged_on.as_deref(), Some(WITHOUT_OWN_UNSENT));
        assert_eq!(errors.measured_text(), "errors 0% (without tsumo's unsent)");
        assert!(rate.held, "{rate:?}");
        // With them, both broke: the step is disturbed (run again), never broken beyond doubt.
        let why = run
            .broken_by_own_unsent()
            .expect("broken by tsumo's unsent");
        assert_eq!(
            why,
            "tsumo did not send 215 requests (behind its own schedule, their connection free): \
             errors<1% (errors 8.6% with them), rate>95% (rate 91.4% with them) held only \
             without them"
        );
        let step = run.step_outcome();
        assert_eq!(step.limit, Some(Limit::Disturbed(why.clone())));
        assert_eq!(step.class(), Class::Disturbed);
        // A plain run fails as tsumo's (1), not as the server's objective (99).
        let (status, line) = run.exit();
        assert_eq!(status, crate::error::ExitStatus::Failed);
        assert!(line.is_some_and(|l| l.contains(&why)));
        // The same requests held back by the server (their connection busy): the server's.
        let busy = left_unsent(0, 215, 0);
        assert!(!busy.objectives[0].held && busy.objectives[0].judged_on.is_none());
        assert_eq!(busy.broken_by_own_unsent(), None);
        assert_eq!(busy.step_outcome().class(), Class::Broke);
        assert_eq!(busy.exit().0, crate::error::ExitStatus::ObjectiveBroken);
        // A few left unsent that break nothing: the verdict stands.
        let few = left_unsent(10, 0, 0);
        assert_eq!(few.broken_by_own_unsent(), None);
        assert_eq!(few.step_outcome().class(), Class::Held);
        // The server's own errors break it anyway: the break is judged on the server's share
        // (1.5 %, near its limit: run again as any near break), whatever tsumo left unsent.
        let both = left_unsent(215, 0, 34);
        let errors = &both.objectives[0];
        assert!(!errors.held && !errors.far_beyond(), "{errors:?}");
        assert_eq!(both.step_outcome().class(), Class::Broke);
        assert_eq!(both.exit().0, crate::error::ExitStatus::ObjectiveBroken);
    }

    /// An objective that holds on the whole run but breaks in one `--stages` stage exits 99,
    /// naming the stage.
    #[test]
    fn a_breach_in_one_stage_alone_breaks_the_run() {
        use crate::error::ExitStatus;
        use crate::plan::{Shard, Stage};
        use crate::report::result::SavedResult;
        use crate::stats::http::stages::{RunStages, StageRecord};
        let mut run = http_fixture();
        let objectives = http(&["p99<1s"]);
        run.objectives = slo::judge(&objectives, &run);
        assert_eq!(run.exit(), (ExitStatus::Ran, None));
        let s = 1_000_000_000u64;
        let hold = Stage {
            duration_ns: s,
            from: 800,
            to: 800,
        };
        let records: Vec<StageRecord> = [1000, 2_000_000]
            .map(|us| {
                let mut record = StageRecord::default();
                record.server.record(us).unwrap();
                record.counts.requests = 800;
                record
            })
            .into();
        let due = |t: u64| (t as u128 * 800).div_ceil(s as u128) as u64;
        let stages = RunStages::of(&[hold, hold], due, Shard::WHOLE, records, 2 * s, false);
        run.stages = super::super::stages::saved(&stages, 4, None, &objectives);
        assert_eq!(
            run.exit(),
            (
                ExitStatus::ObjectiveBroken,
                Some("objectives broken: p99<1s broken in stage 2 (800 req/s): p99 2.00s".into())
            )
        );
    }

    #[test]
    fn a_step_names_who_was_the_limit() {
        let mut run = http_fixture();
        run.objectives = slo::judge(&http(&["p99<1s"]), &run);
        run.rate_shortfall = None;
        run.send_lateness.p99 = 100;
        run.tsumo = None;
        let step = run.step_outcome();
        assert_eq!(step.limit, None);
        assert_eq!(step.class(), crate::capacity::Class::Held);
        // tsumo far behind its own schedule.
        run.send_lateness.p99 = 25_000;
        assert_eq!(
            run.step_outcome().limit,
            Some(Limit::Generator("tsumo's send lateness p99 25.0ms".into()))
        );
        // Half of a broken latency objective eaten by tsumo's lateness.
        run.send_lateness.p99 = 600;
        run.objectives = slo::judge(&http(&["p99<1ms"]), &run);
        run.objectives[0].held = false;
        assert_eq!(
            run.step_outcome().limit,
            Some(Limit::Generator(
                "tsumo's send lateness p99 600us is half of p99<1ms or more".into()
            ))
        );
        // The machine first: out of ports.
        run.counters.eaddrnotavail = 3;
        assert_eq!(
            run.step_outcome().limit,
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
            unsent_late: 0,
            busiest_thread_runnable: 0.99,
            busiest_thread_cpu: 0.98,
            send_lateness_p99_us: 0,
            connections: 4,
            connect_errors: 0,
            machine: None,
            hung_threads: 0,
        });
        assert!(matches!(
            run.step_outcome().limit,
            Some(Limit::Generator(why)) if why.contains("held back by tsumo itself")
        ));
    }
}
