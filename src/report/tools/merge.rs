//! `tsumo merge`: one result from runs that went on at the same time in several processes or on
//! several machines (one generator is often not enough to load a server).
//!
//! The sum is exact because every saved histogram is whole: histograms are decoded, added and
//! encoded again, and percentiles are recomputed from the sums with wrk2's arithmetic — never
//! averaged, since a mean of p99s is not the p99 of anything. Counters are summed; rates are
//! summed too (the runs ran side by side); elapsed time is the longest. Each kind of result
//! merges its own fields (`SavedResult::merge`, beside its saved type); here are the checks
//! that the parts are parts of one run, the server's figures, and the lines printed.

use std::path::PathBuf;

use serde_json::Value;

use crate::error::Error;
use crate::plan::JsonOut;
use crate::report::schema::{write_value, SavedPart};
use crate::report::timeline;
use crate::report::tools::compare::{self, LoadedRun, RunData};
use crate::report::tools::{merge_requests, saved, shards};
use crate::stats::format::counted;
use crate::sys::procstat::ServerUsage;

/// Options of `tsumo merge FILE… -o OUT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeOptions {
    pub files: Vec<PathBuf>,
    pub output: JsonOut,
    /// `--label`; default `merged (N runs)`.
    pub label: Option<String>,
    /// `--force`: merge runs of different plans (with a warning per difference).
    pub force: bool,
    /// `--requests FILE`: the runs' request logs merged into one, by intended time.
    pub requests: Option<PathBuf>,
}

/// The merged run (ready for [`compare::render`] or [`crate::report::tools::plot::render_svg`] as it is; its
/// document lists its sources in `merged_from`) and what the user should know about it (printed
/// on stderr).
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    pub run: LoadedRun,
    pub warnings: Vec<String>,
}

impl Merged {
    /// The document as `--json` lays it out, plus `"merged_from"`: the sources.
    pub fn to_json(&self) -> Value {
        // Only non-string map keys make to_value fail; the saved types have none.
        serde_json::to_value(&self.run.data).unwrap_or(Value::Null)
    }

    /// Writes the merged document (pretty JSON) to a file or stdout.
    pub fn write(&self, out: &JsonOut) -> Result<(), Error> {
        write_value(&self.run.data, out)
    }
}

/// Merges runs of one mode into one run of that mode. Runs of different plans are refused,
/// unless `force` (then each difference is a warning); so is one run given twice.
pub fn merge(runs: &[LoadedRun], label: Option<&str>, force: bool) -> Result<Merged, Error> {
    compare::check_same_mode(runs, "merge")?;
    saved::refuse_duplicates(runs, "merge")?;
    let mut warnings = shards::check(runs, force)?;
    for difference in plan_differences(runs) {
        if !force {
            return Err(Error::Usage(format!(
                "merge: {difference}; these are not parts of one run (use --force to merge \
                 them anyway)"
            )));
        }
        warnings.push(format!("merging runs of different plans: {difference}"));
    }
    warnings.extend(resampled(runs)?);
    let first = &runs[0];
    let label = label.map_or_else(
        || format!("merged ({})", counted(runs.len() as u64, "run")),
        str::to_string,
    );
    let server = merge_server(runs, &mut warnings);
    let merged_from: Vec<String> = runs.iter().map(|r| r.source.clone()).collect();
    let source = format!("merge of {}", merged_from.join(", "));
    // The merge is the whole run: its id if the parts share one, and no shard or start of its
    // own (each shard's start is on its line) — unless it is one run, which it then is.
    let part = |own: SavedPart| {
        let merged_from = merged_from.clone();
        if runs.len() == 1 {
            SavedPart { merged_from, ..own }
        } else {
            SavedPart {
                merged_from,
                run_id: shards::common_run_id(runs),
                shard: None,
                start: None,
                // Each shard ran its own command line (its --shard): none is the merge's.
                command: Vec::new(),
            }
        }
    };
    let parts: Vec<(&RunData, &str)> = runs.iter().map(|r| (&r.data, r.source.as_str())).collect();
    let mut data = first.data.merge(&parts, &label)?;
    let result = data.as_dyn_mut();
    *result.server_mut() = server;
    let own = result.part().clone();
    *result.part_mut() = part(own);
    Ok(Merged {
        run: LoadedRun::new(data, &source),
        warnings,
    })
}

