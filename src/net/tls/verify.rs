//! Certificate verification: webpki's, plus the certificates of `--cacert` trusted as they are.
//!
//! Why a verifier of our own: the usual self-signed certificate (`openssl req -x509`) carries
//! `basicConstraints CA:TRUE`, and webpki refuses a CA certificate as a server's certificate
//! (`CaUsedAsEndEntity`) even when it is the very certificate given as `--cacert`. curl trusts it
//! (OpenSSL accepts a certificate found in its trust store as it is), so tsumo does too: when the
//! served certificate is byte for byte one of the `--cacert` file (pinned), its name, validity
//! and (when self-issued) its own signature are checked, and the handshake's signature still
//! proves the server holds its key. A pinned certificate without subjectAltName (only a CN, as
//! `openssl req -x509` made them for years) has its CN checked instead, as curl does; webpki,
//! for any other certificate, never reads the CN. Every refusal leaves here explained (see
//! [`super::explain`]).

use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, Error, OtherError, SignatureScheme};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::FromDer;
use x509_parser::time::ASN1Time;

use super::explain::{explain, CertRefused, Explanation};
use crate::stats::http::TlsFailure;

/// The certificates of `--cacert`, with the file's name for messages.
#[derive(Debug)]
pub struct Cacert {
    pub path: String,
    pub certs: Vec<CertificateDer<'static>>,
}

/// Verifies as webpki does, trusts a served certificate found in `--cacert` as it is, and
/// explains every refusal; or, with `--insecure`, accepts any certificate. Either way the
/// handshake's signatures are checked, so that the connection is a real TLS connection.
#[derive(Debug)]
pub struct Verifier {
    trust: Trust,
    provider: Arc<CryptoProvider>,
}

/// Which served certificates a [`Verifier`] accepts: one type for both, since only this differs
/// (the handshake's signature checks are the same).
#[derive(Debug)]
enum Trust {
    /// webpki's verdict, then the `--cacert` certificates as they are.
    Checked {
        /// `None` when there is no trust anchor at all.
        webpki: Option<Arc<WebPkiServerVerifier>>,
        cacert: Option<Cacert>,
    },
    /// `--insecure`: any certificate.
    Any,
}

impl Verifier {
    pub fn new(
        webpki: Option<Arc<WebPkiServerVerifier>>,
        cacert: Option<Cacert>,
        provider: Arc<CryptoProvider>,
    ) -> Self {
        Verifier {
            trust: Trust::Checked { webpki, cacert },
            provider,
        }
    }

    /// `--insecure`: accepts any certificate, but still checks handshake signatures.
    pub fn insecure(provider: Arc<CryptoProvider>) -> Self {
        Verifier {
            trust: Trust::Any,
            provider,
        }
    }
}

/// The `--cacert` file holds exactly this certificate.
fn given_as_is(cacert: Option<&Cacert>, end_entity: &CertificateDer<'_>) -> bool {
    cacert.is_some_and(|c| {
        c.certs
            .iter()
            .any(|trusted| trusted.as_ref() == end_entity.as_ref())
    })
}

/// A verifier that counts the certificates it accepted: the full handshakes of the connections
/// it serves (a resumed TLS 1.3 handshake verifies none); and keeps its last refusal explained,
/// for QUIC, whose handshake error keeps only rustls's text (a Debug dump of the explanation).
#[derive(Debug)]
pub struct Counted {
    inner: Arc<dyn ServerCertVerifier>,
    accepted: Arc<AtomicU64>,
    refused: Refusal,
}

/// The last certificate a [`Counted`] verifier refused, explained.
pub type Refusal = Arc<Mutex<Option<Explanation>>>;

impl Counted {
    pub fn new(
        inner: Arc<dyn ServerCertVerifier>,
        accepted: Arc<AtomicU64>,
        refused: Refusal,
    ) -> Self {
        Counted {
            inner,
            accepted,
            refused,
        }
    }
}

