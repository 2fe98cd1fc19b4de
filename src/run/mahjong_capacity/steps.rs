//! The steps of a search over players, run over cohorts: each step adds a cohort (or logs
//! the newest out), waits for its tables to be seated, warms up, then judges its window.

use std::time::{Duration, Instant};

use super::cohort::Cohort;
use super::progress::{progress_line, ProgressLine, Stage};
use super::window::{disturbance_of, draws_behind, draws_due};
use crate::capacity::{self, Limit, StepOutcome, StepRunner};
use crate::engine::{signals, OwnUsage, ProgressMode};
use crate::error::Error;
use crate::mahjong::session;
use crate::plan::{MahjongCapacityPlan, MahjongPlan, RunOptions};
use crate::report;
use crate::report::mahjong::saved::SavedSession;
use crate::report::result::SearchStep;
use crate::run::{human, server_gone, standing, step_line};
use crate::stats::mahjong::{Recorder, RunResult};
use crate::stats::start::StartRecord;
use crate::sys::procstat::Sampler;

/// How often the search looks at its cohorts while it waits.
const POLL: Duration = Duration::from_millis(100);

/// What a search over players leaves once every player logged out: each step's slice, and
/// what failed.
pub(super) struct Searched {
    pub(super) steps: Vec<SavedSession>,
    /// The players playing at each step's end.
    pub(super) achieved: Vec<u64>,
    /// The machine during each judged window, in the order of `steps`.
    pub(super) disturbances: Vec<capacity::Disturbance>,
    /// Sessions tsumo did not see logged out.
    pub(super) left: Vec<String>,
    /// A cohort's thread that panicked (its players may be left on the server): exit 1.
    pub(super) failed: Vec<String>,
    /// The error that ended the search (the server did not answer a cohort's first check).
    pub(super) error: Option<Error>,
    /// The server stopped answering during a step: the search's failure line (exit 1).
    pub(super) server_failed: Option<String>,
}

/// Runs the steps: adds and logs out cohorts, judges each window, keeps each one's slice.
pub(super) struct Cohorts<'a> {
    plan: &'a MahjongCapacityPlan,
    mark: usize,
    /// Oldest first.
    cohorts: Vec<Cohort>,
    /// The next cohort's first player name.
    next_name: usize,
    steps: Vec<SavedSession>,
    achieved: Vec<u64>,
    /// The machine during each judged window, in the order of `steps`.
    disturbances: Vec<capacity::Disturbance>,
    /// Each judged step's load and class, for the dashboard's search so far.
    judged: (Vec<u64>, Vec<crate::capacity::Class>),
    /// Sessions tsumo did not see logged out, from every cohort that ended.
    left: Vec<String>,
    /// A cohort's thread that panicked (its players may be left on the server): exit 1.
    failed: Vec<String>,
    /// The error that ended the search (the server did not answer a cohort's first check).
    error: Option<Error>,
    /// The server stopped answering during a step: the search's failure line (exit 1).
    server_failed: Option<String>,
    /// The shares of the current step of the cohorts that ended during it.
    ended: Recorder,
    line: ProgressLine,
}

impl<'a> Cohorts<'a> {
    /// No cohort yet; a signal since `mark` stops the search.
    pub(super) fn new(plan: &'a MahjongCapacityPlan, mark: usize) -> Cohorts<'a> {
        let options = &plan.session.options;
        Cohorts {
            plan,
            mark,
            cohorts: Vec::new(),
            next_name: 0,
            steps: Vec::new(),
            achieved: Vec::new(),
            disturbances: Vec::new(),
            judged: (Vec::new(), Vec::new()),
            left: Vec::new(),
            failed: Vec::new(),
            error: None,
            server_failed: None,
            ended: Recorder::default(),
            line: ProgressLine {
                mode: ProgressMode::choose(options.progress, options.quiet),
                shown: None,
                step: 0,
                load: 0,
                stage: Stage::Seating,
                lag_shown: None,
            },
        }
    }

    /// Logs every player out (each cohort to its last logout), and gives what the search left.
    pub(super) fn end(mut self) -> Searched {
        self.log_out_down_to(0);
        self.line.mode.finish();
        Searched {
            steps: self.steps,
            achieved: self.achieved,
            disturbances: self.disturbances,
            left: self.left,
            failed: self.failed,
            error: self.error,
            server_failed: self.server_failed,
        }
    }
}

impl Cohorts<'_> {
    fn players(&self) -> usize {
        self.cohorts.iter().map(|c| c.players).sum()
    }

