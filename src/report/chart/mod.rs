//! Charts as SVG documents, drawn by plotters' SVG backend from plain data: named series of
//! `(x, y)` points, or histograms. Three kinds, for `tsumo plot` and the run's page:
//!
//! - [`latency_by_percentile`]: HdrHistogram's plotter chart. x is `1/(1−q)` on a log axis, so
//!   90%, 99%, 99.9% … are equally spaced and the tail gets as much room as the median; y is
//!   latency in ms, linear from 0, or log when the curves span more than a decade.
//! - [`over_time`]: several named lines against seconds (latency p50/p99/max, rates, errors,
//!   send lateness, server CPU and memory, players by phase).
//! - [`capacity`]: a measure against offered load (a line, each trial marked by its outcome),
//!   with the objectives and the answer marked.
//!
//! Any axis in ms is a latency's: log when it spans more than a decade, its ticks durations
//! (`1ms`, `1s`). Each joined series is one `<polyline>` with one point per data point, each
//! marker a `<circle>` or a cross of `<line>`s (axes and ticks are drawn transparent, the frame
//! as a `<rect>`, the legend's swatches as `<rect>`s or markers), so a test or a browser can
//! find a chart's data. The layout is in `axis` (the axes), `draw` (the drawing and the
//! legend) and `palette` (the colours). Text is `<text>` with a generic family: plotters' naive font
//! metrics lay it out, no font file is read at build or run time.

mod axis;
mod draw;
mod palette;
#[cfg(test)]
mod tests;

use hdrhistogram::Histogram;
use plotters::prelude::*;

use axis::{Axis, PercentileAxis};
use draw::draw;

use crate::stats::hdr;

/// The document's size in pixels.
pub const WIDTH: u32 = 900;
pub const HEIGHT: u32 = 500;

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

/// How a series' points are marked (besides its line, if it has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A filled disc: a step that held.
    Filled,
    /// A ring: a step judged neither way (limited by tsumo or the machine, stopped).
    Hollow,
    /// A cross: a step that broke.
    Cross,
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
    /// The line's width in pixels (2); a wide one under a narrow one keeps both in sight.
    pub width: u32,
    /// Each point marked with a shape.
    pub marker: Option<Shape>,
    /// The points joined by a line (a series of markers only is not).
    pub joined: bool,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            colour: None,
            shade: 0,
            width: 2,
            marker: None,
            joined: true,
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

    pub fn wide(mut self, width: u32) -> Series {
        self.width = width;
        self
    }

    /// Only markers, no line: points that are not a curve (each trial of a step).
    pub fn markers(mut self, shape: Shape) -> Series {
        self.marker = Some(shape);
        self.joined = false;
        self
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
    let y_axis = Axis::fit(points().map(|p| p.1), true).in_durations();
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

/// Several named lines against time in seconds, y linear from 0 (log for a latency in ms that
/// spans more than a decade). Each point is where its interval ends: a line of one point is
/// drawn across its interval (a run, or a phase, seen in one interval), its end circled.
pub fn over_time(titles: &Titles, y_label: &str, series: &[Series]) -> Result<String, ChartError> {
    over_time_in_stages(titles, y_label, series, &[])
}

/// [`over_time`] with the starts of a run's stages drawn upright across it, each labelled.
pub fn over_time_in_stages(
    titles: &Titles,
    y_label: &str,
    series: &[Series],
    bounds: &[Bound],
) -> Result<String, ChartError> {
    let interval = interval_of(series);
    let series: Vec<Series> = series
        .iter()
        .map(|s| match s.points.as_slice() {
            [(end, y)] => {
                let mut across = s.clone();
                across.points = vec![((end - interval).max(0.0), *y), (*end, *y)];
                across.marker = Some(Shape::Filled);
                across
            }
            _ => s.clone(),
        })
        .collect();
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    // With stages, from the first one's start: the first interval's point is at its end.
    let first_stage = bounds.first().map_or(f64::INFINITY, |b| b.x);
    let x = Axis::linear_span(
        xs.clone().fold(first_stage, f64::min),
        xs.fold(f64::NEG_INFINITY, f64::max),
    );
    let (y, y_label) = y_axis(
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)),
        y_label,
    );
    let marks = Marks {
        bounds: bounds.to_vec(),
        ..Marks::default()
    };
    draw(titles, (&x, "Time (s)"), (&y, &y_label), &series, &marks)
}

/// The length of one interval: the shortest step between two points of a line; a chart of
/// single points began at 0, so its interval is its first point's time.
fn interval_of(series: &[Series]) -> f64 {
    let step = series
        .iter()
        .flat_map(|s| s.points.windows(2).map(|w| w[1].0 - w[0].0))
        .filter(|d| *d > 0.0)
        .fold(f64::INFINITY, f64::min);
    if step.is_finite() {
        return step;
    }
    series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(0.0, f64::max)
}

/// The y axis of `values` and its name: linear from 0, except that an axis named in ms
/// (`Latency (ms)`, `p99 (ms)`) is a latency, log when it spans more than a decade, its ticks
/// then durations (`1ms`, `10ms`, `1s`) and its name saying the scale.
fn y_axis(values: impl Iterator<Item = f64> + Clone, label: &str) -> (Axis, String) {
    if !label.contains("(ms") {
        return (Axis::fit(values, false), label.to_string());
    }
    let axis = Axis::fit(values, true).in_durations();
    let label = match axis.log {
        true => label.replacen("(ms", "(ms, log scale", 1),
        false => label.to_string(),
    };
    (axis, label)
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

/// A capacity search: `measured` (a measure against offered load: a line, and each trial
/// marked by its outcome), the objectives across, the answer marked. x linear from 0; y linear
/// from 0, or log for a latency in ms that spans more than a decade (a 50 ms objective beside a
/// 6 s broken step).
pub fn capacity(
    titles: &Titles,
    axes: (&str, &str),
    measured: &[Series],
    objectives: &[Objective],
    answer: Option<&Answer>,
) -> Result<String, ChartError> {
    capacity_beside(titles, axes, measured, objectives, answer, &[])
}

/// [`capacity`], drawn beside other charts: its axes hold `beside` too (the points of the
/// charts beside it: another search's curve), so that side-by-side charts share one scale.
pub fn capacity_beside(
    titles: &Titles,
    (x_label, y_label): (&str, &str),
    measured: &[Series],
    objectives: &[Objective],
    answer: Option<&Answer>,
    beside: &[(f64, f64)],
) -> Result<String, ChartError> {
    let points = || {
        measured
            .iter()
            .flat_map(|s| s.points.iter())
            .chain(beside.iter())
    };
    let x_max = points()
        .map(|p| p.0)
        .chain(answer.map(|a| a.x))
        .fold(0.0, f64::max);
    let x = Axis::fit(std::iter::once(x_max), false);
    let (y, y_label) = y_axis(
        points().map(|p| p.1).chain(objectives.iter().map(|o| o.y)),
        y_label,
    );
    let marks = Marks {
        objectives: objectives.to_vec(),
        answer: answer.cloned(),
        bounds: Vec::new(),
    };
    draw(titles, (&x, x_label), (&y, &y_label), measured, &marks)
}

/// Where a stage starts on a chart over time: an upright line at `x` seconds, labelled (`stage 2`).
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    pub x: f64,
    pub label: String,
}

/// What a chart draws besides its series: a capacity chart's objectives and answer, a chart
/// over time's stage starts.
#[derive(Debug, Default)]
struct Marks {
    objectives: Vec<Objective>,
    answer: Option<Answer>,
    bounds: Vec<Bound>,
}
