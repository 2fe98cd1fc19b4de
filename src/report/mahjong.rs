//! The mahjong session report: text (in the spirit of wrk's layout: aligned columns, wrk's units)
//! and JSON, whose layout is [`SavedSession`] (the same conventions as HTTP mode: numbers in µs,
//! histograms in HdrHistogram's compressed base64 form so sessions can later be merged and
//! compared).

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use crate::error::Error;
use crate::plan::JsonOut;
use crate::report::chart::Series;
use crate::report::objectives;
use crate::report::result::{
    add_encoded, add_sources, cut_by, duration_flag, figure, over_intervals, row, Named, PageChart,
    PageContent, Row, SavedResult, Unit,
};
use crate::report::schema::write_value;
use crate::report::session::{SavedBot, SavedHistogram, SavedPhase, SavedSession};
use crate::report::text::server_line;
use crate::report::timeline::{self, IntervalHistogram, SavedSessionInterval};
use crate::slo::Verdict;
use crate::stats::format::{counted, format_binary, format_metric, format_time_us};
use crate::stats::hdr;
use crate::stats::mahjong::{add_errors, MahjongResult, PHASES};
use crate::stats::new_histogram;

/// A row's cells from a saved summary: p50, p90, p99, max; `-` without a sample (a phase
/// nobody passed has no latency, not one of 0.00us).
fn cells(h: &SavedHistogram) -> [String; 4] {
    if h.sampled().is_none() {
        return ["-", "-", "-", "-"].map(String::from);
    }
    [h.p50, h.p90, h.p99, h.max].map(|v| format_time_us(v as f64))
}

/// The plan line's words that the saved plan does not hold as the run's plan does.
struct Head {
    bot: String,
    think_us: f64,
    ramp_us: f64,
}

