//! What a mahjong session records: one histogram and pair of counts per phase, the games, the
//! server's pacing of each step, tsumo's own reply lateness, and message traffic. Like the HTTP
//! recorder it knows nothing about sockets; each worker owns one [`Recorder`] and they are
//! merged at the end into the session's [`RunResult`]. Here: what a phase, an error kind and a
//! bot kind's play count; beside it, each its own file: `recorder`, `result`, `error_kind`
//! (the kinds of error told apart), `timeline` (the session interval by interval) and `live`
//! (its intervals as `--dashboard` adds them up).

pub mod error_kind;
pub mod live;
pub mod recorder;
pub mod result;
pub mod stage;
pub mod timeline;

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::stats::new_histogram;
pub use error_kind::{ErrorKind, Step};
pub use recorder::Recorder;
pub use result::RunResult;
pub use stage::StageRecord;
pub use timeline::{Interval, Players, Timeline, Totals};

/// The phases every player goes through, in order.
pub const PHASES: [&str; 6] = ["login", "connect", "ready", "formed", "started", "logout"];

/// Succeeded and failed counts of one phase, and the latency of the successes (µs).
#[derive(Debug, Clone)]
pub struct PhaseStats {
    pub ok: u64,
    pub failed: u64,
    pub latency: Histogram<u64>,
}

impl Default for PhaseStats {
    fn default() -> Self {
        PhaseStats {
            ok: 0,
            failed: 0,
            latency: new_histogram(),
        }
    }
}

impl PhaseStats {
    pub fn success(&mut self, micros: u64) {
        self.ok += 1;
        self.latency.saturating_record(micros);
    }

    pub fn failure(&mut self) {
        self.failed += 1;
    }

    fn merge(&mut self, other: &PhaseStats) {
        self.ok += other.ok;
        self.failed += other.failed;
        let _ = self.latency.add(&other.latency);
    }
}

/// Protocol errors kept verbatim for the report (the first few only).
pub const KEPT_ERRORS: usize = 5;

/// Kinds of error told apart; errors of further kinds are counted under [`OTHER_ERRORS`].
pub const KEPT_KINDS: usize = 24;

/// The kind errors beyond [`KEPT_KINDS`] kinds are counted under.
pub const OTHER_ERRORS: &str = "other errors";

/// Examples kept of each kind of error.
pub const KEPT_EXAMPLES: usize = 2;

/// How the logouts went beyond succeeding or failing: those that took more than one try, those
/// done past `--logout-timeout` (retried while the server still took connections), and the
/// sessions of logins answered after their player gave up on them, logged out too.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LogoutCounts {
    pub retried: u64,
    pub past_timeout: u64,
    pub late_logins: u64,
}

impl LogoutCounts {
    pub fn add(&mut self, other: &LogoutCounts) {
        self.retried += other.retried;
        self.past_timeout += other.past_timeout;
        self.late_logins += other.late_logins;
    }

    /// Nothing to say (the saved file leaves it out).
    pub fn is_empty(&self) -> bool {
        *self == LogoutCounts::default()
    }
}

/// Errors of one kind (a step and why it failed, without the player's name): how many, and the
/// first few verbatim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorGroup {
    pub count: u64,
    pub first: Vec<String>,
}

impl ErrorGroup {
    /// Adds `other`'s count and examples (up to [`KEPT_EXAMPLES`]).
    pub fn merge(&mut self, other: &ErrorGroup) {
        self.count += other.count;
        let room = KEPT_EXAMPLES.saturating_sub(self.first.len());
        self.first.extend(other.first.iter().take(room).cloned());
    }
}

/// Adds errors of `kind` to `kinds`, keeping at most [`KEPT_KINDS`] kinds apart.
pub fn add_errors(kinds: &mut BTreeMap<String, ErrorGroup>, kind: &str, group: &ErrorGroup) {
    let key = if kinds.contains_key(kind) || kinds.len() < KEPT_KINDS {
        kind
    } else {
        OTHER_ERRORS
    };
    kinds.entry(key.to_string()).or_default().merge(group);
}

/// What the players of one bot kind did, summed over players (a hand counts once per player
/// that played it), and the replies the server did not carry out.
///
/// Saved as it is in a session's JSON (`bots`), and merged by the same [`PlayStats::merge`]
/// there as here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayStats {
    /// Hands dealt (`qipai`), per player.
    pub hands: u64,
    /// Own wins on own draw, on another's tile.
    pub tsumo: u64,
    pub ron: u64,
    /// Hands that ended drawn (`pingju`), per player.
    pub draws: u64,
    /// Riichi declarations the server carried out.
    pub riichi: u64,
    pub chi: u64,
    pub pon: u64,
    /// Kans: open (on a discard), closed, added to a pon.
    pub open_kan: u64,
    pub closed_kan: u64,
    pub added_kan: u64,
    /// Replies the server did not carry out, by what was asked (`discard`, `riichi`, `tsumo`,
    /// `ron`, `kan`, `chi`, `pon`).
    pub rejected: BTreeMap<String, u64>,
    /// The first few rejected replies, in words.
    pub first_rejected: Vec<String>,
    /// Times a player lost track of its own hand (a message it could not apply); it then plays
    /// tsumogiri until the next deal.
    pub lost_track: u64,
}

impl PlayStats {
    /// The play since `was`, an earlier state of this one; the first rejected move is this one's.
    fn since(&self, was: &PlayStats) -> PlayStats {
        let now = self;
        let rejected = now
            .rejected
            .iter()
            .map(|(k, n)| {
                (
                    k.clone(),
                    n.saturating_sub(*was.rejected.get(k).unwrap_or(&0)),
                )
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        PlayStats {
            hands: now.hands.saturating_sub(was.hands),
            tsumo: now.tsumo.saturating_sub(was.tsumo),
            ron: now.ron.saturating_sub(was.ron),
            draws: now.draws.saturating_sub(was.draws),
            riichi: now.riichi.saturating_sub(was.riichi),
            chi: now.chi.saturating_sub(was.chi),
            pon: now.pon.saturating_sub(was.pon),
            open_kan: now.open_kan.saturating_sub(was.open_kan),
            closed_kan: now.closed_kan.saturating_sub(was.closed_kan),
            added_kan: now.added_kan.saturating_sub(was.added_kan),
            rejected,
            first_rejected: now.first_rejected.clone(),
            lost_track: now.lost_track.saturating_sub(was.lost_track),
        }
    }

    pub fn reject(&mut self, kind: &'static str, what: String) {
        *self.rejected.entry(kind.to_string()).or_default() += 1;
        if self.first_rejected.len() < KEPT_ERRORS {
            self.first_rejected.push(what);
        }
    }

    pub fn rejected_total(&self) -> u64 {
        self.rejected.values().sum()
    }

    pub fn merge(&mut self, other: &PlayStats) {
        self.hands += other.hands;
        self.tsumo += other.tsumo;
        self.ron += other.ron;
        self.draws += other.draws;
        self.riichi += other.riichi;
        self.chi += other.chi;
        self.pon += other.pon;
        self.open_kan += other.open_kan;
        self.closed_kan += other.closed_kan;
        self.added_kan += other.added_kan;
        for (kind, n) in &other.rejected {
            *self.rejected.entry(kind.clone()).or_default() += n;
        }
        for e in &other.first_rejected {
            if self.first_rejected.len() < KEPT_ERRORS {
                self.first_rejected.push(e.clone());
            }
        }
        self.lost_track += other.lost_track;
    }
}
