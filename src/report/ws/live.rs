//! A WebSocket run as it goes (`--dashboard`): messages per second, the round trip and the
//! messages without a reply from the intervals its workers handed over, and the report's
//! charts over time of the whole ones.

use super::intervals::{saved, SavedWsInterval};
use super::page::over_time;
use crate::report::result::{figure, PageContent};
use crate::report::timeline;
use crate::stats::format::format_time_us;
use crate::stats::hdr;
use crate::stats::live::LiveRun;
use crate::stats::ws::live;

/// The whole intervals of the current run laid out so far.
pub type Laid = timeline::Laid<SavedWsInterval>;

/// The live page's content of a WebSocket run (`laid`: what earlier renders laid out).
pub fn content(run: &LiveRun, w: &live::Data, laid: &mut Laid) -> PageContent {
    let elapsed_s = laid.lay(run, &w.intervals, saved, |i| &mut i.span.start_s);
    let sum = &w.totals.counts;
    let h = &w.totals.round_trip;
    let at = |p: f64| (!h.is_empty()).then(|| hdr::value_at_percentile(h, p));
    let time = |id, name: &str, v: Option<u64>| {
        figure(
            id,
            name,
            v.map_or("-".to_string(), |v| format_time_us(v as f64)),
            v.map(|v| v as f64),
        )
    };
    let count = |id, name: &str, n: u64| figure(id, name, n.to_string(), Some(n as f64));
    let per_second = laid
        .intervals
        .last()
        .map(|i| i.answered as f64 / i.span.duration_s.max(1e-9));
    let figures = vec![
        figure(
            "achieved",
            "Messages/sec",
            per_second.map_or("-".to_string(), |r| format!("{r:.0}")),
            per_second,
        ),
        time("p50", "Round trip p50", at(50.0)),
        time("p99", "Round trip p99", at(99.0)),
        count("sent", "Sent", sum.sent),
        count("answered", "Answered", sum.answered),
        count("errors", "Unanswered", sum.unanswered),
        count("disconnects", "Disconnects", sum.disconnects),
    ];
    PageContent {
        kind: if run.ended {
            "WebSocket run (ended)".to_string()
        } else {
            "WebSocket run (live)".to_string()
        },
        figures,
        lines: Vec::new(),
        calm: Vec::new(),
        facts: vec![(
            "Ran".to_string(),
            format!("{elapsed_s:.0}s of whole intervals"),
        )],
        charts: over_time(&laid.intervals),
    }
}
