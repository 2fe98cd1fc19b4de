//! The start gate: every worker gets ready (connects its connections, say), then all start their
//! schedules at one common instant. A worker that fails before it is ready still passes the gate,
//! so the main thread never waits for ever.

use std::sync::{Condvar, Mutex, PoisonError};

use crate::timing::clock::{self, Nanos};

#[derive(Default)]
struct State {
    ready: usize,
    /// Set when the gate opens.
    t0: Option<Nanos>,
    /// Per worker: counted as ready already.
    passed: Vec<bool>,
}

pub struct StartGate {
    workers: usize,
    state: Mutex<State>,
    changed: Condvar,
}

impl StartGate {
    pub fn new(workers: usize) -> StartGate {
        StartGate {
            workers,
            state: Mutex::new(State {
                passed: vec![false; workers],
                ..State::default()
            }),
            changed: Condvar::new(),
        }
    }

    /// Worker `index` is ready: waits for the gate to open and returns the start time.
    pub fn pass(&self, index: usize) -> Nanos {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.count(&mut state, index);
        loop {
            if let Some(t0) = state.t0 {
                return t0;
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Worker `index` ended (or failed) without passing the gate: count it, do not wait.
    pub fn leave(&self, index: usize) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        self.count(&mut state, index);
    }

    fn count(&self, state: &mut State, index: usize) {
        if let Some(passed) = state.passed.get_mut(index) {
            if !*passed {
                *passed = true;
                state.ready += 1;
                self.changed.notify_all();
            }
        }
    }

    /// Main thread: waits for every worker, then opens the gate now; returns the start time.
    pub fn open_now(&self) -> Nanos {
        self.wait_ready();
        self.open(clock::now())
    }

    /// Main thread: waits until every worker is ready (or has left).
    pub fn wait_ready(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while state.ready < self.workers {
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Opens the gate with the schedules' start `t0` (`--start-at`'s instant, even when that
    /// has passed: the schedules keep the run's phases, and what fell due counts as late).
    pub fn open(&self, t0: Nanos) -> Nanos {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let t0 = *state.t0.get_or_insert(t0);
        self.changed.notify_all();
        t0
    }

    /// Opens the gate without waiting (the run is abandoned before it started).
    pub fn open_at_once(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.t0.get_or_insert_with(clock::now);
        self.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn every_worker_starts_at_the_same_time_and_a_failed_one_does_not_block() {
        let gate = Arc::new(StartGate::new(3));
        let handles: Vec<_> = (0..2)
            .map(|i| {
                let gate = Arc::clone(&gate);
                std::thread::spawn(move || gate.pass(i))
            })
            .collect();
        gate.leave(2);
        let t0 = gate.open_now();
        for h in handles {
            assert_eq!(h.join().unwrap(), t0);
        }
    }
}
