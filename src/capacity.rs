//! The capacity search (`tsumo capacity`, issue 22): how much load a server carries within its
//! objectives, found by running steps of load, as pure logic.
//!
//! A step is run through [`StepRunner`] (a real open-loop run in tsumo, a fake server with a
//! known capacity in the tests), and comes back as a [`StepOutcome`]: the objectives' verdicts,
//! and whether the generator or the machine, not the server, was the limit. The search grows
//! the load geometrically from `from` until a step breaks an objective, bisects between the
//! last load held and the first broken down to `resolution`, and confirms the answer with one
//! more run at it (stepping down while the confirmation breaks). A step limited by tsumo or by
//! the machine ends the search there: a capacity search must never report tsumo's own limit
//! as the server's. A [`staircase`] runs fixed steps instead (no bisection), the same on every
//! shard, and [`judge_staircase`] reads the answer from them, also after a merge.

use serde::{Deserialize, Serialize};

use crate::slo::Verdict;

mod noise;
pub use noise::{Noise, STALL_US};

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
    /// The step broke while tsumo stalled or the machine took its CPU ([`Noise`]): run again.
    Disturbed(String),
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

/// A step's outcome in one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Held,
    Broke,
    GeneratorLimited,
    SystemLimited,
    Stopped,
    ServerFailed,
    PoolLimited,
    Disturbed,
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

/// Why a step was run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The search's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchPlan {
    /// The first load (`--from`).
    pub from: u64,
    /// The highest load tried (`--to`); `None`: no bound.
    pub to: Option<u64>,
    /// Bisect until the last load held and the first broken are this share of the former
    /// apart (`--resolution`, 0.05).
    pub resolution: f64,
    /// Each growing step multiplies the load by this (2).
    pub growth: f64,
    /// Every load is a multiple of this: 1 for a rate, the seats of a table for players.
    pub granularity: u64,
    /// Trials at one load at most (3): a broken or disturbed trial is run again until two
    /// agree, within this bound.
    pub trials: u32,
}

impl SearchPlan {
    pub const RESOLUTION: f64 = 0.05;
    pub const GROWTH: f64 = 2.0;
    pub const TRIALS: u32 = 3;

    /// `x` as a load: a multiple of the granularity, at least one.
    fn round(&self, x: f64) -> u64 {
        let g = self.granularity.max(1);
        ((x / g as f64).round() as u64).max(1) * g
    }

    /// `x` rounded down to a load, at least one granularity.
    fn round_down(&self, x: f64) -> u64 {
        let g = self.granularity.max(1);
        ((x / g as f64).floor() as u64).max(1) * g
    }

    /// Held at `low`, broken at `high`: close enough to stop bisecting.
    fn close_enough(&self, low: u64, high: u64) -> bool {
        let tolerance = (low as f64 * self.resolution).max(self.granularity.max(1) as f64);
        (high - low) as f64 <= tolerance
    }
}

/// What the steps found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// The capacity: confirmed held there, broken one resolution above.
    Found,
    /// Every step held up to `to`: the server carries at least that.
    AtLeastTo,
    /// The first load already broke.
    BelowFrom,
    /// tsumo was the limit at this load: the server carries at least what held before.
    GeneratorLimited { at: u64, why: String },
    /// The machine was the limit at this load.
    SystemLimited { at: u64, limit: SystemLimit },
    /// A signal stopped the search at this load: the server carries at least what held.
    Stopped { at: u64, signal: String },
    /// The server stopped answering at this load (`why`): the search failed there; what held
    /// before is kept, as "at least".
    ServerFailed { at: u64, why: String },
    /// tsumo's connections were the limit at this load: the server carries at least what held.
    PoolLimited { at: u64, pool: PoolLimit },
    /// Every trial at this load was disturbed (tsumo stalled, the CPU was stolen): the search
    /// cannot tell, and claims only what held below.
    CannotTell { at: u64, trials: u32, why: String },
}

/// The answer of a search or a staircase, with every step.
#[derive(Debug, Clone, PartialEq)]
pub struct Capacity {
    pub unit: LoadUnit,
    /// The highest load held (confirmed, for a search); `None` when none did.
    pub value: Option<u64>,
    pub finding: Finding,
    /// The step that held at `value` (the confirmation, for a search).
    pub held: Option<usize>,
    /// The step that broke just above `value`, its verdicts the answer's "broke at".
    pub broke: Option<usize>,
    pub steps: Vec<Step>,
}

/// The trials at one load so far.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    held: u32,
    broke: u32,
    disturbed: u32,
    last_held: Option<usize>,
    last_broke: Option<usize>,
}

impl Tally {
    fn trials(&self) -> u32 {
        self.held + self.broke + self.disturbed
    }

    /// Settled before the bound: a first trial that held (held is held: noise only makes a
    /// server look worse), else two that agree. `confirming`: the held trial is the one being
    /// checked, so one more must agree with it.
    fn settled(&self, confirming: bool) -> Option<Class> {
        if self.broke >= 2 {
            Some(Class::Broke)
        } else if self.held >= 2 || (self.held == 1 && self.broke == 0 && !confirming) {
            Some(Class::Held)
        } else {
            None
        }
    }

    /// At the bound: the majority of the trials not disturbed, a tie held (noise only makes a
    /// server look worse); none: cannot tell.
    fn at_bound(&self) -> Class {
        match (self.held, self.broke) {
            (0, 0) => Class::Disturbed,
            (held, broke) if held >= broke => Class::Held,
            _ => Class::Broke,
        }
    }
}

/// A load's verdict over its trials, and the trial that speaks for it.
struct Settled {
    class: Class,
    index: usize,
}

/// Records the steps as they run.
struct Steps<'a, R: StepRunner> {
    runner: &'a mut R,
    steps: Vec<Step>,
    bound: u32,
}

