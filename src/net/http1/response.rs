//! Incremental HTTP/1.1 response parsing and body framing.
//!
//! Bytes arrive in arbitrary pieces; the parser consumes what it can and says how much it used.
//! Headers are parsed by `httparse` once complete; bodies are framed by Content-Length, chunked
//! encoding (sizes, data and trailers split anywhere across reads), or the connection closing —
//! and HEAD, 1xx, 204 and 304 responses have none. Bodies are skipped, not copied — unless a
//! script's `response()` hook needs them, in which case headers and the decoded body are kept
//! (see [`ResponseParser::collecting`]).

use std::fmt;
use std::mem::MaybeUninit;

/// Longest response head (status line + headers) accepted.
pub const MAX_HEAD: usize = 64 * 1024;
/// Longest chunk-size or trailer line accepted.
const MAX_LINE: usize = 8 * 1024;

/// A response that did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The status line or headers are malformed.
    Head(String),
    /// The head is longer than [`MAX_HEAD`].
    HeadTooLong,
    /// The chunked body is malformed.
    Chunked(&'static str),
    /// The connection closed in the middle of a response.
    UnexpectedEof,
    /// Content-Length is not a number.
    ContentLength,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Head(e) => write!(f, "malformed response head: {e}"),
            ParseError::HeadTooLong => write!(f, "response head longer than {MAX_HEAD} bytes"),
            ParseError::Chunked(e) => write!(f, "malformed chunked body: {e}"),
            ParseError::UnexpectedEof => write!(f, "connection closed mid-response"),
            ParseError::ContentLength => write!(f, "invalid Content-Length"),
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
                    let Some((line, n)) = take_line(rest)? else {
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
                        return Err(ParseError::Chunked("missing CRLF after chunk data"));
                    }
                    used += 2;
                    self.state = State::ChunkSize;
                }
                State::Trailer => {
                    let Some((line, n)) = take_line(rest)? else {
                        return Ok((used, None));
                    };
                    used += n;
                    if line.is_empty() {
                        return Ok((used, Some(self.finish())));
                    }
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
        // Uninitialised header slots: zeroing 100 of them per response would cost more than
        // parsing a small response.
        let mut headers = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; 100];
        let mut resp = httparse::Response::new(&mut []);
        let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
            &mut resp,
            buf,
            &mut headers,
        );
        let n = match parsed {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                if buf.len() > MAX_HEAD {
                    return Err(ParseError::HeadTooLong);
                }
                return Ok(None);
            }
            Err(e) => return Err(ParseError::Head(e.to_string())),
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
        let mut keep_alive = http11;
        let mut chunked = false;
        let mut length = None;
        for h in resp.headers.iter() {
            if h.name.eq_ignore_ascii_case("connection") {
                if contains_token(h.value, b"close") {
                    keep_alive = false;
                } else if contains_token(h.value, b"keep-alive") {
                    keep_alive = true;
                }
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = contains_token(h.value, b"chunked");
            } else if h.name.eq_ignore_ascii_case("content-length") {
                let v = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .ok_or(ParseError::ContentLength)?;
                length = Some(v);
            }
        }
        self.keep_alive = keep_alive;
        self.state = if head_request || status == 204 || status == 304 {
            State::Head
        } else if chunked {
            State::ChunkSize
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

/// A CRLF-terminated line at the start of `buf`, without its CRLF, and the bytes it spans.
fn take_line(buf: &[u8]) -> Result<Option<(&[u8], usize)>, ParseError> {
    match buf.windows(2).position(|w| w == b"\r\n") {
        Some(i) => Ok(Some((&buf[..i], i + 2))),
        None if buf.len() > MAX_LINE => Err(ParseError::Chunked("line too long")),
        None => Ok(None),
    }
}

fn chunk_size(line: &[u8]) -> Result<u64, ParseError> {
    let digits = line.split(|&b| b == b';').next().unwrap_or(line);
    let digits = std::str::from_utf8(digits)
        .map_err(|_| ParseError::Chunked("chunk size is not hex"))?
        .trim();
    if digits.is_empty() {
        return Err(ParseError::Chunked("empty chunk size"));
    }
    u64::from_str_radix(digits, 16).map_err(|_| ParseError::Chunked("chunk size is not hex"))
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|part| part.trim_ascii().eq_ignore_ascii_case(token))
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

    #[test]
    fn malformed_input_is_an_error() {
        assert!(matches!(
            feed_all(b"HTTP/1.1 abc\r\n\r\n", &[], false),
            Err(ParseError::Head(_))
        ));
        assert!(matches!(
            feed_all(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                &[],
                false
            ),
            Err(ParseError::Chunked(_))
        ));
        assert!(matches!(
            feed_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
                &[],
                false
            ),
            Err(ParseError::UnexpectedEof)
        ));
        assert!(matches!(
            feed_all(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", &[], false),
            Err(ParseError::ContentLength)
        ));
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
