//! Saved runs: the one reader of `--json` output shared by `tsumo compare`, `merge` and `plot`
//! (the A/B rounds of `--vs` build the same [`LoadedRun`] from the runs they just made).
//!
//! Why a module of its own: three commands read the same files and must agree on what a valid
//! one is, on which format versions they read, and on refusing a mix of modes, so the reader is
//! kept apart from compare's table (`report::compare` re-exports it for the paths callers
//! already use). Both kinds are typed: HTTP runs are read into [`SavedRun`], mahjong sessions
//! into [`SavedSession`].

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::json::{SavedRun, SCHEMA_VERSION};
use super::session::SavedSession;
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
}

/// What kind of run, with its document. Serializes as that document.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RunData {
    /// `tsumo URL --json`.
    Http(Box<SavedRun>),
    /// `tsumo mahjong --json`.
    Mahjong(Box<SavedSession>),
}

impl LoadedRun {
    /// A run already in memory; `source` names it in messages.
    pub fn new(data: RunData, source: &str) -> LoadedRun {
        let (label, url) = match &data {
            RunData::Http(saved) => (&saved.label, &saved.plan.url),
            RunData::Mahjong(session) => (&session.label, &session.plan.url),
        };
        let label = if !label.is_empty() {
            label.clone()
        } else if !url.is_empty() {
            url.clone()
        } else {
            source.to_string()
        };
        LoadedRun {
            source: source.to_string(),
            label,
            data,
        }
    }

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
            RunData::Mahjong(session) => &session.plan.url,
        }
    }

    /// The server's CPU and memory, when the run sampled them (`--server-pid`).
    pub fn server(&self) -> Option<&ServerUsage> {
        match &self.data {
            RunData::Http(saved) => saved.server.as_ref(),
            RunData::Mahjong(session) => session.server.as_ref(),
        }
    }
}

/// Reads a file written by `--json` (either mode) or by `tsumo merge`.
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
///
/// The format version (`"schema"`) is checked before anything else, so a file from a newer
/// tsumo is refused for what it is rather than for a field this one does not understand.
pub fn from_value(value: Value, source: &str) -> Result<LoadedRun, Error> {
    let invalid = |reason: String| Error::File {
        path: source.to_string(),
        reason: format!("not a tsumo JSON result ({reason})"),
    };
    if value.get("tool").and_then(Value::as_str) != Some("tsumo") {
        return Err(invalid("no \"tool\": \"tsumo\"".to_string()));
    }
    match value.get("schema") {
        None => {}
        Some(schema) => match schema.as_u64() {
            Some(version) if version <= u64::from(SCHEMA_VERSION) => {}
            Some(version) => {
                return Err(Error::File {
                    path: source.to_string(),
                    reason: format!(
                        "saved in format version {version} (\"schema\": {version}) by a newer \
                         tsumo; this one reads versions up to {SCHEMA_VERSION}"
                    ),
                })
            }
            None => return Err(invalid(format!("\"schema\" is {schema}, not a version"))),
        },
    }
    let data = match value.get("mode").and_then(Value::as_str) {
        Some("mahjong") => {
            let session: SavedSession =
                serde_json::from_value(value).map_err(|e| invalid(format!("mahjong: {e}")))?;
            RunData::Mahjong(Box::new(session))
        }
        None | Some("http") => {
            let saved: SavedRun =
                serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
            RunData::Http(Box::new(saved))
        }
        Some(other) => return Err(invalid(format!("unknown mode '{other}'"))),
    };
    Ok(LoadedRun::new(data, source))
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
