//! The shards of one fixed staircase merged into one search ([`SavedResult::merge`](crate::report::result::SavedResult::merge)).

use super::text::rates;
use super::SavedSearch;
use crate::capacity::{self, Limit, Role, Step, StepOutcome};
use crate::error::Error;
use crate::report::result::SearchStep;
use crate::report::schema::SavedPart;

/// The shards of one staircase as one: every step's runs merged exactly (the merge of saved
/// runs, which judges the objectives again on the sums), each merged step's outcome, and the
/// capacity read from the merged steps. A search is refused, and so are staircases of other
/// rates; a step that not every shard ran ends the merged staircase there, as stopped.
pub(super) fn merge_staircases<S: SearchStep>(
    parts: &[(&SavedSearch<S>, &str)],
    label: &str,
) -> Result<SavedSearch<S>, Error> {
    let refuse = |reason: String| Err(Error::Usage(format!("merge: {reason}")));
    let Some(&(first, first_source)) = parts.first() else {
        return refuse("nothing to merge".to_string());
    };
    for &(part, source) in parts {
        if !S::STAIRCASES_MERGE {
            return refuse(format!(
                "{source} is a {}, which does not merge: each search chose its steps from its \
                 own measurements",
                S::SEARCH
            ));
        }
        if part.staircase.is_empty() {
            return refuse(format!(
                "{source} is a capacity search, which does not merge: each search chose its \
                 steps from its own measurements (a fixed staircase, --steps, merges)"
            ));
        }
        if part.staircase != first.staircase {
            return refuse(format!(
                "{source} ran the staircase {} but {first_source} ran {}: shards of one \
                 staircase run the same steps",
                rates(&part.staircase),
                rates(&first.staircase)
            ));
        }
    }
    let ran = parts.iter().map(|(p, _)| p.steps.len()).min().unwrap_or(0);
    let mut steps = Vec::new();
    let mut runs = Vec::new();
    for (index, &load) in first.staircase.iter().enumerate() {
        if index == ran {
            let short: Vec<&str> = parts
                .iter()
                .filter(|(p, _)| p.steps.len() == ran)
                .map(|(_, source)| *source)
                .collect();
            let why = format!(
                "{} ran {ran} of {} steps",
                short.join(", "),
                first.staircase.len()
            );
            steps.push(Step {
                load,
                role: Role::Staircase,
                trial: 1,
                outcome: StepOutcome {
                    achieved: 0.0,
                    verdicts: Vec::new(),
                    limit: Some(Limit::Stopped(why)),
                },
            });
            break;
        }
        let step_parts: Vec<(&S, &str)> = parts
            .iter()
            .filter_map(|(p, s)| Some((p.steps.get(index)?, *s)))
            .collect();
        let mut merged = S::merge(&step_parts, step_parts[0].0.label())?;
        // The server's figures stand only when every shard sampled the same processes.
        let pids = |step: &S| step.server().map(|s| s.pids.clone());
        if step_parts
            .iter()
            .any(|(step, _)| pids(step) != pids(step_parts[0].0))
        {
            *merged.server_mut() = None;
        }
        *merged.part_mut() = SavedPart {
            merged_from: Vec::new(),
            run_id: first.part.run_id.clone(),
            shard: None,
            start: None,
            command: Vec::new(),
        };
        steps.push(Step {
            load,
            role: Role::Staircase,
            trial: 1,
            outcome: merged_outcome(&step_parts, &merged),
        });
        runs.push(merged);
    }
    let found = capacity::judge_staircase(S::UNIT, steps);
    let roles = found
        .steps
        .iter()
        .take(runs.len())
        .map(|s| (s.role, s.outcome.class()))
        .collect();
    let mut search = SavedSearch::new(label, &first.url, found.saved(), roles, runs, Vec::new());
    search.staircase = first.staircase.clone();
    Ok(search)
}

/// A merged step's outcome: the objectives judged on the sums, unless a shard's own run was
/// tsumo's or the machine's limit (then the whole step does not speak for the server), or
/// was cut short by a signal.
fn merged_outcome<S: SearchStep>(parts: &[(&S, &str)], merged: &S) -> StepOutcome {
    let own: Vec<(StepOutcome, &str)> = parts
        .iter()
        .map(|(step, source)| (step.step_outcome(), *source))
        .collect();
    let limit = |system: bool| {
        own.iter()
            .find_map(|(outcome, source)| match &outcome.limit {
                Some(Limit::System(limit)) if system => Some(Limit::System(*limit)),
                Some(Limit::Generator(why)) if !system => {
                    Some(Limit::Generator(format!("{why} ({source})")))
                }
                _ => None,
            })
    };
    let stopped = parts.iter().find_map(|(step, source)| {
        let why = step.cut_by_signal()?;
        Some(Limit::Stopped(format!("{why} ({source})")))
    });
    StepOutcome {
        achieved: merged.step_outcome().achieved,
        verdicts: merged.objectives().to_vec(),
        limit: limit(true).or_else(|| limit(false)).or(stopped),
    }
}

#[cfg(test)]
mod tests {
    use super::super::text::render;
    use super::*;
    use crate::capacity::{Class, LoadUnit};
    use crate::report::http::saved::SavedRun;
    use crate::report::schema::SavedShard;
    use crate::slo::Unit as SloUnit;
    use crate::slo::Verdict;

