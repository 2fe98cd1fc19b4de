//! (stub — being written) the engine.
use crate::error::Error;
use crate::plan::Plan;
use crate::report::RunResult;
/// Runs a plan to completion.
pub fn run(_plan: &Plan) -> Result<RunResult, Error> {
    Err(Error::Usage("engine not written yet".into()))
}
