//! A mahjong session's text report, in the spirit of wrk's layout (aligned columns, wrk's
//! units): the phases, the play, the outcome and its verdict ([`failure`]).

use std::fmt::Write as _;

use super::saved::{SavedBot, SavedHistogram, SavedSession};
use crate::report::lines::{part_lines, server_line};
use crate::stats::end::EndReason;
use crate::stats::format::{counted, format_binary, format_metric, format_time_us};
use crate::stats::hdr;
use crate::stats::mahjong::{RunResult, PHASES};

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
pub fn render(r: &RunResult) -> String {
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
    super::stages::render(&mut out, &saved.stages, saved.stopped_in_stage);
    outcome(&mut out, &saved);
    for line in part_lines(&p.options.part, &r.start) {
        let _ = writeln!(out, "{line}");
    }
    for line in crate::report::objectives::lines(&saved.objectives) {
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
    super::stages::render(&mut out, &s.stages, s.stopped_in_stage);
    outcome(&mut out, s);
    for line in crate::report::objectives::lines(&s.objectives) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The title, the plan line and the phase table.
fn phases(out: &mut String, s: &SavedSession, head: &Head) {
    let p = &s.plan;
    let tables = p.players / p.seats.max(1);
    let _ = writeln!(out, "Mahjong session @ {}", s.label);
    if !p.stages.is_empty() {
        let stay = p.stay.map_or("until the profile falls".to_string(), |n| {
            format!("{} per table", counted(u64::from(n), "game"))
        });
        let _ = writeln!(
            out,
            "  at most {} at {} (--stages {}), {}, think {}, stay {stay}",
            counted(p.players, &format!("{} player", head.bot)),
            counted(tables, "table"),
            super::stages::profile_words(&p.stages),
            counted(p.threads, "thread"),
            plan_duration(head.think_us),
        );
    } else {
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
    }
    let _ = writeln!(out, "{}", lag_line(s));
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

/// The headline: the lag a player at the table feels, how much later than its think time the
/// next own draw came (the "draw over think" row, led with: the rows under it are mostly the
/// server's own pace).
pub(super) fn lag_line(s: &SavedSession) -> String {
    const LEAD: &str = "  Lag a player feels (draw over think):";
    let t = |us: u64| format_time_us(us as f64);
    match s.draw_overshoot.sampled() {
        Some(h) => format!(
            "{LEAD} p50 {}, p99 {}, max {} over {}",
            t(h.p50),
            t(h.p99),
            t(h.max),
            counted(h.count, "draw")
        ),
        None if s.plan.think_s * 1e6 < STEP_MINIMUM_US => format!(
            "{LEAD} not measured: --think under {} leaves the pace to the server's own step \
             minimum",
            plan_duration(STEP_MINIMUM_US)
        ),
        None => format!("{LEAD} no draw measured"),
    }
}

/// The server's minimum time per step, µs: a draw is timed against a think time at least this.
const STEP_MINIMUM_US: f64 = crate::mahjong::player::STEP_MINIMUM as f64 / 1e3;

/// A setting's duration as it would be typed (`0`, `250us`, `40ms`, `1.5s`, `2m`, `1h`), not
/// in a measurement's fixed-decimal units: `--think 1h` reads `1h`, not `60.00m`.
pub(super) fn plan_duration(us: f64) -> String {
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
    games_line(out, s);
    for (kind, played) in &s.bots {
        players_line(out, kind, played);
    }
    step_intervals(out, s);
    messages_line(out, s);
    failures(out, s);
    usage(out, s);
    session_line(out, s);
}

/// The games started, completed, cut and aborted, and a completed game's length.
fn games_line(out: &mut String, s: &SavedSession) {
    // A game's length is that of the completed ones; cut and aborted games have none to report.
    let game_length = match s.games.duration.sampled() {
        None => "no game completed".to_string(),
        Some(d) => format!(
            "{:.1}s per completed game (p50), {:.1}s max",
            d.p50 as f64 / 1e6,
            d.max as f64 / 1e6
        ),
    };
    // Games still being played at the -d limit were cut, not aborted: a 2-minute run of
    // 150-second games completes none, and nothing went wrong.
    let cut = match s.games.cut {
        0 => String::new(),
        n => format!("{n} {}, ", s.games_cut_at()),
    };
    let _ = writeln!(
        out,
        "  Games: {} started, {} completed, {cut}{} aborted; {game_length}",
        s.games.started, s.games.completed, s.games.aborted
    );
}

/// The step intervals by the step that opened it, then the overshoots and the reply lateness.
fn step_intervals(out: &mut String, s: &SavedSession) {
    if s.steps.is_empty() {
        return;
    }
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

/// The messages in and out, their rates and bytes.
fn messages_line(out: &mut String, s: &SavedSession) {
    let secs = s.elapsed_s.max(1e-9);
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
}

/// The disconnects, errors and failed phases, then the errors by kind.
fn failures(out: &mut String, s: &SavedSession) {
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
    let l = &s.logouts;
    if !l.is_empty() || !s.left_on_server.is_empty() {
        let _ = writeln!(
            out,
            "  Logouts: {} retried, {} done past --logout-timeout, {} sessions of late login \
             answers logged out; {} left on the server",
            l.retried,
            l.past_timeout,
            l.late_logins,
            s.left_on_server.len()
        );
    }
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
}

/// tsumo's CPU and memory (per player too), and the server's when sampled.
fn usage(out: &mut String, s: &SavedSession) {
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
}

/// The session's length and how it ended.
fn session_line(out: &mut String, s: &SavedSession) {
    let by_signal = format!(
        " (interrupted by {})",
        s.ended_by.map_or("a signal", EndReason::name)
    );
    let ended = if s.interrupted {
        by_signal.as_str()
    } else if s.ended_by == Some(EndReason::ServerGone) {
        " (the server went away)"
    } else if s.timed_out && !s.plan.stages.is_empty() {
        " (the profile ended)"
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
fn latency_distributions(out: &mut String, r: &RunResult) {
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
pub fn failure(r: &RunResult) -> Option<String> {
    let phase = |name: &str| {
        r.record
            .phases
            .get(name)
            .map_or((0, 0), |p| (p.ok, p.failed))
    };
    let (_, logouts_failed) = phase("logout");
    if r.ended_by == EndReason::ServerGone {
        let stage =
            super::stages::stopped_in(r).map_or(String::new(), |n| format!(" in stage {n}"));
        let left = match logouts_failed {
            0 => String::new(),
            n => format!("; {n} players could not log out (listed as left on the server)"),
        };
        return Some(format!(
            "server gone{stage}: a second with no message, sockets closed or connects failed, \
             and the server refused a new connection{left}"
        ));
    }
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
pub(super) fn left_on_server(failed: u64, names: &[String]) -> String {
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
