//! What disturbed a step (issue 30): the machine's readings during a trial, and whether they
//! make a trial that broke say nothing about the server.
//!
//! A trial that held is trusted (a disturbance only makes a server look worse). A trial that
//! broke, or that tsumo's lateness limited, while tsumo itself stalled or the hypervisor stole
//! CPU is *disturbed*: its verdict may be tsumo's or the machine's, so the search runs it again.
//! Others' CPU is measured and named, but is no reason alone: a machine busy the same way
//! through every step (the hogs the truth is measured under) would make every trial disturbed.

use serde::{Deserialize, Serialize};

use super::{Class, Limit, StepOutcome};

/// tsumo's lateness max in any interval beyond which it stalled: 20 ms is 60 requests at
/// 3,000 r/s sent at once on catch-up, enough to trip a `limit_req` burst of 50.
pub const STALL_US: u64 = 20_000;

/// Steal beyond this share of the machine's cores: the hypervisor took the CPU. Measured
/// here: 0.3 of 2 cores stolen during a search with nothing else of ours running made every
/// trial of a plain break (a one-at-a-time server at twice its capacity) read as disturbed at
/// 10 %.
pub const STEAL_SHARE: f64 = 0.2;

/// What may have disturbed one trial: the machine's readings during it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Disturbance {
    /// tsumo's own lateness max in each interval, µs (send lateness for HTTP, reply lateness
    /// for mahjong).
    pub lateness_max_us: Vec<u64>,
    /// CPU used by processes other than tsumo and the sampled servers, in cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cores: Option<f64>,
    /// CPU stolen by the hypervisor, in cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_cores: Option<f64>,
    /// The machine's cores.
    #[serde(default)]
    pub cores: usize,
}

impl Disturbance {
    /// The longest stall of tsumo: its largest interval lateness max, µs.
    pub fn stall_us(&self) -> u64 {
        self.lateness_max_us.iter().copied().max().unwrap_or(0)
    }

    /// Why a trial's break may be tsumo's or the machine's, or `None`.
    pub fn reason(&self) -> Option<String> {
        let stalled = self.stall_us() > STALL_US;
        let stolen = self
            .steal_cores
            .is_some_and(|s| s > STEAL_SHARE * self.cores.max(1) as f64);
        (stalled || stolen).then(|| self.describe())
    }

    /// `tsumo stalled 96ms; others used 1.8 of 2 cores; steal 0.3 cores`.
    pub fn describe(&self) -> String {
        let mut said = vec![format!("tsumo stalled {}", ms(self.stall_us()))];
        if let Some(others) = self.others_cores {
            said.push(format!("others used {others:.1} of {} cores", self.cores));
        }
        if let Some(steal) = self.steal_cores.filter(|&s| s >= 0.05) {
            said.push(format!("steal {steal:.1} cores"));
        }
        said.join("; ")
    }
}

impl Disturbance {
    /// The share of the machine (0 to 1) others took during a search's trials, on average:
    /// their CPU and steal over the machine's cores; 0 where not measured. It widens the
    /// answer's range ([`Capacity::range`](super::Capacity::range)).
    pub fn interference(trials: &[Disturbance]) -> f64 {
        let shares: Vec<f64> = trials
            .iter()
            .filter(|n| n.cores > 0 && (n.others_cores.is_some() || n.steal_cores.is_some()))
            .map(|n| {
                let taken = n.others_cores.unwrap_or(0.0) + n.steal_cores.unwrap_or(0.0);
                (taken / n.cores as f64).clamp(0.0, 1.0)
            })
            .collect();
        if shares.is_empty() {
            0.0
        } else {
            shares.iter().sum::<f64>() / shares.len() as f64
        }
    }
}

/// `96ms`, `1.2ms`.
fn ms(us: u64) -> String {
    let ms = us as f64 / 1e3;
    if ms >= 10.0 {
        format!("{ms:.0}ms")
    } else {
        format!("{ms:.1}ms")
    }
}

impl StepOutcome {
    /// The outcome with the machine's readings: a trial that broke, or that tsumo's lateness
    /// limited, while tsumo stalled or the CPU was stolen is disturbed.
    pub fn with_disturbance(self, disturbance: &Disturbance) -> StepOutcome {
        let lateness_limited =
            matches!(&self.limit, Some(Limit::Generator(why)) if why.contains("lateness"));
        let spoilable = self.class() == Class::Broke || lateness_limited;
        match disturbance.reason() {
            Some(why) if spoilable => StepOutcome {
                limit: Some(Limit::Disturbed(why)),
                ..self
            },
            _ => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::{Unit, Verdict};

    fn outcome(held: bool, limit: Option<Limit>) -> StepOutcome {
        StepOutcome {
            achieved: 100.0,
            verdicts: vec![Verdict {
                expr: "errors<1%".into(),
                measured: Some(if held { 0.0 } else { 1.3 }),
                unit: Unit::Percent,
                held,
                judged_on: None,
            }],
            limit,
        }
    }

    #[test]
    fn only_a_break_or_tsumos_lateness_is_disturbed() {
        let stalled = Disturbance {
            lateness_max_us: vec![300, 96_000, 1_000],
            others_cores: Some(1.84),
            steal_cores: Some(0.0),
            cores: 2,
        };
        let why = "tsumo stalled 96ms; others used 1.8 of 2 cores";
        assert_eq!(stalled.reason().as_deref(), Some(why));
        assert_eq!(
            outcome(false, None).with_disturbance(&stalled).limit,
            Some(Limit::Disturbed(why.into()))
        );
        // Held is held.
        assert_eq!(outcome(true, None).with_disturbance(&stalled).limit, None);
        // tsumo's lateness p99 as the limit: disturbed; its CPU: its own limit still.
        let late = Limit::Generator("tsumo's send lateness p99 25.0ms".into());
        assert_eq!(
            outcome(true, Some(late)).with_disturbance(&stalled).class(),
            Class::Disturbed
        );
        let cpu = Limit::Generator("tsumo used 1.95 cores of its 2 threads".into());
        assert_eq!(
            outcome(false, Some(cpu)).with_disturbance(&stalled).class(),
            Class::GeneratorLimited
        );
        // A busy machine alone, tsumo on time: the break is the server's.
        let busy = Disturbance {
            lateness_max_us: vec![300, 2_000],
            others_cores: Some(1.9),
            steal_cores: Some(0.0),
            cores: 2,
        };
        assert_eq!(busy.reason(), None);
        assert_eq!(
            outcome(false, None).with_disturbance(&busy).class(),
            Class::Broke
        );
        // Stolen CPU.
        let stolen = Disturbance {
            steal_cores: Some(0.5),
            ..busy
        };
        assert_eq!(
            stolen.reason().as_deref(),
            Some("tsumo stalled 2.0ms; others used 1.9 of 2 cores; steal 0.5 cores")
        );
    }
}
