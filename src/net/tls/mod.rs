//! rustls client configuration, in one place.
//!
//! The ring provider is chosen explicitly (`builder_with_provider`): if two providers ever end up
//! enabled in the dependency tree, rustls's automatic choice panics at run time. Certificates are
//! verified against the system roots (plus `--cacert`) unless `--insecure` is given; `verify`
//! says why the verifier is our own, `explain` turns a failed handshake into words. Session
//! resumption uses rustls's in-memory cache, shared by every connection of the run.

use std::path::Path;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};

use crate::error::Error;
use verify::{Cacert, Verifier};

mod explain;
mod verify;

pub use explain::{explain, explain_handshake_error, Explanation};
pub use verify::Refusal;

/// The crypto provider used for every TLS connection.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The protocol offered in the TLS handshake (ALPN): exactly one, so a server never picks a
/// protocol the run does not speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alpn {
    Http1,
    H2,
    /// HTTP/3, over QUIC.
    H3,
}

impl Alpn {
    pub fn id(self) -> &'static [u8] {
        match self {
            Alpn::Http1 => b"http/1.1",
            Alpn::H2 => b"h2",
            Alpn::H3 => b"h3",
        }
    }
}

/// Builds the client configuration for a run, offering `alpn` only.
pub fn client_config(
    insecure: bool,
    cacert: Option<&Path>,
    alpn: Alpn,
) -> Result<Arc<ClientConfig>, Error> {
    let verifier = verifier(insecure, cacert)?;
    let versions = rustls::DEFAULT_VERSIONS;
    Ok(Arc::new(assemble(verifier, versions, alpn)?))
}

/// The verifier of a run's QUIC connections, counting the certificates it accepted in `full`:
/// a resumed TLS 1.3 handshake verifies none, so that is the count of full handshakes. One per
/// run: rustls resumes a session only under the verifier that made it. Its last refusal,
/// explained, goes to `refused`.
pub fn quic_verifier(
    insecure: bool,
    cacert: Option<&Path>,
    full: Arc<std::sync::atomic::AtomicU64>,
    refused: verify::Refusal,
) -> Result<Arc<dyn rustls::client::danger::ServerCertVerifier>, Error> {
    Ok(Arc::new(verify::Counted::new(
        verifier(insecure, cacert)?,
        full,
        refused,
    )))
}

/// A run's QUIC configuration: `verifier` (the run's), ALPN `h3`, TLS 1.3 (QUIC has no
/// other), 0-RTT offered when `early_data`, and rustls's in-memory session cache, shared by
/// every worker and the pre-flight check, whose ticket the first connection resumes.
pub fn quic_config(
    verifier: Arc<dyn rustls::client::danger::ServerCertVerifier>,
    early_data: bool,
) -> Result<ClientConfig, Error> {
    let mut config = assemble(verifier, &[&rustls::version::TLS13], Alpn::H3)?;
    config.enable_early_data = early_data;
    Ok(config)
}

/// The certificate verifier of a run: ours over webpki and `--cacert`, or `--insecure`'s.
fn verifier(
    insecure: bool,
    cacert: Option<&Path>,
) -> Result<Arc<dyn rustls::client::danger::ServerCertVerifier>, Error> {
    let provider = provider();
    if insecure {
        return Ok(Arc::new(Verifier::insecure(provider)));
    }
    let (roots, cacert) = root_store(cacert)?;
    // With no root at all (no system store, no --cacert) every certificate is refused.
    let webpki = match roots.is_empty() {
        true => None,
        false => Some(
            WebPkiServerVerifier::builder_with_provider(roots.into(), Arc::clone(&provider))
                .build()
                .map_err(|e| Error::Tls {
                    host: String::new(),
                    reason: e.to_string(),
                })?,
        ),
    };
    Ok(Arc::new(Verifier::new(webpki, cacert, provider)))
}

/// A configuration of `verifier`, the TLS `versions`, offering `alpn` only.
fn assemble(
    verifier: Arc<dyn rustls::client::danger::ServerCertVerifier>,
    versions: &[&'static rustls::SupportedProtocolVersion],
    alpn: Alpn,
) -> Result<ClientConfig, Error> {
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .map_err(|e| Error::Tls {
            host: String::new(),
            reason: e.to_string(),
        })?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.id().to_vec()];
    Ok(config)
}

/// System roots, plus the certificates of `--cacert` (also kept as they are, see `verify`).
fn root_store(cacert: Option<&Path>) -> Result<(RootCertStore, Option<Cacert>), Error> {
    let mut roots = RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    if let Some(path) = cacert {
        let file_error = |reason: String| Error::File {
            path: path.display().to_string(),
            reason,
        };
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
            .map_err(|e| file_error(format!("cannot read --cacert: {e}")))?
            .collect::<Result<_, _>>()
            .map_err(|e| file_error(format!("not a PEM certificate file: {e}")))?;
        if certs.is_empty() {
            return Err(file_error("no PEM certificate in --cacert file".into()));
        }
        for cert in &certs {
            roots
                .add(cert.clone())
                .map_err(|e| file_error(format!("unusable certificate: {e}")))?;
        }
        let path = path.display().to_string();
        return Ok((roots, Some(Cacert { path, certs })));
    }
    Ok((roots, None))
}

/// The server name to send as SNI and to verify: a DNS name or an IP address.
pub fn server_name(host: &str) -> Result<ServerName<'static>, Error> {
    ServerName::try_from(host.to_string()).map_err(|e| Error::Tls {
        host: host.to_string(),
        reason: format!("not a valid server name: {e}"),
    })
}
