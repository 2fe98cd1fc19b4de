//! `tsumo mahjong --capacity`: how many players a majiang-server carries within the `--slo`
//! objectives, each step of [`crate::capacity::search`] a number of players.
//!
//! The load grows as real load does: each step's new tables are one more session (a "cohort",
//! `mahjong::session` on its own thread, its players named after the earlier cohorts'), while
//! the earlier cohorts keep playing, game after game. A step is judged once its new tables are
//! seated and playing (each new table's first game started, or its players failed), after `--warmup`,
//! over `--step` of play: the judged window is the difference of every cohort's recorders read
//! at its start and at its end, so the measures cover that window alone; it is saved as a
//! session (a step's slice of the play). When the search needs fewer players (bisection, a
//! confirmation below), the newest cohorts log out, down to at most the count asked for, tables
//! are added back up to it, and the backlog settles during `--pause` before the next judgement.
//! Every player is logged out at the end — on an answer, a limit, an error or Ctrl-C — and
//! sessions left on the server are listed and make the exit 1.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{check_outputs, error_exit, fail};
use crate::capacity::{self, Limit, LoadUnit, SearchPlan, StepOutcome, StepRunner};
use crate::engine::{signals, Kept, OwnUsage};
use crate::error::{Error, ExitStatus};
use crate::mahjong::session::{self, Hooks};
use crate::net::preflight::preflight_blocking;
use crate::plan::{JsonOut, MahjongCapacityPlan, MahjongPlan};
use crate::report;
use crate::report::capacity::SavedSearch;
use crate::report::saved::{LoadedRun, RunData};
use crate::report::session::SavedSession;
use crate::stats::mahjong::{MahjongRecorder, MahjongResult};
use crate::stats::start::StartRecord;
use crate::sys::procstat::Sampler;

/// How often the search looks at its cohorts while it waits.
const POLL: Duration = Duration::from_millis(100);

