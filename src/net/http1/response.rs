//! Incremental HTTP/1.1 response parsing and body framing.
//!
//! Bytes arrive in arbitrary pieces; the parser consumes what it can and says how much it used.
//! Headers are parsed by `httparse` once complete; bodies are framed by Content-Length, chunked
//! encoding (sizes, data and trailers split anywhere across reads), or the connection closing —
//! and HEAD, 1xx, 204 and 304 responses have none. Bodies are skipped, not copied — unless a
//! script's `response()` hook needs them, in which case headers and the decoded body are kept
//! (see [`ResponseParser::collecting`]).
//!
//! The parser is strict where HTTP forbids something, because a lenient guess turns a broken
//! server into believable numbers: conflicting or non-numeric Content-Length, Content-Length
//! beside Transfer-Encoding, chunk sizes that are not hex, a missing CRLF after chunk data and
//! heads over [`MAX_HEAD`] are each a [`Violation`] with a short quote of the bytes at fault.
//! Every limit is applied to the bytes themselves, never to how they were split across reads, so
//! a response parses the same whole or in pieces (the fuzz target `response_split` checks it).

use std::fmt;
use std::mem::MaybeUninit;

use crate::stats::http::protocol::{excerpt, Violation};

/// Longest response head (status line + headers) accepted.
pub const MAX_HEAD: usize = 64 * 1024;
/// Longest chunk-size or trailer line accepted (without its CRLF).
const MAX_LINE: usize = 8 * 1024;
/// Header lines per response accepted (more is [`Violation::HeaderTooLarge`]).
const MAX_HEADERS: usize = 100;

/// A response that did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The bytes broke HTTP/1.1: how, and the start of the bytes at fault (escaped).
    Protocol(Violation, String),
    /// The connection closed in the middle of a response.
    UnexpectedEof,
}

impl ParseError {
    fn protocol(kind: Violation, bytes: &[u8]) -> ParseError {
        ParseError::Protocol(kind, excerpt(bytes))
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Protocol(kind, quote) => write!(f, "{kind}: \"{quote}\""),
            ParseError::UnexpectedEof => write!(f, "connection closed mid-response"),
        }
    }
}

impl std::error::Error for ParseError {}

/// A complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Complete {
    pub status: u16,
    /// Whether the connection may carry another request after this response.
    pub keep_alive: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Fixed(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkDataEnd,
    Trailer,
    UntilClose,
}

