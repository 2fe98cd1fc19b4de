//! The answer of a search or a staircase (what the steps found, the highest load held), read
//! from its steps, and said in words: the answer line, the range, the steps run again, what
//! broke first.

use crate::slo::Verdict;

use super::{grouped, short, Class, Limit, LoadUnit, PoolLimit, Role, Step, SystemLimit};

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
    /// The server failed now and then at this load whatever the load (errors came and went
    /// while it stayed the same, or a load broke below one that held): no capacity is told.
    /// `below`: it failed so at the lowest load run, which it then does not carry.
    Unstable { at: u64, below: bool, why: String },
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
    /// The share of the machine (0 to 1) that others took during the search at most (their
    /// CPU, and steal): the truth moves with it, and so the range widens
    /// ([`Disturbance::interference`](super::Disturbance::interference)); 0 when not measured.
    pub interference: f64,
}

/// At full interference (others took the whole machine) the range widens by this share of
/// its ends either way: beside two steady CPU hogs on 2 cores the closed-loop truth moved
/// 307–333 while two searches found 275 and 288; with others at 1.1–1.3 of 2 cores it moved
/// from 489 to 414.
pub const WIDEN: f64 = 0.25;

pub(super) fn answer(
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
        interference: 0.0,
    }
}

/// The search ends at step `index`, limited by tsumo or the machine.
pub(super) fn limited(
    unit: LoadUnit,
    steps: Vec<Step>,
    index: usize,
    held: Option<(u64, usize)>,
) -> Capacity {
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
        Some(Limit::Unstable(why)) => {
            let below = steps.iter().all(|s| s.load >= at)
                && !steps.iter().any(|s| s.outcome.class() == Class::Held);
            let finding = Finding::Unstable {
                at,
                below,
                why: why.clone(),
            };
            // No capacity is claimed: what held is in the line, not the answer's value.
            return answer(unit, steps, finding, None, None);
        }
        None => Finding::Found,
    };
    answer(unit, steps, finding, held, None)
}

/// The search stepped down to its first load, and it broke there, after loads that held: the
/// server's verdicts flipped with no load to explain them. No capacity is claimed, and none
/// that held is denied.
pub(super) fn unstable(unit: LoadUnit, steps: Vec<Step>, index: usize) -> Capacity {
    let at = steps[index].load;
    let broke: Vec<String> = steps[index]
        .outcome
        .broken()
        .map(Verdict::measured_text)
        .collect();
    let why = format!("broke there: {}", broke.join(", "));
    let finding = Finding::Unstable {
        at,
        below: false,
        why,
    };
    answer(unit, steps, finding, None, Some(index))
}

/// Every trial at step `index`'s load was disturbed: the search cannot tell there, and claims
/// what held below (`held`), below what broke above (`broke`).
pub(super) fn cannot_tell(
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
        match &self.finding {
            Finding::Found => {
                let mut why: Vec<String> = self.held_at(self.held).into_iter().collect();
                why.extend(self.broke.map(|i| self.broke_at(i)));
                format!(
                    "Capacity: {} {unit} ({})",
                    value.unwrap_or_default(),
                    why.join("; ")
                )
            }
            Finding::AtLeastTo => format!(
                "Capacity: at least {} {unit} ({}, the highest step)",
                value.unwrap_or_default(),
                self.held_at(self.held).unwrap_or_default()
            ),
            Finding::BelowFrom => {
                let broke = self.broke.map(|i| self.broke_at(i)).unwrap_or_default();
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
            Finding::Unstable { at, below, why } => self.unstable_line(*at, *below, why),
        }
    }

    /// `every objective held at 12k` (or the objectives named): the step at `index`.
    fn held_at(&self, index: Option<usize>) -> Option<String> {
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
    }

    /// `broke at 13k: p99 62.1ms`: the step at `index` and what it measured.
    fn broke_at(&self, index: usize) -> String {
        let step = &self.steps[index];
        let broken: Vec<String> = step.outcome.broken().map(Verdict::measured_text).collect();
        format!("broke at {}: {}", short(step.load), broken.join(", "))
    }

    /// A server unstable at `at` (below the first step when `below`), and the highest load
    /// held at times.
    fn unstable_line(&self, at: u64, below: bool, why: &str) -> String {
        let unit = self.unit.as_str();
        let held = self
            .steps
            .iter()
            .filter(|s| s.outcome.class() == Class::Held)
            .map(|s| s.load)
            .max();
        let held = held.map_or(String::new(), |h| format!("; {} held at times", short(h)));
        if below {
            format!(
                "Capacity: below {} {unit}: the server was unstable ({why}){held}",
                grouped(at)
            )
        } else {
            format!(
                "Capacity: cannot tell: the server was unstable at {} ({why}){held}",
                short(at)
            )
        }
    }

    /// The objectives that the step where the server stopped answering had broken by then,
    /// each said by `say`, joined; `None` when none broke (or there is no such step).
    pub(super) fn failed_step_broke(&self, say: impl Fn(&Verdict) -> String) -> Option<String> {
        let step = self
            .steps
            .iter()
            .rev()
            .find(|s| s.outcome.class() == Class::ServerFailed)?;
        let broken: Vec<String> = step.outcome.broken().map(say).collect();
        (!broken.is_empty()).then(|| broken.join(", "))
    }

    /// `[low, high]`: where the boundary lies, over every trial not disturbed: from the
    /// lowest load that broke (or the highest held, when that is lower) to the highest that
    /// held (or the lowest broken, when that is higher), so it spans at least the step between
    /// the two; widened by [`WIDEN`] × the interference measured during the search, since the
    /// truth moves with it.
    pub fn range(&self) -> Option<(u64, u64)> {
        let value = self.value?;
        let of = |class: Class| {
            self.steps
                .iter()
                .filter(move |s| s.outcome.class() == class)
                .map(|s| s.load)
        };
        let held = of(Class::Held).max().map_or(value, |h| h.max(value));
        // The lowest break above the answer bounds it; one below it (noise) widens the range.
        let broke = of(Class::Broke).min();
        let low = broke.map_or(value, |b| b.min(value));
        let high = broke.map_or(held, |b| b.max(held));
        // Nothing broke: the boundary lies above, and no range is claimed around it.
        let widen = match broke {
            Some(_) => WIDEN * self.interference.clamp(0.0, 1.0),
            None => 0.0,
        };
        let low = (low as f64 * (1.0 - widen)).floor() as u64;
        let high = (high as f64 * (1.0 + widen)).ceil() as u64;
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

/// `at least 38,200 requests/sec`, or `unknown` when no step held.
fn at_least(value: Option<&str>, unit: &str) -> String {
    match value {
        Some(value) => format!("at least {value} {unit}"),
        None => "unknown, no step held".to_string(),
    }
}
