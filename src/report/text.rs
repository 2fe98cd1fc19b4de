//! (stub — being written) wrk2's text report.
use super::RunResult;
/// Renders the whole text report.
pub fn render(_r: &RunResult) -> String {
    String::new()
}
