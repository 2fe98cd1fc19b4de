//! `--stages 30s:0-2000,2m:2000,0s:2000-8000`: the rate over time, read with wrk's units
//! (durations as `-d`, rates as `-R`). Each part is `DURATION:RATE` (a hold) or
//! `DURATION:FROM-TO` (a linear ramp; over `0s`, a jump). The error is the reason only; the
//! caller adds the option and the value.

use super::units::{one_line, parse_duration, parse_metric, MAX_DURATION};
use crate::plan::Stage;

/// The stages of a `--stages` value, in order: refused if one is malformed, if they last 0 in
/// all or longer than a `-d` may, or if every rate is 0.
pub(super) fn parse(text: &str) -> Result<Vec<Stage>, String> {
    let mut stages = Vec::new();
    let mut total: u64 = 0;
    for (i, part) in text.split(',').enumerate() {
        let stage = parse_stage(part.trim())
            .map_err(|reason| format!("stage {} '{}': {reason}", i + 1, one_line(part.trim())))?;
        total = total.saturating_add(stage.duration_ns);
        stages.push(stage);
    }
    if total == 0 {
        return Err("the stages last 0s in all".to_string());
    }
    if total > MAX_DURATION.as_nanos() as u64 {
        return Err("the stages last too long (at most 365 days in all)".to_string());
    }
    if stages.iter().all(|stage| stage.from == 0 && stage.to == 0) {
        return Err("every rate is 0: nothing would be sent".to_string());
    }
    Ok(stages)
}

/// One `DURATION:RATE` or `DURATION:FROM-TO`.
fn parse_stage(text: &str) -> Result<Stage, String> {
    let Some((duration, rate)) = text.split_once(':') else {
        return Err("expected DURATION:RATE or DURATION:FROM-TO".to_string());
    };
    let duration = parse_duration(duration).map_err(|reason| format!("duration: {reason}"))?;
    let rate = rate.trim();
    if rate.starts_with('-') {
        return Err("rate: must not be negative".to_string());
    }
    let (from, to) = rate.split_once('-').unwrap_or((rate, rate));
    let from = parse_metric(from).map_err(|reason| format!("rate: {reason}"))?;
    let to = parse_metric(to).map_err(|reason| format!("rate: {reason}"))?;
    Ok(Stage {
        duration_ns: duration.as_nanos() as u64,
        from,
        to,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_ramps_and_jumps() {
        let stages = parse("30s:0-2000, 2m:2k,0s:2000-8000,500ms:1-0").unwrap();
        let s = 1_000_000_000;
        assert_eq!(
            stages,
            [
                Stage {
                    duration_ns: 30 * s,
                    from: 0,
                    to: 2000
                },
                Stage {
                    duration_ns: 120 * s,
                    from: 2000,
                    to: 2000
                },
                Stage {
                    duration_ns: 0,
                    from: 2000,
                    to: 8000
                },
                Stage {
                    duration_ns: s / 2,
                    from: 1,
                    to: 0
                },
            ]
        );
    }

    #[test]
    fn malformed_profiles_are_refused_with_a_reason() {
        for (text, reason) in [
            ("30s", "expected DURATION:RATE"),
            ("30s:", "rate: empty value"),
            (":100", "duration: empty value"),
            ("30s:100-", "rate: empty value"),
            ("30s:-100", "must not be negative"),
            ("30s:100--5", "must not be negative"),
            ("30s:abc", "rate: expected a whole number"),
            ("30s:1.5", "fractions"),
            ("0s:100,0s:0-5", "last 0s in all"),
            ("10s:0,5s:0-0", "every rate is 0"),
            ("10s:100,", "stage 2 '': expected"),
            ("", "expected DURATION:RATE"),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(reason), "{text}: {error}");
            assert!(!error.contains('\n'));
        }
    }
}
