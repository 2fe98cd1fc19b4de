//! The answer as saved in a result's JSON, and as read back.

use serde::{Deserialize, Serialize};

use super::{Capacity, Class, Finding};

/// The answer as saved (the JSON's top-level `capacity`): each step's full run is saved beside
/// it (`steps`), in the order of [`Capacity::steps`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedCapacity {
    /// The highest load held (`null` when none did).
    pub value: Option<u64>,
    /// `requests/sec` or `players`.
    pub unit: String,
    /// Who set the answer: `server` (an objective broke just above it), `to` (every step held
    /// up to `--to`), `generator` (tsumo), `pool` (tsumo's connections), `system` (the
    /// machine), `stopped` (a signal, a failed run), `server-failed` (the server stopped
    /// answering: the search failed, exit 1), `noise` (every trial at a load disturbed: it
    /// cannot tell), `unstable` (the server failed now and then whatever the load: no
    /// capacity is told).
    pub limited_by: String,
    /// In words: the objectives broken just above the answer, tsumo's limit, the machine's.
    pub reason: String,
    /// The answer line.
    pub answer: String,
    /// Each objective that broke, at the lowest load it broke at (`Broke first: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke_first: Option<String>,
    /// The loads of the steps that held, and of those that broke, in the order run.
    pub held: Vec<u64>,
    pub broke: Vec<u64>,
    /// The loads of the trials disturbed (tsumo stalled, CPU stolen), in the order run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disturbed: Vec<u64>,
    /// `[low, high]`: where the boundary lies: at least from the highest load held to the
    /// lowest broken, over every trial not disturbed, widened with the interference measured
    /// during the search (absent without an answer, and in files of older tsumos).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[u64; 2]>,
    /// Each step's trial at its load, from 1, in the order of the steps.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<u32>,
    /// What stopped a search cut short (`SIGINT`, `the run failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
}

impl Capacity {
    /// The answer in the saved layout.
    pub fn saved(&self) -> SavedCapacity {
        let loads = |class: Class| -> Vec<u64> {
            self.steps
                .iter()
                .filter(|s| s.outcome.class() == class)
                .map(|s| s.load)
                .collect()
        };
        let broken = |index: Option<usize>| -> String {
            index.map_or_else(String::new, |i| {
                let step = &self.steps[i];
                let broken: Vec<String> = step
                    .outcome
                    .broken()
                    .map(|v| format!("{} ({})", v.expr, v.measured_text()))
                    .collect();
                format!("broke at {}: {}", step.load, broken.join(", "))
            })
        };
        let (limited_by, reason) = match &self.finding {
            Finding::Found | Finding::BelowFrom => ("server", broken(self.broke)),
            Finding::AtLeastTo => ("to", "every step held up to --to".to_string()),
            Finding::GeneratorLimited { at, why } => ("generator", format!("at {at}: {why}")),
            Finding::SystemLimited { at, limit } => {
                ("system", format!("at {at}: {}", limit.describe()))
            }
            Finding::Stopped { at, signal } => ("stopped", format!("at {at}: {signal}")),
            Finding::ServerFailed { at, why } => {
                let broken =
                    self.failed_step_broke(|v| format!("{} ({})", v.expr, v.measured_text()));
                let broken = broken.map_or_else(String::new, |b| format!("; broke there: {b}"));
                ("server-failed", format!("at {at}: {why}{broken}"))
            }
            Finding::PoolLimited { at, pool } => ("pool", pool.describe(*at)),
            Finding::CannotTell { at, trials, why } => (
                "noise",
                format!("at {at}: all {trials} trials disturbed: {why}"),
            ),
            Finding::Unstable { at, why, .. } => ("unstable", format!("at {at}: {why}")),
        };
        SavedCapacity {
            value: self.value,
            unit: self.unit.as_str().to_string(),
            limited_by: limited_by.to_string(),
            reason,
            answer: self.line(),
            broke_first: self.broke_first(),
            held: loads(Class::Held),
            broke: loads(Class::Broke),
            disturbed: loads(Class::Disturbed),
            range: self.range().map(|(low, high)| [low, high]),
            trials: self.steps.iter().map(|s| s.trial).collect(),
            signal: match &self.finding {
                Finding::Stopped { signal, .. } => Some(signal.clone()),
                _ => None,
            },
        }
    }
}
