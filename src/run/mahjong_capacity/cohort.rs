//! One step's new tables, a cohort: a session of their players on its own thread, read as it
//! plays through the recorders its workers share.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use hdrhistogram::Histogram;

use crate::engine::Kept;
use crate::error::Error;
use crate::mahjong::session::{self, Hooks};
use crate::plan::MahjongPlan;
use crate::stats::mahjong::{Recorder, RunResult};
use crate::stats::new_histogram;
use crate::stats::sink::Sink;

/// One step's new tables: a session of their players on its own thread.
pub(super) struct Cohort {
    pub(super) players: usize,
    /// Its worker threads.
    pub(super) threads: usize,
    stop: Arc<AtomicBool>,
    taps: Arc<Mutex<Vec<Kept<Recorder>>>>,
    thread: Option<JoinHandle<Result<RunResult, Error>>>,
    /// Its record when the current step began (empty for the step's new tables): the step's
    /// failures count from here.
    pub(super) opened: Recorder,
    /// Its record when the step's judged window began.
    pub(super) judged_from: Option<Recorder>,
    /// Its own draws' overshoot as the progress line last read it: the draws since are new.
    pub(super) draws_shown: Histogram<u64>,
}

impl Cohort {
    /// `plan`'s session, logging in now on a thread of its own: its players named from
    /// `first_name` on, the open-file check made for the `total` players of every cohort.
    pub(super) fn spawn(
        plan: MahjongPlan,
        first_name: usize,
        total: usize,
    ) -> Result<Cohort, Error> {
        let stop = Arc::new(AtomicBool::new(false));
        let taps = Arc::new(Mutex::new(Vec::new()));
        let hooks = Hooks {
            first_name,
            stop: Some(Arc::clone(&stop)),
            taps: Some(Arc::clone(&taps)),
            open_files_for: Some(total),
        };
        let (players, threads) = (plan.players, plan.options.threads);
        let thread = std::thread::Builder::new()
            .name("tsumo-cohort".to_string())
            .spawn(move || {
                // Each step's tables are a session of their own on the dashboard.
                let feed = crate::dashboard::begin(
                    &plan.options,
                    crate::stats::mahjong::live::Data::default(),
                );
                let result = session::run_with(&plan, hooks);
                if let (Some(feed), Ok(result)) = (feed, &result) {
                    feed.ended(&result.record.timeline.intervals);
                }
                result
            })
            .map_err(|e| Error::Thread(e.to_string()))?;
        Ok(Cohort {
            players,
            threads,
            stop,
            taps,
            thread: Some(thread),
            opened: Recorder::default(),
            judged_from: None,
            draws_shown: new_histogram(),
        })
    }

    /// Tells its players to log out.
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Waits for its session's end: its result (`Err` if its thread panicked); `None` once
    /// it was taken.
    pub(super) fn join(&mut self) -> Option<std::thread::Result<Result<RunResult, Error>>> {
        self.thread.take().map(JoinHandle::join)
    }

    /// Its workers' recorders as they stand: merged, and the players playing now.
    pub(super) fn read(&self) -> (Recorder, u64) {
        let taps = self.taps.lock().unwrap_or_else(PoisonError::into_inner);
        let mut merged = Recorder::default();
        let mut playing = 0;
        for tap in taps.iter() {
            let recorder = tap.borrow_mut().clone();
            playing += recorder.playing_now();
            merged.merge(&recorder);
        }
        (merged, playing)
    }

    /// The worst draw over think (µs) of its own draws since the last call, if any came.
    pub(super) fn new_draws_worst(&mut self) -> Option<u64> {
        let (now, _) = self.read();
        let mut new = now.draw_overshoot.clone();
        // `draws_shown` is an earlier state of the same histogram: never more in any bucket.
        let _ = new.subtract(&self.draws_shown);
        self.draws_shown = now.draw_overshoot.clone();
        (!new.is_empty()).then(|| new.max())
    }

    pub(super) fn ended(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Every one of its tables started a game (its owner saw `kaiju`), or its players failed
    /// on the way.
    pub(super) fn seated(&self, seats: usize) -> bool {
        let (record, _) = self.read();
        let failed: u64 = ["login", "connect", "ready", "formed"]
            .iter()
            .map(|name| record.phases.get(name).map_or(0, |p| p.failed))
            .sum();
        record.games_started * seats as u64 + failed >= self.players as u64
    }

    /// Its share of the current step, from its record `now`: its play over the judged window
    /// (none if that has not begun), its failures since the step began.
    pub(super) fn step_part(&self, now: &Recorder) -> Recorder {
        match &self.judged_from {
            Some(from) => {
                let mut part = now.since(from);
                part.add_failures(&from.since(&self.opened));
                part
            }
            None => {
                let mut part = Recorder::default();
                part.add_failures(&now.since(&self.opened));
                part
            }
        }
    }
}
