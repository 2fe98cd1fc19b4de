//! The mahjong session report: text (in the spirit of wrk's layout: aligned columns, wrk's units)
//! and JSON, whose layout is [`SavedSession`] (the same conventions as HTTP mode: numbers in µs,
//! histograms in HdrHistogram's compressed base64 form so sessions can later be merged and
//! compared).

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use serde_json::Value;

use crate::error::Error;
use crate::plan::JsonOut;
use crate::report::json::write_value;
use crate::report::session::{SavedBot, SavedSession};
use crate::report::text::server_line;
use crate::stats::format::{format_binary, format_metric, format_time_us};
use crate::stats::hdr;
use crate::stats::mahjong::MahjongResult;
use crate::stats::mahjong::PHASES;

/// Percentiles shown in every row: p50, p90, p99, max.
fn row(h: &Histogram<u64>) -> [String; 4] {
    [
        hdr::value_at_percentile(h, 50.0),
        hdr::value_at_percentile(h, 90.0),
        hdr::value_at_percentile(h, 99.0),
        hdr::max(h),
    ]
    .map(|v| format_time_us(v as f64))
}

/// The whole text report.
pub fn render(r: &MahjongResult) -> String {
    let p = &r.plan;
    let rec = &r.record;
    let mut out = String::new();
    let secs = r.elapsed.as_secs_f64().max(1e-9);
    let _ = writeln!(out, "Mahjong session @ {}", p.label);
    let _ = writeln!(
        out,
        "  {} {} players at {} tables, {} threads, think {}, ramp {}, {} game{} per table, {}",
        p.players,
        p.bot.as_str(),
        p.tables(),
        p.threads,
        format_time_us(p.think.as_micros() as f64),
        format_time_us(p.ramp.as_micros() as f64),
        p.games,
        if p.games == 1 { "" } else { "s" },
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
        if let Some(stats) = rec.phases.get(name) {
            let [p50, p90, p99, max] = row(&stats.latency);
            let _ = writeln!(
                out,
                "    {:<8}{:>8}{:>8}{:>11}{:>11}{:>11}{:>11}",
                name, stats.ok, stats.failed, p50, p90, p99, max
            );
        }
    }
    if p.latency {
        latency_distributions(&mut out, r);
    }
    // A game's length is that of the completed ones; aborted games have none to report.
    let game_length = if rec.game_time.is_empty() {
        "no game completed".to_string()
    } else {
        format!(
            "{:.1}s per completed game (p50), {:.1}s max",
            hdr::value_at_percentile(&rec.game_time, 50.0) as f64 / 1e6,
            hdr::max(&rec.game_time) as f64 / 1e6
        )
    };
    let _ = writeln!(
        out,
        "  Games: {} started, {} completed, {} aborted; {game_length}",
        rec.games_started, rec.games_completed, rec.games_aborted
    );
    for (kind, played) in &rec.bots {
        players_line(&mut out, kind, played);
    }
    if !rec.steps.is_empty() {
        let _ = writeln!(
            out,
            "  Step interval, by the step that opened it (one table's view: its owner's)"
        );
        let _ = writeln!(
            out,
            "    {:<26}{:>9}{:>11}{:>11}{:>11}{:>11}",
            "step", "count", "p50", "p90", "p99", "Max"
        );
        for (kind, h) in &rec.steps {
            let [p50, p90, p99, max] = row(h);
            let _ = writeln!(
                out,
                "    {:<26}{:>9}{:>11}{:>11}{:>11}{:>11}",
                step_in_words(kind),
                h.len(),
                p50,
                p90,
                p99,
                max
            );
        }
        let mut derived = |label: &str, h: &Histogram<u64>| {
            if !h.is_empty() {
                let [p50, p90, p99, max] = row(h);
                let _ = writeln!(
                    out,
                    "    {:<26}{:>9}{:>11}{:>11}{:>11}{:>11}",
                    label,
                    h.len(),
                    p50,
                    p90,
                    p99,
                    max
                );
            }
        };
        derived("draw over think", &rec.draw_overshoot);
        derived("deal over 400ms", &rec.deal_overshoot);
        derived("start burst", &rec.start_burst);
        derived("reply lateness", &rec.reply_lateness);
    }
    let _ = writeln!(
        out,
        "  Messages: {} in ({}/s), {} out ({}/s); {}B in, {}B out",
        rec.messages_in,
        format_metric(rec.messages_in as f64 / secs),
        rec.messages_out,
        format_metric(rec.messages_out as f64 / secs),
        format_binary(rec.bytes_in as f64),
        format_binary(rec.bytes_out as f64)
    );
    // Every failure in one line, with the same counts as the JSON (`disconnects`, `errors`,
    // each phase's `failed`): a session whose logins failed must not read "errors: 0".
    let failed: Vec<String> = PHASES
        .iter()
        .filter_map(|name| {
            let stats = rec.phases.get(name)?;
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
        rec.disconnects, rec.protocol_errors
    );
    // By kind, most frequent first: a proxy resetting connections reads differently from a
    // server refusing them.
    let mut kinds: Vec<_> = rec.error_kinds.iter().collect();
    kinds.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
    for (kind, group) in kinds {
        let _ = writeln!(out, "    {:>6}  {kind}", group.count);
        if let Some(first) = group.first.first() {
            let _ = writeln!(out, "            first: {first}");
        }
    }
    let players = p.players.max(1) as f64;
    let _ = writeln!(
        out,
        "  tsumo: {:.2}s CPU ({:.1}ms per player), peak RSS {}B ({}B per player)",
        r.cpu_seconds,
        r.cpu_seconds * 1000.0 / players,
        format_binary(r.peak_rss_bytes as f64),
        format_binary(r.peak_rss_bytes as f64 / players)
    );
    if let Some(server) = &r.server {
        let _ = writeln!(out, "{}", server_line(server));
    }
    let by_signal = format!(" (interrupted by {})", r.ended_by);
    let ended = if r.interrupted {
        by_signal.as_str()
    } else if r.timed_out {
        " (stopped at the -d limit)"
    } else {
        ""
    };
    let _ = writeln!(out, "Session: {:.2}s{ended}", r.elapsed.as_secs_f64());
    for line in super::text::part_lines(&p.part, &r.start) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// What the players of one bot kind did, in two lines, and the first rejected replies.
pub fn players_line(out: &mut String, kind: &str, b: &SavedBot) {
    let _ = writeln!(
        out,
        "  Players ({kind}): {} hands; won {} by tsumo, {} by ron; {} drawn; riichi {}",
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
        "pingju" => "exhaustive draw",
        "jieju" => "game end",
        _ => return kind.to_string(),
    };
    format!("{kind} ({words})")
}

/// What makes a session a failure for scripts (exit status 1), in one line: sessions left on
/// the server (they live there for 14 days, so the line names the players); a session in which
/// most players failed before they could play (the server refused or never answered, a proxy
/// reset the connections or stopped accepting them); or one in which the server side closed
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
        return Some(format!(
            "{logouts_failed} sessions could not be logged out and stay on the server for 14 \
             days: {}",
            players_listed(&r.record.left_on_server)
        ));
    }
    // A player fails at most one of login, connect and ready: it goes no further.
    let (logins_ok, logins_failed) = phase("login");
    let before_play = ["login", "connect", "ready"].map(|name| (name, phase(name).1));
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

pub fn to_json(r: &MahjongResult) -> Value {
    // Only non-string map keys make to_value fail; SavedSession has none.
    serde_json::to_value(SavedSession::from_result(r)).unwrap_or(Value::Null)
}

/// Writes the JSON document to a file or stdout.
pub fn write(r: &MahjongResult, out: &JsonOut) -> Result<(), Error> {
    write_value(&SavedSession::from_result(r), out)
}
