//! `tsumo mahjong --capacity`: how many players a majiang-server carries within the `--slo`
//! objectives, each step of [`crate::capacity::search`] a number of players.
//!
//! The load grows as real load does: each step's new tables are one more session (a "cohort",
//! `mahjong::session` on its own thread, its players named after the earlier cohorts'), while
//! the earlier cohorts keep playing, game after game. A step is judged once its new tables are
//! seated and playing (each new table's first game started, or its players failed), after `--warmup`,
//! over `--step` of play: the judged window is the difference of every cohort's recorders read
//! at its start and at its end, so the measures cover that window alone; the step's failures
//! (logins and connects that failed, errors, disconnects) count from the moment its new tables
//! began to log in, so a step whose players could not connect is broken, not judged on those
//! that could. A cohort that ends on its own (none of its tables can play) leaves its record
//! to the step it ended in. Each step is saved as a session (a step's slice of the play). On a
//! terminal a live line shows the step, its target, the players playing and how the objectives
//! stand over the window so far. When the search needs fewer players (bisection, a
//! confirmation below), the newest cohorts log out, down to at most the count asked for, tables
//! are added back up to it, and the backlog settles during `--pause` before the next judgement.
//! Every player is logged out at the end — on an answer, a limit, an error or Ctrl-C — and
//! sessions left on the server are listed and make the exit 1.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::output::Outputs;
use super::{error_exit, fail, server_gone};
use crate::capacity::{self, Limit, LoadUnit, StepOutcome, StepRunner};
use crate::engine::{signals, Kept, OwnUsage, ProgressMode};
use crate::error::{Error, ExitStatus};
use crate::mahjong::session::{self, Hooks};
use crate::net::preflight::preflight_blocking;
use crate::plan::{MahjongCapacityPlan, MahjongPlan, RunOptions};
use crate::report;
use crate::report::capacity::SavedSearch;
use crate::report::saved::{LoadedRun, RunData};
use crate::report::session::SavedSession;
use crate::slo::Verdict;
use crate::stats::mahjong::{MahjongRecorder, MahjongResult};
use crate::stats::start::StartRecord;
use crate::sys::machine::MachineUse;
use crate::sys::procstat::Sampler;

/// How often the search looks at its cohorts while it waits.
const POLL: Duration = Duration::from_millis(100);
/// How often the live line is redrawn.
const LIVE_EVERY: Duration = Duration::from_secs(1);

/// `tsumo mahjong --capacity …`: the search, its table and answer, `--json`; exit 0 with an
/// answer, 1 when sessions were left on the server or a cohort's thread panicked (a cohort
/// whose players failed is its step's errors, said on stderr as it ends).
pub fn run(plan: &MahjongCapacityPlan) -> ExitStatus {
    let session = &plan.session;
    if let Err(e) = super::files::of_session(session) {
        return error_exit(&e);
    }
    let mark = match signals::watch() {
        Ok(mark) => mark,
        Err(e) => return error_exit(&e),
    };
    // A server that does not answer is one line before any step (each step's session checks
    // it again).
    if let Err(e) = preflight_blocking(session::probe(session)) {
        return error_exit(&e);
    }
    let mut runner = Cohorts {
        plan,
        mark,
        cohorts: Vec::new(),
        next_name: 0,
        steps: Vec::new(),
        achieved: Vec::new(),
        noise: Vec::new(),
        left: Vec::new(),
        failed: Vec::new(),
        error: None,
        server_failed: None,
        ended: MahjongRecorder::default(),
        live: Live {
            mode: ProgressMode::choose(session.options.progress, session.options.quiet),
            shown: None,
            step: 0,
            load: 0,
            stage: Stage::Seating,
        },
    };
    let search_plan = super::search_plan(&plan.search, session.seats as u64);
    let found = capacity::search(&search_plan, LoadUnit::Players, &mut runner);
    runner.log_out_down_to(0);
    runner.live.mode.finish();
    let Cohorts {
        steps,
        achieved,
        noise,
        left,
        failed,
        error,
        server_failed,
        ..
    } = runner;
    if let (Some(e), true) = (&error, steps.is_empty()) {
        report_left(&left);
        return error_exit(e);
    }
    let roles = found
        .steps
        .iter()
        .take(steps.len())
        .map(|s| {
            let role = s.role.as_str().to_string();
            (role, s.outcome.class().as_str().to_string())
        })
        .collect();
    let mut search = SavedSearch::of_sessions(
        &session.options.label,
        &session.server.url,
        found.saved(),
        roles,
        steps,
        achieved,
    );
    search.part.command = session.options.part.command.clone();
    search.failure = server_failed.clone().or_else(|| failed.first().cloned());
    search.left_on_server.clone_from(&left);
    search.noise = noise;
    let mut outputs = Outputs::of(&session.options);
    outputs.text(|| report::capacity::render(&search));
    outputs.json(|| &search);
    outputs.page(|| LoadedRun::new(RunData::Capacity(Box::new(search.clone())), "search"));
    if let Some(e) = &error {
        report_left(&left);
        return error_exit(e);
    }
    if let Some(line) = &server_failed {
        report_left(&left);
        return fail(line);
    }
    if !left.is_empty() {
        return fail(&left_line(&left));
    }
    if let Some(why) = failed.first() {
        return fail(why);
    }
    outputs.status_or(|| ExitStatus::Ran)
}

