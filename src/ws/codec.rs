//! RFC 6455 framing, client side, with no I/O: the frames a client sends (always masked) and
//! the decoder of what a server sends, working in place in one read buffer.
//!
//! The decoder is where a player's CPU per message goes, so it copies nothing in the common case:
//! a whole text frame is handed out as a range of the read buffer, consumed on the next call. A
//! fragmented message is reassembled in the same buffer (each continuation's payload moved down
//! over its own header, control frames between fragments cut out), so it too comes out as one
//! range. The buffer holds [`READ_BUFFER`] bytes, grows for a longer frame (the game record at
//! the end of a game is about 16 KB) and shrinks back once that has been consumed: an idle
//! player costs kilobytes. Everything a server can send is checked: reserved bits and unknown
//! opcodes (no extension is ever negotiated), masked server frames, control frames that are
//! fragmented or too long, stray continuations, lengths past the message limit.

use std::ops::Range;

use super::error::WsError;

/// The read buffer's resting size: a `GAME` message is about 100 bytes, `kaiju` (with the rule)
/// about 1.5 KB.
pub const READ_BUFFER: usize = 2048;

/// The longest header a server can send (no mask): 2 + 8 bytes of extended length.
const MAX_SERVER_HEADER: usize = 10;

/// A frame's kind (its opcode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpCode {
    Continuation = 0x0,
    Text = 0x1,
    Binary = 0x2,
    Close = 0x8,
    Ping = 0x9,
    Pong = 0xA,
}

impl OpCode {
    fn from_bits(bits: u8) -> Option<OpCode> {
        Some(match bits {
            0x0 => OpCode::Continuation,
            0x1 => OpCode::Text,
            0x2 => OpCode::Binary,
            0x8 => OpCode::Close,
            0x9 => OpCode::Ping,
            0xA => OpCode::Pong,
            _ => return None,
        })
    }

    fn is_control(self) -> bool {
        self as u8 & 0x8 != 0
    }
}

/// Appends one client frame (FIN set, masked with `mask`) carrying `payload` to `out`.
pub fn encode(out: &mut Vec<u8>, opcode: OpCode, payload: &[u8], mask: [u8; 4]) {
    out.reserve(14 + payload.len());
    out.push(0x80 | opcode as u8);
    match payload.len() {
        len @ 0..=125 => out.push(0x80 | len as u8),
        len @ 126..=0xFFFF => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        len => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(len as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&mask);
    let start = out.len();
    out.extend_from_slice(payload);
    apply_mask(&mut out[start..], mask);
}

/// XORs `data` with the 4-byte `mask` (masking and unmasking are the same operation).
pub fn apply_mask(data: &mut [u8], mask: [u8; 4]) {
    let wide = u64::from_ne_bytes([
        mask[0], mask[1], mask[2], mask[3], mask[0], mask[1], mask[2], mask[3],
    ]);
    let mut chunks = data.chunks_exact_mut(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        chunk.copy_from_slice(&(u64::from_ne_bytes(word) ^ wide).to_ne_bytes());
    }
    for (i, byte) in chunks.into_remainder().iter_mut().enumerate() {
        *byte ^= mask[i & 3];
    }
}

/// One frame's header as the server sent it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Header {
    fin: bool,
    opcode: OpCode,
    /// Bytes of header (2, 4 or 10).
    len: usize,
    payload: u64,
}

