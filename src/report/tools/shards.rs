//! The shards of one run in `tsumo merge`: reading them (files, or one stream of concatenated
//! JSON documents as `kubectl logs` prints the pods of an Indexed Job run with `--json - --quiet`),
//! checking that they are exactly the parts of one run (one run id, one shard count, each shard
//! once), and one line per shard: rate, errors, send lateness, and its start against
//! `--start-at` and against the earliest shard's.
//!
//! Files that are not shards (`1/1`, or from a tsumo without shards) merge as before: runs made
//! side by side by hand.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use serde_json::Value;

use crate::error::Error;
use crate::report::schema::{SavedPart, SavedShard};
use crate::report::tools::saved::{self, LoadedRun};

/// Every document of every file, in order; `-` is standard input. A file may hold several
/// documents one after another; lines between them that are not JSON (a pod's stderr in
/// `kubectl logs`) are skipped.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<LoadedRun>, Error> {
    let mut runs = Vec::new();
    for path in paths {
        let (source, text) = if path.as_os_str() == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Error::File {
                    path: "stdin".to_string(),
                    reason: crate::sys::io_reason(&e),
                })?;
            ("stdin".to_string(), text)
        } else {
            let source = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|e| Error::File {
                path: source.clone(),
                reason: crate::sys::io_reason(&e),
            })?;
            (source, text)
        };
        runs.extend(documents(&text, &source)?);
    }
    Ok(runs)
}

/// The tsumo documents in `text`, named `source` (one) or `source #k` (several).
pub fn documents(text: &str, source: &str) -> Result<Vec<LoadedRun>, Error> {
    let mut values = Vec::new();
    let mut rest = text;
    while let Some(start) = next_object(rest) {
        let mut stream = serde_json::Deserializer::from_str(&rest[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                values.push(value);
                rest = &rest[start + stream.byte_offset()..];
            }
            // Not a document after all (a log line starting with `{`): skip the line.
            _ => {
                rest = rest[start..]
                    .split_once('\n')
                    .map_or("", |(_, after)| after)
            }
        }
    }
    if values.is_empty() {
        return Err(Error::File {
            path: source.to_string(),
            reason: "no JSON document in it (not a tsumo --json result)".to_string(),
        });
    }
    let several = values.len() > 1;
    values
        .into_iter()
        .enumerate()
        .map(|(k, value)| {
            let name = if several {
                format!("{source} #{}", k + 1)
            } else {
                source.to_string()
            };
            saved::from_value(value, &name)
        })
        .collect()
}

/// Where the next line that starts with `{` starts.
fn next_object(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            return Some(offset + (line.len() - line.trim_start().len()));
        }
        offset += line.len();
    }
    None
}

/// What a run says of its part in a sharded run.
fn part(run: &LoadedRun) -> &SavedPart {
    run.result().part()
}

fn is_shard(run: &LoadedRun) -> bool {
    part(run).shard.is_some_and(|s| s.count > 1)
}

