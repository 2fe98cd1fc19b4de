//! HTTP/3 on the wire, on quinn and h3 (the stack oha uses): a QUIC connection from a UDP
//! socket of its own (one per connection, as each TCP connection has its own port), TLS by the
//! project's rustls configuration (ALPN `h3`, TLS 1.3, the same verification, `--insecure` and
//! `--cacert`), and h3's client over it, its connection task spawned on the worker's
//! `LocalSet`. What QUIC adds to the report is read here: the handshake's kind (full, resumed,
//! 0-RTT accepted or not), and the connection's packets sent and lost.
//!
//! A QUIC connection's bytes are read by quinn from its own UDP socket, so no kernel receive
//! stamp reaches tsumo: an HTTP/3 run's latency is stamped in user space, and says so. Its sends
//! are noted on their way out ([`sent`]): a request held up between its hand-off and quinn's
//! send is sent when its datagram went.

pub mod errors;
pub mod sent;

use std::cell::Cell;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use bytes::Bytes;
use quinn::crypto::rustls::QuicClientConfig;

use crate::error::Error;
use crate::net::tls;
use sent::{SendLog, StampedSocket};

pub use errors::{close_kind, ConnectFailure};

/// The sending half of one HTTP/3 connection (cloned for each request).
pub type Sender = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// One request's stream.
pub type RequestStream = h3::client::RequestStream<h3_quinn::BidiStream<Bytes>, Bytes>;

/// How a run's QUIC connections set up their TLS: made once per run, before the pre-flight
/// check, whose ticket the run's first connection resumes.
#[derive(Clone, Debug)]
pub struct QuicTarget {
    /// Sent as SNI and verified; an IP address is verified as one, and sent as no SNI.
    pub server_name: String,
    /// `--0rtt`: send the first requests of a resumed connection in its first flight.
    pub zero_rtt: bool,
    /// Certificates verified: the full handshakes of the run (the pre-flight check's among
    /// them).
    pub full: Arc<AtomicU64>,
    /// One configuration for every connection of the run: rustls resumes a session only under
    /// the configuration's verifier and client credentials that made it.
    config: quinn::ClientConfig,
    /// The verifier's last refusal, explained: quinn's handshake error keeps only its text.
    refused: tls::Refusal,
}

impl QuicTarget {
    pub fn new(
        server_name: &str,
        insecure: bool,
        cacert: Option<&Path>,
        zero_rtt: bool,
    ) -> Result<QuicTarget, Error> {
        let full = Arc::new(AtomicU64::new(0));
        let refused = tls::Refusal::default();
        let verifier = tls::quic_verifier(insecure, cacert, Arc::clone(&full), refused.clone())?;
        let rustls = tls::quic_config(verifier, zero_rtt)?;
        let crypto = QuicClientConfig::try_from(rustls).map_err(|e| Error::Tls {
            host: server_name.to_string(),
            reason: format!("no TLS 1.3 cipher suite for QUIC: {e}"),
        })?;
        let mut config = quinn::ClientConfig::new(Arc::new(crypto));
        let mut transport = quinn::TransportConfig::default();
        // Room for every stream of `-m` and more, both ways: the server's grant is the limit.
        transport.max_concurrent_bidi_streams(1024u32.into());
        config.transport_config(Arc::new(transport));
        Ok(QuicTarget {
            server_name: server_name.to_string(),
            zero_rtt,
            full,
            config,
            refused,
        })
    }

    /// A client of connections to `addr` (a worker's; a script's `setup()` may point a thread
    /// elsewhere).
    pub fn client(&self, addr: SocketAddr) -> QuicClient {
        QuicClient {
            config: self.config.clone(),
            addr,
            server_name: self.server_name.clone(),
            zero_rtt: self.zero_rtt,
            refused: Arc::clone(&self.refused),
        }
    }
}

/// One worker's QUIC client.
pub struct QuicClient {
    config: quinn::ClientConfig,
    addr: SocketAddr,
    server_name: String,
    zero_rtt: bool,
    refused: tls::Refusal,
}

/// How a connection's handshake went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuicHandshake {
    /// Full or resumed: told apart by the count of verified certificates.
    Completed,
    /// Requests went in the first flight (0-RTT); whether the server took them is told later.
    ZeroRtt,
}

/// An open HTTP/3 connection.
pub struct Opened {
    pub sender: Sender,
    pub connection: quinn::Connection,
    /// The connection's UDP socket: kept open as long as the connection.
    pub endpoint: quinn::Endpoint,
    pub handshake: QuicHandshake,
    /// With 0-RTT: resolves to whether the server accepted the early requests.
    pub zero_rtt: Option<quinn::ZeroRttAccepted>,
    /// Set when h3's connection task ended: why, in words for the counters.
    pub closed: Rc<Cell<Option<&'static str>>>,
    /// Its socket's sends.
    pub sends: Arc<SendLog>,
}

