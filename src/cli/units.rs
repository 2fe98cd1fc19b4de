//! wrk's number and duration suffixes (`units.c`), so that wrk2 command lines such as
//! `-c 1k -R 50k -d 2m` mean the same thing here.
//!
//! Kept apart from the option table because the rules are subtle (`m` is *mega* for `-c` but
//! *minutes* for `-d`) and deserve their own tests. Unlike wrk, a bad value is an error that
//! says why, never a silent wrap (`-1`) or a bare usage dump. One deliberate extension:
//! durations also accept `ms` and `us`, so `-T 500ms` works (wrk rejects it).

use std::time::Duration;

/// The longest `-d`/`-T` accepted. Longer values are almost certainly typos, and timers and
/// `Instant` arithmetic downstream need not care about overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Parses a metric count for `-t`, `-c`, `-R`: a whole number with an optional `k M G T P`
/// suffix (case-insensitive, each ×1000, so `1m` is one million as in wrk).
///
/// The error is the reason only; the caller adds the option and the value.
pub fn parse_metric(text: &str) -> Result<u64, String> {
    let (base, unit) = split_number(text)?;
    let scale: u64 = match unit.to_ascii_lowercase().as_str() {
        "" => 1,
        "k" => 1_000,
        "m" => 1_000_000,
        "g" => 1_000_000_000,
        "t" => 1_000_000_000_000,
        "p" => 1_000_000_000_000_000,
        _ => {
            return Err(format!(
                "unknown suffix '{}' (use a whole number, optionally with k, M, G, T or P)",
                one_line(unit)
            ))
        }
    };
    base.checked_mul(scale)
        .ok_or_else(|| "number is too large".to_string())
}

/// Parses a duration for `-d`, `-T`: a whole number of seconds, or with a suffix `s`, `m`
/// (minutes), `h`, and — our extension — `ms` and `us` (case-insensitive).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (base, unit) = split_number(text)?;
    let duration = match unit.to_ascii_lowercase().as_str() {
        "" | "s" => base.checked_mul(1).map(Duration::from_secs),
        "m" => base.checked_mul(60).map(Duration::from_secs),
        "h" => base.checked_mul(3600).map(Duration::from_secs),
        "ms" => Some(Duration::from_millis(base)),
        "us" | "µs" => Some(Duration::from_micros(base)),
        _ => {
            return Err(format!(
                "unknown suffix '{}' (use a whole number with s, m, h, ms or us; \
                 no suffix means seconds)",
                one_line(unit)
            ))
        }
    };
    match duration {
        Some(d) if d <= MAX_DURATION => Ok(d),
        _ => Err("duration is too long (at most 365 days)".to_string()),
    }
}

/// A duration as [`parse_duration`] reads it back, in its largest whole unit: `30m`, `10s`,
/// `40ms`, `0` (a help's defaults, shown from the parser's own).
pub(super) fn duration_text(duration: Duration) -> String {
    let (secs, nanos) = (duration.as_secs(), duration.subsec_nanos());
    match (secs, nanos) {
        (0, 0) => "0".to_string(),
        (s, 0) if s % 3600 == 0 => format!("{}h", s / 3600),
        (s, 0) if s % 60 == 0 => format!("{}m", s / 60),
        (s, 0) => format!("{s}s"),
        _ if nanos % 1_000_000 == 0 => format!("{}ms", duration.as_millis()),
        _ => format!("{}us", duration.as_micros()),
    }
}

