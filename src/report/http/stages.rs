//! A `--stages` run's stages as saved (`"stages"` in the JSON), as the report prints them
//! (a line each after wrk2's block), as objectives judge them (each stage on its own, beside
//! the whole run) and as `tsumo merge` adds them up (exactly: whole histograms).
//!
//! The stages listed are those written that last (a jump, `0s:A-B`, holds no request and is
//! left out, the others keeping the number the user wrote) and that the run reached: a run cut
//! short (Ctrl-C, a server gone) ends its list with the stage it stopped in (`stopped_in_stage`), the
//! stages after it are not reached and not listed.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::percentiles::Percentiles;
use crate::capacity::grouped;
use crate::error::Error;
use crate::report::result::add_encoded;
use crate::report::schema::encode_histogram;
use crate::slo::{self, Measure, Measured, Objective, Verdict};
use crate::stats::format::format_time_us;
use crate::stats::http::shortfall::Side;
use crate::stats::http::stages::{RunStages, StageResult};
use crate::stats::http::{Counters, Errors, Unsent};
use crate::stats::new_histogram;

/// A stage fell short when it completed less than this share of its target (the whole run's
/// threshold), one request per connection aside.
const REACHED_SHARE: f64 = 0.98;

/// One stage of a run, as saved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedStage {
    /// 1-based, as written on the command line (a jump keeps its number).
    pub index: usize,
    /// Start, seconds from the start of the run, and length, as written.
    pub start_s: f64,
    pub duration_s: f64,
    /// How much of it ran, seconds (less than `duration_s` in the stage a run stopped in).
    pub ran_s: f64,
    /// The rate at its start and at its end, requests/s (equal: a hold).
    pub from: u64,
    pub to: u64,
    /// Requests due in the part that ran: the integral of the rate.
    pub target: u64,
    /// Responses to the requests due in it (a request belongs to the stage its intended send
    /// time falls in).
    pub requests: u64,
    /// `requests` over `ran_s`.
    pub requests_per_sec: f64,
    pub errors: Errors,
    /// Paced sends of the stage due while their connection still waited for a response.
    pub due_while_busy: u64,
    /// Requests due in the stage but never sent, by why (as the whole run's `counters.unsent`;
    /// absent from older files: none).
    #[serde(default)]
    pub unsent: Unsent,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Corrected latency, µs.
    pub latency: Percentiles,
    pub uncorrected: Percentiles,
    /// What the server caused of the corrected latency, µs.
    pub server_latency: Percentiles,
    pub send_lateness: Percentiles,
    pub histograms: StageHistograms,
    /// Present when the stage completed less than its target: by how much, and what held it
    /// back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortfall: Option<StageShortfall>,
    /// `--slo` judged on this stage alone; absent without objectives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objectives: Vec<Verdict>,
}

/// A stage's whole histograms, each a base64 HdrHistogram compressed V2 string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageHistograms {
    pub latency: String,
    pub uncorrected: String,
    pub server_latency: String,
    pub send_lateness: String,
}

/// A stage that fell short.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageShortfall {
    /// Requests of the target with no response.
    pub missing: u64,
    /// requests / target.
    pub share: f64,
    /// `connections` (most sends fell due on a busy connection: `-c` held it back), `tsumo`
    /// (the whole run's shortfall was tsumo's own) or `server`.
    pub held_back_by: String,
}

/// The histograms of a stage, decoded or added up.
struct Hists {
    latency: Histogram<u64>,
    uncorrected: Histogram<u64>,
    server: Histogram<u64>,
    send_lateness: Histogram<u64>,
}

impl SavedStage {
    fn of(stage: &StageResult, connections: usize, tsumos: bool) -> SavedStage {
        let r = &stage.record;
        let c = &r.counts;
        let s = |ns: u64| ns as f64 / 1e9;
        let mut saved = SavedStage {
            index: stage.index,
            start_s: s(stage.start_ns),
            duration_s: s(stage.duration_ns),
            ran_s: s(stage.ran_ns),
            from: stage.from,
            to: stage.to,
            target: stage.target,
            requests: c.requests,
            requests_per_sec: 0.0,
            errors: c.errors,
            due_while_busy: c.due_while_busy,
            unsent: c.unsent,
            bytes_read: c.bytes_read,
            bytes_written: c.bytes_written,
            latency: Percentiles::of(&r.latency),
            uncorrected: Percentiles::of(&r.uncorrected),
            server_latency: Percentiles::of(&r.server),
            send_lateness: Percentiles::of(&r.send_lateness),
            histograms: StageHistograms {
                latency: encode_histogram(&r.latency),
                uncorrected: encode_histogram(&r.uncorrected),
                server_latency: encode_histogram(&r.server),
                send_lateness: encode_histogram(&r.send_lateness),
            },
            shortfall: None,
            objectives: Vec::new(),
        };
        saved.settle(connections, tsumos);
        saved
    }

