//! Responses that broke HTTP/1.1, by kind, with the first few quoted.
//!
//! Why apart from the other error counts: "read error" says a connection failed, not that the
//! server sent a second response nobody asked for or a chunk size that is not hex. Each kind is
//! counted under its own name, and the first few offending bytes are kept (escaped, short) so a
//! report can show the user what the server actually sent. Every one of them is also a read
//! error (see [`super::Errors::protocol`]).

use std::fmt;

use serde::{Deserialize, Serialize};

/// How many offending responses a run quotes.
pub const MAX_SAMPLES: usize = 4;

/// Longest excerpt of the offending bytes kept per sample (before escaping).
pub const EXCERPT_BYTES: usize = 48;

/// A way in which a server's bytes broke HTTP/1.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Violation {
    /// Bytes arrived while no request was outstanding (a second response to one request, or
    /// data before the first request).
    UnsolicitedResponse,
    /// The status line does not parse (`HTTP/1.1 abc`, not HTTP at all).
    MalformedStatusLine,
    /// A header line does not parse (no colon, a space before it, a control character).
    MalformedHeader,
    /// The head is longer than the parser's limit, or has too many header lines.
    HeaderTooLarge,
    /// A Content-Length that is not a plain decimal number.
    InvalidContentLength,
    /// Content-Length values that disagree (two headers, or a list).
    ConflictingContentLength,
    /// Both Content-Length and Transfer-Encoding (a server MUST NOT send both).
    LengthWithTransferEncoding,
    /// A chunk-size line that is not hex digits (with optional extensions).
    BadChunkSize,
    /// Chunked framing broken elsewhere: no CRLF after the data, a line too long, a bad trailer.
    BadChunkFraming,
}

impl Violation {
    /// Every kind, in report order.
    pub const ALL: [Violation; 9] = [
        Violation::UnsolicitedResponse,
        Violation::MalformedStatusLine,
        Violation::MalformedHeader,
        Violation::HeaderTooLarge,
        Violation::InvalidContentLength,
        Violation::ConflictingContentLength,
        Violation::LengthWithTransferEncoding,
        Violation::BadChunkSize,
        Violation::BadChunkFraming,
    ];

    /// The name a report prints (`protocol: <name>`).
    pub fn name(self) -> &'static str {
        match self {
            Violation::UnsolicitedResponse => "unsolicited response",
            Violation::MalformedStatusLine => "malformed status line",
            Violation::MalformedHeader => "malformed header",
            Violation::HeaderTooLarge => "header too large",
            Violation::InvalidContentLength => "invalid Content-Length",
            Violation::ConflictingContentLength => "conflicting Content-Length",
            Violation::LengthWithTransferEncoding => "Content-Length with Transfer-Encoding",
            Violation::BadChunkSize => "bad chunk size",
            Violation::BadChunkFraming => "bad chunk framing",
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "protocol: {}", self.name())
    }
}

/// The start of the offending bytes, escaped (`\r\n`, `\xNN`), with `…` when cut.
pub fn excerpt(bytes: &[u8]) -> String {
    let cut = bytes.len().min(EXCERPT_BYTES);
    let mut out = bytes[..cut].escape_ascii().to_string();
    if cut < bytes.len() {
        out.push('…');
    }
    out
}

/// One offending response, quoted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    pub kind: Violation,
    /// The first bytes at fault, escaped (see [`excerpt`]).
    pub excerpt: String,
}

/// Protocol violations by kind, and the first [`MAX_SAMPLES`] quoted. In the JSON as
/// `counters.protocol`, present only when a run met any.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProtocolErrors {
    pub unsolicited_response: u64,
    pub malformed_status_line: u64,
    pub malformed_header: u64,
    pub header_too_large: u64,
    pub invalid_content_length: u64,
    pub conflicting_content_length: u64,
    pub length_with_transfer_encoding: u64,
    pub bad_chunk_size: u64,
    pub bad_chunk_framing: u64,
    /// The first few, in the order met (per worker; a merge keeps the first workers' first).
    pub first: Vec<Sample>,
}

