//! What every connection of one HTTP worker shares: the endpoint, where requests come from (the
//! same bytes every time, or the script's `request()`), the worker's Lua state, recorder, pacer
//! and request watchdog, the early stop a script can ask for — and the connect that counts
//! itself, its TLS handshake or its failure, within `--timeout` for HTTP/1.1 and HTTP/2 alike.

use std::cell::{Cell, RefCell};
use std::net::IpAddr;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::sync::Notify;

use super::gauges::{Down, HttpGauges, Progress};
use crate::engine::Kept;
use crate::net::http1::request::Batch;
use crate::net::stream::{ConnectError, Endpoint, Handshake, Stream};
use crate::net::tls;
use crate::script::{Hooks, ScriptError, ThreadScript};
use crate::stats::http::http2::Http2Counters;
use crate::stats::http::http3::Http3Counters;
use crate::stats::http::Recorder;
use crate::stats::requests::writer::Rows;
use crate::timing::clock::{self, Nanos};
use crate::timing::deadline::{Deadline, Watchdog};
use crate::timing::pacer::Pacer;

/// Where a connection's requests come from.
pub enum Requests {
    /// The same bytes every time (no script, or a script without `request()`).
    Static(Rc<Batch>),
    /// The script's `request()`, called for every batch; it returns `pipeline` requests.
    Script { pipeline: usize },
}

/// What every connection of one worker shares.
pub struct Shared {
    pub endpoint: Endpoint,
    pub requests: Requests,
    /// This worker's Lua state, when the run has a script.
    pub script: Option<ThreadScript>,
    pub hooks: Hooks,
    /// Set when this worker must stop early: the script called `thread:stop()` or failed.
    pub stop: Cell<bool>,
    pub stop_wake: Notify,
    /// The first error a script hook raised in this worker.
    pub script_error: RefCell<Option<ScriptError>>,
    /// Where the main thread can still read it if this worker's thread never ends.
    pub recorder: Kept<Recorder>,
    pub pacer: Rc<Pacer>,
    /// Sweeps the connections' request deadlines (`--timeout`).
    pub watchdog: Rc<Watchdog>,
    /// `false` with `-B`: record only the last response of a pipelined batch.
    pub record_all: bool,
    pub gauges: Arc<HttpGauges>,
    /// The latencies counted as it runs in `gauges.over` (a capacity step's judged run).
    pub over_limits: crate::stats::http::over::OverLimits,
    /// HTTP/2 frames and grants seen by every connection of this worker (`--http2`).
    pub http2: Rc<RefCell<Http2Counters>>,
    /// QUIC and HTTP/3 counts of every connection of this worker (`--http3`).
    pub http3: Rc<RefCell<Http3Counters>>,
    /// `--requests`: this worker's rows on their way to the log; `None` without it.
    pub log: Option<RefCell<Rows>>,
    /// The number the next connection of this worker takes (this process's connections are
    /// numbered from 0, worker after worker).
    pub conns: Cell<u32>,
}

impl Shared {
    /// A new connection's number, for the `--requests` log.
    pub fn connection_number(&self) -> u32 {
        let n = self.conns.get();
        self.conns.set(n.wrapping_add(1));
        n
    }

    /// Stops this worker early, keeping the first script error.
    pub fn stop_worker(&self, error: Option<ScriptError>) {
        if let Some(e) = error {
            self.script_error.borrow_mut().get_or_insert(e);
        }
        self.stop.set(true);
        self.stop_wake.notify_one();
    }