impl ServerCertVerifier for Counted {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let verified = self
            .inner
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
            .inspect_err(|e| {
                let explained = explain(&std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    e.clone(),
                ));
                *self.refused.lock().unwrap_or_else(PoisonError::into_inner) = Some(explained);
            })?;
        self.accepted.fetch_add(1, Ordering::Relaxed);
        Ok(verified)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let Trust::Checked { webpki, cacert } = &self.trust else {
            return Ok(ServerCertVerified::assertion());
        };
        let refused = match webpki {
            Some(webpki) => {
                match webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
                    Ok(verified) => return Ok(verified),
                    Err(e) => e,
                }
            }
            None => Error::InvalidCertificate(CertificateError::UnknownIssuer),
        };
        let pinned = given_as_is(cacert.as_ref(), end_entity);
        let refused = if pinned {
            match trust_as_given(end_entity, server_name, now) {
                Ok(()) => return Ok(ServerCertVerified::assertion()),
                Err(e) => e,
            }
        } else {
            refused
        };
        let given = Given {
            cacert: cacert.as_ref().map(|c| c.path.as_str()),
            pinned,
        };
        Err(explained(&refused, end_entity, server_name, given))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// Checks a served certificate that `--cacert` holds byte for byte, as OpenSSL checks a
/// certificate of its trust store: the name (webpki's rules; the CN when there is no
/// subjectAltName), the validity period, and for a self-issued certificate its own signature.
fn trust_as_given(
    end_entity: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<(), Error> {
    let parsed = ParsedCertificate::try_from(end_entity)?;
    let (_, cert) = X509Certificate::from_der(end_entity.as_ref())
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))?;
    if let Err(wrong_name) = rustls::client::verify_server_name(&parsed, server_name) {
        let no_san = matches!(cert.subject_alternative_name(), Ok(None));
        let cn_is_host = common_name(&cert)
            .is_some_and(|cn| cn.eq_ignore_ascii_case(server_name.to_str().as_ref()));
        if !(no_san && cn_is_host) {
            return Err(wrong_name);
        }
    }
    let validity = cert.validity();
    let now_secs = now.as_secs() as i64;
    if now_secs < validity.not_before.timestamp() {
        return Err(CertificateError::NotValidYetContext {
            time: now,
            not_before: unix_time(validity.not_before),
        }
        .into());
    }
    if now_secs > validity.not_after.timestamp() {
        return Err(CertificateError::ExpiredContext {
            time: now,
            not_after: unix_time(validity.not_after),
        }
        .into());
    }
    if cert.subject().as_raw() == cert.issuer().as_raw() && cert.verify_signature(None).is_err() {
        return Err(CertificateError::BadSignature.into());
    }
    Ok(())
}

/// The certificate's (first) CN.
fn common_name(cert: &X509Certificate<'_>) -> Option<String> {
    let cn = cert.subject().iter_common_name().next()?;
    cn.as_str().ok().map(str::to_string)
}

fn unix_time(t: ASN1Time) -> UnixTime {
    UnixTime::since_unix_epoch(Duration::from_secs(t.timestamp().max(0) as u64))
}

/// What a refused certificate says about itself, for the message.
struct Facts {
    subject: String,
    issuer: String,
    self_issued: bool,
    /// Its subjectAltName entries (DNS names and IP addresses).
    names: Vec<String>,
    /// It has no subjectAltName extension at all, and this CN (if any).
    no_san: bool,
    cn: Option<String>,
    not_before: String,
    not_after: String,
}

