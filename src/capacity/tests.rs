//! The search and the staircase against fake servers of known capacity: the steps run, the
//! answer, its line and its saved form.

use super::*;
use crate::slo::{Unit, Verdict};

/// A server that holds `p99<20ms` up to `capacity`, and a generator that reaches at most
/// `generator` (beyond it the step is tsumo's limit, whatever the server does).
struct FakeServer {
    capacity: u64,
    generator: Option<u64>,
    ran: Vec<u64>,
}

impl FakeServer {
    fn new(capacity: u64) -> FakeServer {
        FakeServer {
            capacity,
            generator: None,
            ran: Vec::new(),
        }
    }
}

fn p99(held: bool, measured: f64) -> Verdict {
    Verdict {
        expr: "p99<20ms".into(),
        measured: Some(measured),
        unit: Unit::Micros,
        held,
        judged_on: None,
    }
}

impl StepRunner for FakeServer {
    fn run_step(&mut self, load: u64) -> StepOutcome {
        self.ran.push(load);
        if self.generator.is_some_and(|max| load > max) {
            return StepOutcome {
                achieved: self.generator.unwrap_or_default() as f64,
                verdicts: vec![p99(false, 90_000.0)],
                limit: Some(Limit::Generator("send lateness p99 40.0ms".into())),
            };
        }
        let held = load <= self.capacity;
        StepOutcome {
            achieved: load as f64,
            verdicts: vec![p99(held, if held { 4_000.0 } else { 31_000.0 })],
            limit: None,
        }
    }
}

/// What a scripted trial shows instead of the server's verdict.
#[derive(Clone, Copy)]
enum Trial {
    Broke,
    Disturbed,
    Stopped,
}

/// A [`FakeServer`] whose `nth` trial at a load (from 1) is scripted.
struct Scripted {
    server: FakeServer,
    script: Vec<(u64, usize, Trial)>,
}

impl Scripted {
    fn new(capacity: u64, script: &[(u64, usize, Trial)]) -> Scripted {
        Scripted {
            server: FakeServer::new(capacity),
            script: script.to_vec(),
        }
    }
}

impl StepRunner for Scripted {
    fn run_step(&mut self, load: u64) -> StepOutcome {
        let outcome = self.server.run_step(load);
        let nth = self.server.ran.iter().filter(|&&l| l == load).count();
        let scripted = self.script.iter().find(|s| (s.0, s.1) == (load, nth));
        let broken = vec![p99(false, 25_000.0)];
        match scripted.map(|s| s.2) {
            None => outcome,
            Some(Trial::Broke) => StepOutcome {
                verdicts: broken,
                ..outcome
            },
            Some(Trial::Disturbed) => StepOutcome {
                verdicts: broken,
                limit: Some(Limit::Disturbed("tsumo stalled 96ms".into())),
                ..outcome
            },
            Some(Trial::Stopped) => StepOutcome {
                achieved: 0.0,
                verdicts: Vec::new(),
                limit: Some(Limit::Stopped("SIGINT".into())),
            },
        }
    }
}

/// A break right above a held step, run again and held: the search grows on, and the range
/// shows where the boundary moved.
#[test]
fn a_noisy_break_above_a_held_step_is_run_again_and_held() {
    let mut noisy = Scripted::new(38_200, &[(16_000, 1, Trial::Broke)]);
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
    assert_eq!(
        &noisy.server.ran[..8],
        [1_000, 2_000, 4_000, 8_000, 16_000, 16_000, 16_000, 32_000]
    );
    assert_eq!(found.value, Some(38_000));
    assert_eq!(found.finding, Finding::Found);
    assert_eq!(found.range(), Some((16_000, 38_000)));
    assert_eq!(
        found.line(),
        "Capacity: 38,000 requests/sec (p99<20ms held at 38k; broke at 39k: p99 31.0ms); \
         range 16,000–38,000; 6 of 19 steps run again: 6 to check a break"
    );
    assert_eq!(found.saved().range, Some([16_000, 38_000]));
}

