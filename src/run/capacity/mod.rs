//! `tsumo capacity` for HTTP: each step of [`crate::capacity::search`] is one complete
//! open-loop run through `web::run`, as an ordinary run makes it, at `-R load` for `--step`,
//! after an unjudged warm-up run at the same load and followed by a pause (a judged run ends
//! early once its errors broke beyond doubt: [`crate::capacity::EndEarly`]); it is judged by the
//! `--slo` objectives on its saved run (its `SearchStep::step_outcome`). The table of
//! steps, the answer and what broke first are printed at the end; `--json` saves the answer
//! and every step's full run. A fixed staircase (`--steps`) runs [`crate::capacity::staircase`]
//! instead; with `--start-at`, each run starts on its own instant at a fixed offset from it
//! (warm-up, step and pause are fixed lengths), so shards on several machines run each step
//! together without talking, each at its share of the step's rate.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use super::output::Outputs;
use super::pool::{Next, Pool, Try};
use super::{error_exit, fail, server_gone, steady};
use crate::capacity::{
    self, Class, Disturbance, EndEarly, Limit, LoadUnit, StepOutcome, StepRunner,
};
use crate::engine::{signals, EndReason};
use crate::error::{Error, ExitStatus};
use crate::plan::{CapacityPlan, Plan, RunOptions};
use crate::report;
use crate::report::capacity::SavedSearch;
use crate::report::http::saved::SavedRun;
use crate::report::result::SearchStep;
use crate::report::schema::SavedPart;
use crate::report::tools::saved::{LoadedRun, RunData};
use crate::stats::format::format_time_us;
use crate::stats::start::StartRecord;
use crate::sys::machine::{MachineStat, MachineUse};
use crate::{sys, web};

/// The default `--max-connections`, when the open-file limit leaves room for it.
mod step;

use step::{disturbance_of, ended_early, load_said, unreachable_outcome};

const DEFAULT_MAX_CONNECTIONS: usize = 10_000;

/// `tsumo capacity …`: the search, its table and answer, `--json`; exit 0 with an answer, 1
/// when a step's run failed.
pub fn run(plan: &CapacityPlan) -> ExitStatus {
    super::with_dashboard(&plan.run.options, || search(plan))
}

fn search(plan: &CapacityPlan) -> ExitStatus {
    // Files first, then the script: a search that cannot run says so before step 1.
    let checked = super::files::of_run(&plan.run).and_then(|()| {
        plan.run
            .script
            .as_deref()
            .map_or(Ok(()), crate::script::check)
    });
    if let Err(e) = checked {
        return error_exit(&e);
    }
    let pool = match pool_of(plan) {
        Ok(pool) => pool,
        Err(e) => return error_exit(&e),
    };
    let mark = match signals::watch() {
        Ok(mark) => mark,
        Err(e) => return error_exit(&e),
    };
    let mut runner = HttpSteps {
        plan,
        pool,
        mark,
        runs: Vec::new(),
        error: None,
        failed: None,
        last_end: None,
        called: 0,
        first_start: None,
        server_failed: None,
        server_bound_at: None,
        disturbances: Vec::new(),
        classes: Vec::new(),
    };
    let mut found = match &plan.staircase {
        Some(loads) => capacity::staircase(loads, LoadUnit::RequestsPerSec, &mut runner),
        None => {
            let search_plan = super::search_plan(&plan.search, 1);
            capacity::search(&search_plan, LoadUnit::RequestsPerSec, &mut runner)
        }
    };
    found.interference = Disturbance::interference(&runner.disturbances);
    let error = runner.error.take();
    let failed = runner.failed.take();
    let server_failed = runner.server_failed.take();
    if let (Some(e), true) = (&error, runner.runs.is_empty()) {
        return error_exit(e);
    }
    let roles = found
        .steps
        .iter()
        .take(runner.runs.len())
        .map(|s| (s.role, s.outcome.class()))
        .collect();
    let first_start = runner.first_start.take();
    let mut search = SavedSearch::new(
        &plan.run.options.label,
        &plan.run.target.url,
        found.saved(),
        roles,
        runner.runs,
        Vec::new(),
    );
    search.part.command = plan.run.options.part.command.clone();
    search.failure.clone_from(&server_failed);
    search.disturbances = runner.disturbances;
    if let Some(loads) = &plan.staircase {
        // A staircase is a part of a run that `tsumo merge` puts together with its shards.
        search.staircase = loads.clone();
        // A shard's runs are at its share of the rate: the held step by its place, not its rate.
        search.server = found
            .held
            .and_then(|i| search.steps.get(i))
            .and_then(|s| s.server.clone());
        if let Some(start) = &first_start {
            search.part = SavedPart::of(&plan.run.options.part, start);
        }
    }
    let mut outputs = Outputs::of(&plan.run.options);
    outputs.text(|| report::capacity::text::render(&search));
    outputs.json(|| &search);
    outputs.page(|| LoadedRun::new(RunData::Capacity(Box::new(search.clone())), "search"));
    outputs.judged(|| {
        vec![LoadedRun::new(
            RunData::Capacity(Box::new(search.clone())),
            "search",
        )]
    });
    if let Some(e) = &error {
        return error_exit(e);
    }
    if let Some(e) = server_failed.as_ref().or(failed.as_ref()) {
        return fail(e);
    }
    outputs.status_or(|| ExitStatus::Ran)
}

