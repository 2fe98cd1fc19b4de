//! The axes: linear from a round value, logarithmic on 1-2-5 steps, and the percentile axis
//! of `1/(1−q)`; each with its gridlines and their labels, as plotters' coordinates.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;

/// One axis: its range, linear or logarithmic, and its gridlines with their labels.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Axis {
    pub(super) log: bool,
    pub(super) low: f64,
    pub(super) high: f64,
    pub(super) ticks: Vec<(f64, String)>,
}

/// 1, 2 and 5 × 10^k: a log axis's ticks.
pub(super) fn one_two_five(decade: i32) -> [f64; 3] {
    let base = 10f64.powi(decade);
    [base, 2.0 * base, 5.0 * base]
}

impl Axis {
    /// From 0 to a round value at or above the largest; or, when `log_if_wide` and the values
    /// span more than a decade (a linear axis would flatten every low value to the floor), log
    /// from the 1-2-5 step at or below the lowest to the one at or above the highest: no band
    /// of the chart is left without data.
    pub(super) fn fit(values: impl Iterator<Item = f64> + Clone, log_if_wide: bool) -> Axis {
        let max = values.clone().fold(0.0, f64::max);
        let min_positive = values.filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
        if log_if_wide && max > 0.0 && min_positive.is_finite() && max / min_positive > 10.0 {
            // A relative slack so that a value of exactly 2 × 10^k is its own tick.
            let slack = 1e-9;
            let low = min_positive.log10().floor() as i32;
            let bottom = one_two_five(low)
                .into_iter()
                .filter(|t| *t <= min_positive * (1.0 + slack))
                .fold(10f64.powi(low), f64::max);
            let high = max.log10().floor() as i32;
            let top = one_two_five(high)
                .into_iter()
                .chain([10f64.powi(high + 1)])
                .find(|t| *t >= max * (1.0 - slack))
                .unwrap_or(10f64.powi(high + 1));
            let ticks = (low..=high + 1)
                .flat_map(|d| one_two_five(d).map(|value| (d, value)))
                .filter(|(_, v)| *v >= bottom * (1.0 - slack) && *v <= top * (1.0 + slack))
                .map(|(d, value)| {
                    let places = (-d).max(0) as usize;
                    (value, format!("{value:.places$}"))
                })
                .collect();
            return Axis {
                log: true,
                low: bottom,
                high: top,
                ticks,
            };
        }
        Axis::linear_span(0.0, max)
    }

    /// Linear from `low` to a round value at or above `high`, in round steps.
    pub(super) fn linear_span(low: f64, high: f64) -> Axis {
        let low = if low.is_finite() { low } else { 0.0 };
        let high = if high.is_finite() && high > low {
            high
        } else {
            low + 1.0
        };
        let step = nice_step(high - low, 6.0);
        let first = (low / step).floor() * step;
        let count = ((high - first) / step).ceil().max(1.0) as usize;
        let places = decimals(step);
        let ticks: Vec<(f64, String)> = (0..=count)
            .map(|i| {
                let value = first + i as f64 * step;
                (value, format!("{value:.places$}"))
            })
            .collect();
        Axis {
            log: false,
            low: first,
            high: first + count as f64 * step,
            ticks,
        }
    }

    /// A log axis of ms with its ticks as durations: `50us`, `1ms`, `200ms`, `2s`; a linear one
    /// as it is.
    pub(super) fn in_durations(mut self) -> Axis {
        if self.log {
            for tick in &mut self.ticks {
                tick.1 = duration_label(tick.0);
            }
        }
        self
    }

    /// Where plotters puts `v`: itself, or its log (clamped to the axis) on a log axis.
    pub(super) fn to_plot(&self, v: f64) -> f64 {
        if self.log {
            v.clamp(self.low, self.high).log10()
        } else {
            v
        }
    }

    /// plotters' coordinate: linear over the transformed range, gridlines at the ticks.
    pub(super) fn coord(&self) -> Ticked {
        Ticked {
            inner: (self.to_plot(self.low)..self.to_plot(self.high)).into(),
            keys: self.ticks.iter().map(|t| self.to_plot(t.0)).collect(),
        }
    }

    /// The label of the gridline at plotters' coordinate `v`.
    pub(super) fn label(&self, v: f64) -> String {
        self.ticks
            .iter()
            .min_by(|a, b| {
                let (da, db) = ((self.to_plot(a.0) - v).abs(), (self.to_plot(b.0) - v).abs());
                da.total_cmp(&db)
            })
            .map(|t| t.1.clone())
            .unwrap_or_default()
    }
}

/// An axis as plotters sees it: linear, with gridlines at our ticks only (plotters' own
/// combinator for that, `WithKeyPoints`, cannot take a label formatter).
pub(super) struct Ticked {
    inner: RangedCoordf64,
    keys: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Bold gridlines only: no light ones between them.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// The percentile axis: `1/(1−q)` from 1 (0%) to the largest of the curves (their 100% points,
/// at n), so the chart ends where the data does. Gridlines at the whole decades (90%, 99% …)
/// below that; the right edge is marked `max` unless it is a decade.
pub(super) struct PercentileAxis {
    pub(super) end: f64,
}

impl PercentileAxis {
    pub(super) fn fit(x_max: f64) -> PercentileAxis {
        let x_max = x_max.max(2.0);
        let decades = x_max.log10();
        // A 100% point just past a decade (1001 samples) is drawn at that decade's edge.
        let end = if decades >= 1.0 && decades - decades.floor() < 0.05 {
            10f64.powf(decades.floor())
        } else {
            x_max
        };
        PercentileAxis { end }
    }

    pub(super) fn ticks(&self) -> Vec<(f64, String)> {
        let whole = (self.end.log10() + 1e-9).floor() as i32;
        let mut ticks: Vec<(f64, String)> = (0..=whole)
            .map(|d| (10f64.powi(d), percentile_label(d)))
            .collect();
        if (10f64.powi(whole) - self.end).abs() > 1e-6 * self.end {
            // Too close to the last decade to label both: the edge's label wins.
            if self.end.log10() - f64::from(whole) < 0.12 {
                ticks.pop();
            }
            ticks.push((self.end, "max".to_string()));
        }
        ticks
    }
}

/// A tick of ms as a duration in its own unit: `0.5us`, `50us`, `1ms`, `2s`.
pub(super) fn duration_label(ms: f64) -> String {
    let (value, unit) = match ms {
        ms if ms >= 1000.0 => (ms / 1000.0, "s"),
        ms if ms >= 1.0 => (ms, "ms"),
        ms => (ms * 1000.0, "us"),
    };
    let digits = format!("{value:.3}");
    let digits = digits.trim_end_matches('0').trim_end_matches('.');
    format!("{digits}{unit}")
}

/// `99.9%` for the decade 10^k.
pub(super) fn percentile_label(decade: i32) -> String {
    match decade {
        0 => "0%".to_string(),
        1 => "90%".to_string(),
        2 => "99%".to_string(),
        d => format!("99.{}%", "9".repeat((d - 2).max(0) as usize)),
    }
}

/// A round step for about `target` intervals over a span: 1, 2, 2.5 or 5 × 10^k.
pub(super) fn nice_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// Decimals that show every multiple of `step` exactly (0.25 → 2, 5 → 0).
pub(super) fn decimals(step: f64) -> usize {
    (0..6)
        .find(|d| {
            let scaled = step * 10f64.powi(*d as i32);
            (scaled - scaled.round()).abs() < 1e-6
        })
        .unwrap_or(6)
}
