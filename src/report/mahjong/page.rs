//! A mahjong session's page ([`SavedResult::page`]): players asked and logged in, the
//! server's step overshoot, errors; the session over time.

use super::intervals::SavedSessionInterval;
use super::saved::SavedHistogram;
use super::saved::SavedSession;
use crate::report::chart::Series;
use crate::report::result::duration_flag;
use crate::report::result::{figure, over_intervals, Figure, PageChart, PageContent, SavedResult};
use crate::report::timeline::IntervalHistogram;
use crate::stats::format::{counted, format_time_us};

/// A session's page: players asked and logged in, the server's step overshoot, errors; the
/// session over time.
pub(super) fn page(s: &SavedSession) -> PageContent {
    let logged_in = s.phases.get("login").map_or(0, |p| p.ok);
    PageContent {
        kind: "Mahjong session".to_string(),
        figures: figures(s, logged_in),
        lines: lines(s, logged_in),
        facts: facts(s),
        calm: Vec::new(),
        charts: charts(s),
    }
}

/// The players asked and logged in, the games, the server's step overshoot, the errors.
fn figures(s: &SavedSession, logged_in: u64) -> Vec<Figure> {
    // The server's draw overshoot; a session without draws shows its deal overshoot, and
    // one without either tsumo's own reply lateness.
    let (what, overshoot) = [
        ("Draw overshoot", &s.draw_overshoot),
        ("Deal overshoot", &s.deal_overshoot),
        ("Reply lateness", &s.reply_lateness),
    ]
    .into_iter()
    .find_map(|(what, h)| Some((what, h.sampled()?)))
    .map_or(("Draw overshoot", None), |(what, h)| (what, Some(h)));
    let time = |id, p: &str, pick: fn(&SavedHistogram) -> u64| {
        figure(
            id,
            &format!("{what} {p}"),
            overshoot.map_or("-".to_string(), |h| format_time_us(pick(h) as f64)),
            overshoot.map(|h| pick(h) as f64),
        )
    };
    vec![
        figure(
            "target",
            "Players",
            s.plan.players.to_string(),
            Some(s.plan.players as f64),
        ),
        figure(
            "achieved",
            "Logged in",
            logged_in.to_string(),
            Some(logged_in as f64),
        ),
        figure(
            "games",
            "Games completed",
            format!("{} of {}", s.games.completed, s.games.started),
            Some(s.games.completed as f64),
        ),
        time("p50", "p50", |h| h.p50),
        time("p99", "p99", |h| h.p99),
        time("max", "max", |h| h.max),
        figure(
            "errors",
            "Errors",
            s.errors.to_string(),
            Some(s.errors as f64),
        ),
    ]
}

