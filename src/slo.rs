//! Objectives (`--slo EXPR`): what a run must hold, parsed from the command line, and the
//! judgement of a finished run against them.
//!
//! Low in the layout so that the plan can carry them and every layer above can judge: the
//! measures themselves are read from a saved result by the report layer, through
//! [`Measured`]; this module only knows names, limits and comparisons. One objective is one
//! measure, one comparison and one limit: `p99<20ms`, `errors<0.1%`, `rate>95%`,
//! `draw_overshoot.p99<100ms`, `disconnects<1`.

use serde::{Deserialize, Serialize};

mod ws;
pub use ws::{parse_ws, WS_MEASURES};

/// A percentile of a latency histogram (or its max).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Percentile {
    P50,
    P75,
    P90,
    P99,
    P99_9,
    P99_99,
    Max,
}

impl Percentile {
    /// Every percentile an objective may name, in order (also the `--slo` helps' list).
    pub const ALL: [Percentile; 7] = [
        Percentile::P50,
        Percentile::P75,
        Percentile::P90,
        Percentile::P99,
        Percentile::P99_9,
        Percentile::P99_99,
        Percentile::Max,
    ];

    /// As written in an objective: `p50`, `p99.9`, `max`.
    pub fn as_str(self) -> &'static str {
        match self {
            Percentile::P50 => "p50",
            Percentile::P75 => "p75",
            Percentile::P90 => "p90",
            Percentile::P99 => "p99",
            Percentile::P99_9 => "p99.9",
            Percentile::P99_99 => "p99.99",
            Percentile::Max => "max",
        }
    }

    /// The percentile as a number (100 for `max`).
    pub fn value(self) -> f64 {
        match self {
            Percentile::P50 => 50.0,
            Percentile::P75 => 75.0,
            Percentile::P90 => 90.0,
            Percentile::P99 => 99.0,
            Percentile::P99_9 => 99.9,
            Percentile::P99_99 => 99.99,
            Percentile::Max => 100.0,
        }
    }

    fn parse(text: &str) -> Option<Percentile> {
        Percentile::ALL.into_iter().find(|p| p.as_str() == text)
    }
}

/// What an objective measures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Measure {
    /// HTTP: a percentile of the corrected latency; WebSocket: of the corrected round trip, µs.
    Latency(Percentile),
    /// HTTP: every error (socket errors, non-2xx/3xx, requests never sent) as a share of every
    /// request due (responses, socket errors and requests never sent), %. WebSocket: messages
    /// without a reply (timed out, unanswered, never sent) as a share of the messages due, %.
    ErrorShare,
    /// HTTP: the achieved rate as a share of the target rate, %; WebSocket: of messages.
    RateShare,
    /// Mahjong: a percentile of one of the session's histograms (`draw_overshoot`,
    /// `deal_overshoot`, `reply_lateness`, or a step kind), µs.
    Session {
        histogram: String,
        percentile: Percentile,
    },
    /// Mahjong: WebSockets closed before their player was done. WebSocket: connections the
    /// server closed or broke during the run.
    Disconnects,
    /// Mahjong: protocol errors and failed phases (login, connect, …), as the report's
    /// `Disconnects:` line counts them.
    SessionErrors,
}

/// Which unit a measure is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Unit {
    /// Microseconds.
    #[serde(rename = "us")]
    Micros,
    /// Percent.
    #[serde(rename = "%")]
    Percent,
    /// A count.
    #[serde(rename = "count")]
    Count,
}

impl Measure {
    pub fn unit(&self) -> Unit {
        match self {
            Measure::Latency(_) | Measure::Session { .. } => Unit::Micros,
            Measure::ErrorShare | Measure::RateShare => Unit::Percent,
            Measure::Disconnects | Measure::SessionErrors => Unit::Count,
        }
    }
}

/// One objective, as typed and parsed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Objective {
    /// As typed (`p99<20ms`), to name it in verdicts.
    pub expr: String,
    pub measure: Measure,
    /// `true`: the measure must stay below `limit` (`<`); `false`: above it (`rate>`).
    pub below: bool,
    /// In the measure's unit.
    pub limit: f64,
}

