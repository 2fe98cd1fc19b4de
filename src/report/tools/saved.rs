//! Saved runs: the one reader of `--json` output shared by `tsumo compare`, `merge` and `plot`
//! (the A/B rounds of `--vs` build the same [`LoadedRun`] from the runs they just made), and the
//! layout of an A/B comparison's own file ([`SavedRounds`]).
//!
//! Why a module of its own: three commands read the same files and must agree on what a valid
//! one is, on which format versions they read, and on refusing a mix of modes, so the reader is
//! kept apart from compare's table (`report::tools::compare` re-exports it for the paths callers
//! already use). Every kind is typed: the dispatcher, [`crate::report::kinds`], reads each
//! document into its kind's saved type.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;
pub use crate::report::kinds::RunData;
use crate::report::result::SavedResult;
use crate::report::schema::SCHEMA_VERSION;
use crate::sys::procstat::ServerUsage;

/// One saved run, read from a file or from a JSON value in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedRun {
    /// Where it came from: the file path, or the name the caller gave [`from_value`].
    pub source: String,
    /// The run's label (the URL unless `--label` named it).
    pub label: String,
    pub data: RunData,
    /// Why the run is left out of a comparison (an A/B round cut short by a signal or stopped
    /// by a script error); `None` for a run that is compared.
    pub left_out: Option<String>,
}

impl LoadedRun {
    /// A run already in memory; `source` names it in messages.
    pub fn new(data: RunData, source: &str) -> LoadedRun {
        let result = data.as_dyn();
        let label = if !result.label().is_empty() {
            result.label().to_string()
        } else if !result.url().is_empty() {
            result.url().to_string()
        } else {
            source.to_string()
        };
        LoadedRun {
            source: source.to_string(),
            label,
            data,
            left_out: None,
        }
    }

    /// The saved result, whatever its mode.
    pub fn result(&self) -> &dyn SavedResult {
        self.data.as_dyn()
    }

    /// How the run ended before its plan did, in words: a script error, or the signal that cut
    /// it short (`None` for a run that ended as planned).
    pub fn ended_early(&self) -> Option<String> {
        let result = self.result();
        result.stopped_by_error().or_else(|| {
            let elapsed_s = result.elapsed_s();
            self.cut_by_signal()
                .map(|signal| format!("cut short by {signal} after {elapsed_s:.2}s"))
        })
    }

    /// The signal that cut the run short, if one did.
    pub fn cut_by_signal(&self) -> Option<String> {
        self.result().cut_by_signal()
    }

    /// "HTTP", "mahjong" or "capacity", for messages ([`SavedResult::title`]).
    pub fn title(&self) -> &'static str {
        self.result().title()
    }

    /// The target URL as typed.
    pub fn url(&self) -> &str {
        self.result().url()
    }

    /// The server's CPU and memory, when the run sampled them (`--server-pid`).
    pub fn server(&self) -> Option<&ServerUsage> {
        self.result().server()
    }
}

/// Reads a file written by `--json` (either mode) or by `tsumo merge`: one run.
pub fn load(path: &Path) -> Result<LoadedRun, Error> {
    let source = path.display().to_string();
    from_value(read_value(path)?, &source)
}

fn read_value(path: &Path) -> Result<Value, Error> {
    let file_error = |reason: String| Error::File {
        path: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
    serde_json::from_str(&text)
        .map_err(|e| file_error(format!("not a tsumo JSON result (not JSON: {e})")))
}

/// Every run of every file of a command line, in order (an A/B comparison's file gives each of
/// its runs, those it left out marked); the first file that cannot be read is the error.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<LoadedRun>, Error> {
    let mut runs = Vec::new();
    for path in paths {
        runs.extend(runs_of_value(
            read_value(path)?,
            &path.display().to_string(),
        )?);
    }
    Ok(runs)
}

/// The `"kind"` of an A/B comparison's file (`--vs --json`): its runs, not one run.
pub const ROUNDS_KIND: &str = "vs";

/// `--json` of an A/B comparison (`--vs`): a tsumo file of its own kind, with every run of every
/// round in the order run (round 1's first target, round 1's second, round 2's first …), and
/// those left out of the comparison with the reason. `tsumo compare` and `tsumo plot` read it as
/// its runs; `tsumo merge` refuses it (its rounds ran one after another, not side by side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SavedRounds<'a> {
    /// Always `"tsumo"`.
    pub tool: &'static str,
    pub version: &'static str,
    /// The format version, as in a run's file.
    pub schema: u32,
    /// `"http"` or `"mahjong"`, as each run's.
    pub mode: &'static str,
    /// Always [`ROUNDS_KIND`].
    pub kind: &'static str,
    /// `--rounds`: how many rounds were planned.
    pub rounds: u32,
    /// `rounds` when every planned round ran; else what ended the comparison early: a signal
    /// (`SIGINT`, `SIGTERM`, `SIGHUP`) or `error`.
    pub ended_by: String,
    /// The error that ended the comparison, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The runs left out of the comparison, and why.
    pub left_out: Vec<LeftOut>,
    /// Every run, each its own document as `--json` writes it.
    pub runs: Vec<&'a RunData>,
    /// The command line that ran the comparison, exactly as given (argv, `argv[0]` first);
    /// absent in files of tsumos before it was saved.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub command: &'a [String],
}