/// `tsumo mahjong --capacity …`: the search, its table and answer, `--json`; exit 0 with an
/// answer, 1 when sessions were left on the server or a cohort failed.
pub fn run(plan: &MahjongCapacityPlan) -> ExitStatus {
    let session = &plan.session;
    if let Err(e) = check_outputs(session.json.as_ref(), None) {
        return error_exit(&e);
    }
    if let Err(e) = super::check_html(session.html.as_deref(), session.json.as_ref()) {
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
        left: Vec::new(),
        failed: Vec::new(),
        error: None,
    };
    let search_plan = SearchPlan {
        from: plan.from,
        to: plan.to,
        resolution: plan.resolution,
        growth: SearchPlan::GROWTH,
        granularity: session.seats as u64,
    };
    let found = capacity::search(&search_plan, LoadUnit::Players, &mut runner);
    runner.log_out_down_to(0);
    let Cohorts {
        steps,
        achieved,
        left,
        failed,
        error,
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
    let search = SavedSearch::of_sessions(
        &session.label,
        &session.server.url,
        found.saved(),
        roles,
        steps,
        achieved,
    );
    if !session.quiet && session.json != Some(JsonOut::Stdout) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(report::capacity::render(&search).as_bytes());
        let _ = out.flush();
    }
    let mut status = ExitStatus::Ran;
    if let Some(json) = &session.json {
        if let Err(e) = report::schema::write_value(&search, json) {
            status = fail(&format_args!("--json {e}"));
        }
    }
    if let Some(path) = &session.html {
        let loaded = LoadedRun::new(RunData::Capacity(Box::new(search.clone())), "search");
        if let Err(e) = super::write_page(path, loaded) {
            status = fail(&e);
        }
    }
    if let Some(e) = &error {
        report_left(&left);
        return error_exit(e);
    }
    if !left.is_empty() {
        return fail(&left_line(&left));
    }
    if let Some(why) = failed.first() {
        return fail(why);
    }
    status
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
    stop: Arc<AtomicBool>,
    taps: Arc<Mutex<Vec<Kept<MahjongRecorder>>>>,
    thread: Option<JoinHandle<Result<MahjongResult, Error>>>,
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
    /// Sessions tsumo did not see logged out, from every cohort that ended.
    left: Vec<String>,
    /// Cohorts that failed as sessions (most players failed, the server stopped answering).
    failed: Vec<String>,
    /// The error that ended the search (the server did not answer a cohort's first check).
    error: Option<Error>,
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
            (None, None) => return None,
        };
        Some(StepOutcome {
            achieved: 0.0,
            verdicts: Vec::new(),
            limit: Some(Limit::Stopped(why)),
        })
    }

    /// Waits `length`, or less: a signal, or a cohort that ended on its own.
    fn wait(&self, length: Duration) {
        let end = Instant::now() + length;
        while Instant::now() < end && self.signal().is_none() && !self.any_ended() {
            std::thread::sleep(POLL.min(end.saturating_duration_since(Instant::now())));
        }
    }

    fn any_ended(&self) -> bool {
        self.cohorts.iter().any(Cohort::ended)
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
        eprintln!(
            "capacity: logging out {} players",
            capacity::grouped(count as u64)
        );
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
                    if let Some(failure) = saved.failure {
                        self.failed.push(failure);
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
        let plan = MahjongPlan {
            players,
            threads: session.threads.min(players / session.seats).max(1),
            duration: Duration::from_secs(u64::from(u32::MAX)),
            json: None,
            html: None,
            quiet: true,
            progress: false,
            objectives: Vec::new(),
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
                stop,
                taps,
                thread: Some(thread),
            }),
            Err(e) => self.error = Some(Error::Thread(e.to_string())),
        }
    }

    /// Waits until the newest cohort's players are seated and playing, within a bound.
    fn wait_seated(&self) {
        let Some(newest) = self.cohorts.last() else {
            return;
        };
        let session = &self.plan.session;
        let ramp = session.ramp.saturating_mul(newest.players as u32);
        let bound = ramp.saturating_mul(2)
            + session.connect_timeout.saturating_mul(2)
            + Duration::from_secs(30);
        let end = Instant::now() + bound;
        while Instant::now() < end
            && self.signal().is_none()
            && !newest.ended()
            && !newest.seated(session.seats)
        {
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
                        let saved = report::mahjong::saved(&result);
                        // A signal ended it: the search stops on it too, not a failure.
                        match saved.failure {
                            Some(why) => self.failed.push(why),
                            None if result.interrupted => {}
                            None => self.failed.push(format!(
                                "a session of {} players ended early",
                                cohort.players
                            )),
                        }
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

    /// The judged window: every cohort read at its start and its end.
    fn judge(&mut self, load: u64) -> StepOutcome {
        let session = &self.plan.session;
        let before: Vec<MahjongRecorder> = self.cohorts.iter().map(|c| c.read().0).collect();
        let own = OwnUsage::now();
        let sampler = if session.server_pids.is_empty() {
            None
        } else {
            Sampler::start(&session.server_pids, Duration::from_secs(1)).ok()
        };
        let began = Instant::now();
        let start = StartRecord::new(None, crate::sys::wallclock::unix_now_ns());
        self.wait(self.plan.step);
        let elapsed = began.elapsed();
        let mut record = MahjongRecorder::default();
        let mut playing = 0;
        for (cohort, before) in self.cohorts.iter().zip(&before) {
            let (now, playing_now) = cohort.read();
            playing += playing_now;
            record.merge(&now.since(before));
        }
        let usage = OwnUsage::now().since(own);
        let result = MahjongResult {
            plan: MahjongPlan {
                players: load as usize,
                duration: self.plan.step,
                ..session.clone()
            },
            elapsed,
            interrupted: self.signal().is_some(),
            ended_by: "duration".to_string(),
            timed_out: false,
            signals_in_logout: Vec::new(),
            record,
            cpu_seconds: usage.cpu_seconds,
            peak_rss_bytes: usage.peak_rss_bytes,
            server: sampler.map(Sampler::stop),
            start,
        };
        // A slice of sessions still playing: whether they failed is told when they end.
        let saved = SavedSession::from_result(&result);
        let mut outcome = report::objectives::step_of_session(&saved);
        outcome.achieved = playing as f64;
        self.steps.push(saved);
        self.achieved.push(playing);
        outcome
    }
}

impl StepRunner for Cohorts<'_> {
    fn run_step(&mut self, load: u64) -> StepOutcome {
        if let Some(stopped) = self.stopped() {
            return stopped;
        }
        let number = self.steps.len() + 1;
        let load_players = load as usize;
        let had = self.players();
        if load_players < had {
            self.log_out_down_to(load_players);
            if !self.plan.pause.is_zero() {
                self.wait(self.plan.pause);
            }
        }
        let playing = self.players();
        eprintln!(
            "capacity: step {number} at {} players ({} playing on, {} new; {} warm-up, then {} \
             judged)",
            capacity::grouped(load),
            capacity::grouped(playing as u64),
            capacity::grouped(load.saturating_sub(playing as u64)),
            super::human(self.plan.warmup),
            super::human(self.plan.step)
        );
        if load_players > playing {
            self.add(load_players - playing, load_players);
            self.wait_seated();
        }
        if !self.plan.warmup.is_zero() {
            self.wait(self.plan.warmup);
        }
        self.collect_ended();
        if let Some(stopped) = self.stopped() {
            return stopped;
        }
        let outcome = self.judge(load);
        self.collect_ended();
        let outcome = match self.stopped() {
            Some(stopped) => StepOutcome {
                limit: stopped.limit,
                ..outcome
            },
            None => outcome,
        };
        eprintln!(
            "capacity: step {number}: {}",
            super::step_line(
                &outcome,
                &format!(
                    "{} playing",
                    capacity::grouped(outcome.achieved.round() as u64)
                )
            )
        );
        outcome
    }
}