impl Objective {
    /// The measure's name as typed: `p99`, `errors`, `draw_overshoot.p99`.
    pub fn name(&self) -> &str {
        name_of(&self.expr)
    }

    /// Whether `measured` holds this objective.
    pub fn holds(&self, measured: f64) -> bool {
        if self.below {
            measured < self.limit
        } else {
            measured > self.limit
        }
    }
}

/// The measure's name of an objective as typed (what comes before `<` or `>`).
pub fn name_of(expr: &str) -> &str {
    expr.split(['<', '>']).next().unwrap_or(expr).trim()
}

/// A finished run's (or a saved result's) value of a measure: `None` when it has none (a
/// histogram without samples, a closed-loop run's rate).
pub trait Measured {
    fn measure(&self, measure: &Measure) -> Option<f64>;

    /// What `measure` was read from when it is not the measure itself: `server_latency` for an
    /// HTTP run's latency, judged on what the server caused rather than on the corrected
    /// latency with tsumo's own delay in it.
    fn judged_on(&self, _measure: &Measure) -> Option<&'static str> {
        None
    }
}

/// One objective judged: the JSON's `objectives` entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The objective as typed.
    pub expr: String,
    /// What the run measured, in `unit`; `null` when it had nothing to measure (which breaks
    /// the objective: a run that shows nothing cannot vouch for a load).
    pub measured: Option<f64>,
    pub unit: Unit,
    pub held: bool,
    /// What the value was read from, when not the measure itself: `server_latency` (the
    /// corrected latency less tsumo's own delay), `without_own_unsent` (errors and rate with
    /// the requests tsumo itself left unsent left out). Absent otherwise, and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_on: Option<String>,
}

impl Verdict {
    /// The measure's name: `p99`, `errors`, `draw_overshoot.p99`.
    pub fn name(&self) -> &str {
        name_of(&self.expr)
    }

    /// `p99 31.0ms`, `errors 0.120%`, `disconnects 3`; `p99 not measured` without a value. A
    /// value that would read as its limit gets the digits that tell them apart: `errors<0.1%`
    /// held at `errors 0.0999%`, not `0.100%`.
    pub fn measured_text(&self) -> String {
        let Some(value) = self.measured else {
            return format!("{} not measured", self.name());
        };
        let apart = self.limit().and_then(|limit| {
            (0..=4).find_map(|extra| {
                let text = format_in(value, self.unit, value, extra);
                (text != format_in(limit, self.unit, value, extra)).then_some(text)
            })
        });
        let text = apart.unwrap_or_else(|| format_value(value, self.unit));
        let (of, without) = match self.judged_on.as_deref() {
            Some("server_latency") => ("server's ", ""),
            Some("without_own_unsent") => ("", " (without tsumo's unsent)"),
            _ => ("", ""),
        };
        format!("{of}{} {text}{without}", self.name())
    }

    /// Broken beyond doubt: nothing measured, or a measure at least [`FAR`] times its upper
    /// limit (at most its lower limit over [`FAR`]). Noise that only makes a server look a
    /// little worse cannot do that, so such a break needs no second trial.
    pub fn far_beyond(&self) -> bool {
        if self.held {
            return false;
        }
        let (Some(value), Some(limit)) = (self.measured, self.limit()) else {
            return self.measured.is_none();
        };
        let below = split(&self.expr).is_ok_and(|(_, below, _)| below);
        if below {
            value >= limit * FAR
        } else {
            value * FAR <= limit
        }
    }

    /// The objective's limit in its unit, read back from `expr`.
    pub fn limit(&self) -> Option<f64> {
        let (name, _, limit) = split(&self.expr).ok()?;
        match self.unit {
            Unit::Micros => duration_us(limit).ok(),
            Unit::Percent => share(name, limit, "").ok(),
            Unit::Count => limit.parse::<u64>().ok().map(|n| n as f64),
        }
    }
}

