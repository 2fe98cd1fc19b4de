//! One step of load: what it is counted in, what it showed (the objectives' verdicts, or the
//! limit that makes it not the server's), the runner that runs it, and a step as run.

use serde::{Deserialize, Serialize};

use crate::slo::Verdict;

use super::short;

/// What the load is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadUnit {
    /// An HTTP run's target rate.
    RequestsPerSec,
    /// A mahjong session's players.
    Players,
}

impl LoadUnit {
    /// As in the answer line and the JSON's `unit`.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadUnit::RequestsPerSec => "requests/sec",
            LoadUnit::Players => "players",
        }
    }
}

/// A limit of the machine a step ran into, named as `tsumo doctor` names its check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemLimit {
    /// EMFILE: tsumo's open-file limit.
    OpenFiles,
    /// EADDRNOTAVAIL: the local port range toward the server.
    EphemeralPorts,
    /// Connections refused or not accepted: the server's listen backlog.
    Refused,
}

impl SystemLimit {
    /// The name of `tsumo doctor`'s check for it.
    pub fn doctor_check(self) -> &'static str {
        match self {
            SystemLimit::OpenFiles => "open files (tsumo)",
            SystemLimit::EphemeralPorts => "ephemeral ports",
            SystemLimit::Refused => "somaxconn",
        }
    }

    /// What happened, and where `tsumo doctor` looks.
    pub fn describe(self) -> String {
        let what = match self {
            SystemLimit::OpenFiles => "connects failed with EMFILE (too many open files)",
            SystemLimit::EphemeralPorts => {
                "connects failed with EADDRNOTAVAIL (no local port left)"
            }
            SystemLimit::Refused => "connections were refused or not accepted",
        };
        format!("{what}: see `tsumo doctor`'s {} check", self.doctor_check())
    }
}

/// Why a step does not speak for the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Limit {
    /// tsumo itself: the rate not reached on its side, its send lateness, its CPU (the words).
    Generator(String),
    /// The machine: file descriptors, ports, refused connections.
    System(SystemLimit),
    /// A signal (`SIGINT`) stopped the search during this step.
    Stopped(String),
    /// The server stopped answering during this step, after answering before (killed, crashed):
    /// the search failed there. Why, in words (`unable to connect to …: Connection refused`);
    /// the step's verdicts are kept as measured.
    ServerFailed(String),
    /// tsumo's connections: most requests fell due while their connection still waited, and
    /// more connections were not to be had (`--max-connections`), or did not catch up.
    Pool(PoolLimit),
    /// The step broke while tsumo stalled or the machine took its CPU
    /// ([`Disturbance`](super::Disturbance)): run again.
    Disturbed(String),
    /// The server failed now and then whatever the load: errors came in a burst and stopped
    /// while the load stayed the same (in the judged run or its warm-up). Its verdicts say
    /// nothing of the load, and the search cannot tell a capacity (what happened, in words).
    Unstable(String),
}

/// tsumo's pool of connections as a step's limit: too few for the load at the server's
/// response time (Little's law), so requests waited for a free connection on tsumo's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolLimit {
    /// The step's connections.
    pub connections: usize,
    /// The share of requests that fell due while their connection was busy, in tenths of a
    /// percent.
    pub busy_permille: u32,
    /// What Little's law says the step needed (load × response time × headroom).
    pub needed: usize,
    /// The connections were `--max-connections`; otherwise the step's tries ran out first.
    pub at_cap: bool,
}

impl PoolLimit {
    /// `tsumo's pool of 10 connections was the limit at 500 (99.9 % of requests fell due on
    /// a busy connection): raise --max-connections`.
    pub fn describe(&self, at: u64) -> String {
        let advice = if self.at_cap {
            "raise --max-connections".to_string()
        } else {
            format!(
                "about {} were needed: start with -c {}",
                self.needed, self.needed
            )
        };
        format!(
            "tsumo's pool of {} connections was the limit at {} ({:.1} % of requests fell due \
             on a busy connection): {advice}",
            self.connections,
            short(at),
            f64::from(self.busy_permille) / 10.0
        )
    }
}

