//! What ends an open WebSocket, as the codec and the socket report it: below both, so neither
//! imports the other for it.

use thiserror::Error;

/// Why an open WebSocket stopped working. One line each.
#[derive(Debug, Error)]
pub enum WsError {
    #[error("WebSocket I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("the server closed the TCP connection without a WebSocket close")]
    Eof,
    #[error("the server closed the WebSocket{}", close_text(*.code, .reason))]
    Closed { code: Option<u16>, reason: String },
    #[error("WebSocket protocol violation by the server: {0}")]
    Protocol(&'static str),
    #[error("WebSocket message of {size} bytes, over the limit of {max}")]
    TooLong { size: u64, max: usize },
    #[error("the WebSocket is closed")]
    AlreadyClosed,
}

fn close_text(code: Option<u16>, reason: &str) -> String {
    match (code, reason) {
        (None, _) => String::new(),
        (Some(code), "") => format!(" (code {code})"),
        (Some(code), reason) => format!(" (code {code}: {reason})"),
    }
}