/// A disturbed trial is run again and does not count: the answer is the quiet search's.
#[test]
fn a_disturbed_step_is_run_again() {
    let mut noisy = Scripted::new(38_200, &[(36_000, 1, Trial::Disturbed)]);
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
    assert_eq!(&noisy.server.ran[12..14], [36_000, 36_000]);
    assert_eq!(found.value, Some(38_000));
    assert_eq!(found.finding, Finding::Found);
    assert_eq!(found.reruns(), (4, 1));
    let saved = found.saved();
    assert_eq!(saved.disturbed, [36_000]);
    assert_eq!(saved.range, Some([38_000, 39_000]));
    assert_eq!(
        found.line(),
        "Capacity: 38,000 requests/sec (p99<20ms held at 38k; broke at 39k: p99 31.0ms); range \
         38,000–39,000; 5 of 18 steps run again: 4 to check a break, 1 disturbed (tsumo stalled 96ms)"
    );
    // Two disturbed, then a break and a hold: a split at the bound is held (noise only
    // makes a server look worse).
    let mut noisy = Scripted::new(
        38_200,
        &[(36_000, 1, Trial::Disturbed), (36_000, 2, Trial::Broke)],
    );
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
    assert_eq!(&noisy.server.ran[12..16], [36_000, 36_000, 36_000, 38_000]);
    assert_eq!(found.value, Some(38_000));
}

/// Every trial at a load disturbed: the search cannot tell, names why, and claims only what
/// held below.
#[test]
fn every_trial_disturbed_cannot_tell() {
    let all = |load| [1, 2, 3].map(|nth| (load, nth, Trial::Disturbed));
    let mut noisy = Scripted::new(38_200, &all(40_000));
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
    assert_eq!(
        &noisy.server.ran[6..],
        [64_000, 64_000, 48_000, 48_000, 40_000, 40_000, 40_000]
    );
    assert_eq!(
        found.finding,
        Finding::CannotTell {
            at: 40_000,
            trials: 3,
            why: "tsumo stalled 96ms".into()
        }
    );
    assert_eq!(found.value, Some(32_000));
    assert_eq!(
        found.line(),
        "Capacity: cannot tell; at least 32,000 requests/sec held, all 3 trials at 40k \
         disturbed (tsumo stalled 96ms); range 32,000–48,000; 4 of 13 steps run again: 2 to check a break, 2 \
         disturbed (tsumo stalled 96ms)"
    );
    let saved = found.saved();
    assert_eq!(
        (saved.limited_by.as_str(), saved.reason.as_str()),
        (
            "noise",
            "at 40000: all 3 trials disturbed: tsumo stalled 96ms"
        )
    );
    assert_eq!(saved.disturbed, [40_000, 40_000, 40_000]);
    // The first load: no number at all.
    let mut noisy = Scripted::new(38_200, &all(1_000));
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
    assert_eq!(found.value, None);
    assert_eq!(
        found.line(),
        "Capacity: cannot tell; all 3 trials at 1k disturbed (tsumo stalled 96ms); 2 of 3 \
         steps run again: 2 disturbed (tsumo stalled 96ms)"
    );
}

/// SIGINT while confirming the answer (issue 30, item 5): the answer is what held, never
/// "unknown, no step held".
#[test]
fn sigint_during_the_confirmation_answers_what_held() {
    let mut stopped = Scripted::new(38_200, &[(38_000, 2, Trial::Stopped)]);
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut stopped);
    assert_eq!(found.steps.last().map(|s| s.role), Some(Role::Confirm));
    assert_eq!(
        found.finding,
        Finding::Stopped {
            at: 38_000,
            signal: "SIGINT".into()
        }
    );
    assert_eq!(found.value, Some(38_000));
    assert_eq!(
        found.line(),
        "Capacity: at least 38,000 requests/sec; the search stopped at 38k while confirming \
         it: SIGINT; range 38,000–39,000; 4 of 17 steps run again: 4 to check a break"
    );
    let saved = found.saved();
    assert_eq!(saved.signal.as_deref(), Some("SIGINT"));
    assert_eq!(
        (saved.limited_by.as_str(), saved.reason.as_str()),
        ("stopped", "at 38000: SIGINT")
    );
    // Stopped after the confirmation broke and stepped down: what held below 38,000.
    let mut stopped = Scripted::new(
        38_200,
        &[
            (38_000, 2, Trial::Broke),
            (38_000, 3, Trial::Broke),
            (36_190, 1, Trial::Stopped),
        ],
    );
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut stopped);
    assert_eq!(found.value, Some(36_000));
}