/// How many times beyond its limit a measure broke beyond doubt (37.5 % and 16.6 % errors
/// against `errors<1%` were each run again before).
pub const FAR: f64 = 2.0;

/// A measured value in its unit, short: `850us`, `31.0ms`, `1.25s`, `0.120%`, `12.5%`, `3`.
pub fn format_value(value: f64, unit: Unit) -> String {
    format_in(value, unit, value, 0)
}

/// `value` in the scale [`format_value`] would choose for `scale_of` (so a limit is written as
/// the value it is compared with), with `extra` more decimals.
fn format_in(value: f64, unit: Unit, scale_of: f64, extra: usize) -> String {
    match unit {
        Unit::Micros if scale_of < 1_000.0 => format!("{value:.extra$}us"),
        Unit::Micros if scale_of < 1_000_000.0 => format!("{:.*}ms", 1 + extra, value / 1_000.0),
        Unit::Micros => format!("{:.*}s", 2 + extra, value / 1_000_000.0),
        Unit::Percent if value == 0.0 => "0%".to_string(),
        Unit::Percent if scale_of < 1.0 => format!("{value:.*}%", 3 + extra),
        Unit::Percent => format!("{value:.*}%", 1 + extra),
        Unit::Count => format!("{value:.0}"),
    }
}

/// Every objective judged against `run`, in the order given.
pub fn judge(objectives: &[Objective], run: &impl Measured) -> Vec<Verdict> {
    objectives
        .iter()
        .map(|objective| {
            let measured = run.measure(&objective.measure);
            Verdict {
                expr: objective.expr.clone(),
                measured,
                unit: objective.measure.unit(),
                held: measured.is_some_and(|value| objective.holds(value)),
                judged_on: run.judged_on(&objective.measure).map(str::to_string),
            }
        })
        .collect()
}

/// The HTTP measures, for messages.
const HTTP_MEASURES: &str = "p50, p75, p90, p99, p99.9, p99.99, max, errors or rate";

/// The percentiles, for messages.
const PERCENTILES: &str = "p50, p75, p90, p99, p99.9, p99.99 or max";

/// The mahjong histograms besides the step kinds.
pub const SESSION_HISTOGRAMS: [&str; 3] = ["draw_overshoot", "deal_overshoot", "reply_lateness"];