/// `text` with its control characters escaped (`\n`, `\u{18}`), so an error quoting a value
/// stays on one line.
pub(super) fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Splits `"  10 ms "` into `(10, "ms")`: a whole number, then the suffix (which may be
/// separated by spaces, as wrk's `sscanf` allows).
pub(super) fn split_number(text: &str) -> Result<(u64, &str), String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty value".to_string());
    }
    let negative = text
        .strip_prefix('-')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    if negative {
        return Err("must not be negative".to_string());
    }
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(digits_end);
    if digits.is_empty() {
        return Err("expected a whole number".to_string());
    }
    if unit.starts_with(['.', ',']) {
        return Err("fractions are not allowed; use a whole number or a smaller unit".to_string());
    }
    let base = digits
        .parse::<u64>()
        .map_err(|_| "number is too large".to_string())?;
    Ok((base, unit.trim_start()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Result<Duration, String> {
        Ok(Duration::from_secs(s))
    }

    /// wrk2.md §1.2, adapted: `10ms` is our extension for durations.
    #[test]
    fn reference_table() {
        let table: &[(&str, Option<u64>, Option<Duration>)] = &[
            ("10", Some(10), Some(Duration::from_secs(10))),
            ("1k", Some(1_000), None),
            ("1K", Some(1_000), None),
            ("1m", Some(1_000_000), Some(Duration::from_secs(60))),
            ("1M", Some(1_000_000), Some(Duration::from_secs(60))),
            ("2h", None, Some(Duration::from_secs(7200))),
            ("2H", None, Some(Duration::from_secs(7200))),
            ("10s", None, Some(Duration::from_secs(10))),
            ("10ms", None, Some(Duration::from_millis(10))),
            ("1.5", None, None),
            ("1k5", None, None),
            ("1.5k", None, None),
            ("-1", None, None),
        ];
        for (input, metric, duration) in table {
            assert_eq!(parse_metric(input).ok(), *metric, "metric {input:?}");
            assert_eq!(parse_duration(input).ok(), *duration, "duration {input:?}");
        }
    }

    #[test]
    fn metric_suffixes() {
        assert_eq!(parse_metric("1g"), Ok(1_000_000_000));
        assert_eq!(parse_metric("2T"), Ok(2_000_000_000_000));
        assert_eq!(parse_metric("3p"), Ok(3_000_000_000_000_000));
        assert_eq!(parse_metric("50k"), Ok(50_000));
        assert_eq!(parse_metric("0"), Ok(0));
        assert_eq!(parse_metric("007"), Ok(7));
    }

    #[test]
    fn whitespace_is_trimmed() {
        assert_eq!(parse_metric(" 10 "), Ok(10));
        assert_eq!(parse_metric("10 k"), Ok(10_000));
        assert_eq!(parse_duration("\t10 s\n"), secs(10));
    }

    #[test]
    fn duration_extensions() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("500MS"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "", "  ", "k", "abc", "1x", "10 sec", "1kk", "+5", "1e3", "0x10", "1,5", "s10",
        ] {
            assert!(parse_metric(bad).is_err(), "metric {bad:?}");
            assert!(parse_duration(bad).is_err(), "duration {bad:?}");
        }
        // Suffixes of the other kind.
        assert!(parse_metric("10s").is_err());
        assert!(parse_metric("10ms").is_err());
        assert!(parse_duration("1k").is_err());
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(parse_metric("18446744073709551615").is_ok());
        assert!(parse_metric("18446744073709551616").is_err());
        assert!(parse_metric("18446744073709552k").is_err());
        assert!(parse_metric("99999999999999999999999").is_err());
        assert!(parse_duration("18446744073709551615h").is_err());
        assert!(parse_duration("366d").is_err());
        assert_eq!(parse_duration("365h"), secs(365 * 3600));
        assert!(parse_duration("9000h").is_err());
    }

    #[test]
    fn messages_say_why() {
        assert!(parse_metric("1.5").unwrap_err().contains("fractions"));
        assert!(parse_metric("-1").unwrap_err().contains("negative"));
        assert!(parse_metric("-t").unwrap_err().contains("whole number"));
        assert!(parse_metric("1q").unwrap_err().contains("'q'"));
        assert!(parse_duration("").unwrap_err().contains("empty"));
        assert!(parse_duration("10y").unwrap_err().contains("'y'"));
    }

    #[test]
    fn durations_shown_as_they_are_read() {
        for text in ["0", "10s", "30m", "2h", "40ms", "250us", "90s", "1500ms"] {
            let duration = parse_duration(text).unwrap();
            assert_eq!(duration_text(duration), text);
        }
    }

    /// Found by the `units` fuzz target: a newline in the value broke the one-line error.
    #[test]
    fn messages_are_one_line_whatever_the_value() {
        let value = "00ms\n00ms,\u{18}";
        for reason in [
            parse_metric(value).unwrap_err(),
            parse_duration(value).unwrap_err(),
        ] {
            assert!(!reason.contains('\n'), "{reason}");
            assert!(reason.contains("'ms\\n00ms,\\u{18}'"), "{reason}");
        }
    }
}
