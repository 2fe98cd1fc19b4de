//! A mahjong session as saved to JSON (`tsumo mahjong --json`): [`SavedSession`] is the schema,
//! written and read, as [`SavedRun`](crate::report::http::saved::SavedRun) is for an HTTP run.
//!
//! Why typed: `compare`, `merge`, `plot` and the A/B rounds all read sessions back, and a
//! layout kept in one struct is checked by the compiler in all four places (before, each spelled
//! the same JSON paths). The conventions are the HTTP file's: µs for latencies, seconds as
//! floats (`*_s`), every histogram kept whole as a base64 HdrHistogram compressed V2 string
//! beside its summary ([`SavedHistogram`]), so sessions merge exactly.

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use super::intervals::{session_intervals, SavedSessionInterval};
use super::stages::{SavedProfileStage, SavedSessionStage};
use crate::mahjong::bot::StepKind;
pub use crate::report::histogram::SavedHistogram;
use crate::report::schema::{first_schema, SavedPart, SCHEMA_VERSION};
use crate::slo::{self, Verdict};
use crate::stats::end::EndReason;
use crate::stats::mahjong::{ErrorGroup, LogoutCounts, PlayStats, RunResult, PHASES};
use crate::sys::procstat::ServerUsage;
use crate::timing::pacer::Pacing;

/// One session as saved to JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSession {
    /// Always `"tsumo"`.
    pub tool: String,
    /// tsumo's version (`CARGO_PKG_VERSION`) that wrote the file.
    pub version: String,
    /// Always `"mahjong"`.
    pub mode: String,
    /// The format version, see [`SCHEMA_VERSION`].
    #[serde(default = "first_schema")]
    pub schema: u32,
    /// The session's name in comparisons (`--label`; default: the URL).
    pub label: String,
    pub plan: SavedSessionPlan,
    /// Wall time of the session, seconds.
    pub elapsed_s: f64,
    /// Stopped by a signal (Ctrl-C, SIGTERM, SIGHUP).
    pub interrupted: bool,
    /// What ended it: `done`, `duration`, `server gone` (`--stages`), `SIGINT`, `SIGTERM`,
    /// `SIGHUP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<EndReason>,
    /// The `-d` limit ended the session before every game was over.
    pub timed_out: bool,
    /// By phase name (see [`PHASES`]; [`SavedSession::phase_names`] gives their order).
    pub phases: BTreeMap<String, SavedPhase>,
    pub games: SavedGames,
    /// Step intervals of one table, by the kind of step that opened them.
    pub steps: BTreeMap<String, SavedHistogram>,
    /// Own-draw steps: interval beyond the think time.
    pub draw_overshoot: SavedHistogram,
    /// Deal steps: interval beyond the server's 400 ms step minimum.
    pub deal_overshoot: SavedHistogram,
    /// Per table: `START` sent to the game's start received.
    pub start_burst: SavedHistogram,
    /// tsumo's own lateness: actual − intended reply time.
    pub reply_lateness: SavedHistogram,
    pub messages: SavedMessages,
    /// WebSockets closed before their player was done.
    pub disconnects: u64,
    /// Protocol errors.
    pub errors: u64,
    /// The first few protocol errors, verbatim.
    pub first_errors: Vec<String>,
    /// Every error by kind: how many, and the first few verbatim (absent in files from before
    /// errors were grouped).
    #[serde(default)]
    pub error_kinds: BTreeMap<String, ErrorGroup>,
    /// Signals caught while the players logged out (besides one that ended the session): the
    /// first lets the logout go on, a second cuts it short.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals_in_logout: Vec<String>,
    /// Players whose session could not be logged out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_on_server: Vec<String>,
    /// Logouts retried, done past `--logout-timeout`, and late logins' sessions logged out;
    /// absent when none.
    #[serde(default, skip_serializing_if = "LogoutCounts::is_empty")]
    pub logouts: LogoutCounts,
    /// Why the session failed: the line tsumo exits 1 with (absent when it did not fail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// What the players did, by bot kind (`shanten`, `tsumogiri`).
    #[serde(default)]
    pub bots: BTreeMap<String, SavedBot>,
    /// tsumo's own CPU and memory.
    pub tsumo: SavedOwnUsage,
    /// CPU and memory of the `--server-pid` processes; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerUsage>,
    /// `--slo`: each objective with what the session measured, as in an HTTP run's file;
    /// absent without objectives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objectives: Vec<Verdict>,
    /// The session interval by interval (`--interval`); absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<SavedSessionInterval>,
    /// `--stages`: each stage the session reached, with what it recorded; absent without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<SavedSessionStage>,
    /// `--stages`: the stage (from 1) a signal or a server gone stopped the session in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_in_stage: Option<usize>,
    /// `--requests`: where the log of the bots' timed replies went, its rows, and whether it
    /// is complete; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_log: Option<crate::stats::requests::RequestsLog>,
    /// `merged_from`, `run_id`, `shard`, `start`, as in an HTTP run's file.
    #[serde(flatten)]
    pub part: SavedPart,
}

