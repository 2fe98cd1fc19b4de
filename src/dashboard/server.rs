//! The dashboard's listener: hyper's HTTP/1.1 server on a thread of its own (a current-thread
//! tokio runtime), answering `/`, `/live` and `/metrics` from the live state. The thread yields
//! to the workers ([`crate::sys::yield_to_workers`]): browsers polling hard cost the workers'
//! sends nothing they need.

use std::convert::Infallible;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{header, Method, Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

use super::view;
use crate::stats::live::Live;

/// Serves `listener` on a new thread until the process exits.
pub(super) fn spawn(listener: TcpListener, live: Arc<Live>) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let listener = {
        let _entered = runtime.enter();
        tokio::net::TcpListener::from_std(listener)?
    };
    std::thread::Builder::new()
        .name("tsumo-dashboard".to_string())
        .spawn(move || {
            crate::sys::yield_to_workers();
            runtime.block_on(accept(listener, live))
        })?;
    Ok(())
}

async fn accept(listener: tokio::net::TcpListener, live: Arc<Live>) {
    let views = Arc::new(view::Views::default());
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors (a run at the open-file limit), say: wait, do not spin.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let live = Arc::clone(&live);
        let views = Arc::clone(&views);
        tokio::spawn(async move {
            let service = service_fn(move |request| {
                let (live, views) = (Arc::clone(&live), Arc::clone(&views));
                async move { Ok::<_, Infallible>(answer(&request, &live, &views).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

async fn answer(
    request: &Request<Incoming>,
    live: &Live,
    views: &view::Views,
) -> Response<Full<Bytes>> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return respond(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            Bytes::from_static(b"GET only\n"),
        );
    }
    const HTML: &str = "text/html; charset=utf-8";
    match request.uri().path() {
        "/" => respond(StatusCode::OK, HTML, views.page(live)),
        "/live" => {
            let since = request
                .uri()
                .query()
                .and_then(|q| q.split('&').find_map(|kv| kv.strip_prefix("since=")))
                .and_then(|id| id.parse().ok());
            let (mut response, id) = match fragment(live, views, since).await {
                view::Fragment::Final => {
                    let mut response = respond(StatusCode::OK, HTML, Bytes::new());
                    response
                        .headers_mut()
                        .insert("x-tsumo-final", header::HeaderValue::from_static("1"));
                    return response;
                }
                view::Fragment::Unchanged(id) => {
                    (respond(StatusCode::NO_CONTENT, HTML, Bytes::new()), id)
                }
                view::Fragment::New(id, text) => (respond(StatusCode::OK, HTML, text), id),
            };
            if let Ok(id) = header::HeaderValue::from_str(&id.to_string()) {
                response.headers_mut().insert("x-tsumo-render", id);
            }
            response
        }
        "/metrics" => respond(
            StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            views.metrics(live),
        ),
        _ => respond(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            Bytes::from_static(b"not found: the dashboard is at /, the metrics at /metrics\n"),
        ),
    }
}

/// The longest `/live?since=ID` is held while the render is still the client's own.
const HOLD: Duration = Duration::from_secs(1);

/// `/live` to a client that has render `since`: held until there is a newer one, for up to
/// [`HOLD`], so a client polling in a tight loop costs at most a few answers a second.
async fn fragment(live: &Live, views: &view::Views, since: Option<u64>) -> view::Fragment {
    let until = Instant::now() + HOLD;
    loop {
        match views.fragment(live, since) {
            view::Fragment::Unchanged(_) if Instant::now() < until => {
                let left = until.saturating_duration_since(Instant::now());
                tokio::time::sleep(left.min(Duration::from_millis(100))).await;
            }
            answer => return answer,
        }
    }
}

fn respond(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static(content_type),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    response
}