/// The sentences under the figures: players not reached, a failure, a cut, the objectives.
fn lines(s: &SavedSession, logged_in: u64) -> Vec<String> {
    let mut lines = Vec::new();
    if logged_in < s.plan.players {
        lines.push(format!(
            "Players not reached: {logged_in} of {} logged in",
            s.plan.players
        ));
    }
    if let Some(verdict) = s.verdict() {
        lines.push(format!("Failed: {verdict}"));
    }
    if let Some(signal) = s.cut_by_signal() {
        lines.push(format!("Cut short by {signal} after {:.2}s", s.elapsed_s));
    }
    if s.games.cut > 0 {
        lines.push(format!(
            "{} {}",
            counted(s.games.cut, "game"),
            s.games_cut_at()
        ));
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

/// The session's command, target, plan, length and version.
fn facts(s: &SavedSession) -> Vec<(String, String)> {
    vec![
        (
            "Command".to_string(),
            format!(
                "tsumo mahjong -c {} {} {}",
                s.plan.players,
                duration_flag(s.plan.duration_s),
                s.plan.url
            ),
        ),
        ("Target".to_string(), s.plan.url.clone()),
        (
            "Plan".to_string(),
            format!(
                "{} players, {} threads, ramp {}s, think {}s, {} games each",
                s.plan.players, s.plan.threads, s.plan.ramp_s, s.plan.think_s, s.plan.games
            ),
        ),
        ("Ran".to_string(), format!("{:.2}s", s.elapsed_s)),
        ("Version".to_string(), format!("tsumo {}", s.version)),
    ]
}

pub(super) fn charts(s: &SavedSession) -> Vec<PageChart> {
    let mut charts = Vec::new();
    let curves: Vec<Series> = [
        ("draw overshoot", &s.draw_overshoot),
        ("deal overshoot", &s.deal_overshoot),
        ("reply lateness (tsumo)", &s.reply_lateness),
    ]
    .into_iter()
    .filter_map(|(name, h)| {
        let h = h.sampled()?;
        let decoded = crate::report::schema::decode_histogram(&h.histogram).ok()?;
        Some(Series::from_histogram(name, &decoded))
    })
    .collect();
    if !curves.is_empty() {
        charts.push(PageChart::Percentile {
            id: "latency-by-percentile",
            title: "Step overshoot and reply lateness by percentile".to_string(),
            y_what: "Time".to_string(),
            curves,
        });
    }
    charts.extend(over_time(&s.intervals));
    if !s.plan.stages.is_empty() {
        // `--stages`: the players online the profile asked for, beside those logged in.
        for chart in &mut charts {
            if let PageChart::OverTime { id, series, .. } = chart {
                if *id == "players-over-time" {
                    let corners = super::stages::corners(&s.plan.stages);
                    series.push(Series::new("profile (--stages)", corners));
                }
            }
        }
    }
    charts
}

/// The session over time, from its intervals: the report's charts, and the live page's.
pub(super) fn over_time(intervals: &[SavedSessionInterval]) -> Vec<PageChart> {
    let mut charts = Vec::new();
    if intervals.is_empty() {
        return charts;
    }
    let end = |i: &SavedSessionInterval| i.span;
    let points = |value: &dyn Fn(&SavedSessionInterval) -> Option<f64>| {
        over_intervals(intervals, end, value)
    };
    let count = |n: u64| Some(n as f64);
    charts.push(PageChart::OverTime {
        id: "players-over-time",
        title: "Players by phase".to_string(),
        y_label: "Players".to_string(),
        // Logged in is most often connected too: drawn wide under connected's narrow line,
        // so both show where they are equal.
        series: vec![
            Series::new("logged in", points(&|i| count(i.players.logged_in))).wide(7),
            Series::new("connected", points(&|i| count(i.players.connected))),
            Series::new("playing", points(&|i| count(i.players.playing))),
        ],
        per_shard: Some(2),
        bounds: Vec::new(),
    });
    let ms = |h: &IntervalHistogram, us: u64| (h.count > 0).then_some(us as f64 / 1000.0);
    charts.push(PageChart::OverTime {
        id: "overshoot-over-time",
        title: "Step overshoot by kind over time".to_string(),
        y_label: "Overshoot (ms)".to_string(),
        series: vec![
            Series::new(
                "draw p99",
                points(&|i| ms(&i.overshoot.draw, i.overshoot.draw.p99)),
            ),
            Series::new(
                "draw max",
                points(&|i| ms(&i.overshoot.draw, i.overshoot.draw.max)),
            ),
            Series::new(
                "deal p99",
                points(&|i| ms(&i.overshoot.deal, i.overshoot.deal.p99)),
            ),
            Series::new(
                "deal max",
                points(&|i| ms(&i.overshoot.deal, i.overshoot.deal.max)),
            ),
        ],
        per_shard: None,
        bounds: Vec::new(),
    });
    charts.push(PageChart::OverTime {
        id: "games-over-time",
        title: "Games over time".to_string(),
        y_label: "Per interval".to_string(),
        series: vec![
            Series::new("started", points(&|i| count(i.games.started))),
            Series::new("completed", points(&|i| count(i.games.completed))),
            Series::new("aborted", points(&|i| count(i.games.aborted))),
            Series::new("cut at the end", points(&|i| count(i.games.cut))),
        ],
        per_shard: None,
        bounds: Vec::new(),
    });
    // Hands are many to a game: on a chart of their own, they leave the games readable.
    charts.push(PageChart::OverTime {
        id: "hands-over-time",
        title: "Hands over time".to_string(),
        y_label: "Per interval".to_string(),
        series: vec![Series::new("hands", points(&|i| count(i.hands)))],
        per_shard: None,
        bounds: Vec::new(),
    });
    charts.push(PageChart::OverTime {
        id: "errors-over-time",
        title: "Errors over time".to_string(),
        y_label: "Per interval".to_string(),
        series: vec![Series::new("errors", points(&|i| count(i.errors)))],
        per_shard: None,
        bounds: Vec::new(),
    });
    charts
}

/// How a session's line in `tsumo merge` reads, a shard's and the merge's alike: players,
/// games, errors and reply lateness, e.g. `16 players, 4 games, 0 errors, reply lateness p99
/// 1.20ms`; `games_are` follows the game count (the merge says ` completed`).
pub(super) fn totals(s: &SavedSession, games_are: &str) -> String {
    format!(
        "{}, {}{games_are}, {}, reply lateness p99 {}",
        counted(s.plan.players, "player"),
        counted(s.games.completed, "game"),
        counted(s.errors, "error"),
        format_time_us(s.reply_lateness.p99 as f64)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_have_their_own_chart_and_logged_in_shows_under_connected() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/mahjong-direct-v1.json");
        let text = std::fs::read_to_string(path).unwrap();
        let mut session: SavedSession = serde_json::from_str(&text).unwrap();
        let empty = IntervalHistogram {
            count: 0,
            p50: 0,
            p99: 0,
            max: 0,
            histogram: String::new(),
        };
        session.intervals = (0..3)
            .map(|i| SavedSessionInterval {
                span: crate::report::timeline::IntervalSpan {
                    start_s: f64::from(i),
                    start_unix_ns: 0,
                    duration_s: 1.0,
                },
                players: crate::report::mahjong::intervals::SavedPlayers {
                    logged_in: 8,
                    connected: 8,
                    playing: 8,
                },
                games: crate::report::mahjong::intervals::SavedIntervalGames {
                    started: 1,
                    completed: 1,
                    aborted: 0,
                    cut: 0,
                },
                hands: 32,
                messages_in: 0,
                messages_out: 0,
                errors: 0,
                overshoot: crate::report::mahjong::intervals::SavedOvershoot {
                    draw: empty.clone(),
                    deal: empty.clone(),
                },
            })
            .collect();
        let charts = charts(&session);
        let series_of = |id: &str| -> Vec<Series> {
            charts
                .iter()
                .find_map(|c| match c {
                    PageChart::OverTime {
                        id: own, series, ..
                    } if *own == id => Some(series.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("no chart {id}"))
        };
        let games = series_of("games-over-time");
        assert!(games.iter().all(|s| s.name != "hands"), "{games:?}");
        assert_eq!(series_of("hands-over-time")[0].name, "hands");
        let players = series_of("players-over-time");
        assert_eq!(players[0].name, "logged in");
        assert_eq!(players[1].name, "connected");
        assert!(players[0].width > players[1].width, "{players:?}");
    }
}