impl<R: StepRunner> Steps<'_, R> {
    fn run(&mut self, load: u64, role: Role, trial: u32) -> (usize, Class) {
        let outcome = self.runner.run_step(load);
        let class = outcome.class();
        self.steps.push(Step {
            load,
            role,
            trial,
            outcome,
        });
        (self.steps.len() - 1, class)
    }

    /// Runs `load` until its verdict settles (see [`Tally`]); a limit of tsumo, the machine or
    /// a signal ends it at once.
    fn settle(&mut self, load: u64, role: Role, prior: Tally, confirming: bool) -> Settled {
        let mut tally = prior;
        // A confirmation is always run once, whatever the bound.
        let bound = self.bound.max(tally.trials() + 1);
        let mut last = tally.last_held.unwrap_or(0);
        loop {
            if let Some(class) = tally.settled(confirming) {
                return settled(class, &tally, last);
            }
            if tally.trials() >= bound {
                return settled(tally.at_bound(), &tally, last);
            }
            let (index, class) = self.run(load, role, tally.trials() + 1);
            last = index;
            match class {
                Class::Held => (tally.held, tally.last_held) = (tally.held + 1, Some(index)),
                Class::Broke => (tally.broke, tally.last_broke) = (tally.broke + 1, Some(index)),
                Class::Disturbed => tally.disturbed += 1,
                _ => return Settled { class, index },
            }
        }
    }
}

fn settled(class: Class, tally: &Tally, last: usize) -> Settled {
    let index = match class {
        Class::Held => tally.last_held,
        Class::Broke => tally.last_broke,
        _ => None,
    };
    Settled {
        class,
        index: index.unwrap_or(last),
    }
}

/// The highest load that settled held below `high`, and its step (what a search cut short
/// still stands behind).
fn held_below(steps: &[Step], high: u64) -> Option<(u64, usize)> {
    steps
        .iter()
        .enumerate()
        .filter(|(_, s)| s.load < high && s.outcome.class() == Class::Held)
        .max_by_key(|(i, s)| (s.load, *i))
        .map(|(i, s)| (s.load, i))
}

/// The search: grow, bisect, confirm; each load run until its verdict settles.
pub fn search(plan: &SearchPlan, unit: LoadUnit, runner: &mut impl StepRunner) -> Capacity {
    let mut run = Steps {
        runner,
        steps: Vec::new(),
        bound: plan.trials.max(1),
    };
    let to = plan.to.map(|to| plan.round_down(to as f64));
    let mut load = plan.round(plan.from as f64);
    if let Some(to) = to {
        load = load.min(to);
    }
    let mut held: Option<(u64, usize)> = None;
    let broke: (u64, usize);
    loop {
        let Settled { class, index } = run.settle(load, Role::Grow, Tally::default(), false);
        match class {
            Class::Held => {
                held = Some((load, index));
                if to.is_some_and(|to| load >= to) {
                    return answer(unit, run.steps, Finding::AtLeastTo, held, None);
                }
                let mut next = plan.round(load as f64 * plan.growth).max(load + 1);
                if let Some(to) = to {
                    next = next.min(to);
                }
                load = next;
            }
            Class::Broke => {
                broke = (load, index);
                break;
            }
            Class::Disturbed => return cannot_tell(unit, run.steps, index, held, None),
            _ => return limited(unit, run.steps, index, held),
        }
    }
    let Some((mut low, mut low_index)) = held else {
        return answer(unit, run.steps, Finding::BelowFrom, None, Some(broke.1));
    };
    let (mut high, mut high_index) = broke;
    while !plan.close_enough(low, high) {
        let mid = plan.round((low + high) as f64 / 2.0);
        if mid <= low || mid >= high {
            break;
        }
        let Settled { class, index } = run.settle(mid, Role::Bisect, Tally::default(), false);
        match class {
            Class::Held => (low, low_index) = (mid, index),
            Class::Broke => (high, high_index) = (mid, index),
            Class::Disturbed => {
                let held = Some((low, low_index));
                return cannot_tell(unit, run.steps, index, held, Some(high_index));
            }
            _ => return limited(unit, run.steps, index, Some((low, low_index))),
        }
    }
    // The answer again: one lucky run must not make it (a split is decided by a third trial).
    // Each time it breaks, step down further (one resolution, then two, four…), to `from` at
    // the lowest.
    let from = plan.round(plan.from as f64);
    let mut down = plan.resolution;
    let mut prior = Tally {
        held: 1,
        last_held: Some(low_index),
        ..Tally::default()
    };
    loop {
        let confirming = prior.held > 0;
        let Settled { class, index } = run.settle(low, Role::Confirm, prior, confirming);
        prior = Tally::default();
        match class {
            Class::Held => {
                let held = Some((low, index));
                return answer(unit, run.steps, Finding::Found, held, Some(high_index));
            }
            Class::Broke if low <= from => {
                return answer(unit, run.steps, Finding::BelowFrom, None, Some(index));
            }
            Class::Broke => {
                (high, high_index) = (low, index);
                let next = plan.round_down(low as f64 / (1.0 + down)).max(from);
                // Always lower, by one granularity at least (both are multiples of it).
                low = if next < high {
                    next
                } else {
                    high.saturating_sub(plan.granularity.max(1)).max(from)
                };
                down *= 2.0;
            }
            Class::Disturbed => {
                let held = held_below(&run.steps, low);
                return cannot_tell(unit, run.steps, index, held, Some(high_index));
            }
            // Cut short while confirming: what held below the lowest broken still stands.
            _ => {
                let held = held_below(&run.steps, high);
                return limited(unit, run.steps, index, held);
            }
        }
    }
}