/// The plan's settings that shape the results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSessionPlan {
    /// The server's base URL as typed.
    pub url: String,
    pub players: u64,
    /// tsumo's players per table (`--seats`); written only when not 4.
    #[serde(default = "four_seats", skip_serializing_if = "is_four_seats")]
    pub seats: u64,
    pub threads: u64,
    /// The `-d` limit, seconds.
    pub duration_s: f64,
    pub ramp_s: f64,
    pub think_s: f64,
    pub think_jitter_s: f64,
    /// Games per table.
    pub games: u32,
    /// The `START` timer, seconds (`[limit]` or `[limit, bank]`); `null` without `--timer`.
    pub timer: Option<Vec<u64>>,
    pub lockstep: bool,
    /// The complete rule object sent with `START`.
    pub rule: serde_json::Value,
    /// `--bind`: the source addresses the players were spread over, as in an HTTP run's file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bind: Vec<IpAddr>,
    /// The slots (µs) of the worker's pacer in which think times end: a reply held for its think
    /// time goes at its time or up to this much after it. Absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_slack_us: Option<u64>,
    /// `--stages`: the players online over time, stage by stage; absent without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<SavedProfileStage>,
    /// `--stay`: the games each table plays before its players leave; absent without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stay: Option<u32>,
}

fn four_seats() -> u64 {
    4
}

fn is_four_seats(seats: &u64) -> bool {
    *seats == 4
}

/// What the players of one bot kind did (summed over players: a hand counts once per player):
/// the recorder's own type, saved as it is.
pub type SavedBot = PlayStats;

