//! A fixed staircase (sharded runs): the same steps on every shard, every one run, the answer
//! read from all of them, also after a merge.

use super::answer::{answer, limited};
use super::{Capacity, Class, Finding, LoadUnit, Role, SearchPlan, Step, StepRunner};

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
