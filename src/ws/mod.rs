//! The WebSocket side of the mahjong mode. majiang-server speaks socket.io, which is a thin text
//! framing (Engine.IO v4 packets carrying socket.io v5 packets) over an ordinary WebSocket. Both
//! layers are ours: the socket.io framing is a few dozen lines of pure functions ([`socketio`]),
//! and the WebSocket client is a codec on our own TCP/TLS stream — the upgrade ([`handshake`],
//! with the [`sha1`] it needs), RFC 6455 framing in one read buffer ([`codec`]), the socket that
//! drives them ([`transport`]) and the [`error`] both report — because a player's CPU per
//! message is what a mahjong run spends, and a general-purpose library's wakers, buffers and
//! copies were the largest part of it that was not the kernel's.

pub mod codec;
pub mod error;
pub mod handshake;
pub mod sha1;
pub mod socketio;
pub mod transport;
