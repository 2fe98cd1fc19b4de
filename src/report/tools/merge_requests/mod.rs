//! `tsumo merge --requests FILE`: the shards' request logs (`--requests`) joined into one file
//! ordered by intended time, on one clock.
//!
//! Each run's JSON says where its log went (`requests_log.path`, as given to that run; when that
//! path is not there, the file of that name beside the JSON, since shards' files are often
//! collected into one folder). Each shard counts its times from its own start: the merged log
//! counts from the earliest shard's (its header's `start_unix_ns`), so rows of every shard share
//! one clock. The logs are in completion order and may be larger than memory, so they are
//! merged by an external sort ([`sort`]). Everything about the inputs is checked before a byte is
//! written; what can only be found while reading (a row cut short by a killed shard) is a
//! warning, and the merged log says it is not complete.

mod sort;

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

pub use sort::ChunkSize;

use crate::error::Error;
use crate::report::tools::saved::LoadedRun;
use crate::report::tools::shards;
use crate::stats::requests::{RequestsLog, HEADER, MAGIC};
use crate::sys::{io_reason, output};

/// A sorted chunk's size: at most this many rows or bytes, whichever comes first.
pub const CHUNK: ChunkSize = ChunkSize {
    rows: 1_000_000,
    bytes: 64 << 20,
};

/// Rows per chunk instead of [`CHUNK`]'s, for the tests (a few rows spill several chunks).
pub const CHUNK_ROWS_VAR: &str = "TSUMO_MERGE_CHUNK_ROWS";

/// The first bytes of a zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The chunk size: [`CHUNK`], or its rows from [`CHUNK_ROWS_VAR`].
pub fn chunk_size() -> ChunkSize {
    let rows = std::env::var(CHUNK_ROWS_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&rows: &usize| rows > 0);
    rows.map_or(CHUNK, |rows| ChunkSize { rows, ..CHUNK })
}

/// The runs of each file in order, each with the file it came from (`None`: standard input).
pub fn load_each(files: &[PathBuf]) -> Result<(Vec<LoadedRun>, Vec<Option<PathBuf>>), Error> {
    let (mut runs, mut from) = (Vec::new(), Vec::new());
    for file in files {
        let loaded = shards::load_all(std::slice::from_ref(file))?;
        let named = (file.as_os_str() != "-").then(|| file.clone());
        from.extend(std::iter::repeat_n(named, loaded.len()));
        runs.extend(loaded);
    }
    Ok((runs, from))
}

/// One run's log, found and its header read.
#[derive(Debug, Clone, PartialEq)]
pub struct ShardLog {
    /// The run's file, for messages.
    source: String,
    path: PathBuf,
    /// The wall clock at its run's start, ns since the epoch: its times count from there.
    start_unix_ns: u64,
    sample: f64,
    /// What its run's JSON says of it.
    recorded: RequestsLog,
}

/// The logs of `runs` (read from `files`) for `--requests out`, checked before anything is
/// written: every run has one, each is there and is a tsumo request log, they sample alike,
/// and neither `out` nor `json_out` (`-o`) is one of them or of the files merged.
pub fn find(
    runs: &[LoadedRun],
    files: &[Option<PathBuf>],
    out: &Path,
    json_out: Option<&Path>,
) -> Result<Vec<ShardLog>, Error> {
    let mut logs = Vec::new();
    for (run, file) in runs.iter().zip(files) {
        let Some(recorded) = run.result().requests_log() else {
            return Err(Error::Usage(format!(
                "merge --requests: {} has no requests_log (it ran without --requests); merge \
                 runs that logged their requests, or leave out --requests",
                run.source
            )));
        };
        let path = located(&recorded.path, file.as_deref())?;
        logs.push(ShardLog {
            source: run.source.clone(),
            path,
            start_unix_ns: 0,
            sample: recorded.sample,
            recorded: recorded.clone(),
        });
    }
    let mut outputs = vec![("--requests", out)];
    outputs.extend(json_out.map(|json| ("-o", json)));
    let mut inputs: Vec<(&str, &Path)> = files
        .iter()
        .flatten()
        .map(|f| ("one of the files to merge", f.as_path()))
        .collect();
    inputs.extend(
        logs.iter()
            .map(|l| ("one of the request logs", l.path.as_path())),
    );
    output::check_distinct(&outputs, &inputs)?;
    output::check_writable("--requests", out)?;
    for (k, log) in logs.iter().enumerate() {
        if let Some(twice) = logs[..k]
            .iter()
            .find(|l| output::same_file(&l.path, &log.path))
        {
            return Err(Error::Usage(format!(
                "merge --requests: {} and {} name one request log, {}: give each run its own",
                twice.source,
                log.source,
                log.path.display()
            )));
        }
    }
    for log in &mut logs {
        let header = header(open(&log.path)?.as_mut(), &log.path)?;
        log.start_unix_ns = header.0;
        log.sample = header.1.unwrap_or(log.sample);
    }
    let Some(first) = logs.first() else {
        return Ok(logs);
    };
    if let Some(other) = logs.iter().find(|l| l.sample != first.sample) {
        return Err(Error::Usage(format!(
            "merge --requests: the logs sample different fractions ({} in {}, {} in {}); \
             merge logs of one --requests-sample",
            first.sample,
            first.path.display(),
            other.sample,
            other.path.display()
        )));
    }
    Ok(logs)
}

