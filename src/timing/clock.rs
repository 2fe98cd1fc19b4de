//! The one clock of a run: CLOCK_MONOTONIC in nanoseconds.
//!
//! Schedules, latencies and the pacer's timerfd all use this clock, so an intended send time can
//! be handed to the kernel as an absolute deadline without conversion.

use std::cell::Cell;

use crate::sys::wallclock::clock_ns as read;

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

pub use crate::stats::to_us;

/// The timespec of an absolute time on this clock.
pub fn timespec(at: Nanos) -> libc::timespec {
    libc::timespec {
        tv_sec: (at / 1_000_000_000) as libc::time_t,
        tv_nsec: (at % 1_000_000_000) as libc::c_long,
    }
}

/// When something was received: the kernel's stamp `rx` (CLOCK_REALTIME ns) on this clock,
/// given the monotonic `now` it is read at, or `now` itself where there is no stamp. The result
/// is kept within `[floor, now]` (`floor`: the earliest the stamped event can have happened, as a
/// request's send for its response).
///
/// The two clocks' offset is read at most [`OFFSET_KEPT`] apart on each thread (a realtime read
/// per response cost 1–2 % of a request's CPU at saturation). NTP slews the realtime clock by at
/// most 500 ppm, 0.5 µs over that span; a clock stepped mid-run is seen within it, and the few
/// stamps converted with the old offset meanwhile are held within `[floor, now]`.
#[inline]
pub fn received(rx: Option<u64>, now: Nanos, floor: Nanos) -> Nanos {
    match rx {
        None => now,
        Some(rx) => rx
            .saturating_sub(realtime_offset(now))
            .clamp(floor.min(now), now),
    }
}

/// How long a thread keeps the realtime − monotonic offset before reading it again, ns.
pub const OFFSET_KEPT: Nanos = 1_000_000;

thread_local! {
    /// (monotonic ns when read, CLOCK_REALTIME − CLOCK_MONOTONIC ns); 0: never read.
    static OFFSET: Cell<(Nanos, u64)> = const { Cell::new((0, 0)) };
}

/// CLOCK_REALTIME − CLOCK_MONOTONIC, ns, as read within [`OFFSET_KEPT`] of `now` on this thread.
#[inline]
fn realtime_offset(now: Nanos) -> u64 {
    OFFSET.with(|kept| {
        let (at, offset) = kept.get();
        if at != 0 && now >= at && now - at < OFFSET_KEPT {
            return offset;
        }
        let mono = self::now();
        let offset = realtime_now().saturating_sub(mono);
        kept.set((mono, offset));
        offset
    })
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
        forget_offset();
        assert_eq!(received(Some(real + 3_600_000_000_000), now, 0), now);
        // Stepped forward: no earlier than its send.
        forget_offset();
        assert_eq!(
            received(Some(real - 3_600_000_000_000), now, now - 10),
            now - 10
        );
        assert_eq!(received(None, now, 0), now);
    }

    fn forget_offset() {
        OFFSET.with(|kept| kept.set((0, 0)));
    }

    #[test]
    fn the_offset_is_read_again_once_kept_too_long() {
        forget_offset();
        let t = now();
        // An offset an hour off, which no fresh read gives (a fresh read differs from the
        // first by the few ns between its two clock reads).
        let kept_off = realtime_offset(t) + 3_600_000_000_000;
        // Within the span the kept offset answers, whatever the clocks do.
        OFFSET.with(|kept| kept.set((t, kept_off)));
        assert_eq!(realtime_offset(t + OFFSET_KEPT - 1), kept_off);
        // Past it, or before the read (another thread's `now`), it is read afresh.
        assert_ne!(realtime_offset(t + OFFSET_KEPT), kept_off);
        OFFSET.with(|kept| kept.set((t, kept_off)));
        assert_ne!(realtime_offset(t - 1), kept_off);
    }
}