/// A failed run stops the search in words that read (issue 30's wording items).
#[test]
fn a_failed_run_stops_the_search_in_words() {
    struct Fails;
    impl StepRunner for Fails {
        fn run_step(&mut self, load: u64) -> StepOutcome {
            StepOutcome {
                achieved: load as f64,
                verdicts: vec![p99(true, 1_000.0)],
                limit: (load >= 200).then(|| Limit::Stopped("the run failed".into())),
            }
        }
    }
    let found = search(&plan(100, None), LoadUnit::RequestsPerSec, &mut Fails);
    assert_eq!(
        found.line(),
        "Capacity: at least 100 requests/sec; the search stopped at 200: the run failed"
    );
}

fn plan(from: u64, to: Option<u64>) -> SearchPlan {
    SearchPlan {
        from,
        to,
        resolution: SearchPlan::RESOLUTION,
        growth: SearchPlan::GROWTH,
        granularity: 1,
        trials: SearchPlan::TRIALS,
    }
}

#[test]
fn grows_bisects_and_confirms() {
    let mut server = FakeServer::new(38_200);
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut server);
    assert_eq!(
        server.ran,
        [
            1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 64_000, // grow
            48_000, 48_000, 40_000, 40_000, 36_000, 38_000, 39_000, 39_000, // bisect
            38_000, // confirm
        ]
    );
    assert_eq!(found.finding, Finding::Found);
    assert_eq!(found.value, Some(38_000));
    let roles: Vec<Role> = found.steps.iter().map(|s| s.role).collect();
    assert_eq!(roles[7], Role::Grow);
    assert_eq!(roles[8], Role::Bisect);
    assert_eq!(roles[16], Role::Confirm);
    let trials: Vec<u32> = found.steps.iter().map(|s| s.trial).collect();
    assert_eq!(trials, [1, 1, 1, 1, 1, 1, 1, 2, 1, 2, 1, 2, 1, 1, 1, 2, 2]);
    // Each break run again (and broke again); the answer confirmed; one load throughout.
    assert_eq!(found.reruns(), (4, 0));
    assert_eq!(found.range(), Some((38_000, 39_000)));
    assert_eq!(
        found.line(),
        "Capacity: 38,000 requests/sec (p99<20ms held at 38k; broke at 39k: p99 31.0ms); range \
         38,000–39,000; 4 of 17 steps run again: 4 to check a break"
    );
    assert_eq!(
        found.broke_first().as_deref(),
        Some("Broke first: p99<20ms at 39k (p99 31.0ms)")
    );
    let saved = serde_json::to_value(found.saved()).unwrap();
    assert_eq!(
        saved,
        serde_json::json!({
            "value": 38_000,
            "unit": "requests/sec",
            "limited_by": "server",
            "reason": "broke at 39000: p99<20ms (p99 31.0ms)",
            "answer": found.line(),
            "broke_first": "Broke first: p99<20ms at 39k (p99 31.0ms)",
            "held": [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 36_000, 38_000, 38_000],
            "broke": [64_000, 64_000, 48_000, 48_000, 40_000, 40_000, 39_000, 39_000],
            "range": [38_000, 39_000],
            "trials": [1, 1, 1, 1, 1, 1, 1, 2, 1, 2, 1, 2, 1, 1, 1, 2, 2],
        })
    );
}

/// Whatever the capacity, the answer is at most it and within the resolution of it.
#[test]
fn the_answer_is_within_the_resolution() {
    for capacity in [1_000, 1_234, 5_555, 38_200, 99_999, 250_000, 1_000_003] {
        let mut server = FakeServer::new(capacity);
        let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut server);
        let value = found.value.expect("an answer") as f64;
        assert!(value <= capacity as f64, "{capacity}: {value}");
        assert!(value >= capacity as f64 * 0.95, "{capacity}: {value}");
        assert_eq!(found.finding, Finding::Found, "{capacity}");
    }
}

#[test]
fn players_come_in_tables() {
    let mut server = FakeServer::new(203);
    let search_plan = SearchPlan {
        granularity: 4,
        ..plan(16, None)
    };
    let found = search(&search_plan, LoadUnit::Players, &mut server);
    assert!(
        server.ran.iter().all(|load| load % 4 == 0),
        "{:?}",
        server.ran
    );
    assert_eq!(
        server.ran,
        [16, 32, 64, 128, 256, 256, 192, 224, 224, 208, 208, 200, 200]
    );
    assert_eq!(found.value, Some(200));
    assert!(found
        .line()
        .starts_with("Capacity: 200 players (p99<20ms held at 200;"));
}

