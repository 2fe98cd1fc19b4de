//! An HTTP run as a saved result: [`SavedRun`] through [`SavedResult`] — its rows, its
//! histograms, its lines in `tsumo merge`, its verdict, and how runs side by side merge.
//!
//! Merging is exact: histograms are decoded, added and encoded again, and percentiles are
//! recomputed from the sums with wrk2's arithmetic. Counters and rates are summed (the runs ran
//! side by side); elapsed time is the longest.

use std::any::Any;

use hdrhistogram::Histogram;

use super::chart::Series;
use super::json::{Percentiles, SavedRun};
use super::objectives;
use super::result::{
    add_encoded, add_sources, cut_by, duration_flag, figure, over_intervals, row, Named, PageChart,
    PageContent, Row, SavedResult, Unit,
};
use super::schema::encode_histogram;
use super::timeline::{self, IntervalHistogram, SavedInterval, SavedServerInterval};
use crate::error::Error;
use crate::slo::Verdict;
use crate::stats::format::{counted, format_time_us};
use crate::stats::new_histogram;
use crate::stats::split::{SplitHistograms, Timestamps};

/// The histograms a plot can show, the default first (`server_latency` only in runs that split
/// the latency: files of older tsumos have no such histogram).
const PLOTTED: [&str; 4] = ["latency", "uncorrected", "send_lateness", "server_latency"];

impl SavedResult for SavedRun {
    fn mode(&self) -> &'static str {
        "HTTP"
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn url(&self) -> &str {
        &self.plan.url
    }

    super::result::part_and_server_fields!();

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
        super::text::render_merged(self)
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
            totals(self),
            format_time_us(self.send_lateness.p99 as f64)
        )
    }

    fn merged_line(&self) -> String {
        format!(
            "{}, latency p50 {} p99 {}, send lateness p99 {}",
            totals(self),
            format_time_us(self.latency.p50 as f64),
            format_time_us(self.latency.p99 as f64),
            format_time_us(self.send_lateness.p99 as f64)
        )
    }

    fn merge(parts: &[(&SavedRun, &str)], label: &str) -> Result<SavedRun, Error> {
        merge(parts, label)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn page(&self) -> PageContent {
        page(self)
    }
}

/// An HTTP run's page: the rate asked and reached, latency and errors; the run over time.
fn page(s: &SavedRun) -> PageContent {
    let c = &s.counters;
    let errors = c.errors.socket_total() + c.errors.status;
    let time = |us: u64| format_time_us(us as f64);
    let has_latency = s.latency.count > 0;
    let latency = |id, name, us: u64| {
        figure(
            id,
            name,
            if has_latency {
                time(us)
            } else {
                "-".to_string()
            },
            has_latency.then_some(us as f64),
        )
    };
    let figures = vec![
        figure(
            "target",
            "Target rate",
            s.plan
                .rate
                .map_or("closed loop".to_string(), |r| format!("{r} req/s")),
            s.plan.rate.map(|r| r as f64),
        ),
        figure(
            "achieved",
            "Achieved",
            format!("{:.1} req/s", s.requests_per_sec),
            Some(s.requests_per_sec),
        ),
        latency("p50", "p50", s.latency.p50),
        latency("p99", "p99", s.latency.p99),
        latency("max", "max", s.latency.max),
        figure(
            "errors",
            "Errors",
            format!("{errors} of {}", c.requests + c.errors.socket_total()),
            Some(errors as f64),
        ),
    ];
    let mut lines = Vec::new();
    if let Some(shortfall) = &s.rate_shortfall {
        lines.push(shortfall.line());
    }
    lines.extend(split_line(s));
    lines.extend(answer_lines(s));
    let protocol = match &s.plan.http2 {
        Some(h2) => format!("HTTP/2, {} streams per connection", h2.streams),
        None => "HTTP/1.1".to_string(),
    };
    let facts = vec![
        (
            "Command".to_string(),
            format!("tsumo {} {}", s.load(), s.plan.url),
        ),
        ("Target".to_string(), s.plan.url.clone()),
        (
            "Plan".to_string(),
            format!(
                "{} threads, {} connections, {}s, timeout {}s, {protocol}",
                s.plan.threads, s.plan.connections, s.plan.duration_s, s.plan.timeout_s
            ),
        ),
        ("Ran".to_string(), format!("{:.2}s", s.elapsed_s)),
        ("Version".to_string(), format!("tsumo {}", s.version)),
    ];
    PageContent {
        kind: "HTTP run".to_string(),
        figures,
        lines,
        facts,
        charts: charts(s),
    }
}