impl ProtocolErrors {
    fn slot(&mut self, kind: Violation) -> &mut u64 {
        match kind {
            Violation::UnsolicitedResponse => &mut self.unsolicited_response,
            Violation::MalformedStatusLine => &mut self.malformed_status_line,
            Violation::MalformedHeader => &mut self.malformed_header,
            Violation::HeaderTooLarge => &mut self.header_too_large,
            Violation::InvalidContentLength => &mut self.invalid_content_length,
            Violation::ConflictingContentLength => &mut self.conflicting_content_length,
            Violation::LengthWithTransferEncoding => &mut self.length_with_transfer_encoding,
            Violation::BadChunkSize => &mut self.bad_chunk_size,
            Violation::BadChunkFraming => &mut self.bad_chunk_framing,
        }
    }

    /// How many of `kind`.
    pub fn count(&self, kind: Violation) -> u64 {
        match kind {
            Violation::UnsolicitedResponse => self.unsolicited_response,
            Violation::MalformedStatusLine => self.malformed_status_line,
            Violation::MalformedHeader => self.malformed_header,
            Violation::HeaderTooLarge => self.header_too_large,
            Violation::InvalidContentLength => self.invalid_content_length,
            Violation::ConflictingContentLength => self.conflicting_content_length,
            Violation::LengthWithTransferEncoding => self.length_with_transfer_encoding,
            Violation::BadChunkSize => self.bad_chunk_size,
            Violation::BadChunkFraming => self.bad_chunk_framing,
        }
    }

    /// Counts one violation, quoting it if it is among the first few.
    pub fn record(&mut self, kind: Violation, excerpt: String) {
        *self.slot(kind) += 1;
        if self.first.len() < MAX_SAMPLES {
            self.first.push(Sample { kind, excerpt });
        }
    }

    /// All violations of every kind.
    pub fn total(&self) -> u64 {
        Violation::ALL.iter().map(|&k| self.count(k)).sum()
    }

    /// True when nothing was counted (the JSON leaves the field out then).
    pub fn is_empty(&self) -> bool {
        self.total() == 0 && self.first.is_empty()
    }

    /// The kinds met, with their counts, in report order.
    pub fn met(&self) -> Vec<(Violation, u64)> {
        Violation::ALL
            .iter()
            .map(|&k| (k, self.count(k)))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    pub fn add(&mut self, other: &ProtocolErrors) {
        for kind in Violation::ALL {
            *self.slot(kind) += other.count(kind);
        }
        let room = MAX_SAMPLES.saturating_sub(self.first.len());
        self.first.extend(other.first.iter().take(room).cloned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_kind_and_keeps_the_first_few() {
        let mut p = ProtocolErrors::default();
        for i in 0..6 {
            p.record(Violation::UnsolicitedResponse, format!("r{i}"));
        }
        p.record(Violation::BadChunkSize, "zz".into());
        assert_eq!(p.count(Violation::UnsolicitedResponse), 6);
        assert_eq!(p.total(), 7);
        assert_eq!(p.first.len(), MAX_SAMPLES);
        assert_eq!(
            p.met(),
            vec![
                (Violation::UnsolicitedResponse, 6),
                (Violation::BadChunkSize, 1)
            ]
        );
        let mut merged = ProtocolErrors::default();
        merged.add(&p);
        merged.add(&p);
        assert_eq!(merged.total(), 14);
        assert_eq!(merged.first.len(), MAX_SAMPLES);
    }

    #[test]
    fn excerpts_are_escaped_and_cut() {
        assert_eq!(excerpt(b"HTTP/1.1 abc\r\n"), "HTTP/1.1 abc\\r\\n");
        let long = [b'x'; 100];
        let e = excerpt(&long);
        assert!(e.ends_with('…') && e.len() == EXCERPT_BYTES + '…'.len_utf8());
        assert_eq!(excerpt(&[0xff]), "\\xff");
    }
}