impl Facts {
    fn read(der: &[u8]) -> Option<Facts> {
        let (_, cert) = X509Certificate::from_der(der).ok()?;
        let no_san = matches!(cert.subject_alternative_name(), Ok(None));
        let names = match cert.subject_alternative_name() {
            Ok(Some(san)) => san
                .value
                .general_names
                .iter()
                .filter_map(|name| match name {
                    GeneralName::DNSName(dns) => Some((*dns).to_string()),
                    GeneralName::IPAddress(bytes) => ip_text(bytes),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        Some(Facts {
            subject: cert.subject().to_string(),
            issuer: cert.issuer().to_string(),
            self_issued: cert.subject().as_raw() == cert.issuer().as_raw(),
            names,
            no_san,
            cn: common_name(&cert),
            not_before: utc(cert.validity().not_before),
            not_after: utc(cert.validity().not_after),
        })
    }
}

fn ip_text(bytes: &[u8]) -> Option<String> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes)
            .ok()
            .map(|b| Ipv4Addr::from(b).to_string()),
        16 => <[u8; 16]>::try_from(bytes)
            .ok()
            .map(|b| Ipv6Addr::from(b).to_string()),
        _ => None,
    }
}

fn utc(t: ASN1Time) -> String {
    let d = t.to_datetime();
    format!(
        "{}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        d.year(),
        u8::from(d.month()),
        d.day(),
        d.hour(),
        d.minute(),
        d.second()
    )
}

const INSECURE: &str = "--insecure (-k) skips verification";

/// webpki's own word for a refusal rustls has no variant for (`CaUsedAsEndEntity`, say).
fn other_reason(reason: &CertificateError) -> String {
    match reason {
        CertificateError::Other(inner) => inner.to_string(),
        known => known.to_string(),
    }
}

/// What `--cacert` had to do with a refused certificate.
#[derive(Debug, Clone, Copy)]
struct Given<'a> {
    /// The `--cacert` file, if any.
    cacert: Option<&'a str>,
    /// It holds the refused certificate byte for byte.
    pinned: bool,
}

/// Turns a refusal into one that says which certificate was refused, why, and what to do.
fn explained(
    refused: &Error,
    end_entity: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
    given: Given<'_>,
) -> Error {
    let cacert = given.cacert;
    let Error::InvalidCertificate(reason) = refused else {
        return refused.clone();
    };
    let Some(facts) = Facts::read(end_entity.as_ref()) else {
        return refused.clone();
    };
    let subject = &facts.subject;
    let (kind, problem, fix) = match reason {
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => (
            TlsFailure::Expired,
            format!(
                "the server's certificate ({subject}) expired on {}",
                facts.not_after
            ),
            format!("renew it on the server; {INSECURE}"),
        ),
        CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => (
            TlsFailure::Expired,
            format!(
                "the server's certificate ({subject}) is not valid before {}",
                facts.not_before
            ),
            format!("check the clocks of both machines; {INSECURE}"),
        ),
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. }
            if facts.no_san =>
        {
            without_san(&facts, server_name, given.pinned)
        }
        CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
            other_names(&facts, server_name)
        }
        CertificateError::UnknownIssuer | CertificateError::Other(_) if facts.self_issued => {
            self_signed(&facts, cacert)
        }
        CertificateError::UnknownIssuer => unknown_issuer(&facts, cacert),
        other => (
            TlsFailure::OtherCertificate,
            format!(
                "the server's certificate ({subject}) was refused: {}",
                other_reason(other)
            ),
            INSECURE.to_string(),
        ),
    };
    Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(CertRefused {
        kind,
        problem,
        fix,
    }))))
}

/// A refusal's kind, what went wrong, and what to do.
type Refused = (TlsFailure, String, String);

