//! The WebSocket frame decoder (`ws::codec::Inbound`): any bytes from a server must decode to
//! messages and control frames or stop at one typed error, never a panic; fed in pieces (as
//! reads split them) they must decode exactly as when they arrive whole; nothing longer than
//! the message limit comes out.

use tsumo::ws::codec::{Decoded, Inbound};

/// What `bytes` decode to when fed `chunk` bytes at a time: every frame, then the error, if any.
fn decode(bytes: &[u8], chunk: usize, max: usize) -> (Vec<(u8, Vec<u8>)>, Option<String>) {
    let mut inbound = Inbound::new(max);
    let mut out = Vec::new();
    for piece in bytes.chunks(chunk) {
        inbound.extend(piece);
        loop {
            match inbound.decode() {
                Ok(Some(Decoded { opcode, payload })) => {
                    let payload = inbound.payload(payload).to_vec();
                    assert!(payload.len() <= max.max(125), "{} > {max}", payload.len());
                    out.push((opcode as u8, payload));
                }
                Ok(None) => break,
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }
    (out, None)
}

/// The fuzz target's whole check: returns on input it does not apply to, panics on a bug.
pub fn check(data: &[u8]) {
    // The first byte picks the piece size, the second the message limit.
    let [split, limit, bytes @ ..] = data else {
        return;
    };
    let chunk = 1 + *split as usize % 16;
    let max = 1 + *limit as usize * 64;
    let whole = decode(bytes, bytes.len().max(1), max);
    let pieces = decode(bytes, chunk, max);
    assert_eq!(whole, pieces, "fed {chunk} bytes at a time");
    if let Some(error) = whole.1 {
        assert!(!error.contains('\n'), "{error}");
    }
}
