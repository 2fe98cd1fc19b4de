//! An HTTP run (HTTP/1.1 or HTTP/2) as a result: its saved type ([`saved`]), wrk2's text
//! ([`text`]), its page ([`page`]), its merge ([`merge`]), its measures for objectives and its
//! step of a capacity search ([`measures`]), and its own outputs (`.hgrm` in [`hgrm`], the
//! interval log in [`hlog`]); here, [`SavedRun`] through [`SavedResult`]: its rows, its
//! histograms, its lines in `tsumo merge` and its verdict.

pub mod hgrm;
pub mod hlog;
mod measures;
mod merge;
mod page;
pub mod saved;
pub mod text;

use std::any::Any;

use crate::error::Error;
use crate::report::result::{
    cut_by, duration_flag, row, Named, PageContent, Row, SavedResult, Unit,
};
use crate::report::timeline;
use crate::slo::Verdict;
use crate::stats::format::format_time_us;
use saved::Percentiles;
use saved::SavedRun;

/// `"mode"` of an HTTP run's document (and of files that have none: the first tsumos').
pub const MODE: &str = "http";

/// How messages name the kind (`an HTTP run`).
pub const NAME: &str = "HTTP";

/// The histograms a plot can show, the default first (`server_latency` only in runs that split
/// the latency: files of older tsumos have no such histogram).
const PLOTTED: [&str; 4] = ["latency", "uncorrected", "send_lateness", "server_latency"];

impl SavedResult for SavedRun {
    fn mode(&self) -> &'static str {
        NAME
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn url(&self) -> &str {
        &self.plan.url
    }

    crate::report::result::part_and_server_fields!();

    fn elapsed_s(&self) -> f64 {
        self.elapsed_s
    }

    fn cut_by_signal(&self) -> Option<String> {
        cut_by(self.interrupted, self.ended_by.as_deref())
    }

    fn stopped_by_error(&self) -> Option<String> {
        let e = self.script_error.as_ref()?;
        Some(format!("stopped by a script error: {e}"))
    }

    fn text(&self) -> Result<String, Error> {
        text::render_merged(self)
    }

    /// A script error stopped the run, or no response came back at all.
    fn interval_ns(&self) -> Option<u64> {
        timeline::length_ns(&self.intervals)
    }

    fn objectives(&self) -> &[Verdict] {
        &self.objectives
    }

    fn verdict(&self) -> Option<String> {
        if let Some(e) = &self.script_error {
            return Some(format!("script error: {e}"));
        }
        let c = &self.counters;
        (c.requests == 0).then(|| {
            format!(
                "no response was received ({} socket errors, {} requests never sent)",
                c.errors.socket_total(),
                c.unsent.total()
            )
        })
    }

    fn plan_key(&self) -> Vec<(&'static str, String)> {
        let plan = &self.plan;
        let rate = plan
            .rate
            .map_or("none (closed loop)".into(), |r| format!("{r}/s"));
        let protocol = match &plan.http2 {
            Some(h2) => format!("HTTP/2 -m{}", h2.streams),
            None => "HTTP/1.1".to_string(),
        };
        vec![
            ("duration", format!("{}s", plan.duration_s)),
            ("rate", rate),
            ("protocol", protocol),
        ]
    }

    fn rows(&self) -> Vec<Row> {
        let s = self;
        let c = &s.counters;
        let e = &c.errors;
        // An empty histogram has no percentiles (its summary says 0).
        let has = |p: &Percentiles| p.count > 0;
        let time = |name: &str, us: u64, present: bool| {
            row(name, present.then_some(us as f64), Unit::Time)
        };
        let count = |name: &str, n: u64| row(name, Some(n as f64), Unit::Count);
        let (l, u, sl) = (has(&s.latency), has(&s.uncorrected), has(&s.send_lateness));
        // What the server caused and what tsumo added, beside the corrected latency they split:
        // absent in files of older tsumos, so a comparison of old runs has no such rows and an
        // old run beside a new one shows `-` (never a 0 it did not measure).
        let server = s.server_latency.filter(has);
        let own = s.own_delay.map(|o| o.total).filter(has);
        let split = |name: &str, p: Option<Percentiles>, us: fn(&Percentiles) -> u64| {
            row(name, p.map(|p| us(&p) as f64), Unit::Time)
        };
        let h2 = c.http2.as_ref();
        vec![
            row("Elapsed", Some(s.elapsed_s * 1e6), Unit::Time),
            count("Requests", c.requests),
            row("Requests/sec", Some(s.requests_per_sec), Unit::Metric),
            row("Transfer/sec", Some(s.bytes_per_sec), Unit::BytesPerSec),
            time("Latency p50", s.latency.p50, l),
            time("Latency p90", s.latency.p90, l),
            time("Latency p99", s.latency.p99, l),
            time("Latency p99.9", s.latency.p99_9, l),
            time("Latency max", s.latency.max, l),
            split("Server's latency p50", server, |p| p.p50),
            split("Server's latency p99", server, |p| p.p99),
            split("tsumo's own delay p99", own, |p| p.p99),
            time("Uncorrected p50", s.uncorrected.p50, u),
            time("Uncorrected p99", s.uncorrected.p99, u),
            time("Send lateness p99", s.send_lateness.p99, sl),
            count("Errors connect", e.connect),
            count("Errors read", e.read),
            count("Errors write", e.write),
            count("Errors timeout", e.timeout),
            count("Errors status", e.status),
            count("Connections opened", c.connections_opened),
            count("TLS full handshakes", c.tls_full_handshakes),
            count("TLS resumed handshakes", c.tls_resumed_handshakes),
            // HTTP/2 runs only (`-` for HTTP/1.1).
            row(
                "HTTP/2 streams per conn",
                s.plan.http2.map(|h| h.streams as f64),
                Unit::Count,
            ),
            row(
                "GOAWAY received",
                h2.map(|h| h.goaways() as f64),
                Unit::Count,
            ),
            row(
                "RST_STREAM received",
                h2.map(|h| h.resets() as f64),
                Unit::Count,
            ),
        ]
    }