/// The loads of a fixed staircase from `from` to `to` in `count` even steps, each a multiple of
/// `granularity` (repeats dropped).
pub fn staircase_loads(from: u64, to: u64, count: usize, granularity: u64) -> Vec<u64> {
    let plan = SearchPlan {
        from,
        to: Some(to),
        resolution: SearchPlan::RESOLUTION,
        growth: SearchPlan::GROWTH,
        granularity,
        trials: 1,
    };
    let mut loads: Vec<u64> = (0..count)
        .map(|i| {
            let share = if count > 1 {
                i as f64 / (count - 1) as f64
            } else {
                0.0
            };
            plan.round(from as f64 + (to as f64 - from as f64) * share)
        })
        .collect();
    loads.dedup();
    loads
}

/// Runs every step of a staircase in order, whatever each shows (every shard runs the same
/// steps; the answer is read from all of them, [`judge_staircase`]).
pub fn staircase(loads: &[u64], unit: LoadUnit, runner: &mut impl StepRunner) -> Capacity {
    let steps = loads
        .iter()
        .map(|&load| Step {
            load,
            role: Role::Staircase,
            trial: 1,
            outcome: runner.run_step(load),
        })
        .collect();
    judge_staircase(unit, steps)
}

/// The answer of a staircase's steps (run here, or merged from shards): the highest step of the
/// unbroken run of steps held from the first.
pub fn judge_staircase(unit: LoadUnit, steps: Vec<Step>) -> Capacity {
    let mut held: Option<(u64, usize)> = None;
    for (index, step) in steps.iter().enumerate() {
        match step.outcome.class() {
            Class::Held => held = Some((step.load, index)),
            Class::Broke if held.is_none() => {
                return answer(unit, steps, Finding::BelowFrom, None, Some(index))
            }
            Class::Broke => return answer(unit, steps, Finding::Found, held, Some(index)),
            _ => return limited(unit, steps, index, held),
        }
    }
    answer(unit, steps, Finding::AtLeastTo, held, None)
}

fn answer(
    unit: LoadUnit,
    steps: Vec<Step>,
    finding: Finding,
    held: Option<(u64, usize)>,
    broke: Option<usize>,
) -> Capacity {
    Capacity {
        unit,
        value: held.map(|(load, _)| load),
        finding,
        held: held.map(|(_, index)| index),
        broke,
        steps,
    }
}

/// The search ends at step `index`, limited by tsumo or the machine.
fn limited(unit: LoadUnit, steps: Vec<Step>, index: usize, held: Option<(u64, usize)>) -> Capacity {
    let at = steps[index].load;
    let finding = match &steps[index].outcome.limit {
        Some(Limit::System(limit)) => Finding::SystemLimited { at, limit: *limit },
        Some(Limit::Generator(why)) => Finding::GeneratorLimited {
            at,
            why: why.clone(),
        },
        Some(Limit::Stopped(signal)) => Finding::Stopped {
            at,
            signal: signal.clone(),
        },
        Some(Limit::ServerFailed(why)) => Finding::ServerFailed {
            at,
            why: why.clone(),
        },
        Some(Limit::Pool(pool)) => Finding::PoolLimited { at, pool: *pool },
        Some(Limit::Disturbed(why)) => Finding::CannotTell {
            at,
            trials: 1,
            why: why.clone(),
        },
        None => Finding::Found,
    };
    answer(unit, steps, finding, held, None)
}

/// Every trial at step `index`'s load was disturbed: the search cannot tell there, and claims
/// what held below (`held`), below what broke above (`broke`).
fn cannot_tell(
    unit: LoadUnit,
    steps: Vec<Step>,
    index: usize,
    held: Option<(u64, usize)>,
    broke: Option<usize>,
) -> Capacity {
    let at = steps[index].load;
    let at_load = steps.iter().filter(|s| s.load == at);
    let trials = at_load.clone().count() as u32;
    // The last trial's disturbance said.
    let why = at_load
        .filter_map(|s| match &s.outcome.limit {
            Some(Limit::Disturbed(why)) => Some(why.clone()),
            _ => None,
        })
        .next_back()
        .unwrap_or_default();
    let finding = Finding::CannotTell { at, trials, why };
    answer(unit, steps, finding, held, broke)
}

impl Capacity {
    /// The answer in one line: `Capacity: 38,200 requests/sec (p99<20ms held at 38.2k; broke
    /// at 40.1k: p99 31.0ms)`.
    pub fn line(&self) -> String {
        match self.noise_note() {
            Some(note) => format!("{}; {note}", self.finding_line()),
            None => self.finding_line(),
        }
    }