    /// The next batch of requests, from the script's `request()` when it has one. `reuse` is
    /// the connection's own batch, refilled in place when no one else holds it (no allocation
    /// per request).
    pub(super) fn next_batch(&self, reuse: &mut Rc<Batch>) -> Result<Rc<Batch>, ScriptError> {
        let (Requests::Script { pipeline }, Some(script)) = (&self.requests, &self.script) else {
            return match &self.requests {
                Requests::Static(batch) => Ok(Rc::clone(batch)),
                Requests::Script { .. } => Err(ScriptError(
                    "request(): no script state in this worker".into(),
                )),
            };
        };
        if Rc::get_mut(reuse).is_none() {
            *reuse = Rc::new(Batch {
                bytes: Vec::new(),
                head: Vec::new(),
            });
        }
        let Some(batch) = Rc::get_mut(reuse) else {
            return Err(ScriptError("request(): batch buffer in use".into()));
        };
        script.request_into(&mut batch.bytes)?;
        if *pipeline == 1 {
            batch.head.clear();
            batch.head.push(batch.bytes.starts_with(b"HEAD "));
        } else {
            let parsed = Batch::parse(std::mem::take(&mut batch.bytes))
                .map_err(|e| ScriptError(format!("request() returned an invalid request: {e}")))?;
            *batch = parsed;
        }
        Ok(Rc::clone(reuse))
    }

    /// The script's think time before the next request (`delay()`), if it defines one.
    pub(super) fn think_time(&self) -> Result<Nanos, ScriptError> {
        match &self.script {
            Some(script) if self.hooks.delay => {
                Ok(script.delay()?.as_nanos().min(u64::MAX as u128) as Nanos)
            }
            _ => Ok(0),
        }
    }

    /// Opens a connection from `source` within `--timeout` (`deadline`), as [`Shared::connect`]
    /// does; a connect that timed out is counted here (it was dropped before it counted itself).
    /// `None`: it failed, and `progress` says why the connection is down.
    pub async fn connect_within(
        &self,
        deadline: &Deadline,
        source: Option<IpAddr>,
        progress: &Progress,
    ) -> Option<Stream> {
        match deadline.guard(clock::now(), self.connect(source)).await {
            Ok(Ok(stream)) => return Some(stream),
            Ok(Err(_)) => progress.down.set(Some(Down::ConnectFailed)),
            Err(_elapsed) => {
                self.count_connect_error();
                progress.down.set(Some(Down::ConnectTimedOut));
            }
        }
        None
    }

    /// Counts a connection that could not be opened and did not count itself.
    pub fn count_connect_error(&self) {
        self.recorder.borrow_mut().counters.errors.connect += 1;
        self.gauges.errors.fetch_add(1, Ordering::Relaxed);
        self.gauges.connect.fetch_add(1, Ordering::Relaxed);
    }

    /// Opens a connection from `source` (`--bind`), counting it (and its TLS handshake, or its
    /// failure).
    pub async fn connect(&self, source: Option<IpAddr>) -> Result<Stream, ConnectError> {
        let result = self.endpoint.connect_from(source).await;
        let mut rec = self.recorder.borrow_mut();
        let counters = &mut rec.counters;
        match result {
            Ok((stream, handshake)) => {
                counters.connections_opened += 1;
                match handshake {
                    Handshake::Full => counters.tls_full_handshakes += 1,
                    Handshake::Resumed => counters.tls_resumed_handshakes += 1,
                    Handshake::None => {}
                }
                Ok(stream)
            }
            Err(e) => {
                counters.errors.connect += 1;
                match &e {
                    ConnectError::Tcp(io) => match io.raw_os_error() {
                        Some(libc::EMFILE) | Some(libc::ENFILE) => counters.emfile += 1,
                        Some(libc::EADDRNOTAVAIL) => counters.eaddrnotavail += 1,
                        _ => {}
                    },
                    ConnectError::Tls(io) => {
                        let explained = tls::explain(io);
                        rec.record_tls_failure(explained.kind, || explained.to_string());
                    }
                }
                drop(rec);
                self.gauges.errors.fetch_add(1, Ordering::Relaxed);
                self.gauges.connect.fetch_add(1, Ordering::Relaxed);
                Err(e)
            }
        }
    }
}