    fn signal(&self) -> Option<&'static str> {
        signals::since(self.mark)
    }

    fn stopped(&self) -> Option<StepOutcome> {
        let why = match (&self.error, self.signal()) {
            (_, Some(signal)) => signal.to_string(),
            (Some(_), None) => "a session failed".to_string(),
            (None, None) if self.server_failed.is_some() => "the server failed".to_string(),
            (None, None) => return None,
        };
        Some(StepOutcome {
            achieved: 0.0,
            verdicts: Vec::new(),
            limit: Some(Limit::Stopped(why)),
        })
    }

    /// Waits `length`, or less: a signal, or a session that failed with an error. A cohort
    /// that ends on its own meanwhile is collected (its share kept for the step).
    fn wait(&mut self, length: Duration) {
        let end = Instant::now() + length;
        loop {
            self.collect_ended();
            self.show_progress();
            if Instant::now() >= end || self.signal().is_some() || self.error.is_some() {
                return;
            }
            std::thread::sleep(POLL.min(end.saturating_duration_since(Instant::now())));
        }
    }

    /// Redraws the progress line when due: the players playing, and the objectives over the
    /// judged window so far.
    fn show_progress(&mut self) {
        if !self.line.due() {
            return;
        }
        let (playing, verdicts) = match self.line.stage {
            Stage::Judged(began, _) => {
                let (record, playing) = self.step_record();
                let slice = self.slice(record, self.line.load, began.elapsed(), None);
                (playing, slice.objectives)
            }
            _ => (self.cohorts.iter().map(|c| c.read().1).sum(), Vec::new()),
        };
        let standing = standing(
            self.steps
                .iter()
                .map(|s| (s.plan.players, s.objectives.as_slice())),
        );
        // Led, as a session's line is, with the lag a player feels.
        let worst = self
            .cohorts
            .iter_mut()
            .filter_map(Cohort::new_draws_worst)
            .max();
        self.line.lag_shown = worst.or(self.line.lag_shown);
        let mut line = session::lag_lead(self.plan.session.think, self.line.lag_shown);
        line += &progress_line(
            self.line.step,
            self.line.load,
            &standing,
            &self.line.stage.text(Instant::now()),
            playing,
            &verdicts,
        );
        self.line.mode.show_line(&line);
    }

    /// The current step's record so far (every cohort's share, those ended during it too),
    /// and the players playing now.
    fn step_record(&self) -> (Recorder, u64) {
        let mut record = self.ended.clone();
        let mut playing = 0;
        for cohort in &self.cohorts {
            let (now, playing_now) = cohort.read();
            playing += playing_now;
            record.merge(&cohort.step_part(&now));
        }
        (record, playing)
    }

    /// A step's record as a saved session, its objectives judged.
    fn slice(
        &self,
        record: Recorder,
        load: u64,
        elapsed: Duration,
        usage: Option<(OwnUsage, Option<Sampler>, StartRecord)>,
    ) -> SavedSession {
        let session = &self.plan.session;
        let (cpu_seconds, peak_rss_bytes, server, start) = match usage {
            Some((usage, sampler, start)) => (
                usage.cpu_seconds,
                usage.peak_rss_bytes,
                sampler.map(Sampler::stop),
                start,
            ),
            None => (
                0.0,
                0,
                None,
                StartRecord::new(None, crate::sys::wallclock::unix_now_ns()),
            ),
        };
        let result = RunResult {
            plan: MahjongPlan {
                players: load as usize,
                options: RunOptions {
                    duration: self.plan.search.step,
                    // Every session's own: tsumo's CPU is weighed against all of them.
                    threads: self.cohorts.iter().map(|c| c.threads).sum::<usize>().max(1),
                    ..session.options.clone()
                },
                ..session.clone()
            },
            elapsed,
            interrupted: self.signal().is_some(),
            ended_by: crate::engine::EndReason::Duration,
            timed_out: false,
            signals_in_logout: Vec::new(),
            requests_log: None,
            record,
            cpu_seconds,
            peak_rss_bytes,
            server,
            start,
        };
        SavedSession::from_result(&result)
    }

    /// Logs out the newest cohorts while more than `players` play, each to its last logout.
    fn log_out_down_to(&mut self, players: usize) {
        let mut keep = self.cohorts.len();
        let mut playing = self.players();
        while keep > 0 && playing > players {
            keep -= 1;
            playing -= self.cohorts[keep].players;
        }
        let leaving: Vec<Cohort> = self.cohorts.drain(keep..).collect();
        if leaving.is_empty() {
            return;
        }
        let count: usize = leaving.iter().map(|c| c.players).sum();
        self.line.say(&format!(
            "capacity: logging out {} players",
            capacity::grouped(count as u64)
        ));
        // All told first, so they log out at once.
        for cohort in &leaving {
            cohort.stop();
        }
        for mut cohort in leaving {
            let Some(ended) = cohort.join() else {
                continue;
            };
            match ended {
                Ok(Ok(result)) => {
                    let saved = report::mahjong::saved(&result);
                    self.left
                        .extend(result.record.left_on_server.iter().cloned());
                    // Its failures were the steps' errors; said here as well.
                    if let Some(failure) = saved.failure {
                        self.line.say(&format!(
                            "capacity: a session of {} players: {failure}",
                            capacity::grouped(cohort.players as u64)
                        ));
                    }
                }
                Ok(Err(e)) => {
                    if self.error.is_none() {
                        self.error = Some(e);
                    }
                }
                Err(_) => self
                    .failed
                    .push("a session's thread panicked: its players may be left".to_string()),
            }
        }
    }

    /// A cohort of `players` more, logging in now.
    fn add(&mut self, players: usize, total: usize) {
        let session = &self.plan.session;
        let threads = session.options.threads.min(players / session.seats).max(1);
        let plan = MahjongPlan {
            players,
            options: RunOptions {
                threads,
                duration: Duration::from_secs(u64::from(u32::MAX)),
                json: None,
                html: None,
                quiet: true,
                progress: false,
                objectives: Vec::new(),
                ..session.options.clone()
            },
            ..session.clone()
        };
        let first_name = self.next_name;
        self.next_name += players;
        match Cohort::spawn(plan, first_name, total) {
            Ok(cohort) => self.cohorts.push(cohort),
            Err(e) => self.error = Some(e),
        }
    }

    /// Waits until the newest cohort's players are seated and playing (or failed, or it
    /// ended), within a bound.
    fn wait_seated(&mut self) {
        let Some(players) = self.cohorts.last().map(|c| c.players) else {
            return;
        };
        let session = &self.plan.session;
        let ramp = session.ramp.saturating_mul(players as u32);
        let bound = ramp.saturating_mul(2)
            + session.connect_timeout.saturating_mul(2)
            + Duration::from_secs(30);
        let end = Instant::now() + bound;
        let seats = session.seats;
        while Instant::now() < end
            && self.signal().is_none()
            && self
                .cohorts
                .last()
                .is_some_and(|newest| !newest.ended() && !newest.seated(seats))
        {
            self.show_progress();
            std::thread::sleep(POLL);
        }
    }

    /// A cohort ended by itself (its session failed, or the server closed it): what it said.
    fn collect_ended(&mut self) {
        let mut index = 0;
        while index < self.cohorts.len() {
            if !self.cohorts[index].ended() {
                index += 1;
                continue;
            }
            let mut cohort = self.cohorts.remove(index);
            if let Some(ended) = cohort.join() {
                match ended {
                    Ok(Ok(result)) => {
                        self.left
                            .extend(result.record.left_on_server.iter().cloned());
                        self.ended.merge(&cohort.step_part(&result.record));
                        let saved = report::mahjong::saved(&result);
                        // A signal ended it: the search stops on it too. Otherwise none of its
                        // tables could play: its failures are the step's.
                        let why = match saved.failure {
                            Some(why) => why,
                            None if result.interrupted => continue,
                            None => "none of its tables could play".to_string(),
                        };
                        self.line.say(&format!(
                            "capacity: a session of {} players ended: {why}",
                            capacity::grouped(cohort.players as u64)
                        ));
                    }
                    Ok(Err(e)) => {
                        if self.error.is_none() {
                            self.error = Some(e);
                        }
                    }
                    Err(_) => self.failed.push("a session's thread panicked".to_string()),
                }
            }
        }
    }

    /// The judged window: every cohort read at its start and its end (its failures since the
    /// step began added).
    fn judge(&mut self, load: u64) -> StepOutcome {
        for cohort in &mut self.cohorts {
            cohort.judged_from = Some(cohort.read().0);
        }
        let session = &self.plan.session;
        let own = OwnUsage::now();
        let sampler = if session.options.server_pids.is_empty() {
            None
        } else {
            Sampler::start(&session.options.server_pids, Duration::from_secs(1)).ok()
        };
        let machine = crate::sys::machine::MachineStat::read();
        let began = Instant::now();
        let start = StartRecord::new(None, crate::sys::wallclock::unix_now_ns());
        self.line.stage = Stage::Judged(began, self.plan.search.step);
        self.line.shown = None;
        self.wait(self.plan.search.step);
        let elapsed = began.elapsed();
        let (record, playing) = self.step_record();
        let usage = OwnUsage::now().since(own);
        // A slice of sessions still playing: whether they failed is told when they end.
        let mut saved = self.slice(record, load, elapsed, Some((usage, sampler, start)));
        let disturbance = disturbance_of(&saved, machine.and_then(|m| m.since()));
        let mut outcome = saved.step_outcome();
        // Far fewer draws than the players' think time makes due: the server did not keep
        // their pace (it froze, say), so the few draws measured cannot vouch for the load.
        let behind = draws_behind(&saved, playing, elapsed);
        if let Some(verdict) = &behind {
            self.line.say(&format!(
                "capacity: step {} saw {} draws where {} were due",
                self.steps.len() + 1,
                saved.draw_overshoot.count,
                draws_due(&saved, playing, elapsed)
            ));
            outcome.verdicts.push(verdict.clone());
            saved.objectives.push(verdict.clone());
        }
        // A late reply cannot make the server refuse a player or drop a socket: only a time
        // objective that broke can be tsumo's (as in its `SearchStep::step_outcome`), or a
        // pace tsumo's stall slowed.
        let time_broke = behind.is_some()
            || saved
                .objectives
                .iter()
                .any(|v| !v.held && v.unit == crate::slo::Unit::Micros);
        if time_broke {
            outcome = outcome.with_disturbance(&disturbance);
        }
        outcome.achieved = playing as f64;
        self.disturbances.push(disturbance);
        self.steps.push(saved);
        self.achieved.push(playing);
        outcome
    }

    /// A new step begins: its failures count from every cohort's record now.
    fn begin_step(&mut self, number: usize, load: u64, stage: Stage) {
        for cohort in &mut self.cohorts {
            cohort.opened = cohort.read().0;
            cohort.judged_from = None;
        }
        self.ended = Recorder::default();
        self.line.step = number;
        self.line.load = load;
        self.line.stage = stage;
        self.line.shown = None;
    }
}

