//! One request on a fresh connection, for the few requests that are not load: the mahjong
//! players' login and logout. It shares the stream, request formatting and response parser of the
//! load path, and keeps the response's headers (a login's cookie comes in `Set-Cookie`).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::response::ResponseParser;
use crate::net::stream::{ConnectError, Endpoint};

/// Bytes read per `read` call. Thousands of players log in and out at once and each holds
/// this buffer while its server answers (seconds under load), while a login or logout answer
/// is a few hundred bytes: a larger answer just takes more reads.
const READ_CHUNK: usize = 2048;

/// A complete response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

impl Response {
    /// Every value of a header (case-insensitive name), in order.
    pub fn header_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }
}

/// Why a one-shot request failed.
#[derive(Debug)]
pub enum OneshotError {
    Connect(ConnectError),
    Write(std::io::Error),
    Read(String),
    Timeout,
}

impl std::fmt::Display for OneshotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OneshotError::Connect(e) => write!(f, "connect failed: {e}"),
            OneshotError::Write(e) => write!(f, "write failed: {e}"),
            OneshotError::Read(e) => write!(f, "read failed: {e}"),
            OneshotError::Timeout => write!(f, "no response in time"),
        }
    }
}

impl OneshotError {
    /// Whether trying again on a new connection may help (the server reset or closed early).
    pub fn is_transient(&self) -> bool {
        match self {
            OneshotError::Connect(_) | OneshotError::Timeout => true,
            OneshotError::Write(_) => true,
            OneshotError::Read(e) => e.contains("reset") || e.contains("closed"),
        }
    }
}

/// Sends `request` (complete HTTP/1.1 bytes) on a new connection and reads one response.
pub async fn send(
    endpoint: &Endpoint,
    request: &[u8],
    timeout: Duration,
) -> Result<Response, OneshotError> {
    tokio::time::timeout(timeout, exchange(endpoint, request))
        .await
        .unwrap_or(Err(OneshotError::Timeout))
}

/// Sends `request` on a new connection and reads one response, however long it takes.
pub async fn exchange(endpoint: &Endpoint, request: &[u8]) -> Result<Response, OneshotError> {
    let (mut stream, _) = endpoint.connect().await.map_err(OneshotError::Connect)?;
    stream
        .write_all(request)
        .await
        .map_err(OneshotError::Write)?;
    stream.flush().await.map_err(OneshotError::Write)?;
    let head_request = request.starts_with(b"HEAD ");
    let mut parser = ResponseParser::collecting();
    let mut buf = vec![0u8; READ_CHUNK];
    let mut pending: Vec<u8> = Vec::new();
    loop {
        if !pending.is_empty() {
            let (used, done) = parser
                .parse(&pending, head_request)
                .map_err(|e| OneshotError::Read(e.to_string()))?;
            pending.drain(..used);
            if let Some(done) = done {
                return Ok(Response {
                    status: done.status,
                    headers: parser.headers().to_vec(),
                    body: parser.body().to_vec(),
                });
            }
        }
        let n = stream
            .read(&mut buf)
            .await
            .map_err(|e| OneshotError::Read(e.to_string()))?;
        if n == 0 {
            return match parser.eof() {
                Ok(Some(done)) => Ok(Response {
                    status: done.status,
                    headers: parser.headers().to_vec(),
                    body: parser.body().to_vec(),
                }),
                Ok(None) => Err(OneshotError::Read(
                    "connection closed before a response".into(),
                )),
                Err(e) => Err(OneshotError::Read(e.to_string())),
            };
        }
        pending.extend_from_slice(&buf[..n]);
    }
}