/// The whole text report.
pub fn render(r: &MahjongResult) -> String {
    let p = &r.plan;
    let saved = SavedSession::from_result(r);
    let head = Head {
        bot: p.bot.as_str().to_string(),
        think_us: p.think.as_micros() as f64,
        ramp_us: p.ramp.as_micros() as f64,
    };
    let mut out = String::new();
    phases(&mut out, &saved, &head);
    if p.options.latency {
        latency_distributions(&mut out, r);
    }
    outcome(&mut out, &saved);
    for line in super::text::part_lines(&p.options.part, &r.start) {
        let _ = writeln!(out, "{line}");
    }
    for line in super::objectives::lines(&saved.objectives) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// A merged session (`tsumo merge` of shards) in the session report's layout, from its saved
/// document: the summed players, phases, games, players' play, steps, messages and failures
/// (`-L`'s distributions and each part's start are not repeated: `tsumo plot` draws the former,
/// the per-shard lines say the latter).
pub fn render_merged(s: &SavedSession) -> String {
    let bots: Vec<&str> = s.bots.keys().map(String::as_str).collect();
    let head = Head {
        bot: if bots.is_empty() {
            "tsumo".to_string()
        } else {
            bots.join("+")
        },
        think_us: (s.plan.think_s * 1e6).round(),
        ramp_us: (s.plan.ramp_s * 1e6).round(),
    };
    let mut out = String::new();
    phases(&mut out, s, &head);
    outcome(&mut out, s);
    for line in super::objectives::lines(&s.objectives) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The title, the plan line and the phase table.
fn phases(out: &mut String, s: &SavedSession, head: &Head) {
    let p = &s.plan;
    let tables = p.players / p.seats.max(1);
    let _ = writeln!(out, "Mahjong session @ {}", s.label);
    let _ = writeln!(
        out,
        "  {} at {}, {}, think {}, ramp {}, {} per table, {}",
        counted(p.players, &format!("{} player", head.bot)),
        counted(tables, "table"),
        counted(p.threads, "thread"),
        plan_duration(head.think_us),
        plan_duration(head.ramp_us),
        counted(u64::from(p.games), "game"),
        if p.lockstep {
            "lockstep phases"
        } else {
            "tables start when full"
        }
    );
    let _ = writeln!(
        out,
        "  {:<10}{:>8}{:>8}{:>11}{:>11}{:>11}{:>11}",
        "Phase", "OK", "Failed", "p50", "p90", "p99", "Max"
    );
    for name in PHASES {
        if let Some(stats) = s.phases.get(name) {
            let [p50, p90, p99, max] = cells(&stats.latency);
            let _ = writeln!(
                out,
                "    {:<8}{:>8}{:>8}{:>11}{:>11}{:>11}{:>11}",
                name, stats.ok, stats.failed, p50, p90, p99, max
            );
        }
    }
}

/// A setting's duration as it would be typed (`0`, `250us`, `40ms`, `1.5s`, `2m`, `1h`), not
/// in a measurement's fixed-decimal units: `--think 1h` reads `1h`, not `60.00m`.
fn plan_duration(us: f64) -> String {
    let us = us.round();
    let trimmed = |v: f64| format!("{}", (v * 1000.0).round() / 1000.0);
    if us <= 0.0 {
        "0".to_string()
    } else if us % 3_600e6 == 0.0 {
        format!("{}h", us / 3_600e6)
    } else if us % 60e6 == 0.0 {
        format!("{}m", us / 60e6)
    } else if us >= 1e6 {
        format!("{}s", trimmed(us / 1e6))
    } else if us >= 1e3 {
        format!("{}ms", trimmed(us / 1e3))
    } else {
        format!("{us}us")
    }
}

/// Games, the players' play, step intervals, messages, failures, tsumo's and the server's
/// usage, and how the session ended.
fn outcome(out: &mut String, s: &SavedSession) {
    let secs = s.elapsed_s.max(1e-9);
    // A game's length is that of the completed ones; aborted games have none to report.
    let game_length = match s.games.duration.sampled() {
        None => "no game completed".to_string(),
        Some(d) => format!(
            "{:.1}s per completed game (p50), {:.1}s max",
            d.p50 as f64 / 1e6,
            d.max as f64 / 1e6
        ),
    };
    let _ = writeln!(
        out,
        "  Games: {} started, {} completed, {} aborted; {game_length}",
        s.games.started, s.games.completed, s.games.aborted
    );
    for (kind, played) in &s.bots {
        players_line(out, kind, played);
    }
    if !s.steps.is_empty() {
        let _ = writeln!(
            out,
            "  Step interval, by the step that opened it (one table's view: its owner's)"
        );
        let _ = writeln!(
            out,
            "    {:<26}{:>9}{:>11}{:>11}{:>11}{:>11}",
            "step", "count", "p50", "p90", "p99", "Max"
        );
        let mut step_row = |label: &str, h: &SavedHistogram| {
            let [p50, p90, p99, max] = cells(h);
            let _ = writeln!(
                out,
                "    {:<26}{:>9}{:>11}{:>11}{:>11}{:>11}",
                label, h.count, p50, p90, p99, max
            );
        };
        for kind in s.step_kinds() {
            if let Some(h) = s.steps.get(kind) {
                step_row(&step_in_words(kind), h);
            }
        }
        for (label, h) in [
            ("draw over think", &s.draw_overshoot),
            ("deal over 400ms", &s.deal_overshoot),
            ("start burst", &s.start_burst),
            ("reply lateness", &s.reply_lateness),
        ] {
            if let Some(h) = h.sampled() {
                step_row(label, h);
            }
        }
        if let (Some(slack), Some(_)) = (s.plan.think_slack_us, s.reply_lateness.sampled()) {
            let _ = writeln!(
                out,
                "    (think times end in {slack}us slots of the worker's pacer: in the reply \
                 lateness)"
            );
        }
    }
    let m = &s.messages;
    let _ = writeln!(
        out,
        "  Messages: {} in ({}/s), {} out ({}/s); {}B in, {}B out",
        m.received,
        format_metric(m.received as f64 / secs),
        m.sent,
        format_metric(m.sent as f64 / secs),
        format_binary(m.bytes_in as f64),
        format_binary(m.bytes_out as f64)
    );
    // Every failure in one line, with the same counts as the JSON (`disconnects`, `errors`,
    // each phase's `failed`): a session whose logins failed must not read "errors: 0".
    let failed: Vec<String> = PHASES
        .iter()
        .filter_map(|name| {
            let stats = s.phases.get(*name)?;
            (stats.failed > 0).then(|| format!("{name} {}", stats.failed))
        })
        .collect();
    let failed = if failed.is_empty() {
        "none".to_string()
    } else {
        failed.join(", ")
    };
    let _ = writeln!(
        out,
        "  Disconnects: {}, errors: {}, failed: {failed}",
        s.disconnects, s.errors
    );
    // By kind, most frequent first: a proxy resetting connections reads differently from a
    // server refusing them.
    let mut kinds: Vec<_> = s.error_kinds.iter().collect();
    kinds.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
    for (kind, group) in kinds {
        let _ = writeln!(out, "    {:>6}  {kind}", group.count);
        if let Some(first) = group.first.first() {
            let _ = writeln!(out, "            first: {first}");
        }
    }
    let players = s.plan.players.max(1) as f64;
    let (cpu, rss) = (s.tsumo.cpu_s, s.tsumo.peak_rss_bytes as f64);
    let _ = writeln!(
        out,
        "  tsumo: {:.2}s CPU ({:.1}ms per player), peak RSS {}B ({}B per player)",
        cpu,
        cpu * 1000.0 / players,
        format_binary(rss),
        format_binary(rss / players)
    );
    if let Some(server) = &s.server {
        let _ = writeln!(out, "{}", server_line(server));
    }
    let by_signal = format!(
        " (interrupted by {})",
        s.ended_by.as_deref().unwrap_or("a signal")
    );
    let ended = if s.interrupted {
        by_signal.as_str()
    } else if s.timed_out {
        " (stopped at the -d limit)"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "Session: {:.2}s{ended}{}",
        s.elapsed_s,
        signals_in_logout(s)
    );
}

/// `; SIGTERM during the logout, which went on`: what signals did once the players were
/// logging out (the first after the end lets the logout go on; a second cuts it short).
fn signals_in_logout(s: &SavedSession) -> String {
    let mut seen = usize::from(s.interrupted);
    let mut said = Vec::new();
    for name in &s.signals_in_logout {
        seen += 1;
        said.push(match seen {
            1 => format!("{name} during the logout, which went on"),
            2 => format!("a second {name} cut the logout short"),
            _ => continue,
        });
    }
    if said.is_empty() {
        return String::new();
    }
    format!("; {}", said.join(", then "))
}

/// What the players of one bot kind did, in two lines, and the first rejected replies.
pub fn players_line(out: &mut String, kind: &str, b: &SavedBot) {
    // One unit throughout, the player's hand: a hand dealt at a table of four of tsumo's
    // players counts four times, and each ends, for its player, won, drawn, or otherwise.
    let otherwise = b.hands.saturating_sub(b.tsumo + b.ron + b.draws);
    let _ = writeln!(
        out,
        "  Players ({kind}): {} hands, counted per player: won {} by tsumo, {} by ron; {} drawn; \
         {otherwise} won by another or cut short; riichi {}",
        b.hands, b.tsumo, b.ron, b.draws, b.riichi
    );
    let rejected = if b.rejected.is_empty() {
        "0".to_string()
    } else {
        let kinds: Vec<String> = b.rejected.iter().map(|(k, n)| format!("{k} {n}")).collect();
        format!("{} ({})", b.rejected_total(), kinds.join(", "))
    };
    let _ = writeln!(
        out,
        "    calls: chi {}, pon {}, open kan {}; kans: closed {}, added {}; rejected replies: {rejected}{}",
        b.chi,
        b.pon,
        b.open_kan,
        b.closed_kan,
        b.added_kan,
        if b.lost_track > 0 {
            format!("; lost track {}", b.lost_track)
        } else {
            String::new()
        }
    );
    for e in &b.first_rejected {
        let _ = writeln!(out, "      {e}");
    }
}

/// `-L`: each phase's latency distribution, in wrk's percentile layout.
fn latency_distributions(out: &mut String, r: &MahjongResult) {
    const PERCENTILES: [f64; 7] = [50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0];
    let _ = writeln!(out, "  Latency Distribution (HdrHistogram), by phase");
    let _ = write!(out, "    {:<10}", "");
    for p in PERCENTILES {
        let _ = write!(out, "{:>10}", format!("{p}%"));
    }
    let _ = writeln!(out);
    for name in PHASES {
        let Some(stats) = r.record.phases.get(name).filter(|s| !s.latency.is_empty()) else {
            continue;
        };
        let _ = write!(out, "    {name:<10}");
        for p in PERCENTILES {
            let v = hdr::value_at_percentile(&stats.latency, p);
            let _ = write!(out, "{:>10}", format_time_us(v as f64));
        }
        let _ = writeln!(out);
    }
}

/// The JSON document of a session (see [`SavedSession`] for the layout).
/// A step's protocol name (majiang-server's message kinds) with what it is in words.
fn step_in_words(kind: &str) -> String {
    let words = match kind {
        "kaiju" => "game start",
        "qipai" => "deal",
        "zimo" => "draw",
        "dapai" => "discard",
        "fulou" => "call",
        "gang" => "kan",
        "gangzimo" => "draw after kan",
        "kaigang" => "kan dora",
        "hule" => "win",
        "pingju" => "drawn hand",
        "jieju" => "game end",
        _ => return kind.to_string(),
    };
    format!("{kind} ({words})")
}

/// What makes a session a failure for scripts (exit status 1), in one line: sessions tsumo did
/// not see logged out (they may live on for the server's session lifetime, so the line names
/// the players); a session in which
/// most players failed before they could play (the server refused or never answered, a proxy
/// reset the connections or stopped accepting them, their tables never formed); or one in which the server side closed
/// most players' sockets mid-session. `None`: it went well enough to read the report.
pub fn failure(r: &MahjongResult) -> Option<String> {
    let phase = |name: &str| {
        r.record
            .phases
            .get(name)
            .map_or((0, 0), |p| (p.ok, p.failed))
    };
    let (_, logouts_failed) = phase("logout");
    if logouts_failed > 0 {
        return Some(left_on_server(logouts_failed, &r.record.left_on_server));
    }
    // A player fails at most one of login, connect, ready and its table's forming: it goes
    // no further.
    let (logins_ok, logins_failed) = phase("login");
    let before_play = [
        ("login", phase("login").1),
        ("connect", phase("connect").1),
        ("ready", phase("ready").1),
        ("formed", r.record.never_seated),
    ];
    let failed: u64 = before_play.iter().map(|(_, n)| n).sum();
    let tried = logins_ok + logins_failed;
    if failed > 0 && failed * 2 > tried {
        let by_phase: Vec<String> = before_play
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        let commonest = r
            .record
            .error_kinds
            .iter()
            .max_by_key(|(_, group)| group.count)
            .map(|(kind, _)| format!("; most often {kind}"))
            .unwrap_or_default();
        return Some(format!(
            "most players failed before they could play: {failed} of {tried} ({}){commonest}",
            by_phase.join(", ")
        ));
    }
    let (ready, _) = phase("ready");
    let closed = r.record.disconnects;
    if closed > 0 && closed * 2 > ready {
        return Some(format!(
            "the server side closed {closed} of {ready} players' sockets mid-session (the server \
             or a proxy went away?)"
        ));
    }
    None
}

/// The failure line of sessions whose logout tsumo did not see answered: only that is known.
/// The server may still process a logout sent (a server stopped and resumed did), so the
/// sessions may be gone; if not, they last the server's session lifetime (majiang-server's
/// cookie: 14 days).
fn left_on_server(failed: u64, names: &[String]) -> String {
    let they = if failed == 1 { "it" } else { "they" };
    format!(
        "tsumo did not see {} logged out; {they} may stay on the server up to 14 days (its \
         session lifetime) unless logged out later: {}",
        counted(failed, "session"),
        players_listed(names)
    )
}

/// Most player names [`failure`] lists (the JSON has them all).
const LISTED_PLAYERS: usize = 10;

/// `tsumo3, tsumo17, … and 40 more (all in the JSON's left_on_server)`.
fn players_listed(names: &[String]) -> String {
    let mut listed = names
        .iter()
        .take(LISTED_PLAYERS)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > LISTED_PLAYERS {
        listed.push_str(&format!(
            " and {} more (all in the JSON's left_on_server)",
            names.len() - LISTED_PLAYERS
        ));
    }
    listed
}

/// The session as saved, with the verdict of [`failure`].
pub fn saved(r: &MahjongResult) -> SavedSession {
    SavedSession {
        failure: failure(r),
        ..SavedSession::from_result(r)
    }
}

pub fn to_json(r: &MahjongResult) -> Value {
    // Only non-string map keys make to_value fail; SavedSession has none.
    serde_json::to_value(saved(r)).unwrap_or(Value::Null)
}

/// Writes the JSON document to a file or stdout.
pub fn write(r: &MahjongResult, out: &JsonOut) -> Result<(), Error> {
    write_value(&saved(r), out)
}

impl SavedResult for SavedSession {
    fn mode(&self) -> &'static str {
        "mahjong"
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

    fn text(&self) -> Result<String, Error> {
        Ok(render_merged(self))
    }

    /// The session's [`failure`], as saved.
    fn interval_ns(&self) -> Option<u64> {
        timeline::length_ns(&self.intervals)
    }

    fn objectives(&self) -> &[Verdict] {
        &self.objectives
    }

    fn verdict(&self) -> Option<String> {
        self.failure.clone()
    }

    fn plan_key(&self) -> Vec<(&'static str, String)> {
        let plan = &self.plan;
        vec![
            ("duration", format!("{}s", plan.duration_s)),
            ("players", plan.players.to_string()),
            ("games", plan.games.to_string()),
        ]
    }

    fn rows(&self) -> Vec<Row> {
        rows(self)
    }

    fn key_metrics(&self) -> &'static [(&'static str, &'static str)] {
        &[
            ("Messages in/sec", "messages in/s"),
            ("login p99", "login p99"),
            ("connect p99", "connect p99"),
            ("Draw overshoot p99", "draw overshoot p99"),
            ("Reply lateness p99", "reply lateness p99"),
            ("Server CPU% mean", "server CPU"),
        ]
    }

    fn plottable(&self) -> Vec<&str> {
        self.histogram_names()
    }

    /// `reply_lateness` by default: the one histogram every session fills.
    fn plotted(&self, name: Option<&str>) -> Option<Named<'_>> {
        let saved = self.histogram(name.unwrap_or("reply_lateness"))?;
        let title = format!(
            "Mahjong {} by percentile",
            name.unwrap_or("reply lateness (tsumo's own)")
                .replace('_', " ")
        );
        Some(Named {
            encoded: &saved.histogram,
            title,
        })
    }

    fn load(&self) -> String {
        format!(
            "{} players {}",
            self.plan.players,
            duration_flag(self.plan.duration_s)
        )
    }

    fn shard_line(&self) -> String {
        totals(self, "")
    }

    fn merged_line(&self) -> String {
        totals(self, " completed")
    }

    fn merge(parts: &[(&SavedSession, &str)], label: &str) -> Result<SavedSession, Error> {
        merge(parts, label)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn page(&self) -> PageContent {
        page(self)
    }
}

/// A session's page: players asked and logged in, the server's step overshoot, errors; the
/// session over time.
fn page(s: &SavedSession) -> PageContent {
    let logged_in = s.phases.get("login").map_or(0, |p| p.ok);
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
    let figures = vec![
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
    ];
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
    for v in &s.objectives {
        let held = if v.held { "held" } else { "BROKE" };
        lines.push(format!(
            "Objective {}: {held} ({})",
            v.expr,
            v.measured_text()
        ));
    }
    let facts = vec![
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
    ];
    PageContent {
        kind: "Mahjong session".to_string(),
        figures,
        lines,
        facts,
        charts: charts(s),
    }
}

fn charts(s: &SavedSession) -> Vec<PageChart> {
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
    let intervals = &s.intervals;
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
        series: vec![
            Series::new("logged in", points(&|i| count(i.players.logged_in))),
            Series::new("connected", points(&|i| count(i.players.connected))),
            Series::new("playing", points(&|i| count(i.players.playing))),
        ],
        per_shard: Some(2),
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
    });
    charts.push(PageChart::OverTime {
        id: "games-over-time",
        title: "Games over time".to_string(),
        y_label: "Per interval".to_string(),
        series: vec![
            Series::new("started", points(&|i| count(i.games.started))),
            Series::new("completed", points(&|i| count(i.games.completed))),
            Series::new("aborted", points(&|i| count(i.games.aborted))),
            Series::new("hands", points(&|i| count(i.hands))),
        ],
        per_shard: None,
    });
    charts.push(PageChart::OverTime {
        id: "errors-over-time",
        title: "Errors over time".to_string(),
        y_label: "Per interval".to_string(),
        series: vec![Series::new("errors", points(&|i| count(i.errors)))],
        per_shard: None,
    });
    charts
}

