//! The HTTP/1.1 upgrade that opens a WebSocket (RFC 6455 §4), client side, as pure functions:
//! the request bytes, and the check of the server's answer — `101`, `Upgrade: websocket`,
//! `Connection: Upgrade` and `Sec-WebSocket-Accept` equal to base64(SHA-1(key + GUID)). No
//! extension and no subprotocol is offered, so a server choosing one is refused.

use base64::Engine as _;
use thiserror::Error;

use super::sha1::sha1;

/// The GUID every server appends to the key (RFC 6455 §1.3).
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// A response head longer than this is refused.
pub const MAX_HEAD: usize = 16 * 1024;

/// Why the upgrade failed.
#[derive(Debug, Error)]
pub enum HandshakeError {
    #[error("not a ws:// or wss:// URL: {0}")]
    Url(String),
    #[error("{0} not usable in a request header")]
    Header(&'static str),
    #[error("{0}")]
    Io(std::io::Error),
    #[error("connection closed before the upgrade was answered")]
    Closed,
    #[error("malformed response to the upgrade: {0}")]
    Malformed(String),
    #[error("response head over {MAX_HEAD} bytes")]
    HeadTooLong,
    #[error("answered {status} {reason} instead of 101 Switching Protocols")]
    Status { status: u16, reason: String },
    #[error("101 without {0}")]
    MissingUpgrade(&'static str),
    #[error("Sec-WebSocket-Accept {got:?} does not match the key (expected {expected:?})")]
    BadAccept { got: String, expected: String },
    #[error("the server chose {0}, which was not offered")]
    NotOffered(&'static str),
}

impl HandshakeError {
    /// The failure without what differs from one connection to the next (the random accept
    /// values): errors are grouped by it, the full message is the example.
    pub fn kind(&self) -> String {
        match self {
            HandshakeError::BadAccept { .. } => {
                "Sec-WebSocket-Accept does not match the key".to_string()
            }
            other => other.to_string(),
        }
    }
}

/// A random `Sec-WebSocket-Key`: 16 bytes, base64.
pub fn key(random: [u8; 16]) -> String {
    base64::engine::general_purpose::STANDARD.encode(random)
}

/// The `Sec-WebSocket-Accept` a server must answer `key` with.
pub fn accept(key: &str) -> String {
    let mut keyed = String::with_capacity(key.len() + GUID.len());
    keyed.push_str(key);
    keyed.push_str(GUID);
    base64::engine::general_purpose::STANDARD.encode(sha1(keyed.as_bytes()))
}

/// The upgrade request for `url` (`ws://host[:port]/path?query` or `wss://…`; the authority
/// becomes `Host`), with `Cookie: cookie` when it is not empty.
pub fn request(url: &str, key: &str, cookie: &str) -> Result<Vec<u8>, HandshakeError> {
    let rest = url
        .strip_prefix("ws://")
        .or_else(|| url.strip_prefix("wss://"))
        .ok_or_else(|| HandshakeError::Url(url.to_string()))?;
    let (authority, target) = match rest.find(['/', '?']) {
        Some(at) => rest.split_at(at),
        None => (rest, "/"),
    };
    let target = if target.starts_with('?') {
        format!("/{target}")
    } else {
        target.to_string()
    };
    if authority.is_empty() || !printable(authority) || !printable(&target) {
        return Err(HandshakeError::Url(url.to_string()));
    }
    if !printable(cookie) {
        return Err(HandshakeError::Header("cookie"));
    }
    let mut head = format!(
        "GET {target} HTTP/1.1\r\nHost: {authority}\r\nConnection: Upgrade\r\n\
         Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: {key}\r\n"
    );
    if !cookie.is_empty() {
        head.push_str("Cookie: ");
        head.push_str(cookie);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    Ok(head.into_bytes())
}

/// Visible ASCII and spaces only: nothing that could end a header line early.
fn printable(text: &str) -> bool {
    text.bytes().all(|b| (0x20..0x7F).contains(&b))
}

/// Checks the server's answer at the front of `bytes`: `Ok(None)` while its head is incomplete,
/// `Ok(Some(n))` when the upgrade is accepted (the head is `n` bytes; frames may follow).
pub fn check_response(bytes: &[u8], key: &str) -> Result<Option<usize>, HandshakeError> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if bytes.len() > MAX_HEAD => {
            return Err(HandshakeError::HeadTooLong)
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(HandshakeError::Malformed(e.to_string())),
    };
    let status = response.code.unwrap_or(0);
    if status != 101 {
        return Err(HandshakeError::Status {
            status,
            reason: response.reason.unwrap_or("").to_string(),
        });
    }
    let header = |name: &'static str| {
        response
            .headers
            .iter()
            .filter(move |h| h.name.eq_ignore_ascii_case(name))
            .filter_map(|h| std::str::from_utf8(h.value).ok())
    };
    if !header("upgrade").any(|v| v.trim().eq_ignore_ascii_case("websocket")) {
        return Err(HandshakeError::MissingUpgrade("Upgrade: websocket"));
    }
    if !header("connection")
        .flat_map(|v| v.split(','))
        .any(|token| token.trim().eq_ignore_ascii_case("upgrade"))
    {
        return Err(HandshakeError::MissingUpgrade("Connection: Upgrade"));
    }
    let expected = accept(key);
    match header("sec-websocket-accept").next() {
        Some(got) if got.trim() == expected => {}
        got => {
            return Err(HandshakeError::BadAccept {
                got: got.unwrap_or("").to_string(),
                expected,
            })
        }
    }
    if header("sec-websocket-extensions").any(|v| !v.trim().is_empty()) {
        return Err(HandshakeError::NotOffered("an extension"));
    }
    if header("sec-websocket-protocol").any(|v| !v.trim().is_empty()) {
        return Err(HandshakeError::NotOffered("a subprotocol"));
    }
    Ok(Some(head_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6455 §1.3's sample key and answer.
    const SAMPLE_KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
    const SAMPLE_ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

    fn answer(accept: &str, extra: &str) -> Vec<u8> {
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n{extra}\r\n"
        )
        .into_bytes()
    }

    #[test]
    fn mismatched_accepts_are_one_kind_of_error() {
        let wrong = |got: &str| HandshakeError::BadAccept {
            got: got.to_string(),
            expected: accept(SAMPLE_KEY),
        };
        let (a, b) = (wrong("AAAA"), wrong("BBBB"));
        assert_ne!(a.to_string(), b.to_string());
        assert_eq!(a.kind(), b.kind());
        assert_eq!(a.kind(), "Sec-WebSocket-Accept does not match the key");
        // Kinds without a random part stay as they read.
        assert_eq!(
            HandshakeError::Closed.kind(),
            HandshakeError::Closed.to_string()
        );
    }

    #[test]
    fn accept_is_the_rfc_sample() {
        assert_eq!(accept(SAMPLE_KEY), SAMPLE_ACCEPT);
        assert_eq!(key(*b"the sample nonce"), SAMPLE_KEY);
    }

    #[test]
    fn request_names_host_path_key_and_cookie() {
        let bytes = request(
            "ws://127.0.0.1:4615/server/socket.io/?EIO=4&transport=websocket",
            SAMPLE_KEY,
            "MAJIANG=abc",
        )
        .unwrap();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.starts_with(
            "GET /server/socket.io/?EIO=4&transport=websocket HTTP/1.1\r\nHost: 127.0.0.1:4615\r\n"
        ));
        assert!(text.contains(&format!("Sec-WebSocket-Key: {SAMPLE_KEY}\r\n")));
        assert!(text.contains("Cookie: MAJIANG=abc\r\n"));
        assert!(text.ends_with("\r\n\r\n"));
        let bare = String::from_utf8(request("wss://h?x=1", "k", "").unwrap()).unwrap();
        assert!(
            bare.starts_with("GET /?x=1 HTTP/1.1\r\nHost: h\r\n"),
            "{bare}"
        );
        assert!(!bare.contains("Cookie"));
    }

    #[test]
    fn request_refuses_bad_urls_and_header_breaking_cookies() {
        assert!(matches!(
            request("http://h/", "k", ""),
            Err(HandshakeError::Url(_))
        ));
        assert!(matches!(
            request("ws:///", "k", ""),
            Err(HandshakeError::Url(_))
        ));
        assert!(matches!(
            request("ws://h/", "k", "a\r\nX: y"),
            Err(HandshakeError::Header("cookie"))
        ));
    }

    #[test]
    fn good_answer_is_accepted_with_frames_after_it() {
        let mut bytes = answer(SAMPLE_ACCEPT, "");
        let head = bytes.len();
        bytes.extend_from_slice(&[0x81, 0x01, b'0']);
        assert_eq!(check_response(&bytes, SAMPLE_KEY).unwrap(), Some(head));
        assert_eq!(
            check_response(&bytes[..head - 1], SAMPLE_KEY).unwrap(),
            None
        );
    }

    #[test]
    fn bad_answers_are_refused() {
        let wrong = check_response(&answer("AAAA", ""), SAMPLE_KEY).unwrap_err();
        assert!(matches!(wrong, HandshakeError::BadAccept { .. }), "{wrong}");
        assert!(wrong.to_string().contains(SAMPLE_ACCEPT), "{wrong}");
        let status = check_response(b"HTTP/1.1 400 Bad Request\r\n\r\n", SAMPLE_KEY).unwrap_err();
        assert_eq!(
            status.to_string(),
            "answered 400 Bad Request instead of 101 Switching Protocols"
        );
        let no_upgrade = b"HTTP/1.1 101 OK\r\nConnection: Upgrade\r\n\r\n";
        assert!(matches!(
            check_response(no_upgrade, SAMPLE_KEY),
            Err(HandshakeError::MissingUpgrade(_))
        ));
        let deflate = answer(
            SAMPLE_ACCEPT,
            "Sec-WebSocket-Extensions: permessage-deflate\r\n",
        );
        assert!(matches!(
            check_response(&deflate, SAMPLE_KEY),
            Err(HandshakeError::NotOffered(_))
        ));
        assert!(matches!(
            check_response(b"HTTP/1.1 1x1\r\n\r\n", SAMPLE_KEY),
            Err(HandshakeError::Malformed(_))
        ));
        let endless = vec![b'a'; MAX_HEAD + 1];
        let mut long = b"HTTP/1.1 101 OK\r\nX: ".to_vec();
        long.extend_from_slice(&endless);
        assert!(matches!(
            check_response(&long, SAMPLE_KEY),
            Err(HandshakeError::HeadTooLong)
        ));
    }
}
