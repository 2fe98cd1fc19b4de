//! The saved-run loader (`--json` files read back by compare, merge and plot): any bytes give a
//! loaded run or an error, never a panic; a loaded HTTP run's histograms decode or fail cleanly,
//! and the run written out again loads as the same run.

use tsumo::report::schema::decode_histogram;
use tsumo::report::tools::saved::{self, RunData};

/// The fuzz target's whole check: returns on input it does not apply to, panics on a bug.
pub fn check(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(run) = saved::from_value(value, "fuzz.json") else {
        return;
    };
    let RunData::Http(saved) = &run.data else {
        return;
    };
    let h = &saved.histograms;
    for encoded in [&h.latency, &h.uncorrected, &h.send_lateness, &h.req_per_sec] {
        let _ = decode_histogram(encoded);
    }
    let Ok(written) = serde_json::to_value(saved.as_ref()) else {
        panic!("a loaded run does not serialize");
    };
    match saved::from_value(written, "fuzz.json") {
        Ok(again) => assert_eq!(again.data, run.data),
        Err(e) => panic!("a loaded run written out again does not load: {e}"),
    }
}
