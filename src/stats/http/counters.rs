//! What an HTTP run counts: responses, bytes, errors by kind, connections and handshakes,
//! requests due but never sent by why, failed TLS handshakes by reason, and the protocols'
//! own counters (HTTP/1.1 violations, HTTP/2's frames, QUIC's packets).

use serde::{Deserialize, Serialize};

use super::http2::Http2Counters;
use super::http3::Http3Counters;
use super::protocol::{self, ProtocolErrors};
use super::split;

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
    /// Responses with a status of 400 or above (wrk's "Non-2xx or 3xx responses"), saved as
    /// `status_4xx_5xx`: `"status": 200` read like HTTP 200 (files of older tsumos still load).
    #[serde(rename = "status_4xx_5xx", alias = "status")]
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
    /// Responses of a run stamped in the kernel whose read came with no kernel stamp (timed in
    /// user space instead); absent from the JSON when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unstamped: u64,
    /// The recorded latencies' exact sums, µs: the corrected one is the server's plus tsumo's
    /// send delay, response by response (absent in files of older tsumos).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_sums: Option<split::LatencySums>,
    /// HTTP/1.1 violations by kind, the first few quoted; absent from the JSON when none.
    #[serde(default, skip_serializing_if = "ProtocolErrors::is_empty")]
    pub protocol: ProtocolErrors,
    /// Requests that fell due before the end of the run but were never sent, by why.
    #[serde(default)]
    pub unsent: Unsent,
    /// TLS handshakes that failed during the run (also counted as connect errors), by reason.
    #[serde(default)]
    pub tls_failures: TlsFailures,
    /// HTTP/2 frames and grants (`--http2` runs only; absent from the JSON otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<Http2Counters>,
    /// QUIC's packets and 0-RTT, HTTP/3's GOAWAY, resets and connection ends (`--http3` runs
    /// only; absent from the JSON otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http3: Option<Http3Counters>,
}

/// Requests that were due but never sent, by what kept them back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unsent {
    /// Their connection was still waiting for earlier responses.
    pub busy: u64,
    /// Their connection was down and could not be opened again (connect failed).
    pub connect_failed: u64,
    /// Their connection was down and its connect did not finish within `--timeout`.
    pub connect_timeout: u64,
    /// Their connection was free (or would have been, had tsumo sent on time): tsumo itself
    /// fell behind its schedule (stalled, kept off a CPU, a slow script hook) and never sent
    /// them. tsumo's failure, not the server's (issue 43).
    #[serde(default)]
    pub late: u64,
}

impl Unsent {
    pub fn add(&mut self, other: &Unsent) {
        self.busy += other.busy;
        self.connect_failed += other.connect_failed;
        self.connect_timeout += other.connect_timeout;
        self.late += other.late;
    }

    pub fn total(&self) -> u64 {
        self.busy + self.connect_failed + self.connect_timeout + self.late
    }

    /// Those the server or the network held back (all but tsumo's own, [`Unsent::late`]).
    pub fn by_server(&self) -> u64 {
        self.total() - self.late
    }

    /// The report's line, `None` when there are none: the number once, with its reason, or
    /// split by reason when there are several.
    pub fn line(&self) -> Option<String> {
        let total = self.total();
        if total == 0 {
            return None;
        }
        let reasons: Vec<(u64, &str)> = [
            (
                self.busy,
                "while their connection waited for earlier responses",
            ),
            (
                self.connect_failed,
                "while their connection could not be opened (connect failed)",
            ),
            (
                self.connect_timeout,
                "while their connection could not be opened (connect timed out, -T)",
            ),
            (
                self.late,
                "while their connection was free: tsumo fell behind its own schedule",
            ),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .collect();
        let head = if total == 1 {
            "Unsent: 1 request fell due but was never sent".to_string()
        } else {
            format!("Unsent: {total} requests fell due but were never sent")
        };
        Some(match &reasons[..] {
            [(_, why)] => format!("{head} {why}"),
            _ => {
                let parts: Vec<String> = reasons
                    .iter()
                    .map(|(n, why)| format!("{n} {why}"))
                    .collect();
                format!("{head}: {}", parts.join(", "))
            }
        })
    }
}

/// Why a TLS handshake failed, as counted (the network layer tells which).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsFailure {
    /// The server answered in plain HTTP.
    PlainHttp,
    /// The certificate expired (or is not valid yet).
    Expired,
    /// The certificate is for other host names.
    WrongName,
    /// The certificate's issuer is not trusted.
    UnknownIssuer,
    /// The certificate is self-signed and not trusted.
    SelfSigned,
    /// The certificate was refused for another reason.
    OtherCertificate,
    /// The handshake failed otherwise (an alert, a closed connection).
    Other,
}

/// Failed TLS handshakes by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TlsFailures {
    pub plain_http: u64,
    pub expired: u64,
    pub wrong_name: u64,
    pub unknown_issuer: u64,
    pub self_signed: u64,
    pub other_certificate: u64,
    pub other: u64,
}

