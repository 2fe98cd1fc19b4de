//! A capacity search's page ([`SavedResult::page`]): the capacity, what broke and the answer
//! step's figures; one curve per objective against offered load, the answer marked.

use super::SavedSearch;
use crate::report::chart::{Answer, Objective, Series};
use crate::report::result::{figure, PageChart, PageContent, SavedResult, SearchStep, StepView};
use crate::slo;
use crate::stats::format::format_time_us;

/// The step that held at the answer (the last one run at it).
fn answer_step<'a, S>(
    search: &SavedSearch<S>,
    views: &'a [StepView<'a>],
) -> Option<&'a StepView<'a>> {
    let value = search.capacity.value?;
    views
        .iter()
        .zip(&search.outcomes)
        .rev()
        .find(|(view, outcome)| view.target == Some(value) && outcome.as_str() == "held")
        .map(|(view, _)| view)
}

/// What set an answer other than the server, in words: `Limited by --to: every step held up
/// to 10,000 requests/sec`, `Stopped at 2000: SIGINT`.
fn limited_line(c: &crate::capacity::SavedCapacity) -> String {
    let value = c.value.map_or("-".to_string(), crate::capacity::grouped);
    match c.limited_by.as_str() {
        "to" => format!("Limited by --to: every step held up to {value} {}", c.unit),
        "generator" => format!("Limited by the generator {}", c.reason),
        "system" => format!("Limited by the machine {}", c.reason),
        "stopped" => format!("Stopped {}", c.reason),
        "noise" => format!("Cannot tell {}", c.reason),
        other => format!("Limited by {other}: {}", c.reason),
    }
}

/// A search's page: the capacity, what broke, the answer step's figures; the curve.
pub(super) fn page<S: SearchStep>(search: &SavedSearch<S>) -> PageContent {
    let c = &search.capacity;
    let views = search.views();
    let step = answer_step(search, &views);
    let unit = &c.unit;
    let (achieved_unit, measure) = (S::ACHIEVED_UNIT, S::MEASURE);
    let mut figures = vec![
        figure(
            "capacity",
            "Capacity",
            c.value.map_or("none held".to_string(), |v| {
                // Only the server's limit is the capacity itself; any other is a floor.
                let floor = if c.limited_by == "server" {
                    ""
                } else {
                    "at least "
                };
                format!("{floor}{} {unit}", crate::capacity::grouped(v))
            }),
            c.value.map(|v| v as f64),
        ),
        figure(
            "broke",
            "Lowest broken",
            c.broke.iter().min().map_or("none".to_string(), |v| {
                format!("{} {unit}", crate::capacity::grouped(*v))
            }),
            c.broke.iter().min().map(|v| *v as f64),
        ),
    ];
    if let Some(view) = step {
        let time = |id, name: &str, us: u64| {
            figure(
                id,
                &format!("{measure}{name} there"),
                format_time_us(us as f64),
                Some(us as f64),
            )
        };
        figures.extend([
            figure(
                "achieved",
                "Achieved there",
                format!("{} {achieved_unit}", view.achieved),
                view.achieved_value,
            ),
            time("p50", "p50", view.p50),
            time("p99", "p99", view.p99),
            time("max", "max", view.max),
            figure("errors", "Errors there", view.errors.clone(), None),
        ]);
    }
    let mut lines = vec![c.answer.clone()];
    if let Some(first) = &c.broke_first {
        lines.push(first.clone());
    }
    // The server's limit is the answer line's own words; tsumo's or the machine's is said.
    if !c.reason.is_empty() && c.limited_by != "server" {
        lines.push(limited_line(c));
    }
    if let Some(verdict) = search.verdict() {
        lines.push(format!("Failed: {verdict}"));
    }
    let objectives = search.objectives();
    let slos = objectives
        .iter()
        .map(|o| format!("--slo '{o}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let command = search
        .steps
        .first()
        .map(|first| first.search_command(&slos, &search.url));
    let mut facts: Vec<(String, String)> = command
        .map(|command| ("Command".to_string(), command))
        .into_iter()
        .collect();
    facts.extend([
        ("Target".to_string(), search.url.clone()),
        (
            "Plan".to_string(),
            format!(
                "{} steps ({}), objectives {}",
                search.steps.len(),
                search.roles.join(", "),
                objectives.join(", ")
            ),
        ),
        (
            "Ran".to_string(),
            format!("{:.2}s of steps", search.elapsed_s()),
        ),
        ("Version".to_string(), format!("tsumo {}", search.version)),
    ]);
    PageContent {
        kind: "Capacity search".to_string(),
        figures,
        lines,
        facts,
        charts: curves(search),
    }
}

/// One curve per objective (its measure against offered load, its limit across), or p99
/// against load when the search had none; the answer marked on each.
fn curves<S: SearchStep>(search: &SavedSearch<S>) -> Vec<PageChart> {
    let c = &search.capacity;
    let answer = c.value.map(|v| Answer {
        name: format!("capacity: {} {}", crate::capacity::grouped(v), c.unit),
        x: v as f64,
    });
    let x_label = format!("Offered load ({})", c.unit);
    let views = search.views();
    let load = |view: &StepView| view.target.map(|r| r as f64);
    let exprs = search.objectives();
    let mut charts = Vec::new();
    let ids = [
        "capacity-curve",
        "capacity-curve-2",
        "capacity-curve-3",
        "capacity-curve-4",
    ];
    for (expr, id) in exprs.iter().zip(ids) {
        let verdicts = views.iter().filter_map(|view| {
            let v = view.objectives.iter().find(|v| &v.expr == expr)?;
            Some((load(view)?, v))
        });
        let Some(unit) = verdicts.clone().next().map(|(_, v)| v.unit) else {
            continue;
        };
        let scale = |value: f64| match unit {
            slo::Unit::Micros => value / 1000.0,
            _ => value,
        };
        let unit_name = match unit {
            slo::Unit::Micros => "ms",
            slo::Unit::Percent => "%",
            slo::Unit::Count => "count",
        };
        let mut points: Vec<(f64, f64)> = verdicts
            .filter_map(|(x, v)| Some((x, scale(v.measured?))))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let name = slo::name_of(expr).to_string();
        let objectives = slo::parse_http(expr)
            .or_else(|_| slo::parse_mahjong(expr, &[]))
            .ok()
            .map(|o| Objective {
                name: format!("objective: {expr}"),
                y: scale(o.limit),
            })
            .into_iter()
            .collect();
        charts.push(PageChart::Capacity {
            id,
            title: format!("{name} against offered load"),
            axes: (x_label.clone(), format!("{name} ({unit_name})")),
            measured: vec![Series::new(name, points)],
            objectives,
            answer: answer.clone(),
        });
    }
    if charts.is_empty() {
        let mut points: Vec<(f64, f64)> = views
            .iter()
            .filter_map(|view| Some((load(view)?, view.p99 as f64 / 1000.0)))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        charts.push(PageChart::Capacity {
            id: ids[0],
            title: "p99 against offered load".to_string(),
            axes: (x_label, "p99 (ms)".to_string()),
            measured: vec![Series::new("p99", points)],
            objectives: Vec::new(),
            answer,
        });
    }
    charts
}
