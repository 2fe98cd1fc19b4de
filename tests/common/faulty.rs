//! In-process HTTP/1.1 servers that misbehave on purpose, for the failures nginx will not
//! produce on demand: a dropped keep-alive connection, a reset in the middle of a body, silence,
//! a status line that does not parse, periodic stalls, a slow server, every body framing a client must
//! handle (chunked with a trailer, close-delimited, no body on 204/304), and what HTTP forbids:
//! two responses to one request, conflicting Content-Length, a chunk size that is not hex, a
//! head larger than any client accepts.
//!
//! The behaviours that are correct HTTP and that hyper's HTTP/1.1 server writes byte for byte
//! as a hand-written server would (an announced close, silence, delays, 204/304, a huge head) run
//! on hyper ([`on_hyper`]). The others are written here by hand, on the socket: their point is
//! to break HTTP, or a framing, a split into TCP writes, a close or a reset that hyper never
//! produces. Each [`Behavior`] variant says which side serves it, and why when by hand.
//!
//! Each server runs on its own thread with its own current-thread tokio runtime, listens on
//! 127.0.0.1:0, counts the requests it received (once fully arrived, body included) and the
//! connections it accepted, and stops when dropped (the runtime goes, and with it every
//! connection).
//!
//! [`on_quinn`] is the HTTP/3 one: a server on quinn and h3 for the faults Caddy will not make
//! on demand (GOAWAY, stream resets, dying mid-run, an ALPN without `h3`).

mod on_hyper;
pub mod on_quinn;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::time::Instant;

/// Body of every ordinary (Content-Length) response.
pub const BODY: &[u8] = b"hello from a faulty server\n";

/// How a [`FaultyServer`] answers.
#[derive(Debug, Clone, Copy)]
pub enum Behavior {
    /// Keep-alive Content-Length responses; the `n`th response on a connection says
    /// `Connection: close` and the server closes after it. On hyper.
    CloseEvery(u64),
    /// As `CloseEvery`, but without the header: the client learns only from the FIN. By hand:
    /// hyper announces every close it makes with `Connection: close`.
    CloseEverySilently(u64),
    /// Every `n`th response (1 = all) announces 1000 bytes, sends part of them, then resets the
    /// connection (SO_LINGER 0, so the peer gets RST, not FIN). The others are normal. By hand:
    /// hyper does not reset a connection in the middle of a body.
    ResetMidResponse(u64),
    /// Accepts and reads, never writes. On hyper: the answer to a connection's first request
    /// never comes (and requests pipelined behind it are never read, so not counted).
    NeverAnswers,
    /// Answers `HTTP/1.1 abc` (a status that is not a number). By hand: breaks HTTP.
    MalformedStatus,
    /// Normal responses, except that a request arriving in `[k·period, k·period + hold)` since the
    /// server started is answered only at the end of that window. On hyper.
    Stall { period: Duration, hold: Duration },
    /// Answers `500` to every request arriving in `[k·period, k·period + fail)` since the
    /// server started, and normally otherwise: a server that fails now and then whatever its
    /// load. On hyper.
    FailsEvery { period: Duration, fail: Duration },
    /// `Transfer-Encoding: chunked` with a trailer, the chunks split awkwardly over several
    /// TCP writes. Keep-alive. By hand: hyper sends trailers only to a request with
    /// `TE: trailers`, and writes each chunk's size line, data and CRLF together.
    Chunked,
    /// No Content-Length: the body ends when the server closes (`Connection: close`). By hand:
    /// hyper chunks a body of unknown length for an HTTP/1.1 client.
    CloseDelimited,
    /// Alternates `204 No Content` (no length) and `304 Not Modified` carrying
    /// `Content-Length: 2048` but, as HTTP says, no body. Keep-alive. On hyper.
    NoBody,
    /// Normal keep-alive responses, each sent this long after its request arrived: a server
    /// that carries at most (connections / delay) requests a second. On hyper.
    Slow(Duration),
    /// Answers every request twice: `delay` after it arrives, the response; `gap` later a second
    /// one (in the same write when `gap` is zero). Keep-alive. By hand: breaks HTTP.
    TwoResponses { delay: Duration, gap: Duration },
    /// `Content-Length: 27` and `Content-Length: 30` in one response, then 30 bytes. By hand:
    /// breaks HTTP (hyper writes one length at most).
    ConflictingContentLength,
    /// Chunked, with a chunk size line `zz`. By hand: breaks HTTP.
    BadChunkSize,
    /// A response head of [`OVERSIZED_HEAD`] bytes (one 70 KiB header). On hyper.
    OversizedHeader,
    /// Every `n`th request on a connection is read in full, then the connection is reset
    /// (SO_LINGER 0) before any byte of its response; the others are answered normally. By
    /// hand: hyper does not reset a connection it has read a request from.
    ResetAfterRequest(u64),
    /// Answers a connection's first request, then, as soon as the first bytes of the next one
    /// arrive, answers the first again with a `500` and reads nothing more for `hold` (a large
    /// request's write is then still going on); then answers normally. By hand: breaks HTTP.
    LateSecondAnswer { hold: Duration },
}

