//! One command's run, from its plan to its exit status: each mode's run with its report and
//! files (`http`, `mahjong`), and the A/B rounds of `--vs` (`ab`: one loop for both modes, over
//! the small [`ab::Side`] trait each mode's runner implements).
//!
//! Why a module of its own: the binary only parses, runs, renders and exits; what a finished
//! run writes, in which order, and which status it ends with is the library's, tested there.

pub mod ab;
pub mod capacity;
pub mod http;
pub mod mahjong;
pub mod mahjong_capacity;

use std::path::Path;

use crate::error::{Error, ExitStatus};
use crate::plan::JsonOut;
use crate::report::result::SavedResult;
use crate::sys;

/// `--json FILE` (or `-o FILE`) and `--hgrm FILE` can be written, and are two files: checked
/// before any traffic.
pub fn check_outputs(json: Option<&JsonOut>, hgrm: Option<&Path>) -> Result<(), Error> {
    if let (Some(JsonOut::File(json)), Some(hgrm)) = (json, hgrm) {
        sys::output::check_distinct(("--json", json), ("--hgrm", hgrm))?;
    }
    if let Some(JsonOut::File(path)) = json {
        sys::output::check_writable("--json", path)?;
    }
    if let Some(path) = hgrm {
        sys::output::check_writable("--hgrm", path)?;
    }
    Ok(())
}

/// `--html FILE` can be written and is not `--json`'s file (checked before any traffic).
pub fn check_html(html: Option<&Path>, json: Option<&JsonOut>) -> Result<(), Error> {
    let Some(path) = html else {
        return Ok(());
    };
    if let Some(JsonOut::File(json)) = json {
        sys::output::check_distinct(("--json", json), ("--html", path))?;
    }
    sys::output::check_writable("--html", path)
}

/// Writes `run`'s page to `--html FILE`; the error is the run's failure line.
pub fn write_page(html: &Path, run: crate::report::saved::LoadedRun) -> Result<(), String> {
    let page = crate::report::page::render_one(&run);
    crate::report::page::write(&page, html, "--html").map_err(|e| e.to_string())
}

/// The status a finished run exits with, from its saved result (its line on stderr).
pub fn exit_as(saved: &dyn SavedResult) -> ExitStatus {
    match saved.exit() {
        (status, Some(line)) => fail_as(status, &line),
        (status, None) => status,
    }
}

/// An error that ended tsumo: its line, and the status its kind says (2 for bad input).
pub fn error_exit(e: &Error) -> ExitStatus {
    fail_as(e.exit_status(), e)
}

/// A run that failed: its line, exit 1.
pub fn fail(e: &dyn std::fmt::Display) -> ExitStatus {
    fail_as(ExitStatus::Failed, e)
}

/// Prints `tsumo: LINE` on stderr and gives `status` back.
pub fn fail_as(status: ExitStatus, e: &dyn std::fmt::Display) -> ExitStatus {
    eprintln!("tsumo: {e}");
    status
}
