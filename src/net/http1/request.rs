//! Request bytes, built once.
//!
//! A run without a per-request script sends the same bytes every time, so they are built once
//! (as wrk's `wrk.format` would build them) and shared by every connection of a worker. A batch
//! may hold several pipelined requests; it is parsed once to know how many responses to expect
//! and which requests are HEAD (whose responses have no body).

use crate::error::Error;
use crate::plan::Plan;

/// Why request bytes are not a batch of complete HTTP/1.1 requests (a script's `request()`, or
/// the request a plan builds); `at` is the offset of the request at fault.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("incomplete request at byte {at} of the request text")]
    Incomplete { at: usize },
    #[error("invalid request at byte {at} of the request text: {source}")]
    Invalid { at: usize, source: httparse::Error },
    #[error("invalid Content-Length in the request")]
    ContentLength,
    #[error("request body is shorter than its Content-Length")]
    ShortBody,
    #[error("the request is empty")]
    Empty,
}

/// A request tsumo refuses before any traffic: bad input.
impl From<BuildError> for Error {
    fn from(e: BuildError) -> Error {
        Error::Usage(e.to_string())
    }
}

/// One write's worth of requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// The bytes written to the socket.
    pub bytes: Vec<u8>,
    /// For each request in the batch, in order: whether it is a HEAD request.
    pub head: Vec<bool>,
}

impl Batch {
    /// Parses raw request bytes (one or more complete HTTP/1.1 requests) into a batch.
    pub fn parse(bytes: Vec<u8>) -> Result<Batch, BuildError> {
        let mut head = Vec::new();
        let mut pos = 0;
        while pos < bytes.len() {
            let mut headers = [httparse::EMPTY_HEADER; 128];
            let mut req = httparse::Request::new(&mut headers);
            let n = match req.parse(&bytes[pos..]) {
                Ok(httparse::Status::Complete(n)) => n,
                Ok(httparse::Status::Partial) => return Err(BuildError::Incomplete { at: pos }),
                Err(source) => return Err(BuildError::Invalid { at: pos, source }),
            };
            let is_head = req.method == Some("HEAD");
            let body_len = content_length(req.headers)?;
            pos += n + body_len;
            if pos > bytes.len() {
                return Err(BuildError::ShortBody);
            }
            head.push(is_head);
        }
        if head.is_empty() {
            return Err(BuildError::Empty);
        }
        Ok(Batch { bytes, head })
    }

    /// Number of requests (and so responses) in the batch.
    pub fn len(&self) -> usize {
        self.head.len()
    }

    pub fn is_empty(&self) -> bool {
        self.head.is_empty()
    }

    /// Length in bytes of the batch's first request (the whole batch when it holds one).
    pub fn first_len(&self) -> usize {
        if self.head.len() <= 1 {
            return self.bytes.len();
        }
        let mut headers = [httparse::EMPTY_HEADER; 128];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&self.bytes) {
            Ok(httparse::Status::Complete(n)) => content_length(req.headers)
                .map_or(self.bytes.len(), |body| (n + body).min(self.bytes.len())),
            _ => self.bytes.len(),
        }
    }
}

fn content_length(headers: &[httparse::Header<'_>]) -> Result<usize, BuildError> {
    for h in headers {
        if h.name.eq_ignore_ascii_case("content-length") {
            return std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .ok_or(BuildError::ContentLength);
        }
    }
    Ok(0)
}

/// Formats one request as wrk's `wrk.format` does: request line, `Host` (unless given), the
/// other headers in order, `Content-Length` when there is a body, a blank line, the body.
pub fn format(
    method: &str,
    path: &str,
    host: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + path.len() + body.map_or(0, <[u8]>::len));
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        out.extend_from_slice(b"Host: ");
        out.extend_from_slice(host.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    for (name, value) in headers {
        if body.is_some() && name.eq_ignore_ascii_case("content-length") {
            continue;
        }
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    if let Some(body) = body {
        out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    if let Some(body) = body {
        out.extend_from_slice(body);
    }
    out
}

/// The static request of a run without a script: `GET <path>` with `Host` and the `-H` headers.
pub fn from_plan(plan: &Plan) -> Result<Batch, Error> {
    let bytes = format(
        "GET",
        &plan.target.path,
        &plan.target.host_header(),
        &plan.headers,
        None,
    );
    Ok(Batch::parse(bytes)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_wrk() {
        let bytes = format("GET", "/", "localhost:28933", &[], None);
        assert_eq!(bytes, b"GET / HTTP/1.1\r\nHost: localhost:28933\r\n\r\n");
        let post = format(
            "POST",
            "/",
            "h",
            &[
                ("Host".into(), "example.com".into()),
                ("Content-Type".into(), "x/y".into()),
            ],
            Some(b"foo=bar&baz=quux"),
        );
        assert_eq!(
            post,
            b"POST / HTTP/1.1\r\nHost: example.com\r\nContent-Type: x/y\r\nContent-Length: 16\r\n\r\nfoo=bar&baz=quux"
                .to_vec()
        );
    }

    #[test]
    fn parses_pipelined_batches() {
        let mut bytes = format("GET", "/?foo", "h", &[], None);
        bytes.extend(format("HEAD", "/?bar", "h", &[], None));
        bytes.extend(format("POST", "/?baz", "h", &[], Some(b"abc")));
        let batch = Batch::parse(bytes).unwrap();
        assert_eq!(batch.head, vec![false, true, false]);
    }

    #[test]
    fn rejects_bad_requests() {
        assert!(Batch::parse(b"GET / HTTP/1.1\r\nHost: h\r\n".to_vec()).is_err());
        assert!(Batch::parse(b"G@T / HTTP/1.1\r\n\r\n".to_vec()).is_err());
        assert!(Batch::parse(Vec::new()).is_err());
    }
}
