//! What objectives measure on a mahjong session ([`Measured`] for [`SavedSession`]), its
//! objectives judged again after a merge, and its outcome as a step of a search over players
//! (through [`SearchStep`]).
//!
//! Measured on the saved layout, not the live result, so that a file read back is judged
//! exactly as the session was.

use super::saved::SavedSession;
use crate::capacity::{LoadUnit, StepOutcome, SystemLimit};
use crate::mahjong::bot::StepKind;
use crate::report::lines::counts_said;
use crate::report::objectives::{late_or_busy, outcome};
use crate::report::result::{SearchStep, StepView};
use crate::slo::{self, Measure, Measured, Objective, Verdict};

impl Measured for SavedSession {
    fn measure(&self, measure: &Measure) -> Option<f64> {
        match measure {
            Measure::Session {
                histogram,
                percentile,
            } => {
                let h = self.histogram(histogram)?;
                Some(h.at(*percentile, &self.label, histogram)? as f64)
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

impl SearchStep for SavedSession {
    const UNIT: LoadUnit = LoadUnit::Players;
    const SEARCH: &'static str = "search over players";
    const COLUMNS: &'static [&'static str] = &[
        "players", "playing", "draw p50", "draw p99", "draw max", "errors",
    ];
    const ACHIEVED_UNIT: &'static str = "playing";
    const MEASURE: &'static str = "draw overshoot ";
    /// A search over players has no fixed staircase to shard.
    const STAIRCASES_MERGE: bool = false;

    /// tsumo's lateness or CPU limits only a step where a time objective broke: a player's
    /// late reply only lengthens the server's measures, so a step that held with it held for
    /// the server too (a busy shared machine must not end a search that held), and it cannot
    /// make the server refuse a player or drop a socket, so errors and disconnects that broke
    /// alone are the server's (or the machine's).
    fn step_outcome(&self) -> StepOutcome {
        let lateness = self.reply_lateness.sampled().map_or(0, |h| h.p99);
        let time_broke = self
            .objectives
            .iter()
            .any(|v| !v.held && v.unit == slo::Unit::Micros);
        let generator = time_broke
            .then(|| {
                late_or_busy(
                    "reply lateness",
                    lateness,
                    &self.objectives,
                    Some(self.tsumo.cpu_s),
                    self.elapsed_s,
                    self.plan.threads as usize,
                )
            })
            .flatten();
        let seated = self.phases.get("formed").map_or(0, |p| p.ok);
        outcome(seated as f64, &self.objectives, system_of(self), generator)
    }

    fn judge_again(&self) -> Vec<Verdict> {
        let kinds = StepKind::ALL.map(StepKind::as_str);
        let objectives: Vec<Objective> = self
            .objectives
            .iter()
            .filter_map(|v| slo::parse_mahjong(&v.expr, &kinds).ok())
            .collect();
        slo::judge(&objectives, self)
    }

    fn step_view(&self, achieved: Option<u64>) -> StepView<'_> {
        let draw = &self.draw_overshoot;
        let errors = [("errors", self.errors), ("disconnects", self.disconnects)];
        StepView {
            target: Some(self.plan.players),
            connections: None,
            achieved: achieved.map_or_else(|| "-".to_string(), crate::capacity::grouped),
            achieved_value: achieved.map(|n| n as f64),
            p50: draw.p50,
            p99: draw.p99,
            max: draw.max,
            errors: counts_said(&errors),
            server: self.server.as_ref(),
            objectives: &self.objectives,
        }
    }

    fn search_command(&self, objectives: &str, url: &str) -> String {
        format!("tsumo mahjong --capacity {objectives} {url}")
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::Limit;
    use crate::stats::hdr;

    fn session_fixture() -> SavedSession {
        crate::report::objectives::tests::fixture("mahjong-direct-v1.json")
    }

    fn mahjong(exprs: &[&str]) -> Vec<Objective> {
        let kinds = StepKind::ALL.map(StepKind::as_str);
        exprs
            .iter()
            .map(|e| slo::parse_mahjong(e, &kinds).unwrap())
            .collect()
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
            session.step_outcome().limit
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