    /// An HTTP run of `tests/fixtures` as one shard's step: `-R rate`, `requests` answered in
    /// its 1 s, judged `rate>90%`.
    fn step(rate: u64, requests: u64) -> SavedRun {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/http-direct-v1.json");
        let text = std::fs::read_to_string(path).unwrap();
        let mut run: SavedRun = serde_json::from_str(&text).unwrap();
        run.plan.rate = Some(rate);
        run.counters.requests = requests;
        run.elapsed_s = 1.0;
        run.requests_per_sec = requests as f64;
        let share = run.requests_per_sec * 100.0 / rate as f64;
        run.objectives = vec![Verdict {
            expr: "rate>90%".to_string(),
            measured: Some(share),
            unit: SloUnit::Percent,
            held: share > 90.0,
            judged_on: None,
        }];
        run
    }

    /// Shard `index` of 2 of a staircase with these steps.
    fn shard(index: usize, staircase: &[u64], steps: Vec<SavedRun>) -> SavedSearch<SavedRun> {
        let capacity = capacity::judge_staircase(LoadUnit::RequestsPerSec, Vec::new()).saved();
        let roles = steps
            .iter()
            .map(|_| (Role::Staircase, Class::Held))
            .collect();
        let mut search =
            SavedSearch::new("direct", "http://x/", capacity, roles, steps, Vec::new());
        search.staircase = staircase.to_vec();
        search.part.run_id = Some("stairs".to_string());
        search.part.shard = Some(SavedShard { index, count: 2 });
        search
    }

    #[test]
    fn a_staircases_shards_merge_step_by_step() {
        // Each shard sends half: 50 of 100 (all answered), 100 of 200 (80 answered).
        let a = shard(1, &[100, 200], vec![step(50, 50), step(100, 80)]);
        let b = shard(2, &[100, 200], vec![step(50, 50), step(100, 80)]);
        let merged = merge_staircases(&[(&a, "a.json"), (&b, "b.json")], "both").unwrap();
        assert_eq!(merged.label, "both");
        assert_eq!(merged.staircase, [100, 200]);
        let requests: Vec<u64> = merged.steps.iter().map(|s| s.counters.requests).collect();
        assert_eq!(requests, [100, 160]);
        let rates: Vec<Option<u64>> = merged.steps.iter().map(|s| s.plan.rate).collect();
        assert_eq!(rates, [Some(100), Some(200)]);
        assert_eq!(merged.outcomes, [Class::Held, Class::Broke]);
        assert_eq!(merged.roles, [Role::Staircase, Role::Staircase]);
        assert_eq!(merged.capacity.value, Some(100));
        assert_eq!(merged.capacity.limited_by, "server");
        assert_eq!(
            merged.capacity.answer,
            "Capacity: 100 requests/sec (rate>90% held at 100; broke at 200: rate 80.0%); \
             range 100–200"
        );
        assert!(render(&merged).starts_with("Capacity staircase (requests/sec)\n"));
        // A merged step is the whole run's: no shard, the run's id.
        assert_eq!(merged.steps[0].part.shard, None);
        assert_eq!(merged.steps[0].part.run_id.as_deref(), Some("stairs"));
    }

    /// tsumo behind its schedule on one shard: the merged step is tsumo's limit, not the
    /// server's, and says which shard.
    #[test]
    fn a_shards_own_limit_is_the_merged_steps() {
        let mut late = step(50, 50);
        late.send_lateness.p99 = 20_000;
        let a = shard(1, &[100, 200], vec![step(50, 50), step(100, 100)]);
        let b = shard(2, &[100, 200], vec![late, step(100, 100)]);
        let merged = merge_staircases(&[(&a, "a.json"), (&b, "b.json")], "both").unwrap();
        assert_eq!(merged.capacity.limited_by, "generator");
        assert_eq!(merged.capacity.value, None);
        assert!(
            merged.capacity.reason.ends_with("(b.json)"),
            "{}",
            merged.capacity.reason
        );
    }

    /// A shard that ran fewer steps (stopped): the merge ends there, as stopped.
    #[test]
    fn a_short_shard_ends_the_merged_staircase() {
        let a = shard(1, &[100, 200], vec![step(50, 50), step(100, 100)]);
        let b = shard(2, &[100, 200], vec![step(50, 50)]);
        let merged = merge_staircases(&[(&a, "a.json"), (&b, "b.json")], "both").unwrap();
        assert_eq!(merged.steps.len(), 1);
        assert_eq!(merged.capacity.limited_by, "stopped");
        assert_eq!(merged.capacity.value, Some(100));
        assert_eq!(merged.capacity.reason, "at 200: b.json ran 1 of 2 steps");
    }

    #[test]
    fn other_staircases_and_searches_do_not_merge() {
        let a = shard(1, &[100, 200], vec![step(50, 50)]);
        let b = shard(2, &[100, 400], vec![step(50, 50)]);
        let e = merge_staircases(&[(&a, "a.json"), (&b, "b.json")], "x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "merge: b.json ran the staircase 100,400 but a.json ran 100,200: shards of one \
             staircase run the same steps"
        );
        assert_eq!(e.exit_status(), crate::error::ExitStatus::BadInput);
        let mut search = b.clone();
        search.staircase.clear();
        let e = merge_staircases(&[(&a, "a.json"), (&search, "s.json")], "x").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("merge: s.json is a capacity search, which does not merge"),
            "{e}"
        );
    }
}
