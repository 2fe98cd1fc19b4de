//! `tsumo ws --socketio`: the connection speaks socket.io over the same WebSocket, with the
//! framing of [`crate::ws::socketio`] (the mahjong mode's). Opening adds the Engine.IO open
//! packet and the namespace connect ([`handshake`]); each message is an event sent with an
//! acknowledgement id, its sequence number, and the server's acknowledgement with that id is its
//! reply; the events the server emits are pushes. The server's Engine.IO pings are answered and
//! counted as nothing: they are the protocol's, not the load's.

use std::cell::Cell;

use serde_json::Value;
use thiserror::Error;

use super::script::{Frame, Scripted};
use crate::ws::socketio::{self, Packet};
use crate::ws::transport::{Message, WebSocket, WsError};

/// Why a socket.io connection ended, or its opening failed, as the report counts it.
#[derive(Debug, Error)]
pub enum SocketIoError {
    #[error("socket.io disconnect")]
    Disconnected,
    #[error("socket.io connect error")]
    ConnectError,
    #[error("bad socket.io frame")]
    BadFrame,
    /// The script's error, its one line.
    #[error("{0}")]
    Script(String),
    /// The WebSocket under it.
    #[error("{0}")]
    Ws(WsError),
}

/// What a server frame is to the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// The acknowledgement of message `seq`.
    Reply(u64),
    /// An event the server emitted (or anything else the load did not ask for).
    Push,
    /// Engine.IO's own traffic (ping, noop, the namespace's connect): not a message.
    Keepalive,
}

/// A connection's socket.io side.
pub struct SocketIo {
    /// The event's name as JSON text (`"echo"`), written once.
    name: String,
    /// The frame being built, reused.
    frame: String,
    /// A ping arrived: the connection owes the server a pong.
    pong_due: Cell<bool>,
}

impl SocketIo {
    /// For `--event NAME` (used without a script).
    pub fn new(event: &str) -> SocketIo {
        SocketIo {
            name: Value::String(event.to_string()).to_string(),
            frame: String::new(),
            pong_due: Cell::new(false),
        }
    }

    /// Message `seq` as an event asking for ack `seq`: without a script, `message` (the numbered
    /// text) is the payload of the `--event` event; with one, it is the event's JSON array.
    pub fn frame<'a>(
        &'a mut self,
        seq: u64,
        message: Frame<'_>,
        scripted: bool,
    ) -> Result<Frame<'a>, SocketIoError> {
        let Frame::Text(text) = message else {
            return Err(SocketIoError::Script(format!(
                "{}with --socketio, message() returns the event as JSON array text, not binary",
                super::script::SCRIPT_ERROR
            )));
        };
        socketio::start_acked_event(&mut self.frame, seq);
        if scripted {
            if !is_event(text) {
                return Err(SocketIoError::Script(format!(
                    "{}with --socketio, message() must return the event as a JSON array \
                     [\"name\", payload...], not {}",
                    super::script::SCRIPT_ERROR,
                    text.chars().take(40).collect::<String>()
                )));
            }
            self.frame.push_str(text);
        } else {
            // The numbered text is digits and dots: a JSON string as it is.
            self.frame.push('[');
            self.frame.push_str(&self.name);
            self.frame.push_str(",\"");
            self.frame.push_str(text);
            self.frame.push_str("\"]");
        }
        Ok(Frame::Text(&self.frame))
    }

    /// What a server frame is; a script sees the events in `reply(data)` (the JSON array). A
    /// disconnect, a connect error or a frame that is not socket.io ends the connection.
    pub fn heard(
        &self,
        payload: &[u8],
        binary: bool,
        script: Option<&Scripted>,
    ) -> Result<Heard, SocketIoError> {
        if binary {
            return Ok(Heard::Push);
        }
        let text = std::str::from_utf8(payload).unwrap_or_default();
        match socketio::parse(text) {
            Ok(Packet::Ack { id, .. }) => Ok(Heard::Reply(id)),
            Ok(Packet::Event { .. }) => {
                if let Some(script) = script {
                    script
                        .answers(&payload[2..], false, None)
                        .map_err(|error| SocketIoError::Script(error.0))?;
                }
                Ok(Heard::Push)
            }
            Ok(Packet::Ping) => {
                self.pong_due.set(true);
                Ok(Heard::Keepalive)
            }
            Ok(Packet::Disconnected) => Err(SocketIoError::Disconnected),
            Ok(Packet::ConnectError(_)) => Err(SocketIoError::ConnectError),
            // Events with an ack id or in another namespace, binary events.
            Ok(Packet::Other(frame)) if frame.starts_with("42") || frame.starts_with("45") => {
                Ok(Heard::Push)
            }
            Ok(_) => Ok(Heard::Keepalive),
            Err(_) => Err(SocketIoError::BadFrame),
        }
    }

    /// Answers the server's ping, if one came since the last look.
    pub async fn pong(&self, ws: &mut WebSocket) -> Result<(), WsError> {
        if self.pong_due.replace(false) {
            ws.send_text(socketio::PONG).await?;
        }
        Ok(())
    }
}

