//! wrk's `units.c` number formatting and `print_units` column padding.
//!
//! Scripts and people compare tsumo's report with wrk2's by eye and by regex, so the suffixes,
//! the promotion rule (a value moves to the next unit at 85% of the scale, and the last unit of
//! each list is never reached) and the padding (trailing spaces depend on how many letters the
//! string ends with; longer strings are truncated) are reproduced exactly, down to the `long
//! double` arithmetic that decides the last digit. One difference: a NaN input prints as 0 (wrk2
//! prints `-nan` for empty histograms).

/// A unit ladder: the base suffix, then the suffixes reached by dividing by `scale`.
struct Units {
    scale: u64,
    base: &'static str,
    units: &'static [&'static str],
}

const TIME_UNITS_US: Units = Units {
    scale: 1000,
    base: "us",
    units: &["ms", "s"],
};

const TIME_UNITS_S: Units = Units {
    scale: 60,
    base: "s",
    units: &["m", "h"],
};

const BINARY_UNITS: Units = Units {
    scale: 1024,
    base: "",
    units: &["K", "M", "G", "T", "P"],
};

const METRIC_UNITS: Units = Units {
    scale: 1000,
    base: "",
    units: &["k", "M", "G", "T", "P"],
};

/// `format_units`: divide while the amount is at least 85% of the scale and a further unit
/// exists after the one being moved to, then print with `precision` decimals.
fn format_units(n: f64, units: &Units, precision: usize) -> String {
    format_extended(LongDouble::from_f64(n), units, precision)
}

fn format_extended(n: LongDouble, units: &Units, precision: usize) -> String {
    let mut amount = n;
    let mut unit = units.base;
    // C computes `scale * 0.85` in double, then compares in long double.
    let threshold = LongDouble::from_f64(units.scale as f64 * 0.85);
    let mut i = 0;
    while i + 1 < units.units.len() && amount >= threshold {
        amount = amount.div_int(units.scale);
        unit = units.units[i];
        i += 1;
    }
    format!("{}{unit}", amount.to_fixed(precision))
}

/// A non-negative x87 80-bit `long double` (64-bit mantissa), the type `units.c` divides and
/// prints in. Emulated because the last printed digit depends on it: 73215 µs is exactly
/// 73.215 ms, and whether it prints `73.21ms` or `73.22ms` depends on which side of 73.215 the
/// rounded quotient falls — a different side in `f64` than in `long double` for many values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LongDouble {
    /// 0, or normalized with the top bit set.
    mantissa: u64,
    /// value = mantissa × 2^exponent
    exponent: i32,
}

impl LongDouble {
    const ZERO: LongDouble = LongDouble {
        mantissa: 0,
        exponent: 0,
    };

    /// Exact conversion; NaN, negative values and -0.0 become 0 (tsumo never prints `nan`);
    /// infinity saturates to the largest value.
    fn from_f64(x: f64) -> LongDouble {
        if x.is_nan() || x <= 0.0 {
            return LongDouble::ZERO;
        }
        if x.is_infinite() {
            return LongDouble {
                mantissa: u64::MAX,
                exponent: i32::MAX / 2,
            };
        }
        let bits = x.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let fraction = bits & ((1 << 52) - 1);
        let (significand, exponent) = if biased == 0 {
            (fraction, -1074)
        } else {
            (fraction | (1 << 52), biased - 1075)
        };
        let shift = significand.leading_zeros() as i32;
        LongDouble {
            mantissa: significand << shift,
            exponent: exponent - shift,
        }
    }

