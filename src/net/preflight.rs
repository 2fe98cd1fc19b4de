//! The pre-flight check every mode makes before any traffic: resolve the target and prove it
//! answers (a TCP connect and, for https, a full TLS handshake), so a wrong address or a bad
//! certificate stops the run with one clear line instead of thousands of counted errors.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use super::stream::{ConnectError, Endpoint, Stream, TlsTarget};
use super::tls;
use crate::error::Error;
use crate::plan::{Scheme, Target};

/// Resolves the target and proves it answers: TCP connect, and the TLS handshake for https.
/// Shared by every mode: the mahjong players reach their server through the same check.
pub async fn preflight(
    target: &Target,
    insecure: bool,
    cacert: Option<&std::path::Path>,
    timeout: Duration,
) -> Result<Endpoint, Error> {
    let port = target.port();
    let addrs: Vec<SocketAddr> = (target.host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| Error::Resolve {
            host: target.host.clone(),
            port,
            reason: e.to_string(),
        })?
        .collect();
    if addrs.is_empty() {
        return Err(Error::Resolve {
            host: target.host.clone(),
            port,
            reason: "no addresses".into(),
        });
    }
    let tls = match target.scheme {
        Scheme::Http => None,
        Scheme::Https => Some(TlsTarget::new(
            tls::client_config(insecure, cacert)?,
            tls::server_name(&target.host)?,
        )),
    };
    let mut last_error = None;
    for addr in addrs {
        let endpoint = Endpoint {
            addr,
            tls: tls.clone(),
        };
        match tokio::time::timeout(timeout, endpoint.connect()).await {
            Ok(Ok((stream, _))) => {
                close_politely(stream).await;
                return Ok(endpoint);
            }
            Ok(Err(ConnectError::Tls(e))) => {
                return Err(Error::Tls {
                    host: target.host.clone(),
                    reason: tls::explain_handshake_error(&e),
                })
            }
            Ok(Err(ConnectError::Tcp(e))) => last_error = Some((addr, e.to_string())),
            Err(_) => last_error = Some((addr, format!("no answer within {timeout:?}"))),
        }
    }
    let (addr, reason) =
        last_error.unwrap_or_else(|| (SocketAddr::from(([0, 0, 0, 0], port)), String::new()));
    Err(Error::Connect {
        addr: addr.to_string(),
        reason,
    })
}

/// Closes the pre-flight connection with a TLS close_notify, so the server logs no error.
async fn close_politely(mut stream: Stream) {
    let _ = tokio::time::timeout(Duration::from_millis(100), stream.shutdown()).await;
}

/// [`preflight`] from outside a runtime: for checking every target before the first of several
/// runs (`--vs`).
pub fn check_blocking(
    target: &Target,
    insecure: bool,
    cacert: Option<&std::path::Path>,
    timeout: Duration,
) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Thread(e.to_string()))?;
    runtime
        .block_on(preflight(target, insecure, cacert, timeout))
        .map(drop)
}
