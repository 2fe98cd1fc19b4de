//! Sockets for every mode: one TCP-or-TLS stream type chosen once per connection, the rustls
//! configuration, and the HTTP/1.1 wire format (request bytes, the response parser, a one-shot
//! exchange) that the HTTP mode's hot path, the Lua API and the mahjong logins all speak.

pub mod http1;
pub mod preflight;
pub mod stream;
pub mod tls;