    /// The rate and the shortfall from the counts.
    fn settle(&mut self, connections: usize, tsumos: bool) {
        self.requests_per_sec = if self.ran_s > 0.0 {
            self.requests as f64 / self.ran_s
        } else {
            0.0
        };
        let target = self.target as f64;
        let reached = self.requests as f64 + connections as f64 >= target * REACHED_SHARE;
        self.shortfall = (!reached).then(|| {
            let sends = self.send_lateness.count.max(1);
            let held_back_by = if tsumos {
                "tsumo"
            } else if self.due_while_busy * 2 >= sends {
                "connections"
            } else {
                "server"
            };
            StageShortfall {
                missing: self.target.saturating_sub(self.requests),
                share: self.requests as f64 / target.max(1.0),
                held_back_by: held_back_by.to_string(),
            }
        });
    }

    fn decoded(&self, source: &str) -> Result<Hists, Error> {
        let mut h = Hists {
            latency: new_histogram(),
            uncorrected: new_histogram(),
            server: new_histogram(),
            send_lateness: new_histogram(),
        };
        h.add(self, source)?;
        Ok(h)
    }

    /// `2,000→8,000` (a ramp) or `2,000` (a hold), requests/s.
    pub fn rates(&self) -> String {
        if self.from == self.to {
            grouped(self.from)
        } else {
            format!("{}→{}", grouped(self.from), grouped(self.to))
        }
    }

    /// `stage 3 (2,000→8,000 req/s)`: how a breach and a CI report name it.
    pub fn title(&self) -> String {
        format!("stage {} ({} req/s)", self.index, self.rates())
    }
}

impl Hists {
    fn add(&mut self, stage: &SavedStage, source: &str) -> Result<(), Error> {
        let h = &stage.histograms;
        add_encoded(&mut self.latency, &h.latency, source, "stage latency")?;
        add_encoded(
            &mut self.uncorrected,
            &h.uncorrected,
            source,
            "stage uncorrected",
        )?;
        add_encoded(&mut self.server, &h.server_latency, source, "stage server")?;
        add_encoded(
            &mut self.send_lateness,
            &h.send_lateness,
            source,
            "stage lateness",
        )
    }
}

/// A run's stages as saved, each judged by `objectives`.
pub fn saved(
    stages: &RunStages,
    connections: usize,
    whole_side: Option<Side>,
    objectives: &[Objective],
) -> Vec<SavedStage> {
    let tsumos = matches!(whole_side, Some(Side::Generator | Side::Late | Side::Hung));
    stages
        .stages
        .iter()
        .map(|stage| {
            let mut saved = SavedStage::of(stage, connections, tsumos);
            saved.objectives = slo::judge(objectives, &saved);
            saved
        })
        .collect()
}

/// Judges each stage again by the objectives of `whole` (the whole run's verdicts).
pub fn judge_again(stages: &mut [SavedStage], whole: &[Verdict]) {
    let objectives: Vec<Objective> = whole
        .iter()
        .filter_map(|v| slo::parse_http(&v.expr).ok())
        .collect();
    for stage in stages {
        stage.objectives = slo::judge(&objectives, &*stage);
    }
}