    /// The answer without what noise did.
    fn finding_line(&self) -> String {
        let unit = self.unit.as_str();
        let value = self.value.map(grouped);
        let held_at = |index: Option<usize>| {
            index.map(|i| {
                let step = &self.steps[i];
                let exprs: Vec<&str> = step
                    .outcome
                    .verdicts
                    .iter()
                    .map(|v| v.expr.as_str())
                    .collect();
                let what = if exprs.is_empty() {
                    "every objective".to_string()
                } else {
                    exprs.join(", ")
                };
                format!("{what} held at {}", short(step.load))
            })
        };
        let broke_at = |index: usize| {
            let step = &self.steps[index];
            let broken: Vec<String> = step.outcome.broken().map(Verdict::measured_text).collect();
            format!("broke at {}: {}", short(step.load), broken.join(", "))
        };
        match &self.finding {
            Finding::Found => {
                let mut why: Vec<String> = held_at(self.held).into_iter().collect();
                why.extend(self.broke.map(broke_at));
                format!(
                    "Capacity: {} {unit} ({})",
                    value.unwrap_or_default(),
                    why.join("; ")
                )
            }
            Finding::AtLeastTo => format!(
                "Capacity: at least {} {unit} ({}, the highest step)",
                value.unwrap_or_default(),
                held_at(self.held).unwrap_or_default()
            ),
            Finding::BelowFrom => {
                let broke = self.broke.map(broke_at).unwrap_or_default();
                let first = self.steps.first().map_or(0, |s| s.load);
                format!("Capacity: below {} {unit} ({broke})", grouped(first))
            }
            Finding::GeneratorLimited { at, why } => format!(
                "Capacity: {}; the generator was the limit at {} ({why}): add threads or shards",
                at_least(value.as_deref(), unit),
                short(*at)
            ),
            Finding::SystemLimited { at, limit } => format!(
                "Capacity: {}; a system limit at {}: {}",
                at_least(value.as_deref(), unit),
                short(*at),
                limit.describe()
            ),
            Finding::Stopped { at, signal } => {
                let confirming = self.steps.last().is_some_and(|s| s.role == Role::Confirm);
                format!(
                    "Capacity: {}; the search stopped at {}{}: {signal}",
                    at_least(value.as_deref(), unit),
                    short(*at),
                    if confirming {
                        " while confirming it"
                    } else {
                        ""
                    }
                )
            }
            Finding::ServerFailed { at, .. } => {
                let broken = self.failed_step_broke(Verdict::measured_text);
                format!(
                    "Capacity: {}; the search failed: the server stopped answering at {}{}",
                    at_least(value.as_deref(), unit),
                    short(*at),
                    broken.map_or_else(String::new, |b| format!(" (broke there: {b})"))
                )
            }
            Finding::PoolLimited { at, pool } => format!(
                "Capacity: {}; {}",
                at_least(value.as_deref(), unit),
                pool.describe(*at)
            ),
            Finding::CannotTell { at, trials, why } => {
                let held = value.map_or(String::new(), |v| format!(" at least {v} {unit} held,"));
                let all = if *trials == 1 { "the" } else { "all" };
                let s = if *trials == 1 { "" } else { "s" };
                format!(
                    "Capacity: cannot tell;{held} {all} {trials} trial{s} at {} disturbed ({why})",
                    short(*at)
                )
            }
        }
    }

    /// The objectives that the step where the server stopped answering had broken by then,
    /// each said by `say`, joined; `None` when none broke (or there is no such step).
    fn failed_step_broke(&self, say: impl Fn(&Verdict) -> String) -> Option<String> {
        let step = self
            .steps
            .iter()
            .rev()
            .find(|s| s.outcome.class() == Class::ServerFailed)?;
        let broken: Vec<String> = step.outcome.broken().map(say).collect();
        (!broken.is_empty()).then(|| broken.join(", "))
    }

    /// `[low, high]`: where the boundary moved over every trial not disturbed, from the lowest
    /// load that broke (or the answer) to the highest that held (or the answer).
    pub fn range(&self) -> Option<(u64, u64)> {
        let value = self.value?;
        let of = |class: Class| {
            self.steps
                .iter()
                .filter(move |s| s.outcome.class() == class)
                .map(|s| s.load)
        };
        let low = of(Class::Broke).min().map_or(value, |l| l.min(value));
        let high = of(Class::Held).max().map_or(value, |h| h.max(value));
        Some((low, high))
    }

    /// The steps run again because a trial before at their load (run just before) broke or
    /// was disturbed: `(to check a break, after a disturbed trial)`.
    pub fn reruns(&self) -> (usize, usize) {
        let mut counts = (0, 0);
        let mut spoiled = false;
        for (i, step) in self.steps.iter().enumerate() {
            let previous = i.checked_sub(1).map(|p| &self.steps[p]);
            let again = step.trial > 1 && previous.is_some_and(|p| p.load == step.load);
            if !again {
                spoiled = false;
            } else if spoiled {
                match previous.map(|p| p.outcome.class()) {
                    Some(Class::Disturbed) => counts.1 += 1,
                    _ => counts.0 += 1,
                }
            }
            spoiled |= matches!(step.outcome.class(), Class::Broke | Class::Disturbed);
        }
        counts
    }

    /// `range 24,000–30,000; 4 of 13 steps run again: 3 to check a break, 1 disturbed (tsumo
    /// stalled 96ms)`; `None` when nothing was run again and the range is one load.
    fn noise_note(&self) -> Option<String> {
        let (broke, disturbed) = self.reruns();
        let mut said = Vec::new();
        if let Some((low, high)) = self.range().filter(|(low, high)| low < high) {
            said.push(format!("range {}–{}", grouped(low), grouped(high)));
        }
        if broke + disturbed > 0 {
            let mut why = Vec::new();
            if broke > 0 {
                why.push(format!("{broke} to check a break"));
            }
            if disturbed > 0 {
                let last = self
                    .steps
                    .iter()
                    .rev()
                    .find_map(|s| match &s.outcome.limit {
                        Some(Limit::Disturbed(why)) => Some(why.as_str()),
                        _ => None,
                    });
                why.push(format!(
                    "{disturbed} disturbed ({})",
                    last.unwrap_or("tsumo or the machine")
                ));
            }
            said.push(format!(
                "{} of {} steps run again: {}",
                broke + disturbed,
                self.steps.len(),
                why.join(", ")
            ));
        }
        (!said.is_empty()).then(|| said.join("; "))
    }

