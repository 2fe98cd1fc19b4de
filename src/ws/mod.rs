//! The WebSocket side of the mahjong mode. majiang-server speaks socket.io, which is a thin text
//! framing (Engine.IO v4 packets carrying socket.io v5 packets) over an ordinary WebSocket. The
//! framing is a few dozen lines and lives here as pure functions ([`socketio`]), so it can be
//! tested without a socket and costs no dependency; the transport that carries the frames sits
//! next to it.

pub mod socketio;
pub mod transport;
