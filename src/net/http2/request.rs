//! wrk's requests, in HTTP/2 (and HTTP/3, which maps them the same way).
//!
//! wrk's Lua API makes raw HTTP/1.1 bytes (`wrk.format`, a `request()` hook, `wrk.headers`).
//! Scripts stay unchanged under `--http2`: each request in those bytes is parsed once into its
//! method, path, headers and body, and becomes an HTTP/2 request. `Host` becomes `:authority`;
//! the headers that HTTP/2 forbids (connection-specific: Connection, Keep-Alive,
//! Proxy-Connection, Transfer-Encoding, Upgrade, and TE other than `trailers`) are dropped;
//! Content-Length is left to hyper, which sets it from the body. A request that is the same
//! every time is parsed once per worker and only cloned per send.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue};
use http::uri::{Authority, PathAndQuery, Scheme, Uri};
use http::{HeaderMap, Method, Request};
use http_body_util::Full;

/// Why wrk's request bytes do not make HTTP/2 requests.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("the request is empty")]
    Empty,
    /// The request that starts at byte `at` of the text.
    #[error("{reason} (at byte {at} of the request text)")]
    At { at: usize, reason: Malformed },
}

/// What is wrong with one request of the text.
#[derive(Debug, thiserror::Error)]
pub enum Malformed {
    #[error("incomplete request")]
    Incomplete,
    #[error("invalid request: {0}")]
    Request(httparse::Error),
    #[error("invalid method: {0}")]
    Method(http::method::InvalidMethod),
    #[error("invalid Content-Length in the request")]
    ContentLength,
    #[error("invalid header name '{0}'")]
    HeaderName(String),
    #[error("invalid value of header '{0}'")]
    HeaderValue(String),
    #[error("request body is shorter than its Content-Length")]
    ShortBody,
    #[error("invalid Host '{host}': {reason}")]
    Host {
        host: String,
        reason: http::uri::InvalidUri,
    },
    #[error("invalid path: {0}")]
    Path(http::uri::InvalidUri),
    #[error("invalid request target: {0}")]
    Target(http::Error),
}

/// A request ready to be sent any number of times.
#[derive(Debug, Clone)]
pub struct H2Request {
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
}

/// Connection-specific headers, which HTTP/2 forbids (RFC 9113, section 8.2.2).
const DROPPED: [&str; 6] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
    "content-length",
];

impl H2Request {
    /// Parses every request in `bytes` (one or more complete HTTP/1.1 requests, as
    /// `wrk.format` makes them). `scheme` and `authority` complete the URI when a request
    /// has no `Host` header.
    pub fn parse_all(
        bytes: &[u8],
        scheme: &Scheme,
        authority: &str,
    ) -> Result<Vec<H2Request>, RequestError> {
        let mut requests = Vec::new();
        let mut pos = 0;
        while pos < bytes.len() {
            let (request, used) = Self::parse_one(&bytes[pos..], scheme, authority)
                .map_err(|reason| RequestError::At { at: pos, reason })?;
            requests.push(request);
            pos += used;
        }
        if requests.is_empty() {
            return Err(RequestError::Empty);
        }
        Ok(requests)
    }

