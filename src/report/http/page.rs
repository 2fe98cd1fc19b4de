//! An HTTP run's page ([`SavedResult::page`]): the rate asked and reached, latency and
//! errors, the latency split; the run over time.

use super::intervals::SavedInterval;
use super::saved::SavedRun;
use crate::plan::{Protocol, Stage};
use crate::report::chart::{Bound, Series};
use crate::report::result::{figure, over_intervals, PageChart, PageContent, SavedResult};
use crate::report::timeline::{IntervalHistogram, SavedServerInterval};
use crate::stats::format::{counted, format_time_us};
use crate::stats::http::split::Timestamps;

/// An HTTP run's page: the rate asked and reached, latency and errors; the run over time.
pub(super) fn page(s: &SavedRun) -> PageContent {
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
        profile_figure(s).unwrap_or_else(|| {
            figure(
                "target",
                "Target rate",
                s.plan
                    .rate
                    .map_or("closed loop".to_string(), |r| format!("{r} req/s")),
                s.plan.rate.map(|r| r as f64),
            )
        }),
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
    // One cause, as the text report says it: a rate not reached, or why tsumo sent late.
    if let Some(shortfall) = &s.rate_shortfall {
        lines.push(shortfall.line());
    } else if let Some(behind) = &s.behind_schedule {
        lines.push(behind.line());
    }
    lines.extend(split_line(s));
    lines.extend(answer_lines(s));
    let protocol = match s.plan.protocol {
        Protocol::Http1 => "HTTP/1.1".to_string(),
        Protocol::Http2(h2) => format!("HTTP/2, {} streams per connection", h2.streams),
        Protocol::Http3(h3) => format!("HTTP/3, {} streams per connection", h3.streams),
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
        calm: Vec::new(),
        charts: charts(s),
    }
}

/// A `--stages` run's target: its profile, not the mean rate (`plan.rate`, still the value),
/// and how much of its integral (the stages' targets) was sent, e.g. `stages 0→2000→0 req/s
/// over 40 s, 98.6 % of the integral sent`. `None` without stages.
fn profile_figure(s: &SavedRun) -> Option<crate::report::result::Figure> {
    let stages = &s.plan.stages;
    let first = stages.first()?;
    let mut rates = vec![first.from];
    for stage in stages {
        for rate in [stage.from, stage.to] {
            if rates.last() != Some(&rate) {
                rates.push(rate);
            }
        }
    }
    let rates: Vec<String> = rates.iter().map(|r| r.to_string()).collect();
    let length_s = stages.iter().map(|st| st.duration_ns).sum::<u64>() as f64 / 1e9;
    let length = if length_s.fract() == 0.0 {
        format!("{length_s:.0} s")
    } else {
        format!("{length_s:.1} s")
    };
    let due: u64 = s.stages.iter().map(|stage| stage.target).sum();
    let sent: u64 = s.intervals.iter().map(|i| i.sent).sum();
    let share = match due {
        0 => String::new(),
        _ => format!(
            ", {:.1} % of the integral sent",
            sent as f64 * 100.0 / due as f64
        ),
    };
    Some(figure(
        "target",
        "Target",
        format!("stages {} req/s over {length}{share}", rates.join("→")),
        s.plan.rate.map(|r| r as f64),
    ))
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
    lines.extend(super::protocols::protocol_lines(&s.counters.protocol));
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

pub(super) fn charts(s: &SavedRun) -> Vec<PageChart> {
    let mut charts = Vec::new();
    let decoded = |encoded: &str| crate::report::schema::decode_histogram(encoded).ok();
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
    charts.extend(over_time(&s.intervals, s.plan.rate, &s.plan.stages));
    charts
}

/// Where each stage of a profile starts, as a chart over time marks it: numbered as written,
/// a jump (`0s:A-B`, which lasts nothing) left unmarked.
pub(super) fn stage_bounds(stages: &[Stage]) -> Vec<Bound> {
    let mut start_ns = 0u64;
    let mut bounds = Vec::new();
    for (i, stage) in stages.iter().enumerate() {
        if stage.duration_ns > 0 {
            bounds.push(Bound {
                x: start_ns as f64 / 1e9,
                label: format!("stage {}", i + 1),
            });
        }
        start_ns = start_ns.saturating_add(stage.duration_ns);
    }
    bounds
}

/// The run over time, from its intervals: the report's charts, and the live page's. The target
/// is each interval's (`-R`'s rate in files of older tsumos); `stages` marks where each starts
/// on the target's and the latency's charts.
pub(super) fn over_time(
    intervals: &[SavedInterval],
    rate: Option<u64>,
    stages: &[Stage],
) -> Vec<PageChart> {
    let mut charts = Vec::new();
    if intervals.is_empty() {
        return charts;
    }
    let bounds = stage_bounds(stages);
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
        bounds: bounds.clone(),
    });
    let mut rates = Vec::new();
    if intervals.iter().any(|i| i.target_rate.is_some()) {
        rates.push(Series::new("target", points(&|i| i.target_rate)));
    } else if let Some(rate) = rate {
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
        bounds,
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
        bounds: Vec::new(),
    });
    charts.push(PageChart::OverTime {
        id: "lateness-over-time",
        title: "Send lateness over time".to_string(),
        y_label: "Lateness (ms)".to_string(),
        series: three(|i| &i.send_lateness),
        per_shard: None,
        bounds: Vec::new(),
    });
    charts.extend(server_over_time(intervals));
    charts
}

/// The server's CPU and memory over time, where `--server-pid` sampled it.
fn server_over_time(intervals: &[SavedInterval]) -> Vec<PageChart> {
    let mut charts = Vec::new();
    if intervals.iter().any(|i| i.server.is_some()) {
        let server = |value: fn(&SavedServerInterval) -> f64| {
            over_intervals(intervals, |i| i.span, |i| i.server.as_ref().map(value))
        };
        charts.push(PageChart::OverTime {
            id: "server-cpu-over-time",
            title: "Server CPU over time".to_string(),
            y_label: "CPU (% of one core)".to_string(),
            series: vec![Series::new("server CPU", server(|v| v.cpu_percent))],
            per_shard: None,
            bounds: Vec::new(),
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
            bounds: Vec::new(),
        });
    }
    charts
}

/// How an HTTP run's line begins, a shard's and the merge's alike: rate, requests and socket
/// errors (as wrk's "Socket errors" counts them), e.g. `2000.0 req/s, 10010 requests, 0 errors`.
pub(super) fn totals(s: &SavedRun) -> String {
    format!(
        "{:.1} req/s, {}, {}",
        s.requests_per_sec,
        counted(s.counters.requests, "request"),
        counted(s.counters.errors.socket_total(), "error")
    )
}
