//! What every kind of saved file shares: the format version (`"schema"`), where a file stands
//! in a run ([`SavedPart`]), the histogram codec, and the JSON writer.
//!
//! Why a module of its own: the HTTP run's schema ([`SavedRun`](crate::report::http::saved::SavedRun)), the
//! mahjong session's ([`SavedSession`](crate::report::mahjong::saved::SavedSession)), the reader of saved files
//! (`saved`) and `merge`/`shards` all use these pieces, and kept in one mode's file they would
//! make the modules import each other in a cycle.

use std::io::{Cursor, Write};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::plan::{JsonOut, Part, Shard};
use crate::stats::start::StartRecord;

/// The format version of saved results, written as `"schema"` in both kinds of file (an HTTP
/// run's [`SavedRun`](crate::report::http::saved::SavedRun) and a mahjong session's
/// [`SavedSession`](crate::report::mahjong::saved::SavedSession)).
///
/// Bumped when a field changes meaning or goes away, never for an added field: readers ignore
/// fields they do not know, so a file with new fields is still version 1 and older tsumos read
/// it. A file without `"schema"` is version 1; a file of a higher version than this is refused
/// with one line naming the file and its version (see [`crate::report::tools::saved::load`]).
pub const SCHEMA_VERSION: u32 = 1;

/// The version of a file that does not say (the first layout had no other).
pub(crate) fn first_schema() -> u32 {
    1
}

/// Where a saved file stands in a run, and the command line that ran it: the same fields in
/// every kind of file (an HTTP run's, a mahjong session's, a search's); `tsumo merge` reads and
/// writes them alike for all.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SavedPart {
    /// The files a `tsumo merge` was made of; absent in a run's own file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<String>,
    /// The run this file is a part of (`--run-id`, or derived from the command line and the
    /// start); absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Which shard of the run this is (`1/1` for a run in one process); absent in a merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<SavedShard>,
    /// When the run started, and when it was meant to (`--start-at`); absent in a merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<StartRecord>,
    /// The command line that ran it, exactly as given (argv, `argv[0]` first); absent in a
    /// merge of several files and in files of older tsumos.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
}

impl SavedPart {
    /// A run's own file: its run id, shard and start, and no sources.
    pub fn of(part: &Part, start: &StartRecord) -> SavedPart {
        SavedPart {
            merged_from: Vec::new(),
            run_id: Some(part.run_id.clone()),
            shard: Some(SavedShard::of(part.shard)),
            start: Some(start.clone()),
            command: part.command.clone(),
        }
    }

    /// The saved command line as a shell would take it back (each word quoted where it has to
    /// be: `--slo 'p99<20ms'`); `None` when none was saved.
    pub fn command_line(&self) -> Option<String> {
        if self.command.is_empty() {
            return None;
        }
        let words: Vec<String> = self.command.iter().map(|w| shell_word(w)).collect();
        Some(words.join(" "))
    }
}

/// One word for a POSIX shell: as it is when only safe characters make it up, else in single
/// quotes (a `'` in it as `'\''`).
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./_-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Which shard of a run a file holds: `index` is 1-based, as `--shard I/N`
/// (`JOB_COMPLETION_INDEX` + 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedShard {
    pub index: usize,
    pub count: usize,
}

impl SavedShard {
    pub fn of(shard: Shard) -> SavedShard {
        SavedShard {
            index: shard.index + 1,
            count: shard.count,
        }
    }
}

/// base64 of the compressed V2 encoding. Serializing into memory fails only for counts that do
/// not fit an i64, which a run cannot reach; such a histogram is saved as an empty string.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut bytes) {
        Ok(_) => BASE64.encode(bytes),
        Err(_) => String::new(),
    }
}

/// Decodes a histogram saved by [`encode_histogram`].
pub fn decode_histogram(encoded: &str) -> Result<Histogram<u64>, Error> {
    let invalid = |reason: String| Error::File {
        path: "(histogram in JSON result)".to_string(),
        reason,
    };
    let bytes = BASE64
        .decode(encoded.trim())
        .map_err(|e| invalid(format!("not base64: {e}")))?;
    Deserializer::new()
        .deserialize(&mut Cursor::new(bytes))
        .map_err(|e| invalid(format!("not an HdrHistogram: {e}")))
}

/// Writes any JSON document (pretty, with a final newline) to a file or stdout; every mode's
/// `--json` goes through here.
pub fn write_value<T: Serialize>(document: &T, out: &JsonOut) -> Result<(), Error> {
    let path = match out {
        JsonOut::Stdout => "stdout".to_string(),
        JsonOut::File(file) => file.display().to_string(),
    };
    let error = |reason: String| Error::Write {
        path: path.clone(),
        reason,
    };
    let mut text = serde_json::to_string_pretty(document).map_err(|e| error(e.to_string()))?;
    text.push('\n');
    let written = match out {
        JsonOut::Stdout => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
        }
        JsonOut::File(file) => crate::sys::output::write_whole(file, text.as_bytes()),
    };
    written.map_err(|e| error(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_command_line_reads_back_in_a_shell() {
        let part = SavedPart {
            command: [
                "tsumo",
                "-s",
                "post.lua",
                "-H",
                "X-Name: it's",
                "--slo",
                "p99<20ms",
                "",
                "http://127.0.0.1:8080/a?b=1",
            ]
            .map(String::from)
            .to_vec(),
            ..SavedPart::default()
        };
        assert_eq!(
            part.command_line().as_deref(),
            Some(
                "tsumo -s post.lua -H 'X-Name: it'\\''s' --slo 'p99<20ms' '' \
                 'http://127.0.0.1:8080/a?b=1'"
            )
        );
        assert_eq!(SavedPart::default().command_line(), None);
    }
}
