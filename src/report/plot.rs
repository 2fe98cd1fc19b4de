//! `tsumo plot`: saved runs' latency by percentile, overlaid in one SVG.
//!
//! The chart is HdrHistogram's usual one: x is `1/(1−p)` on a log axis, so 90%, 99%, 99.9% …
//! are equally spaced and the tail — where a proxy or a stall shows — gets as much room as the
//! median; y is latency in ms on a linear axis. Points come from the same percentile iterator as
//! wrk2's spectrum, read from the whole saved histogram, so the curve is exact, not a handful of
//! summary percentiles joined by lines. Hand-written SVG: a few dozen elements do not need a
//! dependency.
//!
//! HTTP runs plot their corrected latency (`--metric uncorrected` or `send_lateness` for the
//! others). Mahjong sessions plot `reply_lateness` by default — the one histogram every session
//! fills — and any other histogram of the session by name (`draw_overshoot`, a phase such as
//! `login`, a step kind such as `dapai`).

use std::fmt::Write as _;
use std::path::PathBuf;

use hdrhistogram::Histogram;

use super::compare::{self, LoadedRun};
use super::schema::decode_histogram;
use crate::error::Error;
use crate::stats::hdr;

/// Options of `tsumo plot FILE… -o OUT.svg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotOptions {
    pub files: Vec<PathBuf>,
    /// Where the SVG goes; `-` is stdout.
    pub output: PathBuf,
    /// Which histogram to plot; `None` is the mode's default.
    pub metric: Option<String>,
}

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 500.0;
const LEFT: f64 = 75.0;
const RIGHT: f64 = 25.0;
const TOP: f64 = 45.0;
const BOTTOM: f64 = 55.0;

/// Distinct colours (Tableau 10), one per label.
const COLOURS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
    "#7f7f7f", "#bcbd22",
];

/// Dash patterns for the second, third … run of one label.
const DASHES: [&str; 4] = ["", "6 3", "2 3", "8 3 2 3"];

/// The histogram of `run` that the plot shows, and its name in the title.
fn histogram_of(run: &LoadedRun, metric: Option<&str>) -> Result<(Histogram<u64>, String), Error> {
    let result = run.result();
    let Some(named) = result.plotted(metric) else {
        return Err(Error::Usage(format!(
            "{}: no histogram '{}' to plot (choose one of: {})",
            run.source,
            metric.unwrap_or_default(),
            result.plottable().join(", ")
        )));
    };
    let h = decode_histogram(named.encoded).map_err(|e| Error::File {
        path: run.source.clone(),
        reason: e.to_string(),
    })?;
    Ok((h, named.title))
}

