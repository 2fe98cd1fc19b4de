//! A capacity search's page ([`SavedResult::page`]): the capacity, what broke and the answer
//! step's figures; one curve per objective against offered load, the answer marked.

use super::SavedSearch;
use crate::capacity::Class;
use crate::report::chart::{Answer, Objective, Series, Shape};
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
        .find(|(view, outcome)| view.target == Some(value) && **outcome == Class::Held)
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

/// The answer's verdict, as its card names it: the server's limit, or why the answer is a
/// floor or no answer.
fn verdict_words(limited_by: &str) -> String {
    match limited_by {
        "server" => "the server's limit".to_string(),
        "to" => "a floor: every step held up to --to".to_string(),
        "generator" => "a floor: tsumo's own limit".to_string(),
        "pool" => "a floor: tsumo's connections".to_string(),
        "system" => "a floor: the machine's limit".to_string(),
        "stopped" => "a floor: the search was stopped".to_string(),
        "server-failed" => "the server failed".to_string(),
        "noise" => "cannot tell".to_string(),
        other => format!("limited by {other}"),
    }
}

/// The answer card: the capacity with its range, named by its verdict (`Capacity: the server's
/// limit` — `15,600 requests/sec, range 15,200–16,000`); and the lowest load that broke above
/// it, so that no card reads as a contradiction (a load below the answer that broke on one
/// trial and held on another is inside the range, not "broken" beside a higher capacity).
fn answer_cards(c: &crate::capacity::SavedCapacity) -> [crate::report::result::Figure; 2] {
    let unit = &c.unit;
    let grouped = crate::capacity::grouped;
    let mut shown = c.value.map_or("none held".to_string(), |v| {
        // Only the server's limit is the capacity itself; any other is a floor.
        let floor = if c.limited_by == "server" {
            ""
        } else {
            "at least "
        };
        format!("{floor}{} {unit}", grouped(v))
    });
    if let Some([low, high]) = c.range {
        shown.push_str(&format!(", range {}–{}", grouped(low), grouped(high)));
    }
    let capacity = figure(
        "capacity",
        &format!("Capacity: {}", verdict_words(&c.limited_by)),
        shown,
        c.value.map(|v| v as f64),
    );
    let above = |v: &&u64| c.value.is_none_or(|held| **v > held);
    let broke = c.broke.iter().filter(above).min();
    let name = match c.value {
        Some(_) => "Lowest broken above it",
        None => "Lowest broken",
    };
    let broke = figure(
        "broke",
        name,
        broke.map_or("none".to_string(), |v| format!("{} {unit}", grouped(*v))),
        broke.map(|v| *v as f64),
    );
    [capacity, broke]
}