/// The server's latency under the corrected figures, with tsumo's own delay that makes the
/// difference: what a latency objective judges. None in files of older tsumos, and in a run
/// without a response.
fn split_line(s: &SavedRun) -> Option<String> {
    let server = s.server_latency.filter(|p| p.count > 0)?;
    let t = |us: u64| format_time_us(us as f64);
    let own = s.own_delay.map_or(String::new(), |o| {
        format!("; tsumo's own delay: p99 {}", t(o.total.p99))
    });
    // As the text report says it: with user-space stamps tsumo's read delay is in the server's.
    let stamps = match s.timestamps {
        Timestamps::Kernel => "kernel receive timestamps",
        Timestamps::User => "user-space timestamps: tsumo's read delay is in it",
    };
    Some(format!(
        "Server's latency: p50 {}, p99 {}, max {}{own} ({stamps})",
        t(server.p50),
        t(server.p99),
        t(server.max)
    ))
}

/// The lines under the figures besides the rate: how the run ended, its objectives, its notes.
fn answer_lines(s: &SavedRun) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(verdict) = s.verdict() {
        lines.push(format!("Failed: {verdict}"));
    }
    // What the server got wrong, named and quoted (a run that failed on it says nothing else).
    lines.extend(super::text::protocol_lines(&s.counters.protocol));
    if let Some(signal) = s.cut_by_signal() {
        lines.push(format!("Cut short by {signal} after {:.2}s", s.elapsed_s));
    }
    for v in &s.objectives {
        let held = if v.held { "held" } else { "BROKE" };
        lines.push(format!(
            "Objective {}: {held} ({})",
            v.expr,
            v.measured_text()
        ));
    }
    lines
}

