//! What goes wrong on a player's WebSocket, in our words: tungstenite's errors sorted into the
//! failures a run reports (one line each, grouped by kind), for the upgrade and for an open
//! socket.

use thiserror::Error;
use tokio_tungstenite::tungstenite::error::{CapacityError, ProtocolError};
use tokio_tungstenite::tungstenite::Error as Tungstenite;

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
    #[error("response head too long, or sent in too many pieces")]
    HeadTooLong,
    #[error("answered {status} {reason} instead of 101 Switching Protocols")]
    Status { status: u16, reason: String },
    #[error("101 without {0}")]
    MissingUpgrade(&'static str),
    #[error("Sec-WebSocket-Accept does not match the key (expected {expected:?})")]
    BadAccept { expected: String },
    #[error("the server chose {0}, which was not offered")]
    NotOffered(&'static str),
}

impl HandshakeError {
    /// The failure without what differs from one connection to the next (the random accept
    /// value): errors are grouped by it, the full message is the example.
    pub fn kind(&self) -> String {
        match self {
            HandshakeError::BadAccept { .. } => {
                "Sec-WebSocket-Accept does not match the key".to_string()
            }
            other => other.to_string(),
        }
    }

    /// tungstenite's handshake failure; `expected` is the accept value our key asks for.
    pub(super) fn from_tungstenite(e: Tungstenite, expected: impl FnOnce() -> String) -> Self {
        match e {
            Tungstenite::Io(e) => HandshakeError::Io(e),
            Tungstenite::Http(response) => HandshakeError::Status {
                status: response.status().as_u16(),
                reason: response
                    .status()
                    .canonical_reason()
                    .unwrap_or("")
                    .to_string(),
            },
            Tungstenite::Protocol(ProtocolError::HandshakeIncomplete) => HandshakeError::Closed,
            Tungstenite::Protocol(ProtocolError::MissingUpgradeWebSocketHeader) => {
                HandshakeError::MissingUpgrade("Upgrade: websocket")
            }
            Tungstenite::Protocol(ProtocolError::MissingConnectionUpgradeHeader) => {
                HandshakeError::MissingUpgrade("Connection: Upgrade")
            }
            Tungstenite::Protocol(ProtocolError::SecWebSocketAcceptKeyMismatch) => {
                HandshakeError::BadAccept {
                    expected: expected(),
                }
            }
            Tungstenite::Protocol(ProtocolError::SecWebSocketSubProtocolError(_)) => {
                HandshakeError::NotOffered("a subprotocol")
            }
            // tungstenite's bound on a response head: 64 KiB, in at most 512 reads.
            Tungstenite::AttackAttempt => HandshakeError::HeadTooLong,
            other => HandshakeError::Malformed(other.to_string()),
        }
    }
}

/// Why an open WebSocket stopped working. One line each.
#[derive(Debug, Error)]
pub enum WsError {
    #[error("WebSocket I/O error: {0}")]
    Io(std::io::Error),
    #[error("the server closed the TCP connection without a WebSocket close")]
    Eof,
    #[error("the server closed the WebSocket{}", close_text(*.code, .reason))]
    Closed { code: Option<u16>, reason: String },
    #[error("WebSocket protocol violation by the server: {0}")]
    Protocol(ProtocolError),
    #[error("WebSocket protocol violation by the server: text message that is not UTF-8")]
    NotUtf8,
    #[error("WebSocket message of {size} bytes, over the limit of {max}")]
    TooLong { size: u64, max: usize },
    #[error("the WebSocket is closed")]
    AlreadyClosed,
    /// Anything else tungstenite reports on an open socket (none is expected on a client).
    #[error("WebSocket error: {0}")]
    Other(Tungstenite),
}

impl WsError {
    /// The server broke the protocol (as opposed to going away): a run reports it as an error.
    pub fn is_violation(&self) -> bool {
        matches!(
            self,
            WsError::Protocol(_) | WsError::NotUtf8 | WsError::TooLong { .. }
        )
    }
}

impl From<Tungstenite> for WsError {
    fn from(e: Tungstenite) -> Self {
        match e {
            Tungstenite::Io(e) => WsError::Io(e),
            Tungstenite::Protocol(ProtocolError::ResetWithoutClosingHandshake) => WsError::Eof,
            Tungstenite::Protocol(e) => WsError::Protocol(e),
            Tungstenite::Utf8(_) => WsError::NotUtf8,
            Tungstenite::Capacity(CapacityError::MessageTooLong { size, max_size }) => {
                WsError::TooLong {
                    size: size as u64,
                    max: max_size,
                }
            }
            Tungstenite::ConnectionClosed | Tungstenite::AlreadyClosed => WsError::AlreadyClosed,
            other => WsError::Other(other),
        }
    }
}

fn close_text(code: Option<u16>, reason: &str) -> String {
    match (code, reason) {
        (None, _) => String::new(),
        (Some(code), "") => format!(" (code {code})"),
        (Some(code), reason) => format!(" (code {code}: {reason})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatched_accepts_are_one_kind_of_error() {
        let wrong = |expected: &str| HandshakeError::BadAccept {
            expected: expected.to_string(),
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
    fn tungstenite_errors_become_ours() {
        let expected = || "x".to_string();
        let status = HandshakeError::from_tungstenite(
            Tungstenite::Http(Box::new(
                tokio_tungstenite::tungstenite::http::Response::builder()
                    .status(400)
                    .body(None)
                    .expect("a response"),
            )),
            expected,
        );
        assert_eq!(
            status.to_string(),
            "answered 400 Bad Request instead of 101 Switching Protocols"
        );
        assert!(matches!(
            HandshakeError::from_tungstenite(
                ProtocolError::MissingUpgradeWebSocketHeader.into(),
                expected
            ),
            HandshakeError::MissingUpgrade("Upgrade: websocket")
        ));
        assert!(matches!(
            HandshakeError::from_tungstenite(ProtocolError::HandshakeIncomplete.into(), expected),
            HandshakeError::Closed
        ));
        assert!(matches!(
            WsError::from(Tungstenite::from(
                ProtocolError::ResetWithoutClosingHandshake
            )),
            WsError::Eof
        ));
        let long = WsError::from(Tungstenite::Capacity(CapacityError::MessageTooLong {
            size: 5,
            max_size: 4,
        }));
        assert_eq!(
            long.to_string(),
            "WebSocket message of 5 bytes, over the limit of 4"
        );
        assert!(long.is_violation());
        assert!(!WsError::Eof.is_violation());
        assert_eq!(
            WsError::Closed {
                code: Some(1001),
                reason: "going away".into()
            }
            .to_string(),
            "the server closed the WebSocket (code 1001: going away)"
        );
    }
}
