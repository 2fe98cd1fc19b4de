//! `--start-at`: the run starts its schedule on one wall-clock instant, so shards on several
//! machines start together. The wall clock is read once, before the workers connect, and the
//! instant converted to CLOCK_MONOTONIC there: a clock step during the wait moves nothing. The
//! main thread waits on tokio's timer (so a signal still ends the run) until 2 ms before, then
//! sleeps the rest with `clock_nanosleep` to the nanosecond deadline.

use std::time::Duration;

use super::signals::Signals;
use crate::stats::start::StartRecord;
use crate::sys::wallclock::unix_now_ns;
use crate::timing::clock::{self, Nanos};

/// The last stretch slept with `clock_nanosleep` rather than tokio's 1 ms timer.
const FINE_WAIT: Nanos = 2_000_000;

/// The wall clock and CLOCK_MONOTONIC read together once, and the start instant on both.
pub(super) struct StartClock {
    mono: Nanos,
    unix: u64,
    /// `--start-at` in Unix ns, and the same instant on CLOCK_MONOTONIC.
    target: Option<(u64, Nanos)>,
}

impl StartClock {
    pub fn new(start_at: Option<u64>) -> StartClock {
        let unix = unix_now_ns();
        let mono = clock::now();
        let target = start_at.map(|at| {
            let ahead = i128::from(at) - i128::from(unix);
            let on_mono = (i128::from(mono) + ahead).clamp(0, i128::from(u64::MAX));
            (at, on_mono as Nanos)
        });
        StartClock { mono, unix, target }
    }

    /// The start instant on CLOCK_MONOTONIC, with `--start-at`.
    pub fn target(&self) -> Option<Nanos> {
        self.target.map(|(_, mono)| mono)
    }

    /// Waits for the start instant; a signal during the wait ends it early with its name.
    pub async fn wait(&self, signals: &mut Signals) -> Result<(), &'static str> {
        let Some(target) = self.target() else {
            return Ok(());
        };
        let coarse = target.saturating_sub(FINE_WAIT);
        let wait = Duration::from_nanos(coarse.saturating_sub(clock::now()));
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            name = signals.recv() => return Err(name),
        }
        let deadline = clock::timespec(target);
        // EINTR (a signal) only cuts the last 2 ms short; sleep on to the deadline.
        // SAFETY: deadline is a valid timespec; no remainder is asked for with TIMER_ABSTIME.
        while unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &deadline,
                std::ptr::null_mut(),
            )
        } == libc::EINTR
        {}
        Ok(())
    }

    /// The record of a start that happened at `actual` (CLOCK_MONOTONIC).
    pub fn record(&self, actual: Nanos) -> StartRecord {
        let since = i128::from(actual) - i128::from(self.mono);
        let actual_unix = (i128::from(self.unix) + since).clamp(0, i128::from(u64::MAX)) as u64;
        StartRecord::new(self.target.map(|(at, _)| at), actual_unix)
    }
}
