//! JUnit XML of judged results (`--junit FILE`), for the test page a CI system already shows:
//! every objective a test case (its verdict a `<failure>` when broken, the measured value in
//! its message: `p99<10ms: p99 41ms`), and one case `run` that fails with the line the run
//! failed with (its errors, a script error, the server that refused connections). A result is
//! one suite; a capacity search is one suite for the search and one per step.
//!
//! Why quick-junit (cargo-nextest's writer): it escapes what a label or an error line holds and
//! writes the attributes JUnit readers count (`tests`, `failures`), so none of that is ours.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::saved::LoadedRun;
use crate::error::Error;
use crate::report::kinds::SearchStepOf;
use crate::slo::Verdict;

/// The name of the case that says whether the run itself ran (or why it failed).
const RUN_CASE: &str = "run";

/// The JUnit document of `runs` (one run, a comparison's rounds, a search), as written to
/// `--junit`. `failed`: the line the command failed with after (or before) its results, if
/// it did: the `run` case of the first run says it when no run's own case failed already, a
/// suite named `name` does when there is no run.
pub fn document(name: &str, runs: &[LoadedRun], failed: Option<&str>) -> Result<String, Error> {
    let mut suites = Vec::new();
    let own: Vec<Option<String>> = runs.iter().map(own_failure).collect();
    let command_failed = failed.filter(|_| own.iter().all(Option::is_none));
    if runs.is_empty() {
        let mut suite = TestSuite::new(name);
        suite.add_test_case(run_case(name, command_failed));
        suites.push(suite);
    }
    for (i, (run, own)) in runs.iter().zip(&own).enumerate() {
        let result = run.result();
        let name = match runs {
            [_] => run.label.clone(),
            _ => format!("{}: {}", run.label, run.source),
        };
        let mut suite = TestSuite::new(name.as_str());
        suite.set_time(seconds(result.elapsed_s()));
        let failed = own.as_deref().or(command_failed.filter(|_| i == 0));
        suite.add_test_case(run_case(&name, failed));
        suite.add_test_cases(result.objectives().iter().map(|v| objective_case(&name, v)));
        suites.push(suite);
        for (stage, verdicts) in result.stage_objectives() {
            let name = format!("{name}: {stage}");
            let mut suite = TestSuite::new(name.as_str());
            suite.add_test_cases(verdicts.iter().map(|v| objective_case(&name, v)));
            suites.push(suite);
        }
        for (number, step) in (1..).zip(&run.data.steps()) {
            suites.push(step_suite(&name, number, step));
        }
    }
    let mut report = Report::new("tsumo");
    report.add_test_suites(suites);
    report.to_string().map_err(|e| Error::Write {
        path: "--junit".to_string(),
        reason: e.to_string(),
    })
}

/// Why a run failed by its own account (its errors, a script error, left out of a comparison).
fn own_failure(run: &LoadedRun) -> Option<String> {
    let result = run.result();
    result
        .verdict()
        .or_else(|| result.stopped_by_error())
        .or_else(|| run.left_out.clone())
}

/// A step's suite: `LABEL: step 3 at 1,600 requests/sec`, a case per objective judged on it.
fn step_suite(name: &str, number: usize, step: &SearchStepOf<'_>) -> TestSuite {
    let load = step.load.map_or_else(
        || "?".to_string(),
        |load| format!("{} {}", crate::capacity::grouped(load), step.unit),
    );
    let name = format!("{name}: step {number} at {load}");
    let mut suite = TestSuite::new(name.as_str());
    suite.set_time(seconds(step.elapsed_s));
    suite.add_property(("role", step.role));
    suite.add_property(("outcome", step.outcome));
    suite.add_test_cases(step.objectives.iter().map(|v| objective_case(&name, v)));
    suite
}

/// `run`: a success, or a failure that says why.
fn run_case(classname: &str, failed: Option<&str>) -> TestCase {
    let status = match failed {
        None => TestCaseStatus::success(),
        Some(line) => {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(line).set_type("run failed");
            status
        }
    };
    let mut case = TestCase::new(RUN_CASE, status);
    case.set_classname(classname);
    case
}

/// An objective's case, named as typed (`p99<10ms`): held, or a failure whose message is what
/// was measured (`p99<10ms: p99 41ms`); a held one says it in its output.
fn objective_case(classname: &str, verdict: &Verdict) -> TestCase {
    let said = format!("{}: {}", verdict.expr, verdict.measured_text());
    let status = if verdict.held {
        TestCaseStatus::success()
    } else {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status
            .set_message(said.as_str())
            .set_type("objective broken");
        status
    };
    let mut case = TestCase::new(verdict.expr.as_str(), status);
    case.set_classname(classname);
    if verdict.held {
        case.set_system_out(said.as_str());
    }
    case
}

fn seconds(s: f64) -> Duration {
    Duration::try_from_secs_f64(s).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slo::Unit;

    fn verdict(expr: &str, measured: f64, held: bool) -> Verdict {
        Verdict {
            expr: expr.to_string(),
            measured: Some(measured),
            unit: Unit::Micros,
            held,
            judged_on: None,
        }
    }

    #[test]
    fn a_broken_objective_is_a_failure_with_the_measured_value_escaped_names_too() {
        let mut suite = TestSuite::new("a <b> & \"c\"");
        suite.add_test_case(run_case("x", None));
        suite.add_test_case(objective_case("x", &verdict("p99<10ms", 41_000.0, false)));
        suite.add_test_case(objective_case("x", &verdict("p50<10ms", 900.0, true)));
        let mut report = Report::new("tsumo");
        report.add_test_suite(suite);
        let xml = report.to_string().unwrap();
        assert!(
            xml.contains("name=\"a &lt;b&gt; &amp; &quot;c&quot;\""),
            "{xml}"
        );
        assert!(xml.contains("tests=\"3\""), "{xml}");
        assert!(xml.contains("failures=\"1\""), "{xml}");
        assert!(xml.contains("message=\"p99&lt;10ms: p99 41.0ms\""), "{xml}");
        assert!(xml.contains("p50&lt;10ms: p50 900"), "{xml}");
    }

    #[test]
    fn a_command_failed_before_any_result_is_its_run_case_failed_with_the_line() {
        let xml = document("local", &[], Some("connection refused")).unwrap();
        assert!(xml.contains("<testsuite name=\"local\""), "{xml}");
        assert!(xml.contains("message=\"connection refused\""), "{xml}");
    }
}
