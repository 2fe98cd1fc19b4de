//! Recording what happened: histograms and counters, knowing nothing about the network.
//!
//! Every worker owns one `Recorder` (no locks on the hot path); the engine merges them once at
//! the end into a [`RunResult`]. `hdr` holds the arithmetic that
//! reproduces the C HdrHistogram used by wrk2 (percentiles, mean, stdev), so printed numbers match
//! wrk2's for the same samples.

pub mod format;
pub mod hdr;
pub mod mahjong;
pub mod protocol;
pub mod shortfall;

use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::sys::procstat::ServerUsage;
use crate::sys::usage::OwnUsage;
use protocol::ProtocolErrors;
use shortfall::Shortfall;

/// Highest value a histogram holds: one day in µs, wrk2's `MAX_LATENCY`.
pub const HIST_MAX_US: u64 = 86_400_000_000;

/// A histogram with wrk2's parameters: 1 µs to 1 day, 3 significant figures.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_US, 3).expect("constant histogram bounds are valid")
}

/// Error counts by kind, as wrk reports them, plus the ones tsumo explains.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Errors {
    /// connect() failed, or the TLS handshake failed.
    pub connect: u64,
    /// read failed, the connection closed mid-response, or the response did not parse.
    pub read: u64,
    /// write failed.
    pub write: u64,
    /// no complete response within `--timeout`.
    pub timeout: u64,
    /// responses with status > 399 (wrk's "Non-2xx or 3xx responses").
    pub status: u64,
    /// Responses that broke HTTP/1.1 (by kind in [`Counters::protocol`]). Each is *also* a
    /// `read` error, as wrk counts a response it cannot parse, so `Socket errors:` reads as
    /// wrk's would for the same server; this says how many of those reads were the server's
    /// fault. Absent from the JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub protocol: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Errors {
    pub fn add(&mut self, other: &Errors) {
        self.connect += other.connect;
        self.read += other.read;
        self.write += other.write;
        self.timeout += other.timeout;
        self.status += other.status;
        self.protocol += other.protocol;
    }

    /// Socket-level errors (everything but status), as in wrk's "Socket errors" line. Protocol
    /// errors are inside `read` already.
    pub fn socket_total(&self) -> u64 {
        self.connect + self.read + self.write + self.timeout
    }
}

/// Counters of one worker, or of a whole run once merged.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Complete responses.
    pub requests: u64,
    /// Bytes read from the server (after TLS decryption), headers included, as wrk counts them.
    pub bytes_read: u64,
    /// Bytes written (requests).
    pub bytes_written: u64,
    pub errors: Errors,
    /// TCP connections established (including reconnects).
    pub connections_opened: u64,
    /// TLS handshakes completed in full.
    pub tls_full_handshakes: u64,
    /// TLS handshakes completed by session resumption.
    pub tls_resumed_handshakes: u64,
    /// connect() failures with EMFILE/ENFILE (out of file descriptors).
    pub emfile: u64,
    /// connect() failures with EADDRNOTAVAIL (out of ephemeral ports).
    pub eaddrnotavail: u64,
    /// Paced sends whose connection was still waiting for an earlier response when the
    /// request fell due (the server, not tsumo, delayed them).
    #[serde(default)]
    pub due_while_busy: u64,
    /// HTTP/1.1 violations by kind, the first few quoted; absent from the JSON when none.
    #[serde(default, skip_serializing_if = "ProtocolErrors::is_empty")]
    pub protocol: ProtocolErrors,
}

impl Counters {
    pub fn add(&mut self, other: &Counters) {
        self.requests += other.requests;
        self.bytes_read += other.bytes_read;
        self.bytes_written += other.bytes_written;
        self.errors.add(&other.errors);
        self.connections_opened += other.connections_opened;
        self.tls_full_handshakes += other.tls_full_handshakes;
        self.tls_resumed_handshakes += other.tls_resumed_handshakes;
        self.emfile += other.emfile;
        self.eaddrnotavail += other.eaddrnotavail;
        self.due_while_busy += other.due_while_busy;
        self.protocol.add(&other.protocol);
    }

    /// Counts one HTTP/1.1 violation: under its kind, as a protocol error and as a read error.
    pub fn protocol_error(&mut self, kind: protocol::Violation, excerpt: String) {
        self.protocol.record(kind, excerpt);
        self.errors.protocol += 1;
        self.errors.read += 1;
    }
}

/// One worker's record of a run. Values are in µs.
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Response time − intended send time (coordinated-omission corrected).
    pub latency: Histogram<u64>,
    /// Response time − actual send time.
    pub uncorrected: Histogram<u64>,
    /// Actual send time − intended send time: how late tsumo itself was.
    pub send_lateness: Histogram<u64>,
    pub counters: Counters,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    pub fn new() -> Self {
        Recorder {
            latency: new_histogram(),
            uncorrected: new_histogram(),
            send_lateness: new_histogram(),
            counters: Counters::default(),
        }
    }

    /// Records one response's corrected and uncorrected latency, in µs.
    #[inline]
    pub fn record_latency(&mut self, corrected_us: u64, uncorrected_us: u64) {
        self.latency.saturating_record(corrected_us);
        self.uncorrected.saturating_record(uncorrected_us);
    }

    /// Records how late a send was against its schedule, in µs (0 allowed: on time).
    #[inline]
    pub fn record_send_lateness(&mut self, lateness_us: u64) {
        self.send_lateness.saturating_record(lateness_us);
    }

    /// Adds another recorder into this one (exact: histograms have the same layout).
    pub fn merge(&mut self, other: &Recorder) {
        // Same bounds on both sides, so add() cannot fail; saturate rather than panic if it does.
        let _ = self.latency.add(&other.latency);
        let _ = self.uncorrected.add(&other.uncorrected);
        let _ = self.send_lateness.add(&other.send_lateness);
        self.counters.add(&other.counters);
    }
}

/// The merged outcome of one run.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub plan: Plan,
    /// Wall time from the start of traffic to the stop (duration end, Ctrl-C or script stop).
    pub elapsed: Duration,
    /// Stopped by Ctrl-C before the planned duration.
    pub interrupted: bool,
    pub counters: Counters,
    /// Corrected latency, µs (with no `-R`, the same samples as `uncorrected`).
    pub latency: Histogram<u64>,
    /// Uncorrected latency, µs.
    pub uncorrected: Histogram<u64>,
    /// Send lateness (actual − intended send time), µs.
    pub send_lateness: Histogram<u64>,
    /// Requests completed per second per thread: one sample per thread per second of the run.
    pub req_per_sec: Histogram<u64>,
    /// Explanations of conditions met during the run (EMFILE, EADDRNOTAVAIL, the generator
    /// falling behind), each printed once after the totals.
    pub notes: Vec<String>,
    /// CPU and memory of the server processes sampled during the run (`--server-pid`).
    pub server: Option<ServerUsage>,
    /// What ended the run: `duration`, `SIGINT`, `SIGTERM`, `SIGHUP`, `done` (every script
    /// thread stopped) or `ended` (a script error).
    pub ended_by: String,
    /// tsumo's own CPU time and peak memory.
    pub usage: OwnUsage,
    /// Set when a fixed-rate run did not reach its rate.
    pub shortfall: Option<Shortfall>,
}