/// tsumo's limit is never reported as the server's: the search stops with "at least".
#[test]
fn the_generator_limit_is_never_the_servers() {
    let mut server = FakeServer::new(1_000_000);
    server.generator = Some(50_000);
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut server);
    assert_eq!(
        server.ran,
        [1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000]
    );
    assert_eq!(
        found.finding,
        Finding::GeneratorLimited {
            at: 64_000,
            why: "send lateness p99 40.0ms".into()
        }
    );
    assert_eq!(found.value, Some(32_000));
    assert_eq!(
        found.line(),
        "Capacity: at least 32,000 requests/sec; the generator was the limit at 64k (send \
         lateness p99 40.0ms): add threads or shards"
    );
    let saved = found.saved();
    assert_eq!(
        (saved.limited_by.as_str(), saved.reason.as_str()),
        ("generator", "at 64000: send lateness p99 40.0ms")
    );
    assert!(
        saved.broke.is_empty(),
        "a generator's limit is no break: {saved:?}"
    );
    assert_eq!(found.broke_first(), None);
}

#[test]
fn a_system_limit_is_named_in_doctors_words() {
    struct Ports;
    impl StepRunner for Ports {
        fn run_step(&mut self, load: u64) -> StepOutcome {
            StepOutcome {
                achieved: load as f64,
                verdicts: vec![p99(load < 4_000, 1_000.0)],
                limit: (load >= 4_000).then_some(Limit::System(SystemLimit::EphemeralPorts)),
            }
        }
    }
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut Ports);
    assert_eq!(found.steps.len(), 3);
    assert_eq!(
        found.line(),
        "Capacity: at least 2,000 requests/sec; a system limit at 4k: connects failed with \
         EADDRNOTAVAIL (no local port left): see `tsumo doctor`'s ephemeral ports check"
    );
}

/// The server stopped answering at 4k (killed): the search ends there, a failure, the steps
/// before kept and the failed step's broken verdicts said; never a system limit.
#[test]
fn a_server_that_stops_answering_fails_the_search() {
    struct Killed;
    impl StepRunner for Killed {
        fn run_step(&mut self, load: u64) -> StepOutcome {
            let gone = load >= 4_000;
            StepOutcome {
                achieved: load as f64,
                verdicts: vec![p99(!gone, if gone { 1_640_000.0 } else { 1_000.0 })],
                limit: gone.then(|| Limit::ServerFailed("unable to connect: refused".into())),
            }
        }
    }
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut Killed);
    assert_eq!(found.steps.len(), 3);
    assert_eq!(found.steps[2].outcome.class(), Class::ServerFailed);
    assert_eq!(
        found.finding,
        Finding::ServerFailed {
            at: 4_000,
            why: "unable to connect: refused".into()
        }
    );
    assert_eq!(found.value, Some(2_000));
    assert_eq!(
        found.line(),
        "Capacity: at least 2,000 requests/sec; the search failed: the server stopped \
         answering at 4k (broke there: p99 1.64s)"
    );
    let saved = found.saved();
    assert_eq!(
        (saved.limited_by.as_str(), saved.reason.as_str()),
        (
            "server-failed",
            "at 4000: unable to connect: refused; broke there: p99<20ms (p99 1.64s)"
        )
    );
    assert_eq!(saved.held, [1_000, 2_000]);
    assert!(saved.broke.is_empty(), "{saved:?}");
}

/// The confirmation breaks (a noisy run): a third trial decides; when it breaks too, one
/// step down, held there.
#[test]
fn a_broken_confirmation_is_decided_by_a_third_trial() {
    // 38,000 holds while bisecting, then breaks when confirmed, then holds.
    let mut noisy = Scripted::new(38_200, &[(38_000, 2, Trial::Broke)]);
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
    assert_eq!(
        &noisy.server.ran[13..],
        [38_000, 39_000, 39_000, 38_000, 38_000]
    );
    assert_eq!(found.value, Some(38_000));
    assert_eq!(found.finding, Finding::Found);
    assert_eq!(found.steps[16].trial, 2);
    assert_eq!(found.steps[17].trial, 3);
    // Broken twice of three: one step down (38,000 / 1.05 = 36,190), held there.
    let mut noisy = Scripted::new(
        38_200,
        &[(38_000, 2, Trial::Broke), (38_000, 3, Trial::Broke)],
    );
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut noisy);
    assert_eq!(&noisy.server.ran[16..], [38_000, 38_000, 36_190]);
    assert_eq!(found.value, Some(36_190));
    assert_eq!(found.finding, Finding::Found);
    assert_eq!(
        found.line(),
        "Capacity: 36,190 requests/sec (p99<20ms held at 36.2k; broke at 38k: p99 25.0ms); \
         range 36,190–38,000; 5 of 19 steps run again: 5 to check a break"
    );
}

