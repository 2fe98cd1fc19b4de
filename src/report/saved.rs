//! Saved runs: the one reader of `--json` output shared by `tsumo compare`, `merge` and `plot`.
//!
//! Why a module of its own: three commands read the same files and must agree on what a valid
//! one is and on refusing a mix of modes, so the reader is kept apart from compare's table
//! (`report::compare` re-exports it for the paths callers already use). HTTP runs are read into
//! [`SavedRun`], mahjong sessions stay a JSON value (their report owns that layout).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::json::SavedRun;
use crate::error::Error;
use crate::sys::procstat::ServerUsage;

/// One saved run, read from a file or from a JSON value in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedRun {
    /// Where it came from: the file path, or the name the caller gave [`from_value`].
    pub source: String,
    /// The run's label (the URL unless `--label` named it).
    pub label: String,
    pub data: RunData,
    /// The server's CPU and memory, when the run sampled them (`--server-pid`).
    pub server: Option<ServerUsage>,
}

/// What kind of run, with its document.
#[derive(Debug, Clone, PartialEq)]
pub enum RunData {
    /// `tsumo URL --json`.
    Http(Box<SavedRun>),
    /// `tsumo mahjong --json` (the layout of `mahjong::report::to_json`).
    Mahjong(Box<Value>),
}

impl LoadedRun {
    /// "HTTP" or "mahjong", for messages.
    pub fn mode(&self) -> &'static str {
        match self.data {
            RunData::Http(_) => "HTTP",
            RunData::Mahjong(_) => "mahjong",
        }
    }

    /// The target URL as typed.
    pub fn url(&self) -> &str {
        match &self.data {
            RunData::Http(saved) => &saved.plan.url,
            RunData::Mahjong(doc) => doc
                .pointer("/plan/url")
                .and_then(Value::as_str)
                .unwrap_or(""),
        }
    }
}

/// Reads a file written by `--json` (either mode).
pub fn load(path: &Path) -> Result<LoadedRun, Error> {
    let source = path.display().to_string();
    let file_error = |reason: String| Error::File {
        path: source.clone(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| file_error(format!("not a tsumo JSON result (not JSON: {e})")))?;
    from_value(value, &source)
}

/// Every file of a command line, in order; the first that cannot be read is the error.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<LoadedRun>, Error> {
    paths.iter().map(|path| load(path)).collect()
}

/// A run from a JSON document already in memory; `source` names it in messages.
pub fn from_value(value: Value, source: &str) -> Result<LoadedRun, Error> {
    let invalid = |reason: String| Error::File {
        path: source.to_string(),
        reason: format!("not a tsumo JSON result ({reason})"),
    };
    if value.get("tool").and_then(Value::as_str) != Some("tsumo") {
        return Err(invalid("no \"tool\": \"tsumo\"".to_string()));
    }
    let server = match value.get("server") {
        None | Some(Value::Null) => None,
        Some(s) => Some(
            serde_json::from_value::<ServerUsage>(s.clone())
                .map_err(|e| invalid(format!("\"server\": {e}")))?,
        ),
    };
    let label_in = |v: &Value| v.get("label").and_then(Value::as_str).map(str::to_string);
    let (label, data) = match value.get("mode").and_then(Value::as_str) {
        Some("mahjong") => {
            if !value.get("phases").is_some_and(Value::is_object)
                || value
                    .pointer("/plan/players")
                    .and_then(Value::as_u64)
                    .is_none()
            {
                return Err(invalid("a mahjong result without phases or players".into()));
            }
            let label = label_in(&value)
                .or_else(|| {
                    let url = value.pointer("/plan/url").and_then(Value::as_str);
                    url.map(str::to_string)
                })
                .unwrap_or_else(|| source.to_string());
            (label, RunData::Mahjong(Box::new(value)))
        }
        None | Some("http") => {
            let saved: SavedRun =
                serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
            let label = if saved.label.is_empty() {
                saved.plan.url.clone()
            } else {
                saved.label.clone()
            };
            (label, RunData::Http(Box::new(saved)))
        }
        Some(other) => return Err(invalid(format!("unknown mode '{other}'"))),
    };
    Ok(LoadedRun {
        source: source.to_string(),
        label,
        data,
        server,
    })
}

/// Refuses a set of runs of more than one mode (one line naming two of the files).
pub fn check_same_mode(runs: &[LoadedRun], verb: &str) -> Result<(), Error> {
    let Some(first) = runs.first() else {
        return Err(Error::Usage(format!("nothing to {verb}: no runs given")));
    };
    let article = |mode: &str| if mode == "HTTP" { "an" } else { "a" };
    match runs.iter().find(|r| r.mode() != first.mode()) {
        Some(other) => Err(Error::Usage(format!(
            "cannot {verb} {} {} run ({}) with {} {} run ({}); give runs of one mode",
            article(first.mode()),
            first.mode(),
            first.source,
            article(other.mode()),
            other.mode(),
            other.source
        ))),
        None => Ok(()),
    }
}
