//! Charts as SVG documents, drawn by plotters' SVG backend from plain data: named series of
//! `(x, y)` points, or histograms. Three kinds, for `tsumo plot` and the run's page:
//!
//! - [`latency_by_percentile`]: HdrHistogram's plotter chart. x is `1/(1−q)` on a log axis, so
//!   90%, 99%, 99.9% … are equally spaced and the tail gets as much room as the median; y is
//!   latency in ms, linear from 0, or log when the curves span more than a decade.
//! - [`over_time`]: several named lines against seconds (latency p50/p99/max, rates, errors,
//!   send lateness, server CPU and memory, players by phase).
//! - [`capacity`]: a measure against offered load, with the objectives and the answer marked.
//!
//! Each series is one `<polyline>` with one point per data point (axes and ticks are drawn
//! transparent, the frame as a `<rect>`, the legend's swatches as `<rect>`s), so a test or a
//! browser can find a chart's data. Text is `<text>` with a generic family: plotters' naive font
//! metrics lay it out, no font file is read at build or run time.

use hdrhistogram::Histogram;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::stats::hdr;

/// The document's size in pixels.
pub const WIDTH: u32 = 900;
pub const HEIGHT: u32 = 500;

/// Distinct colours (Tableau 10), one per series unless a series names its own.
const COLOURS: [RGBColor; 10] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0xbc, 0xbd, 0x22),
];
const GRID: RGBColor = RGBColor(0xe0, 0xe0, 0xe0);
const FRAME: RGBColor = RGBColor(0x66, 0x66, 0x66);
const SUBTITLE: RGBColor = RGBColor(0x44, 0x44, 0x44);

/// plotters writes `font-size` as the size given over 1.24; these are the pixel sizes shown
/// (9–12, 14 and 16 divide back exactly: no `font-size="15.000000000000002"`).
fn font(pixels: f64) -> FontDesc<'static> {
    ("sans-serif", pixels * 1.24).into_font()
}

/// A chart that could not be drawn (plotters' error, as text).
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart: {0}")]
pub struct ChartError(String);

fn failed(e: impl std::fmt::Display) -> ChartError {
    ChartError(e.to_string())
}

/// One line of a chart: its name in the legend and its points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Index into the palette; `None` is the series' position in the chart.
    pub colour: Option<usize>,
    /// 0 is the colour itself; each step lighter (a label's later rounds, say).
    pub shade: usize,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            colour: None,
            shade: 0,
        }
    }

    /// A histogram's percentile curve (values in µs, drawn in ms); see [`percentile_points`].
    pub fn from_histogram(name: impl Into<String>, histogram: &Histogram<u64>) -> Series {
        Series::new(name, percentile_points(histogram))
    }

    pub fn coloured(mut self, colour: usize, shade: usize) -> Series {
        self.colour = Some(colour);
        self.shade = shade;
        self
    }

    fn style(&self, position: usize) -> RGBColor {
        let RGBColor(r, g, b) = COLOURS[self.colour.unwrap_or(position) % COLOURS.len()];
        // Each shade a step towards white, never white itself.
        let towards_white = (self.shade as f64 * 0.4).min(0.8);
        let mix = |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * towards_white).round() as u8;
        RGBColor(mix(r), mix(g), mix(b))
    }
}

/// Points `(1/(1−q), ms)` of a histogram's percentile spectrum (µs values), the same rows as
/// wrk2's spectrum, so the curve is exact. The 100% row, whose `1/(1−q)` is infinite, is
/// placed at `n` (the max of n samples is their 1−1/n quantile). Empty for an empty histogram.
pub fn percentile_points(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let n = h.len() as f64;
    let mut points: Vec<(f64, f64)> = Vec::new();
    for row in hdr::spectrum(h, 5) {
        let ms = row.value as f64 / 1000.0;
        let x = if row.percentile < 100.0 {
            1.0 / (1.0 - row.percentile / 100.0)
        } else {
            n.max(points.last().map_or(1.0, |p| p.0))
        };
        points.push((x.max(1.0), ms));
    }
    points
}

/// The title over a chart and the smaller line under it (empty for none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Titles {
    pub title: String,
    pub subtitle: String,
}

