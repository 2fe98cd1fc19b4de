//! rustls client configuration, in one place.
//!
//! The ring provider is chosen explicitly (`builder_with_provider`): if two providers ever end up
//! enabled in the dependency tree, rustls's automatic choice panics at run time. Certificates are
//! verified against the system roots (plus `--cacert`) unless `--insecure` is given. Session
//! resumption uses rustls's in-memory cache, shared by every connection of the run.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::error::Error;

/// The crypto provider used for every TLS connection.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Builds the client configuration for a run (HTTP/1.1 over TLS).
pub fn client_config(insecure: bool, cacert: Option<&Path>) -> Result<Arc<ClientConfig>, Error> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls {
            host: String::new(),
            reason: e.to_string(),
        })?;
    let mut config = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
            .with_no_client_auth()
    } else {
        builder
            .with_root_certificates(root_store(cacert)?)
            .with_no_client_auth()
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// System roots, plus the certificates of `--cacert`.
fn root_store(cacert: Option<&Path>) -> Result<RootCertStore, Error> {
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
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| file_error(format!("unusable certificate: {e}")))?;
        }
    }
    Ok(roots)
}

/// The server name to send as SNI and to verify: a DNS name or an IP address.
pub fn server_name(host: &str) -> Result<ServerName<'static>, Error> {
    ServerName::try_from(host.to_string()).map_err(|e| Error::Tls {
        host: host.to_string(),
        reason: format!("not a valid server name: {e}"),
    })
}

/// Explains a failed handshake in one line, naming `--insecure` when the certificate was the
/// problem.
pub fn explain_handshake_error(e: &std::io::Error) -> String {
    let invalid_cert = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|re| matches!(re, rustls::Error::InvalidCertificate(_)));
    if invalid_cert {
        format!(
            "{e}; the server's certificate is not trusted: pass --insecure (-k) to skip \
             verification, or --cacert FILE to trust its issuer"
        )
    } else {
        e.to_string()
    }
}

/// `--insecure`: accepts any certificate, but still checks handshake signatures so that the
/// connection is a real TLS connection.
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