/// Parses one response at a time; reusable for the next response on the same connection.
#[derive(Debug)]
pub struct ResponseParser {
    state: State,
    status: u16,
    keep_alive: bool,
    /// Keep headers and body for a script's `response()` hook.
    collect: bool,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

impl Default for ResponseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseParser {
    pub fn new() -> Self {
        ResponseParser {
            state: State::Head,
            status: 0,
            keep_alive: true,
            collect: false,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A parser that keeps each response's headers and decoded body (chunked framing removed),
    /// readable with [`headers`](Self::headers) and [`body`](Self::body) once it completes.
    pub fn collecting() -> Self {
        ResponseParser {
            collect: true,
            ..ResponseParser::new()
        }
    }

    /// Headers of the last completed response (only when collecting), names as received.
    pub fn headers(&self) -> &[(String, Vec<u8>)] {
        &self.headers
    }

    /// Decoded body of the last completed response (only when collecting).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// True when no byte of a response has been consumed yet.
    pub fn is_idle(&self) -> bool {
        self.state == State::Head
    }

    /// Forgets any response in progress (after a reconnect).
    pub fn reset(&mut self) {
        self.state = State::Head;
        self.headers.clear();
        self.body.clear();
    }

    /// Consumes bytes of the current response from `buf`. Returns the number of bytes used and,
    /// when the response ended within them, its outcome. `head_request` says whether the request
    /// was HEAD (no body follows, whatever the headers say).
    pub fn parse(
        &mut self,
        buf: &[u8],
        head_request: bool,
    ) -> Result<(usize, Option<Complete>), ParseError> {
        let mut used = 0;
        loop {
            let rest = &buf[used..];
            match self.state {
                State::Head => {
                    let Some(n) = self.parse_head(rest, head_request)? else {
                        return Ok((used, None));
                    };
                    used += n;
                    if self.state == State::Head {
                        // A 1xx interim response, or a final response without a body.
                        if self.status >= 200 {
                            return Ok((used, Some(self.finish())));
                        }
                    }
                }
                State::Fixed(remaining) => {
                    let take = remaining.min(rest.len() as u64);
                    self.keep_body(&rest[..take as usize]);
                    used += take as usize;
                    if take == remaining {
                        return Ok((used, Some(self.finish())));
                    }
                    self.state = State::Fixed(remaining - take);
                    return Ok((used, None));
                }
                State::ChunkSize => {
                    let Some((line, n)) = take_line(rest, Violation::BadChunkSize)? else {
                        return Ok((used, None));
                    };
                    let size = chunk_size(line)?;
                    used += n;
                    self.state = if size == 0 {
                        State::Trailer
                    } else {
                        State::ChunkData(size)
                    };
                }
                State::ChunkData(remaining) => {
                    let take = remaining.min(rest.len() as u64);
                    self.keep_body(&rest[..take as usize]);
                    used += take as usize;
                    if take < remaining {
                        self.state = State::ChunkData(remaining - take);
                        return Ok((used, None));
                    }
                    self.state = State::ChunkDataEnd;
                }
                State::ChunkDataEnd => {
                    if rest.len() < 2 {
                        return Ok((used, None));
                    }
                    if &rest[..2] != b"\r\n" {
                        return Err(ParseError::protocol(Violation::BadChunkFraming, rest));
                    }
                    used += 2;
                    self.state = State::ChunkSize;
                }
                State::Trailer => {
                    let Some((line, n)) = take_line(rest, Violation::BadChunkFraming)? else {
                        return Ok((used, None));
                    };
                    if line.is_empty() {
                        used += n;
                        return Ok((used, Some(self.finish())));
                    }
                    if !is_field_line(line) {
                        return Err(ParseError::protocol(Violation::BadChunkFraming, line));
                    }
                    used += n;
                }
                State::UntilClose => {
                    self.keep_body(rest);
                    return Ok((buf.len(), None));
                }
            }
        }
    }

    /// The connection reached end of file. Returns the response it completed (a body delimited by
    /// the close), `Ok(None)` if no response was in progress, or an error if one was cut short.
    pub fn eof(&mut self) -> Result<Option<Complete>, ParseError> {
        match self.state {
            State::UntilClose => Ok(Some(self.finish())),
            State::Head => Ok(None),
            _ => Err(ParseError::UnexpectedEof),
        }
    }

    /// Parses a complete head if `buf` holds one; sets the body state.
    fn parse_head(&mut self, buf: &[u8], head_request: bool) -> Result<Option<usize>, ParseError> {
        // Only the first MAX_HEAD bytes are looked at, however many have arrived, so the verdict
        // on a head does not depend on how it was split across reads.
        let view = &buf[..buf.len().min(MAX_HEAD)];
        // Uninitialised header slots: zeroing 100 of them per response would cost more than
        // parsing a small response.
        let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut []);
        let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
            &mut resp,
            view,
            &mut headers,
        );
        let n = match parsed {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                if view.len() >= MAX_HEAD {
                    return Err(ParseError::protocol(Violation::HeaderTooLarge, view));
                }
                return Ok(None);
            }
            Err(e) => return Err(head_error(e, view)),
        };
        let status = resp.code.unwrap_or(0);
        self.status = status;
        if self.collect {
            self.headers.clear();
            self.body.clear();
            self.headers.extend(
                resp.headers
                    .iter()
                    .map(|h| (h.name.to_string(), h.value.to_vec())),
            );
        }
        if (100..200).contains(&status) {
            // Interim response (100 Continue, 103 Early Hints): the real one follows.
            self.state = State::Head;
            return Ok(Some(n));
        }
        let http11 = resp.version == Some(1);
        let Framing {
            mut keep_alive,
            transfer_encoding,
            length,
        } = framing(resp.headers, http11)?;
        let chunked = match transfer_encoding {
            Some(_) if length.is_some() => {
                return Err(ParseError::protocol(
                    Violation::LengthWithTransferEncoding,
                    &view[..n],
                ))
            }
            Some(coding) => {
                // HTTP/1.0 has no transfer codings: the framing is suspect, so close after it.
                keep_alive &= http11;
                coding.eq_ignore_ascii_case(b"chunked")
            }
            None => false,
        };
        self.keep_alive = keep_alive;
        self.state = if head_request || status == 204 || status == 304 {
            State::Head
        } else if chunked {
            State::ChunkSize
        } else if transfer_encoding.is_some() {
            // A coding other than chunked last: the body runs until the server closes.
            self.keep_alive = false;
            State::UntilClose
        } else {
            match length {
                Some(0) => State::Head,
                Some(len) => State::Fixed(len),
                None => {
                    self.keep_alive = false;
                    State::UntilClose
                }
            }
        };
        Ok(Some(n))
    }