/// Between a scheduled staircase's warm-up and its judged run: the warm-up's last responses
/// and the next run's connects fit in it, so the judged run's first sends are not late on
/// their schedule (a run that starts past its instant sends behind it, and tsumo's lateness
/// would make the step tsumo's limit).
const SETTLE: Duration = Duration::from_millis(250);

/// A search's connections: from `-c` to `--max-connections`, which must fit under the
/// open-file limit (refused before any traffic); by default as many as fit, up to
/// [`DEFAULT_MAX_CONNECTIONS`]. A staircase runs every step on `-c`.
fn pool_of(plan: &CapacityPlan) -> Result<Pool, Error> {
    let floor = plan.run.connections;
    if plan.staircase.is_some() {
        return Ok(Pool { floor, cap: floor });
    }
    let threads = plan.run.options.threads;
    let (soft, hard) = sys::raise_open_files();
    let room = |limit: u64| {
        let overhead = sys::fds_needed(0, threads);
        usize::try_from(limit.saturating_sub(overhead)).unwrap_or(usize::MAX)
    };
    let cap = match plan.max_connections {
        Some(cap) => {
            let needed = sys::fds_needed(cap, threads);
            if soft != 0 && needed > soft {
                return Err(Error::Limits(format!(
                    "--max-connections {cap} needs about {needed} open files, but the limit is \
                     {soft} (hard limit {hard}): raise it with `ulimit -n {needed}` or give at \
                     most --max-connections {}",
                    room(soft)
                )));
            }
            cap
        }
        None if soft == 0 => DEFAULT_MAX_CONNECTIONS,
        None => DEFAULT_MAX_CONNECTIONS.min(room(soft)),
    };
    Ok(Pool {
        floor,
        cap: cap.max(floor),
    })
}

/// Runs the steps and keeps each one's saved run.
struct HttpSteps<'a> {
    plan: &'a CapacityPlan,
    /// How many connections each step opens.
    pool: Pool,
    /// The process's signals are read from here: one stops the search.
    mark: usize,
    runs: Vec<SavedRun>,
    /// The error that ended the search (a step's run failed: the target did not answer, a
    /// script that does not load), with its own exit status.
    error: Option<Error>,
    /// A script error during a step's run (exit 1).
    failed: Option<String>,
    /// When the previous step ended: the pause runs from there.
    last_end: Option<Instant>,
    /// Steps asked for so far: a staircase's step k starts on its own instant.
    called: usize,
    /// The first run's start (a staircase's start, against `--start-at`).
    first_start: Option<StartRecord>,
    /// The server stopped answering during a step: the search's failure line (exit 1).
    server_failed: Option<String>,
    /// The lowest load at which more connections carried no more: the pool is not tried
    /// again at or above it.
    server_bound_at: Option<u64>,
    /// The machine during each judged run, in the order of `runs`.
    disturbances: Vec<Disturbance>,
    /// Each judged step's class (`held`, `broke`, …), for the dashboard's search so far.
    classes: Vec<crate::capacity::Class>,
}