    /// `self / divisor`, rounded to nearest-even like the FPU.
    fn div_int(self, divisor: u64) -> LongDouble {
        if self.mantissa == 0 || divisor == 0 {
            return self;
        }
        let numerator = u128::from(self.mantissa) << 64;
        let divisor = u128::from(divisor);
        let mut quotient = numerator / divisor;
        let mut remainder = numerator % divisor;
        let mut exponent = self.exponent - 64;
        let bits = 128 - quotient.leading_zeros() as i32;
        let round_up = if bits > 64 {
            let shift = bits - 64;
            let dropped = quotient & ((1u128 << shift) - 1);
            let half = 1u128 << (shift - 1);
            quotient >>= shift;
            exponent += shift;
            dropped > half || (dropped == half && (remainder > 0 || quotient & 1 == 1))
        } else {
            // Bring in quotient bits from the remainder until the mantissa is full.
            while quotient < 1u128 << 63 {
                remainder <<= 1;
                quotient <<= 1;
                if remainder >= divisor {
                    remainder -= divisor;
                    quotient |= 1;
                }
                exponent -= 1;
            }
            let twice = remainder << 1;
            twice > divisor || (twice == divisor && quotient & 1 == 1)
        };
        if round_up {
            quotient += 1;
            if quotient == 1u128 << 64 {
                quotient >>= 1;
                exponent += 1;
            }
        }
        LongDouble {
            mantissa: quotient as u64,
            exponent,
        }
    }

    /// `printf("%.*Lf", precision, self)`: exact decimal rounding, ties to even.
    fn to_fixed(self, precision: usize) -> String {
        let scale = 10u128.pow(precision.min(6) as u32);
        let precision = precision.min(6);
        let scaled = if self.mantissa == 0 {
            0
        } else if self.exponent >= 0 {
            if self.exponent > 40 {
                // Beyond any count or duration tsumo holds; f64 is close enough there.
                let value = self.mantissa as f64 * 2f64.powi(self.exponent);
                return format!("{value:.precision$}");
            }
            (u128::from(self.mantissa) << self.exponent) * scale
        } else {
            let shift = (-self.exponent) as u32;
            let numerator = u128::from(self.mantissa) * scale;
            if shift >= 128 {
                0
            } else {
                let quotient = numerator >> shift;
                let dropped = numerator & ((1u128 << shift) - 1);
                let half = 1u128 << (shift - 1);
                if dropped > half || (dropped == half && quotient & 1 == 1) {
                    quotient + 1
                } else {
                    quotient
                }
            }
        };
        if precision == 0 {
            scaled.to_string()
        } else {
            format!("{}.{:0precision$}", scaled / scale, scaled % scale)
        }
    }
}

impl PartialOrd for LongDouble {
    fn partial_cmp(&self, other: &LongDouble) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LongDouble {
    fn cmp(&self, other: &LongDouble) -> std::cmp::Ordering {
        match (self.mantissa == 0, other.mantissa == 0) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) => std::cmp::Ordering::Less,
            (false, true) => std::cmp::Ordering::Greater,
            (false, false) => self
                .exponent
                .cmp(&other.exponent)
                .then(self.mantissa.cmp(&other.mantissa)),
        }
    }
}

/// A count with its noun, singular or plural: `1 table`, `2 tables`, `0 errors`.
pub fn counted(n: u64, thing: &str) -> String {
    if n == 1 {
        format!("{n} {thing}")
    } else {
        format!("{n} {thing}s")
    }
}

/// A duration in µs: `us`/`ms` below one second, else `s`/`m` (never `h`), 2 decimals.
pub fn format_time_us(us: f64) -> String {
    if us >= 1_000_000.0 {
        let seconds = LongDouble::from_f64(us).div_int(1_000_000);
        format_extended(seconds, &TIME_UNITS_S, 2)
    } else {
        format_units(us, &TIME_UNITS_US, 2)
    }
}

