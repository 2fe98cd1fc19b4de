//! The files a command writes and reads, checked together before any traffic: every output is
//! distinct from every other output and from every input (under any name of the file), and
//! can be written. One list per command, so a new output or input is one more entry, never
//! one more pair to remember.

use std::path::Path;

use crate::error::Error;
use crate::plan::{JsonOut, MahjongPlan, Plan, RunOptions, WsPlan};
use crate::sys;

/// Checks `outputs` (`(flag, path)`, in the order they are written; `None` when not given)
/// against each other and `inputs` (`(what, path)`: `the -s script`), then that each can be
/// written. Nothing is truncated.
pub fn check(
    outputs: &[(&str, Option<&Path>)],
    inputs: &[(&str, Option<&Path>)],
) -> Result<(), Error> {
    let outputs = given(outputs);
    sys::output::check_distinct(&outputs, &given(inputs))?;
    for (flag, path) in outputs {
        // The request log streams during the run: a device (`/dev/full`) is the run's to find
        // full, and its write error stops the log, not the run.
        if flag == REQUESTS && is_device(path) {
            continue;
        }
        sys::output::check_writable(flag, path)?;
    }
    Ok(())
}

/// `--requests`, written as the run goes.
const REQUESTS: &str = "--requests";

fn is_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

/// The files given: `None` left out.
fn given<'a>(files: &[(&'a str, Option<&'a Path>)]) -> Vec<(&'a str, &'a Path)> {
    files
        .iter()
        .filter_map(|&(name, path)| Some((name, path?)))
        .collect()
}

/// An HTTP run's (and a capacity search's) files: `--json`, `--html`, `--junit`, `--hgrm`,
/// `--hlog`, `--requests` written; `-s` and `--cacert` read.
pub fn of_run(plan: &Plan) -> Result<(), Error> {
    of_options(
        &plan.options,
        &[
            ("--hgrm", plan.hgrm.as_deref()),
            ("--hlog", plan.hlog.as_deref()),
            (REQUESTS, plan.requests.as_ref().map(|r| r.path.as_path())),
        ],
        ("the -s script", plan.script.as_deref()),
    )
}

/// A mahjong session's (and its capacity search's) files: `--json`, `--html`, `--junit`,
/// `--requests` written; `--rule` and `--cacert` read.
pub fn of_session(plan: &MahjongPlan) -> Result<(), Error> {
    of_options(
        &plan.options,
        &[(REQUESTS, plan.requests.as_ref().map(|r| r.path.as_path()))],
        ("the --rule file", plan.rule_file.as_deref()),
    )
}

/// A WebSocket run's files: `--json`, `--html`, `--junit`, `--requests` written; `-s` and
/// `--cacert` read.
pub fn of_ws(plan: &WsPlan) -> Result<(), Error> {
    of_options(
        &plan.options,
        &[(REQUESTS, plan.requests.as_ref().map(|r| r.path.as_path()))],
        ("the -s script", plan.script.as_deref()),
    )
}

/// Every mode's files (`--json`, `--html`, `--junit` written, then the mode's `outputs`; the
/// mode's `input`, then `--cacert` read), checked together.
fn of_options(
    options: &RunOptions,
    outputs: &[(&str, Option<&Path>)],
    input: (&str, Option<&Path>),
) -> Result<(), Error> {
    let mut written = vec![
        ("--json", json_file(options.json.as_ref())),
        ("--html", options.html.as_deref()),
        ("--junit", options.junit.as_deref()),
    ];
    written.extend_from_slice(outputs);
    check(
        &written,
        &[input, ("the --cacert file", options.cacert.as_deref())],
    )
}

/// `--json FILE`'s file; `--json -` writes no file.
fn json_file(json: Option<&JsonOut>) -> Option<&Path> {
    match json {
        Some(JsonOut::File(path)) => Some(path),
        _ => None,
    }
}
