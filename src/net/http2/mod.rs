//! HTTP/2 on the wire, on hyper: the client connection (`hyper::client::conn::http2`) over our
//! own TCP/TLS stream through hyper-util's tokio I/O adapter, with the settings of the run; the
//! frame observer that counts what hyper does not report ([`frames`]); and wrk's raw requests
//! mapped to HTTP/2 ([`request`]).
//!
//! Everything of one connection stays on its worker's thread: hyper's tasks (the connection,
//! one per stream) are spawned on the worker's `LocalSet`, so nothing needs to be `Send` and
//! nothing crosses threads.

pub mod frames;
pub mod request;

use std::future::Future;
use std::rc::Rc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http2;
use hyper_util::rt::TokioIo;

use crate::net::stream::Stream;
use crate::plan::Http2;
use frames::{FrameLog, Observed};

/// A request body: the whole of it, known in advance (empty for most requests).
pub type Body = Full<Bytes>;

/// The sending half of one HTTP/2 connection.
pub type Sender = http2::SendRequest<Body>;

/// Spawns hyper's tasks on the current worker's `LocalSet`.
#[derive(Clone, Copy, Debug)]
pub struct LocalExec;

impl<F> hyper::rt::Executor<F> for LocalExec
where
    F: Future + 'static,
{
    fn execute(&self, fut: F) {
        tokio::task::spawn_local(fut);
    }
}

/// Starts HTTP/2 on an open stream (the client preface and our SETTINGS; hyper does not wait
/// for the server's) and spawns the connection's task. `log` observes the server's frames.
/// `expected_streams`: the stream limit assumed until the server's SETTINGS arrive (the limit an
/// earlier connection to the same server was granted), so that a new connection does not open
/// streams the server would refuse.
pub async fn handshake(
    stream: Stream,
    settings: &Http2,
    expected_streams: usize,
    log: Rc<FrameLog>,
) -> Result<Sender, hyper::Error> {
    let io = TokioIo::new(Observed::new(stream, log));
    let mut builder = http2::Builder::new(LocalExec);
    builder
        .initial_stream_window_size(settings.window)
        .initial_connection_window_size(settings.connection_window())
        .max_frame_size(settings.max_frame)
        .header_table_size(settings.header_table)
        // Fixed windows: sized up front, so no BDP pings ride along with the load.
        .adaptive_window(false)
        .initial_max_send_streams(expected_streams);
    let (sender, connection) = builder.handshake(io).await?;
    // Its errors reach every stream still open on it, which count them.
    tokio::task::spawn_local(async move {
        let _ = connection.await;
    });
    Ok(sender)
}
