//! HTTP/1.1 on the wire: requests as bytes built once (`request`), the incremental response
//! parser with its body framing (`response`), and one request/response exchange on a fresh
//! connection for logins and checks (`oneshot`).

pub mod oneshot;
pub mod request;
pub mod response;