/// A certificate without subjectAltName refused for the host: names are not checked against
/// its CN, unless it was pinned with `--cacert` (then its CN is the name to use).
fn without_san(facts: &Facts, server_name: &ServerName<'_>, pinned: bool) -> Refused {
    let host = server_name.to_str();
    let subject = &facts.subject;
    let san = match server_name {
        ServerName::IpAddress(_) => format!("IP:{host}"),
        _ => format!("DNS:{host}"),
    };
    match (pinned, &facts.cn) {
        (true, Some(cn)) => (
            TlsFailure::WrongName,
            format!(
                "the server's certificate ({subject}) has no subjectAltName, and its CN \
                 is {cn}, not {host}"
            ),
            format!(
                "use {cn} in the URL, or give the server a certificate with \
                 subjectAltName for {host}; {INSECURE}"
            ),
        ),
        _ => (
            TlsFailure::WrongName,
            format!(
                "the server's certificate ({subject}) has no subjectAltName; names are \
                 not checked against the CN"
            ),
            format!(
                "give the server a certificate with subjectAltName for {host} (openssl: \
                 -addext subjectAltName={san}), or pass the server's own certificate as \
                 --cacert to pin it; {INSECURE}"
            ),
        ),
    }
}

/// A certificate for other names than the host.
fn other_names(facts: &Facts, server_name: &ServerName<'_>) -> Refused {
    let host = server_name.to_str();
    let subject = &facts.subject;
    let names = if facts.names.is_empty() {
        "no host name (it has no subjectAltName)".to_string()
    } else {
        facts.names.join(", ")
    };
    (
        TlsFailure::WrongName,
        format!("the server's certificate ({subject}) is for {names}, not for {host}"),
        format!(
            "use a name the certificate has in the URL, or give the server a \
             certificate for {host}; {INSECURE}"
        ),
    )
}

/// A self-signed certificate, not (or not byte for byte) in `--cacert`.
fn self_signed(facts: &Facts, cacert: Option<&str>) -> Refused {
    let subject = &facts.subject;
    match cacert {
        None => (
            TlsFailure::SelfSigned,
            format!("the server's certificate ({subject}) is self-signed"),
            format!("pass that certificate's file as --cacert FILE to trust it; {INSECURE}"),
        ),
        Some(path) => (
            TlsFailure::SelfSigned,
            format!(
                "{path} does not contain the server's self-signed certificate \
                 ({subject})"
            ),
            format!("pass the server's own certificate file as --cacert; {INSECURE}"),
        ),
    }
}

