//! A WebSocket run's objectives (`tsumo ws --slo`): the round trip's percentiles (`p99<20ms`,
//! on the corrected round trip, named as an HTTP run's latency), `errors<N%` (messages
//! without a reply, as a share of the messages due), `rate>N%` (messages answered, as a share
//! of `-R` × the time run) and `disconnects<N` (connections the server closed or broke).

use super::{can_hold, count, direction, duration_us, share, split, Measure, Objective};
use super::{ParseError, Percentile};

/// A WebSocket run's measures, for messages.
pub const WS_MEASURES: &str =
    "p50, p75, p90, p99, p99.9, p99.99 or max (the round trip), errors, rate or disconnects";

/// A WebSocket run's objective; the error is the reason, to follow `--slo 'EXPR': `.
pub fn parse_ws(expr: &str) -> Result<Objective, ParseError> {
    let (name, below, limit) = split(expr)?;
    let measure = match name {
        "errors" => Measure::ErrorShare,
        "rate" => Measure::RateShare,
        "disconnects" => Measure::Disconnects,
        _ => match Percentile::parse(name) {
            Some(p) => Measure::Latency(p),
            None => return Err(ParseError::UnknownWsMeasure(name.to_string())),
        },
    };
    let limit = match &measure {
        Measure::Latency(_) => duration_us(limit)?,
        Measure::ErrorShare => share(name, limit, "errors<0.1%")?,
        Measure::RateShare => share(name, limit, "rate>95%")?,
        _ => count(name, limit)?,
    };
    direction(name, below, measure != Measure::RateShare)?;
    can_hold(name, below, limit, &measure)?;
    Ok(Objective {
        expr: expr.trim().to_string(),
        measure,
        below,
        limit,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ws_objectives_name_the_round_trip_errors_rate_and_disconnects() {
        let p99 = parse_ws("p99<20ms").unwrap();
        assert_eq!(
            (p99.measure, p99.limit),
            (Measure::Latency(Percentile::P99), 20_000.0)
        );
        assert_eq!(parse_ws("errors<1%").unwrap().measure, Measure::ErrorShare);
        assert_eq!(parse_ws("rate>95%").unwrap().measure, Measure::RateShare);
        let d = parse_ws("disconnects<1").unwrap();
        assert_eq!((d.measure, d.limit), (Measure::Disconnects, 1.0));
        let refused = |expr: &str| parse_ws(expr).unwrap_err().to_string();
        assert!(refused("draw_overshoot.p99<1ms").contains("unknown measure"));
        assert!(refused("disconnects<1%").contains("a count, not a share"));
        assert!(refused("rate<95%").contains("takes '>'"));
        assert!(refused("disconnects<0").contains("can never hold"));
    }
}