/// Parts whose timelines have different interval lengths: refused unless each divides the
/// longest; else what the merge says of the resampling.
fn resampled(runs: &[LoadedRun]) -> Result<Option<String>, Error> {
    let lengths: Vec<(u64, &str)> = runs
        .iter()
        .filter_map(|r| Some((r.result().interval_ns()?, r.source.as_str())))
        .collect();
    let Some(common) = timeline::common_length(&lengths)? else {
        return Ok(None);
    };
    let shorter: Vec<String> = lengths
        .iter()
        .filter(|&&(n, _)| n != common)
        .map(|&(n, source)| format!("{source} ({})", timeline::seconds(n)))
        .collect();
    Ok((!shorter.is_empty()).then(|| {
        format!(
            "timeline resampled to intervals of {}: {} added up to it",
            timeline::seconds(common),
            shorter.join(", ")
        )
    }))
}

/// What makes two runs not parts of one run: mode aside (checked first), the URL, the planned
/// duration, the rate (HTTP) or the players and games (mahjong), each against the first run.
fn plan_differences(runs: &[LoadedRun]) -> Vec<String> {
    let first = &runs[0];
    let mut differences = Vec::new();
    for other in &runs[1..] {
        let mut differ = |what: &str, a: String, b: String| {
            if a != b {
                differences.push(format!(
                    "{what} {a} in {} but {b} in {}",
                    first.source, other.source
                ));
            }
        };
        differ("URL", first.url().to_string(), other.url().to_string());
        let theirs = other.result().plan_key();
        for ((what, a), (_, b)) in first.result().plan_key().into_iter().zip(theirs) {
            differ(what, a, b);
        }
    }
    differences
}

/// The server's figures, when every run sampled the same processes: means weighted by samples,
/// peaks the highest. Runs that sampled different processes (or none) give no server figures.
fn merge_server(runs: &[LoadedRun], warnings: &mut Vec<String>) -> Option<ServerUsage> {
    let servers: Vec<&ServerUsage> = runs.iter().filter_map(LoadedRun::server).collect();
    if servers.is_empty() {
        return None;
    }
    let sorted = |s: &ServerUsage| {
        let mut pids = s.pids.clone();
        pids.sort_unstable();
        pids
    };
    let pids = sorted(servers[0]);
    if servers.len() != runs.len() || servers.iter().any(|s| sorted(s) != pids) {
        warnings.push(
            "server CPU and memory left out: the runs did not all sample the same server \
             processes"
                .to_string(),
        );
        return None;
    }
    let samples: u64 = servers.iter().map(|s| s.samples).sum();
    let weighted = |f: fn(&ServerUsage) -> f64| {
        if samples == 0 {
            servers.iter().map(|s| f(s)).sum::<f64>() / servers.len() as f64
        } else {
            servers.iter().map(|s| f(s) * s.samples as f64).sum::<f64>() / samples as f64
        }
    };
    Some(ServerUsage {
        pids,
        samples,
        cpu_percent_mean: weighted(|s| s.cpu_percent_mean),
        cpu_percent_peak: servers
            .iter()
            .map(|s| s.cpu_percent_peak)
            .fold(0.0, f64::max),
        rss_bytes_mean: weighted(|s| s.rss_bytes_mean as f64).round() as u64,
        rss_bytes_peak: servers.iter().map(|s| s.rss_bytes_peak).max().unwrap_or(0),
    })
}