/// A search's page: the capacity, what broke, the answer step's figures; the curve.
pub(super) fn page<S: SearchStep>(search: &SavedSearch<S>) -> PageContent {
    let c = &search.capacity;
    let views = search.views();
    let step = answer_step(search, &views);
    let (achieved_unit, measure) = (S::ACHIEVED_UNIT, S::MEASURE);
    let mut figures = answer_cards(c).to_vec();
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
    let mut calm = Vec::new();
    if let Some(first) = &c.broke_first {
        lines.push(first.clone());
        // An alarm only when the search did not find its answer (the server's limit).
        let found = c.value.is_some() && c.limited_by == "server" && search.verdict().is_none();
        if found {
            calm.push(first.clone());
        }
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
                search
                    .roles
                    .iter()
                    .map(|role| role.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                objectives.join(", ")
            ),
        ),
        (
            "Ran".to_string(),
            match search.whole_s() {
                Some(whole) => format!(
                    "{:.2}s of steps, {whole:.2}s in all (warm-ups, pauses, steps run again)",
                    search.elapsed_s()
                ),
                None => format!("{:.2}s of steps", search.elapsed_s()),
            },
        ),
        ("Version".to_string(), format!("tsumo {}", search.version)),
    ]);
    PageContent {
        kind: "Capacity search".to_string(),
        figures,
        lines,
        facts,
        calm,
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
        let verdicts = views
            .iter()
            .zip(&search.outcomes)
            .filter_map(|(view, outcome)| {
                let v = view.objectives.iter().find(|v| &v.expr == expr)?;
                // This objective's own verdict, on a step that was judged at all.
                let judged = match (outcome_of(outcome), v.held) {
                    (Outcome::Neither, _) => Outcome::Neither,
                    (_, true) => Outcome::Held,
                    (_, false) => Outcome::Broke,
                };
                Some((load(view)?, v, judged))
            });
        let Some(unit) = verdicts.clone().next().map(|(_, v, _)| v.unit) else {
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
        let trials: Vec<Trial> = verdicts
            .filter_map(|(x, v, judged)| Some((x, scale(v.measured?), judged)))
            .collect();
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
            measured: by_load(&name, &trials),
            objectives,
            answer: answer.clone(),
        });
    }
    if charts.is_empty() {
        let trials: Vec<Trial> = views
            .iter()
            .zip(&search.outcomes)
            .filter_map(|(view, outcome)| Some((load(view)?, view.p99 as f64 / 1000.0, outcome)))
            .map(|(x, y, outcome)| (x, y, outcome_of(outcome)))
            .collect();
        charts.push(PageChart::Capacity {
            id: ids[0],
            title: "p99 against offered load".to_string(),
            axes: (x_label, "p99 (ms)".to_string()),
            measured: by_load("p99", &trials),
            objectives: Vec::new(),
            answer,
        });
    }
    charts
}

/// One trial of a step: its load, its measure, and its outcome.
type Trial = (f64, f64, Outcome);

/// How a trial's marker reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Held,
    Broke,
    /// Limited by tsumo or the machine, or stopped: judged neither way.
    Neither,
}

fn outcome_of(saved: &Class) -> Outcome {
    match saved {
        Class::Held => Outcome::Held,
        Class::Broke => Outcome::Broke,
        _ => Outcome::Neither,
    }
}

/// A measure against load, whatever order the search visited the loads in: a line through
/// the median of each load's trials, by load ascending (a line in visit order zigzags), and
/// every trial marked: held filled, broke a cross, neither a ring.
fn by_load(name: &str, trials: &[Trial]) -> Vec<Series> {
    let mut sorted = trials.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut line: Vec<(f64, f64)> = Vec::new();
    for (i, trial) in sorted.iter().enumerate() {
        if line.last().is_some_and(|p| p.0 == trial.0) {
            continue;
        }
        let same: Vec<f64> = sorted[i..]
            .iter()
            .take_while(|t| t.0 == trial.0)
            .map(|t| t.1)
            .collect();
        line.push((trial.0, same[same.len() / 2]));
    }
    let mut series = vec![Series::new(name, line).coloured(0, 0)];
    for (outcome, words, shape, colour) in [
        (Outcome::Held, "held", Shape::Filled, 2),
        (Outcome::Broke, "broke", Shape::Cross, 1),
        (Outcome::Neither, "not judged (limited)", Shape::Hollow, 8),
    ] {
        let points: Vec<(f64, f64)> = sorted
            .iter()
            .filter(|t| t.2 == outcome)
            .map(|t| (t.0, t.1))
            .collect();
        if !points.is_empty() {
            let shown = format!("{name}, a step that {words}");
            let shown = match outcome {
                Outcome::Neither => format!("{name}, a step {words}"),
                _ => shown,
            };
            series.push(
                Series::new(shown, points)
                    .markers(shape)
                    .coloured(colour, 0),
            );
        }
    }
    series
}

#[cfg(test)]
mod tests {
    use super::super::tests::search;
    use super::*;

    /// The search's visits, out of order, one load run three times.
    const VISITS: [(u64, u64, &str); 6] = [
        (200, 2_000, "held"),
        (800, 6_000_000, "broke"),
        (400, 3_000, "held"),
        (600, 90_000, "broke"),
        (600, 40_000, "held"),
        (600, 70_000, "broke"),
    ];