    #[inline]
    fn keep_body(&mut self, bytes: &[u8]) {
        if self.collect {
            self.body.extend_from_slice(bytes);
        }
    }

    fn finish(&mut self) -> Complete {
        let done = Complete {
            status: self.status,
            keep_alive: self.keep_alive,
        };
        self.state = State::Head;
        done
    }
}

/// A CRLF-terminated line at the start of `buf`, without its CRLF, and the bytes it spans. A line
/// longer than [`MAX_LINE`] is `too_long`, whether or not its end has arrived.
fn take_line(buf: &[u8], too_long: Violation) -> Result<Option<(&[u8], usize)>, ParseError> {
    let window = &buf[..buf.len().min(MAX_LINE + 2)];
    match window.windows(2).position(|w| w == b"\r\n") {
        Some(i) => Ok(Some((&buf[..i], i + 2))),
        None if window.len() == MAX_LINE + 2 => Err(ParseError::protocol(too_long, window)),
        None => Ok(None),
    }
}

/// `chunk-size [ BWS ";" chunk-ext ]`: hex digits only (no sign, no spaces before them).
fn chunk_size(line: &[u8]) -> Result<u64, ParseError> {
    let bad = || ParseError::protocol(Violation::BadChunkSize, line);
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let rest = line[digits..].trim_ascii_start();
    if digits == 0 || !(rest.is_empty() || rest[0] == b';') {
        return Err(bad());
    }
    let hex = std::str::from_utf8(&line[..digits]).map_err(|_| bad())?;
    // Too many digits for a u64 is an error, not a wrap.
    u64::from_str_radix(hex, 16).map_err(|_| bad())
}

/// A Content-Length value: a decimal number, or a list of one number repeated (RFC 9110 §8.6
/// lets a recipient accept `5, 5`). Digits only: no sign, no hex, no empty element.
fn content_length(value: &[u8]) -> Result<u64, Violation> {
    let mut length = None;
    for element in value.split(|&b| b == b',') {
        let digits = element.trim_ascii();
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Err(Violation::InvalidContentLength);
        }
        let n = std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse::<u64>().ok())
            .ok_or(Violation::InvalidContentLength)?;
        if length.is_some_and(|l| l != n) {
            return Err(Violation::ConflictingContentLength);
        }
        length = Some(n);
    }
    length.ok_or(Violation::InvalidContentLength)
}

/// What `httparse` refused, named: the status line, a header line, or the head's size.
fn head_error(error: httparse::Error, view: &[u8]) -> ParseError {
    let first_end = view.iter().position(|&b| b == b'\n');
    let status_line = first_end.map_or(view, |end| &view[..end]);
    match error {
        httparse::Error::TooManyHeaders => ParseError::protocol(Violation::HeaderTooLarge, view),
        httparse::Error::Status | httparse::Error::Version => {
            ParseError::protocol(Violation::MalformedStatusLine, status_line)
        }
        // Token and NewLine errors can come from either; a status line that looks right puts
        // the fault in the headers.
        _ if first_end.is_none() || !is_status_line(status_line) => {
            ParseError::protocol(Violation::MalformedStatusLine, status_line)
        }
        _ => {
            let after = first_end.map_or(&view[view.len()..], |end| &view[end + 1..]);
            let bad_line = after
                .split(|&b| b == b'\n')
                .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
                .take_while(|l| !l.is_empty())
                .find(|l| !is_field_line(l))
                .unwrap_or(after);
            ParseError::protocol(Violation::MalformedHeader, bad_line)
        }
    }
}

/// `HTTP/1.x DDD[ reason]`, CR allowed at the end.
fn is_status_line(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.len() >= 12
        && line.starts_with(b"HTTP/1.")
        && line[7].is_ascii_digit()
        && line[8] == b' '
        && line[9..12].iter().all(u8::is_ascii_digit)
        && (line.len() == 12 || line[12] == b' ')
}

/// `name: value` with a token for a name and no control characters but tab in the value.
fn is_field_line(line: &[u8]) -> bool {
    let Some(colon) = line.iter().position(|&b| b == b':') else {
        return false;
    };
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    !name.is_empty()
        && name.iter().all(|&b| is_token_char(b))
        && value
            .iter()
            .all(|&b| b == b'\t' || (b' '..=b'~').contains(&b) || b >= 0x80)
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|part| part.trim_ascii().eq_ignore_ascii_case(token))
}

