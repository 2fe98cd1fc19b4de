//! The record of one stream of a multiplexed connection, whatever its wire: the response's
//! times split as every response's are, its status and bytes counted — and, when the server
//! did not process the request, the request handed back to go again.

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;
use std::sync::atomic::Ordering;

use super::{Ended, Pending, Received, Slot, StreamEnd, Tally};
use crate::net::http2::request::H2Request;
use crate::net::stamp::{kernel_stamps, Timestamps};
use crate::stats::http::split::{send_stamp, ResponseTimes};
use crate::stats::requests::writer::Place;
use crate::timing::clock::{self, Nanos};
use crate::web::shared::Shared;

/// A request on its way: what a retry needs, and its times.
pub(super) struct Sending {
    pub request: Rc<H2Request>,
    pub intended: Nanos,
    /// When its stream slot would have been free had tsumo never been late (R′, stats::http::split).
    pub free: Nanos,
    /// When it was handed to the wire (its `--timeout` runs from then).
    pub sent: Nanos,
    /// This one included.
    pub tries: u8,
    /// Where it went, for the `--requests` log.
    pub place: Place,
}

/// One request's stream: the wire's exchange within `--timeout`, then the record; then the
/// stream is free.
pub(super) async fn exchange<T: Tally>(
    shared: Rc<Shared>,
    mut slot: Slot,
    tally: T,
    open_on_connection: Rc<Cell<usize>>,
    response: impl Future<Output = StreamEnd>,
    sending: Sending,
) -> Ended {
    let Sending {
        request,
        intended,
        free,
        sent,
        tries,
        place,
    } = sending;
    let ended = slot.deadline.guard(sent, response).await;
    open_on_connection.set(open_on_connection.get().saturating_sub(1));
    let now = clock::now();
    let stamp = tally.received();
    let kernel = match stamp {
        Received::Kernel(ns) => Some(ns),
        Received::Missed | Received::NotKept => None,
    };
    // The send: the hand-off, or the write that followed it when that came over 200 µs later.
    let sent = send_stamp(sent, tally.written().unwrap_or(0));
    let received = clock::received(kernel, now, sent);
    let (read, written) = tally.take_bytes();
    let mut hook = None;
    let mut retry = None;
    let mut answered = false;
    {
        let mut rec = shared.recorder.borrow_mut();
        rec.roll_to(now);
        rec.at_intended(intended);
        rec.counters.bytes_read += read;
        rec.counters.bytes_written += written;
        match ended {
            Ok(StreamEnd::Response(status, kept)) => {
                rec.counters.requests += 1;
                if status > 399 {
                    rec.counters.errors.status += 1;
                    shared.gauges.status.fetch_add(1, Ordering::Relaxed);
                }
                if stamp == Received::Missed && kernel_stamps() == Timestamps::Kernel {
                    rec.counters.unstamped += 1;
                }
                let times = ResponseTimes {
                    intended,
                    free,
                    sent,
                    received,
                    read: now,
                };
                slot.free.answered(&times);
                answered = true;
                if let Some(log) = &shared.log {
                    log.borrow_mut()
                        .response(&place, &times, status, (read, written));
                }
                let split = times.split();
                rec.record_latency(&split);
                shared.over_limits.count(split.server, &shared.gauges.over);
                shared.gauges.requests.fetch_add(1, Ordering::Relaxed);
                if let Some((headers, body)) = kept {
                    hook = Some((status, headers, body));
                }
            }
            Ok(StreamEnd::Unprocessed) if tries < super::MAX_TRIES => {
                retry = Some(Pending {
                    request,
                    intended: Some(intended),
                    tries,
                });
            }
            Ok(StreamEnd::Unprocessed | StreamEnd::Failed) => {
                log_failed(&shared, &place, (intended, sent, received), "read");
                rec.counters.errors.read += 1;
                shared.gauges.errors.fetch_add(1, Ordering::Relaxed);
            }
            Err(_elapsed) => {
                log_failed(&shared, &place, (intended, sent, received), "timeout");
                rec.counters.errors.timeout += 1;
                shared.gauges.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    if !answered {
        // Without a response, the slot is free from when the stream ended (the server's, as
        // over HTTP/1.1).
        slot.free.not_before(received);
    }
    if let Some((status, headers, body)) = hook {
        run_response_hook(&shared, status, &headers, &body);
    }
    // The stream is free from when its response was received.
    (slot, retry, received)
}

/// `--requests`: a row for a request that failed.
fn log_failed(
    shared: &Shared,
    place: &Place,
    (intended, sent, ended): (Nanos, Nanos, Nanos),
    kind: &str,
) {
    if let Some(log) = &shared.log {
        log.borrow_mut().failed(place, intended, sent, ended, kind);
    }
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