impl HttpSteps<'_> {
    /// One run at `load` for `duration`, its files left to the search; its progress line
    /// (on a terminal, or with `--progress`) begins with the step, its target and how the
    /// objectives stood so far.
    fn step_plan(&self, load: u64, connections: usize, duration: Duration, judged: bool) -> Plan {
        self.step_plan_ending(load, connections, duration, judged, None)
    }

    /// [`Self::step_plan`], the judged run ending early on `end_early`.
    fn step_plan_ending(
        &self,
        load: u64,
        connections: usize,
        duration: Duration,
        judged: bool,
        end_early: Option<EndEarly>,
    ) -> Plan {
        let phase = if judged { "" } else { " warm-up" };
        let mut part = self.plan.run.options.part.clone();
        part.start_at = self.start_at(judged);
        let shards = part.shard.count.max(1) as u64;
        let options = &self.plan.run.options;
        let show = !options.quiet && std::io::stderr().is_terminal();
        Plan {
            options: RunOptions {
                progress: options.progress || show,
                part,
                duration,
                json: None,
                html: None,
                quiet: true,
                objectives: if judged {
                    options.objectives.clone()
                } else {
                    Vec::new()
                },
                ..options.clone()
            },
            progress_prefix: format!(
                "step {} at {} req/s{}{phase}: ",
                self.runs.len() + 1,
                capacity::grouped(load),
                self.standing()
            ),
            // The shards together send the step's rate (the CLI refused a rate that does not
            // split evenly).
            rate: Some(load / shards),
            connections,
            end_early,
            hgrm: None,
            hlog: None,
            requests: None,
            ..self.plan.run.clone()
        }
    }

    /// A staircase's run with `--start-at` starts on its own instant: step k's warm-up at
    /// `--start-at + k × (warm-up + step + pause)`, its judged run [`SETTLE`] (or the pause, if
    /// shorter) after the warm-up's end, taken from the pause.
    fn start_at(&self, judged: bool) -> Option<u64> {
        let start_at = self.plan.run.options.part.start_at?;
        if self.plan.staircase.is_none() {
            return Some(start_at);
        }
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let stride =
            nanos(self.plan.search.warmup + self.plan.search.step + self.plan.search.pause);
        let step = self.called.saturating_sub(1) as u64;
        let warmup = match (judged, self.plan.search.warmup.is_zero()) {
            (true, false) => nanos(self.plan.search.warmup + SETTLE.min(self.plan.search.pause)),
            _ => 0,
        };
        Some(
            start_at
                .saturating_add(stride.saturating_mul(step))
                .saturating_add(warmup),
        )
    }

    /// Keeps the first run's start record.
    fn started(&mut self, start: &StartRecord) {
        if self.first_start.is_none() {
            self.first_start = Some(start.clone());
        }
    }

    fn stopped(&self) -> Option<StepOutcome> {
        let failed = self.failed.is_some() || self.error.is_some() || self.server_failed.is_some();
        let why = match (failed, signals::since(self.mark)) {
            (true, _) => "the run failed".to_string(),
            (false, Some(signal)) => signal.to_string(),
            (false, None) => return None,
        };
        Some(StepOutcome {
            achieved: 0.0,
            verdicts: Vec::new(),
            limit: Some(Limit::Stopped(why)),
        })
    }

    /// ` (held at 400; broke at 800: p99<20ms)`: how the search stands ([`super::standing`]).
    fn standing(&self) -> String {
        // A shard's runs are at its share of each step's rate.
        let shards = self.plan.run.options.part.shard.count.max(1) as u64;
        super::standing(
            self.runs
                .iter()
                .filter_map(|r| Some((r.plan.rate? * shards, r.objectives.as_slice()))),
        )
    }

    /// The pause after the previous step, cut short by a signal.
    fn pause(&self) {
        let Some(end) = self.last_end else { return };
        while end.elapsed() < self.plan.search.pause && signals::since(self.mark).is_none() {
            std::thread::sleep(Duration::from_millis(50).min(self.plan.search.pause));
        }
    }
}