/// Why an objective does not parse, or could never hold: the reason, to follow
/// `--slo 'EXPR': ` (the command line's) or a saved run's objective.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("empty objective (e.g. p99<20ms)")]
    Empty,
    #[error("no '<' or '>' (e.g. p99<20ms, rate>95%)")]
    NoComparison,
    #[error("'<=' and '>=' are not objectives: use '<' or '>'")]
    OrEqual,
    #[error("no measure before the comparison (e.g. p99<20ms)")]
    NoMeasure,
    #[error("no limit after {0}")]
    NoLimit(String),
    #[error("one comparison per objective (repeat --slo for more)")]
    TwoComparisons,
    /// A session's measure in an HTTP run.
    #[error("{0} is a mahjong measure (tsumo mahjong --slo); an HTTP run's are {HTTP_MEASURES}", HTTP_MEASURES = HTTP_MEASURES)]
    SessionMeasure(String),
    #[error("unknown measure '{0}' (an HTTP run's are {HTTP_MEASURES})", HTTP_MEASURES = HTTP_MEASURES)]
    UnknownHttpMeasure(String),
    #[error("unknown measure '{0}' (a WebSocket run's are {WS_MEASURES})", WS_MEASURES = WS_MEASURES)]
    UnknownWsMeasure(String),
    /// `rate` in a session; `measures` lists a session's.
    #[error("rate is an HTTP measure (a target rate's share); {measures}")]
    RateInSession { measures: String },
    /// A bare percentile in a session, which has several histograms.
    #[error(
        "{name} is an HTTP measure; in a session say which histogram, e.g. \
         draw_overshoot.{name} ({measures})"
    )]
    HttpPercentile { name: String, measures: String },
    #[error("unknown measure '{histogram}' ({measures})")]
    UnknownSessionMeasure { histogram: String, measures: String },
    #[error("{0} needs a percentile: {0}.p99 (use {PERCENTILES})", PERCENTILES = PERCENTILES)]
    NoPercentile(String),
    #[error("unknown percentile '{0}' (use {PERCENTILES})", PERCENTILES = PERCENTILES)]
    UnknownPercentile(String),
    /// `<` on a lower limit or `>` on an upper one.
    #[error("{name} takes {}, not {}", takes(*.below), refused(*.below))]
    Direction { name: String, below: bool },
    /// `rate>100%`: a run completes at most its target rate.
    #[error(
        "can never hold: a run completes at most its target rate ({0}>99% allows a little \
         shortfall)"
    )]
    AboveAllRate(String),
    /// An upper limit of 0 or less on a count.
    #[error("can never hold: no count is below 0 ({0}<1 allows none)")]
    CountBelowZero(String),
    /// An upper limit of 0 or less on a latency or a share: what no value is below.
    #[error("can never hold: {0}")]
    BelowZero(&'static str),
    #[error("'{0}' is not a duration (a number and us, ms or s: 20ms)")]
    NotDuration(String),
    #[error("no unit in {0} (use us, ms or s)")]
    NoUnit(String),
    #[error("unknown unit '{unit}' in {text} (use us, ms or s)")]
    UnknownUnit { unit: String, text: String },
    /// A share without its `%`.
    #[error("{name} is a share: {text}% ({example})")]
    NoPercent {
        name: String,
        text: String,
        example: &'static str,
    },
    #[error("{0} is more than 100%")]
    OverHundred(String),
    #[error("'{text}' is not a share ({example})")]
    NotShare { text: String, example: &'static str },
    /// A session's count given as a share: the message shows it as a count.
    #[error("{name} in a session is a count, not a share: {name}<{count}")]
    CountNotShare { name: String, count: String },
    #[error("{0} takes a whole number: {0}<1")]
    NotWhole(String),
}

/// What a limit of this direction is, for [`ParseError::Direction`] (`below`: the one typed).
fn takes(below: bool) -> &'static str {
    if below {
        "'>' (a lower limit)"
    } else {
        "'<' (an upper limit)"
    }
}

/// The comparison typed, for [`ParseError::Direction`].
fn refused(below: bool) -> &'static str {
    if below {
        "'<'"
    } else {
        "'>'"
    }
}

/// An HTTP run's objective; the error is the reason, to follow `--slo 'EXPR': `.
pub fn parse_http(expr: &str) -> Result<Objective, ParseError> {
    let (name, below, limit) = split(expr)?;
    let measure = match name {
        "errors" => Measure::ErrorShare,
        "rate" => Measure::RateShare,
        _ => match Percentile::parse(name) {
            Some(p) => Measure::Latency(p),
            None if looks_like_session(name) => {
                return Err(ParseError::SessionMeasure(name.to_string()))
            }
            None => return Err(ParseError::UnknownHttpMeasure(name.to_string())),
        },
    };
    let limit = match &measure {
        Measure::Latency(_) => duration_us(limit)?,
        Measure::ErrorShare => share(name, limit, "errors<0.1%")?,
        _ => share(name, limit, "rate>95%")?,
    };
    let want_below = measure != Measure::RateShare;
    direction(name, below, want_below)?;
    can_hold(name, below, limit, &measure)?;
    Ok(Objective {
        expr: expr.trim().to_string(),
        measure,
        below,
        limit,
    })
}