/// Where a run's log is: the path as recorded, else the file of that name in the folder of
/// the run's JSON.
fn located(recorded: &str, json: Option<&Path>) -> Result<PathBuf, Error> {
    let path = PathBuf::from(recorded);
    if path.exists() {
        return Ok(path);
    }
    let beside = json
        .and_then(|json| Some(json.parent()?.join(path.file_name()?)))
        .filter(|beside| beside.exists());
    beside.ok_or_else(|| Error::File {
        path: recorded.to_string(),
        reason: match json.and_then(Path::parent) {
            Some(folder) if !folder.as_os_str().is_empty() => format!(
                "request log not found, neither there nor in {}",
                folder.display()
            ),
            _ => "request log not found".to_string(),
        },
    })
}

/// A log's rows, read through zstd when it is compressed (whatever its name).
fn open(path: &Path) -> Result<Box<dyn BufRead>, Error> {
    let error = |e: io::Error| Error::File {
        path: path.display().to_string(),
        reason: io_reason(&e),
    };
    let mut file = BufReader::with_capacity(1 << 16, File::open(path).map_err(error)?);
    if !file.fill_buf().map_err(error)?.starts_with(&ZSTD_MAGIC) {
        return Ok(Box::new(file));
    }
    let decoder = zstd::stream::read::Decoder::with_buffer(file).map_err(error)?;
    Ok(Box::new(BufReader::with_capacity(1 << 16, decoder)))
}

/// Reads a log's first two lines: [`MAGIC`]'s with its `start_unix_ns` (and `sample`, when
/// given), and [`HEADER`]. Anything else is not a tsumo request log.
fn header(rows: &mut dyn BufRead, path: &Path) -> Result<(u64, Option<f64>), Error> {
    let not_a_log = |why: &str| Error::File {
        path: path.display().to_string(),
        reason: format!("not a tsumo request log ({why})"),
    };
    let mut line = || {
        let mut bytes = Vec::new();
        rows.read_until(b'\n', &mut bytes).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        Some(text.trim_end_matches(['\n', '\r']).to_string())
    };
    let first = line().unwrap_or_default();
    let magic = format!("its first line is not '{MAGIC}; start_unix_ns=…'");
    let Some(pairs) = first.strip_prefix(MAGIC) else {
        return Err(not_a_log(&magic));
    };
    let (mut start, mut sample) = (None, None);
    for pair in pairs.split(';').skip(1) {
        match pair.trim().split_once('=') {
            Some(("start_unix_ns", value)) => start = value.trim().parse::<u64>().ok(),
            Some(("sample", value)) => sample = value.trim().parse::<f64>().ok(),
            _ => {}
        }
    }
    let start = start
        .filter(|_| pairs.starts_with(';'))
        .ok_or_else(|| not_a_log(&magic))?;
    if line().as_deref() != Some(HEADER) {
        return Err(not_a_log("its second line is not the columns' header"));
    }
    Ok((start, sample))
}

