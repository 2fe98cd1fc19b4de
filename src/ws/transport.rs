//! The WebSocket a mahjong player talks over: tokio-tungstenite on our own TCP or TLS [`Stream`]
//! (so `wss://` shares the HTTP side's TLS configuration and `--insecure`), its buffers tuned
//! for thousands of mostly idle players — tungstenite allocates a 128 KiB read buffer per
//! socket by default, and an idle player must cost kilobytes.
//!
//! On top of it, the few things a player needs and tungstenite leaves to its user: a message
//! handed out borrowed until the next call (so a player's loop is the same whatever the
//! library's payload types), the server's close reported as [`WsError::Closed`] with its code
//! once tungstenite has answered it, and every failure sorted into [`WsError`] or
//! [`HandshakeError`], named as the run reports them. tungstenite answers pings, masks frames,
//! checks the server's `Sec-WebSocket-Accept` and keeps a cut-short write whole before the next.

use futures_util::{SinkExt, StreamExt};
use thiserror::Error;
use tokio::io::AsyncWriteExt;
use tokio_tungstenite::tungstenite::client::{uri_mode, IntoClientRequest};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::http::{header, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Bytes, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

pub use super::error::{HandshakeError, WsError};
use crate::net::stream::{ConnectError, Endpoint, Stream};

/// The longest message accepted from the server (the game record is about 16 KB).
pub const MAX_MESSAGE: usize = 4 << 20;

/// The read buffer's resting size, allocated when the socket opens: a `GAME` message is about
/// 100 bytes, `kaiju` (with the rule) about 1.5 KB; a longer one grows it.
const READ_BUFFER: usize = 2048;

/// Frames waiting for a stalled server at most: a player sends one message at a time, and its
/// longest (`START` with the rule) is a few KB.
const MAX_WRITE_BUFFER: usize = 1 << 20;

/// Every socket's settings: a small read buffer, each frame written as it is sent (nothing
/// waits in a write buffer), and the message and frame limits.
fn config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER)
        .write_buffer_size(0)
        .max_write_buffer_size(MAX_WRITE_BUFFER)
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE))
}

/// Why opening the WebSocket failed.
#[derive(Debug, Error)]
pub enum WsConnectError {
    #[error("connect failed: {0}")]
    Connect(ConnectError),
    #[error("WebSocket handshake failed: {0}")]
    Handshake(HandshakeError),
}

impl WsConnectError {
    /// The failure without what differs from one connection to the next (see
    /// [`HandshakeError::kind`]).
    pub fn kind(&self) -> String {
        match self {
            WsConnectError::Connect(e) => format!("connect failed: {e}"),
            WsConnectError::Handshake(e) => format!("WebSocket handshake failed: {}", e.kind()),
        }
    }
}