impl Behavior {
    /// Whether [`on_hyper`] serves this behaviour rather than the hand-written [`serve`].
    fn on_hyper(self) -> bool {
        match self {
            Behavior::CloseEvery(_)
            | Behavior::NeverAnswers
            | Behavior::Stall { .. }
            | Behavior::FailsEvery { .. }
            | Behavior::NoBody
            | Behavior::Slow(_)
            | Behavior::OversizedHeader => true,
            Behavior::CloseEverySilently(_)
            | Behavior::ResetMidResponse(_)
            | Behavior::MalformedStatus
            | Behavior::Chunked
            | Behavior::CloseDelimited
            | Behavior::TwoResponses { .. }
            | Behavior::ConflictingContentLength
            | Behavior::BadChunkSize
            | Behavior::ResetAfterRequest(_)
            | Behavior::LateSecondAnswer { .. } => false,
        }
    }
}

/// Length of the [`Behavior::OversizedHeader`] head: above tsumo's 64 KiB limit.
pub const OVERSIZED_HEAD: usize = 70 * 1024;

/// The chunked body, as the client should reassemble it.
pub const CHUNKED_BODY: &str = "Wikipedia in\r\n\r\nchunks.";

/// The wire pieces of one chunked response body, each one TCP write: boundaries fall inside
/// chunk-size lines, inside data and inside CRLFs on purpose.
const CHUNKED_PIECES: &[&str] = &[
    "4\r\nWi",
    "ki\r\n5\r",
    "\npedia\r\nE\r\n in\r\n\r\nchunks.\r",
    "\n0\r\nX-Checksum: 42\r",
    "\n\r\n",
];

/// The body of close-delimited responses, also written in pieces.
pub const CLOSE_DELIMITED_BODY: &str = "no length, read until close\n";