/// A certificate whose issuer is not trusted (nor in `--cacert`).
fn unknown_issuer(facts: &Facts, cacert: Option<&str>) -> Refused {
    let (subject, issuer) = (&facts.subject, &facts.issuer);
    match cacert {
        None => (
            TlsFailure::UnknownIssuer,
            format!(
                "the server's certificate ({subject}) is issued by {issuer}, which is not \
                 a trusted CA"
            ),
            format!("pass that CA's certificate as --cacert FILE; {INSECURE}"),
        ),
        Some(path) => (
            TlsFailure::UnknownIssuer,
            format!(
                "{path} does not contain the issuer of the server's certificate \
                 ({subject}, issued by {issuer})"
            ),
            format!("pass the certificate of {issuer} as --cacert; {INSECURE}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::tls::explain::explain;

    /// 2026-05-28, and 2031-02-27: before and after the test certificates expire (2030-01-01).
    const BEFORE: u64 = 1_780_000_000;
    const AFTER: u64 = 1_930_000_000;

    /// A self-signed certificate for `names` (the first is also its CN), CA:TRUE as openssl
    /// makes them, expiring on 2030-01-01.
    fn self_signed(names: &[&str]) -> CertificateDer<'static> {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = rcgen::CertificateParams::new(names.clone()).expect("params");
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, names[0].as_str());
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.not_after = rcgen::date_time_ymd(2030, 1, 1);
        let key = rcgen::KeyPair::generate().expect("key");
        params.self_signed(&key).expect("sign").der().clone()
    }

    /// A self-signed certificate with only a CN, no subjectAltName (`openssl req -x509` of old).
    fn cn_only(cn: &str) -> CertificateDer<'static> {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.not_after = rcgen::date_time_ymd(2030, 1, 1);
        let key = rcgen::KeyPair::generate().expect("key");
        params.self_signed(&key).expect("sign").der().clone()
    }

    fn verifier(cacert: Option<Vec<CertificateDer<'static>>>) -> Verifier {
        let cacert = cacert.map(|certs| Cacert {
            path: "ca.pem".to_string(),
            certs,
        });
        Verifier::new(
            None,
            cacert,
            Arc::new(rustls::crypto::ring::default_provider()),
        )
    }

    fn verify(v: &Verifier, cert: &CertificateDer<'_>, host: &str, now: u64) -> Result<(), String> {
        let name = ServerName::try_from(host.to_string()).expect("name");
        let now = UnixTime::since_unix_epoch(Duration::from_secs(now));
        v.verify_server_cert(cert, &[], &name, &[], now)
            .map(|_| ())
            .map_err(|e| {
                let x = explain(&std::io::Error::new(std::io::ErrorKind::InvalidData, e));
                format!("{:?}: {}", x.kind, x.problem)
            })
    }

    #[test]
    fn certificate_given_as_cacert_is_trusted_as_it_is() {
        let cert = self_signed(&["localhost", "127.0.0.1"]);
        let v = verifier(Some(vec![cert.clone()]));
        assert_eq!(verify(&v, &cert, "localhost", BEFORE), Ok(()));
        assert_eq!(verify(&v, &cert, "127.0.0.1", BEFORE), Ok(()));
    }

    #[test]
    fn certificate_given_as_cacert_still_expires_and_has_its_names() {
        let cert = self_signed(&["localhost", "127.0.0.1"]);
        let v = verifier(Some(vec![cert.clone()]));
        assert_eq!(
            verify(&v, &cert, "localhost", AFTER),
            Err(
                "Expired: the server's certificate (CN=localhost) expired on 2030-01-01 \
                 00:00:00 UTC"
                    .to_string()
            )
        );
        assert_eq!(
            verify(&v, &cert, "example.test", BEFORE),
            Err(
                "WrongName: the server's certificate (CN=localhost) is for localhost, \
                 127.0.0.1, not for example.test"
                    .to_string()
            )
        );
    }

    #[test]
    fn self_signed_certificate_not_given_is_named() {
        let cert = self_signed(&["localhost"]);
        assert_eq!(
            verify(&verifier(None), &cert, "localhost", BEFORE),
            Err("SelfSigned: the server's certificate (CN=localhost) is self-signed".to_string())
        );
        let other = self_signed(&["other.test"]);
        assert_eq!(
            verify(&verifier(Some(vec![other])), &cert, "localhost", BEFORE),
            Err(
                "SelfSigned: ca.pem does not contain the server's self-signed certificate \
                 (CN=localhost)"
                    .to_string()
            )
        );
    }

    #[test]
    fn cn_only_certificate_given_as_cacert_is_pinned_by_its_cn() {
        let cert = cn_only("localhost");
        let v = verifier(Some(vec![cert.clone()]));
        assert_eq!(verify(&v, &cert, "localhost", BEFORE), Ok(()));
        assert_eq!(verify(&v, &cert, "LOCALHOST", BEFORE), Ok(()));
        assert_eq!(
            verify(&v, &cert, "127.0.0.1", BEFORE),
            Err(
                "WrongName: the server's certificate (CN=localhost) has no subjectAltName, and \
                 its CN is localhost, not 127.0.0.1"
                    .to_string()
            )
        );
        // Pinned, and still only within its validity period.
        assert!(verify(&v, &cert, "localhost", AFTER).is_err_and(|e| e.starts_with("Expired: ")));
        // Not pinned: the CN is never read.
        let other = cn_only("localhost");
        assert_eq!(
            verify(&v, &other, "localhost", BEFORE),
            Err(
                "SelfSigned: ca.pem does not contain the server's self-signed certificate \
                 (CN=localhost)"
                    .to_string()
            )
        );
    }
}