    /// One request from the start of `bytes`, and the number of bytes it took.
    fn parse_one(
        bytes: &[u8],
        scheme: &Scheme,
        authority: &str,
    ) -> Result<(H2Request, usize), Malformed> {
        let mut slots = [httparse::EMPTY_HEADER; 128];
        let mut parsed = httparse::Request::new(&mut slots);
        let head_len = match parsed.parse(bytes) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Err(Malformed::Incomplete),
            Err(e) => return Err(Malformed::Request(e)),
        };
        let method = Method::from_bytes(parsed.method.unwrap_or("GET").as_bytes())
            .map_err(Malformed::Method)?;
        let path = parsed.path.unwrap_or("/");
        let mut host = None;
        let mut body_len = 0;
        let mut headers = HeaderMap::with_capacity(parsed.headers.len());
        for h in parsed.headers.iter() {
            let name = h.name.to_ascii_lowercase();
            if name == "host" {
                host = Some(String::from_utf8_lossy(h.value).trim().to_string());
                continue;
            }
            if name == "content-length" {
                body_len = std::str::from_utf8(h.value)
                    .ok()
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .ok_or(Malformed::ContentLength)?;
            }
            let trailers_only = name == "te" && h.value.eq_ignore_ascii_case(b"trailers");
            if DROPPED.contains(&name.as_str()) || (name == "te" && !trailers_only) {
                continue;
            }
            let header_name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Malformed::HeaderName(h.name.to_string()))?;
            let value = HeaderValue::from_bytes(h.value)
                .map_err(|_| Malformed::HeaderValue(h.name.to_string()))?;
            headers.append(header_name, value);
        }
        let end = head_len + body_len;
        let Some(body) = bytes.get(head_len..end) else {
            return Err(Malformed::ShortBody);
        };
        let uri = if path.starts_with('/') || path == "*" {
            let authority = host.as_deref().unwrap_or(authority);
            Uri::builder()
                .scheme(scheme.clone())
                .authority(
                    Authority::try_from(authority).map_err(|reason| Malformed::Host {
                        host: authority.to_string(),
                        reason,
                    })?,
                )
                .path_and_query(PathAndQuery::try_from(path).map_err(Malformed::Path)?)
                .build()
                .map_err(Malformed::Target)?
        } else {
            // Absolute form (a proxy request): it names its own scheme and authority.
            Uri::try_from(path).map_err(|e| Malformed::Target(e.into()))?
        };
        let request = H2Request {
            method,
            uri,
            headers,
            body: Bytes::copy_from_slice(body),
        };
        Ok((request, end))
    }

    /// The request as hyper sends it (cheap: the parts are shared, not copied).
    pub fn to_request(&self) -> Request<Full<Bytes>> {
        let mut request = Request::new(Full::new(self.body.clone()));
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = self.headers.clone();
        request
    }

    /// The request as h3 sends it: its head, and its body apart (sent as DATA frames); a body
    /// gets its Content-Length, which h3 does not add.
    pub fn to_h3(&self) -> (Request<()>, Bytes) {
        let mut request = Request::new(());
        *request.method_mut() = self.method.clone();
        *request.uri_mut() = self.uri.clone();
        *request.headers_mut() = self.headers.clone();
        if !self.body.is_empty() {
            request
                .headers_mut()
                .insert(http::header::CONTENT_LENGTH, self.body.len().into());
        }
        (request, self.body.clone())
    }

    /// Its bytes as an HTTP/3 run counts them (QPACK's are not known): its header fields as
    /// `name: value` lines, the pseudo-headers among them, and its body.
    pub fn size(&self) -> u64 {
        let fields: usize = self
            .headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len() + 4)
            .sum();
        let pseudo = self.method.as_str().len()
            + self.uri.path_and_query().map_or(1, |p| p.as_str().len())
            + self.uri.authority().map_or(0, |a| a.as_str().len())
            + 5
            + 4 * 4;
        (fields + pseudo + self.body.len()) as u64
    }

    pub fn is_head(&self) -> bool {
        self.method == Method::HEAD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_wrk_format_to_http2() {
        let raw = b"POST /a?b=1 HTTP/1.1\r\nHost: example.com:8443\r\nConnection: keep-alive\r\n\
            Content-Type: x/y\r\nTE: gzip\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\n\r\n";
        let all = H2Request::parse_all(raw, &Scheme::HTTPS, "127.0.0.1:1").unwrap();
        assert_eq!(all.len(), 2);
        let post = all[0].to_request();
        assert_eq!(post.method(), Method::POST);
        assert_eq!(post.uri(), "https://example.com:8443/a?b=1");
        assert_eq!(post.headers().len(), 1);
        assert_eq!(post.headers()["content-type"], "x/y");
        assert_eq!(all[0].body, Bytes::from_static(b"abc"));
        assert_eq!(all[1].to_request().uri(), "https://127.0.0.1:1/");
    }

    #[test]
    fn refuses_broken_requests() {
        let scheme = Scheme::HTTP;
        assert!(H2Request::parse_all(b"GET / HTTP/1.1\r\n", &scheme, "h").is_err());
        assert!(H2Request::parse_all(b"", &scheme, "h").is_err());
        let short = b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\nab";
        assert!(H2Request::parse_all(short, &scheme, "h").is_err());
    }
}
