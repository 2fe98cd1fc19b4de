//! A scripted connection's messages and replies (`tsumo ws -s script.lua`): `message()` makes
//! each message and may name the key its reply will carry; `reply(data)` names the key a
//! server message answers, or nil for a push. The Lua side is [`crate::script::ws`]; this is
//! the matching, in the sequence numbers [`super::conn`] counts in.
//!
//! A reply answers the message in flight when its key is that message's key. A message sent
//! without a key is answered as an echo is: by the next server message, unless `reply()` (if
//! the script has one) returns nil for it, which makes it a push. A key of an earlier message
//! (one that timed out) makes the reply late; an unknown key, a push.

use std::cell::RefCell;
use std::collections::VecDeque;

use crate::script::ws::{ConnScript, Key};
use crate::script::ScriptError;
use crate::ws::transport::{WebSocket, WsError};

/// How a script's error starts, where a connection's end or failure is counted: the run then
/// fails with it.
pub const SCRIPT_ERROR: &str = "script error: ";

/// Keys of the messages sent before the one in flight, kept to tell a late reply from a push.
const RECENT_KEYS: usize = 32;

/// One message ready to go, borrowed from the connection's buffer.
pub enum Frame<'a> {
    Text(&'a str),
    Binary(&'a [u8]),
}

impl Frame<'_> {
    /// The message's length in bytes.
    pub fn bytes(&self) -> usize {
        match self {
            Frame::Text(text) => text.len(),
            Frame::Binary(bytes) => bytes.len(),
        }
    }

    pub async fn send(self, ws: &mut WebSocket) -> Result<(), WsError> {
        match self {
            Frame::Text(text) => ws.send_text(text).await,
            Frame::Binary(bytes) => ws.send_binary(bytes).await,
        }
    }
}

/// A connection's script and the keys of its messages.
pub struct Scripted {
    script: ConnScript,
    /// The message bytes, reused.
    buffer: Vec<u8>,
    /// Each message's key (if it had one) and sequence number, newest last.
    keys: RefCell<VecDeque<(Key, u64)>>,
    /// Whether the newest message had a key.
    keyed: std::cell::Cell<bool>,
}

impl Scripted {
    pub fn new(script: ConnScript) -> Scripted {
        Scripted {
            script,
            buffer: Vec::new(),
            keys: RefCell::new(VecDeque::new()),
            keyed: std::cell::Cell::new(false),
        }
    }

    /// Message `seq`, from `message()`; an error is the script's one line, [`SCRIPT_ERROR`] first.
    pub fn message(&mut self, seq: u64) -> Result<Frame<'_>, ScriptError> {
        let outgoing = self
            .script
            .message(&mut self.buffer)
            .map_err(|e| ScriptError(format!("{SCRIPT_ERROR}{e}")))?;
        self.keyed.set(outgoing.key.is_some());
        if let Some(key) = outgoing.key {
            if !self.script.has_reply() {
                return Err(ScriptError(format!(
                    "{SCRIPT_ERROR}message() returned a key, but the script has no \
                     reply(data) to find it in the replies"
                )));
            }
            let mut keys = self.keys.borrow_mut();
            if keys.len() == RECENT_KEYS {
                keys.pop_front();
            }
            keys.push_back((key, seq));
        }
        Ok(match outgoing.binary {
            true => Frame::Binary(&self.buffer),
            // message() checked it is UTF-8.
            false => Frame::Text(std::str::from_utf8(&self.buffer).unwrap_or_default()),
        })
    }

    /// The sequence number of the message a server message answers (`in_flight`: the one
    /// waiting for its reply, always the newest sent), or `None` for a push.
    pub fn answers(
        &self,
        data: &[u8],
        binary: bool,
        in_flight: Option<u64>,
    ) -> Result<Option<u64>, ScriptError> {
        let key = self
            .script
            .reply(data, binary)
            .map_err(|e| ScriptError(format!("{SCRIPT_ERROR}{e}")))?;
        let keyless_in_flight = in_flight.filter(|_| !self.keyed.get());
        Ok(match key {
            // No reply(): every server message is the echo of the one in flight.
            None if !self.script.has_reply() => keyless_in_flight,
            None => None,
            Some(key) => {
                let keys = self.keys.borrow();
                let known = keys.iter().rev().find(|(k, _)| *k == key).map(|(_, s)| *s);
                known.or(keyless_in_flight)
            }
        })
    }
}