/// Writes the merged log of `logs` to `out` (zstd when its name ends in `.zst`), whole or not
/// at all, and says what it holds; an incomplete input, rows that do not parse and an input
/// that cannot be read to its end are each a line in `warnings`.
pub fn write(
    logs: &[ShardLog],
    run_id: Option<&str>,
    out: &Path,
    chunk: ChunkSize,
    warnings: &mut Vec<String>,
) -> Result<RequestsLog, Error> {
    let earliest = logs.iter().map(|l| l.start_unix_ns).min().unwrap_or(0);
    let sample = logs.first().map_or(1.0, |l| l.sample);
    let run_id = run_id
        .map(|id| format!("; run_id={id}"))
        .unwrap_or_default();
    let first_lines = format!(
        "{MAGIC}; start_unix_ns={earliest}{run_id}; shard=merged; sample={sample}\n{HEADER}\n"
    );
    // Opened one at a time, as the sort comes to each (a zstd reader holds its window).
    let sources = logs.iter().map(|log| sort::Source {
        name: log.path.display().to_string(),
        rows: Box::new(move || {
            let mut rows = open(&log.path).map_err(io::Error::other)?;
            // Checked by `find`; read again past its two lines.
            header(rows.as_mut(), &log.path).map_err(io::Error::other)?;
            Ok(rows)
        }),
        offset_ns: i64::try_from(log.start_unix_ns - earliest).unwrap_or(i64::MAX),
    });
    let target = Target::new(out)?;
    let sorted = target.fill(out, |sink| {
        sink.write_all(first_lines.as_bytes())
            .map_err(|error| sort::Failure { path: None, error })?;
        sort::sort(sources, sink, (&target.spill_dir, &target.name), chunk)
    })?;
    let mut incomplete = Vec::new();
    for log in logs.iter().filter(|l| !l.recorded.complete) {
        let why = log.recorded.error.as_deref().unwrap_or("stopped early");
        incomplete.push(format!(
            "{} ({}'s) is incomplete ({why})",
            log.path.display(),
            log.source
        ));
    }
    if !sorted.skipped.is_empty() {
        let skipped: u64 = sorted.skipped.iter().map(|(_, n)| n).sum();
        let each: Vec<String> = sorted
            .skipped
            .iter()
            .map(|(name, n)| format!("{name}: {n}"))
            .collect();
        incomplete.push(format!(
            "{skipped} rows that do not parse left out ({}; a shard stopped mid-row leaves its \
             last row cut short)",
            each.join(", ")
        ));
    }
    for (name, rows, why) in &sorted.cut {
        incomplete.push(format!("{name} read only to row {rows} ({why})"));
    }
    warnings.extend(
        incomplete
            .iter()
            .map(|why| format!("request logs: {why}; the merged log is not complete")),
    );
    Ok(RequestsLog {
        path: out.display().to_string(),
        rows: sorted.rows,
        sample,
        complete: incomplete.is_empty(),
        error: (!incomplete.is_empty()).then(|| incomplete.join("; ")),
    })
}

/// Where the merged log is written: a file of ours beside `out`, renamed onto it when whole (a
/// device or a pipe is written as it is), and the folder its chunks spill into.
struct Target {
    /// `None`: written in place.
    temp: Option<PathBuf>,
    spill_dir: PathBuf,
    name: String,
}

impl Target {
    fn new(out: &Path) -> Result<Target, Error> {
        let name = out
            .file_name()
            .map_or_else(|| "requests".into(), |n| n.to_string_lossy().into_owned());
        let folder = match out.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => folder.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let special = out.starts_with("/dev")
            || out.starts_with("/proc")
            || std::fs::metadata(out).is_ok_and(|m| !m.is_file());
        Ok(if special {
            Target {
                temp: None,
                spill_dir: std::env::temp_dir(),
                name,
            }
        } else {
            Target {
                temp: Some(folder.join(format!(".{name}.tsumo-{}", std::process::id()))),
                spill_dir: folder,
                name,
            }
        })
    }

    /// Opens the file, lets `body` write it (through zstd for a `.zst` name), finishes it and
    /// puts it in place; on any failure nothing of ours is left.
    fn fill<T>(
        &self,
        out: &Path,
        body: impl FnOnce(&mut dyn Write) -> Result<T, sort::Failure>,
    ) -> Result<T, Error> {
        let written = self.fill_file(out, body);
        if written.is_err() {
            if let Some(temp) = &self.temp {
                let _ = std::fs::remove_file(temp);
            }
        }
        written.map_err(|failure| Error::Write {
            path: failure
                .path
                .unwrap_or(out.to_path_buf())
                .display()
                .to_string(),
            reason: io_reason(&failure.error),
        })
    }

    fn fill_file<T>(
        &self,
        out: &Path,
        body: impl FnOnce(&mut dyn Write) -> Result<T, sort::Failure>,
    ) -> Result<T, sort::Failure> {
        let failed = |error| sort::Failure { path: None, error };
        let file = match &self.temp {
            Some(temp) => std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(temp),
            None => File::create(out),
        }
        .map_err(failed)?;
        let buffered = BufWriter::with_capacity(1 << 16, file);
        let zstd = out.extension().is_some_and(|e| e == "zst");
        let (value, buffered) = if zstd {
            let mut encoder = zstd::stream::write::Encoder::new(buffered, 0).map_err(failed)?;
            let value = body(&mut encoder)?;
            (value, encoder.finish().map_err(failed)?)
        } else {
            let mut buffered = buffered;
            (body(&mut buffered)?, buffered)
        };
        let file = buffered.into_inner().map_err(|e| failed(e.into_error()))?;
        if let Some(temp) = &self.temp {
            file.sync_all().map_err(failed)?;
            drop(file);
            std::fs::rename(temp, out).map_err(failed)?;
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests;
