//! The HTTP/2 wire: a connection on hyper over the project's TCP/TLS stream, the frame observer
//! counting what hyper does not report, the stream limit its server grants, and one stream's
//! exchange (hyper's response and its body).

use std::cell::Cell;
use std::future::Future;
use std::net::IpAddr;
use std::rc::Rc;

use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::{Body as _, Incoming};
use hyper::client::conn::TrySendError;

use super::{Conn, Kept, MessageBytes, Received, StreamEnd, Tally, Wire};
use crate::net::http2::frames::FrameLog;
use crate::net::http2::request::H2Request;
use crate::net::http2::{self, Body, Sender};
use crate::net::stream::Stream;
use crate::plan::Http2;
use crate::timing::clock::Nanos;
use crate::timing::deadline::Deadline;
use crate::web::gauges::{Down, Progress};
use crate::web::shared::Shared;

/// One connection of the run's HTTP/2 connections, opened again and again.
pub struct H2Wire {
    settings: Http2,
    /// The stream opened before the start gate, taken by the first open.
    stream: Option<Stream>,
    /// The stream limit the last connection was granted: assumed for the next one until its
    /// server's SETTINGS arrive.
    expected_streams: usize,
}

impl H2Wire {
    pub fn new(settings: Http2, stream: Option<Stream>) -> H2Wire {
        H2Wire {
            settings,
            stream,
            expected_streams: settings.streams,
        }
    }
}

/// An open HTTP/2 connection: hyper's sender, what the observer saw, its streams in flight.
pub struct H2Conn {
    sender: Sender,
    log: Rc<FrameLog>,
    open: Rc<Cell<usize>>,
    /// The stream limit hyper was told to assume until the server's SETTINGS.
    assumed: usize,
}

impl Wire for H2Wire {
    type Conn = H2Conn;

    /// 1, 3, 5…: a client's streams are odd.
    fn stream_id(k: u64) -> u64 {
        2 * k + 1
    }

    /// Opens a connection and starts HTTP/2 on it; `None` when either failed (counted).
    async fn open(
        &mut self,
        shared: &Rc<Shared>,
        deadline: &Deadline,
        source: Option<IpAddr>,
        progress: &Progress,
    ) -> Option<H2Conn> {
        let stream = match self.stream.take() {
            Some(stream) => stream,
            None => shared.connect_within(deadline, source, progress).await?,
        };
        let log = FrameLog::new(Rc::clone(&shared.http2), self.settings.streams);
        let opened = http2::handshake(
            stream,
            &self.settings,
            self.expected_streams,
            Rc::clone(&log),
        );
        match opened.await {
            Ok(sender) => {
                progress.down.set(None);
                Some(H2Conn {
                    sender,
                    log,
                    open: Rc::default(),
                    assumed: self.expected_streams,
                })
            }
            Err(_) => {
                shared.count_connect_error();
                progress.down.set(Some(Down::ConnectFailed));
                None
            }
        }
    }

    fn retire(&mut self, conn: H2Conn) {
        if let Some(granted) = conn.log.granted() {
            let limit = granted.map_or(usize::MAX, |n| n as usize);
            self.expected_streams = self.settings.streams.min(limit).max(1);
        }
    }
}

impl Conn for H2Conn {
    type Tally = H2Tally;

    fn usable(&self) -> bool {
        !self.sender.is_closed() && !self.log.going_away()
    }

    fn granted(&self) -> Option<usize> {
        match self.log.granted() {
            // Before the server's SETTINGS: what hyper was told to assume.
            None => Some(self.assumed),
            Some(None) => None,
            Some(Some(n)) => Some(n as usize),
        }
    }

    async fn changed(&self) {
        self.log.changed().await;
    }

    fn open_streams(&self) -> &Rc<Cell<usize>> {
        &self.open
    }

    fn send(
        &mut self,
        request: &H2Request,
        collect: bool,
    ) -> (impl Future<Output = StreamEnd> + 'static, H2Tally) {
        let write = self.log.next_write();
        let response = self.sender.try_send_request(request.to_request());
        let tally = H2Tally {
            log: Rc::clone(&self.log),
            bytes: MessageBytes::default(),
            write,
        };
        let exchange = exchange(response, collect, tally.bytes.clone(), request.size());
        (exchange, tally)
    }
}

/// One stream's tally: its connection's receive stamps, the stream's own bytes, counted as
/// HTTP/3's are ([`MessageBytes`]), and the first write at or after its hand-off to hyper.
pub struct H2Tally {
    log: Rc<FrameLog>,
    bytes: MessageBytes,
    /// The number of the connection's next write when the request was handed to hyper.
    write: u64,
}

impl Tally for H2Tally {
    fn received(&self) -> Received {
        match self.log.end_stream_rx() {
            Some(ns) => Received::Kernel(ns),
            None => Received::Missed,
        }
    }

    fn take_bytes(&self) -> (u64, u64) {
        self.bytes.take()
    }

    fn written(&self) -> Option<Nanos> {
        self.log.written_at(self.write)
    }
}

/// hyper's response and its body (kept only for a script's `response()`); `size` is the
/// request's, counted once it went out.
async fn exchange(
    response: impl Future<Output = Result<Response<Incoming>, TrySendError<Request<Body>>>>,
    collect: bool,
    bytes: MessageBytes,
    size: u64,
) -> StreamEnd {
    let response = match response.await {
        Ok(response) => response,
        Err(e) => {
            return match e.message().is_some() || unprocessed(e.error()) {
                true => StreamEnd::Unprocessed,
                false => {
                    bytes.sent(size);
                    StreamEnd::Failed
                }
            }
        }
    };
    bytes.sent(size);
    bytes.head(response.headers());
    let status = response.status().as_u16();
    let headers = collect.then(|| headers_of(&response));
    let mut body = response.into_body();
    let mut kept = collect.then(Vec::new);
    // Until the stream has ended: once it has (END_STREAM with the last DATA), no further poll
    // for a frame or trailers that cannot come.
    while !body.is_end_stream() {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    bytes.add_read(data.len());
                    if let Some(kept) = kept.as_mut() {
                        kept.extend_from_slice(data);
                    }
                }
            }
            Some(Err(_)) => return StreamEnd::Failed,
            None => break,
        }
    }
    let kept: Option<Kept> = headers.zip(kept);
    StreamEnd::Response(status, kept)
}

/// Whether a stream's error says the server never processed its request: refused, or above the
/// last stream id of the server's GOAWAY.
fn unprocessed(error: &hyper::Error) -> bool {
    // The connection's task ended before it took the request (hyper's "dispatch gone").
    if error.is_canceled() || error.is_closed() || error.is_user() {
        return true;
    }
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        if let Some(h2) = e.downcast_ref::<h2::Error>() {
            return (h2.is_go_away() && h2.is_remote())
                || h2.reason() == Some(h2::Reason::REFUSED_STREAM);
        }
        source = e.source();
    }
    false
}

/// A response's headers as the script's `response()` takes them.
fn headers_of(response: &Response<Incoming>) -> Vec<(String, Vec<u8>)> {
    response
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str().to_string(), value.as_bytes().to_vec()))
        .collect()
}