impl<'a> SavedRounds<'a> {
    /// The document of a comparison that ran `runs` (two a round, in the order run) of
    /// `rounds` planned; `ended_by` is `None` when every round ran.
    pub fn new(
        mode: &'static str,
        runs: &'a [LoadedRun],
        rounds: u32,
        ended_by: Option<String>,
        error: Option<String>,
        command: &'a [String],
    ) -> SavedRounds<'a> {
        let left_out = runs
            .iter()
            .enumerate()
            .filter_map(|(i, run)| {
                Some(LeftOut {
                    run: i,
                    label: run.label.clone(),
                    round: u32::try_from(i / 2 + 1).unwrap_or(u32::MAX),
                    reason: run.left_out.clone()?,
                })
            })
            .collect();
        SavedRounds {
            tool: "tsumo",
            version: env!("CARGO_PKG_VERSION"),
            schema: SCHEMA_VERSION,
            mode,
            kind: ROUNDS_KIND,
            rounds,
            ended_by: ended_by.unwrap_or_else(|| "rounds".to_string()),
            error,
            left_out,
            runs: runs.iter().map(|r| &r.data).collect(),
            command,
        }
    }
}

/// A run of an A/B comparison left out of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Its place in `runs`, from 0.
    pub run: usize,
    pub label: String,
    pub round: u32,
    /// e.g. `cut short by SIGINT after 1.02s`.
    pub reason: String,
}

/// The runs of a JSON document: one run's file gives that run, an A/B comparison's each of its
/// runs (named `SOURCE: LABEL round N`, those left out of the comparison marked).
pub fn runs_of_value(value: Value, source: &str) -> Result<Vec<LoadedRun>, Error> {
    if value.get("kind").and_then(Value::as_str) != Some(ROUNDS_KIND) {
        return from_value(value, source).map(|run| vec![run]);
    }
    check_header(&value, source)?;
    let invalid = |reason: String| Error::File {
        path: source.to_string(),
        reason: format!("not a tsumo JSON result ({reason})"),
    };
    let left_out: Vec<LeftOut> = match value.get("left_out") {
        Some(list) => serde_json::from_value(list.clone())
            .map_err(|e| invalid(format!("\"left_out\": {e}")))?,
        None => Vec::new(),
    };
    let Some(Value::Array(documents)) = value.get("runs") else {
        return Err(invalid("an A/B comparison without \"runs\"".to_string()));
    };
    let mut runs = Vec::new();
    for (i, document) in documents.iter().enumerate() {
        let mut run = from_value(document.clone(), &format!("{source} run {}", i + 1))?;
        run.source = format!("{source}: {} round {}", run.label, i / 2 + 1);
        run.left_out = left_out
            .iter()
            .find(|l| l.run == i)
            .map(|l| l.reason.clone());
        runs.push(run);
    }
    Ok(runs)
}

/// `"tool": "tsumo"` and a format version this tsumo reads.
fn check_header(value: &Value, source: &str) -> Result<(), Error> {
    let invalid = |reason: String| Error::File {
        path: source.to_string(),
        reason: format!("not a tsumo JSON result ({reason})"),
    };
    if value.get("tool").and_then(Value::as_str) != Some("tsumo") {
        return Err(invalid("no \"tool\": \"tsumo\"".to_string()));
    }
    match value.get("schema") {
        None => Ok(()),
        Some(schema) => match schema.as_u64() {
            Some(version) if version <= u64::from(SCHEMA_VERSION) => Ok(()),
            Some(version) => Err(Error::File {
                path: source.to_string(),
                reason: format!(
                    "saved in format version {version} (\"schema\": {version}) by a newer \
                     tsumo; this one reads versions up to {SCHEMA_VERSION}"
                ),
            }),
            None => Err(invalid(format!("\"schema\" is {schema}, not a version"))),
        },
    }
}

/// One run from a JSON document already in memory; `source` names it in messages. An A/B
/// comparison's file is refused: it holds several runs (see [`runs_of_value`]).
///
/// The format version (`"schema"`) is checked before anything else, so a file from a newer
/// tsumo is refused for what it is rather than for a field this one does not understand.
pub fn from_value(value: Value, source: &str) -> Result<LoadedRun, Error> {
    check_header(&value, source)?;
    if value.get("kind").and_then(Value::as_str) == Some(ROUNDS_KIND) {
        let runs = value
            .get("runs")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        return Err(Error::File {
            path: source.to_string(),
            reason: format!(
                "the {runs} runs of an A/B comparison (--vs), not one run: they ran one after \
                 another, not side by side, so they are not parts of one run to merge \
                 (tsumo compare and tsumo plot read them)"
            ),
        });
    }
    let data = RunData::of_document(value, source)?;
    Ok(LoadedRun::new(data, source))
}

