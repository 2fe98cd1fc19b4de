//! A `tsumo mahjong --stages` session stage by stage, as saved and as printed: the profile
//! (each stage's players online, from and to), and what each stage reached recorded — arrivals,
//! departures and logins per second, the arrivals' time to seat, the server's draw overshoot
//! and tsumo's reply lateness while it lasted. A signal names the stage it stopped in.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use hdrhistogram::Histogram;

use crate::error::Error;
use crate::report::histogram::SavedHistogram;
use crate::report::result::add_encoded;
use crate::stats::format::format_time_us;
use crate::stats::mahjong::{RunResult, StageRecord};
use crate::stats::new_histogram;
use crate::timing::stages::stage_at;

/// One stage of the profile as given (`--stages`): its length and players online.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedProfileStage {
    pub duration_s: f64,
    pub from: u64,
    pub to: u64,
}

/// What one stage the session reached recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSessionStage {
    /// Its number in the profile, from 1.
    pub stage: usize,
    /// Its start, seconds from the session's; how long it lasted in this session (less than
    /// the profile's when the session stopped in it).
    pub start_s: f64,
    pub ran_s: f64,
    /// Players online over it, from and to, as the profile says.
    pub from: u64,
    pub to: u64,
    pub arrivals: u64,
    pub departures: u64,
    pub logins: u64,
    pub arrivals_per_s: f64,
    pub departures_per_s: f64,
    pub logins_per_s: f64,
    /// How late the stage's arrivals began to log in after the profile called for them (µs):
    /// a worker's arrivals in flight at once are bounded (absent in files of earlier versions).
    #[serde(default = "empty_histogram")]
    pub arrival_lateness: SavedHistogram,
    /// Arrival to the first game's start, of the players that arrived in the stage (µs).
    pub time_to_seat: SavedHistogram,
    /// Own-draw steps beyond the think time, ended in the stage (µs).
    pub draw_overshoot: SavedHistogram,
    /// tsumo's reply lateness, of the replies sent in the stage (µs).
    pub reply_lateness: SavedHistogram,
}

/// An empty histogram, for a field files of earlier versions lack.
fn empty_histogram() -> SavedHistogram {
    SavedHistogram::of(&new_histogram())
}

/// The profile of a session's plan (empty without `--stages`).
pub fn profile(r: &RunResult) -> Vec<SavedProfileStage> {
    r.plan
        .stages
        .iter()
        .map(|stage| SavedProfileStage {
            duration_s: stage.duration_ns as f64 / 1e9,
            from: stage.from,
            to: stage.to,
        })
        .collect()
}

/// Each stage that lasts and that the session reached, with what it recorded.
pub fn saved(r: &RunResult) -> Vec<SavedSessionStage> {
    let elapsed = r.elapsed.as_secs_f64();
    let empty = StageRecord::default();
    let mut start = 0.0;
    let mut out = Vec::new();
    for (i, stage) in r.plan.stages.iter().enumerate() {
        let length = stage.duration_ns as f64 / 1e9;
        let begins = start;
        start += length;
        if length == 0.0 || (begins >= elapsed && i > 0) {
            continue;
        }
        // The last stage also holds the wind-down (players logging out after the end).
        let ran = if start >= elapsed || i + 1 == r.plan.stages.len() {
            (elapsed - begins).max(0.0)
        } else {
            length
        };
        let rec = r.record.stages.get(i).unwrap_or(&empty);
        let per_s = |n: u64| if ran > 0.0 { n as f64 / ran } else { 0.0 };
        out.push(SavedSessionStage {
            stage: i + 1,
            start_s: begins,
            ran_s: ran,
            from: stage.from,
            to: stage.to,
            arrivals: rec.arrivals,
            departures: rec.departures,
            logins: rec.logins,
            arrivals_per_s: per_s(rec.arrivals),
            departures_per_s: per_s(rec.departures),
            logins_per_s: per_s(rec.logins),
            arrival_lateness: SavedHistogram::of(&rec.arrival_lateness),
            time_to_seat: SavedHistogram::of(&rec.time_to_seat),
            draw_overshoot: SavedHistogram::of(&rec.draw_overshoot),
            reply_lateness: SavedHistogram::of(&rec.reply_lateness),
        });
    }
    out
}

/// The stage (from 1) a signal or a server gone stopped the session in; `None` without a
/// profile, or when it ran to its end.
pub fn stopped_in(r: &RunResult) -> Option<usize> {
    let gone = r.ended_by == crate::stats::end::EndReason::ServerGone;
    if r.plan.stages.is_empty() || !(r.interrupted || gone) {
        return None;
    }
    Some(stage_at(&r.plan.stages, r.elapsed.as_nanos() as u64) + 1)
}

