//! The progress line of a search over players: the step, its target, where the step is (its
//! [`Stage`]), the players playing and how the objectives stand; on a terminal, or each second
//! with `--progress`.

use std::time::{Duration, Instant};

use crate::capacity;
use crate::engine::ProgressMode;
use crate::run::{human, verdict_text};
use crate::slo::Verdict;

/// How often the progress line is redrawn.
const REDRAW_EVERY: Duration = Duration::from_secs(1);

/// Where a step is, for the progress line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Stage {
    /// The pause after players were logged out.
    Pause,
    /// The new tables log in, connect and sit down.
    Seating,
    WarmUp,
    /// The judged window, begun at this instant, `--step` long.
    Judged(Instant, Duration),
}

impl Stage {
    /// `seating`, `warm-up`, `judged 2s of 10s` (at `now`).
    pub(super) fn text(self, now: Instant) -> String {
        match self {
            Stage::Pause => "pause".to_string(),
            Stage::Seating => "seating".to_string(),
            Stage::WarmUp => "warm-up".to_string(),
            Stage::Judged(began, length) => format!(
                "judged {}s of {}",
                now.saturating_duration_since(began).min(length).as_secs(),
                human(length)
            ),
        }
    }
}

/// The progress line's state: shown on a terminal (or each second with `--progress`).
pub(super) struct ProgressLine {
    pub(super) mode: ProgressMode,
    pub(super) shown: Option<Instant>,
    /// The step's number and target.
    pub(super) step: usize,
    pub(super) load: u64,
    pub(super) stage: Stage,
    /// The worst draw over think (µs) of the last second that had own draws: the line's lead.
    pub(super) lag_shown: Option<u64>,
}

impl ProgressLine {
    /// Clears the progress line before a line of its own on stderr.
    pub(super) fn say(&self, line: &str) {
        self.mode.finish();
        eprintln!("{line}");
    }

    /// Whether the line is due now (each [`REDRAW_EVERY`]).
    pub(super) fn due(&mut self) -> bool {
        if self.mode == ProgressMode::Off {
            return false;
        }
        let due = self.shown.is_none_or(|at| at.elapsed() >= REDRAW_EVERY);
        if due {
            self.shown = Some(Instant::now());
        }
        due
    }
}

/// `step 4 at 12 players (held at 8; broke at 16: errors<1): judged 1s of 3s, 8 playing:
/// errors<1 BROKEN (errors 8)`: the progress line of a step, with how the search stands
/// ([`crate::run::standing`]); `verdicts` over its window so far, when that has begun.
pub(super) fn progress_line(
    step: usize,
    load: u64,
    standing: &str,
    stage: &str,
    playing: u64,
    verdicts: &[Verdict],
) -> String {
    let mut line = format!(
        "step {step} at {} players{standing}: {stage}, {} playing",
        capacity::grouped(load),
        capacity::grouped(playing)
    );
    if !verdicts.is_empty() {
        let said: Vec<String> = verdicts.iter().map(verdict_text).collect();
        line.push_str(": ");
        line.push_str(&said.join(", "));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::Unit;

    fn verdict(expr: &str, measured: f64, unit: Unit, held: bool) -> Verdict {
        Verdict {
            expr: expr.to_string(),
            measured: Some(measured),
            unit,
            held,
            judged_on: None,
        }
    }

    #[test]
    fn the_progress_line_says_the_step_its_target_the_players_and_the_objectives() {
        let verdicts = [
            verdict("errors<1", 16.0, Unit::Count, false),
            verdict("draw_overshoot.p99<100ms", 31_000.0, Unit::Micros, true),
        ];
        // Held at 4 and 8, broke at 16 on errors<1 and at 24 on both.
        let held = [verdict("errors<1", 0.0, Unit::Count, true)];
        let broke = [verdict("errors<1", 8.0, Unit::Count, false)];
        let both = [
            verdict("errors<1", 30.0, Unit::Count, false),
            verdict("draw_overshoot.p99<100ms", 150_000.0, Unit::Micros, false),
        ];
        let standing = crate::run::standing([
            (4, &held[..]),
            (8, &held[..]),
            (24, &both[..]),
            (16, &broke[..]),
        ]);
        assert_eq!(standing, " (held at 8; broke at 16: errors<1)");
        assert_eq!(
            progress_line(4, 12, &standing, "judged 2s of 3s", 8, &verdicts),
            "step 4 at 12 players (held at 8; broke at 16: errors<1): judged 2s of 3s, 8 \
             playing: errors<1 BROKEN (errors 16), draw_overshoot.p99<100ms held \
             (draw_overshoot.p99 31.0ms)"
        );
        let standing = crate::run::standing([(8, &held[..])]);
        assert_eq!(
            progress_line(3, 16, &standing, "warm-up", 8, &[]),
            "step 3 at 16 players (held at 8): warm-up, 8 playing"
        );
        assert_eq!(
            crate::run::standing([(24, &both[..])]),
            " (broke at 24: errors<1, draw_overshoot.p99<100ms)"
        );
        // Before the window: no verdicts yet; nothing held or broken yet.
        let standing = crate::run::standing([]);
        assert_eq!(
            progress_line(1, 1_024, &standing, "seating", 0, &[]),
            "step 1 at 1,024 players: seating, 0 playing"
        );
    }

    #[test]
    fn the_stages_read_as_words_and_the_window_as_seconds_of_its_length() {
        let began = Instant::now();
        let judged = Stage::Judged(began, Duration::from_secs(10));
        assert_eq!(judged.text(began), "judged 0s of 10s");
        assert_eq!(
            judged.text(began + Duration::from_millis(2_500)),
            "judged 2s of 10s"
        );
        // Never past its length, however late the last redraw.
        assert_eq!(
            judged.text(began + Duration::from_secs(12)),
            "judged 10s of 10s"
        );
        assert_eq!(Stage::Seating.text(began), "seating");
        assert_eq!(Stage::WarmUp.text(began), "warm-up");
        assert_eq!(Stage::Pause.text(began), "pause");
    }
}