/// Whether `text` is an event's JSON array: a name, then the payload.
fn is_event(text: &str) -> bool {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => matches!(items.first(), Some(Value::String(_))),
        _ => false,
    }
}

/// Opens the default namespace on a new socket: the Engine.IO open packet, our connect, the
/// server's connect (pings answered meanwhile).
pub async fn handshake(ws: &mut WebSocket) -> Result<(), SocketIoError> {
    loop {
        let reply = match ws.next().await.map_err(SocketIoError::Ws)? {
            Message::Text(text) => match socketio::parse(text) {
                Ok(Packet::Open { .. }) => Some(socketio::CONNECT),
                Ok(Packet::Ping) => Some(socketio::PONG),
                Ok(Packet::Connected) => return Ok(()),
                Ok(Packet::ConnectError(_)) => return Err(SocketIoError::ConnectError),
                Ok(Packet::Disconnected) => return Err(SocketIoError::Disconnected),
                Ok(_) => None,
                Err(_) => return Err(SocketIoError::BadFrame),
            },
            Message::Binary(_) => None,
        };
        if let Some(reply) = reply {
            ws.send_text(reply).await.map_err(SocketIoError::Ws)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_an_event_asking_for_its_ack() {
        let mut sio = SocketIo::new("echo");
        let Ok(Frame::Text(frame)) = sio.frame(7, Frame::Text("0000000000000007.."), false) else {
            panic!("not a text frame");
        };
        assert_eq!(frame, r#"427["echo","0000000000000007.."]"#);
        let Ok(Frame::Text(frame)) = sio.frame(8, Frame::Text(r#"["chat",{"a":1}]"#), true) else {
            panic!("not a text frame");
        };
        assert_eq!(frame, r#"428["chat",{"a":1}]"#);
        for bad in ["{}", "[1]", "[", "chat"] {
            let e = sio
                .frame(9, Frame::Text(bad), true)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(e.contains("JSON array"), "{bad}: {e}");
        }
        assert!(sio.frame(9, Frame::Binary(b"x"), true).is_err());
    }

    #[test]
    fn acks_are_replies_events_pushes_and_pings_nothing() {
        let sio = SocketIo::new("echo");
        let heard = |frame: &str| {
            sio.heard(frame.as_bytes(), false, None)
                .map_err(|e| e.to_string())
        };
        assert_eq!(heard(r#"437["x"]"#), Ok(Heard::Reply(7)));
        assert_eq!(heard(r#"42["chat","hi"]"#), Ok(Heard::Push));
        assert_eq!(heard(r#"423["chat","hi"]"#), Ok(Heard::Push));
        assert_eq!(heard("6"), Ok(Heard::Keepalive));
        assert!(!sio.pong_due.get());
        assert_eq!(heard("2"), Ok(Heard::Keepalive));
        assert!(sio.pong_due.get());
        assert_eq!(heard("41").unwrap_err(), "socket.io disconnect");
        assert_eq!(heard("x").unwrap_err(), "bad socket.io frame");
        assert_eq!(sio.heard(b"\x01", true, None).ok(), Some(Heard::Push));
    }
}
