//! wrk's `units.c` number formatting and `print_units` column padding.
//!
//! Scripts and people compare tsumo's report with wrk2's by eye and by regex, so the suffixes,
//! the promotion rule (a value moves to the next unit at 85% of the scale, and the last unit of
//! each list is never reached) and the padding (trailing spaces depend on how many letters the
//! string ends with; longer strings are truncated) are reproduced exactly. One difference: a NaN
//! input prints as 0 (wrk2 prints `-nan` for empty histograms).

/// A unit ladder: the base suffix, then the suffixes reached by dividing by `scale`.
struct Units {
    scale: f64,
    base: &'static str,
    units: &'static [&'static str],
}

const TIME_UNITS_US: Units = Units {
    scale: 1000.0,
    base: "us",
    units: &["ms", "s"],
};

const TIME_UNITS_S: Units = Units {
    scale: 60.0,
    base: "s",
    units: &["m", "h"],
};

const BINARY_UNITS: Units = Units {
    scale: 1024.0,
    base: "",
    units: &["K", "M", "G", "T", "P"],
};

const METRIC_UNITS: Units = Units {
    scale: 1000.0,
    base: "",
    units: &["k", "M", "G", "T", "P"],
};

/// `format_units`: divide while the amount is at least 85% of the scale and a further unit
/// exists after the one being moved to, then print with `precision` decimals.
fn format_units(n: f64, units: &Units, precision: usize) -> String {
    // NaN (0/0 on an empty histogram) and -0.0 print as plain 0.
    let mut amount = if n.is_nan() || n == 0.0 { 0.0 } else { n };
    let mut unit = units.base;
    let threshold = units.scale * 0.85;
    let mut i = 0;
    while i + 1 < units.units.len() && amount >= threshold {
        amount /= units.scale;
        unit = units.units[i];
        i += 1;
    }
    format!("{amount:.precision$}{unit}")
}

/// A duration in µs: `us`/`ms` below one second, else `s`/`m` (never `h`), 2 decimals.
pub fn format_time_us(us: f64) -> String {
    if us >= 1_000_000.0 {
        format_units(us / 1_000_000.0, &TIME_UNITS_S, 2)
    } else {
        format_units(us, &TIME_UNITS_US, 2)
    }
}

/// A duration in seconds with no decimals, as in the `Running 12s test` header (55 s → `1m`).
pub fn format_time_s(seconds: f64) -> String {
    format_units(seconds, &TIME_UNITS_S, 0)
}

/// A byte count with binary suffixes `K M G T` (never `P`), 2 decimals; callers append `B`.
pub fn format_binary(n: f64) -> String {
    format_units(n, &BINARY_UNITS, 2)
}

/// A count with metric suffixes `k M G T` (never `P`), 2 decimals.
pub fn format_metric(n: f64) -> String {
    format_units(n, &METRIC_UNITS, 2)
}

/// `print_units`: `formatter(value)` right-aligned in `width` columns. Two columns are kept for
/// the suffix: each of the last two characters that is a letter uses one of them; the unused
/// ones become trailing spaces. A string longer than its field is truncated, as `%*.*s` does.
pub fn print_units(value: f64, formatter: fn(f64) -> String, width: usize) -> String {
    let text = formatter(value);
    let chars: Vec<char> = text.chars().collect();
    let is_letter = |from_end: usize| {
        chars
            .len()
            .checked_sub(from_end)
            .and_then(|i| chars.get(i))
            .is_some_and(|c| c.is_ascii_alphabetic())
    };
    let pad = 2 - usize::from(is_letter(1)) - usize::from(is_letter(2));
    let field = width.saturating_sub(pad);
    let shown: String = chars.iter().take(field).collect();
    format!("{shown:>field$}{}", " ".repeat(pad))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_us_examples_from_wrk2() {
        assert_eq!(format_time_us(849.0), "849.00us");
        assert_eq!(format_time_us(850.0), "0.85ms");
        assert_eq!(format_time_us(823.62), "823.62us");
        assert_eq!(format_time_us(4040.0), "4.04ms");
        assert_eq!(format_time_us(900_000.0), "900.00ms");
        assert_eq!(format_time_us(1_420_000.0), "1.42s");
        assert_eq!(format_time_us(12_000_000.0), "12.00s");
        assert_eq!(format_time_us(55_000_000.0), "0.92m");
        assert_eq!(format_time_us(100_200_000.0), "1.67m");
        // `h` is never reached.
        assert_eq!(format_time_us(7_200_000_000.0), "120.00m");
        assert_eq!(format_time_us(0.0), "0.00us");
    }

    #[test]
    fn time_s_rounds_with_no_decimals() {
        assert_eq!(format_time_s(10.0), "10s");
        assert_eq!(format_time_s(12.0), "12s");
        assert_eq!(format_time_s(55.0), "1m");
        assert_eq!(format_time_s(90.0), "2m");
        assert_eq!(format_time_s(3600.0), "60m");
        assert_eq!(format_time_s(7200.0), "120m");
    }

    #[test]
    fn binary_and_metric() {
        assert_eq!(format_binary(494.0), "494.00");
        assert_eq!(format_binary(72.85 * 1024.0), "72.85K");
        assert_eq!(format_binary(5.65 * 1024.0 * 1024.0), "5.65M");
        assert_eq!(format_binary(19.81 * 1024.0 * 1024.0), "19.81M");
        assert_eq!(format_binary(17.76 * 1024.0 * 1024.0 * 1024.0), "17.76G");
        assert_eq!(format_binary(1024f64.powi(5)), "1024.00T");
        assert_eq!(format_metric(125.0), "125.00");
        assert_eq!(format_metric(231.13), "231.13");
        assert_eq!(format_metric(1080.0), "1.08k");
        assert_eq!(format_metric(56_200.0), "56.20k");
        assert_eq!(format_metric(880.0), "0.88k");
        assert_eq!(format_metric(849.0), "849.00");
    }

    #[test]
    fn nan_prints_as_zero() {
        assert_eq!(format_time_us(f64::NAN), "0.00us");
        assert_eq!(format_metric(f64::NAN), "0.00");
        assert_eq!(format_metric(-0.0), "0.00");
    }

    #[test]
    fn padding_follows_trailing_letters() {
        assert_eq!(
            format!(
                "{:7.3}%{}",
                50.0,
                print_units(6_060_000.0, format_time_us, 10)
            ),
            " 50.000%    6.06s "
        );
        assert_eq!(print_units(802.0, format_time_us, 10), "  802.00us");
        assert_eq!(print_units(1110.0, format_time_us, 10), "    1.11ms");
        assert_eq!(print_units(125.0, format_metric, 10), "  125.00  ");
        assert_eq!(print_units(1080.0, format_metric, 8), "  1.08k ");
        let row = format!(
            "    {:<10}{}{}{}{:8.2}%",
            "Latency",
            print_units(6_070_000.0, format_time_us, 8),
            print_units(585_690.0, format_time_us, 10),
            print_units(7_070_000.0, format_time_us, 9),
            57.5
        );
        assert_eq!(row, "    Latency     6.07s   585.69ms   7.07s    57.50%");
    }

    #[test]
    fn padding_truncates_long_strings() {
        // "1024000.00T" is 11 characters in an 8-column field (9 − 1 pad).
        let huge = 1024f64.powi(4) * 1_024_000.0;
        assert_eq!(print_units(huge, format_binary, 9), "1024000. ");
    }
}