/// What one step showed.
#[derive(Debug, Clone, PartialEq)]
pub struct StepOutcome {
    /// The load reached: requests/sec achieved, players seated.
    pub achieved: f64,
    /// Each objective's verdict at this step.
    pub verdicts: Vec<Verdict>,
    /// Set when the step's results are not the server's (then the verdicts are not judged).
    pub limit: Option<Limit>,
}

/// A step's outcome in one word, saved as that word ([`Class::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    Held,
    Broke,
    GeneratorLimited,
    SystemLimited,
    Stopped,
    ServerFailed,
    PoolLimited,
    Disturbed,
    Unstable,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Held => "held",
            Class::Broke => "broke",
            Class::GeneratorLimited => "generator-limited",
            Class::SystemLimited => "system-limited",
            Class::Stopped => "stopped",
            Class::ServerFailed => "server-failed",
            Class::PoolLimited => "pool-limited",
            Class::Disturbed => "disturbed",
            Class::Unstable => "unstable",
        }
    }
}

impl StepOutcome {
    pub fn class(&self) -> Class {
        match &self.limit {
            Some(Limit::System(_)) => Class::SystemLimited,
            Some(Limit::Generator(_)) => Class::GeneratorLimited,
            Some(Limit::Stopped(_)) => Class::Stopped,
            Some(Limit::ServerFailed(_)) => Class::ServerFailed,
            Some(Limit::Pool(_)) => Class::PoolLimited,
            Some(Limit::Disturbed(_)) => Class::Disturbed,
            Some(Limit::Unstable(_)) => Class::Unstable,
            None if self.verdicts.iter().all(|v| v.held) => Class::Held,
            None => Class::Broke,
        }
    }

    /// The objectives that broke.
    pub fn broken(&self) -> impl Iterator<Item = &Verdict> {
        self.verdicts.iter().filter(|v| !v.held)
    }
}

/// Runs one step at a load (a target rate, a number of players) and says how it went.
pub trait StepRunner {
    fn run_step(&mut self, load: u64) -> StepOutcome;
}

/// Why a step was run, saved as its word ([`Role::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Growing the load until an objective breaks.
    Grow,
    /// Between the last load held and the first broken.
    Bisect,
    /// The answer run again.
    Confirm,
    /// One step of a fixed staircase.
    Staircase,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Grow => "grow",
            Role::Bisect => "bisect",
            Role::Confirm => "confirm",
            Role::Staircase => "staircase",
        }
    }
}

/// One step run.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub load: u64,
    pub role: Role,
    /// Its trial at this load, from 1: a step run again (it broke, or was disturbed) is the
    /// next trial; the answer's confirmation is the trial after the one that held.
    pub trial: u32,
    pub outcome: StepOutcome,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A saved search's `roles` and `outcomes` hold the words tsumo has always written: each
    /// reads back into its variant and is written unchanged; a word no tsumo wrote is refused.
    #[test]
    fn roles_and_outcomes_round_trip_from_todays_words() {
        let roles = [Role::Grow, Role::Bisect, Role::Confirm, Role::Staircase];
        let classes = [
            Class::Held,
            Class::Broke,
            Class::GeneratorLimited,
            Class::SystemLimited,
            Class::Stopped,
            Class::ServerFailed,
            Class::PoolLimited,
            Class::Disturbed,
            Class::Unstable,
        ];
        for role in roles {
            let saved = serde_json::to_value(role).unwrap();
            assert_eq!(saved, serde_json::json!(role.as_str()));
            assert_eq!(serde_json::from_value::<Role>(saved).unwrap(), role);
        }
        for class in classes {
            let saved = serde_json::to_value(class).unwrap();
            assert_eq!(saved, serde_json::json!(class.as_str()));
            assert_eq!(serde_json::from_value::<Class>(saved).unwrap(), class);
        }
        assert!(serde_json::from_value::<Class>(serde_json::json!("fine")).is_err());
    }
}
