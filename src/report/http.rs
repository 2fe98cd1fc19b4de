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
use crate::stats::split::SplitHistograms;

/// The histograms a plot can show, the default first.
const PLOTTED: [&str; 3] = ["latency", "uncorrected", "send_lateness"];

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
            ("Server CPU% mean", "server CPU"),
        ]
    }

    fn plottable(&self) -> Vec<&str> {
        PLOTTED.to_vec()
    }

    fn plotted(&self, name: Option<&str>) -> Option<Named<'_>> {
        let h = &self.histograms;
        let encoded = match name.unwrap_or(PLOTTED[0]) {
            "latency" => &h.latency,
            "uncorrected" => &h.uncorrected,
            "send_lateness" => &h.send_lateness,
            _ => return None,
        };
        let title = match name {
            None | Some("latency") => {
                "Latency by percentile (corrected for coordinated omission)".to_string()
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
        charts.push(PageChart::Percentile {
            id: "latency-by-percentile",
            title: "Latency by percentile".to_string(),
            y_what: "Latency".to_string(),
            curves: vec![
                Series::from_histogram("corrected", &corrected),
                Series::from_histogram("uncorrected", &uncorrected),
            ],
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
    charts.push(PageChart::OverTime {
        id: "latency-over-time",
        title: "Latency over time (corrected)".to_string(),
        y_label: "Latency (ms)".to_string(),
        series: three(|i| &i.latency),
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