impl StepRunner for Cohorts<'_> {
    fn run_step(&mut self, load: u64) -> StepOutcome {
        if let Some(stopped) = self.stopped() {
            return stopped;
        }
        let number = self.steps.len() + 1;
        crate::run::live_step_begins(capacity::LoadUnit::Players, load);
        let load_players = load as usize;
        // A session that ended since (none of its tables could play) no longer counts.
        self.collect_ended();
        let had = self.players();
        if load_players < had {
            self.log_out_down_to(load_players);
            if !self.plan.search.pause.is_zero() {
                self.begin_step(number, load, Stage::Pause);
                self.wait(self.plan.search.pause);
            }
        }
        self.begin_step(number, load, Stage::Seating);
        let playing = self.players();
        self.line.say(&format!(
            "capacity: step {number} at {} players ({} playing on, {} new; {} warm-up, then {} \
             judged)",
            capacity::grouped(load),
            capacity::grouped(playing as u64),
            capacity::grouped(load.saturating_sub(playing as u64)),
            human(self.plan.search.warmup),
            human(self.plan.search.step)
        ));
        if load_players > playing {
            self.add(load_players - playing, load_players);
            self.wait_seated();
        }
        self.collect_ended();
        if !self.plan.search.warmup.is_zero() {
            self.line.stage = Stage::WarmUp;
            self.wait(self.plan.search.warmup);
        }
        self.collect_ended();
        if let Some(stopped) = self.stopped() {
            return stopped;
        }
        let outcome = self.judge(load);
        self.collect_ended();
        let mut outcome = match self.stopped() {
            Some(stopped) => StepOutcome {
                limit: stopped.limit,
                ..outcome
            },
            None => outcome,
        };
        // Players disconnected or failed: the server overloaded, or gone (then the search
        // failed, this step's verdicts kept as measured).
        let troubled = self
            .steps
            .last()
            .is_some_and(|s| s.disconnects + s.errors > 0);
        if troubled {
            if let Err(e) = server_gone::check(session::probe(&self.plan.session)) {
                let load = format!("{} players", capacity::grouped(load));
                self.server_failed = Some(server_gone::line(number, &load, &e));
                outcome.limit = Some(Limit::ServerFailed(e.to_string()));
            }
        }
        let said = step_line(
            &outcome,
            &format!(
                "{} playing",
                capacity::grouped(outcome.achieved.round() as u64)
            ),
        );
        self.line.say(&format!("capacity: step {number}: {said}"));
        let shown = format!(
            "Step {number} at {} players: {said}",
            capacity::grouped(load)
        );
        crate::run::live_step_judged(&outcome, &shown);
        self.judged.0.push(load);
        self.judged.1.push(outcome.class());
        let session = &self.plan.session;
        crate::run::live_search_so_far(
            (&session.options.label, &session.server.url),
            capacity::LoadUnit::Players,
            &self.steps,
            (&self.judged.0, &self.judged.1),
        );
        outcome
    }
}