/// `tsumo merge FILE… -o OUT [--requests LOG]`: writes the merged request log (by intended
/// time), then the merged JSON, and prints the merged run in its mode's usual layout (wrk2's,
/// or the session report's), its line and one line per shard (on stderr when the JSON goes to
/// stdout); warnings go to stderr, a bad input is the error (main prints it, exit 2).
pub fn run(options: &MergeOptions) -> Result<(), Error> {
    let (runs, files) = merge_requests::load_each(&options.files)?;
    let mut merged = merge(&runs, options.label.as_deref(), options.force)?;
    if let Some(out) = &options.requests {
        let json = match &options.output {
            JsonOut::File(path) => Some(path.as_path()),
            JsonOut::Stdout => None,
        };
        let logs = merge_requests::find(&runs, &files, out, json)?;
        let run_id = shards::common_run_id(&runs);
        let chunk = merge_requests::chunk_size();
        let log =
            merge_requests::write(&logs, run_id.as_deref(), out, chunk, &mut merged.warnings)?;
        if let Some(slot) = merged.run.data.as_dyn_mut().requests_log_mut() {
            *slot = Some(log);
        }
    }
    for warning in &merged.warnings {
        eprintln!("tsumo: warning: {warning}");
    }
    merged.write(&options.output)?;
    // The merged run in its mode's usual layout first.
    let mut text = merged.run.result().text()?;
    text.push_str(&summary(&runs, &merged).join("\n"));
    text.push('\n');
    if options.output == JsonOut::Stdout {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    Ok(())
}

/// The merged run in one line, then one line per shard.
pub fn summary(runs: &[LoadedRun], merged: &Merged) -> Vec<String> {
    let parts = match shards::common_run_id(runs) {
        Some(id) => format!("{} of run {id}", counted(runs.len() as u64, "part")),
        None => counted(runs.len() as u64, "run"),
    };
    let skew = shards::start_skew_us(runs)
        .map(|us| {
            format!(
                ", start skew {}.{:03} ms (the latest shard's start after the earliest's)",
                us / 1000,
                us % 1000
            )
        })
        .unwrap_or_default();
    let what = merged.run.result().merged_line();
    let mut lines = vec![format!("Merged {parts}: {what}{skew}")];
    lines.extend(shards::lines(runs));
    // A part that ended before its plan (a script error, a signal) is in the sum as it ran.
    for run in runs {
        if let Some(early) = run.ended_early() {
            lines.push(format!("  {}: {early}", run.source));
        }
    }
    lines
}

#[cfg(test)]
mod shard_tests;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::report::mahjong::saved::SavedHistogram;
    use crate::report::tools::plot::render_svg;
    use crate::stats::new_histogram;

    fn summary_of(values: &[u64]) -> Value {
        let mut h = new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        serde_json::to_value(SavedHistogram::of(&h)).unwrap()
    }

    /// A session document in [`SavedSession`]'s layout.
    fn session(label: &str, offset: u64, server: Option<(u32, f64)>) -> LoadedRun {
        let mut login = summary_of(&[1000 + offset, 2000 + offset, 3000 + offset, 4000]);
        login["ok"] = json!(4);
        login["failed"] = json!(1);
        let mut doc = json!({
            "tool": "tsumo", "version": "0", "mode": "mahjong", "schema": 1, "label": label,
            "plan": {"url": "http://127.0.0.1:4615/server", "players": 4, "threads": 1,
                     "duration_s": 60.0, "ramp_s": 0.04, "think_s": 1.0, "think_jitter_s": 0.0,
                     "games": 1, "timer": null, "lockstep": true, "rule": {}},
            "elapsed_s": 10.0 + offset as f64 / 1000.0, "interrupted": false, "timed_out": false,
            "phases": {"login": login},
            "games": {"started": 1, "completed": 1, "aborted": 0,
                      "duration": summary_of(&[9_000_000])},
            "steps": {"dapai": summary_of(&[400_000 + offset, 401_000])},
            "draw_overshoot": summary_of(&[]),
            "deal_overshoot": summary_of(&[2000]),
            "start_burst": summary_of(&[1500]),
            "reply_lateness": summary_of(&[10 + offset, 20, 30, 400]),
            "messages": {"in": 100, "out": 50, "bytes_in": 10_000, "bytes_out": 2000},
            "disconnects": 0, "errors": 1, "first_errors": ["x"],
            "tsumo": {"cpu_s": 0.5, "peak_rss_bytes": 10_000_000},
        });
        if let Some((pid, cpu)) = server {
            doc["server"] = json!({"pids": [pid], "samples": 10, "cpu_percent_mean": cpu,
                "cpu_percent_peak": cpu * 2.0, "rss_bytes_mean": 1000, "rss_bytes_peak": 2000});
        }
        compare::from_value(doc, &format!("{label}-{offset}.json")).unwrap()
    }

    #[test]
    fn one_of_each_reads_singular() {
        let mut run = session("a", 0, None);
        if let RunData::Mahjong(s) = &mut run.data {
            s.plan.players = 1;
        }
        let runs = [run];
        let merged = merge(&runs, None, false).unwrap();
        assert_eq!(merged.to_json()["label"], "merged (1 run)");
        let lines = summary(&runs, &merged);
        assert!(
            lines[0].starts_with("Merged 1 run: 1 player, 1 game completed, 1 error, reply"),
            "{lines:?}"
        );
        assert!(
            lines[1].contains(" 1 player, 1 game, 1 error, reply lateness p99 "),
            "{lines:?}"
        );
    }

    #[test]
    fn mahjong_sessions_merge_exactly() {
        let runs = [
            session("a", 0, Some((7, 10.0))),
            session("a", 5, Some((7, 30.0))),
        ];
        let merged = merge(&runs, None, false).unwrap();
        assert!(merged.warnings.is_empty(), "{:?}", merged.warnings);
        let doc = merged.to_json();
        assert_eq!(doc["label"], "merged (2 runs)");
        assert_eq!(doc["phases"]["login"]["ok"], 8);
        assert_eq!(doc["phases"]["login"]["failed"], 2);
        assert_eq!(doc["phases"]["login"]["count"], 8);
        assert_eq!(doc["phases"]["login"]["max"], 4000);
        assert_eq!(doc["steps"]["dapai"]["count"], 4);
        assert_eq!(doc["reply_lateness"]["count"], 8);
        assert_eq!(doc["draw_overshoot"]["count"], 0);
        assert_eq!(doc["games"]["completed"], 2);
        assert_eq!(doc["messages"]["in"], 200);
        assert_eq!(doc["plan"]["players"], 8);
        assert_eq!(doc["tsumo"]["cpu_s"], 1.0);
        assert_eq!(doc["elapsed_s"], 10.005);
        assert_eq!(doc["first_errors"], json!(["x", "x"]));
        assert_eq!(doc["server"]["cpu_percent_mean"], 20.0);
        assert_eq!(doc["server"]["cpu_percent_peak"], 60.0);
        assert_eq!(doc["merged_from"], json!(["a-0.json", "a-5.json"]));
        // The merged document reads back as a session.
        let again = compare::from_value(doc, "merged.json").unwrap();
        assert_eq!(again.title(), "mahjong");
        // Different server processes: no server figures, and a warning saying so.
        let runs = [
            session("a", 0, Some((7, 10.0))),
            session("a", 5, Some((8, 1.0))),
        ];
        let merged = merge(&runs, Some("both"), false).unwrap();
        assert_eq!(merged.run.label, "both");
        assert!(merged.run.server().is_none());
        assert_eq!(merged.warnings.len(), 1);
    }

    #[test]
    fn mahjong_sessions_compare_and_plot() {
        let runs = [
            session("direct", 0, Some((7, 10.0))),
            session("direct", 5, Some((7, 11.0))),
            session("nginx", 300, Some((7, 20.0))),
            session("nginx", 310, Some((7, 21.0))),
        ];
        let table = compare::render(&runs).unwrap();
        for row in [
            "Players",
            "login ok",
            "login p99",
            "Games completed",
            "Step dapai p50",
            "Reply lateness p99",
            "Messages in/sec",
            "tsumo CPU per player",
            "Server CPU% mean",
            "Server RSS peak",
        ] {
            assert!(table.contains(&format!("\n  {row} ")), "{row}:\n{table}");
        }
        // An empty histogram has no percentile to show.
        assert!(!table.contains("Draw overshoot"), "{table}");
        assert!(
            table.contains("server CPU: nginx is 1.95× direct; beyond run-to-run noise"),
            "{table}"
        );
        assert!(table.contains("messages in/s: nginx is"), "{table}");
        let svg = render_svg(&runs, None).unwrap();
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert!(svg.contains("reply lateness"));
        let svg = render_svg(&runs, Some("login")).unwrap();
        assert!(svg.contains("Mahjong login by percentile"));
        let e = render_svg(&runs, Some("nope")).unwrap_err().to_string();
        assert!(
            e.contains("no histogram 'nope'") && e.contains("dapai"),
            "{e}"
        );
    }
}