/// A server that breaks every confirmation: the steps go down further each time (one
/// resolution, two, four…) and end at `from`, where it breaks too after loads that held: its
/// verdicts flipped, so it cannot tell, and denies none of the loads that held (issue 43).
#[test]
fn confirmations_that_keep_breaking_after_loads_held_cannot_tell() {
    // Holds up to 3,000 for its first 7 steps, then breaks at any load.
    struct Degrading(Vec<u64>);
    impl StepRunner for Degrading {
        fn run_step(&mut self, load: u64) -> StepOutcome {
            let held = load <= 3_000 && self.0.len() < 7;
            self.0.push(load);
            StepOutcome {
                achieved: load as f64,
                verdicts: vec![p99(held, if held { 4_000.0 } else { 31_000.0 })],
                limit: None,
            }
        }
    }
    let mut runner = Degrading(Vec::new());
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut runner);
    assert_eq!(
        runner.0,
        [
            1_000, 2_000, 4_000, 4_000, // grow
            3_000, 3_500, 3_500, 3_250, 3_250, 3_125, 3_125, // bisect
            3_000, 3_000, 2_857, 2_857, 2_597, 2_597, 2_164, 2_164, 1_545, 1_545, 1_000,
            1_000, // confirm, two trials each, down 5%, 10%, 20%, 40%, 80%
        ]
    );
    assert_eq!(
        found.finding,
        Finding::Unstable {
            at: 1_000,
            below: false,
            why: "broke there: p99 31.0ms".into()
        }
    );
    assert_eq!(found.value, None);
    assert!(
        found.line().starts_with(
            "Capacity: cannot tell: the server was unstable at 1k (broke there: p99 31.0ms); \
             3k held at times"
        ),
        "{}",
        found.line()
    );
    let saved = found.saved();
    assert_eq!(saved.limited_by, "unstable");
    assert_eq!(saved.held, [1_000, 2_000, 3_000]);
}

#[test]
fn bounds() {
    // Even --to held.
    let mut server = FakeServer::new(1_000_000);
    let found = search(
        &plan(1_000, Some(10_000)),
        LoadUnit::RequestsPerSec,
        &mut server,
    );
    assert_eq!(server.ran, [1_000, 2_000, 4_000, 8_000, 10_000]);
    assert_eq!(found.finding, Finding::AtLeastTo);
    assert_eq!(
        found.line(),
        "Capacity: at least 10,000 requests/sec (p99<20ms held at 10k, the highest step)"
    );
    // --from broke already.
    let mut server = FakeServer::new(500);
    let found = search(&plan(1_000, None), LoadUnit::RequestsPerSec, &mut server);
    assert_eq!(server.ran, [1_000, 1_000]);
    assert_eq!(found.finding, Finding::BelowFrom);
    assert_eq!(found.value, None);
    assert_eq!(
        found.line(),
        "Capacity: below 1,000 requests/sec (broke at 1k: p99 31.0ms); 1 of 2 steps run \
         again: 1 to check a break"
    );
}

#[test]
fn a_staircase_runs_every_step_and_reads_the_answer() {
    let loads = staircase_loads(1_000, 10_000, 4, 1);
    assert_eq!(loads, [1_000, 4_000, 7_000, 10_000]);
    assert_eq!(staircase_loads(8, 40, 5, 4), [8, 16, 24, 32, 40]);
    let mut server = FakeServer::new(5_000);
    let found = staircase(&loads, LoadUnit::RequestsPerSec, &mut server);
    assert_eq!(server.ran, loads);
    assert_eq!(found.value, Some(4_000));
    assert_eq!(found.broke, Some(2));
    assert_eq!(
        found.line(),
        "Capacity: 4,000 requests/sec (p99<20ms held at 4k; broke at 7k: p99 31.0ms); range \
         4,000–7,000"
    );
    // The same steps judged again (as after a merge) give the same answer.
    assert_eq!(
        judge_staircase(LoadUnit::RequestsPerSec, found.steps.clone()),
        found
    );
}

fn errors(held: bool, measured: f64) -> Verdict {
    Verdict {
        expr: "errors<1%".into(),
        measured: Some(measured),
        unit: Unit::Percent,
        held,
        judged_on: None,
    }
}

