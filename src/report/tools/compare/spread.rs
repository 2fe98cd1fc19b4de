//! The run-to-run spread, and the words on it under a comparison table: for each key metric,
//! whether the difference between two labels is larger than the rounds of one label differ
//! among themselves (the rule is in the doc of [`super`]).

use super::Group;

pub(super) fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Spread (max − min) of rounds.
fn spread(values: &[f64]) -> f64 {
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    let min = values.iter().copied().fold(f64::MAX, f64::min);
    max - min
}

/// Spread (max − min) of a group's rounds as a share of their mean, in words.
fn spread_in_words(values: &[f64]) -> String {
    let (Some(mean), Some(max), Some(min)) = (
        mean(values),
        values.iter().copied().reduce(f64::max),
        values.iter().copied().reduce(f64::min),
    ) else {
        return "no value".to_string();
    };
    if values.len() < 2 {
        return "one run".to_string();
    }
    if mean <= 0.0 {
        return if max > min {
            "varies".to_string()
        } else {
            "varies 0%".to_string()
        };
    }
    let percent = (max - min) / mean * 100.0;
    if percent == 0.0 || percent >= 1.0 {
        format!("varies {percent:.0}%")
    } else if percent >= 0.1 {
        format!("varies {percent:.1}%")
    } else {
        "varies <0.1%".to_string()
    }
}

/// The rule of [`super`]: the means differ by more than 1 % and by more than the larger
/// spread (max − min) of either label's rounds.
pub(super) fn beyond_spread(values_a: &[f64], values_b: &[f64]) -> bool {
    let (mean_a, mean_b) = (mean(values_a).unwrap_or(0.0), mean(values_b).unwrap_or(0.0));
    // A difference under 1 % is no difference worth a word, however steady the rounds were.
    let within = spread(values_a)
        .max(spread(values_b))
        .max(0.01 * mean_a.abs().max(mean_b.abs()));
    (mean_b - mean_a).abs() > within
}

/// One sentence: how `b` compares to the first group `a` on one metric, and whether that is
/// more than the rounds of either label differ among themselves.
pub(super) fn spread_sentence(
    metric: &str,
    a: (&Group<'_>, &[f64]),
    b: (&Group<'_>, &[f64]),
) -> String {
    let (group_a, values_a) = a;
    let (group_b, values_b) = b;
    let (mean_a, mean_b) = (mean(values_a).unwrap_or(0.0), mean(values_b).unwrap_or(0.0));
    let comparison = if mean_a > 0.0 {
        format!(
            "{} is {:.2}× {}",
            group_b.heading,
            mean_b / mean_a,
            group_a.heading
        )
    } else {
        format!("{} {mean_b:.3} vs {} 0", group_b.heading, group_a.heading)
    };
    let verdict = if beyond_spread(values_a, values_b) {
        "beyond run-to-run noise"
    } else {
        "within run-to-run noise"
    };
    format!(
        "{metric}: {comparison}; {verdict} ({} {}, {} {} between rounds)",
        group_a.heading,
        spread_in_words(values_a),
        group_b.heading,
        spread_in_words(values_b)
    )
}
