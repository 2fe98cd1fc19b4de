//! The [`Behavior`]s that are correct HTTP, served by hyper's HTTP/1.1 server. What it writes is
//! what the hand-written server wrote before, byte for byte but for the `ETag` of a 304, which
//! hyper spells `Etag`. Only to a client speaking HTTP/1.0 or sending `Connection: close` (no
//! test does) does hyper answer otherwise: in kind, and then it closes.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{HeaderValue, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, ETAG};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::{Behavior, Counts, BODY, OVERSIZED_HEAD};

/// The `Content-Length` of [`Behavior::NoBody`]'s 304.
const NOT_MODIFIED_LENGTH: usize = 2048;

/// Serves one connection until the client closes it, the response says `Connection: close`, or
/// the server stops.
pub(super) async fn serve(
    stream: TcpStream,
    behavior: Behavior,
    counts: Arc<Counts>,
    started: Instant,
) {
    // Requests received on this connection, for the ones that depend on which request this is.
    let received = Arc::new(AtomicU64::new(0));
    let service = service_fn(move |request: Request<Incoming>| {
        let counts = Arc::clone(&counts);
        let received = Arc::clone(&received);
        async move {
            // Counted once it has fully arrived, body included, as the hand-written server does.
            request
                .into_body()
                .collect()
                .await
                .map_err(std::io::Error::other)?;
            counts.requests.fetch_add(1, Ordering::Relaxed);
            let nth = received.fetch_add(1, Ordering::Relaxed) + 1;
            answer(behavior, nth, started).await
        }
    });
    let mut builder = http1::Builder::new();
    // `Connection: close` and `Content-Length: 0` as the tests and tsumo's quotes of a head
    // expect them, not in lower case.
    builder.title_case_headers(true);
    // No `Date`: the head of OversizedHeader is exactly OVERSIZED_HEAD bytes.
    builder.auto_date_header(false);
    // An error ends this connection only; the client sees it as a close.
    let _ = builder
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// The response to the `nth` request of a connection.
async fn answer(
    behavior: Behavior,
    nth: u64,
    started: Instant,
) -> std::io::Result<Response<Known>> {
    let response = match behavior {
        Behavior::CloseEvery(n) => {
            let mut response = ok();
            if nth.is_multiple_of(n) {
                // hyper closes the connection once this response is written.
                response
                    .headers_mut()
                    .insert(CONNECTION, HeaderValue::from_static("close"));
            }
            response
        }
        Behavior::NeverAnswers => std::future::pending().await,
        Behavior::Slow(delay) => {
            tokio::time::sleep(delay).await;
            ok()
        }
        Behavior::Stall { period, hold } => {
            let since_start = started.elapsed();
            let phase = Duration::from_nanos((since_start.as_nanos() % period.as_nanos()) as u64);
            if phase < hold {
                tokio::time::sleep_until(started + since_start - phase + hold).await;
            }
            ok()
        }
        Behavior::FailsEvery { period, fail } => {
            let since_start = started.elapsed();
            let phase = Duration::from_nanos((since_start.as_nanos() % period.as_nanos()) as u64);
            let mut response = ok();
            if phase < fail {
                *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            }
            response
        }
        Behavior::NoBody if nth % 2 == 1 => {
            // No length: hyper writes none for a 204.
            let mut response = Response::new(Known(None));
            *response.status_mut() = StatusCode::NO_CONTENT;
            response
        }
        Behavior::NoBody => {
            // hyper writes a 304's Content-Length only when the body has that many bytes, and
            // then sends none of them, as HTTP says.
            let body = Bytes::from(vec![b'x'; NOT_MODIFIED_LENGTH]);
            let mut response = Response::new(Known(Some(body)));
            *response.status_mut() = StatusCode::NOT_MODIFIED;
            let headers = response.headers_mut();
            headers.insert(CONTENT_LENGTH, HeaderValue::from(NOT_MODIFIED_LENGTH));
            headers.insert(ETAG, HeaderValue::from_static("\"x\""));
            response
        }
        Behavior::OversizedHeader => {
            let mut response = Response::new(Known(None));
            let headers = response.headers_mut();
            headers.insert(CONTENT_LENGTH, HeaderValue::from(0));
            let framing = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Huge: \r\n\r\n".len();
            let huge = HeaderValue::from_bytes(&vec![b'a'; OVERSIZED_HEAD - framing])
                .map_err(std::io::Error::other)?;
            headers.insert("x-huge", huge);
            response
        }
        other => unreachable!("{other:?} is served by hand"),
    };
    Ok(response)
}

/// `200 OK` with [`BODY`], its headers in the hand-written server's order.
fn ok() -> Response<Known> {
    let mut response = Response::new(Known(Some(Bytes::from_static(BODY))));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    // Set here rather than left to hyper, which would append it after a `Connection: close`.
    headers.insert(CONTENT_LENGTH, HeaderValue::from(BODY.len()));
    response
}

/// A response body that tells hyper its exact length before the head is written, even when that
/// length is 0. (An empty `Full` says it has already ended; hyper then drops the service's own
/// `Content-Length` and appends one after all the other headers.)
struct Known(Option<Bytes>);

impl Body for Known {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().0.take().map(|data| Ok(Frame::data(data))))
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.as_ref().map_or(0, |data| data.len() as u64))
    }
}