    #[test]
    fn the_curve_is_by_load_with_every_trial_marked_by_its_outcome() {
        let page = search(&VISITS, Some(400), "server").page();
        let Some(PageChart::Capacity { measured, .. }) = page.charts.first() else {
            panic!("no capacity chart: {:?}", page.charts);
        };
        // The line: by load ascending, through the median of each load's trials.
        assert_eq!(
            measured[0].points,
            [(200.0, 2.0), (400.0, 3.0), (600.0, 70.0), (800.0, 6000.0)]
        );
        assert!(measured[0].joined);
        // Every trial marked, held apart from broke (and named so in the legend).
        let held = &measured[1];
        assert_eq!(held.marker, Some(Shape::Filled));
        assert!(!held.joined && held.name.contains("held"), "{held:?}");
        assert_eq!(held.points, [(200.0, 2.0), (400.0, 3.0), (600.0, 40.0)]);
        let broke = &measured[2];
        assert_eq!(broke.marker, Some(Shape::Cross));
        assert_eq!(
            broke.points,
            [(600.0, 70.0), (600.0, 90.0), (800.0, 6000.0)]
        );
        assert_ne!(held.colour, broke.colour);
        // A trial judged neither way is a ring of its own.
        let mut visits = VISITS.to_vec();
        visits.push((1000, 9_000, "generator-limited"));
        let page = search(&visits, Some(400), "server").page();
        let Some(PageChart::Capacity { measured, .. }) = page.charts.first() else {
            panic!("no capacity chart");
        };
        assert_eq!(measured[3].marker, Some(Shape::Hollow));
        assert_eq!(measured[3].points, [(1000.0, 9.0)]);
    }

    /// "Capacity 15,600" beside "Lowest broken 15,200" read as a contradiction: 15,200 broke on
    /// one trial and held on another. The card carries the range and the verdict; the broken
    /// card is the lowest load that broke above the answer.
    #[test]
    fn the_answer_card_carries_its_range_and_verdict_and_no_card_contradicts_it() {
        let visits = [
            (14_800, 2_000, "held"),
            (15_200, 60_000, "broke"),
            (15_200, 3_000, "held"),
            (15_600, 4_000, "held"),
            (16_000, 90_000, "broke"),
        ];
        let mut found = search(&visits, Some(15_600), "server");
        found.capacity.range = Some([15_200, 16_000]);
        let page = found.page();
        let card = |id: &str| page.figures.iter().find(|f| f.id == id).unwrap();
        let capacity = card("capacity");
        assert_eq!(capacity.name, "Capacity: the server's limit");
        assert_eq!(capacity.shown, "15,600 requests/sec, range 15,200–16,000");
        assert_eq!(capacity.value, Some(15_600.0));
        let broke = card("broke");
        assert_eq!(broke.name, "Lowest broken above it");
        assert_eq!(broke.shown, "16,000 requests/sec");
        // A floor says so in its name and its number.
        let floor = search(&visits, Some(15_600), "to").page();
        let capacity = floor.figures.iter().find(|f| f.id == "capacity").unwrap();
        assert_eq!(
            capacity.name,
            "Capacity: a floor: every step held up to --to"
        );
        assert!(
            capacity.shown.starts_with("at least 15,600"),
            "{capacity:?}"
        );
        // Nothing held: the lowest load that broke, as before.
        let none = search(&visits[1..2], None, "server").page();
        let broke = none.figures.iter().find(|f| f.id == "broke").unwrap();
        assert_eq!(
            (broke.name.as_str(), broke.value),
            ("Lowest broken", Some(15_200.0))
        );
    }

    #[test]
    fn what_broke_first_is_calm_when_the_search_found_its_answer() {
        let found = search(&VISITS, Some(400), "server").page();
        assert!(found.lines.iter().any(|l| l.starts_with("Broke first")));
        assert_eq!(found.calm, [found.lines[1].clone()]);
        let stopped = search(&VISITS, Some(400), "stopped").page();
        assert!(stopped.calm.is_empty());
        // The page says the whole time too.
        let ran = found.facts.iter().find(|f| f.0 == "Ran").unwrap();
        assert!(ran.1.contains("6.00s of steps, 17.00s in all"), "{ran:?}");
    }
}
