//! The WebSocket a mahjong player talks over: our own TCP or TLS [`Stream`] (so `wss://` shares
//! the HTTP side's TLS configuration and `--insecure`), upgraded and framed by the [`handshake`]
//! and [`codec`] next to this file.
//!
//! A player is woken once per message, so the path from the socket to its text is short: one
//! read buffer per socket, read into without zero-filling, text handed to the caller borrowed
//! from it; the only waker is the socket's own readiness (no proxy wakers, no channel). A frame
//! sent goes to the socket at once in one write; a write cut short (a full socket buffer, or the
//! caller giving up on the future) is finished before anything else is read or sent, so the
//! stream never carries half a frame followed by another. Pings are answered as they are read;
//! a close from the server is answered and then reported as [`WsError::Closed`].

use std::hash::{BuildHasher, Hasher};

use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::codec::{self, Decoded, Inbound, OpCode};
pub use super::error::WsError;
use super::handshake::{self, HandshakeError};
use crate::net::stream::{ConnectError, Endpoint, Stream};

/// The longest message accepted from the server (the game record is about 16 KB).
pub const MAX_MESSAGE: usize = 4 << 20;

/// A write buffer that grew past this (a long message sent) is given back once written.
const WRITE_KEPT: usize = 4096;

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

/// A message from the server, borrowed from the socket's read buffer until the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message<'a> {
    Text(&'a str),
    Binary(&'a [u8]),
}

/// An open WebSocket, client side.
pub struct WebSocket {
    stream: Stream,
    inbound: Inbound,
    /// Frame bytes not yet written (only between a cut-short write and its completion).
    out: Vec<u8>,
    written: usize,
    /// The masking keys' source (splitmix64, seeded at random per socket).
    rng: u64,
    /// We sent a close frame.
    close_sent: bool,
    /// The server's close arrived, or the stream failed: nothing more will be read.
    done: bool,
}

/// Connects to `endpoint` and upgrades to a WebSocket at `url` (`ws://…` or `wss://…`, used for
/// the request line and Host), sending `cookie` as the `Cookie` header.
pub async fn connect(
    endpoint: &Endpoint,
    url: &str,
    cookie: &str,
) -> Result<WebSocket, WsConnectError> {
    let mut rng = seed();
    let mut nonce = [0u8; 16];
    nonce[..8].copy_from_slice(&splitmix(&mut rng).to_le_bytes());
    nonce[8..].copy_from_slice(&splitmix(&mut rng).to_le_bytes());
    let key = handshake::key(nonce);
    let request = handshake::request(url, &key, cookie).map_err(WsConnectError::Handshake)?;
    let (mut stream, _) = endpoint.connect().await.map_err(WsConnectError::Connect)?;
    let failed = |e| WsConnectError::Handshake(HandshakeError::Io(e));
    stream.write_all(&request).await.map_err(failed)?;
    stream.flush().await.map_err(failed)?;
    let mut inbound = Inbound::new(MAX_MESSAGE);
    let head = loop {
        if let Some(head) = handshake::check_response(inbound.buffered(), &key)
            .map_err(WsConnectError::Handshake)?
        {
            break head;
        }
        if stream
            .read_buf(inbound.read_buffer())
            .await
            .map_err(failed)?
            == 0
        {
            return Err(WsConnectError::Handshake(HandshakeError::Closed));
        }
    };
    // Frames the server sent right after its answer (the Engine.IO open packet) stay buffered.
    inbound.discard(head);
    Ok(WebSocket {
        stream,
        inbound,
        out: Vec::new(),
        written: 0,
        rng,
        close_sent: false,
        done: false,
    })
}

impl WebSocket {
    /// The next message from the server. Pings are answered on the way; the server's close is
    /// answered and ends the socket with [`WsError::Closed`]. Cancel-safe: a call dropped
    /// before it returns loses nothing.
    pub async fn next(&mut self) -> Result<Message<'_>, WsError> {
        let (opcode, payload) = loop {
            self.finish_write().await?;
            if self.done {
                return Err(WsError::AlreadyClosed);
            }
            let decoded = match self.inbound.decode() {
                Ok(decoded) => decoded,
                Err(e) => return Err(self.fail(e)),
            };
            match decoded {
                Some(Decoded {
                    opcode: opcode @ (OpCode::Text | OpCode::Binary),
                    payload,
                }) => break (opcode, payload),
                Some(Decoded {
                    opcode: OpCode::Ping,
                    payload,
                }) => {
                    let ping = self.inbound.payload(payload).to_vec();
                    self.queue(OpCode::Pong, &ping);
                }
                Some(Decoded {
                    opcode: OpCode::Close,
                    payload,
                }) => return Err(self.on_close(payload).await),
                Some(_) => {} // a pong (or nothing a decoder hands out otherwise)
                None => match self.stream.read_buf(self.inbound.read_buffer()).await {
                    Ok(0) => return Err(self.fail(WsError::Eof)),
                    Ok(_) => {}
                    Err(e) => return Err(self.fail(WsError::Io(e))),
                },
            }
        };
        let payload = self.inbound.payload(payload);
        match opcode {
            OpCode::Text => match std::str::from_utf8(payload) {
                Ok(text) => Ok(Message::Text(text)),
                Err(_) => {
                    self.done = true;
                    Err(WsError::Protocol("text message that is not UTF-8"))
                }
            },
            _ => Ok(Message::Binary(payload)),
        }
    }

    /// Sends one text message as one frame, in one write when the socket takes it whole.
    pub async fn send_text(&mut self, text: &str) -> Result<(), WsError> {
        if self.close_sent {
            return Err(WsError::AlreadyClosed);
        }
        self.finish_write().await?;
        self.queue(OpCode::Text, text.as_bytes());
        self.finish_write().await
    }

    /// The client's close handshake: sends close (1000, normal closure) and reads until the
    /// server's close or the end of the stream. Bound it with a timeout: a server may never
    /// answer.
    pub async fn close(&mut self) -> Result<(), WsError> {
        if !self.close_sent {
            self.finish_write().await?;
            self.close_sent = true;
            self.queue(OpCode::Close, &1000u16.to_be_bytes());
        }
        loop {
            match self.next().await {
                Ok(_) => {}
                Err(WsError::Closed { .. } | WsError::Eof | WsError::AlreadyClosed) => break,
                Err(e) => return Err(e),
            }
        }
        self.finish_write().await?;
        let _ = self.stream.shutdown().await;
        Ok(())
    }

    /// The server's close: answered with its own code (unless we closed first), then reported.
    async fn on_close(&mut self, payload: std::ops::Range<usize>) -> WsError {
        self.done = true;
        let (code, reason) = match codec::close_payload(self.inbound.payload(payload)) {
            Ok(close) => close,
            Err(e) => return e,
        };
        if !self.close_sent {
            self.close_sent = true;
            // Codes a peer must not send back (1005, 1006, 1015 and unassigned ones) become 1000.
            let echo = code
                .filter(|c| matches!(c, 1000..=1003 | 1007..=1014 | 3000..=4999))
                .unwrap_or(1000);
            self.queue(OpCode::Close, &echo.to_be_bytes());
            // A server that is gone cannot take the answer; the close is what matters.
            let _ = self.finish_write().await;
        }
        WsError::Closed { code, reason }
    }

    fn fail(&mut self, e: WsError) -> WsError {
        self.done = true;
        e
    }

    /// Appends one masked frame to what is to be written.
    fn queue(&mut self, opcode: OpCode, payload: &[u8]) {
        let mask = (splitmix(&mut self.rng) as u32).to_ne_bytes();
        codec::encode(&mut self.out, opcode, payload, mask);
    }

    /// Writes whatever frame bytes are waiting; progress is kept in `self`, so a call dropped
    /// half-way is finished by the next.
    async fn finish_write(&mut self) -> Result<(), WsError> {
        while self.written < self.out.len() {
            match self.stream.write(&self.out[self.written..]).await {
                Ok(0) => return Err(self.fail(WsError::Io(std::io::ErrorKind::WriteZero.into()))),
                Ok(n) => self.written += n,
                Err(e) => return Err(self.fail(WsError::Io(e))),
            }
        }
        if !self.out.is_empty() {
            self.out.clear();
            self.written = 0;
            if self.out.capacity() > WRITE_KEPT {
                self.out = Vec::new();
            }
            // TLS: push the records out now (a no-op on plain TCP).
            if let Err(e) = self.stream.flush().await {
                return Err(self.fail(WsError::Io(e)));
            }
        }
        Ok(())
    }
}

/// A per-socket random seed: std's `RandomState` keys come from the OS once per thread and
/// differ for every instance, which is unpredictable enough for masking keys and nonces.
fn seed() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(crate::timing::clock::now());
    hasher.finish()
}

/// splitmix64: the next pseudo-random word.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