/// A mahjong session's objective; `step_kinds` are the step names a measure may start with
/// besides [`SESSION_HISTOGRAMS`]. The error is the reason, to follow `--slo 'EXPR': `.
pub fn parse_mahjong(expr: &str, step_kinds: &[&str]) -> Result<Objective, ParseError> {
    let (name, below, limit) = split(expr)?;
    let measures = || {
        format!(
            "a session's are {}, a step kind ({}), each with .p50 to .max, disconnects or errors",
            SESSION_HISTOGRAMS.join(", "),
            step_kinds.join(", ")
        )
    };
    let measure = match name {
        "disconnects" => Measure::Disconnects,
        "errors" => Measure::SessionErrors,
        "rate" => {
            return Err(ParseError::RateInSession {
                measures: measures(),
            })
        }
        _ => {
            let (histogram, percentile) = match name.split_once('.') {
                Some((histogram, percentile)) => (histogram, Some(percentile)),
                None => (name, None),
            };
            let known = SESSION_HISTOGRAMS.contains(&histogram) || step_kinds.contains(&histogram);
            if !known {
                if Percentile::parse(name).is_some() {
                    return Err(ParseError::HttpPercentile {
                        name: name.to_string(),
                        measures: measures(),
                    });
                }
                return Err(ParseError::UnknownSessionMeasure {
                    histogram: histogram.to_string(),
                    measures: measures(),
                });
            }
            let Some(percentile) = percentile else {
                return Err(ParseError::NoPercentile(histogram.to_string()));
            };
            let Some(percentile) = Percentile::parse(percentile) else {
                return Err(ParseError::UnknownPercentile(percentile.to_string()));
            };
            Measure::Session {
                histogram: histogram.to_string(),
                percentile,
            }
        }
    };
    direction(name, below, true)?;
    let limit = match &measure {
        Measure::Session { .. } => duration_us(limit)?,
        _ => count(name, limit)?,
    };
    can_hold(name, below, limit, &measure)?;
    Ok(Objective {
        expr: expr.trim().to_string(),
        measure,
        below,
        limit,
    })
}

/// `NAME<LIMIT` or `NAME>LIMIT`: the name, whether it is `<`, and the limit as typed.
fn split(expr: &str) -> Result<(&str, bool, &str), ParseError> {
    let expr = expr.trim();
    if expr.is_empty() {
        return Err(ParseError::Empty);
    }
    let Some(at) = expr.find(['<', '>']) else {
        return Err(ParseError::NoComparison);
    };
    let (name, rest) = expr.split_at(at);
    let below = rest.starts_with('<');
    let limit = rest[1..].trim();
    if limit.starts_with('=') {
        return Err(ParseError::OrEqual);
    }
    let name = name.trim();
    if name.is_empty() {
        return Err(ParseError::NoMeasure);
    }
    if limit.is_empty() {
        return Err(ParseError::NoLimit(name.to_string()));
    }
    if limit.contains(['<', '>']) {
        return Err(ParseError::TwoComparisons);
    }
    Ok((name, below, limit))
}

/// Refuses an upper limit of 0 or less: no latency, share or count is below 0, so the
/// objective would break at every load, whatever the server did.
fn can_hold(name: &str, below: bool, limit: f64, measure: &Measure) -> Result<(), ParseError> {
    if *measure == Measure::RateShare && !below && limit >= 100.0 {
        // A run sends exactly rate x duration requests: it completes no more than all of them.
        return Err(ParseError::AboveAllRate(name.to_string()));
    }
    if !below || limit > 0.0 {
        return Ok(());
    }
    Err(match measure.unit() {
        Unit::Micros => ParseError::BelowZero("no latency is below 0"),
        Unit::Percent => ParseError::BelowZero("no share is below 0%"),
        Unit::Count => ParseError::CountBelowZero(name.to_string()),
    })
}

fn direction(name: &str, below: bool, want_below: bool) -> Result<(), ParseError> {
    if below == want_below {
        return Ok(());
    }
    Err(ParseError::Direction {
        name: name.to_string(),
        below,
    })
}

/// A plain decimal number (`20`, `0.5`): no sign, no exponent.
fn number(text: &str) -> Option<f64> {
    let plain = !text.is_empty()
        && text.chars().all(|c| c.is_ascii_digit() || c == '.')
        && text.chars().any(|c| c.is_ascii_digit());
    plain.then(|| text.parse().ok()).flatten()
}

