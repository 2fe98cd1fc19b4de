//! The charts' unit tests: axes, points, and each kind of chart's SVG.

use super::axis::{self, decimals, nice_step, percentile_label};
use super::palette;
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
    let svg = latency_by_percentile(&titles("Latency by percentile"), "Latency", &curves).unwrap();
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
    let seconds = |f: fn(f64) -> f64| (1..=6).map(|s| (f64::from(s), f(f64::from(s)))).collect();
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
        // 0.41 to 40 ms: more than a decade, so log, its ticks durations.
        "Latency (ms, log scale)",
        "p50",
        "p99",
        "max",
        "200us",
        "50ms",
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
    let measured = [
        Series::new(
            "p99",
            vec![(1000.0, 1.1), (2000.0, 1.4), (4000.0, 3.0), (8000.0, 25.0)],
        ),
        Series::new("held", vec![(1000.0, 1.1), (2000.0, 1.4), (4000.0, 3.0)])
            .markers(Shape::Filled),
        Series::new("broke", vec![(8000.0, 25.0)]).markers(Shape::Cross),
    ];
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
        "p99 (ms, log scale)",
        "p99",
        "objective: p99 ≤ 10 ms",
        "capacity: 4000 req/s",
    ] {
        assert!(texts.iter().any(|t| t == label), "{label}: {texts:?}");
    }
}

/// The `<svg>`'s height, and the lowest `y` of its texts.
fn height_and_lowest_text(svg: &str) -> (f64, f64) {
    let doc = roxmltree::Document::parse(svg).unwrap();
    let height = doc
        .root_element()
        .attribute("height")
        .and_then(|h| h.parse().ok())
        .unwrap_or(0.0);
    let lowest = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.attribute("y")?.parse::<f64>().ok())
        .fold(0.0, f64::max);
    (height, lowest)
}

/// Each `<polyline>`'s stroke colour, in order.
fn strokes(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .map(|n| n.attribute("stroke").unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_latency_axis_over_decades_is_logarithmic_with_durations_for_ticks() {
    // A 50 ms objective beside a 6 s broken step: log, so the objective is not at the floor.
    let measured = [Series::new(
        "p99",
        vec![(100.0, 2.0), (200.0, 8.0), (400.0, 6000.0)],
    )];
    let objectives = [Objective {
        name: "objective: p99<50ms".to_string(),
        y: 50.0,
    }];
    let svg = capacity(
        &titles("Capacity"),
        ("Offered load (req/s)", "p99 (ms)"),
        &measured,
        &objectives,
        None,
    )
    .unwrap();
    let labels = texts(&svg);
    for label in ["p99 (ms, log scale)", "2ms", "10ms", "100ms", "1s", "5s"] {
        assert!(labels.iter().any(|t| t == label), "{label}: {labels:?}");
    }
    assert_eq!(axis::duration_label(0.05), "50us");
    assert_eq!(axis::duration_label(0.0005), "0.5us");
    assert_eq!(axis::duration_label(2.0), "2ms");
    assert_eq!(axis::duration_label(2000.0), "2s");
    // Within a decade it stays linear, in plain numbers; a count is never log.
    let narrow = [Series::new("p99", vec![(100.0, 2.0), (200.0, 8.0)])];
    let svg = capacity(&titles("C"), ("Load", "p99 (ms)"), &narrow, &[], None).unwrap();
    assert!(texts(&svg).iter().any(|t| t == "p99 (ms)"));
    let (y, label) = y_axis([1.0, 5000.0].into_iter(), "Players");
    assert!(!y.log && label == "Players");
    // Over time too: the latency chart of a run whose max spiked.
    let (y, label) = y_axis([0.4, 1.5, 40.0].into_iter(), "Latency (ms)");
    assert!(y.log, "{y:?}");
    assert_eq!(label, "Latency (ms, log scale)");
}

#[test]
fn twenty_series_have_twenty_colours_and_their_legend_inside_the_document() {
    for count in [20, 40] {
        let mut seen: Vec<RGBColor> = (0..count).map(|i| palette::colour(i, count)).collect();
        seen.sort_by_key(|c| (c.0, c.1, c.2));
        seen.dedup();
        assert_eq!(seen.len(), count, "{count} colours");
    }
    let series: Vec<Series> = (0..20)
        .map(|run| {
            let points = (1..=5)
                .map(|s| (f64::from(s), f64::from(run + s)))
                .collect();
            Series::new(format!("run {run} rate"), points).coloured(run as usize, 0)
        })
        .collect();
    let svg = over_time(&titles("Rate over time"), "Requests/sec", &series).unwrap();
    let mut colours = strokes(&svg);
    assert_eq!(colours.len(), 20);
    colours.sort();
    colours.dedup();
    assert_eq!(colours.len(), 20, "no two runs share a colour");
    // The legend under the chart, the document grown to hold it: every name inside.
    let (height, lowest) = height_and_lowest_text(&svg);
    assert!(height > f64::from(HEIGHT), "{height}");
    assert!(lowest < height, "{lowest} {height}");
    let texts = texts(&svg);
    for run in 0..20 {
        let name = format!("run {run} rate");
        assert!(texts.contains(&name), "{name}: {texts:?}");
    }
    // A few lines keep the legend in the frame, the document its size.
    let svg = over_time(&titles("Rate"), "Requests/sec", &series[..3]).unwrap();
    assert_eq!(height_and_lowest_text(&svg).0, f64::from(HEIGHT));
}

#[test]
fn a_run_of_one_interval_is_drawn_across_its_interval() {
    let svg = over_time(
        &titles("Rate over time"),
        "Requests/sec",
        &[Series::new("rate", vec![(1.0, 200.0)])],
    )
    .unwrap();
    // One line of two points, from the run's start to its interval's end, both circled.
    assert_eq!(polylines(&svg), [2]);
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let circles = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(circles, 2);
    assert!(texts(&svg).iter().any(|t| t == "0"), "the axis from 0");
    // Beside lines of many intervals, a phase seen once spans one interval of theirs.
    assert_eq!(
        interval_of(&[
            Series::new("login", vec![(2.0, 1.0)]),
            Series::new("games", vec![(1.0, 4.0), (2.0, 8.0), (3.0, 8.0)]),
        ]),
        1.0
    );
}