fn report_left(left: &[String]) {
    if !left.is_empty() {
        eprintln!("tsumo: {}", left_line(left));
    }
}

/// `2 sessions left on the server (up to 14 days): tsumo12, tsumo13`.
fn left_line(left: &[String]) -> String {
    let shown: Vec<&str> = left.iter().take(10).map(String::as_str).collect();
    let more = if left.len() > shown.len() {
        format!(" and {} more", left.len() - shown.len())
    } else {
        String::new()
    };
    format!(
        "{} session{} left on the server (up to 14 days): {}{more}",
        left.len(),
        if left.len() == 1 { "" } else { "s" },
        shown.join(", ")
    )
}

/// One step's new tables: a session of their players on its own thread.
struct Cohort {
    players: usize,
    /// Its worker threads.
    threads: usize,
    stop: Arc<AtomicBool>,
    taps: Arc<Mutex<Vec<Kept<MahjongRecorder>>>>,
    thread: Option<JoinHandle<Result<MahjongResult, Error>>>,
    /// Its record when the current step began (empty for the step's new tables): the step's
    /// failures count from here.
    opened: MahjongRecorder,
    /// Its record when the step's judged window began.
    judged_from: Option<MahjongRecorder>,
}

impl Cohort {
    /// Its workers' recorders as they stand: merged, and the players playing now.
    fn read(&self) -> (MahjongRecorder, u64) {
        let taps = self.taps.lock().unwrap_or_else(PoisonError::into_inner);
        let mut merged = MahjongRecorder::default();
        let mut playing = 0;
        for tap in taps.iter() {
            let recorder = tap.borrow_mut().clone();
            playing += recorder.playing_now();
            merged.merge(&recorder);
        }
        (merged, playing)
    }

    fn ended(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Every one of its tables started a game (its owner saw `kaiju`), or its players failed
    /// on the way.
    fn seated(&self, seats: usize) -> bool {
        let (record, _) = self.read();
        let failed: u64 = ["login", "connect", "ready", "formed"]
            .iter()
            .map(|name| record.phases.get(name).map_or(0, |p| p.failed))
            .sum();
        record.games_started * seats as u64 + failed >= self.players as u64
    }

    /// Its share of the current step, from its record `now`: its play over the judged window
    /// (none if that has not begun), its failures since the step began.
    fn step_part(&self, now: &MahjongRecorder) -> MahjongRecorder {
        match &self.judged_from {
            Some(from) => {
                let mut part = now.since(from);
                part.add_failures(&from.since(&self.opened));
                part
            }
            None => {
                let mut part = MahjongRecorder::default();
                part.add_failures(&now.since(&self.opened));
                part
            }
        }
    }
}

/// Where a step is, for the live line.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
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
    fn text(self, now: Instant) -> String {
        match self {
            Stage::Pause => "pause".to_string(),
            Stage::Seating => "seating".to_string(),
            Stage::WarmUp => "warm-up".to_string(),
            Stage::Judged(began, length) => format!(
                "judged {}s of {}",
                now.saturating_duration_since(began).min(length).as_secs(),
                super::human(length)
            ),
        }
    }
}

/// The live line's state: shown on a terminal (or each second with `--progress`).
struct Live {
    mode: ProgressMode,
    shown: Option<Instant>,
    /// The step's number and target.
    step: usize,
    load: u64,
    stage: Stage,
}

impl Live {
    /// Clears the live line before a line of its own on stderr.
    fn say(&self, line: &str) {
        self.mode.finish();
        eprintln!("{line}");
    }