/// Reads a header from the front of `bytes`: `Ok(None)` when more bytes are needed.
fn parse_header(bytes: &[u8]) -> Result<Option<Header>, WsError> {
    let [first, second, ..] = *bytes else {
        return Ok(None);
    };
    if first & 0x70 != 0 {
        return Err(WsError::Protocol(
            "reserved bits set (no extension was negotiated)",
        ));
    }
    let opcode = OpCode::from_bits(first & 0x0F).ok_or(WsError::Protocol("unknown opcode"))?;
    if second & 0x80 != 0 {
        return Err(WsError::Protocol("masked frame from the server"));
    }
    let fin = first & 0x80 != 0;
    let (len, payload) = match second & 0x7F {
        126 => match bytes.get(2..4) {
            Some(ext) => (4, u16::from_be_bytes([ext[0], ext[1]]) as u64),
            None => return Ok(None),
        },
        127 => match bytes.get(2..10) {
            Some(ext) => {
                let mut word = [0u8; 8];
                word.copy_from_slice(ext);
                let payload = u64::from_be_bytes(word);
                if payload >> 63 != 0 {
                    return Err(WsError::Protocol("64-bit length with its top bit set"));
                }
                (MAX_SERVER_HEADER, payload)
            }
            None => return Ok(None),
        },
        short => (2, short as u64),
    };
    if opcode.is_control() && (!fin || payload > 125) {
        return Err(WsError::Protocol(
            "control frame fragmented or longer than 125 bytes",
        ));
    }
    Ok(Some(Header {
        fin,
        opcode,
        len,
        payload,
    }))
}

/// A whole frame or message the decoder hands out: its kind and where its payload lies in the
/// buffer ([`Inbound::payload`]). A fragmented message comes out once, whole, as `Text` or
/// `Binary`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub opcode: OpCode,
    pub payload: Range<usize>,
}

/// The server-to-client half of a WebSocket: the read buffer and the decoder's state.
pub struct Inbound {
    buf: Vec<u8>,
    /// Where undecoded bytes begin (or the message being reassembled, when `fragment` is set).
    start: usize,
    /// The opcode of a fragmented message under way, and its payload so far at
    /// `buf[start..start + assembled]`.
    fragment: Option<OpCode>,
    assembled: usize,
    /// The bytes of the last thing handed out, dropped on the next call.
    handed_out: Option<Range<usize>>,
    /// Bytes from `start` that the frame being received needs in all (0: unknown yet).
    needed: usize,
    max_message: usize,
}

impl Inbound {
    /// An empty buffer of [`READ_BUFFER`] bytes; messages longer than `max_message` are refused.
    pub fn new(max_message: usize) -> Inbound {
        Inbound {
            buf: Vec::with_capacity(READ_BUFFER),
            start: 0,
            fragment: None,
            assembled: 0,
            handed_out: None,
            needed: 0,
            max_message,
        }
    }

    /// The payload of a frame or message [`Inbound::decode`] handed out.
    pub fn payload(&self, range: Range<usize>) -> &[u8] {
        &self.buf[range]
    }

    /// The buffer to read into: its spare capacity is where the next bytes go (the caller
    /// appends and never touches what is there). Makes room first: compacts, grows to hold the
    /// frame being received, or shrinks back to [`READ_BUFFER`] once a long one is gone.
    pub fn read_buffer(&mut self) -> &mut Vec<u8> {
        self.drop_handed_out();
        let pending = self.buf.len() - self.start;
        let want = self.needed.max(pending + 1).max(READ_BUFFER);
        if self.buf.capacity() > READ_BUFFER && want <= READ_BUFFER && pending < READ_BUFFER / 2 {
            // A long message has been consumed: give its memory back.
            self.buf.copy_within(self.start.., 0);
            self.buf.truncate(pending);
            self.start = 0;
            self.buf.shrink_to(READ_BUFFER);
        } else if self.buf.capacity() - self.start < want {
            if self.start > 0 {
                self.buf.copy_within(self.start.., 0);
                self.buf.truncate(pending);
                self.start = 0;
            }
            if self.needed > 0 {
                // A frame of known length: exactly its size.
                self.buf.reserve_exact(want - pending);
            } else {
                // Unknown (a long response head): grow by doubling, not byte by byte.
                self.buf.reserve(want - pending);
            }
        }
        &mut self.buf
    }

