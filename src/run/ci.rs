//! What a command leaves for a CI system when it ends: `--junit FILE` (each objective a test
//! case, `report::tools::junit`) and, when `GITHUB_STEP_SUMMARY` names a file, its Markdown
//! summary appended there (`report::tools::markdown`). Both are written once per command, by
//! [`finish`] in `run::with_dashboard` that every command runs in: on success, on a broken
//! objective (99) and on a failed run (1, with the line it failed with); never on bad input
//! (2: nothing ran, and a refused `--junit` path is not to be written).
//!
//! Why the results and failure lines are kept here until the end: a command ends in many
//! places (each mode's end, the A/B loop, the searches; a failure before any result) and says
//! its failure in one ([`super::fail_as`]). Noting both where they already pass, and writing
//! once at the end, is one hook per command instead of one per way of ending.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use crate::error::{Error, ExitStatus};
use crate::plan::RunOptions;
use crate::report::tools::saved::LoadedRun;
use crate::report::tools::{junit, markdown};

/// The environment variable GitHub Actions sets to the file a step's summary is appended to.
pub const STEP_SUMMARY: &str = "GITHUB_STEP_SUMMARY";

/// The command's results and failure lines so far.
#[derive(Default)]
struct Noted {
    runs: Vec<LoadedRun>,
    said: Vec<String>,
}

static NOTED: Mutex<Noted> = Mutex::new(Noted {
    runs: Vec::new(),
    said: Vec::new(),
});

/// Whether a command with `options` leaves anything for a CI system.
pub(super) fn wanted(options: &RunOptions) -> bool {
    options.junit.is_some() || summary_file().is_some()
}

/// The command's results, as its outputs are written (a run, a comparison's rounds, a search).
pub(super) fn results(runs: Vec<LoadedRun>) {
    if let Ok(mut noted) = NOTED.lock() {
        noted.runs = runs;
    }
}

/// A line the command failed with (said on stderr).
pub(super) fn said(line: String) {
    if let Ok(mut noted) = NOTED.lock() {
        noted.said.push(line);
    }
}

/// Writes `--junit` and the step summary of the command that ended with `status`; an output
/// that cannot be written is its line, and a status of 0 or 99 becomes 1 (as for `--json`).
pub(super) fn finish(options: &RunOptions, status: ExitStatus) -> ExitStatus {
    if !wanted(options)
        || !matches!(
            status,
            ExitStatus::Ran | ExitStatus::Failed | ExitStatus::ObjectiveBroken
        )
    {
        return status;
    }
    let noted = NOTED.lock().map(|mut n| std::mem::take(&mut *n));
    let Noted { runs, said } = noted.unwrap_or_default();
    let failed = (status == ExitStatus::Failed).then(|| match said.is_empty() {
        true => "the run failed".to_string(),
        false => said.join("; "),
    });
    let mut lost = false;
    if let Some(path) = &options.junit {
        let written = junit::document(&options.label, &runs, failed.as_deref())
            .and_then(|xml| write_whole(path, xml.as_bytes(), "--junit"));
        if let Err(e) = written {
            super::fail(&e);
            lost = true;
        }
    }
    if let Some(path) = summary_file() {
        let summary = match (runs.as_slice(), &failed) {
            ([], Some(line)) => Ok(markdown::failed(&options.label, line)),
            ([], None) => Ok(String::new()),
            (runs, _) => markdown::render(runs),
        };
        if let Err(e) = summary.and_then(|text| append(Path::new(&path), &text)) {
            super::fail(&e);
            lost = true;
        }
    }
    match (lost, status) {
        (true, ExitStatus::Ran | ExitStatus::ObjectiveBroken) => ExitStatus::Failed,
        _ => status,
    }
}

/// `GITHUB_STEP_SUMMARY`, when set to a path.
fn summary_file() -> Option<std::ffi::OsString> {
    std::env::var_os(STEP_SUMMARY).filter(|path| !path.is_empty())
}

fn write_whole(path: &Path, bytes: &[u8], flag: &str) -> Result<(), Error> {
    crate::sys::output::write_whole(path, bytes).map_err(|e| Error::Write {
        path: format!("{flag} {}", path.display()),
        reason: e.to_string(),
    })
}

/// Appends `text` to the step summary (other steps' summaries before it are kept).
fn append(path: &Path, text: &str) -> Result<(), Error> {
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(text.as_bytes()));
    appended.map_err(|e| Error::Write {
        path: format!("{STEP_SUMMARY} {}", path.display()),
        reason: e.to_string(),
    })
}