    /// Whether the line is due now (each [`LIVE_EVERY`]).
    fn due(&mut self) -> bool {
        if self.mode == ProgressMode::Off {
            return false;
        }
        let due = self.shown.is_none_or(|at| at.elapsed() >= LIVE_EVERY);
        if due {
            self.shown = Some(Instant::now());
        }
        due
    }
}

/// `step 4 at 12 players (held at 8; broke at 16: errors<1): judged 1s of 3s, 8 playing:
/// errors<1 BROKEN (errors 8)`: the live line of a step, with how the search stands
/// ([`super::standing`]); `verdicts` over its window so far, when that has begun.
fn live_line(
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
        let said: Vec<String> = verdicts.iter().map(super::verdict_text).collect();
        line.push_str(": ");
        line.push_str(&said.join(", "));
    }
    line
}

/// Runs the steps: adds and logs out cohorts, judges each window, keeps each one's slice.
struct Cohorts<'a> {
    plan: &'a MahjongCapacityPlan,
    mark: usize,
    /// Oldest first.
    cohorts: Vec<Cohort>,
    /// The next cohort's first player name.
    next_name: usize,
    steps: Vec<SavedSession>,
    achieved: Vec<u64>,
    /// The machine during each judged window, in the order of `steps`.
    noise: Vec<capacity::Noise>,
    /// Sessions tsumo did not see logged out, from every cohort that ended.
    left: Vec<String>,
    /// A cohort's thread that panicked (its players may be left on the server): exit 1.
    failed: Vec<String>,
    /// The error that ended the search (the server did not answer a cohort's first check).
    error: Option<Error>,
    /// The server stopped answering during a step: the search's failure line (exit 1).
    server_failed: Option<String>,
    /// The shares of the current step of the cohorts that ended during it.
    ended: MahjongRecorder,
    live: Live,
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
            self.show_live();
            if Instant::now() >= end || self.signal().is_some() || self.error.is_some() {
                return;
            }
            std::thread::sleep(POLL.min(end.saturating_duration_since(Instant::now())));
        }
    }

    /// Redraws the live line when due: the players playing, and the objectives over the
    /// judged window so far.
    fn show_live(&mut self) {
        if !self.live.due() {
            return;
        }
        let (playing, verdicts) = match self.live.stage {
            Stage::Judged(began, _) => {
                let (record, playing) = self.step_record();
                let slice = self.slice(record, self.live.load, began.elapsed(), None);
                (playing, slice.objectives)
            }
            _ => (self.cohorts.iter().map(|c| c.read().1).sum(), Vec::new()),
        };
        let standing = super::standing(
            self.steps
                .iter()
                .map(|s| (s.plan.players, s.objectives.as_slice())),
        );
        let line = live_line(
            self.live.step,
            self.live.load,
            &standing,
            &self.live.stage.text(Instant::now()),
            playing,
            &verdicts,
        );
        self.live.mode.show_line(&line);
    }

    /// The current step's record so far (every cohort's share, those ended during it too),
    /// and the players playing now.
    fn step_record(&self) -> (MahjongRecorder, u64) {
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
        record: MahjongRecorder,
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
        let result = MahjongResult {
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
            ended_by: "duration".to_string(),
            timed_out: false,
            signals_in_logout: Vec::new(),
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
        self.live.say(&format!(
            "capacity: logging out {} players",
            capacity::grouped(count as u64)
        ));
        // All told first, so they log out at once.
        for cohort in &leaving {
            cohort.stop.store(true, Ordering::SeqCst);
        }
        for mut cohort in leaving {
            let Some(thread) = cohort.thread.take() else {
                continue;
            };
            match thread.join() {
                Ok(Ok(result)) => {
                    let saved = report::mahjong::saved(&result);
                    self.left
                        .extend(result.record.left_on_server.iter().cloned());
                    // Its failures were the steps' errors; said here as well.
                    if let Some(failure) = saved.failure {
                        self.live.say(&format!(
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
        let stop = Arc::new(AtomicBool::new(false));
        let taps = Arc::new(Mutex::new(Vec::new()));
        let hooks = Hooks {
            first_name: self.next_name,
            stop: Some(Arc::clone(&stop)),
            taps: Some(Arc::clone(&taps)),
            open_files_for: Some(total),
        };
        self.next_name += players;
        let thread = std::thread::Builder::new()
            .name("tsumo-cohort".to_string())
            .spawn(move || session::run_with(&plan, hooks));
        match thread {
            Ok(thread) => self.cohorts.push(Cohort {
                players,
                threads,
                stop,
                taps,
                thread: Some(thread),
                opened: MahjongRecorder::default(),
                judged_from: None,
            }),
            Err(e) => self.error = Some(Error::Thread(e.to_string())),
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
            self.show_live();
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
            if let Some(thread) = cohort.thread.take() {
                match thread.join() {
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
                        self.live.say(&format!(
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
        self.live.stage = Stage::Judged(began, self.plan.search.step);
        self.live.shown = None;
        self.wait(self.plan.search.step);
        let elapsed = began.elapsed();
        let (record, playing) = self.step_record();
        let usage = OwnUsage::now().since(own);
        // A slice of sessions still playing: whether they failed is told when they end.
        let saved = self.slice(record, load, elapsed, Some((usage, sampler, start)));
        let noise = noise_of(&saved, machine.and_then(|m| m.since()));
        let mut outcome = report::objectives::step_of_session(&saved);
        // A late reply cannot make the server refuse a player or drop a socket: only a time
        // objective that broke can be tsumo's (as in `step_of_session`).
        let time_broke = saved
            .objectives
            .iter()
            .any(|v| !v.held && v.unit == crate::slo::Unit::Micros);
        if time_broke {
            outcome = outcome.with_noise(&noise);
        }
        outcome.achieved = playing as f64;
        self.noise.push(noise);
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
        self.ended = MahjongRecorder::default();
        self.live.step = number;
        self.live.load = load;
        self.live.stage = stage;
        self.live.shown = None;
    }
}

impl StepRunner for Cohorts<'_> {
    fn run_step(&mut self, load: u64) -> StepOutcome {
        if let Some(stopped) = self.stopped() {
            return stopped;
        }
        let number = self.steps.len() + 1;
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
        self.live.say(&format!(
            "capacity: step {number} at {} players ({} playing on, {} new; {} warm-up, then {} \
             judged)",
            capacity::grouped(load),
            capacity::grouped(playing as u64),
            capacity::grouped(load.saturating_sub(playing as u64)),
            super::human(self.plan.search.warmup),
            super::human(self.plan.search.step)
        ));
        if load_players > playing {
            self.add(load_players - playing, load_players);
            self.wait_seated();
        }
        self.collect_ended();
        if !self.plan.search.warmup.is_zero() {
            self.live.stage = Stage::WarmUp;
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
        self.live.say(&format!(
            "capacity: step {number}: {}",
            super::step_line(
                &outcome,
                &format!(
                    "{} playing",
                    capacity::grouped(outcome.achieved.round() as u64)
                )
            )
        ));
        outcome
    }
}

/// The machine during a judged window: tsumo's reply lateness max (one figure: a session's
/// intervals keep no lateness), and the CPU others used (the machine's busy cores less tsumo's
/// and the sampled servers').
fn noise_of(saved: &SavedSession, machine: Option<MachineUse>) -> capacity::Noise {
    let elapsed = saved.elapsed_s.max(1e-9);
    let tsumo = saved.tsumo.cpu_s / elapsed;
    let server = saved
        .server
        .as_ref()
        .map_or(0.0, |s| s.cpu_percent_mean / 100.0);
    capacity::Noise {
        lateness_max_us: vec![saved.reply_lateness.sampled().map_or(0, |h| h.max)],
        others_cores: machine.map(|m| (m.busy_cores - tsumo - server).max(0.0)),
        steal_cores: machine.map(|m| m.steal_cores),
        cores: machine.map_or(0, |m| m.cores),
    }
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
    fn the_live_line_says_the_step_its_target_the_players_and_the_objectives() {
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
            live_line(4, 12, &standing, "judged 2s of 3s", 8, &verdicts),
            "step 4 at 12 players (held at 8; broke at 16: errors<1): judged 2s of 3s, 8 \
             playing: errors<1 BROKEN (errors 16), draw_overshoot.p99<100ms held \
             (draw_overshoot.p99 31.0ms)"
        );
        let standing = crate::run::standing([(8, &held[..])]);
        assert_eq!(
            live_line(3, 16, &standing, "warm-up", 8, &[]),
            "step 3 at 16 players (held at 8): warm-up, 8 playing"
        );
        assert_eq!(
            crate::run::standing([(24, &both[..])]),
            " (broke at 24: errors<1, draw_overshoot.p99<100ms)"
        );
        // Before the window: no verdicts yet; nothing held or broken yet.
        let standing = crate::run::standing([]);
        assert_eq!(
            live_line(1, 1_024, &standing, "seating", 0, &[]),
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