/// One phase: successes and failures, and the latency of the successes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedPhase {
    pub ok: u64,
    pub failed: u64,
    /// Written beside `ok` and `failed`, as one object.
    #[serde(flatten)]
    pub latency: SavedHistogram,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedGames {
    pub started: u64,
    pub completed: u64,
    /// Games that ended early: the server aborted them, or their players' sockets closed.
    pub aborted: u64,
    /// Games still being played when the session ended (the `-d` limit, a signal); absent in
    /// files of older tsumos, which counted them as aborted.
    #[serde(default)]
    pub cut: u64,
    /// Duration of completed games, µs.
    pub duration: SavedHistogram,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedMessages {
    #[serde(rename = "in")]
    pub received: u64,
    #[serde(rename = "out")]
    pub sent: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SavedOwnUsage {
    /// User + system CPU, seconds.
    pub cpu_s: f64,
    pub peak_rss_bytes: u64,
}

impl SavedSession {
    /// The step kinds to show, in one order for the report and `compare`: every kind this build
    /// knows, in the game's order, then any others the session saw (a later build's).
    pub fn step_kinds(&self) -> Vec<&str> {
        let known = StepKind::ALL.map(StepKind::as_str);
        let others = self
            .steps
            .keys()
            .map(String::as_str)
            .filter(|k| !known.contains(k));
        known.into_iter().chain(others).collect()
    }

    /// Everything in `r`, in the saved layout.
    pub fn from_result(r: &RunResult) -> SavedSession {
        let p = &r.plan;
        let rec = &r.record;
        let phases = PHASES
            .iter()
            .filter_map(|name| {
                let stats = rec.phases.get(name)?;
                let phase = SavedPhase {
                    ok: stats.ok,
                    failed: stats.failed,
                    latency: SavedHistogram::of(&stats.latency),
                };
                Some((name.to_string(), phase))
            })
            .collect();
        let steps = rec
            .steps
            .iter()
            .map(|(kind, h)| (kind.to_string(), SavedHistogram::of(h)))
            .collect();
        let mut saved = SavedSession {
            tool: "tsumo".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            mode: "mahjong".to_string(),
            schema: SCHEMA_VERSION,
            label: p.options.label.clone(),
            plan: saved_plan(r),
            elapsed_s: r.elapsed.as_secs_f64(),
            interrupted: r.interrupted,
            ended_by: Some(r.ended_by),
            timed_out: r.timed_out,
            phases,
            games: SavedGames {
                started: rec.games_started,
                completed: rec.games_completed,
                aborted: rec.games_aborted,
                cut: rec.games_cut,
                duration: SavedHistogram::of(&rec.game_time),
            },
            steps,
            draw_overshoot: SavedHistogram::of(&rec.draw_overshoot),
            deal_overshoot: SavedHistogram::of(&rec.deal_overshoot),
            start_burst: SavedHistogram::of(&rec.start_burst),
            reply_lateness: SavedHistogram::of(&rec.reply_lateness),
            messages: SavedMessages {
                received: rec.messages_in,
                sent: rec.messages_out,
                bytes_in: rec.bytes_in,
                bytes_out: rec.bytes_out,
            },
            disconnects: rec.disconnects,
            errors: rec.protocol_errors,
            first_errors: rec.first_errors.clone(),
            error_kinds: rec.error_kinds.clone(),
            signals_in_logout: r.signals_in_logout.clone(),
            left_on_server: rec.left_on_server.clone(),
            logouts: rec.logouts,
            // Judged by the report (`report::mahjong::saved`), which sees the whole result.
            failure: None,
            bots: rec
                .bots
                .iter()
                .map(|(kind, p)| (kind.to_string(), p.clone()))
                .collect(),
            tsumo: SavedOwnUsage {
                cpu_s: r.cpu_seconds,
                peak_rss_bytes: r.peak_rss_bytes,
            },
            server: r.server.clone(),
            objectives: Vec::new(),
            intervals: session_intervals(
                &rec.timeline,
                r.start.intended_unix_ns.unwrap_or(r.start.actual_unix_ns),
                r.elapsed.as_secs_f64(),
            ),
            part: SavedPart::of(&p.options.part, &r.start),
            stages: super::stages::saved(r),
            stopped_in_stage: super::stages::stopped_in(r),
            requests_log: r.requests_log.clone(),
        };
        // Judged on the saved measures, as a saved session is judged again.
        saved.objectives = slo::judge(&p.options.objectives, &saved);
        saved
    }

    /// What ended the games still being played: `cut at the -d limit`, `cut by SIGINT`, or
    /// `cut at the end` (a capacity search's last step, a file that does not say).
    pub fn games_cut_at(&self) -> String {
        if self.timed_out && !self.plan.stages.is_empty() {
            "cut at the profile's end".to_string()
        } else if self.timed_out {
            "cut at the -d limit".to_string()
        } else if self.interrupted {
            format!(
                "cut by {}",
                self.ended_by.map_or("a signal", EndReason::name)
            )
        } else {
            "cut at the end".to_string()
        }
    }

    /// Phase names in the order players go through them, then any others the file has.
    pub fn phase_names(&self) -> Vec<&str> {
        let known = PHASES
            .iter()
            .copied()
            .filter(|p| self.phases.contains_key(*p));
        let others = self
            .phases
            .keys()
            .map(String::as_str)
            .filter(|k| !PHASES.contains(k));
        known.chain(others).collect()
    }

    /// The histogram called `name`: a whole-session one (`reply_lateness`, `draw_overshoot`,
    /// `deal_overshoot`, `start_burst`, `games`), else a phase, else a step kind.
    pub fn histogram(&self, name: &str) -> Option<&SavedHistogram> {
        match name {
            "reply_lateness" => Some(&self.reply_lateness),
            "draw_overshoot" => Some(&self.draw_overshoot),
            "deal_overshoot" => Some(&self.deal_overshoot),
            "start_burst" => Some(&self.start_burst),
            "games" | "game_time" => Some(&self.games.duration),
            _ => self
                .phases
                .get(name)
                .map(|p| &p.latency)
                .or_else(|| self.steps.get(name)),
        }
    }

    /// Every name [`SavedSession::histogram`] knows in this session, for a message.
    pub fn histogram_names(&self) -> Vec<&str> {
        let mut names = vec![
            "reply_lateness",
            "draw_overshoot",
            "deal_overshoot",
            "start_burst",
            "games",
        ];
        names.extend(self.phase_names());
        names.extend(self.steps.keys().map(String::as_str));
        names
    }
}

/// The plan of the run `r`, in the saved layout.
fn saved_plan(r: &RunResult) -> SavedSessionPlan {
    let p = &r.plan;
    SavedSessionPlan {
        url: p.server.url.clone(),
        players: p.players as u64,
        seats: p.seats as u64,
        threads: p.options.threads as u64,
        duration_s: p.options.duration.as_secs_f64(),
        ramp_s: p.ramp.as_secs_f64(),
        think_s: p.think.as_secs_f64(),
        think_jitter_s: p.think_jitter.as_secs_f64(),
        games: p.games,
        timer: p.timer.clone(),
        lockstep: p.lockstep,
        rule: p.rule.clone(),
        bind: p.options.bind.clone(),
        think_slack_us: Some(Pacing::THINK.slack_us()),
        stages: super::stages::profile(r),
        stay: p.stay,
    }
}
