//! The latency split of an HTTP run (the server's latency beside the corrected, tsumo's own
//! delay) as the tools show it: `compare`'s rows, `plot`'s histograms and the page's charts,
//! for a run that has it and for one saved before it.

use crate::error::Error;
use crate::report::http::intervals::SavedInterval;
use crate::report::http::saved::{Percentiles, SavedRun};
use crate::report::result::PageChart;
use crate::report::result::SavedResult;
use crate::report::schema::encode_histogram;
use crate::report::timeline::{IntervalHistogram, IntervalSpan};
use crate::report::tools::compare;
use crate::report::tools::saved::{LoadedRun, RunData};
use crate::stats::format::format_time_us;
use crate::stats::http::split::ResponseTimes;
use crate::stats::http::split::{SplitHistograms, Timestamps};
use crate::stats::http::{Errors, Unsent};
use crate::stats::new_histogram;
use hdrhistogram::Histogram;

const SPLIT_ROWS: [&str; 3] = [
    "Server's latency p50",
    "Server's latency p99",
    "tsumo's own delay p99",
];

/// A run saved by an older tsumo: no split anywhere, no intervals.
fn older(label: &str) -> SavedRun {
    let mut run: SavedRun =
        serde_json::from_str(include_str!("../../../tests/fixtures/http-direct-v1.json"))
            .expect("the fixture is a run");
    run.label = label.to_string();
    run
}

/// Two 1 s intervals, each with `latency`, and the server's latency and tsumo's own delay
/// when given them.
fn intervals(latency: &Histogram<u64>, split: Option<&SplitHistograms>) -> Vec<SavedInterval> {
    (0..2u32)
        .map(|k| SavedInterval {
            span: IntervalSpan {
                start_s: f64::from(k),
                start_unix_ns: 1_796_061_600_000_000_000 + u64::from(k) * 1_000_000_000,
                duration_s: 1.0,
            },
            target_rate: None,
            sent: 100,
            completed: 100,
            bytes_read: 10_000,
            bytes_written: 4_000,
            errors: Errors::default(),
            unsent: Unsent::default(),
            latency: IntervalHistogram::of(latency),
            send_lateness: IntervalHistogram::of(&new_histogram()),
            server_latency: split.map(|s| IntervalHistogram::of(&s.server)),
            own_delay: split.map(|s| IntervalHistogram::of(&s.own)),
            server: None,
        })
        .collect()
}

/// The fixture as a newer tsumo saves it: 1000 responses every 10 ms, each sent 20 µs late
/// on a free connection and read 15 µs after the kernel's stamp, the server taking 80 µs to
/// 1.07 ms; the corrected latency is the same responses', so the split adds up to it.
fn with_split(label: &str) -> SavedRun {
    const US: u64 = 1_000;
    let mut run = older(label);
    let mut split = SplitHistograms::default();
    let mut corrected = new_histogram();
    for k in 0..1000u64 {
        let intended = k * 10_000 * US;
        let sent = intended + 20 * US;
        let received = sent + (80 + (k % 100) * 10) * US;
        let one = ResponseTimes {
            intended,
            free: intended,
            sent,
            received,
            read: received + 15 * US,
        }
        .split();
        split.record(&one);
        corrected.record(one.corrected).expect("in range");
    }
    run.latency = Percentiles::of(&corrected);
    run.histograms.latency = encode_histogram(&corrected);
    run.timestamps = Timestamps::Kernel;
    run.set_split(&split);
    run.intervals = intervals(&corrected, Some(&split));
    run
}

fn loaded(run: SavedRun) -> LoadedRun {
    let source = format!("{}.json", run.label);
    LoadedRun::new(RunData::Http(Box::new(run)), &source)
}

/// The names of the latency spectrum's curves and of the latency-over-time chart's series.
fn latency_charts(run: &SavedRun) -> (Vec<String>, Vec<(String, usize)>) {
    let (mut curves, mut series) = (Vec::new(), Vec::new());
    for chart in run.page().charts {
        match chart {
            PageChart::Percentile {
                id: "latency-by-percentile",
                curves: c,
                ..
            } => curves = c.into_iter().map(|c| c.name).collect(),
            PageChart::OverTime {
                id: "latency-over-time",
                series: s,
                per_shard,
                ..
            } => {
                assert_eq!(per_shard, Some(1), "the key series is the corrected p99");
                series = s.into_iter().map(|s| (s.name, s.points.len())).collect();
            }
            _ => {}
        }
    }
    (curves, series)
}

