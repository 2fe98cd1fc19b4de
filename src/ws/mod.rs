//! The WebSocket transport, shared by the mahjong mode and the WebSocket mode (`wsload`), and
//! the socket.io framing the mahjong mode speaks over it. majiang-server speaks socket.io, which is a thin text
//! framing (Engine.IO v4 packets carrying socket.io v5 packets) over an ordinary WebSocket. The
//! socket.io framing is ours, a few dozen lines of pure functions ([`socketio`]); the WebSocket
//! is tokio-tungstenite's, on our own TCP/TLS stream with its buffers tuned for thousands of
//! idle players ([`transport`]), its failures named in [`error`].

pub mod error;
pub mod socketio;
pub mod transport;
