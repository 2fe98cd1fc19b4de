//! The one clock of a run: CLOCK_MONOTONIC in nanoseconds.
//!
//! Schedules, latencies and the pacer's timerfd all use this clock, so an intended send time can
//! be handed to the kernel as an absolute deadline without conversion.

/// Nanoseconds on CLOCK_MONOTONIC.
pub type Nanos = u64;

/// Now, in nanoseconds on CLOCK_MONOTONIC (a vDSO call, ~20 ns).
#[inline]
pub fn now() -> Nanos {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Converts a nanosecond span to whole microseconds (the histograms' unit), rounding to nearest.
#[inline]
pub fn to_us(ns: u64) -> u64 {
    (ns + 500) / 1000
}

/// The timespec of an absolute time on this clock.
pub fn timespec(at: Nanos) -> libc::timespec {
    libc::timespec {
        tv_sec: (at / 1_000_000_000) as libc::time_t,
        tv_nsec: (at % 1_000_000_000) as libc::c_long,
    }
}
