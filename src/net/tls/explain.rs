//! Why a TLS handshake failed, in words a user can act on: which certificate was refused and why,
//! or that the server does not speak TLS at all. rustls's own texts ("invalid peer certificate:
//! UnknownIssuer", "received corrupt message of type InvalidContentType") name the symptom, not
//! the fix. The same words serve the pre-flight's one line, `tsumo doctor` and the failures
//! quoted after a run; the kind is what a run counts.

use std::fmt;
use std::io;

use rustls::{CertificateError, InvalidMessage};

use crate::stats::http::TlsFailure;

/// A refused certificate, explained by the verifier, which alone sees the certificate. It leaves
/// the handshake inside rustls's `CertificateError::Other`.
#[derive(Debug)]
pub struct CertRefused {
    pub kind: TlsFailure,
    pub problem: String,
    pub fix: String,
}

impl fmt::Display for CertRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.problem, self.fix)
    }
}

impl std::error::Error for CertRefused {}

/// A failed handshake explained: what happened, and what to do when something can be done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    pub kind: TlsFailure,
    pub problem: String,
    pub fix: Option<String>,
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.fix {
            Some(fix) => write!(f, "{}; {fix}", self.problem),
            None => f.write_str(&self.problem),
        }
    }
}

/// Explains a failed handshake (the error tokio-rustls returned).
pub fn explain(e: &io::Error) -> Explanation {
    let other = |problem: String, fix: Option<&str>| Explanation {
        kind: TlsFailure::Other,
        problem,
        fix: fix.map(str::to_string),
    };
    let Some(rustls_error) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    else {
        return match e.kind() {
            io::ErrorKind::UnexpectedEof => other(
                "the server closed the connection during the TLS handshake".to_string(),
                Some("check that this port serves TLS (for plain HTTP use http://)"),
            ),
            _ => other(e.to_string(), None),
        };
    };
    match rustls_error {
        rustls::Error::InvalidCertificate(CertificateError::Other(inner)) => {
            match inner.0.downcast_ref::<CertRefused>() {
                Some(refused) => Explanation {
                    kind: refused.kind,
                    problem: refused.problem.clone(),
                    fix: Some(refused.fix.clone()),
                },
                None => certificate(rustls_error, TlsFailure::OtherCertificate),
            }
        }
        rustls::Error::InvalidCertificate(reason) => {
            let kind = match reason {
                CertificateError::Expired
                | CertificateError::ExpiredContext { .. }
                | CertificateError::NotValidYet
                | CertificateError::NotValidYetContext { .. } => TlsFailure::Expired,
                CertificateError::NotValidForName
                | CertificateError::NotValidForNameContext { .. } => TlsFailure::WrongName,
                CertificateError::UnknownIssuer => TlsFailure::UnknownIssuer,
                _ => TlsFailure::OtherCertificate,
            };
            certificate(rustls_error, kind)
        }
        // The first bytes back were not a TLS record: typically "HTTP/1.1 400 Bad Request".
        rustls::Error::InvalidMessage(InvalidMessage::InvalidContentType) => Explanation {
            kind: TlsFailure::PlainHttp,
            problem: "the server answered in plain HTTP, not TLS".to_string(),
            fix: Some("try http:// instead of https://, or the port that serves TLS".to_string()),
        },
        rustls::Error::AlertReceived(alert) => other(
            format!("the server refused the handshake (TLS alert {alert:?})"),
            None,
        ),
        _ => other(e.to_string(), None),
    }
}

/// A certificate refusal the verifier could not explain (no parsable certificate): whether
/// `--cacert` was given is unknown here, so it is not suggested.
fn certificate(e: &rustls::Error, kind: TlsFailure) -> Explanation {
    Explanation {
        kind,
        problem: format!("the server's certificate was refused: {e}"),
        fix: Some("--insecure (-k) skips verification".to_string()),
    }
}

/// Explains a failed handshake in one line.
pub fn explain_handshake_error(e: &io::Error) -> String {
    explain(e).to_string()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn io_error(e: rustls::Error) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, e)
    }

    #[test]
    fn plain_http_answer() {
        let e = io_error(rustls::Error::InvalidMessage(
            InvalidMessage::InvalidContentType,
        ));
        let x = explain(&e);
        assert_eq!(x.kind, TlsFailure::PlainHttp);
        assert_eq!(
            x.to_string(),
            "the server answered in plain HTTP, not TLS; try http:// instead of https://, or \
             the port that serves TLS"
        );
    }

    #[test]
    fn verifier_explanation_is_carried_out() {
        let refused = CertRefused {
            kind: TlsFailure::WrongName,
            problem: "the server's certificate (CN=a) is for a, not for b".to_string(),
            fix: "use a".to_string(),
        };
        let e = io_error(rustls::Error::InvalidCertificate(CertificateError::Other(
            rustls::OtherError(Arc::new(refused)),
        )));
        let x = explain(&e);
        assert_eq!(x.kind, TlsFailure::WrongName);
        assert_eq!(
            x.to_string(),
            "the server's certificate (CN=a) is for a, not for b; use a"
        );
    }

    #[test]
    fn closed_during_handshake() {
        let e = io::Error::new(io::ErrorKind::UnexpectedEof, "tls handshake eof");
        let x = explain(&e);
        assert_eq!(x.kind, TlsFailure::Other);
        assert!(x.problem.contains("closed the connection"), "{x}");
    }
}
