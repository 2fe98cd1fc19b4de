//! An HTTP/3 server on quinn and h3's `server` module that misbehaves on purpose, for the faults
//! a real server (Caddy, `tests/http3_caddy.rs`) will not make on demand: GOAWAY after a
//! connection's `n`th request, a request's stream reset with an HTTP/3 error code, a server that
//! dies in the middle of a run, and an ALPN without `h3`.
//!
//! It listens on 127.0.0.1, on an ephemeral UDP port, with a self-signed certificate from rcgen
//! for `localhost` and 127.0.0.1 (tsumo runs with `-k`, or `--cacert` of [`H3Server::cert_pem`]);
//! it runs on its own thread with its own current-thread tokio runtime, counts what it did
//! (requests received, streams reset, GOAWAYs sent, connections) so a test can hold tsumo's
//! counts to them, and stops when dropped.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use h3::error::Code;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::sync::oneshot;

/// Body of every answered request.
pub const BODY: &[u8] = b"hello from quinn over h3\n";

/// How an [`H3Server`] misbehaves.
#[derive(Debug, Clone, Copy)]
pub enum H3Fault {
    /// Answers every request.
    None,
    /// Each connection is told to go away (h3's graceful shutdown: GOAWAY naming the stream of
    /// its `n`th request) once that request arrived: it and the ones before are answered, any
    /// stream opened after is rejected (H3_REQUEST_REJECTED), and the connection stays open
    /// until the client closes it.
    GoAwayAfter(u64),
    /// The `k`th request the server receives (over all connections) has its response stream
    /// reset with H3_INTERNAL_ERROR when `k` is a multiple of `every` and at most `until`; every
    /// other request is answered. `until` keeps the last reset well before a run's end, so none
    /// is still on its way when tsumo stops.
    ResetEvery { every: u64, until: u64 },
    /// Answers every request until `after` since the server started, then dies as a killed
    /// process does: its runtime goes with every connection and the socket, and no
    /// CONNECTION_CLOSE is sent.
    DiesAfter(Duration),
}

/// What the server did, counted as it did it.
#[derive(Debug, Default)]
pub struct H3Counts {
    /// Requests received whole (head and body), answered or reset.
    pub requests: AtomicU64,
    /// Response streams reset ([`H3Fault::ResetEvery`]).
    pub resets: AtomicU64,
    /// GOAWAY frames sent, one per connection at most ([`H3Fault::GoAwayAfter`]).
    pub goaways: AtomicU64,
    /// QUIC connections whose handshake completed.
    pub connections: AtomicU64,
}

/// A running HTTP/3 server. Dropping it stops it.
pub struct H3Server {
    addr: SocketAddr,
    cert_pem: String,
    counts: Arc<H3Counts>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl H3Server {
    /// A server offering `h3` in its ALPN.
    pub fn start(fault: H3Fault) -> H3Server {
        H3Server::start_with_alpn(fault, &[b"h3"])
    }

    /// A server offering exactly `alpn` (none at all when empty).
    pub fn start_with_alpn(fault: H3Fault, alpn: &[&[u8]]) -> H3Server {
        let certified =
            rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
                .expect("generate a certificate");
        let cert_pem = certified.cert.pem();
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
            certified.signing_key.serialize_der(),
        ));
        let config = server_config(vec![certified.cert.der().clone()], key, alpn);
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind 127.0.0.1:0/udp");
        let addr = socket.local_addr().expect("local addr");
        let counts = Arc::new(H3Counts::default());
        let served = Arc::clone(&counts);
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(format!("h3-{fault:?}"))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                runtime.block_on(async move {
                    let endpoint = quinn::Endpoint::new(
                        quinn::EndpointConfig::default(),
                        Some(config),
                        socket,
                        Arc::new(quinn::TokioRuntime),
                    )
                    .expect("quinn endpoint");
                    let dies = async {
                        match fault {
                            H3Fault::DiesAfter(after) => tokio::time::sleep(after).await,
                            _ => std::future::pending().await,
                        }
                    };
                    tokio::select! {
                        _ = stopped => {}
                        _ = dies => {}
                        _ = serve(&endpoint, fault, served) => {}
                    }
                });
                // The runtime is dropped here with every task unpolled: the socket closes and no
                // connection is told, as when a server process is killed.
            })
            .expect("spawn the server thread");
        H3Server {
            addr,
            cert_pem,
            counts,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// `https://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("https://{}/", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's self-signed certificate, PEM, for `--cacert`.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    pub fn counts(&self) -> &H3Counts {
        &self.counts
    }

    pub fn requests(&self) -> u64 {
        self.counts.requests.load(Ordering::Relaxed)
    }

    pub fn resets(&self) -> u64 {
        self.counts.resets.load(Ordering::Relaxed)
    }

    pub fn goaways(&self) -> u64 {
        self.counts.goaways.load(Ordering::Relaxed)
    }

    pub fn connections(&self) -> u64 {
        self.counts.connections.load(Ordering::Relaxed)
    }
}

