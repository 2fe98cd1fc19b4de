//! A WebSocket run's page ([`SavedResult::page`]): messages per second and the round trip's
//! percentiles, the messages without a reply, the verdict and objectives; the round trip by
//! percentile, and the run over time (also the live page's).

use super::intervals::SavedWsInterval;
use super::saved::SavedWsRun;
use crate::report::chart::Series;
use crate::report::result::{duration_flag, figure, over_intervals, Figure, PageChart};
use crate::report::result::{PageContent, SavedResult};
use crate::report::schema::decode_histogram;
use crate::stats::format::format_time_us;

/// The run's page.
pub(super) fn page(s: &SavedWsRun) -> PageContent {
    PageContent {
        kind: "WebSocket run".to_string(),
        figures: figures(s),
        lines: lines(s),
        facts: facts(s),
        calm: Vec::new(),
        charts: charts(s),
    }
}

fn figures(s: &SavedWsRun) -> Vec<Figure> {
    let m = &s.messages;
    let per_second = m.answered as f64 / s.elapsed_s.max(1e-9);
    let h = s.round_trip.sampled();
    let time = |id, name: &str, pick: fn(&crate::report::histogram::SavedHistogram) -> u64| {
        figure(
            id,
            name,
            h.map_or("-".to_string(), |h| format_time_us(pick(h) as f64)),
            h.map(|h| pick(h) as f64),
        )
    };
    let unanswered = m.unanswered + m.timed_out;
    let mut figures = Vec::new();
    if let Some(rate) = s.plan.rate {
        figures.push(figure(
            "target",
            "Target",
            rate.to_string(),
            Some(rate as f64),
        ));
    }
    figures.extend([
        figure(
            "achieved",
            "Messages/sec",
            format!("{per_second:.2}"),
            Some(per_second),
        ),
        time("p50", "Round trip p50", |h| h.p50),
        time("p99", "Round trip p99", |h| h.p99),
        time("max", "Round trip max", |h| h.max),
        figure(
            "errors",
            "Unanswered",
            unanswered.to_string(),
            Some(unanswered as f64),
        ),
    ]);
    figures
}

/// The sentences under the figures: a failure, a cut, the objectives.
fn lines(s: &SavedWsRun) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(verdict) = s.verdict() {
        lines.push(format!("Failed: {verdict}"));
    }
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

fn facts(s: &SavedWsRun) -> Vec<(String, String)> {
    let p = &s.plan;
    let rate = p.rate.map_or(String::new(), |r| format!(" -R {r}"));
    vec![
        (
            "Command".to_string(),
            format!(
                "tsumo ws -t {} -c {} {}{rate} --size {} {}",
                p.threads,
                p.connections,
                duration_flag(p.duration_s),
                p.size,
                p.url
            ),
        ),
        ("Target".to_string(), p.url.clone()),
        ("Ran".to_string(), format!("{:.2}s", s.elapsed_s)),
        ("Version".to_string(), format!("tsumo {}", s.version)),
    ]
}

fn charts(s: &SavedWsRun) -> Vec<PageChart> {
    let mut charts = Vec::new();
    let curves: Vec<Series> = [
        ("round trip", &s.round_trip),
        ("uncorrected", &s.round_trip_uncorrected),
    ]
    .into_iter()
    .filter_map(|(name, h)| {
        let decoded = decode_histogram(&h.sampled()?.histogram).ok()?;
        Some(Series::from_histogram(name, &decoded))
    })
    .collect();
    if !curves.is_empty() {
        charts.push(PageChart::Percentile {
            id: "latency-by-percentile",
            title: "Round trip by percentile".to_string(),
            y_what: "Round trip".to_string(),
            curves,
        });
    }
    charts.extend(over_time(&s.intervals));
    charts
}

/// The run over time, from its intervals: the page's charts, and the live page's.
pub(super) fn over_time(intervals: &[SavedWsInterval]) -> Vec<PageChart> {
    if intervals.is_empty() {
        return Vec::new();
    }
    let points = |value: &dyn Fn(&SavedWsInterval) -> Option<f64>| {
        over_intervals(intervals, |i| i.span, value)
    };
    let per_second = |n: u64, i: &SavedWsInterval| Some(n as f64 / i.span.duration_s.max(1e-9));
    let ms = |i: &SavedWsInterval, us: u64| (i.round_trip.count > 0).then_some(us as f64 / 1e3);
    vec![
        PageChart::OverTime {
            id: "messages-over-time",
            title: "Messages per second over time".to_string(),
            y_label: "Messages/s".to_string(),
            series: vec![
                Series::new("sent", points(&|i| per_second(i.sent, i))),
                Series::new("answered", points(&|i| per_second(i.answered, i))),
                Series::new("unanswered", points(&|i| per_second(i.unanswered, i))),
            ],
            per_shard: Some(1),
            bounds: Vec::new(),
        },
        PageChart::OverTime {
            id: "latency-over-time",
            title: "Round trip over time".to_string(),
            y_label: "Round trip (ms)".to_string(),
            series: vec![
                Series::new("p50", points(&|i| ms(i, i.round_trip.p50))),
                Series::new("p99", points(&|i| ms(i, i.round_trip.p99))),
                Series::new("max", points(&|i| ms(i, i.round_trip.max))),
            ],
            per_shard: Some(1),
            bounds: Vec::new(),
        },
    ]
}
