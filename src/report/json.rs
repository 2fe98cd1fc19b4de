//! (stub — being written) JSON results.
use super::RunResult;
use crate::error::Error;
use crate::plan::JsonOut;
/// Writes the JSON result to a file or stdout.
pub fn write(_r: &RunResult, _out: &JsonOut) -> Result<(), Error> {
    Ok(())
}
