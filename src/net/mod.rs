//! Sockets for every mode: one TCP-or-TLS stream type chosen once per connection, the rustls
//! configuration, the HTTP/1.1 wire format (request bytes, the response parser, a one-shot
//! exchange) that the HTTP mode's hot path, the Lua API and the mahjong logins all speak, and
//! HTTP/2 on hyper (the client connection, wrk's requests mapped to it, the frame observer),
//! HTTP/3 on quinn and h3 (a QUIC connection, its handshake and packets, its ends by kind), and
//! the source addresses of `--bind`.

pub mod http1;
pub mod http2;
pub mod http3;
pub mod preflight;
pub mod source;
pub mod stamp;
pub mod stream;
pub mod tls;
