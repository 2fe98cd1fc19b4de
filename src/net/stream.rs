//! A connection's byte stream: plain TCP or TLS, chosen once per connection (an enum, not a trait
//! object, so the hot path has no dynamic dispatch).

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use super::stamp::Stamped;

/// Where and how to connect: the address, TLS settings for https, and the source address
/// (`--bind`; `None`: the kernel chooses).
#[derive(Clone)]
pub struct Endpoint {
    pub addr: SocketAddr,
    pub tls: Option<TlsTarget>,
    pub source: Option<IpAddr>,
}

/// TLS settings of an https endpoint.
#[derive(Clone)]
pub struct TlsTarget {
    pub connector: TlsConnector,
    pub server_name: ServerName<'static>,
}

impl TlsTarget {
    pub fn new(config: Arc<rustls::ClientConfig>, server_name: ServerName<'static>) -> Self {
        TlsTarget {
            connector: TlsConnector::from(config),
            server_name,
        }
    }
}

/// How a connection attempt failed.
#[derive(Debug)]
pub enum ConnectError {
    /// The TCP connect failed.
    Tcp(io::Error),
    /// The TLS handshake failed.
    Tls(io::Error),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Tcp(e) => write!(f, "{e}"),
            ConnectError::Tls(e) => write!(f, "{}", crate::net::tls::explain_handshake_error(e)),
        }
    }
}

/// An open connection.
pub enum Stream {
    Plain(Stamped),
    Tls(Box<TlsStream<Stamped>>),
}

/// Whether a completed TLS handshake resumed a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handshake {
    None,
    Full,
    Resumed,
}

impl Endpoint {
    /// The same endpoint, connected to from `source`.
    pub fn from_source(&self, source: Option<IpAddr>) -> Endpoint {
        Endpoint {
            source,
            ..self.clone()
        }
    }

    /// Opens a connection from [`Endpoint::source`]: see [`Endpoint::connect_from`].
    pub async fn connect(&self) -> Result<(Stream, Handshake), ConnectError> {
        self.connect_from(self.source).await
    }

    /// Opens a connection from `source` (TCP_NODELAY set) and, for https, completes the TLS
    /// handshake.
    pub async fn connect_from(
        &self,
        source: Option<IpAddr>,
    ) -> Result<(Stream, Handshake), ConnectError> {
        let tcp = self.tcp_from(source).await?;
        self.secure(tcp).await
    }

    /// The TCP half of [`Endpoint::connect_from`], for a caller that times each half apart.
    pub async fn tcp_from(&self, source: Option<IpAddr>) -> Result<TcpStream, ConnectError> {
        let tcp = super::source::connect(self.addr, source)
            .await
            .map_err(ConnectError::Tcp)?;
        // Without NODELAY, small requests wait for the previous ACK (Nagle) and latency lies.
        tcp.set_nodelay(true).map_err(ConnectError::Tcp)?;
        Ok(tcp)
    }

    /// The TLS half of [`Endpoint::connect_from`]: the handshake for https, nothing for http.
    pub async fn secure(&self, tcp: TcpStream) -> Result<(Stream, Handshake), ConnectError> {
        // Stamped from the first byte, so that the handshake's reads are stamped as the
        // responses' are.
        let tcp = Stamped::new(tcp);
        match &self.tls {
            None => Ok((Stream::Plain(tcp), Handshake::None)),
            Some(tls) => {
                let stream = tls
                    .connector
                    .connect(tls.server_name.clone(), tcp)
                    .await
                    .map_err(ConnectError::Tls)?;
                let kind = match stream.get_ref().1.handshake_kind() {
                    Some(rustls::HandshakeKind::Resumed) => Handshake::Resumed,
                    _ => Handshake::Full,
                };
                Ok((Stream::Tls(Box::new(stream)), kind))
            }
        }
    }
}

impl Stream {
    /// The kernel's receive time (CLOCK_REALTIME ns) of the last segment the last read on this
    /// stream consumed (under TLS: the last read rustls made), if the kernel stamped it.
    #[inline]
    pub fn last_rx(&self) -> Option<u64> {
        match self {
            Stream::Plain(s) => s.last_rx(),
            Stream::Tls(s) => s.get_ref().0.last_rx(),
        }
    }

    /// The protocol the server chose in the TLS handshake (ALPN), if any.
    pub fn alpn(&self) -> Option<&[u8]> {
        match self {
            Stream::Plain(_) => None,
            Stream::Tls(s) => s.get_ref().1.alpn_protocol(),
        }
    }
}

impl AsyncRead for Stream {
    #[inline]
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    #[inline]
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    #[inline]
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}