/// Latency by percentile, HdrHistogram's way: one line per series of [`percentile_points`].
/// `y_what` names the measure ("Latency"); the y axis says ms, the scale, and lower is better.
pub fn latency_by_percentile(
    titles: &Titles,
    y_what: &str,
    curves: &[Series],
) -> Result<String, ChartError> {
    let points = || curves.iter().flat_map(|s| s.points.iter());
    let x_axis = PercentileAxis::fit(points().map(|p| p.0).fold(1.0, f64::max));
    let y_axis = Axis::fit(points().map(|p| p.1), true);
    let y_label = format!(
        "{y_what} (ms{}) — lower is better",
        if y_axis.log { ", log scale" } else { "" }
    );
    let x = Axis {
        log: true,
        low: 1.0,
        high: x_axis.end,
        ticks: x_axis.ticks(),
    };
    draw(
        titles,
        (&x, "Percentile"),
        (&y_axis, &y_label),
        curves,
        &Marks::default(),
    )
}

/// Several named lines against time in seconds, y linear from 0; every point circled when a
/// line has only one.
pub fn over_time(titles: &Titles, y_label: &str, series: &[Series]) -> Result<String, ChartError> {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let x = Axis::linear_span(
        xs.clone().fold(f64::INFINITY, f64::min),
        xs.fold(f64::NEG_INFINITY, f64::max),
    );
    let y = Axis::fit(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        false,
    );
    // A line of one point draws nothing: its points are circled (a step seen in one interval).
    let marks = Marks {
        circled: series.iter().any(|s| s.points.len() == 1),
        ..Marks::default()
    };
    draw(titles, (&x, "Time (s)"), (&y, y_label), series, &marks)
}

/// A limit drawn across a capacity chart, named in the legend (`p99 ≤ 10 ms`).
#[derive(Debug, Clone, PartialEq)]
pub struct Objective {
    pub name: String,
    pub y: f64,
}

/// The capacity found: a vertical line at offered load `x`, named in the legend.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub name: String,
    pub x: f64,
}

/// A capacity search: `measured` (a measure against offered load, each point circled), the
/// objectives across, the answer marked. Both axes linear from 0.
pub fn capacity(
    titles: &Titles,
    (x_label, y_label): (&str, &str),
    measured: &Series,
    objectives: &[Objective],
    answer: Option<&Answer>,
) -> Result<String, ChartError> {
    let x_max = measured
        .points
        .iter()
        .map(|p| p.0)
        .chain(answer.map(|a| a.x))
        .fold(0.0, f64::max);
    let x = Axis::fit(std::iter::once(x_max), false);
    let y = Axis::fit(
        measured
            .points
            .iter()
            .map(|p| p.1)
            .chain(objectives.iter().map(|o| o.y)),
        false,
    );
    let marks = Marks {
        circled: true,
        objectives: objectives.to_vec(),
        answer: answer.cloned(),
    };
    draw(
        titles,
        (&x, x_label),
        (&y, y_label),
        std::slice::from_ref(measured),
        &marks,
    )
}

/// What a capacity chart draws besides its series.
#[derive(Debug, Default)]
struct Marks {
    circled: bool,
    objectives: Vec<Objective>,
    answer: Option<Answer>,
}

/// One axis: its range, linear or logarithmic, and its gridlines with their labels.
#[derive(Debug, Clone, PartialEq)]
struct Axis {
    log: bool,
    low: f64,
    high: f64,
    ticks: Vec<(f64, String)>,
}

/// 1, 2 and 5 × 10^k: a log axis's ticks.
fn one_two_five(decade: i32) -> [f64; 3] {
    let base = 10f64.powi(decade);
    [base, 2.0 * base, 5.0 * base]
}