/// `20ms`, `500us`, `1.5s` in µs (wrk's units).
fn duration_us(text: &str) -> Result<f64, ParseError> {
    let at = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(at);
    let Some(value) = number(digits) else {
        return Err(ParseError::NotDuration(text.to_string()));
    };
    let scale = match unit {
        "" => return Err(ParseError::NoUnit(text.to_string())),
        "us" => 1.0,
        "ms" => 1_000.0,
        "s" => 1_000_000.0,
        _ => {
            return Err(ParseError::UnknownUnit {
                unit: unit.to_string(),
                text: text.to_string(),
            })
        }
    };
    Ok(value * scale)
}

/// `0.1%`: a share of 0 to 100.
fn share(name: &str, text: &str, example: &'static str) -> Result<f64, ParseError> {
    let Some(digits) = text.strip_suffix('%') else {
        return Err(ParseError::NoPercent {
            name: name.to_string(),
            text: text.to_string(),
            example,
        });
    };
    match number(digits.trim()) {
        Some(value) if value <= 100.0 => Ok(value),
        Some(_) => Err(ParseError::OverHundred(text.to_string())),
        None => Err(ParseError::NotShare {
            text: text.to_string(),
            example,
        }),
    }
}

/// A whole count (`disconnects<1`).
fn count(name: &str, text: &str) -> Result<f64, ParseError> {
    if text.ends_with('%') {
        return Err(ParseError::CountNotShare {
            name: name.to_string(),
            count: text.trim_end_matches('%').to_string(),
        });
    }
    match text.parse::<u64>() {
        Ok(n) => Ok(n as f64),
        Err(_) => Err(ParseError::NotWhole(name.to_string())),
    }
}

/// `draw_overshoot.p99` or a name with a dot: meant for a session.
fn looks_like_session(name: &str) -> bool {
    (name.contains('.') && !name.starts_with('p'))
        || SESSION_HISTOGRAMS.contains(&name)
        || name == "disconnects"
}

