//! An HTTP/1.1 connection's failures, counted by kind, and what its `--requests` rows need: its
//! number, each response's bytes, the responses of the batch so far and the kind of the failure
//! that ended it.

use std::sync::atomic::Ordering;

use super::{BatchTimes, Connection, Outcome};
use crate::net::http1::request::Batch;
use crate::net::http1::response::ParseError;
use crate::stats::http::protocol::Violation;
use crate::stats::http::split::ResponseTimes;
use crate::stats::requests::writer::Place;
use crate::timing::clock;
use crate::web::shared::Shared;

/// What a connection keeps for its `--requests` rows: a few counts, kept whether or not the run
/// logs (cheaper than asking).
pub(super) struct RowState {
    conn: u32,
    /// The bytes parsed of the response being read.
    pub bytes_in: u64,
    bytes_out: u64,
    answered: usize,
    failure: &'static str,
}

impl RowState {
    pub fn new(shared: &Shared) -> RowState {
        RowState {
            conn: shared.connection_number(),
            bytes_in: 0,
            bytes_out: 0,
            answered: 0,
            failure: "read",
        }
    }

    /// A batch goes out: each request's bytes (a pipelined batch's split evenly).
    pub fn batch(&mut self, batch: &Batch) {
        self.answered = 0;
        self.bytes_in = 0;
        self.bytes_out = batch.bytes.len() as u64 / batch.len().max(1) as u64;
    }

    /// A response of the batch whose first request is `next` on the connection.
    pub fn response(&mut self, shared: &Shared, next: u64, times: &ResponseTimes, status: u16) {
        if let Some(log) = &shared.log {
            let place = Place {
                conn: self.conn,
                stream: None,
                seq: next + self.answered as u64,
            };
            let bytes = (self.bytes_in, self.bytes_out);
            log.borrow_mut().response(&place, times, status, bytes);
        }
        self.answered += 1;
        self.bytes_in = 0;
    }
}

impl Connection {
    /// `--requests`: a row for each request of the batch (of `requests`) a failure left
    /// unanswered; `kind`: `timeout`, else the failure's own.
    pub(super) fn log_failed(&self, times: BatchTimes, requests: usize, timeout: bool) {
        let Some(log) = &self.shared.log else {
            return;
        };
        let kind = if timeout { "timeout" } else { self.row.failure };
        let mut log = log.borrow_mut();
        let now = clock::now();
        for seq in self.next + self.row.answered as u64..self.next + requests as u64 {
            let place = Place {
                conn: self.row.conn,
                stream: None,
                seq,
            };
            log.failed(&place, times.intended, times.sent, now, kind);
        }
    }

    pub(super) fn fail_read(&mut self) -> Outcome {
        self.row.failure = "read";
        self.shared.recorder.borrow_mut().counters.errors.read += 1;
        self.shared.gauges.errors.fetch_add(1, Ordering::Relaxed);
        Outcome::Failed
    }

    /// A write that failed once some of the batch may have left.
    pub(super) fn fail_write(&mut self) -> Outcome {
        self.row.failure = "write";
        self.shared.recorder.borrow_mut().counters.errors.write += 1;
        self.shared.gauges.errors.fetch_add(1, Ordering::Relaxed);
        Outcome::Failed
    }

    /// A response that did not parse: a protocol error by kind, or a read error (closed early).
    pub(super) fn fail_parse(&mut self, error: ParseError) -> Outcome {
        match error {
            ParseError::Protocol(kind, quote) => {
                self.protocol_error(kind, quote);
                Outcome::Failed
            }
            ParseError::UnexpectedEof => self.fail_read(),
        }
    }

    /// Counts a protocol error (also a read error, as wrk counts it).
    pub(super) fn protocol_error(&mut self, kind: Violation, quote: String) {
        self.row.failure = "protocol";
        let mut rec = self.shared.recorder.borrow_mut();
        rec.counters.protocol_error(kind, quote);
        self.shared.gauges.errors.fetch_add(1, Ordering::Relaxed);
    }
}
