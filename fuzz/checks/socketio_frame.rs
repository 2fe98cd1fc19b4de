//! Engine.IO / socket.io text frames: any text must decode to a packet or a `FrameError`, never a
//! panic, and an event (or an acknowledgement) must survive encoding and decoding again unchanged.

use tsumo::ws::socketio::{self, Packet};

/// The fuzz target's whole check: returns on input it does not apply to, panics on a bug.
pub fn check(data: &[u8]) {
    // Frames arrive as WebSocket text messages, which are UTF-8.
    let Ok(frame) = std::str::from_utf8(data) else {
        return;
    };
    match socketio::parse(frame) {
        Ok(Packet::Event { name, args }) => {
            let again = socketio::event(&name, &args);
            assert_eq!(
                socketio::parse(&again),
                Ok(Packet::Event { name, args }),
                "re-encoded as {again}"
            );
        }
        Ok(Packet::Ack { id, args }) => {
            let again = format!("43{id}{}", serde_json::Value::Array(args.clone()));
            assert_eq!(
                socketio::parse(&again),
                Ok(Packet::Ack { id, args }),
                "re-encoded as {again}"
            );
        }
        Ok(_) => {}
        Err(e) => {
            // The message quotes the frame on one line, however long or odd it is.
            let message = e.to_string();
            assert!(!message.contains('\n'), "{message}");
        }
    }
}
