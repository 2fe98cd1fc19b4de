//! (stub — being written) wrk2's command line.

use crate::error::Error;
use crate::plan::Plan;

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run this plan.
    Run(Box<Plan>),
    /// Print this text on stdout and exit 0 (`--help`, `--version`).
    Print(String),
}

/// Parses argv (including argv[0]).
pub fn parse<I, T>(_args: I) -> Result<Parsed, Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Err(Error::Usage("command line parsing is not written yet".into()))
}