fn charts(s: &SavedRun) -> Vec<PageChart> {
    let mut charts = Vec::new();
    let decoded = |encoded: &str| super::schema::decode_histogram(encoded).ok();
    if let (Some(corrected), Some(uncorrected)) = (
        decoded(&s.histograms.latency),
        decoded(&s.histograms.uncorrected),
    ) {
        let mut curves = vec![Series::from_histogram("corrected", &corrected)];
        // The server's share beside the corrected latency it is part of: how far apart they
        // are is tsumo's own delay (files of older tsumos have no split).
        let split = s.histograms.split.as_ref();
        if let Some(server) = split.and_then(|split| decoded(&split.server_latency)) {
            curves.push(Series::from_histogram("server's", &server));
        }
        curves.push(Series::from_histogram("uncorrected", &uncorrected));
        charts.push(PageChart::Percentile {
            id: "latency-by-percentile",
            title: "Latency by percentile".to_string(),
            y_what: "Latency".to_string(),
            curves,
        });
    }
    let intervals = &s.intervals;
    if intervals.is_empty() {
        return charts;
    }
    let end = |i: &SavedInterval| i.span;
    let points =
        |value: &dyn Fn(&SavedInterval) -> Option<f64>| over_intervals(intervals, end, value);
    let ms = |h: &IntervalHistogram, us: u64| (h.count > 0).then_some(us as f64 / 1000.0);
    let per_s =
        |i: &SavedInterval, n: u64| (i.span.duration_s > 0.0).then(|| n as f64 / i.span.duration_s);
    let three = |pick: fn(&SavedInterval) -> &IntervalHistogram| {
        vec![
            Series::new("p50", points(&|i| ms(pick(i), pick(i).p50))),
            Series::new("p99", points(&|i| ms(pick(i), pick(i).p99))),
            Series::new("max", points(&|i| ms(pick(i), pick(i).max))),
        ]
    };
    let mut latency = three(|i| &i.latency);
    // The server's p99 on the corrected latency's axis, where the intervals split it (files of
    // older tsumos do not); after the corrected three, so the key series stays their p99.
    if intervals.iter().any(|i| i.server_latency.is_some()) {
        let server = |i: &SavedInterval| i.server_latency.as_ref().and_then(|h| ms(h, h.p99));
        latency.push(Series::new("server's p99", points(&server)));
    }
    charts.push(PageChart::OverTime {
        id: "latency-over-time",
        title: "Latency over time (corrected)".to_string(),
        y_label: "Latency (ms)".to_string(),
        series: latency,
        per_shard: Some(1),
    });
    let mut rates = Vec::new();
    if let Some(rate) = s.plan.rate {
        rates.push(Series::new("target", points(&|_| Some(rate as f64))));
    }
    rates.push(Series::new("sent", points(&|i| per_s(i, i.sent))));
    rates.push(Series::new("completed", points(&|i| per_s(i, i.completed))));
    let completed = rates.len() - 1;
    charts.push(PageChart::OverTime {
        id: "rate-over-time",
        title: "Rate over time".to_string(),
        y_label: "Requests/s".to_string(),
        series: rates,
        per_shard: Some(completed),
    });
    charts.push(PageChart::OverTime {
        id: "errors-over-time",
        title: "Errors over time".to_string(),
        y_label: "Per interval".to_string(),
        series: vec![
            Series::new(
                "errors",
                points(&|i| Some((i.errors.socket_total() + i.errors.status) as f64)),
            ),
            Series::new("never sent", points(&|i| Some(i.unsent.total() as f64))),
        ],
        per_shard: None,
    });
    charts.push(PageChart::OverTime {
        id: "lateness-over-time",
        title: "Send lateness over time".to_string(),
        y_label: "Lateness (ms)".to_string(),
        series: three(|i| &i.send_lateness),
        per_shard: None,
    });
    if intervals.iter().any(|i| i.server.is_some()) {
        let server =
            |value: fn(&SavedServerInterval) -> f64| points(&|i| i.server.as_ref().map(value));
        charts.push(PageChart::OverTime {
            id: "server-cpu-over-time",
            title: "Server CPU over time".to_string(),
            y_label: "CPU (% of one core)".to_string(),
            series: vec![Series::new("server CPU", server(|v| v.cpu_percent))],
            per_shard: None,
        });
        charts.push(PageChart::OverTime {
            id: "server-memory-over-time",
            title: "Server memory over time".to_string(),
            y_label: "Resident memory (MB)".to_string(),
            series: vec![Series::new(
                "server memory",
                server(|v| v.rss_bytes as f64 / 1e6),
            )],
            per_shard: None,
        });
    }
    charts
}

/// How an HTTP run's line begins, a shard's and the merge's alike: rate, requests and socket
/// errors (as wrk's "Socket errors" counts them), e.g. `2000.0 req/s, 10010 requests, 0 errors`.
fn totals(s: &SavedRun) -> String {
    format!(
        "{:.1} req/s, {}, {}",
        s.requests_per_sec,
        counted(s.counters.requests, "request"),
        counted(s.counters.errors.socket_total(), "error")
    )
}