impl Drop for H3Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// TLS 1.3 on ring (as tsumo's own), with `alpn` offered.
fn server_config(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    alpn: &[&[u8]],
) -> quinn::ServerConfig {
    let mut tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13])
    .expect("TLS 1.3")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("the certificate and its key");
    tls.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls).expect("QUIC TLS config");
    quinn::ServerConfig::with_crypto(Arc::new(crypto))
}

/// Accepts connections until the endpoint goes.
async fn serve(endpoint: &quinn::Endpoint, fault: H3Fault, counts: Arc<H3Counts>) {
    while let Some(incoming) = endpoint.accept().await {
        let counts = Arc::clone(&counts);
        tokio::spawn(async move {
            // A failed handshake (an ALPN refused) or an error ends this connection only.
            let Ok(connection) = incoming.await else {
                return;
            };
            counts.connections.fetch_add(1, Ordering::Relaxed);
            let _ = connection_life(connection, fault, counts).await;
        });
    }
}

/// One connection's requests, each answered on a task of its own, until the client closes it.
async fn connection_life(
    connection: quinn::Connection,
    fault: H3Fault,
    counts: Arc<H3Counts>,
) -> Result<(), h3::error::ConnectionError> {
    let quic = connection.clone();
    let mut h3 =
        h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(connection)).await?;
    let mut accepted = 0u64;
    while let Some(resolver) = h3.accept().await? {
        accepted += 1;
        let answering = Arc::clone(&counts);
        tokio::spawn(async move {
            let Ok((_request, stream)) = resolver.resolve_request().await else {
                return;
            };
            let _ = answer(stream, fault, answering).await;
        });
        if matches!(fault, H3Fault::GoAwayAfter(n) if accepted == n) {
            // GOAWAY naming this request's stream: it is processed, any later one is not.
            h3.shutdown(0).await?;
            counts.goaways.fetch_add(1, Ordering::Relaxed);
        }
    }
    // h3 is done with a connection going away once its accepted requests are answered and a
    // stream past its GOAWAY came (rejected): it stays open (h3's end would close it) until
    // the client closes it, so no stream of the client's is cut by a close.
    quic.closed().await;
    Ok(())
}

/// Reads the request's body to its end, then answers it, or resets its response stream.
async fn answer(
    mut stream: h3::server::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>,
    fault: H3Fault,
    counts: Arc<H3Counts>,
) -> Result<(), h3::error::StreamError> {
    while stream.recv_data().await?.is_some() {}
    let nth = counts.requests.fetch_add(1, Ordering::Relaxed) + 1;
    if let H3Fault::ResetEvery { every, until } = fault {
        if nth.is_multiple_of(every) && nth <= until {
            stream.stop_stream(Code::H3_INTERNAL_ERROR);
            counts.resets.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
    }
    let response = http::Response::builder()
        .status(200)
        .header("content-type", "text/plain")
        .body(())
        .expect("a response head");
    stream.send_response(response).await?;
    stream.send_data(Bytes::from_static(BODY)).await?;
    stream.finish().await
}