/// How a session's line in `tsumo merge` reads, a shard's and the merge's alike: players,
/// games, errors and reply lateness, e.g. `16 players, 4 games, 0 errors, reply lateness p99
/// 1.20ms`; `games_are` follows the game count (the merge says ` completed`).
fn totals(s: &SavedSession, games_are: &str) -> String {
    format!(
        "{}, {}{games_are}, {}, reply lateness p99 {}",
        counted(s.plan.players, "player"),
        counted(s.games.completed, "game"),
        counted(s.errors, "error"),
        format_time_us(s.reply_lateness.p99 as f64)
    )
}

/// The rows of a session in `tsumo compare`, in table order.
fn rows(s: &SavedSession) -> Vec<Row> {
    let players = s.plan.players as f64;
    let elapsed = Some(s.elapsed_s).filter(|e| *e > 0.0);
    let count = |name: String, n: u64| row(name, Some(n as f64), Unit::Count);
    let time = |name: String, us: Option<u64>| row(name, us.map(|us| us as f64), Unit::Time);
    type Pick = fn(&SavedHistogram) -> u64;
    let p50_p99: [(&str, Pick); 2] = [("p50", |h| h.p50), ("p99", |h| h.p99)];
    let mut rows = vec![
        count("Players".to_string(), s.plan.players),
        row("Elapsed", elapsed, Unit::Seconds),
    ];
    for name in s.phase_names() {
        let Some(phase) = s.phases.get(name) else {
            continue;
        };
        rows.push(count(format!("{name} ok"), phase.ok));
        rows.push(count(format!("{name} failed"), phase.failed));
        for (p, pick) in p50_p99 {
            rows.push(time(
                format!("{name} {p}"),
                phase.latency.sampled().map(pick),
            ));
        }
    }
    let games = &s.games;
    rows.push(count("Games started".to_string(), games.started));
    rows.push(count("Games completed".to_string(), games.completed));
    rows.push(count("Games aborted".to_string(), games.aborted));
    // Every known step, present or not: a step only a later session saw (a drawn hand) then
    // sits among the steps, not after the server's rows.
    for kind in s.step_kinds() {
        let h = s.steps.get(kind).and_then(SavedHistogram::sampled);
        for (p, pick) in p50_p99 {
            rows.push(time(format!("Step {kind} {p}"), h.map(pick)));
        }
    }
    let (p99, max): (Pick, Pick) = (|h| h.p99, |h| h.max);
    for (name, h, pick) in [
        ("Draw overshoot p99", &s.draw_overshoot, p99),
        ("Deal overshoot p99", &s.deal_overshoot, p99),
        ("Start burst p99", &s.start_burst, p99),
        ("Start burst max", &s.start_burst, max),
        ("Reply lateness p99", &s.reply_lateness, p99),
    ] {
        rows.push(time(name.to_string(), h.sampled().map(pick)));
    }
    let per_second = |n: u64| elapsed.map(|e| n as f64 / e);
    let messages = &s.messages;
    rows.push(row(
        "Messages in/sec",
        per_second(messages.received),
        Unit::Metric,
    ));
    rows.push(row(
        "Messages out/sec",
        per_second(messages.sent),
        Unit::Metric,
    ));
    rows.push(count("Disconnects".to_string(), s.disconnects));
    rows.push(count("Errors".to_string(), s.errors));
    let per_player = |n: f64| (players > 0.0).then(|| n / players);
    let cpu_us = s.tsumo.cpu_s * 1e6;
    let rss = s.tsumo.peak_rss_bytes as f64;
    rows.push(row("tsumo CPU per player", per_player(cpu_us), Unit::Time));
    rows.push(row("tsumo RSS per player", per_player(rss), Unit::Bytes));
    rows
}

