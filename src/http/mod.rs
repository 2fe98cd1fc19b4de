//! HTTP/1.1 over TCP or TLS, written on `httparse` for the hot path: request bytes are built once
//! and written raw (so wrk's Lua API and pipelining can be honoured), responses are parsed
//! incrementally without copying bodies.

pub mod conn;