impl QuicClient {
    /// The QUIC handshake alone, from `source` (`--bind`; else any address of the target's
    /// family), with `h3` offered: what the pre-flight check makes.
    pub async fn handshake(
        &self,
        source: Option<IpAddr>,
    ) -> Result<(quinn::Endpoint, quinn::Connection), ConnectFailure> {
        let (endpoint, connecting) = self.start(source, SendLog::new(0))?;
        let connection = connecting.await.map_err(|e| self.failed(e))?;
        Ok((endpoint, connection))
    }

    /// A failed handshake: the certificate refused, in the words of a TLS handshake over TCP,
    /// when the verifier refused it; else QUIC's error.
    fn failed(&self, e: quinn::ConnectionError) -> ConnectFailure {
        let refused = self.refused.lock().map(|mut r| r.take());
        match refused {
            Ok(Some(explained)) => ConnectFailure::Certificate(explained),
            _ => ConnectFailure::Quic(e),
        }
    }

    /// A UDP socket of its own, its sends noted in `sends`, and the handshake begun.
    fn start(
        &self,
        source: Option<IpAddr>,
        sends: Arc<SendLog>,
    ) -> Result<(quinn::Endpoint, quinn::Connecting), ConnectFailure> {
        let local = match (source, self.addr) {
            (Some(ip), _) => SocketAddr::new(ip, 0),
            (None, SocketAddr::V4(_)) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
            (None, SocketAddr::V6(_)) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
        };
        let socket = std::net::UdpSocket::bind(local).map_err(ConnectFailure::Socket)?;
        crate::sys::udp::ask_receive_buffer(&socket);
        let runtime = Arc::new(quinn::TokioRuntime);
        let socket =
            quinn::Runtime::wrap_udp_socket(&*runtime, socket).map_err(ConnectFailure::Socket)?;
        let endpoint = quinn::Endpoint::new_with_abstract_socket(
            quinn::EndpointConfig::default(),
            None,
            StampedSocket::new(socket, sends),
            runtime,
        )
        .map_err(ConnectFailure::Socket)?;
        let connecting = endpoint
            .connect_with(self.config.clone(), self.addr, &self.server_name)
            .map_err(|e| ConnectFailure::Refused(e.to_string()))?;
        Ok((endpoint, connecting))
    }

    /// Opens a QUIC connection from `source` and starts HTTP/3 on it, its connection task
    /// spawned on the worker's `LocalSet`; `streams` (`-m`) size its log of sends.
    pub async fn connect(
        &self,
        source: Option<IpAddr>,
        streams: usize,
    ) -> Result<Opened, ConnectFailure> {
        let sends = SendLog::new(streams);
        let (endpoint, connecting) = self.start(source, Arc::clone(&sends))?;
        let (connection, handshake, zero_rtt) = match self.zero_rtt {
            true => match connecting.into_0rtt() {
                Ok((connection, accepted)) => (connection, QuicHandshake::ZeroRtt, Some(accepted)),
                Err(connecting) => (
                    connecting.await.map_err(|e| self.failed(e))?,
                    QuicHandshake::Completed,
                    None,
                ),
            },
            false => (
                connecting.await.map_err(|e| self.failed(e))?,
                QuicHandshake::Completed,
                None,
            ),
        };
        let (mut driver, sender) = h3::client::new(h3_quinn::Connection::new(connection.clone()))
            .await
            .map_err(|e| ConnectFailure::H3(e.to_string()))?;
        let closed = Rc::new(Cell::new(None));
        let seen = Rc::clone(&closed);
        // Its end reaches every stream still open on it, which count it.
        tokio::task::spawn_local(async move {
            let error = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
            seen.set(Some(close_kind(&error)));
        });
        Ok(Opened {
            sender,
            connection,
            endpoint,
            handshake,
            zero_rtt,
            closed,
            sends,
        })
    }
}

/// A connection's packets, as quinn counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Packets {
    pub sent: u64,
    pub lost: u64,
    pub lost_bytes: u64,
    pub congestion_events: u64,
    pub datagrams_received: u64,
}

impl Packets {
    pub fn of(connection: &quinn::Connection) -> Packets {
        let stats = connection.stats();
        Packets {
            sent: stats.path.sent_packets,
            lost: stats.path.lost_packets,
            lost_bytes: stats.path.lost_bytes,
            congestion_events: stats.path.congestion_events,
            datagrams_received: stats.udp_rx.datagrams,
        }
    }
}
