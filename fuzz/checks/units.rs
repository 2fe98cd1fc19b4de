//! wrk's number and duration units (`-c 1k`, `-d 2m`, `-T 500ms`): any text gives a value or a
//! one-line reason, never a panic or a wrap; a duration is never beyond the documented maximum.

use std::time::Duration;

use tsumo::cli::{parse_duration, parse_metric};

/// `cli::units::MAX_DURATION`: a year.
const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// The fuzz target's whole check: returns on input it does not apply to, panics on a bug.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_metric(text) {
        Ok(n) => {
            // The same number written out again reads the same.
            assert_eq!(parse_metric(&n.to_string()), Ok(n), "{text:?}");
        }
        Err(reason) => assert!(!reason.is_empty() && !reason.contains('\n'), "{text:?}"),
    }
    match parse_duration(text) {
        Ok(d) => assert!(d <= MAX_DURATION, "{text:?} gave {d:?}"),
        Err(reason) => assert!(!reason.is_empty() && !reason.contains('\n'), "{text:?}"),
    }
}