/// The shards' stages of one session merged, stage by stage: arrivals, departures and logins
/// added (the shards split the profile's tables, so the sums are one process's), their rates
/// over the longest the stage ran, the histograms added exactly.
pub fn merge(parts: &[(&[SavedSessionStage], &str)]) -> Result<Vec<SavedSessionStage>, Error> {
    type Sums = [Histogram<u64>; 4];
    let mut merged: Vec<(SavedSessionStage, Sums)> = Vec::new();
    for (stages, source) in parts {
        for stage in *stages {
            let at = match merged.iter().position(|(m, _)| m.stage == stage.stage) {
                Some(at) => at,
                None => {
                    let mut first = stage.clone();
                    (first.arrivals, first.departures, first.logins) = (0, 0, 0);
                    first.ran_s = 0.0;
                    merged.push((first, std::array::from_fn(|_| new_histogram())));
                    merged.len() - 1
                }
            };
            let (m, sums) = &mut merged[at];
            m.ran_s = m.ran_s.max(stage.ran_s);
            m.arrivals += stage.arrivals;
            m.departures += stage.departures;
            m.logins += stage.logins;
            let what = |name: &str| format!("stages/{}/{name}", stage.stage);
            let hists = [
                ("arrival_lateness", &stage.arrival_lateness),
                ("time_to_seat", &stage.time_to_seat),
                ("draw_overshoot", &stage.draw_overshoot),
                ("reply_lateness", &stage.reply_lateness),
            ];
            for (sum, (name, h)) in sums.iter_mut().zip(hists) {
                add_encoded(sum, &h.histogram, source, &what(name))?;
            }
        }
    }
    merged.sort_by_key(|(m, _)| m.stage);
    Ok(merged
        .into_iter()
        .map(|(mut m, [arrival, seat, draw, late])| {
            let per_s = |n: u64| {
                if m.ran_s > 0.0 {
                    n as f64 / m.ran_s
                } else {
                    0.0
                }
            };
            m.arrivals_per_s = per_s(m.arrivals);
            m.departures_per_s = per_s(m.departures);
            m.logins_per_s = per_s(m.logins);
            m.arrival_lateness = SavedHistogram::of(&arrival);
            m.time_to_seat = SavedHistogram::of(&seat);
            m.draw_overshoot = SavedHistogram::of(&draw);
            m.reply_lateness = SavedHistogram::of(&late);
            m
        })
        .collect())
}

/// The profile's corners, (seconds, players online): the line a chart draws it with.
pub fn corners(profile: &[SavedProfileStage]) -> Vec<(f64, f64)> {
    let mut start = 0.0;
    let mut points = Vec::new();
    for stage in profile {
        points.push((start, stage.from as f64));
        start += stage.duration_s;
        points.push((start, stage.to as f64));
    }
    points
}

/// The profile in `--stages`' words: `3s:0-16,4s:16,2s:16-0`.
pub fn profile_words(profile: &[SavedProfileStage]) -> String {
    let words: Vec<String> = profile
        .iter()
        .map(|stage| {
            let length = format!("{}s", (stage.duration_s * 1e3).round() / 1e3);
            if stage.from == stage.to {
                format!("{length}:{}", stage.from)
            } else {
                format!("{length}:{}-{}", stage.from, stage.to)
            }
        })
        .collect();
    words.join(",")
}

/// The per-stage table of the text report (nothing without stages).
pub fn render(out: &mut String, stages: &[SavedSessionStage], stopped_in: Option<usize>) {
    if stages.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "  Stages: players online; arrivals, departures, logins per second; arrival lateness \
         (profile to login); time to seat (arrival to game start); draw overshoot; reply lateness"
    );
    let _ = writeln!(
        out,
        "    {:<6}{:>8}{:>12}{:>9}{:>9}{:>9}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}",
        "stage",
        "time",
        "players",
        "arr/s",
        "dep/s",
        "login/s",
        "arr p99",
        "seat p50",
        "seat p99",
        "draw p99",
        "late p50",
        "late p99"
    );
    for s in stages {
        let players = if s.from == s.to {
            s.from.to_string()
        } else {
            format!("{}-{}", s.from, s.to)
        };
        let p = |h: &SavedHistogram, v: u64| match h.sampled() {
            Some(_) => format_time_us(v as f64),
            None => "-".to_string(),
        };
        let _ = writeln!(
            out,
            "    {:<6}{:>8}{:>12}{:>9.2}{:>9.2}{:>9.2}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}",
            s.stage,
            format!("{:.1}s", s.ran_s),
            players,
            s.arrivals_per_s,
            s.departures_per_s,
            s.logins_per_s,
            p(&s.arrival_lateness, s.arrival_lateness.p99),
            p(&s.time_to_seat, s.time_to_seat.p50),
            p(&s.time_to_seat, s.time_to_seat.p99),
            p(&s.draw_overshoot, s.draw_overshoot.p99),
            p(&s.reply_lateness, s.reply_lateness.p50),
            p(&s.reply_lateness, s.reply_lateness.p99),
        );
    }
    if let Some(stage) = stopped_in {
        let _ = writeln!(out, "  Stopped in stage {stage}");
    }
}
