//! The session's phases (login, connect, form and play each game, log out) and the board on
//! which a worker's players report each one done, so the worker's coordinator knows when to
//! open the next; and the gauges the progress line reads.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::atomic::AtomicU64;

use tokio::sync::Notify;

use crate::plan::MahjongPlan;
use crate::timing::clock::{self, Nanos};

/// A step of the session, ordered as the session runs (Form and Play of each game in turn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Idle,
    Login,
    Connect,
    /// Form the tables for game `g`.
    Form(u32),
    /// Play game `g` (owners send `START` as it opens).
    Play(u32),
    Logout,
}

impl Phase {
    fn order(self) -> u64 {
        match self {
            Phase::Idle => 0,
            Phase::Login => 1,
            Phase::Connect => 2,
            Phase::Form(g) => 3 + 2 * g as u64,
            Phase::Play(g) => 4 + 2 * g as u64,
            Phase::Logout => u64::MAX,
        }
    }

    /// The phases of a session, in order (lazily: a capacity search's tables play games
    /// without a bound).
    pub fn sequence(plan: &MahjongPlan) -> impl Iterator<Item = Phase> {
        let lockstep = plan.lockstep;
        let games = (0..plan.games).flat_map(move |g| {
            std::iter::once(Phase::Form(g)).chain(lockstep.then_some(Phase::Play(g)))
        });
        [Phase::Login, Phase::Connect]
            .into_iter()
            .chain(games)
            .chain(std::iter::once(Phase::Logout))
    }
}

impl PartialOrd for Phase {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Phase {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.order().cmp(&other.order())
    }
}

/// Counters the main thread reads once a second for the progress line.
#[derive(Debug, Default)]
pub struct SessionGauges {
    pub logged_in: AtomicU64,
    pub connected: AtomicU64,
    pub playing: AtomicU64,
    pub games_completed: AtomicU64,
    pub messages: AtomicU64,
    pub errors: AtomicU64,
    /// Sockets the server side closed, and tries to connect (login, socket, logout) that
    /// failed: what the watch on a server gone (`gone`) looks for.
    pub trouble: AtomicU64,
    /// Set by the main thread once the server is gone: a logout then stops trying.
    pub gone: std::sync::atomic::AtomicBool,
    /// Own draws timed against the think time since the progress line last read them, and the
    /// most any came beyond it (µs): the lag a player feels, led with on the line.
    pub draws: AtomicU64,
    pub draw_over_think_max_us: AtomicU64,
}

/// Which players of a worker are done with the open phase.
pub struct PhaseBoard {
    current: Cell<Phase>,
    opened: Cell<Nanos>,
    done: RefCell<HashSet<usize>>,
    /// Players that finished their session (logged out or gave up): done with every phase.
    retired: RefCell<HashSet<usize>>,
    /// Players done with the open phase or retired, each counted once (kept as players report,
    /// so the coordinator's check is O(1), not a scan of thousands on every report).
    finished: Cell<usize>,
    players: usize,
    pub wake: Notify,
}

impl PhaseBoard {
    pub fn new(players: usize) -> Rc<PhaseBoard> {
        Rc::new(PhaseBoard {
            current: Cell::new(Phase::Idle),
            opened: Cell::new(clock::now()),
            done: RefCell::new(HashSet::new()),
            retired: RefCell::new(HashSet::new()),
            finished: Cell::new(0),
            players,
            wake: Notify::new(),
        })
    }

    pub fn open(&self, phase: Phase) {
        self.current.set(phase);
        self.opened.set(clock::now());
        self.done.borrow_mut().clear();
        self.finished.set(self.retired.borrow().len());
    }

    /// When the open phase opened on this worker (the ramp counts from here).
    pub fn opened_at(&self) -> Nanos {
        self.opened.get()
    }

    /// A player finished `phase` (successfully or not).
    pub fn done(&self, player: usize, phase: Phase) {
        if phase == self.current.get() {
            let first = self.done.borrow_mut().insert(player);
            if first && !self.retired.borrow().contains(&player) {
                self.finished.set(self.finished.get() + 1);
            }
            self.wake.notify_one();
        }
    }

    /// A player finished its session.
    pub fn retire(&self, player: usize) {
        let first = self.retired.borrow_mut().insert(player);
        if first && !self.done.borrow().contains(&player) {
            self.finished.set(self.finished.get() + 1);
        }
        self.wake.notify_one();
    }

    pub fn all_done(&self) -> bool {
        self.finished.get() >= self.players
    }

    pub fn all_retired(&self) -> bool {
        self.retired.borrow().len() >= self.players
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_is_done_when_every_player_reported_or_retired_once() {
        let board = PhaseBoard::new(3);
        board.open(Phase::Login);
        board.done(0, Phase::Login);
        board.done(0, Phase::Login);
        board.retire(1);
        assert!(!board.all_done());
        // A report for another phase does not count.
        board.done(2, Phase::Connect);
        assert!(!board.all_done());
        board.done(2, Phase::Login);
        assert!(board.all_done());
        // The next phase starts with the retired player counted, and a retired player's late
        // report is not counted twice.
        board.open(Phase::Connect);
        board.done(1, Phase::Connect);
        board.done(0, Phase::Connect);
        assert!(!board.all_done());
        board.done(2, Phase::Connect);
        assert!(board.all_done());
        assert!(!board.all_retired());
    }
}
