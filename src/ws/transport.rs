//! The WebSocket a mahjong player talks over: our own TCP or TLS [`Stream`] (so `wss://` shares
//! the HTTP side's TLS configuration and `--insecure`), upgraded by tokio-tungstenite with a small
//! read buffer — tungstenite allocates 128 KiB per socket by default, and an idle player must
//! cost kilobytes, not that.

use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::WebSocketStream;

use crate::net::stream::{ConnectError, Endpoint, Stream};

/// An open WebSocket.
pub type WebSocket = WebSocketStream<Stream>;

/// Read buffer per socket, allocated up front and zero-filled up to this size before each
/// read: a `GAME` message is ~100 bytes and `kaiju` (with the rule) about 1.5 KB; a longer
/// message (the 16 KB game record at the end) grows the buffer to its size.
const READ_BUFFER: usize = 2048;

/// Why opening the WebSocket failed.
#[derive(Debug)]
pub enum WsConnectError {
    Connect(ConnectError),
    Handshake(String),
}

impl std::fmt::Display for WsConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WsConnectError::Connect(e) => write!(f, "connect failed: {e}"),
            WsConnectError::Handshake(e) => write!(f, "WebSocket handshake failed: {e}"),
        }
    }
}

/// Connects to `endpoint` and upgrades to a WebSocket at `url` (`ws://…` or `wss://…`, used for
/// the request line and Host), sending `cookie` as the `Cookie` header.
pub async fn connect(
    endpoint: &Endpoint,
    url: &str,
    cookie: &str,
) -> Result<WebSocket, WsConnectError> {
    let mut request = url
        .into_client_request()
        .map_err(|e| WsConnectError::Handshake(e.to_string()))?;
    let cookie = HeaderValue::from_str(cookie)
        .map_err(|e| WsConnectError::Handshake(format!("cookie not usable as a header: {e}")))?;
    request.headers_mut().insert("Cookie", cookie);
    let (stream, _) = endpoint.connect().await.map_err(WsConnectError::Connect)?;
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        // Every frame is flushed as it is sent; nothing waits in a write buffer.
        .write_buffer_size(0)
        .max_message_size(Some(4 << 20));
    let (ws, _response) =
        tokio_tungstenite::client_async_with_config(request, stream, Some(config))
            .await
            .map_err(|e| WsConnectError::Handshake(e.to_string()))?;
    Ok(ws)
}
