//! How an HTTP/3 connection or stream failed, in the kinds the report counts (as HTTP/2's
//! GOAWAY and RST_STREAM are counted by code), and a failed handshake in words.

use h3::error::{Code, ConnectionError, StreamError};
use h3::quic::ConnectionErrorIncoming;

/// Why a QUIC connection could not be opened.
#[derive(Debug)]
pub enum ConnectFailure {
    /// No UDP socket (the open-file limit, an address not on this host).
    Socket(std::io::Error),
    /// quinn refused to start it (an invalid server name, say).
    Refused(String),
    /// The QUIC handshake failed: TLS (a certificate, no `h3` in the server's ALPN), or the
    /// server's answer.
    Quic(quinn::ConnectionError),
    /// QUIC is up, but HTTP/3's control streams could not start.
    H3(String),
    /// The server's certificate was refused, explained as for TLS over TCP.
    Certificate(crate::net::tls::Explanation),
}

/// TLS's alert `no_application_protocol`: the server offers no protocol of ours (no `h3`).
const NO_APPLICATION_PROTOCOL: u8 = 120;

impl ConnectFailure {
    /// The server refused `h3` in its ALPN.
    pub fn no_h3(&self) -> bool {
        matches!(self, ConnectFailure::Quic(e) if alert(e) == Some(NO_APPLICATION_PROTOCOL))
    }
}

/// The TLS alert a QUIC handshake ended with, ours or the server's (QUIC's CRYPTO_ERROR is
/// 0x100 plus the alert).
fn alert(error: &quinn::ConnectionError) -> Option<u8> {
    let code = match error {
        quinn::ConnectionError::TransportError(e) => u64::from(e.code),
        quinn::ConnectionError::ConnectionClosed(close) => u64::from(close.error_code),
        _ => return None,
    };
    (0x100..0x200).contains(&code).then(|| (code - 0x100) as u8)
}

impl std::fmt::Display for ConnectFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectFailure::Socket(e) => write!(f, "no UDP socket: {e}"),
            ConnectFailure::Refused(e) => write!(f, "{e}"),
            ConnectFailure::Quic(e) if self.no_h3() => write!(
                f,
                "the server does not offer h3 in its ALPN ({e}): enable HTTP/3 on it, or leave \
                 out --http3"
            ),
            ConnectFailure::Quic(quinn::ConnectionError::TimedOut) => {
                write!(f, "no answer over UDP (QUIC)")
            }
            ConnectFailure::Quic(e) => write!(f, "the QUIC handshake failed: {e}"),
            ConnectFailure::H3(e) => write!(f, "HTTP/3 did not start: {e}"),
            ConnectFailure::Certificate(explained) => write!(f, "{explained}"),
        }
    }
}

/// A connection's end, as a kind the report counts.
pub fn close_kind(error: &ConnectionError) -> &'static str {
    match error {
        ConnectionError::Local { .. } => "closed_by_tsumo",
        ConnectionError::Remote {
            0: ConnectionErrorIncoming::ApplicationClose { error_code },
            ..
        } => match Code::from(*error_code) {
            Code::H3_NO_ERROR => "closed_no_error",
            _ => "closed_with_error",
        },
        ConnectionError::Remote {
            0: ConnectionErrorIncoming::Timeout,
            ..
        }
        | ConnectionError::Timeout { .. } => "idle_timeout",
        ConnectionError::Remote { .. } => "reset",
        _ => "other",
    }
}

/// How a request's stream ended, when it did not end with a whole response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamFailure {
    /// The server did not process it: a GOAWAY came first, or it rejected the stream
    /// (H3_REQUEST_REJECTED): it may go again on a new connection.
    Unprocessed(String),
    /// The server reset the stream with this code.
    Reset(String),
    /// The connection ended under it: how.
    Connection(&'static str),
    /// Anything else h3 reports.
    Other,
}

/// Sorts h3's stream error into the kinds the report counts.
pub fn stream_failure(error: &StreamError) -> StreamFailure {
    match error {
        StreamError::RemoteClosing { .. } => StreamFailure::Unprocessed("GOAWAY".to_string()),
        StreamError::RemoteTerminate { code, .. } if *code == Code::H3_REQUEST_REJECTED => {
            StreamFailure::Unprocessed(code.to_string())
        }
        StreamError::RemoteTerminate { code, .. } => StreamFailure::Reset(code.to_string()),
        StreamError::ConnectionError { 0: e, .. } => StreamFailure::Connection(close_kind(e)),
        _ => StreamFailure::Other,
    }
}