/// The stages of parts of one run added up, stage by stage (exact: whole histograms; a stage
/// only some parts reached is in the sum as they ran it).
pub fn merge(
    parts: &[(&[SavedStage], &str)],
    connections: usize,
) -> Result<Vec<SavedStage>, Error> {
    let mut merged: Vec<(SavedStage, Hists, bool)> = Vec::new();
    for (stages, source) in parts {
        for stage in *stages {
            let tsumos = stage
                .shortfall
                .as_ref()
                .is_some_and(|s| s.held_back_by == "tsumo");
            match merged.iter_mut().find(|(m, _, _)| m.index == stage.index) {
                None => merged.push((stage.clone(), stage.decoded(source)?, tsumos)),
                Some((m, hists, was_tsumos)) => {
                    hists.add(stage, source)?;
                    *was_tsumos |= tsumos;
                    m.ran_s = m.ran_s.max(stage.ran_s);
                    m.target += stage.target;
                    m.requests += stage.requests;
                    m.errors.add(&stage.errors);
                    m.due_while_busy += stage.due_while_busy;
                    m.unsent.add(&stage.unsent);
                    m.bytes_read += stage.bytes_read;
                    m.bytes_written += stage.bytes_written;
                }
            }
        }
    }
    merged.sort_by_key(|(m, _, _)| m.index);
    Ok(merged
        .into_iter()
        .map(|(mut m, h, tsumos)| {
            m.latency = Percentiles::of(&h.latency);
            m.uncorrected = Percentiles::of(&h.uncorrected);
            m.server_latency = Percentiles::of(&h.server);
            m.send_lateness = Percentiles::of(&h.send_lateness);
            m.histograms = StageHistograms {
                latency: encode_histogram(&h.latency),
                uncorrected: encode_histogram(&h.uncorrected),
                server_latency: encode_histogram(&h.server),
                send_lateness: encode_histogram(&h.send_lateness),
            };
            m.settle(connections, tsumos);
            m
        })
        .collect())
}

impl Measured for SavedStage {
    /// As the whole run's: the server's latency, the failed share of the requests due, and
    /// the responses over the stage's own target.
    fn measure(&self, measure: &Measure) -> Option<f64> {
        match measure {
            Measure::Latency(p) => {
                let l = &self.server_latency;
                l.at(*p)
            }
            Measure::ErrorShare => {
                let socket = self.errors.socket_total();
                let due = self.requests + socket;
                (due > 0).then(|| (socket + self.errors.status) as f64 * 100.0 / due as f64)
            }
            Measure::RateShare => {
                (self.target > 0).then(|| self.requests as f64 * 100.0 / self.target as f64)
            }
            _ => None,
        }
    }

    fn judged_on(&self, measure: &Measure) -> Option<&'static str> {
        matches!(measure, Measure::Latency(_)).then_some("server_latency")
    }
}