/// Most `first_errors` a merged document keeps (as one session does).
const KEPT_ERRORS: usize = crate::stats::mahjong::KEPT_ERRORS;

/// The sum of the saved histograms that `pick` finds in each session (sessions without one are
/// skipped), as a saved histogram again.
fn add_all<'a>(
    sessions: &[(&'a SavedSession, &str)],
    what: &str,
    pick: impl Fn(&'a SavedSession) -> Option<&'a SavedHistogram>,
) -> Result<SavedHistogram, Error> {
    let mut sum = new_histogram();
    for (session, source) in sessions {
        if let Some(saved) = pick(session) {
            add_encoded(&mut sum, &saved.histogram, source, what)?;
        }
    }
    Ok(SavedHistogram::of(&sum))
}

/// Sessions side by side merged exactly: phase counts and histograms, games, step intervals,
/// messages, errors.
fn merge(sessions: &[(&SavedSession, &str)], label: &str) -> Result<SavedSession, Error> {
    let judged: Vec<_> = sessions
        .iter()
        .map(|(s, src)| (&s.objectives[..], *src))
        .collect();
    objectives::refuse_different(&judged)?;
    // Every field not summed below is the first session's (the same tool wrote them all).
    let mut merged = sessions[0].0.clone();
    let all = || sessions.iter().map(|(s, _)| *s);
    let sum = |f: fn(&SavedSession) -> u64| all().map(f).sum::<u64>();

    // Phases and step kinds: every name any session has (sorted, as the maps keep them).
    let phase_names: BTreeSet<&String> = all().flat_map(|s| s.phases.keys()).collect();
    merged.phases = phase_names
        .into_iter()
        .map(|name| {
            let phases = all().filter_map(|s| s.phases.get(name));
            let latency = add_all(sessions, &format!("phases/{name}"), |s| {
                s.phases.get(name).map(|p| &p.latency)
            })?;
            let phase = SavedPhase {
                ok: phases.clone().map(|p| p.ok).sum(),
                failed: phases.map(|p| p.failed).sum(),
                latency,
            };
            Ok((name.clone(), phase))
        })
        .collect::<Result<_, Error>>()?;
    let step_kinds: BTreeSet<&String> = all().flat_map(|s| s.steps.keys()).collect();
    merged.steps = step_kinds
        .into_iter()
        .map(|kind| {
            let step = add_all(sessions, &format!("steps/{kind}"), |s| s.steps.get(kind))?;
            Ok((kind.clone(), step))
        })
        .collect::<Result<_, Error>>()?;
    merged.games.duration = add_all(sessions, "games/duration", |s| Some(&s.games.duration))?;
    merged.draw_overshoot = add_all(sessions, "draw_overshoot", |s| Some(&s.draw_overshoot))?;
    merged.deal_overshoot = add_all(sessions, "deal_overshoot", |s| Some(&s.deal_overshoot))?;
    merged.start_burst = add_all(sessions, "start_burst", |s| Some(&s.start_burst))?;
    merged.reply_lateness = add_all(sessions, "reply_lateness", |s| Some(&s.reply_lateness))?;

    merged.games.started = sum(|s| s.games.started);
    merged.games.completed = sum(|s| s.games.completed);
    merged.games.aborted = sum(|s| s.games.aborted);
    merged.messages.received = sum(|s| s.messages.received);
    merged.messages.sent = sum(|s| s.messages.sent);
    merged.messages.bytes_in = sum(|s| s.messages.bytes_in);
    merged.messages.bytes_out = sum(|s| s.messages.bytes_out);
    merged.disconnects = sum(|s| s.disconnects);
    merged.errors = sum(|s| s.errors);
    merged.plan.players = sum(|s| s.plan.players);
    merged.plan.threads = sum(|s| s.plan.threads);
    for s in all() {
        add_sources(&mut merged.plan.bind, &s.plan.bind);
    }
    // Separate processes: CPU adds up, and so do their peaks of memory.
    merged.tsumo.cpu_s = all().map(|s| s.tsumo.cpu_s).sum();
    merged.tsumo.peak_rss_bytes = sum(|s| s.tsumo.peak_rss_bytes);

    merged.elapsed_s = all().map(|s| s.elapsed_s).fold(0.0, f64::max);
    merged.plan.duration_s = all().map(|s| s.plan.duration_s).fold(0.0, f64::max);
    merged.interrupted = all().any(|s| s.interrupted);
    merged.timed_out = all().any(|s| s.timed_out);
    merged.first_errors = all()
        .flat_map(|s| s.first_errors.iter().cloned())
        .take(KEPT_ERRORS)
        .collect();
    merged.error_kinds = BTreeMap::new();
    for (kind, group) in all().flat_map(|s| s.error_kinds.iter()) {
        add_errors(&mut merged.error_kinds, kind, group);
    }
    merged.left_on_server = all()
        .flat_map(|s| s.left_on_server.iter().cloned())
        .collect();
    let failures: Vec<String> = all().filter_map(|s| s.failure.clone()).collect();
    merged.failure = (!failures.is_empty()).then(|| failures.join("; "));
    merged.bots.clear();
    for s in all() {
        for (kind, bot) in &s.bots {
            merged.bots.entry(kind.clone()).or_default().merge(bot);
        }
    }
    let intervals: Vec<_> = sessions
        .iter()
        .map(|(s, src)| (&s.intervals[..], *src))
        .collect();
    merged.intervals = timeline::merge_sessions(&intervals)?;
    // The first part's objectives, judged on the whole.
    merged.objectives = objectives::judge_session_again(&merged);
    merged.label = label.to_string();
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_totals_are_counted_per_player_and_add_up() {
        // 16 hands at tables of four: 15 won (one player each), 1 drawn (all four players).
        let played = SavedBot {
            hands: 64,
            tsumo: 5,
            ron: 10,
            draws: 4,
            ..SavedBot::default()
        };
        let mut out = String::new();
        players_line(&mut out, "shanten", &played);
        let first = out.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            "  Players (shanten): 64 hands, counted per player: won 5 by tsumo, 10 by ron; 4 \
             drawn; 45 won by another or cut short; riichi 0"
        );
    }

    #[test]
    fn sessions_not_seen_logged_out_are_said_as_what_is_known() {
        let one = left_on_server(1, &["tsumo3".to_string()]);
        assert_eq!(
            one,
            "tsumo did not see 1 session logged out; it may stay on the server up to 14 days (its \
             session lifetime) unless logged out later: tsumo3"
        );
        let names: Vec<String> = (0..12).map(|i| format!("tsumo{i}")).collect();
        let many = left_on_server(12, &names);
        assert!(
            many.starts_with("tsumo did not see 12 sessions logged out; they may stay"),
            "{many}"
        );
        assert!(
            many.ends_with("tsumo9 and 2 more (all in the JSON's left_on_server)"),
            "{many}"
        );
    }

    #[test]
    fn settings_read_as_typed() {
        let cases = [
            (0.0, "0"),
            (250.0, "250us"),
            (40_000.0, "40ms"),
            (1_500.0, "1.5ms"),
            (1e6, "1s"),
            (1.25e6, "1.25s"),
            (90e6, "90s"),
            (120e6, "2m"),
            (3_600e6, "1h"),
        ];
        for (us, text) in cases {
            assert_eq!(plan_duration(us), text, "{us} µs");
        }
    }
}