/// A running misbehaving server. Dropping it stops it.
pub struct FaultyServer {
    addr: SocketAddr,
    counts: Arc<Counts>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct Counts {
    requests: Arc<AtomicU64>,
    connections: AtomicU64,
    /// The request target of every complete request, in order (hand-written servers only).
    targets: std::sync::Mutex<Vec<String>>,
}

impl FaultyServer {
    pub fn start(behavior: Behavior) -> FaultyServer {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let addr = std_listener.local_addr().expect("local addr");
        if let Behavior::LateSecondAnswer { .. } = behavior {
            // A small receive buffer (no autotuning) on every accepted socket: a large request
            // then cannot fit in the kernel's buffers, so its write is still going on when the
            // late answer comes.
            set_receive_buffer(&std_listener, 64 * 1024);
        }
        let counts = Arc::new(Counts::default());
        let (shutdown, stop) = oneshot::channel();
        let thread_counts = counts.clone();
        let thread = std::thread::Builder::new()
            .name(format!("faulty-{behavior:?}"))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(async move {
                    let listener = TcpListener::from_std(std_listener).expect("tokio listener");
                    let started = Instant::now();
                    tokio::select! {
                        _ = stop => {}
                        _ = accept_loop(listener, behavior, thread_counts, started) => {}
                    }
                });
            })
            .expect("spawn server thread");
        FaultyServer {
            addr,
            counts,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Complete requests received so far.
    pub fn requests(&self) -> u64 {
        self.counts.requests.load(Ordering::Relaxed)
    }

    /// The shared request counter itself, for a test that watches it while a run goes on.
    pub fn request_counter(&self) -> Arc<AtomicU64> {
        self.counts.requests.clone()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.counts.connections.load(Ordering::Relaxed)
    }

    /// The target (path) of every complete request received so far, in order of arrival; kept
    /// by the hand-written servers only.
    pub fn targets(&self) -> Vec<String> {
        self.counts
            .targets
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

impl Drop for FaultyServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept_loop(
    listener: TcpListener,
    behavior: Behavior,
    counts: Arc<Counts>,
    started: Instant,
) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // EMFILE and the like: back off instead of spinning.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        counts.connections.fetch_add(1, Ordering::Relaxed);
        let _ = stream.set_nodelay(true);
        let counts = counts.clone();
        tokio::spawn(async move {
            if behavior.on_hyper() {
                on_hyper::serve(stream, behavior, counts, started).await;
            } else {
                // An error ends this connection only; the client sees it as a close or a reset.
                let _ = serve(stream, behavior, counts).await;
            }
        });
    }
}

/// Reads requests one after another (pipelined ones included) and answers each per `behavior`,
/// one that is not [`Behavior::on_hyper`].
async fn serve(
    mut stream: TcpStream,
    behavior: Behavior,
    counts: Arc<Counts>,
) -> std::io::Result<()> {
    let mut reader = RequestReader::default();
    let mut answered: u64 = 0;
    loop {
        let Some(target) = reader.next_request(&mut stream).await? else {
            return Ok(());
        };
        counts
            .targets
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(target);
        counts.requests.fetch_add(1, Ordering::Relaxed);
        answered += 1;
        match behavior {
            Behavior::CloseEverySilently(n) => {
                stream.write_all(&ok_response()).await?;
                if answered.is_multiple_of(n) {
                    return Ok(());
                }
            }
            Behavior::ResetMidResponse(n) => {
                if answered.is_multiple_of(n) {
                    stream
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
                        .await?;
                    stream.write_all(&[b'x'; 300]).await?;
                    stream.flush().await?;
                    stream.set_zero_linger()?;
                    return Ok(()); // dropped here: RST
                }
                stream.write_all(&ok_response()).await?;
            }
            Behavior::MalformedStatus => {
                stream
                    .write_all(b"HTTP/1.1 abc\r\nContent-Length: 0\r\n\r\n")
                    .await?;
            }
            Behavior::Chunked => {
                stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n",
                    )
                    .await?;
                for piece in CHUNKED_PIECES {
                    stream.write_all(piece.as_bytes()).await?;
                    stream.flush().await?;
                    // Let each piece leave as its own segment.
                    tokio::task::yield_now().await;
                }
            }
            Behavior::CloseDelimited => {
                stream
                    .write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
                    .await?;
                let (a, b) = CLOSE_DELIMITED_BODY.split_at(7);
                stream.write_all(a.as_bytes()).await?;
                tokio::task::yield_now().await;
                stream.write_all(b.as_bytes()).await?;
                stream.shutdown().await?;
                return Ok(());
            }
            Behavior::TwoResponses { delay, gap } => {
                tokio::time::sleep(delay).await;
                if gap.is_zero() {
                    let mut both = ok_response();
                    both.extend_from_slice(&ok_response());
                    stream.write_all(&both).await?;
                } else {
                    stream.write_all(&ok_response()).await?;
                    tokio::time::sleep(gap).await;
                    stream.write_all(&ok_response()).await?;
                }
            }
            Behavior::ConflictingContentLength => {
                let mut r = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nContent-Length: 30\r\n\r\n",
                    BODY.len()
                )
                .into_bytes();
                r.extend_from_slice(BODY);
                r.extend_from_slice(b"xyz");
                stream.write_all(&r).await?;
            }
            Behavior::BadChunkSize => {
                stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
                    )
                    .await?;
            }
            Behavior::ResetAfterRequest(n) => {
                if answered.is_multiple_of(n) {
                    stream.set_zero_linger()?;
                    return Ok(()); // dropped here: RST, no byte of a response
                }
                stream.write_all(&ok_response()).await?;
            }
            Behavior::LateSecondAnswer { hold } => {
                stream.write_all(&ok_response()).await?;
                if answered == 1 {
                    reader.wait_for_more(&mut stream).await?;
                    stream
                        .write_all(
                            b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n",
                        )
                        .await?;
                    tokio::time::sleep(hold).await;
                }
            }
            other => unreachable!("{other:?} is served on hyper"),
        }
    }
}

/// SO_RCVBUF on a listening socket, inherited by the sockets it accepts.
fn set_receive_buffer(listener: &std::net::TcpListener, bytes: libc::c_int) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid socket fd and a c_int option value of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&bytes as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "SO_RCVBUF: {}", std::io::Error::last_os_error());
}

fn ok_response() -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
        BODY.len()
    )
    .into_bytes();
    r.extend_from_slice(BODY);
    r
}

/// Buffers a connection's bytes and splits them into requests (headers + Content-Length body).
#[derive(Default)]
struct RequestReader {
    buf: Vec<u8>,
}

impl RequestReader {
    /// The next complete request's target, or `None` at a clean end of stream.
    async fn next_request(&mut self, stream: &mut TcpStream) -> std::io::Result<Option<String>> {
        loop {
            if let Some((len, target)) = self.complete_request()? {
                self.buf.drain(..len);
                return Ok(Some(target));
            }
            let mut chunk = [0u8; 16 * 1024];
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(None);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Waits until at least one byte more than a complete request has arrived (the start of
    /// the next one).
    async fn wait_for_more(&mut self, stream: &mut TcpStream) -> std::io::Result<()> {
        while self.buf.is_empty() {
            let mut chunk = [0u8; 1024];
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
        Ok(())
    }

    fn complete_request(&self) -> std::io::Result<Option<(usize, String)>> {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut headers);
        let head_len = match req.parse(&self.buf) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(e) => return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        };
        let body_len = req
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-length"))
            .and_then(|h| {
                std::str::from_utf8(h.value)
                    .ok()?
                    .trim()
                    .parse::<usize>()
                    .ok()
            })
            .unwrap_or(0);
        let target = req.path.unwrap_or_default().to_string();
        Ok((self.buf.len() >= head_len + body_len).then_some((head_len + body_len, target)))
    }
}
