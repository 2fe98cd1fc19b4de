//! One HTTP/2 stream of a connection: hyper's response, its body (kept only for a script's
//! `response()`), the record — and, when the server did not process the request, the request
//! handed back to go again.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::Ordering;

use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::{Body as _, Incoming};
use hyper::client::conn::TrySendError;

use super::{Ended, Pending, MAX_TRIES};
use crate::net::http2::frames::FrameLog;
use crate::net::http2::request::H2Request;
use crate::net::http2::Body;
use crate::net::stamp::{kernel_stamps, Timestamps};
use crate::stats::split::ResponseTimes;
use crate::timing::clock::{self, Nanos};
use crate::timing::deadline::Deadline;
use crate::web::shared::Shared;

/// A response's headers and body, kept for the script's `response()`.
type Kept = (Vec<(String, Vec<u8>)>, Vec<u8>);

/// How a stream ended.
enum StreamEnd {
    /// The status, and the headers and body when the script's `response()` wants them.
    Response(u16, Option<Kept>),
    /// The server did not process the request: it may go again.
    Unprocessed,
    Failed,
}

/// A request on its way: what a retry needs, and its times.
pub(super) struct Sending {
    pub request: Rc<H2Request>,
    pub intended: Nanos,
    /// When a stream became free for it (0: one was free when it fell due).
    pub free: Nanos,
    pub sent: Nanos,
    /// This one included.
    pub tries: u8,
}

/// One request's stream: the response, its body, the record; then the stream is free.
pub(super) async fn exchange(
    shared: Rc<Shared>,
    slot: Rc<Deadline>,
    log: Rc<FrameLog>,
    open_on_connection: Rc<Cell<usize>>,
    response: impl std::future::Future<Output = Result<Response<Incoming>, TrySendError<Request<Body>>>>,
    sending: Sending,
) -> Ended {
    let Sending {
        request,
        intended,
        free,
        sent,
        tries,
    } = sending;
    let collect = shared.hooks.response;
    let ended = slot
        .guard(sent, async {
            let response = match response.await {
                Ok(response) => response,
                Err(e) => {
                    return match e.message().is_some() || unprocessed(e.error()) {
                        true if tries < MAX_TRIES => StreamEnd::Unprocessed,
                        _ => StreamEnd::Failed,
                    }
                }
            };
            let status = response.status().as_u16();
            let headers = collect.then(|| headers_of(&response));
            let mut body = response.into_body();
            let mut kept = collect.then(Vec::new);
            // Until the stream has ended: once it has (END_STREAM with the last DATA), no
            // further poll for a frame or trailers that cannot come.
            while !body.is_end_stream() {
                match body.frame().await {
                    Some(Ok(frame)) => {
                        if let (Some(kept), Some(data)) = (kept.as_mut(), frame.data_ref()) {
                            kept.extend_from_slice(data);
                        }
                    }
                    Some(Err(_)) => return StreamEnd::Failed,
                    None => break,
                }
            }
            StreamEnd::Response(status, headers.zip(kept))
        })
        .await;
    open_on_connection.set(open_on_connection.get().saturating_sub(1));
    let now = clock::now();
    let received = clock::received(log.end_stream_rx(), now, sent);
    let (read, written) = log.take_bytes();
    let mut hook = None;
    let mut retry = None;
    {
        let mut rec = shared.recorder.borrow_mut();
        rec.roll_to(now);
        rec.counters.bytes_read += read;
        rec.counters.bytes_written += written;
        match ended {
            Ok(StreamEnd::Response(status, kept)) => {
                rec.counters.requests += 1;
                if status > 399 {
                    rec.counters.errors.status += 1;
                }
                if log.end_stream_rx().is_none() && kernel_stamps() == Timestamps::Kernel {
                    rec.counters.unstamped += 1;
                }
                rec.record_latency(
                    &ResponseTimes {
                        intended,
                        free,
                        sent,
                        received,
                        read: now,
                    }
                    .split(),
                );
                shared.live.requests.fetch_add(1, Ordering::Relaxed);
                if let Some((headers, body)) = kept {
                    hook = Some((status, headers, body));
                }
            }
            Ok(StreamEnd::Unprocessed) => {
                retry = Some(Pending {
                    request,
                    intended: Some(intended),
                    tries,
                });
            }
            Ok(StreamEnd::Failed) => {
                rec.counters.errors.read += 1;
                shared.live.errors.fetch_add(1, Ordering::Relaxed);
            }
            Err(_elapsed) => {
                rec.counters.errors.timeout += 1;
                shared.live.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    if let Some((status, headers, body)) = hook {
        run_response_hook(&shared, status, &headers, &body);
    }
    // The stream is free from when its response was received.
    (slot, retry, received)
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

/// Calls the script's `response()`; stops the worker when it fails or calls `thread:stop()`.
fn run_response_hook(shared: &Shared, status: u16, headers: &[(String, Vec<u8>)], body: &[u8]) {
    let Some(script) = shared.script.as_ref() else {
        return;
    };
    if let Err(e) = script.response(status, headers, body) {
        shared.stop_worker(Some(e));
    } else if script.stop_requested() {
        shared.stop_worker(None);
    }
}
