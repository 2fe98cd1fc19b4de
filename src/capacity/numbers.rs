//! A load's numbers as the answer says them: `38,200` in full, `38.2k` in three figures.

/// `38,200`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `38.2k`, `1.5M`, `800`: a load in three figures.
pub fn short(n: u64) -> String {
    let (value, suffix) = match n {
        0..=999 => return n.to_string(),
        1_000..=999_999 => (n as f64 / 1e3, "k"),
        _ => (n as f64 / 1e6, "M"),
    };
    let text = if value < 100.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.0}")
    };
    format!("{}{suffix}", text.trim_end_matches(".0"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_the_answer() {
        assert_eq!(grouped(38_200), "38,200");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(short(38_200), "38.2k");
        assert_eq!(short(40_100), "40.1k");
        assert_eq!(short(2_000), "2k");
        assert_eq!(short(250_000), "250k");
        assert_eq!(short(1_500_000), "1.5M");
        assert_eq!(short(812), "812");
    }
}
