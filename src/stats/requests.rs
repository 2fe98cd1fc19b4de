//! `--requests FILE`: every request on record, one CSV row each (zstd-compressed when the name
//! ends in `.zst`). This file holds the format both sides share: the writer that streams rows
//! during a run, and `tsumo merge`, which joins shards' logs into one ordered by intended time.
//!
//! The file starts with one comment line, [`MAGIC`] followed by `; key=value` pairs
//! (`start_unix_ns`, the wall clock at the run's start instant; `run_id`; `shard` as `i/n`;
//! `sample`, the fraction logged), then the header row [`HEADER`], then one row per request.
//! Times are ns from the run's start; latencies are ns.

use serde::{Deserialize, Serialize};

/// The first characters of a request log.
pub const MAGIC: &str = "# tsumo requests v1";

/// The header row: the columns, in order.
pub const HEADER: &str = "intended_ns,sent_ns,received_ns,shard,conn,stream,status,bytes_in,\
bytes_out,corrected_ns,server_ns,tsumo_ns,error";

/// Where a run's request log went, saved in its JSON (`requests_log`); absent without
/// `--requests`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestsLog {
    /// The path as given on the command line.
    pub path: String,
    /// Rows written.
    pub rows: u64,
    /// The fraction of requests logged (`--requests-sample`; 1 for all).
    pub sample: f64,
    /// `false` when a write error stopped the log early; `error` then says why.
    pub complete: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The writer a run streams its rows through.
pub mod writer;

/// Opens a run's `--requests` log (its file created, its writer started), before any traffic:
/// a file that cannot be created is the run's error, `--requests` named.
pub fn open(
    out: &crate::plan::RequestsOut,
    part: &crate::plan::Part,
) -> Result<writer::LogFile, crate::error::Error> {
    let header = writer::LogHeader {
        run_id: part.run_id.clone(),
        shard: (part.shard.index, part.shard.count),
        sample: out.sample,
    };
    writer::LogFile::open(&out.path, header).map_err(|e| crate::error::Error::Output {
        flag: "--requests".to_string(),
        path: out.path.display().to_string(),
        reason: crate::sys::io_reason(&e),
    })
}