/// `0s`, `30s`, `1.5s`, `2m`, `2m30s`, `1h5m`.
fn at(seconds: f64) -> String {
    let whole = seconds.round();
    if (seconds - whole).abs() > 1e-6 {
        return format!("{seconds:.1}s");
    }
    let whole = whole as u64;
    let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

/// The report's stage lines: a head, a line each (`stage 3  30s→2m  2,000→8,000 …`), each
/// shortfall's cause, and where a run cut short stopped.
pub fn lines(stages: &[SavedStage], stopped_in: Option<usize>, connections: usize) -> Vec<String> {
    if stages.is_empty() {
        return Vec::new();
    }
    let head = [
        "Stages",
        "",
        "target/s",
        "achieved/s",
        "p50",
        "p99",
        "max",
        "server p99",
        "errors",
    ];
    let time = |us: u64, count: u64| {
        if count == 0 {
            "-".to_string()
        } else {
            format_time_us(us as f64)
        }
    };
    let mut rows: Vec<[String; 9]> = vec![head.map(str::to_string)];
    for s in stages {
        let (l, n) = (&s.latency, s.latency.count);
        rows.push([
            format!("  stage {}", s.index),
            format!("{}→{}", at(s.start_s), at(s.start_s + s.duration_s)),
            s.rates(),
            grouped(s.requests_per_sec.round() as u64),
            time(l.p50, n),
            time(l.p99, n),
            time(l.max, n),
            time(s.server_latency.p99, s.server_latency.count),
            grouped(s.errors.socket_total() + s.errors.status),
        ]);
    }
    let widths: Vec<usize> = (0..9)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut lines: Vec<String> = rows
        .iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .enumerate()
                .map(|(i, (cell, &w))| {
                    let pad = w - cell.chars().count();
                    match i {
                        0 | 1 => format!("{cell}{}", " ".repeat(pad)),
                        _ => format!("{}{cell}", " ".repeat(pad)),
                    }
                })
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect();
    for s in stages {
        let Some(short) = &s.shortfall else { continue };
        let who = match short.held_back_by.as_str() {
            "connections" => format!("-c{connections}"),
            "tsumo" => "tsumo".to_string(),
            _ => "the server".to_string(),
        };
        let busy = match short.held_back_by.as_str() {
            "connections" => format!(
                "; {:.0}% of sends due on a busy connection",
                s.due_while_busy as f64 * 100.0 / s.send_lateness.count.max(1) as f64
            ),
            _ => String::new(),
        };
        lines.push(format!(
            "  {who} held the rate back in stage {} ({:.1}% of its target{busy})",
            s.index,
            short.share * 100.0
        ));
    }
    for s in stages {
        if let Some(line) = s.unsent.line() {
            let said = line.strip_prefix("Unsent: ").unwrap_or(&line);
            lines.push(format!("  stage {}: {said}", s.index));
        }
    }
    if let Some(stopped) = stopped_in {
        lines.push(format!(
            "  stopped in stage {stopped}, the stages after it not reached"
        ));
    }
    lines
}

/// Each objective broken in a stage: `p99<10ms broken in stage 3 (2,000→8,000 req/s): p99
/// 41.0ms` (a latency is the server's share, as the whole run's: `judged_on` in the JSON).
pub fn broken(stages: &[SavedStage]) -> Vec<String> {
    stages
        .iter()
        .flat_map(|s| {
            s.objectives.iter().filter(|v| !v.held).map(move |v| {
                let measured = match v.measured {
                    Some(value) => format!("{} {}", v.name(), slo::format_value(value, v.unit)),
                    None => format!("{} not measured", v.name()),
                };
                format!("{} broken in {}: {measured}", v.expr, s.title())
            })
        })
        .collect()
}

/// The report's objective lines for the stages: none without objectives or stages.
pub fn objective_lines(stages: &[SavedStage]) -> Vec<String> {
    let judged = stages.iter().filter(|s| !s.objectives.is_empty()).count();
    if judged == 0 {
        return Vec::new();
    }
    let broken = broken(stages);
    let mut lines = vec![match broken.len() {
        0 => format!("Objectives per stage: all held in each of {judged} stages"),
        n => format!("Objectives per stage: {n} broken"),
    }];
    lines.extend(broken.into_iter().map(|line| format!("  BROKEN  {line}")));
    lines
}

/// A reached stage that got no response at all (the server died, or stopped answering): the
/// run failed there. The whole run's errors and unsent requests (`run`) say why: a failed
/// connect or a request never sent has no stage of its own.
pub fn no_response(stages: &[SavedStage], run: &Counters) -> Option<String> {
    let s = stages.iter().find(|s| s.requests == 0 && s.target > 0)?;
    Some(format!(
        "no response in stage {} ({} req/s, {} due); in the whole run {} socket errors, {} \
         requests never sent",
        s.index,
        s.rates(),
        grouped(s.target),
        grouped(run.errors.socket_total()),
        grouped(run.unsent.total())
    ))
}

/// `server gone in stage 2 (50→100 req/s): …`: a run the server left (`ended_by` `server
/// gone`), ended in the stage it stopped in (the last listed, if none is named).
pub fn server_gone(stages: &[SavedStage], stopped_in: Option<usize>, run: &Counters) -> String {
    let stage = stopped_in
        .and_then(|n| stages.iter().find(|s| s.index == n))
        .or(stages.last())
        .map_or("the run".to_string(), |s| s.title());
    format!(
        "server gone in {stage}: a second with no response and only failed connects; in the \
         whole run {} socket errors, {} requests never sent",
        grouped(run.errors.socket_total()),
        grouped(run.unsent.total())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Shard, Stage};
    use crate::stats::http::stages::StageRecord;
    use crate::timing::stages::Profile;

    const S: u64 = 1_000_000_000;

    /// A profile of a ramp, a jump and a hold, each stage's record with `n` responses of
    /// `us` µs (1000 µs in stage 1).
    fn run_stages(shard: Shard, us: u64, n: u64) -> RunStages {
        let profile = Profile::new(&[
            Stage {
                duration_ns: S,
                from: 0,
                to: 400,
            },
            Stage {
                duration_ns: 0,
                from: 400,
                to: 800,
            },
            Stage {
                duration_ns: S,
                from: 800,
                to: 800,
            },
        ]);
        let records = (0..3)
            .map(|i| {
                let mut r = StageRecord::default();
                for _ in 0..n {
                    r.latency.record(if i == 0 { 1000 } else { us }).unwrap();
                    r.server.record(if i == 0 { 1000 } else { us }).unwrap();
                    r.send_lateness.record(1).unwrap();
                }
                r.counts.requests = n;
                r
            })
            .collect();
        RunStages::of(
            profile.stages(),
            |t| profile.due(t),
            shard,
            records,
            2 * S,
            false,
        )
    }

    #[test]
    fn shards_split_each_stage_target_and_merge_to_one_process() {
        let whole = run_stages(Shard::WHOLE, 5000, 10);
        let targets: Vec<_> = whole.stages.iter().map(|s| (s.index, s.target)).collect();
        assert_eq!(targets, [(1, 200), (3, 800)]);
        let objectives = [slo::parse_http("p99<3ms").unwrap()];
        let parts: Vec<Vec<SavedStage>> = (0..3)
            .map(|index| {
                let part = run_stages(Shard { index, count: 3 }, 5000, 10);
                saved(&part, 4, None, &objectives)
            })
            .collect();
        let shares: Vec<u64> = parts.iter().map(|p| p[0].target).collect();
        assert_eq!(shares, [67, 67, 66]);
        let refs: Vec<(&[SavedStage], &str)> = parts.iter().map(|p| (&p[..], "x")).collect();
        let mut merged = merge(&refs, 12).unwrap();
        assert_eq!(merged[0].target, 200);
        assert_eq!(merged[1].target, 800);
        assert_eq!(merged[1].requests, 30);
        assert_eq!(merged[1].latency.count, 30);
        // 30 of 800: short, with no send due on a busy connection: the server's.
        let short = merged[1].shortfall.clone().unwrap();
        assert_eq!(
            (short.missing, short.held_back_by.as_str()),
            (770, "server")
        );
        let whole_verdicts = slo::judge(&objectives, &merged[0]);
        judge_again(&mut merged, &whole_verdicts);
        assert!(merged[0].objectives[0].held);
        assert_eq!(
            broken(&merged),
            ["p99<3ms broken in stage 3 (800 req/s): p99 5.0ms"]
        );
        assert_eq!(no_response(&merged, &Counters::default()), None);
    }

    #[test]
    fn a_line_per_stage_under_100_columns_and_the_stop() {
        let mut stages = saved(&run_stages(Shard::WHOLE, 41_000, 200), 10, None, &[]);
        stages[1].due_while_busy = 150;
        stages[1].send_lateness.count = 200;
        stages[1].settle(10, false);
        let lines = lines(&stages, Some(3), 10);
        assert_eq!(lines.len(), 5, "{lines:#?}");
        assert!(lines[0].starts_with("Stages  "), "{lines:#?}");
        let words: Vec<Vec<&str>> = lines
            .iter()
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(
            words[1][..5],
            ["stage", "1", "0s→1s", "0→400", "200"],
            "{lines:#?}"
        );
        assert_eq!(
            words[2][..5],
            ["stage", "3", "1s→2s", "800", "200"],
            "{lines:#?}"
        );
        assert_eq!(words[2][6], "40.99ms", "{lines:#?}");
        assert_eq!(
            lines[3],
            "  -c10 held the rate back in stage 3 (25.0% of its target; 75% of sends due on a \
             busy connection)"
        );
        assert_eq!(
            lines[4],
            "  stopped in stage 3, the stages after it not reached"
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 100));
        assert_eq!(at(150.0), "2m30s");
        assert_eq!(at(1.5), "1.5s");
        assert_eq!(at(3600.0), "1h");
    }
    /// Each stage's unsent requests: a line where there are any, added up exactly in a merge.
    #[test]
    fn a_stages_unsent_requests_have_a_line_and_merge() {
        let mut parts: Vec<Vec<SavedStage>> = (0..2)
            .map(|index| {
                saved(
                    &run_stages(Shard { index, count: 2 }, 5000, 10),
                    4,
                    None,
                    &[],
                )
            })
            .collect();
        parts[0][1].unsent.busy = 3;
        parts[1][1].unsent.busy = 2;
        parts[1][1].unsent.late = 1;
        let refs: Vec<(&[SavedStage], &str)> = parts.iter().map(|p| (&p[..], "x")).collect();
        let merged = merge(&refs, 8).unwrap();
        assert_eq!(merged[0].unsent, Unsent::default());
        assert_eq!((merged[1].unsent.busy, merged[1].unsent.late), (5, 1));
        let lines = lines(&merged, None, 8);
        let unsent: Vec<&String> = lines.iter().filter(|l| l.contains("never sent")).collect();
        assert_eq!(
            unsent,
            [
                "  stage 3: 6 requests fell due but were never sent: 5 while their connection \
              waited for earlier responses, 1 while their connection was free: tsumo fell \
              behind its own schedule"
            ]
        );
    }
}
