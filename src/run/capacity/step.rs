//! A step of `tsumo capacity` for HTTP: [`HttpSteps`] as the search's [`StepRunner`] (each try
//! on the connections the pool gives it, what disturbed it, a step that could not start), and
//! when a judged run may end early.

use super::*;
use crate::capacity::LatencyEnd;

impl HttpSteps<'_> {
    /// How a search's judged run at `load` may end early: on its errors objective (the
    /// lowest limit of several) or a latency objective, after the warm-up's steady seconds,
    /// or held far under them all (not with `--whole-steps`); never in a staircase (its steps
    /// are fixed, the same on every shard).
    pub(super) fn end_early(&self, load: u64, warm_up: Option<&SavedRun>) -> Option<EndEarly> {
        if self.plan.staircase.is_some() {
            return None;
        }
        let objectives = &self.plan.run.options.objectives;
        let search = &self.plan.search;
        let held = capacity::held_end(objectives, load, search.step, search.whole_steps);
        let mut rule = EndEarly::of(objectives, held)?;
        if let Some(warm_up) = warm_up {
            rule.warm_up_s = steady::steady_errors_s(warm_up, &rule);
            for latency in &mut rule.latency {
                latency.warm_up_s = steady_latency_s(warm_up, latency);
            }
        }
        Some(rule)
    }
}

/// The warm-up's last whole seconds whose responses reached twice a latency objective's limit
/// steadily ([`LatencyEnd::steady`]), on the server's latency as the objective is judged; a
/// sliver of an interval at its end is left out.
fn steady_latency_s(warm_up: &SavedRun, rule: &LatencyEnd) -> u32 {
    let far = capacity::far_of(rule.limit_us);
    let mut seconds = 0.0;
    for (k, interval) in warm_up.intervals.iter().rev().enumerate() {
        if k == 0 && interval.span.duration_s < 0.25 {
            continue;
        }
        let latency = interval.server_latency.as_ref();
        let Ok(h) = latency.unwrap_or(&interval.latency).decode() else {
            break;
        };
        let over = if far > h.max() {
            0
        } else {
            h.count_between(far, h.max())
        };
        if !rule.steady(h.len(), over) {
            break;
        }
        seconds += interval.span.duration_s;
    }
    (seconds + 0.25).floor() as u32
}

/// `ended after 2.0s of 5s: errors 37.5% against errors<1%, beyond doubt`, or `ended after
/// 2.0s of 5s: held far under p99<10ms (p99 1.20ms), errors<1% (errors 0%)`.
pub(super) fn ended_early(saved: &SavedRun, step: Duration) -> String {
    let broken: Vec<String> = saved
        .objectives
        .iter()
        .filter(|v| v.far_beyond())
        .map(|v| format!("{} against {}", v.measured_text(), v.expr))
        .collect();
    let said = if broken.is_empty() {
        let held: Vec<String> = saved
            .objectives
            .iter()
            .map(|v| format!("{} ({})", v.expr, v.measured_text()))
            .collect();
        format!("held far under {}", held.join(", "))
    } else {
        format!("{}, beyond doubt", broken.join(", "))
    };
    format!(
        "ended after {:.1}s of {}: {said}",
        saved.elapsed_s,
        crate::run::human(step)
    )
}

impl StepRunner for HttpSteps<'_> {
    /// A step, on the connections the pool gives it, run again on more while the pool says
    /// it was too small; the last try is the step's run, each try before it a note on it.
    fn run_step(&mut self, load: u64) -> StepOutcome {
        self.called += 1;
        crate::run::live_step_begins(LoadUnit::RequestsPerSec, load);
        let earlier: Vec<(u64, f64)> = self
            .runs
            .iter()
            .filter_map(|r| Some((r.plan.rate?, r.uncorrected.mean)))
            .collect();
        let mut connections = self.pool.for_load(load, &earlier);
        let mut before: Option<Try> = None;
        let mut notes: Vec<String> = Vec::new();
        let mut tries = 0;
        let mut ran_on = false;
        loop {
            tries += 1;
            let Tried {
                saved,
                mut outcome,
                disturbance,
                warm_up,
            } = match self.try_step(load, connections, tries) {
                Ok(done) => done,
                Err(stopped) => return stopped,
            };
            let number = self.runs.len() + 1;
            // Errors that began at the run's end: once more, to see whether they go (not in a
            // staircase: its steps are fixed, the same on every shard).
            let again = self.plan.staircase.is_none() && !ran_on;
            if again
                && outcome.class() == Class::Broke
                && steady::errors_at_end(warm_up.as_ref(), &saved)
            {
                ran_on = true;
                let why = "errors began in the run's last second, after seconds without any";
                eprintln!("capacity: step {number} again: {why}");
                notes.push(format!("Try {tries} of this step: {why}."));
                continue;
            }
            let tried = Try::of_run(&saved, outcome.class() == Class::Broke);
            // A staircase's steps are fixed, on -c, the same on every shard, and judged again
            // from their saved runs by `tsumo merge`: no try on more connections, no pool
            // verdict that a merge could not give.
            // Nor at a load where more connections already carried no more: the server was
            // the bound there, and so it is above (a saturated server's every break would
            // otherwise cost a second run).
            let server_bound = self.server_bound_at.is_some_and(|at| load >= at);
            let next = if self.plan.staircase.is_some() || server_bound {
                Next::Judged
            } else {
                self.pool.next(&tried, before.as_ref(), tries)
            };
            match next {
                Next::Again(more) => {
                    let why = format!(
                        "{connections} connections carried {} requests/sec ({}), {:.1} % of \
                         requests due on a busy connection; Little's law asks for {} (x{} at \
                         {} mean response)",
                        capacity::grouped(tried.achieved.round() as u64),
                        broken_text(&outcome),
                        tried.busy_share * 100.0,
                        tried.needed(),
                        crate::run::pool::HEADROOM,
                        format_time_us(tried.response_us)
                    );
                    eprintln!("capacity: step {number} again on {more} connections: {why}");
                    notes.push(format!("Try {tries} of this step: {why}."));
                    before = Some(tried);
                    connections = more;
                    continue;
                }
                Next::Limit(pool) => outcome.limit = Some(Limit::Pool(pool)),
                Next::Judged => {}
                Next::ServerBound => {
                    self.server_bound_at =
                        Some(self.server_bound_at.map_or(load, |at| at.min(load)));
                }
            }
            return self.judged(number, load, (saved, disturbance, notes), outcome);
        }
    }
}

