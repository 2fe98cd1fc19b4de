//! The search itself: grow the load until an objective breaks, bisect, confirm; each load run
//! until its trials agree.

use super::answer::{answer, cannot_tell, limited, unstable};
use super::{Capacity, Class, Finding, LoadUnit, Role, Step, StepRunner};
use crate::slo::Verdict;

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
    pub(super) fn round(&self, x: f64) -> u64 {
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

/// The trials at one load so far.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    held: u32,
    broke: u32,
    /// A trial broke an objective beyond doubt ([`Verdict::far_beyond`]).
    far: bool,
    disturbed: u32,
    last_held: Option<usize>,
    last_broke: Option<usize>,
}

impl Tally {
    fn trials(&self) -> u32 {
        self.held + self.broke + self.disturbed
    }

    /// Settled before the bound: a first trial that held (held is held: noise only makes a
    /// server look worse), or one that broke beyond doubt with none held, else two that
    /// agree. `confirming`: the held trial is the one being checked, so one more must agree
    /// with it.
    fn settled(&self, confirming: bool) -> Option<Class> {
        if self.broke >= 2 || (self.broke == 1 && self.far && self.held == 0) {
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
                Class::Broke => {
                    (tally.broke, tally.last_broke) = (tally.broke + 1, Some(index));
                    tally.far |= self.steps[index].outcome.broken().any(Verdict::far_beyond);
                }
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

/// A load and the index of the step that settled it.
type Bound = (u64, usize);

/// The search: grow, bisect, confirm; each load run until its verdict settles.
pub fn search(plan: &SearchPlan, unit: LoadUnit, runner: &mut impl StepRunner) -> Capacity {
    let mut run = Steps {
        runner,
        steps: Vec::new(),
        bound: plan.trials.max(1),
    };
    let (held, broke) = match grow(plan, unit, &mut run) {
        Ok(bounds) => bounds,
        Err(answered) => return *answered,
    };
    let (low, high) = match bisect(plan, unit, &mut run, held, broke) {
        Ok(bounds) => bounds,
        Err(answered) => return *answered,
    };
    confirm(plan, unit, run, low, high)
}

/// Grows the load from `--from` until a step breaks: the highest load that held (and its
/// step) and the one that broke; `Err` with the answer when the search ends there.
fn grow<R: StepRunner>(
    plan: &SearchPlan,
    unit: LoadUnit,
    run: &mut Steps<'_, R>,
) -> Result<(Bound, Bound), Box<Capacity>> {
    let to = plan.to.map(|to| plan.round_down(to as f64));
    let mut load = plan.round(plan.from as f64);
    if let Some(to) = to {
        load = load.min(to);
    }
    let mut held: Option<(u64, usize)> = None;
    let steps = |run: &mut Steps<'_, R>| std::mem::take(&mut run.steps);
    loop {
        let Settled { class, index } = run.settle(load, Role::Grow, Tally::default(), false);
        match class {
            Class::Held => {
                held = Some((load, index));
                if to.is_some_and(|to| load >= to) {
                    return Err(Box::new(answer(
                        unit,
                        steps(run),
                        Finding::AtLeastTo,
                        held,
                        None,
                    )));
                }
                let mut next = plan.round(load as f64 * plan.growth).max(load + 1);
                if let Some(to) = to {
                    next = next.min(to);
                }
                load = next;
            }
            Class::Broke => {
                return match held {
                    Some(held) => Ok((held, (load, index))),
                    None => Err(Box::new(answer(
                        unit,
                        steps(run),
                        Finding::BelowFrom,
                        None,
                        Some(index),
                    ))),
                };
            }
            Class::Disturbed => {
                return Err(Box::new(cannot_tell(unit, steps(run), index, held, None)))
            }
            _ => return Err(Box::new(limited(unit, steps(run), index, held))),
        }
    }
}

/// Halves the gap between the highest load that held and the lowest that broke, to
/// `--resolution`: the load to confirm and the lowest that broke, each with its step; `Err`
/// with the answer when the search ends there.
fn bisect<R: StepRunner>(
    plan: &SearchPlan,
    unit: LoadUnit,
    run: &mut Steps<'_, R>,
    (mut low, mut low_index): Bound,
    (mut high, mut high_index): Bound,
) -> Result<(Bound, Bound), Box<Capacity>> {
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
                let steps = std::mem::take(&mut run.steps);
                return Err(Box::new(cannot_tell(
                    unit,
                    steps,
                    index,
                    held,
                    Some(high_index),
                )));
            }
            _ => {
                let steps = std::mem::take(&mut run.steps);
                return Err(Box::new(limited(
                    unit,
                    steps,
                    index,
                    Some((low, low_index)),
                )));
            }
        }
    }
    Ok(((low, low_index), (high, high_index)))
}

/// The answer again: one lucky run must not make it (a split is decided by a third trial).
/// Each time it breaks, step down further (one resolution, then two, four…), to `from` at
/// the lowest.
fn confirm<R: StepRunner>(
    plan: &SearchPlan,
    unit: LoadUnit,
    mut run: Steps<'_, R>,
    (mut low, low_index): Bound,
    (mut high, mut high_index): Bound,
) -> Capacity {
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
            // Loads held before and broke now, down to the first: the verdicts flip with no
            // load to explain them, and no held load is denied by a later break.
            Class::Broke if low <= from => {
                if run.steps.iter().any(|s| s.outcome.class() == Class::Held) {
                    return unstable(unit, run.steps, index);
                }
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