    fn key_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("Requests/sec", "rate"),
            ("Latency p50", "p50"),
            ("Latency p99", "p99"),
            ("Server's latency p99", "the server's p99"),
            ("Server CPU% mean", "server CPU"),
        ]
    }

    /// The run's own: a file of an older tsumo is not offered a `server_latency` it lacks.
    fn plottable(&self) -> Vec<&str> {
        let split = self.histograms.split.is_some();
        PLOTTED
            .into_iter()
            .filter(|name| split || *name != "server_latency")
            .collect()
    }

    fn plotted(&self, name: Option<&str>) -> Option<Named<'_>> {
        let h = &self.histograms;
        let encoded = match name.unwrap_or(PLOTTED[0]) {
            "latency" => &h.latency,
            "uncorrected" => &h.uncorrected,
            "send_lateness" => &h.send_lateness,
            // A file without the split has no such histogram: `plot` says so, as for any name.
            "server_latency" => &h.split.as_ref()?.server_latency,
            _ => return None,
        };
        let title = match name {
            None | Some("latency") => {
                "Latency by percentile (corrected for coordinated omission)".to_string()
            }
            Some("server_latency") => {
                "Server's latency by percentile (the corrected latency less tsumo's own delay)"
                    .to_string()
            }
            Some(m) => format!("{} by percentile", m.replace('_', " ")),
        };
        Some(Named { encoded, title })
    }

    fn load(&self) -> String {
        let plan = &self.plan;
        let rate = plan
            .rate
            .map_or("closed loop".to_string(), |r| format!("-R{r}"));
        let streams = plan
            .http2
            .map_or(String::new(), |h2| format!(" HTTP/2 -m{}", h2.streams));
        format!(
            "{rate} -c{}{streams} {}",
            plan.connections,
            duration_flag(plan.duration_s)
        )
    }

    fn shard_line(&self) -> String {
        format!(
            "{}, send lateness p99 {}",
            page::totals(self),
            format_time_us(self.send_lateness.p99 as f64)
        )
    }

    fn merged_line(&self) -> String {
        format!(
            "{}, latency p50 {} p99 {}, send lateness p99 {}",
            page::totals(self),
            format_time_us(self.latency.p50 as f64),
            format_time_us(self.latency.p99 as f64),
            format_time_us(self.send_lateness.p99 as f64)
        )
    }

    fn merge(parts: &[(&SavedRun, &str)], label: &str) -> Result<SavedRun, Error> {
        merge::merge(parts, label)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn page(&self) -> PageContent {
        page::page(self)
    }
}

#[cfg(test)]
mod tests {
    use super::page::{charts, page};
    use super::*;
    use crate::report::result::PageChart;
    use crate::report::schema::encode_histogram;
    use crate::report::timeline::IntervalSpan;
    use crate::report::timeline::{IntervalHistogram, SavedInterval};
    use crate::report::tools::compare;
    use crate::report::tools::saved::{LoadedRun, RunData};
    use crate::stats::new_histogram;
    use crate::stats::split::ResponseTimes;
    use crate::stats::split::{SplitHistograms, Timestamps};
    use crate::stats::{Errors, Unsent};
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
        for chart in charts(run) {
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
        let table =
            compare::render(&[loaded(new.clone()), loaded(older("old"))]).expect("compared");
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
        let lines = page(&new).lines;
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
        let table =
            compare::render(&[loaded(old.clone()), loaded(older("older"))]).expect("compared");
        for name in SPLIT_ROWS {
            assert!(!table.contains(name), "{name} in:\n{table}");
        }
        assert!(table.contains("Latency max"), "{table}");

        // No histogram to plot: the same error as for any name the run does not have.
        assert!(!old.plottable().contains(&"server_latency"));
        assert!(old.plotted(Some("server_latency")).is_none());
        match crate::report::tools::plot::render_svg(&[loaded(old.clone())], Some("server_latency"))
        {
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
        let lines = page(&old).lines;
        assert!(!lines.iter().any(|l| l.contains("Server's")), "{lines:?}");
    }
}