    /// `Broke first: p99<20ms at 40.1k (p99 31.0ms), then errors<0.1% at 76.4k (errors
    /// 2.31%)`: each objective that broke, at the lowest load it broke at, lowest first; `None`
    /// when none broke.
    pub fn broke_first(&self) -> Option<String> {
        let mut first: Vec<(u64, usize, &Verdict)> = Vec::new();
        for step in &self.steps {
            if step.outcome.class() != Class::Broke {
                continue;
            }
            for (position, verdict) in step.outcome.verdicts.iter().enumerate() {
                if verdict.held {
                    continue;
                }
                match first.iter_mut().find(|(_, p, _)| *p == position) {
                    Some(seen) if seen.0 <= step.load => {}
                    Some(seen) => *seen = (step.load, position, verdict),
                    None => first.push((step.load, position, verdict)),
                }
            }
        }
        first.sort_by_key(|&(load, position, _)| (load, position));
        let said: Vec<String> = first
            .iter()
            .map(|(load, _, v)| format!("{} at {} ({})", v.expr, short(*load), v.measured_text()))
            .collect();
        (!said.is_empty()).then(|| format!("Broke first: {}", said.join(", then ")))
    }
}

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
    /// cannot tell).
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
    /// `[low, high]`: where the boundary moved over every trial not disturbed (absent without
    /// an answer, and in files of older tsumos).
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

/// `at least 38,200 requests/sec`, or `unknown` when no step held.
fn at_least(value: Option<&str>, unit: &str) -> String {
    match value {
        Some(value) => format!("at least {value} {unit}"),
        None => "unknown, no step held".to_string(),
    }
}