/// Checks that sharded runs are exactly the shards of one run: one run id, one shard count,
/// each shard once, none missing (with `force`, a missing shard is a warning instead). Runs
/// that are not shards pass unchecked. Returns the warnings.
pub fn check(runs: &[LoadedRun], force: bool) -> Result<Vec<String>, Error> {
    let Some(first) = runs.iter().find(|r| is_shard(r)) else {
        return Ok(Vec::new());
    };
    let refuse = |text: String| Err(Error::Usage(format!("merge: {text}")));
    let first_part = part(first);
    let run_id = first_part.run_id.as_deref().unwrap_or("(none)");
    let count = first_part.shard.map_or(1, |s| s.count);
    let mut seen: BTreeMap<usize, &str> = BTreeMap::new();
    for run in runs {
        let own = part(run);
        let Some(shard) = own.shard.filter(|s| s.count > 1) else {
            return refuse(format!(
                "{} is a whole run, not a shard, but {} is shard {} of run {run_id}; merge the \
                 shards of one run",
                run.source,
                first.source,
                shard_name(first_part.shard)
            ));
        };
        let id = own.run_id.as_deref().unwrap_or("(none)");
        if id != run_id {
            return refuse(format!(
                "{} is of run {id} but {} is of run {run_id}: shards of different runs do not \
                 merge (give every shard the same --run-id, or the same command line and \
                 --start-at)",
                run.source, first.source
            ));
        }
        if shard.count != count {
            return refuse(format!(
                "{} is shard {} but {} is shard {}: the shards disagree on how many there are",
                run.source,
                shard_name(Some(shard)),
                first.source,
                shard_name(first_part.shard)
            ));
        }
        if let Some(other) = seen.insert(shard.index, &run.source) {
            return refuse(format!(
                "shard {} of run {run_id} given twice ({other} and {}); each shard may be \
                 merged once",
                shard_name(Some(shard)),
                run.source
            ));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|i| !seen.contains_key(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if missing.is_empty() {
        return Ok(Vec::new());
    }
    let text = format!(
        "run {run_id} has {count} shards but shard{} {} {} missing",
        if missing.len() == 1 { "" } else { "s" },
        missing.join(", "),
        if missing.len() == 1 { "is" } else { "are" }
    );
    if force {
        Ok(vec![format!("{text}; merged without (--force)")])
    } else {
        refuse(format!("{text} (use --force to merge the others anyway)"))
    }
}

fn shard_name(shard: Option<SavedShard>) -> String {
    shard.map_or("1/1".to_string(), |s| format!("{}/{}", s.index, s.count))
}

/// The run id all runs share, if they do.
pub fn common_run_id(runs: &[LoadedRun]) -> Option<String> {
    let first = part(runs.first()?).run_id.as_deref()?;
    runs.iter()
        .all(|r| part(r).run_id.as_deref() == Some(first))
        .then(|| first.to_string())
}

/// One line per shard (or run) in shard order: rate, errors, send lateness (HTTP) or reply
/// lateness (mahjong), and its start against `--start-at` and against the earliest start. Both
/// come from the same whole microseconds, so with one `--start-at` they differ by exactly the
/// earliest shard's lateness, and the largest "after the earliest" is the merge's start skew.
pub fn lines(runs: &[LoadedRun]) -> Vec<String> {
    let mut order: Vec<&LoadedRun> = runs.iter().collect();
    order.sort_by_key(|r| part(r).shard.map_or(0, |s| s.index));
    let earliest = actual_starts_us(runs).into_iter().min();
    let mut lines = Vec::new();
    for run in order {
        let SavedPart { shard, start, .. } = part(run);
        let what = run.result().shard_line();
        let when = match (start.as_ref(), earliest) {
            (Some(start), Some(earliest)) => {
                let actual_us = start.actual_unix_ns / 1000;
                let after_earliest = ms(actual_us as i64 - earliest as i64);
                match start.late_us() {
                    Some(late_us) => format!(
                        ", start {} after --start-at ({after_earliest} after the earliest \
                         shard's)",
                        ms(late_us)
                    ),
                    None => format!(", start {after_earliest} after the earliest shard's"),
                }
            }
            _ => String::new(),
        };
        lines.push(format!(
            "  shard {:<6} {what}{when}  ({})",
            shard_name(*shard),
            run.source
        ));
    }
    lines
}

/// Whole microseconds as signed milliseconds: `+0.083 ms`.
fn ms(us: i64) -> String {
    let sign = if us < 0 { '-' } else { '+' };
    let us = us.unsigned_abs();
    format!("{sign}{}.{:03} ms", us / 1000, us % 1000)
}

/// The largest difference between the runs' actual starts, µs (`None` without start records):
/// the latest shard's start after the earliest's, as [`lines`] counts it.
pub fn start_skew_us(runs: &[LoadedRun]) -> Option<u64> {
    let starts = actual_starts_us(runs);
    Some(starts.iter().max()? - starts.iter().min()?)
}

/// The actual starts (whole µs since the Unix epoch) of the runs that recorded one.
fn actual_starts_us(runs: &[LoadedRun]) -> Vec<u64> {
    runs.iter()
        .filter_map(|r| part(r).start.as_ref().map(|s| s.actual_unix_ns / 1000))
        .collect()
}