/// What a response's head says of its framing.
struct Framing<'h> {
    /// Whether the connection stays open (HTTP/1.1's default unless `Connection` says).
    keep_alive: bool,
    /// The last transfer coding named, over every Transfer-Encoding line.
    transfer_encoding: Option<&'h [u8]>,
    /// The Content-Length (several must agree).
    length: Option<u64>,
}

/// The framing of a head's `headers` (`http11`: keep-alive by default).
#[inline]
fn framing<'h>(headers: &[httparse::Header<'h>], http11: bool) -> Result<Framing<'h>, ParseError> {
    let mut keep_alive = http11;
    let mut transfer_encoding: Option<&[u8]> = None;
    let mut length = None;
    for h in headers {
        if h.name.eq_ignore_ascii_case("connection") {
            if contains_token(h.value, b"close") {
                keep_alive = false;
            } else if contains_token(h.value, b"keep-alive") {
                keep_alive = true;
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(h.value);
            transfer_encoding = Some(last.trim_ascii());
        } else if h.name.eq_ignore_ascii_case("content-length") {
            let at_fault = |kind| {
                let mut line = format!("{}: ", h.name).into_bytes();
                line.extend_from_slice(h.value);
                ParseError::protocol(kind, &line)
            };
            let value = content_length(h.value).map_err(at_fault)?;
            if length.is_some_and(|l| l != value) {
                return Err(at_fault(Violation::ConflictingContentLength));
            }
            length = Some(value);
        }
    }
    Ok(Framing {
        keep_alive,
        transfer_encoding,
        length,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` split at every position into a fresh parser; returns the responses found.
    fn feed_all(input: &[u8], pieces: &[usize], head: bool) -> Result<Vec<Complete>, ParseError> {
        let mut parser = ResponseParser::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut out = Vec::new();
        let mut offset = 0;
        let mut cuts: Vec<usize> = pieces.to_vec();
        cuts.push(input.len());
        for cut in cuts {
            buf.extend_from_slice(&input[offset..cut]);
            offset = cut;
            loop {
                let (used, done) = parser.parse(&buf, head)?;
                buf.drain(..used);
                match done {
                    Some(c) => out.push(c),
                    None => break,
                }
            }
        }
        if let Some(c) = parser.eof()? {
            out.push(c);
        }
        Ok(out)
    }

    fn every_split(input: &[u8], head: bool) -> Vec<Complete> {
        let whole = feed_all(input, &[], head).unwrap();
        for i in 0..input.len() {
            for j in i..input.len() {
                assert_eq!(
                    feed_all(input, &[i, j], head).unwrap(),
                    whole,
                    "split at {i},{j}"
                );
            }
        }
        whole
    }

    #[test]
    fn content_length_keep_alive() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        let got = every_split(r, false);
        assert_eq!(
            got,
            vec![
                Complete {
                    status: 200,
                    keep_alive: true
                },
                Complete {
                    status: 404,
                    keep_alive: true
                }
            ]
        );
    }

    #[test]
    fn chunked_with_extensions_and_trailers() {
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: yes\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx";
        let got = every_split(r, false);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].status, 201);
    }

    #[test]
    fn close_delimited_body_ends_at_eof() {
        let r = b"HTTP/1.1 200 OK\r\n\r\nsome body that ends when the server closes";
        let got = every_split(r, false);
        assert_eq!(
            got,
            vec![Complete {
                status: 200,
                keep_alive: false
            }]
        );
    }

    #[test]
    fn no_body_for_head_204_304_and_interim() {
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
        assert_eq!(every_split(r, true).len(), 1);
        let r = b"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n";
        assert_eq!(every_split(r, false).len(), 2);
        let r = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(
            every_split(r, false),
            vec![Complete {
                status: 200,
                keep_alive: true
            }]
        );
    }

    #[test]
    fn connection_header_and_http10() {
        let r = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
        assert!(!every_split(r, false)[0].keep_alive);
        let r = b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert!(!every_split(r, false)[0].keep_alive);
        let r = b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n";
        assert!(every_split(r, false)[0].keep_alive);
    }

    /// The violation `input` is refused with, whole and split at every point (the quote is of
    /// what had arrived, so only the whole input's is returned).
    fn violation(input: &[u8]) -> (Violation, String) {
        let kind = |r: &Result<Vec<Complete>, ParseError>| match r {
            Err(ParseError::Protocol(kind, _)) => Some(*kind),
            _ => None,
        };
        let whole = feed_all(input, &[], false);
        for i in 0..input.len() {
            assert_eq!(
                kind(&feed_all(input, &[i], false)),
                kind(&whole),
                "split at {i}"
            );
        }
        match whole {
            Err(ParseError::Protocol(kind, quote)) => (kind, quote),
            other => panic!("{:?}: {other:?}", String::from_utf8_lossy(input)),
        }
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert!(matches!(
            feed_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
                &[],
                false
            ),
            Err(ParseError::UnexpectedEof)
        ));
        let cases: &[(&[u8], Violation, &str)] = &[
            (
                b"HTTP/1.1 abc\r\nContent-Length: 0\r\n\r\n",
                Violation::MalformedStatusLine,
                "HTTP/1.1 abc\\r",
            ),
            (
                b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
                Violation::MalformedStatusLine,
                "SSH-2.0-OpenSSH_9.6\\r",
            ),
            (
                b"HTTP/1.1 200 OK\r\nGood: 1\r\nBad Header: x\r\n\r\n",
                Violation::MalformedHeader,
                "Bad Header: x",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                Violation::InvalidContentLength,
                "Content-Length: x",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello",
                Violation::InvalidContentLength,
                "Content-Length: +5",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
                Violation::InvalidContentLength,
                "Content-Length: 99999999999999999999",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
                Violation::ConflictingContentLength,
                "Content-Length: 6",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\nhello!",
                Violation::ConflictingContentLength,
                "Content-Length: 5, 6",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                Violation::LengthWithTransferEncoding,
                "HTTP/1.1 200 OK\\r\\nContent-Length: 5\\r\\nTransfer-Enc…",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                Violation::BadChunkSize,
                "zz",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n",
                Violation::BadChunkSize,
                "+5",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\n",
                Violation::BadChunkSize,
                "11111111111111111",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n",
                Violation::BadChunkFraming,
                "lo\\r\\n0\\r\\n\\r\\n",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n",
                Violation::BadChunkFraming,
                "no colon",
            ),
        ];
        for (input, kind, quote) in cases {
            let got = violation(input);
            assert_eq!(
                &got,
                &(*kind, quote.to_string()),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn oversized_heads_and_lines_are_refused_however_they_arrive() {
        let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
        while head.len() <= MAX_HEAD {
            head.extend_from_slice(
                b"X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n",
            );
        }
        head.extend_from_slice(b"Content-Length: 0\r\n\r\n");
        // Whole (the end of the head has arrived) and cut before its end agree.
        for cut in [&[][..], &[MAX_HEAD + 10][..], &[100][..]] {
            assert!(matches!(
                feed_all(&head, cut, false),
                Err(ParseError::Protocol(Violation::HeaderTooLarge, _))
            ));
        }
        let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..=MAX_HEADERS {
            many.extend_from_slice(format!("X-{i}: y\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        assert_eq!(violation(&many).0, Violation::HeaderTooLarge);
        let mut long_size = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;".to_vec();
        long_size.extend(std::iter::repeat_n(b'x', MAX_LINE));
        long_size.extend_from_slice(b"\r\nhello\r\n0\r\n\r\n");
        for cut in [&[][..], &[MAX_LINE][..]] {
            assert!(matches!(
                feed_all(&long_size, cut, false),
                Err(ParseError::Protocol(Violation::BadChunkSize, _))
            ));
        }
    }

    #[test]
    fn lenient_where_http_allows() {
        // Repeated identical lengths (RFC 9110 §8.6), extensions after BWS, a coding before
        // chunked, a coding other than chunked last (close-delimited).
        let r = b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(every_split(r, false).len(), 1);
        let r =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2 ;x=y\r\nok\r\n0\r\n\r\n";
        assert_eq!(every_split(r, false).len(), 1);
        let r = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nwhatever";
        assert!(!every_split(r, false)[0].keep_alive);
    }

    #[test]
    fn collects_headers_and_decoded_body() {
        let r = b"HTTP/1.1 200 OK\r\nX-Token: abc\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nfoo\r\n3\r\nbar\r\n0\r\n\r\n";
        let mut p = ResponseParser::collecting();
        let (used, done) = p.parse(r, false).unwrap();
        assert_eq!(used, r.len());
        assert_eq!(done.map(|d| d.status), Some(200));
        assert_eq!(p.body(), b"foobar");
        assert!(p
            .headers()
            .iter()
            .any(|(n, v)| n == "X-Token" && v == b"abc"));
        let r2 = b"HTTP/1.1 204 No Content\r\n\r\n";
        p.parse(r2, false).unwrap();
        assert_eq!(p.body(), b"");
        assert!(!p.headers().iter().any(|(n, _)| n == "X-Token"));
    }

    #[test]
    fn eof_between_responses_is_not_an_error() {
        let mut p = ResponseParser::new();
        assert_eq!(p.eof(), Ok(None));
    }
}