/// A message from the server, borrowed from the socket until the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message<'a> {
    Text(&'a str),
    Binary(&'a [u8]),
}

/// The payload of the last message handed out.
enum Held {
    Text(Utf8Bytes),
    Binary(Bytes),
}

/// An open WebSocket, client side.
pub struct WebSocket {
    inner: WebSocketStream<Stream>,
    /// The last message handed out; dropped on the next call, so that its bytes go back to the
    /// read buffer before it is read into again.
    held: Option<Held>,
    /// The server's close arrived, or the socket failed: nothing more will be read.
    done: bool,
}

/// Connects to `endpoint` and upgrades to a WebSocket at `url` (`ws://…` or `wss://…`, used for
/// the request line and Host), sending `cookie` as the `Cookie` header.
pub async fn connect(
    endpoint: &Endpoint,
    url: &str,
    cookie: &str,
) -> Result<WebSocket, WsConnectError> {
    let failed = WsConnectError::Handshake;
    let bad_url = || failed(HandshakeError::Url(url.to_string()));
    let mut request = url.into_client_request().map_err(|_| bad_url())?;
    uri_mode(request.uri()).map_err(|_| bad_url())?;
    if !cookie.is_empty() {
        let cookie =
            HeaderValue::from_str(cookie).map_err(|_| failed(HandshakeError::Header("cookie")))?;
        request.headers_mut().insert(header::COOKIE, cookie);
    }
    // The key tungstenite generated, for the value a wrong answer is told it should have been.
    let key = request
        .headers()
        .get(header::SEC_WEBSOCKET_KEY)
        .map(|key| key.as_bytes().to_vec())
        .unwrap_or_default();
    let (stream, _) = endpoint.connect().await.map_err(WsConnectError::Connect)?;
    let (inner, response) =
        tokio_tungstenite::client_async_with_config(request, stream, Some(config()))
            .await
            .map_err(|e| {
                failed(HandshakeError::from_tungstenite(e, || {
                    derive_accept_key(&key)
                }))
            })?;
    // No extension is offered (tungstenite has none without its deflate feature).
    let extension = response
        .headers()
        .get_all(header::SEC_WEBSOCKET_EXTENSIONS)
        .iter()
        .any(|value| !value.as_bytes().trim_ascii().is_empty());
    if extension {
        return Err(failed(HandshakeError::NotOffered("an extension")));
    }
    Ok(WebSocket {
        inner,
        held: None,
        done: false,
    })
}

impl WebSocket {
    /// The next message from the server. Pings are answered on the way; the server's close is
    /// answered and ends the socket with [`WsError::Closed`]. Cancel-safe: a call dropped
    /// before it returns loses nothing.
    pub async fn next(&mut self) -> Result<Message<'_>, WsError> {
        self.held = None;
        let held = loop {
            if self.done {
                return Err(WsError::AlreadyClosed);
            }
            let message = match self.inner.next().await {
                Some(Ok(message)) => message,
                Some(Err(e)) => return Err(self.fail(e.into())),
                None => return Err(self.fail(WsError::AlreadyClosed)),
            };
            match message {
                tungstenite::Message::Text(text) => break Held::Text(text),
                tungstenite::Message::Binary(bytes) => break Held::Binary(bytes),
                tungstenite::Message::Close(frame) => return Err(self.on_close(frame).await),
                // A ping (its pong goes out with the next read or write), a pong, a raw frame.
                _ => {}
            }
        };
        Ok(match self.held.insert(held) {
            Held::Text(text) => Message::Text(text.as_str()),
            Held::Binary(bytes) => Message::Binary(bytes),
        })
    }

    /// Sends one text message as one frame, written to the socket at once.
    pub async fn send_text(&mut self, text: &str) -> Result<(), WsError> {
        match self.inner.send(tungstenite::Message::text(text)).await {
            Ok(()) => Ok(()),
            // We closed, or the server did: tungstenite refuses further messages.
            Err(tungstenite::Error::Protocol(
                tungstenite::error::ProtocolError::SendAfterClosing,
            )) => Err(WsError::AlreadyClosed),
            Err(e) => Err(e.into()),
        }
    }

    /// The client's close handshake: sends close (1000, normal closure) and reads until the
    /// server's close or the end of the stream. Bound it with a timeout: a server may never
    /// answer.
    pub async fn close(&mut self) -> Result<(), WsError> {
        let normal = CloseFrame {
            code: CloseCode::Normal,
            reason: Utf8Bytes::default(),
        };
        match self.inner.close(Some(normal)).await {
            Ok(())
            | Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {}
            Err(e) => return Err(e.into()),
        }
        loop {
            match self.next().await {
                Ok(_) => {}
                Err(WsError::Closed { .. } | WsError::Eof | WsError::AlreadyClosed) => break,
                Err(e) => return Err(e),
            }
        }
        let _ = self.inner.get_mut().shutdown().await;
        Ok(())
    }

    /// The server's close: tungstenite has queued its answer (the same code, unless we closed
    /// first); it goes out now, then the close is reported.
    async fn on_close(&mut self, frame: Option<CloseFrame>) -> WsError {
        self.done = true;
        // A server that is gone cannot take the answer; the close is what matters.
        let _ = self.inner.flush().await;
        match frame {
            Some(frame) => WsError::Closed {
                code: Some(frame.code.into()),
                reason: frame.reason.to_string(),
            },
            None => WsError::Closed {
                code: None,
                reason: String::new(),
            },
        }
    }

    fn fail(&mut self, e: WsError) -> WsError {
        self.done = true;
        e
    }
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