/// Refuses a set of runs of more than one mode (one line naming two of the files).
pub fn check_same_mode(runs: &[LoadedRun], verb: &str) -> Result<(), Error> {
    let Some(first) = runs.first() else {
        return Err(Error::Usage(format!("nothing to {verb}: no runs given")));
    };
    let article = |mode: &str| match mode.chars().next() {
        Some('H' | 'a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    };
    match runs.iter().find(|r| r.title() != first.title()) {
        Some(other) => Err(Error::Usage(format!(
            "cannot {verb} {} {} run ({}) with {} {} run ({}); give runs of one mode",
            article(first.title()),
            first.title(),
            first.source,
            article(other.title()),
            other.title(),
            other.source
        ))),
        None => Ok(()),
    }
}

/// One run given twice (the same file, or a copy of it) would count twice in a merge and in a
/// comparison's mean ("varies 0%"), and be compared with itself in a report: `tool` names the
/// command in the error.
pub fn refuse_duplicates(runs: &[LoadedRun], tool: &str) -> Result<(), Error> {
    for (i, a) in runs.iter().enumerate() {
        for b in &runs[i + 1..] {
            if a.data == b.data {
                return Err(Error::Usage(format!(
                    "{tool}: {} and {} are the same run; give each run once",
                    a.source, b.source
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An A/B comparison's file as `--vs --json` writes it: two rounds, the last run cut short.
    fn rounds_document() -> Value {
        let run: Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/http-direct-v1.json"))
                .unwrap();
        let mut second = run.clone();
        second["label"] = "b".into();
        serde_json::json!({
            "tool": "tsumo", "version": "0", "schema": 1, "mode": "http", "kind": ROUNDS_KIND,
            "rounds": 2, "ended_by": "SIGTERM",
            "left_out": [{"run": 3, "label": "b", "round": 2, "reason": "cut short by SIGTERM"}],
            "runs": [run.clone(), second.clone(), run, second],
        })
    }

    #[test]
    fn an_ab_file_gives_its_runs_named_by_round_with_those_left_out_marked() {
        let runs = runs_of_value(rounds_document(), "ab.json").unwrap();
        let names: Vec<(&str, Option<&str>)> = runs
            .iter()
            .map(|r| (r.source.as_str(), r.left_out.as_deref()))
            .collect();
        assert_eq!(
            names,
            [
                ("ab.json: direct round 1", None),
                ("ab.json: b round 1", None),
                ("ab.json: direct round 2", None),
                ("ab.json: b round 2", Some("cut short by SIGTERM")),
            ]
        );
        // One run is asked for (merge): refused, saying what the file is.
        let e = from_value(rounds_document(), "ab.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("ab.json: the 4 runs of an A/B comparison (--vs)"),
            "{e}"
        );
        // A newer format is refused as for one run.
        let mut newer = rounds_document();
        newer["schema"] = 99.into();
        let e = runs_of_value(newer, "ab.json").unwrap_err().to_string();
        assert!(e.contains("format version 99"), "{e}");
    }

    #[test]
    fn a_missing_file_names_its_path() {
        match load(Path::new("/nonexistent-dir-for-tsumo/run.json")) {
            Err(Error::File { path, .. }) => {
                assert_eq!(path, "/nonexistent-dir-for-tsumo/run.json")
            }
            other => panic!("expected a file error, got {other:?}"),
        }
    }

    #[test]
    fn every_kind_answers_through_the_trait() {
        let http = from_value(
            serde_json::from_str(include_str!("../../../tests/fixtures/http-direct-v1.json"))
                .unwrap(),
            "http.json",
        )
        .unwrap();
        let session = from_value(
            serde_json::from_str(include_str!(
                "../../../tests/fixtures/mahjong-direct-v1.json"
            ))
            .unwrap(),
            "session.json",
        )
        .unwrap();
        assert_eq!((http.title(), session.title()), ("HTTP", "mahjong"));
        let keys = |run: &LoadedRun| -> Vec<&str> {
            run.result()
                .plan_key()
                .into_iter()
                .map(|(what, _)| what)
                .collect()
        };
        assert_eq!(keys(&http), ["duration", "rate", "protocol"]);
        assert_eq!(keys(&session), ["duration", "players", "games"]);
        // The exit verdict: 0 for both fixtures; 1 with the line a run fails with.
        assert_eq!(http.result().verdict(), None);
        assert_eq!(session.result().verdict(), None);
        let mut silent = http.clone();
        if let RunData::Http(saved) = &mut silent.data {
            saved.counters.requests = 0;
        }
        let verdict = silent.result().verdict().unwrap_or_default();
        assert!(
            verdict.starts_with("no response was received ("),
            "{verdict}"
        );
        let mut left = session.clone();
        if let RunData::Mahjong(saved) = &mut left.data {
            saved.failure = Some("tsumo did not see 1 session logged out".to_string());
        }
        assert_eq!(
            left.result().verdict().as_deref(),
            Some("tsumo did not see 1 session logged out")
        );
        // Parts merge into their own kind.
        let parts = [(&http.data, "a"), (&http.data, "b")];
        let merged = http.data.merge(&parts, "both").unwrap();
        assert_eq!(merged.as_dyn().title(), "HTTP");
        assert_eq!(merged.as_dyn().label(), "both");
    }
}