impl HttpSteps<'_> {
    /// The step's judged try: said on stderr and on the dashboard, kept with its notes and
    /// disturbance, and the search so far shown.
    fn judged(
        &mut self,
        number: usize,
        load: u64,
        (mut saved, disturbance, notes): (SavedRun, Disturbance, Vec<String>),
        outcome: StepOutcome,
    ) -> StepOutcome {
        let said = crate::run::step_line(
            &outcome,
            &format!(
                "achieved {} requests/sec",
                capacity::grouped(outcome.achieved.round() as u64)
            ),
        );
        eprintln!("capacity: step {number}: {said}");
        let shown = format!("Step {number} at {}: {said}", load_said(load));
        crate::run::live_step_judged(&outcome, &shown);
        saved.notes.extend(notes);
        self.runs.push(saved);
        self.disturbances.push(disturbance);
        self.classes.push(outcome.class());
        let loads: Vec<u64> = self.runs.iter().map(|r| r.plan.rate.unwrap_or(0)).collect();
        crate::run::live_search_so_far(
            (&self.plan.run.options.label, &self.plan.run.target.url),
            LoadUnit::RequestsPerSec,
            &self.runs,
            (&loads, &self.classes),
        );
        outcome
    }
}

/// `p99<50ms broke: p99 445.2ms`: what broke in a try.
fn broken_text(outcome: &StepOutcome) -> String {
    let broken: Vec<String> = outcome
        .broken()
        .map(|v| format!("{} broke: {}", v.expr, v.measured_text()))
        .collect();
    broken.join(", ")
}

/// `200 requests/sec`.
pub(super) fn load_said(load: u64) -> String {
    format!(
        "{} {}",
        capacity::grouped(load),
        LoadUnit::RequestsPerSec.as_str()
    )
}

impl HttpSteps<'_> {
    /// A step's run that could not start: when the server answered a run of this search
    /// before and now answers nothing, the server failed (the step's outcome); else the error.
    pub(super) fn gone(
        &mut self,
        number: usize,
        load: u64,
        e: Error,
    ) -> Result<StepOutcome, Error> {
        if self.first_start.is_none() || !server_gone::answers_nothing(&e) {
            return Err(e);
        }
        self.last_end = Some(Instant::now());
        self.server_failed = Some(server_gone::line(number, &load_said(load), &e));
        let outcome = StepOutcome {
            achieved: 0.0,
            verdicts: Vec::new(),
            limit: Some(Limit::ServerFailed(e.to_string())),
        };
        eprintln!(
            "capacity: step {number}: {}",
            crate::run::step_line(&outcome, "achieved 0 requests/sec")
        );
        Ok(outcome)
    }
}

/// The machine during a judged run: tsumo's send lateness max in each interval, and the CPU
/// others used (the machine's busy cores less tsumo's and the sampled servers').
pub(super) fn disturbance_of(saved: &SavedRun, machine: Option<MachineUse>) -> Disturbance {
    let mut lateness_max_us: Vec<u64> = saved
        .intervals
        .iter()
        .map(|i| i.send_lateness.max)
        .collect();
    if lateness_max_us.is_empty() {
        lateness_max_us.push(saved.send_lateness.max);
    }
    let elapsed = saved.elapsed_s.max(1e-9);
    let tsumo = saved.tsumo.map_or(0.0, |t| t.cpu_seconds / elapsed);
    let server = saved
        .server
        .as_ref()
        .map_or(0.0, |s| s.cpu_percent_mean / 100.0);
    Disturbance {
        lateness_max_us,
        others_cores: machine.map(|m| (m.busy_cores - tsumo - server).max(0.0)),
        steal_cores: machine.map(|m| m.steal_cores),
        cores: machine.map_or(0, |m| m.cores),
    }
}

/// Never reached: `failed` was just set, so [`HttpSteps::stopped`] answers.
pub(super) fn unreachable_outcome() -> StepOutcome {
    StepOutcome {
        achieved: 0.0,
        verdicts: Vec::new(),
        limit: Some(Limit::Stopped("the run failed".to_string())),
    }
}