/// Durations in µs that stand side by side (a row of `tsumo compare`, a column of a
/// comparison's page), all in one unit: the one [`format_time_us`] gives the largest, or a
/// smaller one while the smallest would show under 0.1 and the largest still fits in four
/// digits before the point (`0.89ms` beside `0.54ms`; 27us beside 6s is `0.03ms` and
/// `6000.00ms`). A value already in that unit is printed as `format_time_us` prints it, to
/// the digit; an absent one is `-`.
pub fn format_times_us(values: &[Option<f64>]) -> Vec<String> {
    const UNITS: [(&str, f64); 3] = [("us", 1.0), ("ms", 1e3), ("s", 1e6)];
    let natural = |us: f64| {
        let shown = format_time_us(us);
        let suffix = shown.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
        UNITS.iter().position(|u| u.0 == suffix)
    };
    let present = values.iter().flatten().copied();
    let smallest = present
        .clone()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let largest = present.fold(0.0, f64::max);
    // Minutes and hours are seconds here.
    let mut unit = match largest > 0.0 {
        true => natural(largest).unwrap_or(UNITS.len() - 1),
        false => 0,
    };
    while unit > 0 && smallest / UNITS[unit].1 < 0.1 && largest / UNITS[unit - 1].1 < 1e4 {
        unit -= 1;
    }
    values
        .iter()
        .map(|v| match v {
            None => "-".to_string(),
            Some(us) if *us > 0.0 && natural(*us) == Some(unit) => format_time_us(*us),
            Some(us) => format!("{:.2}{}", us / UNITS[unit].1, UNITS[unit].0),
        })
        .collect()
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
    #[test]
    fn durations_side_by_side_share_one_unit() {
        use super::format_times_us;
        // 890 µs is wrk's 0.89ms; beside it 542 µs is in ms too, not 542.00us.
        assert_eq!(
            format_times_us(&[Some(890.0), Some(542.0)]),
            ["0.89ms", "0.54ms"]
        );
        assert_eq!(
            format_times_us(&[Some(552.0), Some(4203.0)]),
            ["0.55ms", "4.20ms"]
        );
        // Too small to read in the largest's unit: the smaller unit.
        assert_eq!(
            format_times_us(&[Some(12.0), Some(900.0)]),
            ["12.00us", "900.00us"]
        );
        // Alone, a value is as format_time_us prints it.
        assert_eq!(format_times_us(&[Some(890.0)]), ["0.89ms"]);
        assert_eq!(format_times_us(&[Some(10.01e6), None]), ["10.01s", "-"]);
        // Far apart: a unit in which the largest needs at most four digits before the point.
        assert_eq!(
            format_times_us(&[Some(27.0), Some(6e6)]),
            ["0.03ms", "6000.00ms"]
        );
        // Minutes are seconds here, beside anything.
        assert_eq!(
            format_times_us(&[Some(130.25e6), Some(2e6)]),
            ["130.25s", "2.00s"]
        );
        assert_eq!(
            format_times_us(&[Some(0.0), Some(542.0)]),
            ["0.00us", "542.00us"]
        );
    }

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
    fn counts_are_singular_for_one() {
        assert_eq!(counted(1, "table"), "1 table");
        assert_eq!(counted(0, "error"), "0 errors");
        assert_eq!(counted(2, "thread"), "2 threads");
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

    #[test]
    fn last_digit_follows_long_double_rounding() {
        // Exact ties (x.xx5 ms) land on the side the x87 quotient falls, as printed by wrk2;
        // plain f64 division prints 73.22ms, 1.06ms and 2.04ms here.
        assert_eq!(format_time_us(73_215.0), "73.21ms");
        assert_eq!(format_time_us(1065.0), "1.07ms");
        assert_eq!(format_time_us(2045.0), "2.05ms");
        assert_eq!(format_time_us(4095.0), "4.09ms");
        assert_eq!(format_time_us(100_005.0), "100.00ms");
    }

    #[test]
    fn long_double_division_rounds_to_nearest() {
        let one = LongDouble::from_f64(1.0);
        assert_eq!(one.mantissa, 1 << 63);
        assert_eq!(one.exponent, -63);
        // 1/3 = 0.0101…: the 64-bit mantissa 0xAAAA…AAAB is rounded up.
        let third = one.div_int(3);
        assert_eq!(third.mantissa, 0xAAAA_AAAA_AAAA_AAAB);
        assert_eq!(third.exponent, -65);
        assert_eq!(
            LongDouble::from_f64(6.0).div_int(3),
            LongDouble::from_f64(2.0)
        );
        assert_eq!(LongDouble::from_f64(0.125).to_fixed(2), "0.12");
        assert_eq!(LongDouble::from_f64(0.375).to_fixed(2), "0.38");
        assert_eq!(LongDouble::from_f64(2.5).to_fixed(0), "2");
        assert_eq!(LongDouble::from_f64(3.5).to_fixed(0), "4");
        assert_eq!(LongDouble::from_f64(1e12).to_fixed(2), "1000000000000.00");
        assert!(LongDouble::from_f64(850.0) >= LongDouble::from_f64(1000.0 * 0.85));
        assert!(LongDouble::from_f64(849.9) < LongDouble::from_f64(1000.0 * 0.85));
    }
}