#[test]
fn a_run_with_the_split_shows_the_servers_latency_beside_the_corrected() {
    let new = with_split("new");
    let server = new.server_latency.expect("the split's summary");
    let own = new.own_delay.expect("tsumo's own delay").total;
    assert!(
        server.p99 < new.latency.p99 && own.p99 > 0,
        "{server:?} {own:?}"
    );
    // Beside a run of an older tsumo, which has `-` where it has no figure.
    let table = compare::render(&[loaded(new.clone()), loaded(older("old"))]).expect("compared");
    let line = |name: &str| {
        table
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row in:\n{table}"))
    };
    let cells = |name: &str| -> Vec<String> {
        let rest = line(name).trim_start()[name.len()..].to_string();
        rest.split_whitespace().map(str::to_string).collect()
    };
    let t = |us: u64| format_time_us(us as f64);
    assert_eq!(
        cells("Server's latency p50"),
        [t(server.p50), "-".into(), "-".into()]
    );
    assert_eq!(
        cells("Server's latency p99"),
        [t(server.p99), "-".into(), "-".into()]
    );
    assert_eq!(
        cells("tsumo's own delay p99"),
        [t(own.p99), "-".into(), "-".into()]
    );
    // Right after the corrected latency's rows, before the uncorrected's.
    let at = |name: &str| table.find(line(name)).expect("a row");
    assert!(at("Latency max") < at(SPLIT_ROWS[0]), "{table}");
    assert!(at(SPLIT_ROWS[0]) < at(SPLIT_ROWS[1]), "{table}");
    assert!(at(SPLIT_ROWS[2]) < at("Uncorrected p50"), "{table}");

    // `tsumo plot --metric server_latency`: the whole histogram.
    assert!(new.plottable().contains(&"server_latency"));
    let named = new.plotted(Some("server_latency")).expect("plottable");
    let h = crate::report::schema::decode_histogram(named.encoded).expect("decodes");
    assert_eq!(h.len(), server.count);
    assert!(
        named.title.starts_with("Server's latency"),
        "{}",
        named.title
    );

    // The page: the server's curve beside the corrected, its p99 over time, and its line.
    let (curves, series) = latency_charts(&new);
    assert_eq!(curves, ["corrected", "server's", "uncorrected"]);
    let names: Vec<&str> = series.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["p50", "p99", "max", "server's p99"]);
    assert_eq!(series[3].1, 2, "one point per interval");
    let lines = new.page().lines;
    let said = format!(
        "Server's latency: p50 {}, p99 {}",
        t(server.p50),
        t(server.p99)
    );
    assert!(lines.iter().any(|l| l.starts_with(&said)), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("kernel receive timestamps")),
        "{lines:?}"
    );
}

#[test]
fn an_older_run_shows_none_of_the_split() {
    let mut old = older("old");
    let latency = crate::report::schema::decode_histogram(&old.histograms.latency).expect("ok");
    old.intervals = intervals(&latency, None);
    let table = compare::render(&[loaded(old.clone()), loaded(older("older"))]).expect("compared");
    for name in SPLIT_ROWS {
        assert!(!table.contains(name), "{name} in:\n{table}");
    }
    assert!(table.contains("Latency max"), "{table}");

    // No histogram to plot: the same error as for any name the run does not have.
    assert!(!old.plottable().contains(&"server_latency"));
    assert!(old.plotted(Some("server_latency")).is_none());
    match crate::report::tools::plot::render_svg(&[loaded(old.clone())], Some("server_latency")) {
        Err(Error::Usage(m)) => assert_eq!(
            m,
            "old.json: no histogram 'server_latency' to plot (choose one of: latency, \
             uncorrected, send_lateness)"
        ),
        other => panic!("expected a usage error, got {other:?}"),
    }

    // The page as before.
    let (curves, series) = latency_charts(&old);
    assert_eq!(curves, ["corrected", "uncorrected"]);
    let names: Vec<&str> = series.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["p50", "p99", "max"]);
    let lines = old.page().lines;
    assert!(!lines.iter().any(|l| l.contains("Server's")), "{lines:?}");
}