impl TlsFailures {
    pub fn count(&mut self, failure: TlsFailure) {
        *match failure {
            TlsFailure::PlainHttp => &mut self.plain_http,
            TlsFailure::Expired => &mut self.expired,
            TlsFailure::WrongName => &mut self.wrong_name,
            TlsFailure::UnknownIssuer => &mut self.unknown_issuer,
            TlsFailure::SelfSigned => &mut self.self_signed,
            TlsFailure::OtherCertificate => &mut self.other_certificate,
            TlsFailure::Other => &mut self.other,
        } += 1;
    }

    pub fn add(&mut self, other: &TlsFailures) {
        self.plain_http += other.plain_http;
        self.expired += other.expired;
        self.wrong_name += other.wrong_name;
        self.unknown_issuer += other.unknown_issuer;
        self.self_signed += other.self_signed;
        self.other_certificate += other.other_certificate;
        self.other += other.other;
    }

    pub fn total(&self) -> u64 {
        self.by_reason().iter().map(|(n, _)| n).sum()
    }

    /// Each count with its reason in words, in a fixed order.
    pub fn by_reason(&self) -> [(u64, &'static str); 7] {
        [
            (self.plain_http, "plain HTTP answer"),
            (self.expired, "certificate expired"),
            (self.wrong_name, "certificate for another name"),
            (self.unknown_issuer, "unknown issuer"),
            (self.self_signed, "self-signed certificate"),
            (self.other_certificate, "certificate refused otherwise"),
            (self.other, "other handshake failure"),
        ]
    }
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
        self.unstamped += other.unstamped;
        if let Some(other) = &other.latency_sums {
            self.latency_sums
                .get_or_insert_with(Default::default)
                .add(other);
        }
        self.unsent.add(&other.unsent);
        self.tls_failures.add(&other.tls_failures);
        self.protocol.add(&other.protocol);
        if let Some(other) = &other.http2 {
            self.http2.get_or_insert_with(Default::default).add(other);
        }
        if let Some(other) = &other.http3 {
            self.http3.get_or_insert_with(Default::default).add(other);
        }
    }

    /// Counts one HTTP/1.1 violation: under its kind, as a protocol error and as a read error.
    pub fn protocol_error(&mut self, kind: protocol::Violation, excerpt: String) {
        self.protocol.record(kind, excerpt);
        self.errors.protocol += 1;
        self.errors.read += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 19: `Unsent: 2 requests fell due but were never sent: 2 while…` said the number
    /// twice. One reason: the number once; several: split by reason.
    #[test]
    fn unsent_line_says_the_number_once() {
        assert_eq!(Unsent::default().line(), None);
        let busy = Unsent {
            busy: 2,
            ..Unsent::default()
        };
        assert_eq!(
            busy.line().as_deref(),
            Some(
                "Unsent: 2 requests fell due but were never sent while their connection waited \
                 for earlier responses"
            )
        );
        let one = Unsent {
            connect_timeout: 1,
            ..Unsent::default()
        };
        assert_eq!(
            one.line().as_deref(),
            Some(
                "Unsent: 1 request fell due but was never sent while their connection could \
                 not be opened (connect timed out, -T)"
            )
        );
        let both = Unsent {
            busy: 2,
            connect_failed: 3,
            connect_timeout: 0,
            late: 0,
        };
        assert_eq!(
            both.line().as_deref(),
            Some(
                "Unsent: 5 requests fell due but were never sent: 2 while their connection \
                 waited for earlier responses, 3 while their connection could not be opened \
                 (connect failed)"
            )
        );
        // tsumo's own (issue 43): said as its, and not the server's.
        let late = Unsent { late: 7, ..both };
        assert_eq!((late.total(), late.by_server()), (12, 5));
        assert!(late.line().is_some_and(|l| l.ends_with(
            "7 while their connection was free: tsumo fell behind \
                                         its own schedule"
        )));
    }

    #[test]
    fn counters_saved_before_tls_failures_still_load() {
        let old = r#"{"requests":1,"bytes_read":2,"bytes_written":3,
            "errors":{"connect":0,"read":0,"write":0,"timeout":0,"status":0},
            "connections_opened":1,"tls_full_handshakes":0,"tls_resumed_handshakes":0,
            "emfile":0,"eaddrnotavail":0}"#;
        let counters: Counters = serde_json::from_str(old).expect("old counters load");
        assert_eq!(counters.tls_failures, TlsFailures::default());
        // `errors.status` was renamed `status_4xx_5xx`: an old file's count still loads.
        let old = old.replace("\"status\":0", "\"status\":7");
        let counters: Counters = serde_json::from_str(&old).expect("old counters load");
        assert_eq!(counters.errors.status, 7);
        let saved = serde_json::to_value(counters).expect("counters to JSON");
        assert_eq!(saved["errors"]["status_4xx_5xx"], 7);
        assert!(saved["errors"].get("status").is_none());
    }
}
