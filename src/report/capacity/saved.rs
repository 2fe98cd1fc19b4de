//! A capacity search as saved (`tsumo capacity --json`, `tsumo mahjong --capacity --json`):
//! the answer (`capacity`), each step's role and outcome, and each step's saved result
//! (`steps`: an HTTP step's full run; a mahjong step's judged window of play, as a session).

use serde::{Deserialize, Serialize};

use crate::capacity::{Class, Role, SavedCapacity};
use crate::report::result::{SearchStep, StepView};
use crate::report::schema::{SavedPart, SCHEMA_VERSION};
use crate::sys::procstat::ServerUsage;

/// A capacity search as saved; `S`, the kind of its steps' results (an HTTP run, a mahjong
/// session).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "S: SearchStep"))]
pub struct SavedSearch<S> {
    /// Always `"tsumo"`.
    pub tool: String,
    pub version: String,
    pub schema: u32,
    /// `"capacity"`.
    pub mode: String,
    /// The search's name in comparisons (`--label`; default: the URL).
    pub label: String,
    /// The target URL as typed.
    pub url: String,
    /// The answer.
    pub capacity: SavedCapacity,
    /// Each step's role (`grow`, `bisect`, `confirm`, `staircase`) and outcome (`held`, `broke`,
    /// `generator-limited`, `system-limited`, `stopped`), in the order of `steps`.
    pub roles: Vec<Role>,
    pub outcomes: Vec<Class>,
    /// Each step: an HTTP step's full run, as an ordinary run's `--json` writes it; a
    /// mahjong step's judged window of play, as a session's `--json` writes one.
    pub steps: Vec<S>,
    /// A mahjong step's players seated and playing at the end of its window, in the order of
    /// `steps` (none for HTTP, whose runs say what they achieved).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub achieved: Vec<u64>,
    /// The server's CPU and memory during the step that held at the answer (`--server-pid`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerUsage>,
    /// A fixed staircase's target rates, the whole run's (absent for a search): what the
    /// shards of one staircase share, and what `tsumo merge` checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub staircase: Vec<u64>,
    /// The line the search failed with (exit 1): the server stopped answering, a session's
    /// thread failed; absent when it did not fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// A search over players: the players whose logout tsumo did not see answered (their
    /// sessions may stay on the server), all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_on_server: Vec<String>,
    /// The machine during each step, in the order of `steps` (tsumo's lateness max interval by
    /// interval, others' CPU, steal): why a step was judged disturbed and run again. Saved as
    /// `noise`, its name in the files of every earlier tsumo.
    #[serde(rename = "noise", default, skip_serializing_if = "Vec::is_empty")]
    pub disturbances: Vec<crate::capacity::Disturbance>,
    #[serde(flatten)]
    pub part: SavedPart,
}

impl<S: SearchStep> SavedSearch<S> {
    /// A search that ran `steps`, each with its role and outcome; `achieved`: each step's load
    /// reached, where its result does not say it (players seated and playing), else empty.
    pub fn new(
        label: &str,
        url: &str,
        capacity: SavedCapacity,
        roles_and_outcomes: Vec<(Role, Class)>,
        steps: Vec<S>,
        achieved: Vec<u64>,
    ) -> SavedSearch<S> {
        let mut search = SavedSearch {
            tool: "tsumo".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            schema: SCHEMA_VERSION,
            mode: super::MODE.to_string(),
            label: label.to_string(),
            url: url.to_string(),
            capacity,
            roles: Vec::new(),
            outcomes: Vec::new(),
            steps,
            achieved,
            server: None,
            staircase: Vec::new(),
            failure: None,
            left_on_server: Vec::new(),
            disturbances: Vec::new(),
            part: SavedPart {
                merged_from: Vec::new(),
                run_id: None,
                shard: None,
                start: None,
                command: Vec::new(),
            },
        };
        (search.roles, search.outcomes) = roles_and_outcomes.into_iter().unzip();
        search.server = search.capacity.value.and_then(|value| {
            search
                .views()
                .into_iter()
                .rev()
                .find(|s| s.target == Some(value))
                .and_then(|s| s.server.cloned())
        });
        search
    }

    /// Each step as the table and page read it.
    pub fn views(&self) -> Vec<StepView<'_>> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, step)| step.step_view(self.achieved.get(i).copied()))
            .collect()
    }

    /// The search's whole wall time, seconds: from its first run's start (a warm-up, when it
    /// had one) to its last step's end, pauses, warm-ups and steps run again included; `None`
    /// when its steps do not say when they started.
    pub fn whole_s(&self) -> Option<f64> {
        let start_of = |part: &SavedPart| part.start.as_ref().map(|s| s.actual_unix_ns);
        let last = self.steps.last()?;
        let first = start_of(&self.part).or_else(|| start_of(self.steps.first()?.part()))?;
        let end = start_of(last.part())? as f64 + last.elapsed_s() * 1e9;
        Some(((end - first as f64) / 1e9).max(0.0))
    }

    /// Each step's objectives as judged: the expressions of the first step's.
    pub fn objectives(&self) -> Vec<String> {
        self.steps
            .first()
            .map(|first| first.objectives().iter().map(|v| v.expr.clone()).collect())
            .unwrap_or_default()
    }
}
