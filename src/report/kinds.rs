//! The dispatcher: the one file that names every kind's saved type. It reads a document into
//! its kind (by its `"mode"`, and a search's by the kind of its steps), hands the result on as
//! [`SavedResult`], and merges results of one kind. A new kind of result is a folder beside
//! `http/`, `mahjong/`, `ws/` and `capacity/`, and an arm in each match here.

use serde::Serialize;
use serde_json::Value;

use super::capacity::{self, SavedSearch};
use super::http::{self, saved::SavedRun};
use super::mahjong::{self, saved::SavedSession};
use super::result::{SavedResult, SearchStep};
use super::ws::{self, saved::SavedWsRun};
use crate::error::Error;
use crate::slo::Verdict;

/// What kind of result, with its document. Serializes as that document. The tools ask it
/// through [`RunData::as_dyn`]; it is matched in this file alone (each kind's runner in
/// `run/` only makes its own).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RunData {
    /// `tsumo URL --json`.
    Http(Box<SavedRun>),
    /// `tsumo mahjong --json`.
    Mahjong(Box<SavedSession>),
    /// `tsumo ws --json`.
    Ws(Box<SavedWsRun>),
    /// A capacity search (`tsumo capacity --json`).
    Capacity(Box<SavedSearch<SavedRun>>),
    /// A search over players (`tsumo mahjong --capacity --json`).
    MahjongCapacity(Box<SavedSearch<SavedSession>>),
}

impl RunData {
    /// A saved document read into its kind; `source` names it in messages. The caller has
    /// checked its header (`"tool"`, `"schema"`).
    pub fn of_document(value: Value, source: &str) -> Result<RunData, Error> {
        let invalid = |reason: String| Error::File {
            path: source.to_string(),
            reason: format!("not a tsumo JSON result ({reason})"),
        };
        let kind = |what: &str, e: serde_json::Error| invalid(format!("{what}: {e}"));
        Ok(match value.get("mode").and_then(Value::as_str) {
            Some(mahjong::MODE) => RunData::Mahjong(Box::new(
                serde_json::from_value(value).map_err(|e| kind(mahjong::MODE, e))?,
            )),
            Some(ws::MODE) => RunData::Ws(Box::new(
                serde_json::from_value(value).map_err(|e| kind(ws::MODE, e))?,
            )),
            Some(capacity::MODE) if of_players(&value) => RunData::MahjongCapacity(Box::new(
                serde_json::from_value(value).map_err(|e| kind(capacity::MODE, e))?,
            )),
            Some(capacity::MODE) => RunData::Capacity(Box::new(
                serde_json::from_value(value).map_err(|e| kind(capacity::MODE, e))?,
            )),
            None | Some(http::MODE) => RunData::Http(Box::new(
                serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?,
            )),
            Some(other) => return Err(invalid(format!("unknown mode '{other}'"))),
        })
    }

    /// The result, whatever its mode: what every tool on saved results asks.
    pub fn as_dyn(&self) -> &dyn SavedResult {
        match self {
            RunData::Http(saved) => saved.as_ref(),
            RunData::Mahjong(session) => session.as_ref(),
            RunData::Ws(run) => run.as_ref(),
            RunData::Capacity(search) => search.as_ref(),
            RunData::MahjongCapacity(search) => search.as_ref(),
        }
    }

    /// A search's steps in order (none for a run or a session): what each was judged as.
    pub fn steps(&self) -> Vec<SearchStepOf<'_>> {
        match self {
            RunData::Http(_) | RunData::Mahjong(_) | RunData::Ws(_) => Vec::new(),
            RunData::Capacity(search) => steps_of(search),
            RunData::MahjongCapacity(search) => steps_of(search),
        }
    }

    pub fn as_dyn_mut(&mut self) -> &mut dyn SavedResult {
        match self {
            RunData::Http(saved) => saved.as_mut(),
            RunData::Mahjong(session) => session.as_mut(),
            RunData::Ws(run) => run.as_mut(),
            RunData::Capacity(search) => search.as_mut(),
            RunData::MahjongCapacity(search) => search.as_mut(),
        }
    }

    /// `parts` (each with its source; all of this one's mode, the caller checked) merged into
    /// one result of that mode.
    pub fn merge(&self, parts: &[(&RunData, &str)], label: &str) -> Result<RunData, Error> {
        Ok(match self {
            RunData::Http(_) => RunData::Http(Box::new(merge_as(parts, label)?)),
            RunData::Mahjong(_) => RunData::Mahjong(Box::new(merge_as(parts, label)?)),
            RunData::Ws(_) => RunData::Ws(Box::new(merge_as(parts, label)?)),
            RunData::Capacity(_) => RunData::Capacity(Box::new(merge_as(parts, label)?)),
            RunData::MahjongCapacity(_) => {
                RunData::MahjongCapacity(Box::new(merge_as(parts, label)?))
            }
        })
    }
}

