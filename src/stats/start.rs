//! When a run started, against when it was meant to (`--start-at`), and whether the host clock
//! could be trusted for it: what tells a late shard, and what `tsumo merge` turns into the
//! shards' start skew.

use serde::{Deserialize, Serialize};

use crate::sys::wallclock::{format_rfc3339, ClockState};

/// Later than this, a start is reported as late (in the report, and by `tsumo merge`).
pub const LATE_NS: i64 = 10_000_000;

/// The start of one run (one shard).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartRecord {
    /// `--start-at` as RFC 3339 UTC; absent when the run started as soon as it was ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intended_unix_ns: Option<u64>,
    /// When the start gate opened, RFC 3339 UTC (the wall clock read once, before the run, and
    /// followed on CLOCK_MONOTONIC from there).
    pub actual: String,
    pub actual_unix_ns: u64,
    /// Actual − intended start, ns (0 without `--start-at`).
    pub late_ns: i64,
    /// The host clock's NTP state (`adjtimex`); absent where the kernel would not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockState>,
}

impl StartRecord {
    pub fn new(intended_unix_ns: Option<u64>, actual_unix_ns: u64) -> StartRecord {
        let late_ns = intended_unix_ns.map_or(0, |at| {
            (i128::from(actual_unix_ns) - i128::from(at)).clamp(i64::MIN.into(), i64::MAX.into())
                as i64
        });
        StartRecord {
            intended: intended_unix_ns.map(format_rfc3339),
            intended_unix_ns,
            actual: format_rfc3339(actual_unix_ns),
            actual_unix_ns,
            late_ns,
            clock: ClockState::read(),
        }
    }

    /// Actual − intended start in whole µs, each instant cut to its µs first: the figure the
    /// report and `tsumo merge`'s shard lines both print, so they agree to the digit.
    pub fn late_us(&self) -> Option<i64> {
        let intended = self.intended_unix_ns?;
        Some((self.actual_unix_ns / 1000) as i64 - (intended / 1000) as i64)
    }

    /// The report's line about the start, for a run with `--start-at`: on time or how late,
    /// and the clock's state.
    pub fn line(&self) -> Option<String> {
        let intended = self.intended.as_ref()?;
        let late_ms = self
            .late_us()
            .map_or(self.late_ns as f64 / 1e6, |us| us as f64 / 1e3);
        let when = if self.late_ns > LATE_NS {
            format!(
                "started {late_ms:.1} ms LATE (planned {intended}, started {})",
                self.actual
            )
        } else {
            format!("started at {intended} ({late_ms:+.3} ms)")
        };
        let clock = match self.clock {
            Some(c) if c.synchronized => format!(
                "host clock synchronized (NTP estimated error {} µs)",
                c.est_error_us
            ),
            Some(_) => "host clock NOT synchronized (adjtimex): starts on several machines may \
                        be off by its drift"
                .to_string(),
            None => "host clock state unknown (adjtimex refused)".to_string(),
        };
        Some(format!("Start: {when}; {clock}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_starts_say_by_how_much() {
        let at = 1_796_061_600 * 1_000_000_000;
        let on_time = StartRecord::new(Some(at), at + 120_000);
        assert_eq!(on_time.late_ns, 120_000);
        let line = on_time.line().unwrap();
        assert!(
            line.starts_with("Start: started at 2026-11-30T18:00:00Z (+0.120 ms); "),
            "{line}"
        );
        let late = StartRecord::new(Some(at), at + 35_200_000);
        let line = late.line().unwrap();
        assert!(
            line.contains("started 35.2 ms LATE (planned 2026-11-30T18:00:00Z"),
            "{line}"
        );
        assert_eq!(StartRecord::new(None, at).line(), None);
    }

    /// The report's lateness is `tsumo merge`'s for the same shard, to the digit: both cut the
    /// instants to whole µs (before, the report rounded ns: `+0.084 ms` beside merge's `+0.083`).
    #[test]
    fn the_report_and_merge_agree_on_the_lateness() {
        let at = 1_796_061_600 * 1_000_000_000;
        let start = StartRecord::new(Some(at), at + 83_600);
        assert_eq!(start.late_us(), Some(83));
        let line = start.line().unwrap();
        assert!(
            line.starts_with("Start: started at 2026-11-30T18:00:00Z (+0.083 ms); "),
            "{line}"
        );
        assert_eq!(StartRecord::new(None, at).late_us(), None);
    }
}
