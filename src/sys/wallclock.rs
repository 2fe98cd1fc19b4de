//! The wall clock, for runs that start on one instant in several processes (`--start-at`):
//! Unix time in nanoseconds, RFC 3339 UTC both ways (no date crate for two small functions), and
//! the host clock's synchronization state from `adjtimex(2)`, which tells whether two machines'
//! starts can be compared at all.

use serde::{Deserialize, Serialize};

/// Now, in nanoseconds since the Unix epoch (CLOCK_REALTIME).
pub fn unix_now_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

/// Now on a kernel clock, in ns: tsumo's one `clock_gettime` (a vDSO call), which the run's
/// monotonic clock (`timing::clock`), the wall clock here and the server's samples all read.
#[inline]
pub fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; tsumo asks only for clocks Linux always has
    // (CLOCK_MONOTONIC, CLOCK_REALTIME).
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01 (`civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Why a `--start-at` time is not one (the reason, after the option and the value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    #[error("expected an RFC 3339 time like 2026-11-30T18:00:00Z (or +30s from now), not '{0}'")]
    NotRfc3339(String),
    /// Written as one, but no such date or time of day (a 30th of February, 25:00).
    #[error("'{0}' is not a valid date and time")]
    NoSuchTime(String),
    #[error("'{0}' is before 1970")]
    BeforeEpoch(String),
}

/// `2026-11-30T18:00:00Z`, `2026-11-30T18:00:00.250Z` or `2026-11-30T19:00:00+01:00` (a space
/// for `T` and a lower-case `z` are accepted, as RFC 3339 allows) → ns since the Unix epoch.
pub fn parse_rfc3339(text: &str) -> Result<u64, TimeError> {
    let bad = || TimeError::NotRfc3339(text.to_string());
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(bad());
    }
    if b[13] != b':' || b[16] != b':' {
        return Err(bad());
    }
    let num = |range: std::ops::Range<usize>| -> Result<i64, TimeError> {
        let part = text.get(range).ok_or_else(bad)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        part.parse::<i64>().map_err(|_| bad())
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month)
        || day < 1
        || day > month_days[(month - 1) as usize]
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err(TimeError::NoSuchTime(text.to_string()));
    }
    let mut rest = &text[19..];
    let mut nanos: i64 = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return Err(bad());
        }
        let padded = format!("{:0<9}", &fraction[..digits]);
        nanos = padded.parse().map_err(|_| bad())?;
        rest = &fraction[digits..];
    }
    let offset_s = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && matches!(&rest[..1], "+" | "-") && &rest[3..4] == ":" => {
            let hours = num(text.len() - 5..text.len() - 3)?;
            let minutes = num(text.len() - 2..text.len())?;
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (hours * 3600 + minutes * 60)
        }
        _ => return Err(bad()),
    };
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    if seconds < 0 {
        return Err(TimeError::BeforeEpoch(text.to_string()));
    }
    Ok(seconds as u64 * 1_000_000_000 + nanos as u64)
}

/// ns since the Unix epoch → `2026-11-30T18:00:00.123456Z` (µs; the fraction left out when 0).
pub fn format_rfc3339(unix_ns: u64) -> String {
    let seconds = (unix_ns / 1_000_000_000) as i64;
    let micros = (unix_ns % 1_000_000_000) / 1000;
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let of_day = seconds.rem_euclid(86_400);
    let base = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    );
    if micros == 0 {
        format!("{base}Z")
    } else {
        format!("{base}.{micros:06}Z")
    }
}

/// The host clock as the kernel's NTP state describes it (`adjtimex` with no change).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockState {
    /// The kernel considers the clock synchronized (no `STA_UNSYNC`, no `TIME_ERROR`): an NTP
    /// or PTP daemon disciplines it.
    pub synchronized: bool,
    /// The kernel's maximum error estimate, µs.
    pub max_error_us: i64,
    /// The kernel's estimated error, µs.
    pub est_error_us: i64,
}

impl ClockState {
    /// Reads the state; `None` where `adjtimex` is refused (some sandboxes).
    pub fn read() -> Option<ClockState> {
        // SAFETY: a zeroed timex with modes 0 only reads; the kernel fills it in.
        let mut timex: libc::timex = unsafe { std::mem::zeroed() };
        // SAFETY: timex is a valid, writable timex.
        let state = unsafe { libc::adjtimex(&mut timex) };
        if state < 0 {
            return None;
        }
        Some(ClockState {
            synchronized: state != libc::TIME_ERROR && timex.status & libc::STA_UNSYNC == 0,
            max_error_us: timex.maxerror as i64,
            est_error_us: timex.esterror as i64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_both_ways() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Ok(0));
        let t = parse_rfc3339("2026-11-30T18:00:00Z").unwrap();
        assert_eq!(t, 1_796_061_600 * 1_000_000_000);
        assert_eq!(format_rfc3339(t), "2026-11-30T18:00:00Z");
        assert_eq!(parse_rfc3339("2026-11-30T19:30:00+01:30"), Ok(t));
        assert_eq!(parse_rfc3339("2026-11-30 17:00:00-01:00"), Ok(t));
        let fine = parse_rfc3339("2024-02-29T23:59:59.25Z").unwrap();
        assert_eq!(fine % 1_000_000_000, 250_000_000);
        assert_eq!(format_rfc3339(fine), "2024-02-29T23:59:59.250000Z");
        for bad in [
            "2026-11-30",
            "2026-11-30T18:00:00",
            "2026-13-01T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T18:00:00.Z",
            "2026-11-30T18:00:00+1:00",
            "tomorrow",
        ] {
            assert!(parse_rfc3339(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_clock_state_reads() {
        // Sandboxes may refuse adjtimex; where it answers, the errors are not negative.
        if let Some(state) = ClockState::read() {
            assert!(
                state.max_error_us >= 0 && state.est_error_us >= 0,
                "{state:?}"
            );
        }
    }
}