/// One step of a search, as the tools on any result read it.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchStepOf<'a> {
    /// The load offered, and what it is counted in (`requests/sec`, `players`).
    pub load: Option<u64>,
    pub unit: &'static str,
    /// `grow`, `bisect`, `confirm`, `staircase`; and `held`, `broke`, `generator-limited` ….
    pub role: &'static str,
    pub outcome: &'static str,
    /// The step's objectives as judged on it.
    pub objectives: &'a [Verdict],
    /// Wall time of the step, seconds.
    pub elapsed_s: f64,
}

fn steps_of<S: SearchStep>(search: &SavedSearch<S>) -> Vec<SearchStepOf<'_>> {
    search
        .steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let view = step.step_view(search.achieved.get(i).copied());
            SearchStepOf {
                load: view.target,
                unit: S::UNIT.as_str(),
                role: search.roles.get(i).map_or("", |role| role.as_str()),
                outcome: search.outcomes.get(i).map_or("", |class| class.as_str()),
                objectives: view.objectives,
                elapsed_s: step.elapsed_s(),
            }
        })
        .collect()
}

/// [`SavedResult::merge`] of parts that are all `T`s. A part of another kind that the caller's
/// check of modes let through (a search of requests beside one of players: both are
/// `capacity`) is refused, after the `T`s' own refusal if they have one.
fn merge_as<T: SavedResult + 'static>(parts: &[(&RunData, &str)], label: &str) -> Result<T, Error> {
    let typed: Vec<(&T, &str)> = parts
        .iter()
        .filter_map(|(data, source)| Some((data.as_dyn().as_any().downcast_ref::<T>()?, *source)))
        .collect();
    let merged = T::merge(&typed, label)?;
    let other = parts
        .iter()
        .find(|(data, _)| data.as_dyn().as_any().downcast_ref::<T>().is_none());
    match (other, typed.first()) {
        (Some((_, source)), Some((_, first))) => Err(Error::Usage(format!(
            "merge: {source} is not the same kind of result as {first}: give results of one kind"
        ))),
        _ => Ok(merged),
    }
}

/// Whether a search's document is of players: its unit says so, or its first step is a
/// session (a search with no step of either is an HTTP one, as files before the search over
/// players were).
fn of_players(value: &Value) -> bool {
    let unit = value.pointer("/capacity/unit").and_then(Value::as_str);
    let first = value.pointer("/steps/0/mode").and_then(Value::as_str);
    unit == Some(crate::capacity::LoadUnit::Players.as_str()) || first == Some(mahjong::MODE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::{judge_staircase, LoadUnit};
    use crate::report::objectives::tests::fixture;
    use crate::report::result::SearchStep;

    /// A staircase of one step at 100, of these steps.
    fn staircase<S: SearchStep>(unit: LoadUnit, step: S) -> SavedSearch<S> {
        let capacity = judge_staircase(unit, Vec::new()).saved();
        let roles = vec![(
            crate::capacity::Role::Staircase,
            crate::capacity::Class::Held,
        )];
        let mut search =
            SavedSearch::new("x", "http://x/", capacity, roles, vec![step], Vec::new());
        search.staircase = vec![100];
        search
    }

    #[test]
    fn searches_of_requests_and_of_players_do_not_merge_into_one() {
        let requests = RunData::Capacity(Box::new(staircase(
            LoadUnit::RequestsPerSec,
            fixture::<SavedRun>("http-direct-v1.json"),
        )));
        let players = RunData::MahjongCapacity(Box::new(staircase(
            LoadUnit::Players,
            fixture::<SavedSession>("mahjong-direct-v1.json"),
        )));
        // Each alone is what it is: a staircase of requests merges with itself.
        assert!(requests
            .merge(&[(&requests, "a.json"), (&requests, "b.json")], "both")
            .is_ok());
        let refused = |first: &RunData, second: &RunData| match first
            .merge(&[(first, "a.json"), (second, "b.json")], "both")
        {
            Err(Error::Usage(line)) => line,
            other => panic!("merged: {other:?}"),
        };
        assert_eq!(
            refused(&requests, &players),
            "merge: b.json is not the same kind of result as a.json: give results of one kind"
        );
        assert!(
            refused(&players, &requests)
                .starts_with("merge: a.json is a search over players, which does not merge"),
            "{}",
            refused(&players, &requests)
        );
    }
}