/// `errors<1%` with a `limit_req` at 4,000: 37.5 % of errors at 6,400 is a break beyond doubt,
/// settled in one trial; 1.5 % at 4,060 is near the objective, and run again (issue 43).
#[test]
fn only_a_break_near_its_objective_is_run_again() {
    struct LimitReq(Vec<u64>);
    impl StepRunner for LimitReq {
        fn run_step(&mut self, load: u64) -> StepOutcome {
            self.0.push(load);
            let share = (load.saturating_sub(4_000)) as f64 * 100.0 / load as f64;
            StepOutcome {
                achieved: load as f64,
                verdicts: vec![errors(share < 1.0, share)],
                limit: None,
            }
        }
    }
    let mut server = LimitReq(Vec::new());
    let found = search(&plan(100, None), LoadUnit::RequestsPerSec, &mut server);
    assert_eq!(found.value, Some(4_000));
    // 6,400 (37.5 %), 4,800 (16.7 %), 4,400 (9 %) and 4,200 (4.8 %): each once.
    assert_eq!(
        server.0,
        [
            100, 200, 400, 800, 1_600, 3_200, 6_400, // grow
            4_800, 4_000, 4_400, 4_200, // bisect
            4_000, // confirm
        ]
    );
    assert_eq!(found.range(), Some((4_000, 4_200)));
    assert_eq!(found.reruns(), (0, 0));
    // 1.5 % at 4,060 is near the objective: run again.
    let near = errors(false, 1.5);
    assert!(!near.far_beyond());
    assert!(errors(false, 2.0).far_beyond());
}

/// A step whose errors came in a burst and went ends the search: the server is unstable, and
/// no number between two loads is made up (issue 43, item 4).
#[test]
fn an_unstable_step_ends_the_search_without_a_number() {
    struct Unsteady {
        ran: Vec<u64>,
        first_held: bool,
    }
    impl StepRunner for Unsteady {
        fn run_step(&mut self, load: u64) -> StepOutcome {
            self.ran.push(load);
            let held = self.first_held && self.ran.len() == 1;
            StepOutcome {
                achieved: load as f64,
                verdicts: vec![errors(held, if held { 0.0 } else { 9.8 })],
                limit: (!held).then(|| {
                    Limit::Unstable(
                        "errors came and went at a steady load: 98% of requests failed in \
                         second 4 of the judged run, then they stopped"
                            .into(),
                    )
                }),
            }
        }
    }
    let mut at_first = Unsteady {
        ran: Vec::new(),
        first_held: false,
    };
    let found = search(&plan(100, None), LoadUnit::RequestsPerSec, &mut at_first);
    assert_eq!(at_first.ran, [100]);
    assert_eq!(found.value, None);
    assert_eq!(
        found.line(),
        "Capacity: below 100 requests/sec: the server was unstable (errors came and went at a \
         steady load: 98% of requests failed in second 4 of the judged run, then they stopped)"
    );
    assert_eq!(found.saved().limited_by, "unstable");
    let mut later = Unsteady {
        ran: Vec::new(),
        first_held: true,
    };
    let found = search(&plan(100, None), LoadUnit::RequestsPerSec, &mut later);
    assert_eq!(later.ran, [100, 200]);
    assert_eq!(found.value, None);
    assert!(
        found
            .line()
            .starts_with("Capacity: cannot tell: the server was unstable at 200 (errors came"),
        "{}",
        found.line()
    );
    assert!(
        found.line().ends_with("; 100 held at times"),
        "{}",
        found.line()
    );
}

/// The range spans at least the step from the highest load held to the lowest broken, and
/// widens with what others took of the machine during the search (issue 43, item 5).
#[test]
fn the_range_spans_the_step_and_widens_with_interference() {
    let mut server = FakeServer::new(450);
    let mut found = search(&plan(100, None), LoadUnit::RequestsPerSec, &mut server);
    assert_eq!(found.value, Some(450));
    assert_eq!(found.range(), Some((450, 463)));
    // Others used 1.2 of 2 cores on average: ±15 %.
    let busy = Disturbance {
        lateness_max_us: vec![1_000],
        others_cores: Some(1.2),
        steal_cores: Some(0.0),
        cores: 2,
    };
    found.interference = Disturbance::interference(&[busy.clone(), busy]);
    assert!((found.interference - 0.6).abs() < 1e-9);
    assert_eq!(found.range(), Some((382, 533)));
    assert_eq!(found.saved().range, Some([382, 533]));
}