/// Points `(1/(1−p), ms)` of a histogram's percentile spectrum. The 100% row, whose `1/(1−p)` is
/// infinite, is placed at `n` (the max of n samples is their 1−1/n quantile).
fn curve(h: &Histogram<u64>) -> Vec<(f64, f64)> {
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

/// The latency axis: linear from 0, or logarithmic when the curves span more than a decade
/// (a linear axis would flatten every p50 to the floor and hide the difference there). A log
/// axis runs from the 1-2-5 step at or below the lowest value to the one at or above the
/// highest, not to whole decades: no band of the chart is left without data.
struct YAxis {
    log: bool,
    /// Linear: 0..top in steps of `step`. Log: bottom..top.
    top: f64,
    step: f64,
    bottom: f64,
}

/// 1, 2 and 5 × 10^k: the log axis's ticks.
fn one_two_five(decade: i32) -> [f64; 3] {
    let base = 10f64.powi(decade);
    [base, 2.0 * base, 5.0 * base]
}

impl YAxis {
    fn fit(values: impl Iterator<Item = f64> + Clone) -> YAxis {
        let max = values.clone().fold(0.0, f64::max);
        let min_positive = values.filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
        if max > 0.0 && min_positive.is_finite() && max / min_positive > 10.0 {
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
            return YAxis {
                log: true,
                top,
                step: 0.0,
                bottom,
            };
        }
        let step = nice_step(if max > 0.0 { max } else { 1.0 }, 6.0);
        YAxis {
            log: false,
            top: (max / step).ceil().max(1.0) * step,
            step,
            bottom: 0.0,
        }
    }

    /// Where `y` sits, from 0 (bottom) to 1 (top).
    fn fraction(&self, y: f64) -> f64 {
        if self.log {
            let bottom = self.bottom.log10();
            (y.max(self.bottom).log10() - bottom) / (self.top.log10() - bottom)
        } else {
            y / self.top
        }
    }

    /// The gridlines: values and their labels.
    fn ticks(&self) -> Vec<(f64, String)> {
        if self.log {
            let slack = 1e-9;
            let low = self.bottom.log10().floor() as i32;
            let high = self.top.log10().ceil() as i32;
            return (low..=high)
                .flat_map(|d| one_two_five(d).map(|value| (d, value)))
                .filter(|(_, v)| {
                    *v >= self.bottom * (1.0 - slack) && *v <= self.top * (1.0 + slack)
                })
                .map(|(d, value)| {
                    let places = (-d).max(0) as usize;
                    (value, format!("{value:.places$}"))
                })
                .collect();
        }
        let places = decimals(self.step);
        let count = (self.top / self.step).round() as usize;
        (0..=count)
            .map(|i| {
                let value = i as f64 * self.step;
                (value, format!("{value:.places$}"))
            })
            .collect()
    }
}

/// The x axis: `1/(1−p)` from 1 (0%) to the largest of the curves (their 100% points, at n),
/// so the chart ends where the data does. Gridlines at the whole decades (90%, 99% …) below
/// that; the right edge is marked `max` unless it is a decade.
struct XAxis {
    end: f64,
}

impl XAxis {
    fn fit(x_max: f64) -> XAxis {
        let x_max = x_max.max(2.0);
        let decades = x_max.log10();
        // A 100% point just past a decade (1001 samples) is drawn at that decade's edge.
        let end = if decades >= 1.0 && decades - decades.floor() < 0.05 {
            10f64.powf(decades.floor())
        } else {
            x_max
        };
        XAxis { end }
    }

    /// Where `x` sits, from 0 (left) to 1 (right).
    fn fraction(&self, x: f64) -> f64 {
        x.clamp(1.0, self.end).log10() / self.end.log10()
    }

    /// The gridlines: x and its label; the edge's own label when it is not a decade.
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

/// What was run, under the title: the load (rate, connections, duration or players), once
/// when every run had the same, else per label. The targets are left to the legend: a URL on
/// 127.0.0.1 is mostly a port number.
fn subtitle(runs: &[LoadedRun]) -> String {
    let mut loads: Vec<(&str, String)> = Vec::new();
    for run in runs {
        if loads.iter().any(|(label, _)| *label == run.label) {
            continue;
        }
        loads.push((&run.label, run.result().load()));
    }
    let first = loads
        .first()
        .map(|(_, load)| load.clone())
        .unwrap_or_default();
    if loads.iter().all(|(_, load)| *load == first) {
        if loads.len() > 1 {
            format!("{first}, every run")
        } else {
            first
        }
    } else {
        loads
            .iter()
            .map(|(label, load)| format!("{label}: {load}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A round step for about `target` intervals over `0..max`: 1, 2, 2.5 or 5 × 10^k.
fn nice_step(max: f64, target: f64) -> f64 {
    let raw = (max / target).max(f64::MIN_POSITIVE);
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

/// `99.9%` for the decade 10^k.
fn percentile_label(decade: i32) -> String {
    match decade {
        0 => "0%".to_string(),
        1 => "90%".to_string(),
        2 => "99%".to_string(),
        d => format!("99.{}%", "9".repeat((d - 2).max(0) as usize)),
    }
}

/// Text for SVG: `&`, `<`, `>` and quotes escaped.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The SVG document of the runs (one mode), one polyline per run.
pub fn render_svg(runs: &[LoadedRun], metric: Option<&str>) -> Result<String, Error> {
    compare::check_same_mode(runs, "plot")?;
    let mut curves = Vec::new();
    let mut title = String::new();
    for run in runs {
        let (h, t) = histogram_of(run, metric)?;
        title = t;
        curves.push(if h.is_empty() { Vec::new() } else { curve(&h) });
    }
    let x_axis = XAxis::fit(curves.iter().flatten().map(|p| p.0).fold(1.0, f64::max));
    let y_axis = YAxis::fit(curves.iter().flatten().map(|p| p.1));
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let px = |x: f64| LEFT + x_axis.fraction(x) * plot_w;
    let py = |y: f64| TOP + plot_h - y_axis.fraction(y) * plot_h;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        svg,
        r#"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
        WIDTH / 2.0,
        escape(&title)
    );
    let _ = writeln!(
        svg,
        r##"<text x="{}" y="38" text-anchor="middle" font-size="11" fill="#444">{}</text>"##,
        WIDTH / 2.0,
        escape(&subtitle(runs))
    );
    // Grid and ticks.
    let _ = writeln!(svg, r##"<g stroke="#e0e0e0" stroke-width="1">"##);
    let x_ticks = x_axis.ticks();
    for (value, _) in &x_ticks {
        let x = px(*value);
        let _ = writeln!(
            svg,
            r#"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}"/>"#,
            TOP + plot_h
        );
    }
    let y_ticks = y_axis.ticks();
    for (value, _) in &y_ticks {
        let y = py(*value);
        let _ = writeln!(
            svg,
            r#"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/>"#,
            LEFT + plot_w
        );
    }
    let _ = writeln!(svg, "</g>");
    let _ = writeln!(svg, r#"<g fill="black">"#);
    for (value, label) in &x_ticks {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
            px(*value),
            TOP + plot_h + 18.0
        );
    }
    for (value, label) in &y_ticks {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"#,
            LEFT - 6.0,
            py(*value) + 4.0
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">Percentile</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 12.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="18" y="{:.1}" text-anchor="middle" font-size="13" transform="rotate(-90 18 {:.1})">Latency (ms{}) — lower is better</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        if y_axis.log { ", log scale" } else { "" }
    );
    let _ = writeln!(svg, "</g>");
    let _ = writeln!(
        svg,
        r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#666"/>"##
    );

    // One colour per label; a label's later rounds dashed.
    let mut labels: Vec<&str> = Vec::new();
    let style: Vec<(&str, &str, usize)> = runs
        .iter()
        .map(|run| {
            let index = match labels.iter().position(|l| *l == run.label) {
                Some(i) => i,
                None => {
                    labels.push(&run.label);
                    labels.len() - 1
                }
            };
            let round = runs[..]
                .iter()
                .take_while(|r| !std::ptr::eq(*r, run))
                .filter(|r| r.label == run.label)
                .count();
            (
                COLOURS[index % COLOURS.len()],
                DASHES[round % DASHES.len()],
                round,
            )
        })
        .collect();
    for (points, (colour, dash, _)) in curves.iter().zip(&style) {
        if points.is_empty() {
            continue;
        }
        let coords: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        let dash = dash_attribute(dash);
        let _ = writeln!(
            svg,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{}"/>"#,
            coords.join(" ")
        );
    }

    // Legend, top left inside the plot (curves rise to the right).
    let entries: Vec<String> = runs
        .iter()
        .zip(&style)
        .zip(&curves)
        .map(|((run, (_, _, round)), points)| {
            let mut text = run.label.clone();
            if *round > 0 {
                let _ = write!(text, " (round {})", round + 1);
            }
            if points.is_empty() {
                text.push_str(" (no samples)");
            }
            text
        })
        .collect();
    let longest = entries.iter().map(|e| e.chars().count()).max().unwrap_or(0);
    let box_w = (longest as f64 * 7.0 + 50.0).min(plot_w - 20.0);
    let box_h = entries.len() as f64 * 18.0 + 10.0;
    let (bx, by) = (LEFT + 12.0, TOP + 12.0);
    let _ = writeln!(
        svg,
        r##"<rect x="{bx}" y="{by}" width="{box_w:.1}" height="{box_h:.1}" fill="white" fill-opacity="0.9" stroke="#bbb"/>"##
    );
    for (i, (entry, (colour, dash, _))) in entries.iter().zip(&style).enumerate() {
        let y = by + 17.0 + i as f64 * 18.0;
        let dash = dash_attribute(dash);
        let _ = writeln!(
            svg,
            r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{colour}" stroke-width="2"{dash}/>"#,
            bx + 8.0,
            y - 4.0,
            bx + 32.0,
            y - 4.0
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{y:.1}" font-size="13">{}</text>"#,
            bx + 40.0,
            escape(entry)
        );
    }
    let _ = writeln!(svg, "</svg>");
    Ok(svg)
}

/// The SVG attribute that dashes a curve and its legend line alike (none for a solid one).
fn dash_attribute(dash: &str) -> String {
    if dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{dash}""#)
    }
}

/// `tsumo plot FILE… -o OUT.svg`: writes the SVG; a bad input is the error (main prints it, exit 2).
pub fn run(options: &PlotOptions) -> Result<(), Error> {
    let mut runs = compare::load_all(&options.files)?;
    // An A/B comparison's file: the runs it compared, as `tsumo compare` shows them.
    runs.retain(|run| match &run.left_out {
        Some(reason) => {
            eprintln!("tsumo: {}: {reason}; not plotted", run.source);
            false
        }
        None => true,
    });
    let svg = render_svg(&runs, options.metric.as_deref())?;
    let path = options.output.display().to_string();
    let written = if path == "-" {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(svg.as_bytes())
            .and_then(|()| stdout.flush())
    } else {
        std::fs::write(&options.output, svg)
    };
    written.map_err(|e| Error::Write {
        path,
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::saved::RunData;
    use crate::stats::new_histogram;

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
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
    }

    #[test]
    fn latency_axis_is_logarithmic_when_the_curves_span_more_than_a_decade() {
        let linear = YAxis::fit([0.0, 1.2, 5.0].into_iter());
        assert!(!linear.log);
        assert_eq!(linear.ticks().first().map(|t| t.1.as_str()), Some("0"));
        // From the 1-2-5 step at or below the lowest value to the one at or above the highest.
        let log = YAxis::fit([0.0, 0.05, 0.4, 35.0].into_iter());
        assert!(log.log);
        let labels: Vec<String> = log.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(
            labels,
            ["0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50"]
        );
        assert_eq!(log.fraction(0.05), 0.0);
        assert!((log.fraction(50.0) - 1.0).abs() < 1e-9);
        assert!((log.fraction(5.0) - 2.0 / 3.0).abs() < 1e-9);
        let exact = YAxis::fit([2.0, 100.0].into_iter());
        assert_eq!((exact.bottom, exact.top), (2.0, 100.0));
    }

    /// An HTTP run's document with `values` (µs) as its latency histogram.
    fn http_run(label: &str, values: &[u64]) -> LoadedRun {
        use serde_json::json;
        let mut h = new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        let encoded = crate::report::schema::encode_histogram(&h);
        let p = json!({"count": 0, "p50": 0, "p75": 0, "p90": 0, "p99": 0, "p99.9": 0,
                       "p99.99": 0, "max": 0, "min": 0, "mean": 0.0, "stdev": 0.0});
        let counters = serde_json::to_value(crate::stats::Counters::default()).unwrap();
        let doc = json!({
            "tool": "tsumo", "version": "0", "schema": 1, "mode": "http", "label": label,
            "plan": {"url": "http://127.0.0.1:18931/index.html", "threads": 2,
                     "connections": 10, "duration_s": 10.0, "rate": 2000, "timeout_s": 2.0,
                     "script": null, "script_args": [], "headers": [], "latency": false,
                     "u_latency": false, "batch_latency": false, "insecure": false,
                     "cacert": null},
            "elapsed_s": 10.0, "interrupted": false, "counters": counters,
            "requests_per_sec": 2000.0, "bytes_per_sec": 0.0,
            "latency": p, "uncorrected": p, "send_lateness": p,
            "histograms": {"latency": encoded, "uncorrected": encoded,
                           "send_lateness": encoded, "req_per_sec": encoded},
            "notes": []
        });
        compare::from_value(doc, &format!("{label}.json")).unwrap()
    }

    /// The numbers of every `attribute="…"` of the SVG's `<polyline points>`: x and y pixels.
    fn points(svg: &str) -> Vec<(f64, f64)> {
        svg.lines()
            .filter_map(|l| l.split(r#"points=""#).nth(1))
            .flat_map(|rest| rest.split('"').next().unwrap_or("").split(' '))
            .filter_map(|pair| {
                let (x, y) = pair.split_once(',')?;
                Some((x.parse().ok()?, y.parse().ok()?))
            })
            .collect()
    }

    /// The latency axis's labels (right-aligned left of the frame), bottom to top.
    fn y_labels(svg: &str) -> Vec<f64> {
        svg.lines()
            .filter(|l| l.contains(r#"text-anchor="end">"#))
            .filter_map(|l| l.split('>').nth(1)?.split('<').next()?.parse().ok())
            .collect()
    }

    /// What a reader of the chart needs: which way is better, no band of the axes without data
    /// (before: a run of 5 samples drew the 90%–99% decade empty, the curve ending at 40% of
    /// the width), and a subtitle that says the load once instead of the URLs' port numbers.
    #[test]
    fn the_chart_says_lower_is_better_fills_its_axes_and_names_the_load() {
        let few = [560, 900, 2_400, 7_000, 12_000];
        let runs = [http_run("direct", &few), http_run("nginx", &few[1..])];
        let svg = render_svg(&runs, None).unwrap();
        assert!(
            svg.contains(">Latency (ms, log scale) — lower is better</text>"),
            "{svg}"
        );
        let subtitle = svg.lines().nth(3).unwrap_or("");
        assert!(
            subtitle.ends_with(r##"fill="#444">-R2000 -c10 -d10s, every run</text>"##),
            "{subtitle}"
        );
        assert!(
            !svg.contains("127.0.0.1") && !svg.contains("18931"),
            "{svg}"
        );
        // x: the curves reach the right edge of the frame (their 100% points, at n).
        let points = points(&svg);
        let right = points.iter().map(|p| p.0).fold(0.0, f64::max);
        assert_eq!(right, WIDTH - RIGHT, "{svg}");
        // y: the highest and lowest points are within one decade of the frame's top and bottom.
        let labels = y_labels(&svg);
        let (bottom, top) = (labels[0], labels[labels.len() - 1]);
        assert_eq!((bottom, top), (0.5, 20.0), "{labels:?}");
        let decade_px = (HEIGHT - TOP - BOTTOM) / (top / bottom).log10();
        let highest = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let lowest = points.iter().map(|p| p.1).fold(0.0, f64::max);
        assert!(highest < TOP + decade_px, "{highest} {decade_px}");
        assert!(lowest > HEIGHT - BOTTOM - decade_px, "{lowest} {decade_px}");
        // The x axis: 0% at the left, the edge (short of 90%) marked as the max.
        for label in [">0%</text>", ">max</text>"] {
            assert!(svg.contains(label), "{label}: {svg}");
        }
        // Loads that differ are named per label.
        let other = [http_run("direct", &few), {
            let mut run = http_run("nginx", &few);
            if let RunData::Http(saved) = &mut run.data {
                saved.plan.rate = Some(1000);
            }
            run
        }];
        let svg = render_svg(&other, None).unwrap();
        assert!(
            svg.contains(">direct: -R2000 -c10 -d10s; nginx: -R1000 -c10 -d10s</text>"),
            "{svg}"
        );
    }

    #[test]
    fn curve_follows_the_spectrum_and_ends_at_n() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
        }
        let points = curve(&h);
        assert_eq!(points[0], (1.0, 0.01));
        assert!(points
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        // The 100% row sits at n, or at the last row's x when the spectrum went past n.
        let (x, ms) = points[points.len() - 1];
        assert_eq!(ms, 10.0, "the max, not the top bucket's highest value");
        assert!(
            x >= 1000.0 && x == points[points.len() - 2].0.max(1000.0),
            "{x}"
        );
    }
}
