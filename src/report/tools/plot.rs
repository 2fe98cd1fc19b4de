//! `tsumo plot`: saved runs' latency by percentile, overlaid in one SVG.
//!
//! The chart is HdrHistogram's usual one: x is `1/(1−p)` on a log axis, so 90%, 99%, 99.9% …
//! are equally spaced and the tail — where a proxy or a stall shows — gets as much room as the
//! median; y is latency in ms on a linear axis. Points come from the same percentile iterator as
//! wrk2's spectrum, read from the whole saved histogram, so the curve is exact, not a handful of
//! summary percentiles joined by lines. The drawing is `chart`'s (plotters); this file gathers
//! the runs' histograms, names and styles.
//!
//! HTTP runs plot their corrected latency (`--metric uncorrected`, `send_lateness` or
//! `server_latency` for the others). Mahjong sessions plot `reply_lateness` by default — the one histogram every session
//! fills — and any other histogram of the session by name (`draw_overshoot`, a phase such as
//! `login`, a step kind such as `dapai`).

use std::fmt::Write as _;
use std::path::PathBuf;

use hdrhistogram::Histogram;

use crate::error::Error;
use crate::report::chart::{self, Series, Titles};
use crate::report::schema::decode_histogram;
use crate::report::tools::compare::{self, LoadedRun};

/// Options of `tsumo plot FILE… -o OUT.svg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotOptions {
    pub files: Vec<PathBuf>,
    /// Where the SVG goes; `-` is stdout.
    pub output: PathBuf,
    /// Which histogram to plot; `None` is the mode's default.
    pub metric: Option<String>,
}

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