impl Axis {
    /// From 0 to a round value at or above the largest; or, when `log_if_wide` and the values
    /// span more than a decade (a linear axis would flatten every low value to the floor), log
    /// from the 1-2-5 step at or below the lowest to the one at or above the highest: no band
    /// of the chart is left without data.
    fn fit(values: impl Iterator<Item = f64> + Clone, log_if_wide: bool) -> Axis {
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
    fn linear_span(low: f64, high: f64) -> Axis {
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

    /// Where plotters puts `v`: itself, or its log (clamped to the axis) on a log axis.
    fn to_plot(&self, v: f64) -> f64 {
        if self.log {
            v.clamp(self.low, self.high).log10()
        } else {
            v
        }
    }

    /// plotters' coordinate: linear over the transformed range, gridlines at the ticks.
    fn coord(&self) -> Ticked {
        Ticked {
            inner: (self.to_plot(self.low)..self.to_plot(self.high)).into(),
            keys: self.ticks.iter().map(|t| self.to_plot(t.0)).collect(),
        }
    }

    /// The label of the gridline at plotters' coordinate `v`.
    fn label(&self, v: f64) -> String {
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
struct Ticked {
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
struct PercentileAxis {
    end: f64,
}

impl PercentileAxis {
    fn fit(x_max: f64) -> PercentileAxis {
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

    fn ticks(&self) -> Vec<(f64, String)> {
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

/// `99.9%` for the decade 10^k.
fn percentile_label(decade: i32) -> String {
    match decade {
        0 => "0%".to_string(),
        1 => "90%".to_string(),
        2 => "99%".to_string(),
        d => format!("99.{}%", "9".repeat((d - 2).max(0) as usize)),
    }
}

/// A round step for about `target` intervals over a span: 1, 2, 2.5 or 5 × 10^k.
fn nice_step(span: f64, target: f64) -> f64 {
    let raw = (span / target).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// Decimals that show every multiple of `step` exactly (0.25 → 2, 5 → 0).
fn decimals(step: f64) -> usize {
    (0..6)
        .find(|d| {
            let scaled = step * 10f64.powi(*d as i32);
            (scaled - scaled.round()).abs() < 1e-6
        })
        .unwrap_or(6)
}

/// Every chart: titles, frame, gridlines with labels, axis names, one polyline per series
/// with points, the capacity marks, and the legend top left (curves rise to the right).
fn draw(
    titles: &Titles,
    (x, x_label): (&Axis, &str),
    (y, y_label): (&Axis, &str),
    series: &[Series],
    marks: &Marks,
) -> Result<String, ChartError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(failed)?;
        let mut area = root.clone();
        if !titles.title.is_empty() {
            area = area
                .titled(&titles.title, font(16.0).style(FontStyle::Bold))
                .map_err(failed)?;
        }
        if !titles.subtitle.is_empty() {
            area = area
                .titled(&titles.subtitle, font(11.0).color(&SUBTITLE))
                .map_err(failed)?;
        }
        let mut chart = ChartBuilder::on(&area)
            .margin_left(10)
            .margin_right(25)
            .margin_top(4)
            .margin_bottom(8)
            .x_label_area_size(42)
            .y_label_area_size(62)
            .build_cartesian_2d(x.coord(), y.coord())
            .map_err(failed)?;
        let x_labels = |v: &f64| x.label(*v);
        let y_labels = |v: &f64| y.label(*v);
        chart
            .configure_mesh()
            .bold_line_style(GRID)
            .max_light_lines(0)
            // Axes and tick marks would be polylines among the data's (transparent ones are not
            // written): the frame is a rect, and the ticks only push the labels off it.
            .axis_style(TRANSPARENT)
            .set_all_tick_mark_size(4)
            .label_style(font(12.0))
            .axis_desc_style(font(14.0))
            .x_label_formatter(&x_labels)
            .y_label_formatter(&y_labels)
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()
            .map_err(failed)?;
        let (x0, x1) = (x.to_plot(x.low), x.to_plot(x.high));
        let (y0, y1) = (y.to_plot(y.low), y.to_plot(y.high));
        chart
            .plotting_area()
            .draw(&Rectangle::new([(x0, y1), (x1, y0)], FRAME))
            .map_err(failed)?;

        for (position, s) in series.iter().enumerate() {
            let colour = s.style(position);
            let line = colour.stroke_width(2);
            let points = s.points.iter().map(|p| (x.to_plot(p.0), y.to_plot(p.1)));
            let drawn = if s.points.is_empty() {
                // Nothing to draw; still named in the legend.
                chart.draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())
            } else if marks.circled {
                chart.draw_series(LineSeries::new(points, line).point_size(3))
            } else {
                chart.draw_series(LineSeries::new(points, line))
            };
            drawn
                .map_err(failed)?
                .label(&s.name)
                .legend(move |(lx, ly)| {
                    Rectangle::new([(lx, ly - 2), (lx + 22, ly + 2)], colour.filled())
                });
        }
        for (i, objective) in marks.objectives.iter().enumerate() {
            let colour = COLOURS[(series.len() + i) % COLOURS.len()];
            let at = y.to_plot(objective.y);
            chart
                .draw_series(LineSeries::new(
                    [(x0, at), (x1, at)],
                    colour.stroke_width(1),
                ))
                .map_err(failed)?
                .label(&objective.name)
                .legend(move |(lx, ly)| {
                    Rectangle::new([(lx, ly - 1), (lx + 22, ly + 1)], colour.filled())
                });
        }
        if let Some(answer) = &marks.answer {
            let at = x.to_plot(answer.x);
            chart
                .draw_series(LineSeries::new([(at, y0), (at, y1)], BLACK.stroke_width(2)))
                .map_err(failed)?
                .label(&answer.name)
                .legend(|(lx, ly)| {
                    Rectangle::new([(lx, ly - 2), (lx + 22, ly + 2)], BLACK.filled())
                });
        }
        if !series.is_empty() || marks.answer.is_some() || !marks.objectives.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .margin(12)
                .label_font(font(12.0))
                .background_style(WHITE.mix(0.9))
                .border_style(RGBColor(0xbb, 0xbb, 0xbb))
                .draw()
                .map_err(failed)?;
        }
        root.present().map_err(failed)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    /// The parsed document and its `<polyline>`s' point counts, in order.
    fn polylines(svg: &str) -> Vec<usize> {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
        doc.descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .map(|n| {
                n.attribute("points")
                    .unwrap_or("")
                    .split_whitespace()
                    .count()
            })
            .collect()
    }

    /// Every `<text>`'s content, trimmed.
    fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect()
    }

    fn titles(title: &str) -> Titles {
        Titles {
            title: title.to_string(),
            subtitle: "-R1000 -c10 -d6s".to_string(),
        }
    }

    #[test]
    fn axis_ticks() {
        let labels: Vec<String> = (0..=5).map(percentile_label).collect();
        assert_eq!(labels, ["0%", "90%", "99%", "99.9%", "99.99%", "99.999%"]);
        assert_eq!(nice_step(1.76, 6.0), 0.5);
        assert_eq!(nice_step(12.0, 6.0), 2.0);
        assert_eq!(nice_step(0.9, 6.0), 0.2);
        assert_eq!(nice_step(14.0, 6.0), 2.5);
        assert_eq!(decimals(0.25), 2);
        assert_eq!(decimals(5.0), 0);
        let axis = PercentileAxis::fit(1000.0);
        let labels: Vec<String> = axis.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0%", "90%", "99%", "99.9%"]);
        let short = PercentileAxis::fit(5.0);
        let labels: Vec<String> = short.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0%", "max"]);
    }

    #[test]
    fn latency_axis_is_logarithmic_when_the_values_span_more_than_a_decade() {
        let linear = Axis::fit([0.0, 1.2, 5.0].into_iter(), true);
        assert!(!linear.log);
        assert_eq!(linear.ticks.first().map(|t| t.1.as_str()), Some("0"));
        assert_eq!((linear.low, linear.high), (0.0, 5.0));
        // From the 1-2-5 step at or below the lowest value to the one at or above the highest.
        let log = Axis::fit([0.0, 0.05, 0.4, 35.0].into_iter(), true);
        assert!(log.log);
        let labels: Vec<&str> = log.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            labels,
            ["0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50"]
        );
        let exact = Axis::fit([2.0, 100.0].into_iter(), true);
        assert_eq!((exact.low, exact.high), (2.0, 100.0));
        // Not asked for: linear however wide.
        assert!(!Axis::fit([0.05, 35.0].into_iter(), false).log);
        // A time axis starts at its first second, not 0.
        let time = Axis::linear_span(3.0, 9.0);
        assert_eq!((time.low, time.high), (3.0, 9.0));
    }

    #[test]
    fn percentile_points_follow_the_spectrum_and_end_at_n() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
        }
        let points = percentile_points(&h);
        assert_eq!(points[0], (1.0, 0.01));
        assert!(points
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        let (x, ms) = points[points.len() - 1];
        assert_eq!(ms, 10.0, "the max, not the top bucket's highest value");
        assert!(
            x >= 1000.0 && x == points[points.len() - 2].0.max(1000.0),
            "{x}"
        );
        assert!(percentile_points(&new_histogram()).is_empty());
    }

    #[test]
    fn latency_by_percentile_draws_one_line_per_curve_with_its_points() {
        let (mut corrected, mut uncorrected) = (new_histogram(), new_histogram());
        for v in 1..=2000u64 {
            corrected.record(v * 50).unwrap();
            uncorrected.record(v * 5).unwrap();
        }
        let curves = [
            Series::from_histogram("corrected", &corrected),
            Series::from_histogram("uncorrected", &uncorrected),
            Series::from_histogram("nothing (no samples)", &new_histogram()),
        ];
        let svg =
            latency_by_percentile(&titles("Latency by percentile"), "Latency", &curves).unwrap();
        assert!(svg.starts_with("<svg "), "{svg}");
        assert_eq!(
            polylines(&svg),
            [curves[0].points.len(), curves[1].points.len()],
            "no line for the empty curve; none for axes or legend"
        );
        let texts = texts(&svg);
        for label in [
            "Latency by percentile",
            "-R1000 -c10 -d6s",
            "0%",
            "90%",
            "99%",
            "99.9%",
            "Percentile",
            "Latency (ms, log scale) — lower is better",
            "corrected",
            "uncorrected",
            "nothing (no samples)",
        ] {
            assert!(texts.iter().any(|t| t == label), "{label}: {texts:?}");
        }
        // No font file: the text names a generic family, nothing else; sizes are round.
        assert!(!svg.contains("@font-face") && !svg.contains("<image"));
        let doc = roxmltree::Document::parse(&svg).unwrap();
        for text in doc.descendants().filter(|n| n.has_tag_name("text")) {
            assert_eq!(text.attribute("font-family"), Some("sans-serif"));
            let size = text.attribute("font-size").unwrap_or("");
            assert!(["11", "12", "14", "16"].contains(&size), "{size}");
        }
    }

    #[test]
    fn over_time_draws_each_named_series_against_seconds() {
        let seconds =
            |f: fn(f64) -> f64| (1..=6).map(|s| (f64::from(s), f(f64::from(s)))).collect();
        let series = [
            Series::new("p50", seconds(|s| 0.4 + s / 100.0)),
            Series::new("p99", seconds(|s| 1.5 + s / 10.0)),
            Series::new("max", seconds(|s| if s == 4.0 { 40.0 } else { 3.0 })),
        ];
        let svg = over_time(&titles("Latency over time"), "Latency (ms)", &series).unwrap();
        assert_eq!(polylines(&svg), [6, 6, 6]);
        let texts = texts(&svg);
        for label in [
            "Latency over time",
            "Time (s)",
            "Latency (ms)",
            "p50",
            "p99",
            "max",
            "0",
            "40",
        ] {
            assert!(texts.iter().any(|t| t == label), "{label}: {texts:?}");
        }
        // Series of different lengths (a phase that began late) and an empty chart both draw.
        let uneven = [
            Series::new("login", vec![(0.0, 10.0), (1.0, 0.0)]),
            Series::new("games", vec![(1.0, 4.0), (2.0, 8.0), (3.0, 8.0)]),
        ];
        let svg = over_time(&titles("Players by phase"), "Players", &uneven).unwrap();
        assert_eq!(polylines(&svg), [2, 3]);
        let svg = over_time(&titles("Nothing yet"), "Players", &[]).unwrap();
        assert!(polylines(&svg).is_empty());
    }

    #[test]
    fn capacity_marks_the_objectives_and_the_answer() {
        let measured = Series::new(
            "p99",
            vec![(1000.0, 1.1), (2000.0, 1.4), (4000.0, 3.0), (8000.0, 25.0)],
        );
        let objectives = [Objective {
            name: "objective: p99 ≤ 10 ms".to_string(),
            y: 10.0,
        }];
        let answer = Answer {
            name: "capacity: 4000 req/s".to_string(),
            x: 4000.0,
        };
        let svg = capacity(
            &titles("Capacity"),
            ("Offered load (req/s)", "p99 (ms)"),
            &measured,
            &objectives,
            Some(&answer),
        )
        .unwrap();
        // The measure, then one line per objective, then the answer's.
        assert_eq!(polylines(&svg), [4, 2, 2]);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let circles = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .count();
        assert_eq!(circles, 4, "each measured point circled");
        let texts = texts(&svg);
        for label in [
            "Capacity",
            "Offered load (req/s)",
            "p99 (ms)",
            "p99",
            "objective: p99 ≤ 10 ms",
            "capacity: 4000 req/s",
        ] {
            assert!(texts.iter().any(|t| t == label), "{label}: {texts:?}");
        }
    }
}