impl HttpSteps<'_> {
    /// One try of a step at `load` on `connections`: the pause, the warm-up and the judged
    /// run, and its outcome; `Err` with the outcome when a signal or a failed run ended it
    /// before a judged run was saved.
    fn try_step(
        &mut self,
        load: u64,
        connections: usize,
        tries: usize,
    ) -> Result<Tried, StepOutcome> {
        // A scheduled staircase's pause is the gap before the next step's instant.
        let scheduled =
            self.plan.staircase.is_some() && self.plan.run.options.part.start_at.is_some();
        if !scheduled {
            self.pause();
        }
        if let Some(stopped) = self.stopped() {
            return Err(stopped);
        }
        let number = self.runs.len() + 1;
        self.announce(number, load, connections, tries);
        let warm_up = self.warm_up(number, load, connections)?;
        let end_early = self.end_early(load, warm_up.as_ref());
        let machine = MachineStat::read();
        let step = self.plan.search.step;
        let judged_plan = self.step_plan_ending(load, connections, step, true, end_early);
        let finished = super::http::live_run(&judged_plan);
        let machine = machine.and_then(|m| m.since());
        self.last_end = Some(Instant::now());
        let finished = match finished {
            Ok(finished) => {
                self.started(&finished.result.start);
                finished
            }
            Err(e) => match self.gone(number, load, e) {
                Ok(failed) => return Err(failed),
                Err(e) => {
                    self.error = Some(e);
                    return Err(self.stopped().unwrap_or_else(unreachable_outcome));
                }
            },
        };
        let mut saved = SavedRun {
            script_error: finished.script_error.as_ref().map(ToString::to_string),
            ..SavedRun::from_result(&finished.result)
        };
        if finished.result.ended_by == EndReason::Settled {
            let note = ended_early(&saved, step);
            eprintln!("capacity: step {number}: {note}");
            saved.notes.push(note);
        }
        let disturbance = disturbance_of(&saved, machine);
        let mut outcome = saved.step_outcome().with_disturbance(&disturbance);
        if let Some(e) = &finished.script_error {
            self.failed = Some(format!("script error: {e}"));
        }
        if finished.result.interrupted || self.failed.is_some() {
            if let Some(stopped) = self.stopped() {
                outcome.limit = stopped.limit;
            }
        }
        self.judge(number, load, &saved, warm_up.as_ref(), &mut outcome);
        Ok(Tried {
            saved,
            outcome,
            disturbance,
            warm_up,
        })
    }

    /// The step's line on stderr: its load, warm-up and judged run, and connections.
    fn announce(&self, number: usize, load: u64, connections: usize, tries: usize) {
        let unit = LoadUnit::RequestsPerSec.as_str();
        let shard = self.plan.run.options.part.shard;
        let share = if shard.count > 1 {
            format!(
                "; shard {}/{} sends {}",
                shard.index + 1,
                shard.count,
                capacity::grouped(load / shard.count as u64)
            )
        } else {
            String::new()
        };
        let again = if tries > 1 {
            format!(", try {tries}")
        } else {
            String::new()
        };
        eprintln!(
            "capacity: step {number} at {} {unit} ({} warm-up, then {} judged{share}) on {} \
             connections{again}",
            capacity::grouped(load),
            super::human(self.plan.search.warmup),
            super::human(self.plan.search.step),
            capacity::grouped(connections as u64)
        );
    }

    /// The step's warm-up run, when it has one; `Err` with the outcome when the server went or
    /// a signal came.
    fn warm_up(
        &mut self,
        number: usize,
        load: u64,
        connections: usize,
    ) -> Result<Option<SavedRun>, StepOutcome> {
        if self.plan.search.warmup.is_zero() {
            return Ok(None);
        }
        let mut warm_up = None;
        match super::http::live_run(&self.step_plan(
            load,
            connections,
            self.plan.search.warmup,
            false,
        )) {
            Ok(warm) => {
                self.started(&warm.result.start);
                warm_up = Some(SavedRun::from_result(&warm.result));
            }
            Err(e) => match self.gone(number, load, e) {
                Ok(failed) => return Err(failed),
                Err(e) => self.error = Some(e),
            },
        }
        if let Some(stopped) = self.stopped() {
            self.last_end = Some(Instant::now());
            return Err(stopped);
        }
        Ok(warm_up)
    }

    /// The limits a judged run shows beyond its objectives: a server that stopped answering,
    /// errors that came and went, connections that failed.
    fn judge(
        &mut self,
        number: usize,
        load: u64,
        saved: &SavedRun,
        warm_up: Option<&SavedRun>,
        outcome: &mut StepOutcome,
    ) {
        // A server that answered nothing at the step's end, its port still accepting (a
        // frozen process): the search failed there, as for a server gone.
        let judged = matches!(outcome.class(), Class::Held | Class::Broke);
        if let Some(why) = steady::stopped_answering(saved).filter(|_| judged) {
            self.server_failed = Some(format!(
                "the server stopped answering during step {number} at {}: {why}",
                load_said(load)
            ));
            outcome.limit = Some(Limit::ServerFailed(format!("stopped answering: {why}")));
            return;
        }
        // Errors that came and went while the load stayed: the server's instability.
        if let Some(why) = steady::error_burst(warm_up, saved).filter(|_| judged) {
            outcome.limit = Some(Limit::Unstable(why));
        }
        // Connections that failed: the server overloaded, or gone (then the search failed,
        // this step's verdicts kept as measured).
        if saved.counters.errors.socket_total() > 0 {
            if let Err(e) = server_gone::check(web::probe(&self.plan.run)) {
                self.server_failed = Some(server_gone::line(number, &load_said(load), &e));
                outcome.limit = Some(Limit::ServerFailed(e.to_string()));
            }
        }
    }
}

/// One try of a step: its judged run, outcome and disturbance, and its warm-up's run.
struct Tried {
    saved: SavedRun,
    outcome: StepOutcome,
    disturbance: Disturbance,
    warm_up: Option<SavedRun>,
}