/// The SVG document of the runs (one mode), one line per run: one colour per label, a label's
/// later rounds in lighter shades of it.
pub fn render_svg(runs: &[LoadedRun], metric: Option<&str>) -> Result<String, Error> {
    compare::check_same_mode(runs, "plot")?;
    let mut title = String::new();
    let mut labels: Vec<&str> = Vec::new();
    let mut curves = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let (h, t) = histogram_of(run, metric)?;
        title = t;
        let colour = match labels.iter().position(|l| *l == run.label) {
            Some(c) => c,
            None => {
                labels.push(&run.label);
                labels.len() - 1
            }
        };
        let round = runs[..i].iter().filter(|r| r.label == run.label).count();
        let mut name = run.label.clone();
        if round > 0 {
            let _ = write!(name, " (round {})", round + 1);
        }
        if h.is_empty() {
            name.push_str(" (no samples)");
        }
        curves.push(Series::from_histogram(name, &h).coloured(colour, round));
    }
    let titles = Titles {
        title,
        subtitle: subtitle(runs),
    };
    chart::latency_by_percentile(&titles, "Latency", &curves).map_err(|e| Error::Write {
        path: "the chart".to_string(),
        reason: e.to_string(),
    })
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
        crate::sys::output::write_whole(&options.output, svg.as_bytes())
    };
    written.map_err(|e| Error::Write {
        path,
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tools::saved::RunData;
    use crate::stats::new_histogram;

    #[test]
    fn duration_flags() {
        assert_eq!(crate::report::result::duration_flag(10.0), "-d10s");
        assert_eq!(crate::report::result::duration_flag(1.5), "-d1500ms");
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
        let counters = serde_json::to_value(crate::stats::http::Counters::default()).unwrap();
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

    /// What the SVG shows: its texts (trimmed), its lines' points, and the frame
    /// `(left, top, right, bottom)` in pixels.
    struct Drawn {
        texts: Vec<String>,
        lines: Vec<Vec<(f64, f64)>>,
        frame: (f64, f64, f64, f64),
    }

    fn drawn(svg: &str) -> Drawn {
        let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}: {svg}"));
        let number = |n: roxmltree::Node, a: &str| -> f64 {
            n.attribute(a)
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::NAN)
        };
        let texts = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect();
        let lines = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .map(|n| {
                n.attribute("points")
                    .unwrap_or("")
                    .split_whitespace()
                    .filter_map(|pair| {
                        let (x, y) = pair.split_once(',')?;
                        Some((x.parse().ok()?, y.parse().ok()?))
                    })
                    .collect()
            })
            .collect();
        let frame = doc
            .descendants()
            .find(|n| n.has_tag_name("rect") && n.attribute("stroke") == Some("#666666"))
            .map(|n| {
                let (x, y) = (number(n, "x"), number(n, "y"));
                (x, y, x + number(n, "width"), y + number(n, "height"))
            })
            .unwrap_or_else(|| panic!("no frame: {svg}"));
        Drawn {
            texts,
            lines,
            frame,
        }
    }

    /// What a reader of the chart needs: which way is better, no band of the axes without data
    /// (before: a run of 5 samples drew the 90%–99% decade empty, the curve ending at 40% of
    /// the width), and a subtitle that says the load once instead of the URLs' port numbers.
    #[test]
    fn the_chart_says_lower_is_better_fills_its_axes_and_names_the_load() {
        let few = [560, 900, 2_400, 7_000, 12_000];
        let runs = [http_run("direct", &few), http_run("nginx", &few[1..])];
        let svg = render_svg(&runs, None).unwrap();
        let d = drawn(&svg);
        let has = |text: &str| d.texts.iter().any(|t| t == text);
        assert!(has("Latency (ms, log scale) — lower is better"), "{svg}");
        assert!(
            has("Latency by percentile (corrected for coordinated omission)"),
            "{svg}"
        );
        assert!(has("-R2000 -c10 -d10s, every run"), "{:?}", d.texts);
        assert!(has("direct") && has("nginx"), "{:?}", d.texts);
        assert!(
            !svg.contains("127.0.0.1") && !svg.contains("18931"),
            "{svg}"
        );
        // One line per run, one point per row of its spectrum.
        assert_eq!(d.lines.len(), 2, "{svg}");
        // x: the curves reach the right edge of the frame (their 100% points, at n).
        let (_, top, right, bottom) = d.frame;
        let points: Vec<(f64, f64)> = d.lines.concat();
        let rightmost = points.iter().map(|p| p.0).fold(0.0, f64::max);
        assert!((rightmost - right).abs() <= 1.0, "{rightmost} {right}");
        // y: from the 1-2-5 step below the lowest value to the one above the highest, and the
        // highest and lowest points within one decade of the frame's top and bottom.
        // The ticks are durations: 500us, 1ms … 20ms.
        let ms = |t: &str| match t.strip_suffix("ms") {
            Some(ms) => ms.parse().ok(),
            None => t
                .strip_suffix("us")?
                .parse::<f64>()
                .ok()
                .map(|us| us / 1000.0),
        };
        let numbers: Vec<f64> = d.texts.iter().filter_map(|t| ms(t)).collect();
        assert_eq!(numbers.first(), Some(&0.5), "{:?}", d.texts);
        assert_eq!(numbers.last(), Some(&20.0), "{:?}", d.texts);
        let decade_px = (bottom - top) / (20f64 / 0.5).log10();
        let highest = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let lowest = points.iter().map(|p| p.1).fold(0.0, f64::max);
        assert!(highest < top + decade_px, "{highest} {decade_px}");
        assert!(lowest > bottom - decade_px, "{lowest} {decade_px}");
        // The x axis: 0% at the left, the edge (short of 90%) marked as the max.
        assert!(has("0%") && has("max"), "{:?}", d.texts);
        // Loads that differ are named per label.
        let other = [http_run("direct", &few), {
            let mut run = http_run("nginx", &few);
            if let RunData::Http(saved) = &mut run.data {
                saved.plan.rate = Some(1000);
            }
            run
        }];
        let d = drawn(&render_svg(&other, None).unwrap());
        assert!(
            d.texts
                .iter()
                .any(|t| t == "direct: -R2000 -c10 -d10s; nginx: -R1000 -c10 -d10s"),
            "{:?}",
            d.texts
        );
    }

    /// A label's second round is the label's colour, lighter, and named as the round; a run
    /// without samples is named so and draws no line.
    #[test]
    fn rounds_share_a_colour_and_empty_runs_say_so() {
        let few = [560, 900, 2_400];
        let runs = [
            http_run("direct", &few),
            http_run("nginx", &few),
            http_run("direct", &few),
            http_run("nginx", &[]),
        ];
        let svg = render_svg(&runs, None).unwrap();
        let d = drawn(&svg);
        for name in [
            "direct",
            "nginx",
            "direct (round 2)",
            "nginx (round 2) (no samples)",
        ] {
            assert!(d.texts.iter().any(|t| t == name), "{name}: {:?}", d.texts);
        }
        assert_eq!(d.lines.len(), 3, "{svg}");
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let strokes: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("polyline"))
            .filter_map(|n| n.attribute("stroke"))
            .collect();
        assert_eq!(strokes[0], "#1F77B4", "{strokes:?}");
        assert_eq!(strokes[1], "#D62728", "{strokes:?}");
        assert_ne!(strokes[2], strokes[0], "{strokes:?}");
    }
}
