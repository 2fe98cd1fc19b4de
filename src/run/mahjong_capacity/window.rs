//! What a judged window of `mahjong --capacity` says beyond its objectives: whether it saw the
//! draws its players and think time make due (a server frozen inside the window is no "held"),
//! and what disturbed the machine during it (tsumo's lateness, the CPU others used).

use std::time::Duration;

use crate::capacity;
use crate::report::mahjong::saved::SavedSession;
use crate::sys::machine::MachineUse;

/// A judged window that saw fewer than this share of the draws due has not held.
const DRAWS_DUE_SHARE: f64 = 0.25;

/// The draws a window of `elapsed` should see with `playing` players: one a think time (and
/// half its jitter) per table, each table's turns one after another; 0 when draws are not
/// timed (a think time under the server's own step minimum).
pub(super) fn draws_due(saved: &SavedSession, playing: u64, elapsed: Duration) -> u64 {
    let plan = &saved.plan;
    let think_s = plan.think_s + plan.think_jitter_s / 2.0;
    if plan.think_s < Duration::from_nanos(crate::mahjong::player::STEP_MINIMUM).as_secs_f64() {
        return 0;
    }
    let tables = playing / plan.seats.max(1);
    (tables as f64 * elapsed.as_secs_f64() / think_s).floor() as u64
}

/// `draws>9` broken (`draws 2`) when the window saw fewer than [`DRAWS_DUE_SHARE`] of the
/// draws due: the step has not held, whatever its objectives measured on the few that came.
pub(super) fn draws_behind(
    saved: &SavedSession,
    playing: u64,
    elapsed: Duration,
) -> Option<crate::slo::Verdict> {
    let due = draws_due(saved, playing, elapsed);
    let least = (due as f64 * DRAWS_DUE_SHARE).floor() as u64;
    let seen = saved.draw_overshoot.count;
    (least > 0 && seen < least).then(|| crate::slo::Verdict {
        expr: format!("draws>{least}"),
        measured: Some(seen as f64),
        unit: crate::slo::Unit::Count,
        held: false,
        judged_on: None,
    })
}

/// The machine during a judged window: tsumo's reply lateness max (one figure: a session's
/// intervals keep no lateness), and the CPU others used (the machine's busy cores less tsumo's
/// and the sampled servers').
pub(super) fn disturbance_of(
    saved: &SavedSession,
    machine: Option<MachineUse>,
) -> capacity::Disturbance {
    let elapsed = saved.elapsed_s.max(1e-9);
    let tsumo = saved.tsumo.cpu_s / elapsed;
    let server = saved
        .server
        .as_ref()
        .map_or(0.0, |s| s.cpu_percent_mean / 100.0);
    capacity::Disturbance {
        lateness_max_us: vec![saved.reply_lateness.sampled().map_or(0, |h| h.max)],
        others_cores: machine.map(|m| (m.busy_cores - tsumo - server).max(0.0)),
        steal_cores: machine.map(|m| m.steal_cores),
        cores: machine.map_or(0, |m| m.cores),
    }
}