    /// Test and fuzz input: appends `bytes` as if read from the socket.
    pub fn extend(&mut self, bytes: &[u8]) {
        self.read_buffer().extend_from_slice(bytes);
    }

    /// Bytes received and not yet handed out (the handshake's leftovers count here too).
    pub fn buffered(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Drops the first `n` buffered bytes (the handshake's response head).
    pub fn discard(&mut self, n: usize) {
        self.drop_handed_out();
        self.start = (self.start + n).min(self.buf.len());
    }

    fn drop_handed_out(&mut self) {
        let Some(range) = self.handed_out.take() else {
            return;
        };
        let gone = range.end - range.start;
        if range.start == self.start {
            self.start = range.end;
        } else {
            // A control frame between fragments: cut it out after the fragments so far.
            self.buf.copy_within(range.end.., range.start);
            self.buf.truncate(self.buf.len() - gone);
        }
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
    }

    /// The next whole message or control frame in the buffer, `Ok(None)` when more bytes are
    /// needed. What it hands out stays in the buffer until the next call of any method here.
    pub fn decode(&mut self) -> Result<Option<Decoded>, WsError> {
        self.drop_handed_out();
        loop {
            let at = self.start + self.assembled;
            let Some(header) = parse_header(&self.buf[at..])? else {
                self.needed = self.assembled + MAX_SERVER_HEADER;
                return Ok(None);
            };
            let limit = (self.max_message - self.assembled) as u64;
            if !header.opcode.is_control() && header.payload > limit {
                return Err(WsError::TooLong {
                    size: self.assembled as u64 + header.payload,
                    max: self.max_message,
                });
            }
            // Below the message limit (or 125 for a control frame), so it fits a usize.
            let frame_end = at + header.len + header.payload as usize;
            if frame_end > self.buf.len() {
                self.needed = frame_end - self.start;
                return Ok(None);
            }
            self.needed = 0;
            let payload = at + header.len..frame_end;
            match (header.opcode, self.fragment) {
                (opcode, _) if opcode.is_control() => {
                    self.handed_out = Some(at..frame_end);
                    return Ok(Some(Decoded { opcode, payload }));
                }
                (OpCode::Continuation, None) => {
                    return Err(WsError::Protocol(
                        "continuation frame with no message under way",
                    ))
                }
                (OpCode::Text | OpCode::Binary, Some(_)) => {
                    return Err(WsError::Protocol(
                        "new message before the fragmented one ended",
                    ))
                }
                (opcode, None) if header.fin => {
                    self.handed_out = Some(at..frame_end);
                    return Ok(Some(Decoded { opcode, payload }));
                }
                (opcode, fragment) => {
                    // A fragment: its payload moves down over its header, after the ones before.
                    self.buf.copy_within(payload.start.., at);
                    self.buf.truncate(self.buf.len() - header.len);
                    self.assembled += payload.len();
                    let opcode = fragment.unwrap_or(opcode);
                    if header.fin {
                        let whole = self.start..self.start + self.assembled;
                        self.handed_out = Some(whole.clone());
                        self.fragment = None;
                        self.assembled = 0;
                        return Ok(Some(Decoded {
                            opcode,
                            payload: whole,
                        }));
                    }
                    self.fragment = Some(opcode);
                }
            }
        }
    }
}

/// A close frame's status code and reason (RFC 6455 §5.5.1): no code for an empty payload.
pub fn close_payload(payload: &[u8]) -> Result<(Option<u16>, String), WsError> {
    match payload {
        [] => Ok((None, String::new())),
        [_] => Err(WsError::Protocol("close frame with a one-byte payload")),
        [high, low, reason @ ..] => {
            let reason = std::str::from_utf8(reason)
                .map_err(|_| WsError::Protocol("close reason is not UTF-8"))?;
            Ok((Some(u16::from_be_bytes([*high, *low])), reason.to_string()))
        }
    }
}

#[cfg(test)]
#[path = "codec_tests.rs"]
pub(super) mod tests;
