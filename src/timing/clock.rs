//! The one clock of a run: CLOCK_MONOTONIC in nanoseconds.
//!
//! Schedules, latencies and the pacer's timerfd all use this clock, so an intended send time can
//! be handed to the kernel as an absolute deadline without conversion.

/// Nanoseconds on CLOCK_MONOTONIC.
pub type Nanos = u64;

/// Now, in nanoseconds on CLOCK_MONOTONIC (a vDSO call, ~20 ns).
#[inline]
pub fn now() -> Nanos {
    read(libc::CLOCK_MONOTONIC)
}

/// Now on CLOCK_REALTIME, ns since the epoch (the clock the kernel stamps packets with).
#[inline]
pub fn realtime_now() -> u64 {
    read(libc::CLOCK_REALTIME)
}

/// Now on `clock`, ns.
#[inline]
fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC and CLOCK_REALTIME always exist on Linux.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub use crate::stats::to_us;

/// The timespec of an absolute time on this clock.
pub fn timespec(at: Nanos) -> libc::timespec {
    libc::timespec {
        tv_sec: (at / 1_000_000_000) as libc::time_t,
        tv_nsec: (at % 1_000_000_000) as libc::c_long,
    }
}

/// When something was received: the kernel's stamp `rx` (CLOCK_REALTIME ns) on this clock,
/// given the monotonic `now` it is read at, or `now` itself where there is no stamp. The two
/// clocks' offset is taken at that moment, so a clock stepped mid-run moves only the stamps of
/// packets that arrived before the step and were read after it, and those are kept within
/// `[floor, now]` (`floor`: the earliest the stamped event can have happened, as a request's
/// send for its response).
#[inline]
pub fn received(rx: Option<u64>, now: Nanos, floor: Nanos) -> Nanos {
    match rx {
        None => now,
        Some(rx) => {
            let age = realtime_now().saturating_sub(rx);
            now.saturating_sub(age).clamp(floor.min(now), now)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_lands_between_its_floor_and_now() {
        let now = now();
        let real = realtime_now();
        // A stamp 2 ms old is 2 ms before now, give or take the two clock reads.
        let two_ms = received(Some(real - 2_000_000), now, 0);
        assert!(
            (now - two_ms).abs_diff(2_000_000) < 1_000_000,
            "{}",
            now - two_ms
        );
        // A clock stepped back an hour after the packet came: no later than now.
        assert_eq!(received(Some(real + 3_600_000_000_000), now, 0), now);
        // Stepped forward: no earlier than its send.
        assert_eq!(
            received(Some(real - 3_600_000_000_000), now, now - 10),
            now - 10
        );
        assert_eq!(received(None, now, 0), now);
    }
}