/// The broken objectives in one line, each with what was measured: `objectives broken:
/// p99<20ms (p99 31.0ms), errors<0.1% (errors 2.3%)`, the line a run exits 99 with; `None`
/// when every one held.
pub fn broken_line(verdicts: &[Verdict]) -> Option<String> {
    let broken: Vec<String> = verdicts
        .iter()
        .filter(|v| !v.held)
        .map(|v| format!("{} ({})", v.expr, v.measured_text()))
        .collect();
    (!broken.is_empty()).then(|| format!("objectives broken: {}", broken.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STEPS: [&str; 3] = ["kaiju", "zimo", "dapai"];

    fn http(expr: &str) -> Objective {
        match parse_http(expr) {
            Ok(objective) => objective,
            Err(e) => panic!("{expr}: {e}"),
        }
    }

    fn mahjong(expr: &str) -> Objective {
        match parse_mahjong(expr, &STEPS) {
            Ok(objective) => objective,
            Err(e) => panic!("{expr}: {e}"),
        }
    }

    #[test]
    fn http_objectives_parse() {
        let p99 = http("p99<20ms");
        assert_eq!(p99.measure, Measure::Latency(Percentile::P99));
        assert_eq!((p99.below, p99.limit), (true, 20_000.0));
        assert_eq!(p99.name(), "p99");
        assert_eq!(http("p99.9<1.5s").limit, 1_500_000.0);
        assert_eq!(
            http("p99.9<1.5s").measure,
            Measure::Latency(Percentile::P99_9)
        );
        assert_eq!(http(" max < 500us ").limit, 500.0);
        assert_eq!(http(" max < 500us ").expr, "max < 500us");
        assert_eq!(http("p50<0.5ms").limit, 500.0);
        let errors = http("errors<0.1%");
        assert_eq!((errors.measure, errors.limit), (Measure::ErrorShare, 0.1));
        let rate = http("rate>95%");
        assert_eq!(
            (rate.measure, rate.below, rate.limit),
            (Measure::RateShare, false, 95.0)
        );
    }

    #[test]
    fn mahjong_objectives_parse() {
        let draw = mahjong("draw_overshoot.p99<100ms");
        assert_eq!(
            draw.measure,
            Measure::Session {
                histogram: "draw_overshoot".into(),
                percentile: Percentile::P99
            }
        );
        assert_eq!(draw.limit, 100_000.0);
        assert_eq!(draw.name(), "draw_overshoot.p99");
        assert_eq!(
            mahjong("zimo.max<2s").measure,
            Measure::Session {
                histogram: "zimo".into(),
                percentile: Percentile::Max
            }
        );
        assert_eq!(mahjong("reply_lateness.p99.9<5ms").limit, 5_000.0);
        let disconnects = mahjong("disconnects<1");
        assert_eq!(
            (disconnects.measure, disconnects.limit),
            (Measure::Disconnects, 1.0)
        );
        assert_eq!(mahjong("errors<10").measure, Measure::SessionErrors);
    }

    /// Each malformed objective says what is wrong in one line.
    #[test]
    fn http_errors_name_the_mistake() {
        let cases = [
            ("p99<20", "no unit in 20 (use us, ms or s)"),
            ("p99<20m", "unknown unit 'm' in 20m (use us, ms or s)"),
            (
                "p99<fast",
                "'fast' is not a duration (a number and us, ms or s: 20ms)",
            ),
            (
                "p99<-1ms",
                "'-1ms' is not a duration (a number and us, ms or s: 20ms)",
            ),
            ("", "empty objective (e.g. p99<20ms)"),
            ("p99", "no '<' or '>' (e.g. p99<20ms, rate>95%)"),
            ("<20ms", "no measure before the comparison (e.g. p99<20ms)"),
            ("p99<", "no limit after p99"),
            (
                "p99<=20ms",
                "'<=' and '>=' are not objectives: use '<' or '>'",
            ),
            (
                "1ms<p99<20ms",
                "one comparison per objective (repeat --slo for more)",
            ),
            ("p99>20ms", "p99 takes '<' (an upper limit), not '>'"),
            ("rate<95%", "rate takes '>' (a lower limit), not '<'"),
            ("errors<5", "errors is a share: 5% (errors<0.1%)"),
            ("rate>95", "rate is a share: 95% (rate>95%)"),
            ("errors<101%", "101% is more than 100%"),
            ("p99<0ms", "can never hold: no latency is below 0"),
            (
                "rate>100%",
                "can never hold: a run completes at most its target rate (rate>99% allows a \
                 little shortfall)",
            ),
            ("max<0us", "can never hold: no latency is below 0"),
            ("errors<0%", "can never hold: no share is below 0%"),
            ("errors<x%", "'x%' is not a share (errors<0.1%)"),
            (
                "p98<20ms",
                "unknown measure 'p98' (an HTTP run's are p50, p75, p90, p99, p99.9, p99.99, \
                 max, errors or rate)",
            ),
            (
                "draw_overshoot.p99<100ms",
                "draw_overshoot.p99 is a mahjong measure (tsumo mahjong --slo); an HTTP run's \
                 are p50, p75, p90, p99, p99.9, p99.99, max, errors or rate",
            ),
            (
                "disconnects<1",
                "disconnects is a mahjong measure (tsumo mahjong --slo); an HTTP run's are p50, \
                 p75, p90, p99, p99.9, p99.99, max, errors or rate",
            ),
        ];
        for (expr, want) in cases {
            assert_eq!(
                parse_http(expr)
                    .map_err(|e| e.to_string())
                    .as_ref()
                    .map_err(String::as_str),
                Err(want),
                "{expr}"
            );
        }
    }

    #[test]
    fn mahjong_errors_name_the_mistake() {
        let measures = "a session's are draw_overshoot, deal_overshoot, reply_lateness, a step \
                        kind (kaiju, zimo, dapai), each with .p50 to .max, disconnects or errors";
        let cases = [
            (
                "p99<20ms",
                format!(
                    "p99 is an HTTP measure; in a session say which histogram, e.g. \
                     draw_overshoot.p99 ({measures})"
                ),
            ),
            (
                "rate>95%",
                format!("rate is an HTTP measure (a target rate's share); {measures}"),
            ),
            (
                "draw_overshoot<100ms",
                "draw_overshoot needs a percentile: draw_overshoot.p99 (use p50, p75, p90, p99, \
                 p99.9, p99.99 or max)"
                    .to_string(),
            ),
            (
                "draw_overshoot.p98<100ms",
                "unknown percentile 'p98' (use p50, p75, p90, p99, p99.9, p99.99 or max)"
                    .to_string(),
            ),
            ("chi.p99<1s", format!("unknown measure 'chi' ({measures})")),
            (
                "draw_overshoot.p99<100",
                "no unit in 100 (use us, ms or s)".to_string(),
            ),
            (
                "errors<1%",
                "errors in a session is a count, not a share: errors<1".to_string(),
            ),
            (
                "disconnects<0.5",
                "disconnects takes a whole number: disconnects<1".to_string(),
            ),
            (
                "disconnects>1",
                "disconnects takes '<' (an upper limit), not '>'".to_string(),
            ),
            (
                "disconnects<0",
                "can never hold: no count is below 0 (disconnects<1 allows none)".to_string(),
            ),
            (
                "errors<0",
                "can never hold: no count is below 0 (errors<1 allows none)".to_string(),
            ),
            (
                "draw_overshoot.p99<0ms",
                "can never hold: no latency is below 0".to_string(),
            ),
        ];
        for (expr, want) in cases {
            assert_eq!(
                parse_mahjong(expr, &STEPS)
                    .map_err(|e| e.to_string())
                    .as_ref()
                    .map_err(String::as_str),
                Err(want.as_str()),
                "{expr}"
            );
        }
    }

    /// A value that rounds to its limit is written with the digits that tell them apart;
    /// others as before.
    #[test]
    fn a_value_by_its_limit_shows_which_side_it_is_on() {
        let text = |expr: &str, value: f64, unit: Unit| {
            Verdict {
                expr: expr.to_string(),
                measured: Some(value),
                unit,
                held: true,
                judged_on: None,
            }
            .measured_text()
        };
        assert_eq!(text("errors<0.1%", 0.0999, Unit::Percent), "errors 0.0999%");
        assert_eq!(text("errors<0.1%", 0.1004, Unit::Percent), "errors 0.1004%");
        assert_eq!(text("errors<0.1%", 0.12, Unit::Percent), "errors 0.120%");
        assert_eq!(text("errors<0.1%", 0.0, Unit::Percent), "errors 0%");
        assert_eq!(text("errors<5%", 4.99, Unit::Percent), "errors 4.99%");
        assert_eq!(text("p99<20ms", 19_990.0, Unit::Micros), "p99 19.99ms");
        assert_eq!(text("p99<20ms", 20_040.0, Unit::Micros), "p99 20.04ms");
        assert_eq!(text("p99<20ms", 31_000.0, Unit::Micros), "p99 31.0ms");
        assert_eq!(text("p99<1ms", 999.6, Unit::Micros), "p99 999.6us");
        // Exactly at the limit: nothing tells them apart, the usual digits.
        assert_eq!(text("p99<20ms", 20_000.0, Unit::Micros), "p99 20.0ms");
        assert_eq!(text("disconnects<1", 1.0, Unit::Count), "disconnects 1");
    }

    struct Fixed(Option<f64>);

    impl Measured for Fixed {
        fn measure(&self, _: &Measure) -> Option<f64> {
            self.0
        }
    }

    #[test]
    fn judged_strictly_and_nothing_measured_breaks() {
        let objectives = [http("p99<20ms"), http("rate>95%")];
        let at = |v| judge(&objectives, &Fixed(v));
        let held: Vec<bool> = at(Some(95.0)).iter().map(|v| v.held).collect();
        assert_eq!(held, [true, false]);
        let held: Vec<bool> = at(Some(20_000.0)).iter().map(|v| v.held).collect();
        assert_eq!(held, [false, true]);
        let none = at(None);
        assert!(none.iter().all(|v| !v.held && v.measured.is_none()));
        assert_eq!(none[0].unit, Unit::Micros);
        assert_eq!(none[1].unit, Unit::Percent);
        assert_eq!(none[1].name(), "rate");
    }
}
