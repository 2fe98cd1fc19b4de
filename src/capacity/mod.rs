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
//! as the server's; a server that failed now and then whatever the load (errors that came and
//! went at a steady load) ends it too, with no number made up. A [`staircase`](fn@staircase) runs fixed steps instead (no bisection), the
//! same on every shard, and [`judge_staircase`] reads the answer from them, also after a merge.
//!
//! The files, from the bottom up:
//! - `numbers`: a load in words, `38,200` in full and `38.2k` short;
//! - `step`: one step: its load's unit, what it showed, the limits that are not the server's;
//! - `early`: a judged step ended before its `--step` is over, its errors or latency broken
//!   beyond doubt (the gauges' counts it reads, the rule);
//! - `held`: … or held beyond doubt, far under every objective, after a least judged time;
//! - `watch`: a judged run's watch, reading its gauges once a second for either;
//! - `disturbance`: what disturbed a step (tsumo stalled, CPU stolen), so that it is run again, and
//!   the interference that widens the answer's range;
//! - `answer`: what the steps found ([`Capacity`]), and its line, range and what broke first;
//! - `search`: the search's settings and the search: grow, bisect, confirm till trials agree;
//! - `staircase`: the fixed staircase and its judgement;
//! - `saved`: the answer as saved in a result's JSON ([`SavedCapacity`]);
//! - `tests`: the search and the staircase against fake servers of known capacity.

mod answer;
mod disturbance;
mod early;
mod held;
mod numbers;
mod saved;
mod search;
mod staircase;
mod step;
#[cfg(test)]
mod tests;
mod watch;

pub use answer::{Capacity, Finding};
pub use disturbance::{Disturbance, STALL_US};
pub use early::{far_of, Counts, EndEarly, LatencyEnd};
pub use held::held_end;
pub use numbers::{grouped, short};
pub use saved::SavedCapacity;
pub use search::{search, SearchPlan};
pub use staircase::{judge_staircase, staircase, staircase_loads};
pub use step::{
    Class, Limit, LoadUnit, PoolLimit, Role, Step, StepOutcome, StepRunner, SystemLimit,
};
pub use watch::Watch;
