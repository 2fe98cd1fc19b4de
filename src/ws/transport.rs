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
//!
//! tungstenite's read buffer grows to the longest message read and has no way to shrink: a
//! player that once read a game record (about 16 KB, the last message of a game) would keep
//! that much until its socket closes. So after a message longer than the resting size, once
//! nothing is left in the buffer, the socket gets a new tungstenite state with a buffer of the
//! resting size ([`WebSocket::next`]); [`Tracked`] tells when nothing is left.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::{SinkExt, StreamExt};
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio_tungstenite::tungstenite::client::{uri_mode, IntoClientRequest};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::http::{header, HeaderValue};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{self, Bytes, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

pub use super::error::{HandshakeError, WsError};
use crate::net::stream::{ConnectError, Endpoint, Stream};
use crate::timing::clock::{self, Nanos};

/// The longest message accepted from the server (the game record is about 16 KB).
pub const MAX_MESSAGE: usize = 4 << 20;

/// The read buffer's resting size, allocated when the socket opens: a `GAME` message is about
/// 100 bytes; a longer one (`kaiju` with the rule, about 1.5 KB, once a game; the game record)
/// grows it until the socket is renewed. tungstenite zero-fills the free part before every
/// read, a `WouldBlock` one too, so a smaller buffer is also less to fill.
const READ_BUFFER: usize = 1024;

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

/// Our stream under tungstenite, noting where the last read ended in memory. tungstenite reads
/// straight into its buffer and hands a message out as a slice of it, so when a message ends
/// where the last read ended, nothing past it has been read: the buffer is empty.
struct Tracked {
    /// Taken out to put the socket under a new tungstenite state.
    stream: Option<Stream>,
    /// The address one past the last byte of the last read.
    read_end: usize,
}

fn taken() -> io::Error {
    io::Error::new(
        io::ErrorKind::NotConnected,
        "the stream was moved to a new socket state",
    )
}

impl AsyncRead for Tracked {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let Some(stream) = this.stream.as_mut() else {
            return Poll::Ready(Err(taken()));
        };
        let poll = Pin::new(stream).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = poll {
            this.read_end = buf.filled().as_ptr_range().end as usize;
        }
        poll
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut().stream.as_mut() {
            Some(stream) => Pin::new(stream).poll_write(cx, buf),
            None => Poll::Ready(Err(taken())),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut().stream.as_mut() {
            Some(stream) => Pin::new(stream).poll_write_vectored(cx, bufs),
            None => Poll::Ready(Err(taken())),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| s.is_write_vectored())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut().stream.as_mut() {
            Some(stream) => Pin::new(stream).poll_flush(cx),
            None => Poll::Ready(Err(taken())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut().stream.as_mut() {
            Some(stream) => Pin::new(stream).poll_shutdown(cx),
            None => Poll::Ready(Err(taken())),
        }
    }
}

/// An open WebSocket, client side.
pub struct WebSocket {
    inner: WebSocketStream<Tracked>,
    /// The last message handed out; dropped on the next call, so that its bytes go back to the
    /// read buffer before it is read into again.
    held: Option<Held>,
    /// Where the last message handed out ended in memory, if it was longer than the read
    /// buffer's resting size (so the buffer grew for it).
    long_end: Option<usize>,
    /// The server's close arrived, or the socket failed: nothing more will be read.
    done: bool,
    /// Our close was sent: tungstenite's state must stay.
    closing: bool,
    /// The last pong read and when it arrived ([`WebSocket::take_pong`]).
    pong: Option<(Bytes, Nanos)>,
}

/// Connects to `endpoint` and upgrades to a WebSocket at `url` (`ws://…` or `wss://…`, used for
/// the request line and Host), sending `cookie` as the `Cookie` header.
pub async fn connect(
    endpoint: &Endpoint,
    url: &str,
    cookie: &str,
) -> Result<WebSocket, WsConnectError> {
    if cookie.is_empty() {
        return connect_with(endpoint, url, &[]).await;
    }
    connect_with(endpoint, url, &[("Cookie".to_string(), cookie.to_string())]).await
}

/// [`connect`] with the upgrade request's extra `headers` (name, value), each set in place of
/// any of the same name; `Sec-WebSocket-Protocol` among them asks for a subprotocol, and the
/// server must then choose one of those asked.
pub async fn connect_with(
    endpoint: &Endpoint,
    url: &str,
    headers: &[(String, String)],
) -> Result<WebSocket, WsConnectError> {
    let failed = WsConnectError::Handshake;
    let bad_url = || failed(HandshakeError::Url(url.to_string()));
    let mut request = url.into_client_request().map_err(|_| bad_url())?;
    uri_mode(request.uri()).map_err(|_| bad_url())?;
    for (name, value) in headers {
        let what = match name.eq_ignore_ascii_case("cookie") {
            true => "cookie",
            false => "a header of the script's connect()",
        };
        let bad = || failed(HandshakeError::Header(what));
        let name = header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        let value = HeaderValue::from_str(value).map_err(|_| bad())?;
        request.headers_mut().insert(name, value);
    }
    // The key tungstenite generated, for the value a wrong answer is told it should have been.
    let key = request
        .headers()
        .get(header::SEC_WEBSOCKET_KEY)
        .map(|key| key.as_bytes().to_vec())
        .unwrap_or_default();
    let (stream, _) = endpoint.connect().await.map_err(WsConnectError::Connect)?;
    let stream = Tracked {
        stream: Some(stream),
        read_end: 0,
    };
    // Boxed: a player's task is sized for its largest state, and this one's is about 1 KB.
    let (inner, response) = Box::pin(tokio_tungstenite::client_async_with_config(
        request,
        stream,
        Some(config()),
    ))
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
        long_end: None,
        done: false,
        closing: false,
        pong: None,
    })
}

impl WebSocket {
    /// The next message from the server. Pings are answered on the way; the server's close is
    /// answered and ends the socket with [`WsError::Closed`]. Cancel-safe: a call dropped
    /// before it returns loses nothing.
    pub async fn next(&mut self) -> Result<Message<'_>, WsError> {
        self.next_stamped().await.map(|(message, _)| message)
    }

    /// [`WebSocket::next`], with the kernel's receive stamp (CLOCK_REALTIME ns) of the read that
    /// completed the message, where the kernel stamps: tungstenite reads only when its buffer
    /// holds no whole frame, so that read is the last one.
    pub async fn next_stamped(&mut self) -> Result<(Message<'_>, Option<u64>), WsError> {
        self.held = None;
        if let Some(end) = self.long_end.take() {
            if end == self.inner.get_ref().read_end && !self.done && !self.closing {
                // Boxed: a new state inline would make every pending read's future twice as big.
                Box::pin(self.renew()).await;
            }
        }
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
                tungstenite::Message::Pong(payload) => {
                    let rx = self
                        .inner
                        .get_ref()
                        .stream
                        .as_ref()
                        .and_then(Stream::last_rx);
                    let now = clock::now();
                    self.pong = Some((payload, clock::received(rx, now, 0)));
                }
                // A ping (its pong goes out with the next read or write), a raw frame.
                _ => {}
            }
        };
        let rx = self
            .inner
            .get_ref()
            .stream
            .as_ref()
            .and_then(Stream::last_rx);
        let message = match self.held.insert(held) {
            Held::Text(text) => Message::Text(text.as_str()),
            Held::Binary(bytes) => Message::Binary(bytes),
        };
        let payload = match message {
            Message::Text(text) => text.as_bytes(),
            Message::Binary(bytes) => bytes,
        };
        if payload.len() > READ_BUFFER {
            self.long_end = Some(payload.as_ptr_range().end as usize);
        }
        Ok((message, rx))
    }

    /// Puts the socket under a new tungstenite state, whose read buffer has the resting size;
    /// the old state and its grown buffer go. Only while its buffer is empty, nothing waits to
    /// be sent and no close was sent or seen: then a new state is the same socket.
    async fn renew(&mut self) {
        if self.inner.flush().await.is_err() {
            return;
        }
        let Some(stream) = self.inner.get_mut().stream.take() else {
            return;
        };
        let stream = Tracked {
            stream: Some(stream),
            read_end: 0,
        };
        // Ready at its first poll: nothing can cancel the call between the take and here.
        self.inner = WebSocketStream::from_raw_socket(stream, Role::Client, Some(config())).await;
    }

    /// Sends one text message as one frame, written to the socket at once.
    pub async fn send_text(&mut self, text: &str) -> Result<(), WsError> {
        self.send(tungstenite::Message::text(text)).await
    }

    /// Sends one binary message as one frame, written to the socket at once.
    pub async fn send_binary(&mut self, bytes: &[u8]) -> Result<(), WsError> {
        self.send(tungstenite::Message::binary(bytes.to_vec()))
            .await
    }

    /// Sends a ping carrying `payload` (at most 125 bytes); its pong is kept by the reads
    /// ([`WebSocket::take_pong`]).
    pub async fn ping(&mut self, payload: &[u8]) -> Result<(), WsError> {
        self.send(tungstenite::Message::Ping(Bytes::copy_from_slice(payload)))
            .await
    }

    async fn send(&mut self, message: tungstenite::Message) -> Result<(), WsError> {
        match self.inner.send(message).await {
            Ok(()) => Ok(()),
            // We closed, or the server did: tungstenite refuses further messages.
            Err(tungstenite::Error::Protocol(
                tungstenite::error::ProtocolError::SendAfterClosing,
            )) => Err(WsError::AlreadyClosed),
            Err(e) => Err(e.into()),
        }
    }

    /// The last pong read since the previous call: its payload and when it arrived (the kernel's
    /// receive stamp where it stamps, on the run's monotonic clock). Reads hand out messages
    /// only; a pong is kept here as they pass it.
    pub fn take_pong(&mut self) -> Option<(Bytes, Nanos)> {
        self.pong.take()
    }

    /// The client's close handshake: sends close (1000, normal closure) and reads until the
    /// server's close or the end of the stream. Bound it with a timeout: a server may never
    /// answer.
    pub async fn close(&mut self) -> Result<(), WsError> {
        self.closing = true;
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
        if let Some(stream) = self.inner.get_mut().stream.as_mut() {
            let _ = stream.shutdown().await;
        }
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