/// `38,200`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `38.2k`, `1.5M`, `800`: a load in three figures.
pub fn short(n: u64) -> String {
    let (value, suffix) = match n {
        0..=999 => return n.to_string(),
        1_000..=999_999 => (n as f64 / 1e3, "k"),
        _ => (n as f64 / 1e6, "M"),
    };
    let text = if value < 100.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.0}")
    };
    format!("{}{suffix}", text.trim_end_matches(".0"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::Unit;

    /// A server that holds `p99<20ms` up to `capacity`, and a generator that reaches at most
    /// `generator` (beyond it the step is tsumo's limit, whatever the server does).
    struct FakeServer {
        capacity: u64,
        generator: Option<u64>,
        ran: Vec<u64>,
    }

    impl FakeServer {
        fn new(capacity: u64) -> FakeServer {
            FakeServer {
                capacity,
                generator: None,
                ran: Vec::new(),
            }
        }
    }

    fn p99(held: bool, measured: f64) -> Verdict {
        Verdict {
            expr: "p99<20ms".into(),
            measured: Some(measured),
            unit: Unit::Micros,
            held,
            judged_on: None,
        }
    }

    impl StepRunner for FakeServer {
        fn run_step(&mut self, load: u64) -> StepOutcome {
            self.ran.push(load);
            if self.generator.is_some_and(|max| load > max) {
                return StepOutcome {
                    achieved: self.generator.unwrap_or_default() as f64,
                    verdicts: vec![p99(false, 90_000.0)],
                    limit: Some(Limit::Generator("send lateness p99 40.0ms".into())),
                };
            }
            let held = load <= self.capacity;
            StepOutcome {
                achieved: load as f64,
                verdicts: vec![p99(held, if held { 4_000.0 } else { 31_000.0 })],
                limit: None,
            }
        }
    }

    /// What a scripted trial shows instead of the server's verdict.
    #[derive(Clone, Copy)]
    enum Trial {
        Broke,
        Disturbed,
        Stopped,
    }

    /// A [`FakeServer`] whose `nth` trial at a load (from 1) is scripted.
    struct Scripted {
        server: FakeServer,
        script: Vec<(u64, usize, Trial)>,
    }

    impl Scripted {
        fn new(capacity: u64, script: &[(u64, usize, Trial)]) -> Scripted {
            Scripted {
                server: FakeServer::new(capacity),
                script: script.to_vec(),
            }
        }
    }

    impl StepRunner for Scripted {
        fn run_step(&mut self, load: u64) -> StepOutcome {
            let outcome = self.server.run_step(load);
            let nth = self.server.ran.iter().filter(|&&l| l == load).count();
            let scripted = self.script.iter().find(|s| (s.0, s.1) == (load, nth));
            let broken = vec![p99(false, 25_000.0)];
            match scripted.map(|s| s.2) {
                None => outcome,
                Some(Trial::Broke) => StepOutcome {
                    verdicts: broken,
                    ..outcome
                },
                Some(Trial::Disturbed) => StepOutcome {
                    verdicts: broken,
                    limit: Some(Limit::Disturbed("tsumo stalled 96ms".into())),
                    ..outcome
                },
                Some(Trial::Stopped) => StepOutcome {
                    achieved: 0.0,
                    verdicts: Vec::new(),
                    limit: Some(Limit::Stopped("SIGINT".into())),
                },
            }
        }
    }

    /// A break right above a held step, run again and held: the search grows on, and the range
    /// shows where the boundary moved.
    #[test]
    fn a_noisy_break_above_a_held_step_is_run_again_and_held() {
        let mut noisy = Scripted::new(38_200, &[(16_000, 1, Trial::Broke)]);
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
        assert_eq!(
            &noisy.server.ran[..8],
            [1_000, 2_000, 4_000, 8_000, 16_000, 16_000, 16_000, 32_000]
        );
        assert_eq!(found.value, Some(38_000));
        assert_eq!(found.finding, Finding::Found);
        assert_eq!(found.range(), Some((16_000, 38_000)));
        assert_eq!(
            found.line(),
            "Capacity: 38,000 requests/sec (p99<20ms held at 38k; broke at 39k: p99 31.0ms); \
             range 16,000–38,000; 6 of 19 steps run again: 6 to check a break"
        );
        assert_eq!(found.saved().range, Some([16_000, 38_000]));
    }

    /// A disturbed trial is run again and does not count: the answer is the quiet search's.
    #[test]
    fn a_disturbed_step_is_run_again() {
        let mut noisy = Scripted::new(38_200, &[(36_000, 1, Trial::Disturbed)]);
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
        assert_eq!(&noisy.server.ran[12..14], [36_000, 36_000]);
        assert_eq!(found.value, Some(38_000));
        assert_eq!(found.finding, Finding::Found);
        assert_eq!(found.reruns(), (4, 1));
        let saved = found.saved();
        assert_eq!(saved.disturbed, [36_000]);
        assert_eq!(saved.range, Some([38_000, 38_000]));
        assert_eq!(
            found.line(),
            "Capacity: 38,000 requests/sec (p99<20ms held at 38k; broke at 39k: p99 31.0ms); 5 \
             of 18 steps run again: 4 to check a break, 1 disturbed (tsumo stalled 96ms)"
        );
        // Two disturbed, then a break and a hold: a split at the bound is held (noise only
        // makes a server look worse).
        let mut noisy = Scripted::new(
            38_200,
            &[(36_000, 1, Trial::Disturbed), (36_000, 2, Trial::Broke)],
        );
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
        assert_eq!(&noisy.server.ran[12..16], [36_000, 36_000, 36_000, 38_000]);
        assert_eq!(found.value, Some(38_000));
    }

    /// Every trial at a load disturbed: the search cannot tell, names why, and claims only what
    /// held below.
    #[test]
    fn every_trial_disturbed_cannot_tell() {
        let all = |load| [1, 2, 3].map(|nth| (load, nth, Trial::Disturbed));
        let mut noisy = Scripted::new(38_200, &all(40_000));
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
        assert_eq!(
            &noisy.server.ran[6..],
            [64_000, 64_000, 48_000, 48_000, 40_000, 40_000, 40_000]
        );
        assert_eq!(
            found.finding,
            Finding::CannotTell {
                at: 40_000,
                trials: 3,
                why: "tsumo stalled 96ms".into()
            }
        );
        assert_eq!(found.value, Some(32_000));
        assert_eq!(
            found.line(),
            "Capacity: cannot tell; at least 32,000 requests/sec held, all 3 trials at 40k \
             disturbed (tsumo stalled 96ms); 4 of 13 steps run again: 2 to check a break, 2 \
             disturbed (tsumo stalled 96ms)"
        );
        let saved = found.saved();
        assert_eq!(
            (saved.limited_by.as_str(), saved.reason.as_str()),
            (
                "noise",
                "at 40000: all 3 trials disturbed: tsumo stalled 96ms"
            )
        );
        assert_eq!(saved.disturbed, [40_000, 40_000, 40_000]);
        // The first load: no number at all.
        let mut noisy = Scripted::new(38_200, &all(1_000));
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
        assert_eq!(found.value, None);
        assert_eq!(
            found.line(),
            "Capacity: cannot tell; all 3 trials at 1k disturbed (tsumo stalled 96ms); 2 of 3 \
             steps run again: 2 disturbed (tsumo stalled 96ms)"
        );
    }

    /// SIGINT while confirming the answer (issue 30, item 5): the answer is what held, never
    /// "unknown, no step held".
    #[test]
    fn sigint_during_the_confirmation_answers_what_held() {
        let mut stopped = Scripted::new(38_200, &[(38_000, 2, Trial::Stopped)]);
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut stopped);
        assert_eq!(found.steps.last().map(|s| s.role), Some(Role::Confirm));
        assert_eq!(
            found.finding,
            Finding::Stopped {
                at: 38_000,
                signal: "SIGINT".into()
            }
        );
        assert_eq!(found.value, Some(38_000));
        assert_eq!(
            found.line(),
            "Capacity: at least 38,000 requests/sec; the search stopped at 38k while confirming \
             it: SIGINT; 4 of 17 steps run again: 4 to check a break"
        );
        let saved = found.saved();
        assert_eq!(saved.signal.as_deref(), Some("SIGINT"));
        assert_eq!(
            (saved.limited_by.as_str(), saved.reason.as_str()),
            ("stopped", "at 38000: SIGINT")
        );
        // Stopped after the confirmation broke and stepped down: what held below 38,000.
        let mut stopped = Scripted::new(
            38_200,
            &[
                (38_000, 2, Trial::Broke),
                (38_000, 3, Trial::Broke),
                (36_190, 1, Trial::Stopped),
            ],
        );
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut stopped);
        assert_eq!(found.value, Some(36_000));
    }

    /// A failed run stops the search in words that read (issue 30's wording items).
    #[test]
    fn a_failed_run_stops_the_search_in_words() {
        struct Fails;
        impl StepRunner for Fails {
            fn run_step(&mut self, load: u64) -> StepOutcome {
                StepOutcome {
                    achieved: load as f64,
                    verdicts: vec![p99(true, 1_000.0)],
                    limit: (load >= 200).then(|| Limit::Stopped("the run failed".into())),
                }
            }
        }
        let found = search(&plan(100, None), LoadUnit::RequestsPerSec, &mut Fails);
        assert_eq!(
            found.line(),
            "Capacity: at least 100 requests/sec; the search stopped at 200: the run failed"
        );
    }

    fn plan(from: u64, to: Option<u64>) -> SearchPlan {
        SearchPlan {
            from,
            to,
            resolution: SearchPlan::RESOLUTION,
            growth: SearchPlan::GROWTH,
            granularity: 1,
            trials: SearchPlan::TRIALS,
        }
    }

    #[test]
    fn grows_bisects_and_confirms() {
        let mut server = FakeServer::new(38_200);
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut server);
        assert_eq!(
            server.ran,
            [
                1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 64_000, // grow
                48_000, 48_000, 40_000, 40_000, 36_000, 38_000, 39_000, 39_000, // bisect
                38_000, // confirm
            ]
        );
        assert_eq!(found.finding, Finding::Found);
        assert_eq!(found.value, Some(38_000));
        let roles: Vec<Role> = found.steps.iter().map(|s| s.role).collect();
        assert_eq!(roles[7], Role::Grow);
        assert_eq!(roles[8], Role::Bisect);
        assert_eq!(roles[16], Role::Confirm);
        let trials: Vec<u32> = found.steps.iter().map(|s| s.trial).collect();
        assert_eq!(trials, [1, 1, 1, 1, 1, 1, 1, 2, 1, 2, 1, 2, 1, 1, 1, 2, 2]);
        // Each break run again (and broke again); the answer confirmed; one load throughout.
        assert_eq!(found.reruns(), (4, 0));
        assert_eq!(found.range(), Some((38_000, 38_000)));
        assert_eq!(
            found.line(),
            "Capacity: 38,000 requests/sec (p99<20ms held at 38k; broke at 39k: p99 31.0ms); 4 \
             of 17 steps run again: 4 to check a break"
        );
        assert_eq!(
            found.broke_first().as_deref(),
            Some("Broke first: p99<20ms at 39k (p99 31.0ms)")
        );
        let saved = serde_json::to_value(found.saved()).unwrap();
        assert_eq!(
            saved,
            serde_json::json!({
                "value": 38_000,
                "unit": "requests/sec",
                "limited_by": "server",
                "reason": "broke at 39000: p99<20ms (p99 31.0ms)",
                "answer": found.line(),
                "broke_first": "Broke first: p99<20ms at 39k (p99 31.0ms)",
                "held": [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 36_000, 38_000, 38_000],
                "broke": [64_000, 64_000, 48_000, 48_000, 40_000, 40_000, 39_000, 39_000],
                "range": [38_000, 38_000],
                "trials": [1, 1, 1, 1, 1, 1, 1, 2, 1, 2, 1, 2, 1, 1, 1, 2, 2],
            })
        );
    }

    /// Whatever the capacity, the answer is at most it and within the resolution of it.
    #[test]
    fn the_answer_is_within_the_resolution() {
        for capacity in [1_000, 1_234, 5_555, 38_200, 99_999, 250_000, 1_000_003] {
            let mut server = FakeServer::new(capacity);
            let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut server);
            let value = found.value.expect("an answer") as f64;
            assert!(value <= capacity as f64, "{capacity}: {value}");
            assert!(value >= capacity as f64 * 0.95, "{capacity}: {value}");
            assert_eq!(found.finding, Finding::Found, "{capacity}");
        }
    }

    #[test]
    fn players_come_in_tables() {
        let mut server = FakeServer::new(203);
        let search_plan = SearchPlan {
            granularity: 4,
            ..plan(16, None)
        };
        let found = search(&search_plan, LoadUnit::Players, &mut server);
        assert!(
            server.ran.iter().all(|load| load % 4 == 0),
            "{:?}",
            server.ran
        );
        assert_eq!(
            server.ran,
            [16, 32, 64, 128, 256, 256, 192, 224, 224, 208, 208, 200, 200]
        );
        assert_eq!(found.value, Some(200));
        assert!(found
            .line()
            .starts_with("Capacity: 200 players (p99<20ms held at 200;"));
    }

    /// tsumo's limit is never reported as the server's: the search stops with "at least".
    #[test]
    fn the_generator_limit_is_never_the_servers() {
        let mut server = FakeServer::new(1_000_000);
        server.generator = Some(50_000);
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut server);
        assert_eq!(
            server.ran,
            [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000]
        );
        assert_eq!(
            found.finding,
            Finding::GeneratorLimited {
                at: 64_000,
                why: "send lateness p99 40.0ms".into()
            }
        );
        assert_eq!(found.value, Some(32_000));
        assert_eq!(
            found.line(),
            "Capacity: at least 32,000 requests/sec; the generator was the limit at 64k (send \
             lateness p99 40.0ms): add threads or shards"
        );
        let saved = found.saved();
        assert_eq!(
            (saved.limited_by.as_str(), saved.reason.as_str()),
            ("generator", "at 64000: send lateness p99 40.0ms")
        );
        assert!(
            saved.broke.is_empty(),
            "a generator's limit is no break: {saved:?}"
        );
        assert_eq!(found.broke_first(), None);
    }

    #[test]
    fn a_system_limit_is_named_in_doctors_words() {
        struct Ports;
        impl StepRunner for Ports {
            fn run_step(&mut self, load: u64) -> StepOutcome {
                StepOutcome {
                    achieved: load as f64,
                    verdicts: vec![p99(load < 4_000, 1_000.0)],
                    limit: (load >= 4_000).then_some(Limit::System(SystemLimit::EphemeralPorts)),
                }
            }
        }
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut Ports);
        assert_eq!(found.steps.len(), 3);
        assert_eq!(
            found.line(),
            "Capacity: at least 2,000 requests/sec; a system limit at 4k: connects failed with \
             EADDRNOTAVAIL (no local port left): see `tsumo doctor`'s ephemeral ports check"
        );
    }

    /// The server stopped answering at 4k (killed): the search ends there, a failure, the steps
    /// before kept and the failed step's broken verdicts said; never a system limit.
    #[test]
    fn a_server_that_stops_answering_fails_the_search() {
        struct Killed;
        impl StepRunner for Killed {
            fn run_step(&mut self, load: u64) -> StepOutcome {
                let gone = load >= 4_000;
                StepOutcome {
                    achieved: load as f64,
                    verdicts: vec![p99(!gone, if gone { 1_640_000.0 } else { 1_000.0 })],
                    limit: gone.then(|| Limit::ServerFailed("unable to connect: refused".into())),
                }
            }
        }
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut Killed);
        assert_eq!(found.steps.len(), 3);
        assert_eq!(found.steps[2].outcome.class(), Class::ServerFailed);
        assert_eq!(
            found.finding,
            Finding::ServerFailed {
                at: 4_000,
                why: "unable to connect: refused".into()
            }
        );
        assert_eq!(found.value, Some(2_000));
        assert_eq!(
            found.line(),
            "Capacity: at least 2,000 requests/sec; the search failed: the server stopped \
             answering at 4k (broke there: p99 1.64s)"
        );
        let saved = found.saved();
        assert_eq!(
            (saved.limited_by.as_str(), saved.reason.as_str()),
            (
                "server-failed",
                "at 4000: unable to connect: refused; broke there: p99<20ms (p99 1.64s)"
            )
        );
        assert_eq!(saved.held, [1_000, 2_000]);
        assert!(saved.broke.is_empty(), "{saved:?}");
    }

    /// The confirmation breaks (a noisy run): a third trial decides; when it breaks too, one
    /// step down, held there.
    #[test]
    fn a_broken_confirmation_is_decided_by_a_third_trial() {
        // 38,000 holds while bisecting, then breaks when confirmed, then holds.
        let mut noisy = Scripted::new(38_200, &[(38_000, 2, Trial::Broke)]);
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
        assert_eq!(
            &noisy.server.ran[13..],
            [38_000, 39_000, 39_000, 38_000, 38_000]
        );
        assert_eq!(found.value, Some(38_000));
        assert_eq!(found.finding, Finding::Found);
        assert_eq!(found.steps[16].trial, 2);
        assert_eq!(found.steps[17].trial, 3);
        // Broken twice of three: one step down (38,000 / 1.05 = 36,190), held there.
        let mut noisy = Scripted::new(
            38_200,
            &[(38_000, 2, Trial::Broke), (38_000, 3, Trial::Broke)],
        );
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
        assert_eq!(&noisy.server.ran[16..], [38_000, 38_000, 36_190]);
        assert_eq!(found.value, Some(36_190));
        assert_eq!(found.finding, Finding::Found);
        assert_eq!(
            found.line(),
            "Capacity: 36,190 requests/sec (p99<20ms held at 36.2k; broke at 38k: p99 25.0ms); \
             range 36,190–38,000; 5 of 19 steps run again: 5 to check a break"
        );
    }

    /// A server that breaks every confirmation: the steps go down further each time (one
    /// resolution, two, four…) and end at `from`, below which nothing is claimed.
    #[test]
    fn confirmations_that_keep_breaking_end_below_from() {
        // Holds up to 3,000 for its first 7 steps, then breaks at any load.
        struct Degrading(Vec<u64>);
        impl StepRunner for Degrading {
            fn run_step(&mut self, load: u64) -> StepOutcome {
                let held = load <= 3_000 && self.0.len() < 7;
                self.0.push(load);
                StepOutcome {
                    achieved: load as f64,
                    verdicts: vec![p99(held, if held { 4_000.0 } else { 31_000.0 })],
                    limit: None,
                }
            }
        }
        let mut runner = Degrading(Vec::new());
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut runner);
        assert_eq!(
            runner.0,
            [
                1_000, 2_000, 4_000, 4_000, // grow
                3_000, 3_500, 3_500, 3_250, 3_250, 3_125, 3_125, // bisect
                3_000, 3_000, 2_857, 2_857, 2_597, 2_597, 2_164, 2_164, 1_545, 1_545, 1_000,
                1_000, // confirm, two trials each, down 5%, 10%, 20%, 40%, 80%
            ]
        );
        assert_eq!(found.finding, Finding::BelowFrom);
        assert_eq!(found.value, None);
    }

    #[test]
    fn bounds() {
        // Even --to held.
        let mut server = FakeServer::new(1_000_000);
        let found = search(
            &plan(1_000, Some(10_000)),
            LoadUnit::RequestsPerSec,
            &mut server,
        );
        assert_eq!(server.ran, [1_000, 2_000, 4_000, 8_000, 10_000]);
        assert_eq!(found.finding, Finding::AtLeastTo);
        assert_eq!(
            found.line(),
            "Capacity: at least 10,000 requests/sec (p99<20ms held at 10k, the highest step)"
        );
        // --from broke already.
        let mut server = FakeServer::new(500);
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut server);
        assert_eq!(server.ran, [1_000, 1_000]);
        assert_eq!(found.finding, Finding::BelowFrom);
        assert_eq!(found.value, None);
        assert_eq!(
            found.line(),
            "Capacity: below 1,000 requests/sec (broke at 1k: p99 31.0ms); 1 of 2 steps run \
             again: 1 to check a break"
        );
    }

    #[test]
    fn a_staircase_runs_every_step_and_reads_the_answer() {
        let loads = staircase_loads(1_000, 10_000, 4, 1);
        assert_eq!(loads, [1_000, 4_000, 7_000, 10_000]);
        assert_eq!(staircase_loads(8, 40, 5, 4), [8, 16, 24, 32, 40]);
        let mut server = FakeServer::new(5_000);
        let found = staircase(&loads, LoadUnit::RequestsPerSec, &mut server);
        assert_eq!(server.ran, loads);
        assert_eq!(found.value, Some(4_000));
        assert_eq!(found.broke, Some(2));
        assert_eq!(
            found.line(),
            "Capacity: 4,000 requests/sec (p99<20ms held at 4k; broke at 7k: p99 31.0ms)"
        );
        // The same steps judged again (as after a merge) give the same answer.
        assert_eq!(
            judge_staircase(LoadUnit::RequestsPerSec, found.steps.clone()),
            found
        );
    }

    #[test]
    fn numbers_in_the_answer() {
        assert_eq!(grouped(38_200), "38,200");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(short(38_200), "38.2k");
        assert_eq!(short(40_100), "40.1k");
        assert_eq!(short(2_000), "2k");
        assert_eq!(short(250_000), "250k");
        assert_eq!(short(1_500_000), "1.5M");
        assert_eq!(short(812), "812");
    }
}