fn merge(saved: &[(&SavedRun, &str)], label: &str) -> Result<SavedRun, Error> {
    let judged: Vec<_> = saved.iter().map(|(r, s)| (&r.objectives[..], *s)).collect();
    objectives::refuse_different(&judged)?;
    // Kernel and user-space stamps are not one measure: never added into one histogram.
    let (first, first_source) = saved[0];
    if let Some((other, source)) = saved.iter().find(|(r, _)| r.timestamps != first.timestamps) {
        return Err(Error::Usage(format!(
            "merge: {first_source} was timed with {} timestamps but {source} with {}; their \
             latencies are not one measure",
            first.timestamps.as_str(),
            other.timestamps.as_str()
        )));
    }
    // Every field not summed below is the first run's (the same tool wrote them all).
    let mut merged = saved[0].0.clone();
    let mut histograms: [Histogram<u64>; 4] = std::array::from_fn(|_| new_histogram());
    let names = ["latency", "uncorrected", "send_lateness", "req_per_sec"];
    merged.counters = Default::default();
    merged.requests_per_sec = 0.0;
    merged.bytes_per_sec = 0.0;
    merged.elapsed_s = 0.0;
    merged.notes.clear();
    merged.plan.threads = 0;
    merged.plan.connections = 0;
    merged.plan.rate = Some(0);
    // The split, where every part has one (files of older tsumos have none).
    let mut split = saved
        .iter()
        .all(|(run, _)| run.histograms.split.is_some())
        .then(SplitHistograms::default);
    for (run, source) in saved {
        merged.counters.add(&run.counters);
        merged.elapsed_s = merged.elapsed_s.max(run.elapsed_s);
        merged.interrupted |= run.interrupted;
        merged.plan.threads += run.plan.threads;
        merged.plan.connections += run.plan.connections;
        merged.plan.duration_s = merged.plan.duration_s.max(run.plan.duration_s);
        merged.plan.rate = merged.plan.rate.zip(run.plan.rate).map(|(a, b)| a + b);
        add_sources(&mut merged.plan.bind, &run.plan.bind);
        let h = &run.histograms;
        let encoded = [&h.latency, &h.uncorrected, &h.send_lateness, &h.req_per_sec];
        for ((sum, encoded), name) in histograms.iter_mut().zip(encoded).zip(names) {
            add_encoded(sum, encoded, source, name)?;
        }
        if let (Some(sum), Some(part)) = (split.as_mut(), &h.split) {
            for (sum, (name, encoded)) in sum.parts_mut().into_iter().zip(part.encoded()) {
                add_encoded(sum, encoded, source, name)?;
            }
        }
        for note in &run.notes {
            if !merged.notes.contains(note) {
                merged.notes.push(note.clone());
            }
        }
    }
    let script_errors: Vec<String> = saved
        .iter()
        .filter_map(|(run, source)| {
            let e = run.script_error.as_ref()?;
            Some(if saved.len() == 1 {
                e.clone()
            } else {
                format!("{source}: {e}")
            })
        })
        .collect();
    merged.script_error = (!script_errors.is_empty()).then(|| script_errors.join("; "));
    let [latency, uncorrected, send_lateness, req_per_sec] = &histograms;
    merged.latency = Percentiles::of(latency);
    merged.uncorrected = Percentiles::of(uncorrected);
    merged.send_lateness = Percentiles::of(send_lateness);
    merged.histograms.latency = encode_histogram(latency);
    merged.histograms.uncorrected = encode_histogram(uncorrected);
    merged.histograms.send_lateness = encode_histogram(send_lateness);
    merged.histograms.req_per_sec = encode_histogram(req_per_sec);
    match &split {
        Some(split) => merged.set_split(split),
        None => {
            merged.server_latency = None;
            merged.own_delay = None;
            merged.user_latency = None;
            merged.histograms.split = None;
        }
    }
    // The runs went on side by side: the rates are the totals over the whole interval, the
    // longest run's (a 1 s run and an 8 s run did not add their rates for 8 s).
    if merged.elapsed_s > 0.0 {
        let over_all = |rate: fn(&SavedRun) -> f64| -> f64 {
            saved
                .iter()
                .map(|(run, _)| rate(run) * (run.elapsed_s / merged.elapsed_s))
                .sum()
        };
        merged.requests_per_sec = over_all(|r| r.requests_per_sec);
        merged.bytes_per_sec = over_all(|r| r.bytes_per_sec);
    }
    let intervals: Vec<_> = saved
        .iter()
        .map(|(r, src)| (&r.intervals[..], *src))
        .collect();
    merged.intervals = timeline::merge_http(&intervals)?;
    // The parts' objectives (the same in every part), judged on the whole.
    merged.objectives = objectives::judge_run_again(&merged);
    merged.label = label.to_string();
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare;
    use crate::report::saved::{LoadedRun, RunData};
    use crate::report::timeline::IntervalSpan;
    use crate::stats::split::ResponseTimes;
    use crate::stats::{Errors, Unsent};

    const SPLIT_ROWS: [&str; 3] = [
        "Server's latency p50",
        "Server's latency p99",
        "tsumo's own delay p99",
    ];

    /// A run saved by an older tsumo: no split anywhere, no intervals.
    fn older(label: &str) -> SavedRun {
        let mut run: SavedRun =
            serde_json::from_str(include_str!("../../tests/fixtures/http-direct-v1.json"))
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
        let latency = super::super::schema::decode_histogram(&old.histograms.latency).expect("ok");
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
        match super::super::plot::render_svg(&[loaded(old.clone())], Some("server_latency")) {
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
