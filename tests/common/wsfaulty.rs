//! In-process WebSocket servers that misbehave on purpose, for the faults the Node echo server
//! and nginx will not make on demand: a reset in the middle of a run, a close with a chosen
//! code, silence, frames the protocol forbids, replies split in continuation frames, and a
//! flood of pushes.
//!
//! The upgrade, the reading of the client's (masked) frames and the correct messages are
//! tokio-tungstenite's; the frames a library would not send (reserved bits, an unknown opcode,
//! a length the protocol forbids, fragments) are written by hand on the socket, between two of
//! tungstenite's writes (each flushed, so the bytes go out in order).
//!
//! Each server runs on its own thread with its own current-thread tokio runtime, listens on
//! 127.0.0.1:0, counts the connections upgraded and the messages received, and stops when
//! dropped (the runtime goes, and with it every connection).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use futures_util::{SinkExt, StreamExt};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// A frame the protocol forbids, sent instead of a connection's `after`-th reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// A text frame with RSV1 set, no extension negotiated.
    ReservedBits,
    /// Opcode 3, reserved for non-control frames not yet defined.
    BadOpcode,
    /// A 64-bit length with its most significant bit set (the protocol says it is 0), the
    /// payload never coming: a length no client can take on trust.
    LengthLie,
    /// A frame masked by the server (only a client masks).
    Masked,
}

/// How a [`WsFaulty`] answers. Every connection echoes its messages, except as said.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// The `after`-th message of each connection (1-based) is read, then the connection is
    /// reset (SO_LINGER 0: the client gets RST, not FIN). By hand: a library closes cleanly.
    Reset { after: u64 },
    /// The `after`-th message of each connection is answered by a close with `code`.
    CloseWith { code: u16, after: u64 },
    /// Upgrades and reads, never writes.
    NeverAnswers,
    /// The `after`-th message of each connection is answered by a [`Malformed`] frame. By hand.
    Malformed { frame: Malformed, after: u64 },
    /// Every reply split in `pieces` frames (a text frame without FIN, continuations, the
    /// last with FIN), a ping between the first two: the client must reassemble and match it.
    /// By hand: tungstenite sends a message in one frame.
    Fragmented { pieces: usize },
    /// Before each reply, `per_message` pushes (`push N`, answering nothing), the reply last.
    Flood { per_message: u64 },
    /// Pushes without end from the upgrade on, as fast as the socket takes them, the replies
    /// among them: the client never finds its socket empty.
    FloodForever,
}

/// A running fault server; stopped when dropped.
pub struct WsFaulty {
    addr: SocketAddr,
    counts: Arc<Counts>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct Counts {
    connections: AtomicU64,
    messages: AtomicU64,
    pushes: AtomicU64,
}

impl WsFaulty {
    pub fn start(fault: Fault) -> WsFaulty {
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        std_listener.set_nonblocking(true).expect("nonblocking");
        let addr = std_listener.local_addr().expect("local addr");
        let counts = Arc::new(Counts::default());
        let (shutdown, stop) = oneshot::channel();
        let thread_counts = Arc::clone(&counts);
        let thread = std::thread::Builder::new()
            .name(format!("wsfaulty-{fault:?}"))
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime");
                rt.block_on(async move {
                    let listener = TcpListener::from_std(std_listener).expect("tokio listener");
                    tokio::select! {
                        _ = stop => {}
                        () = accept_loop(listener, fault, thread_counts) => {}
                    }
                });
            })
            .expect("spawn server thread");
        WsFaulty {
            addr,
            counts,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// `ws://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }

    /// Connections upgraded so far.
    pub fn connections(&self) -> u64 {
        self.counts.connections.load(Ordering::SeqCst)
    }

    /// Client messages received so far.
    pub fn messages(&self) -> u64 {
        self.counts.messages.load(Ordering::SeqCst)
    }

    /// Pushes sent so far ([`Fault::Flood`]).
    pub fn pushes(&self) -> u64 {
        self.counts.pushes.load(Ordering::SeqCst)
    }
}

impl Drop for WsFaulty {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

async fn accept_loop(listener: TcpListener, fault: Fault, counts: Arc<Counts>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let counts = Arc::clone(&counts);
        tokio::spawn(async move {
            if let Ok(ws) = tokio_tungstenite::accept_async(stream).await {
                counts.connections.fetch_add(1, Ordering::SeqCst);
                match fault {
                    Fault::FloodForever => flood_forever(ws, &counts).await,
                    _ => serve(ws, fault, &counts).await,
                }
            }
        });
    }
}

/// One connection: read each message, answer it as `fault` says; ends when the client goes.
async fn serve(mut ws: WebSocketStream<TcpStream>, fault: Fault, counts: &Counts) {
    let mut count = 0u64;
    while let Some(Ok(message)) = ws.next().await {
        let payload = match message {
            Message::Text(text) => text.as_bytes().to_vec(),
            Message::Binary(bytes) => bytes.to_vec(),
            Message::Close(_) => break,
            _ => continue,
        };
        count += 1;
        counts.messages.fetch_add(1, Ordering::SeqCst);
        let answered = match fault {
            Fault::Reset { after } if count == after => {
                let _ = ws.get_ref().set_zero_linger();
                return;
            }
            Fault::CloseWith { code, after } if count == after => {
                let close = CloseFrame {
                    code: CloseCode::from(code),
                    reason: "fault".into(),
                };
                let _ = ws.send(Message::Close(Some(close))).await;
                // The client's close answer, then tungstenite ends the stream.
                while let Some(Ok(_)) = ws.next().await {}
                return;
            }
            Fault::NeverAnswers => Ok(()),
            Fault::Malformed { frame, after } if count == after => {
                let bytes = malformed(frame);
                let _ = ws.get_mut().write_all(&bytes).await;
                let _ = ws.get_mut().flush().await;
                // Whatever the client does next, nothing more is written.
                while let Some(Ok(_)) = ws.next().await {}
                return;
            }
            Fault::Fragmented { pieces } => fragmented(&mut ws, &payload, pieces).await,
            Fault::Flood { per_message } => {
                let mut sent = Ok(());
                for _ in 0..per_message {
                    let n = counts.pushes.fetch_add(1, Ordering::SeqCst);
                    // Buffered, flushed with the reply: a write per push would be the
                    // server's limit, not the client's.
                    sent = ws.feed(Message::text(format!("push {n}"))).await;
                    if sent.is_err() {
                        break;
                    }
                }
                match sent {
                    Ok(()) => echo(&mut ws, payload).await,
                    Err(e) => Err(e),
                }
            }
            _ => echo(&mut ws, payload).await,
        };
        if answered.is_err() {
            return;
        }
    }
}

/// [`Fault::FloodForever`]: a reader hands each message to the writer, which echoes it
/// before its next push.
async fn flood_forever(ws: WebSocketStream<TcpStream>, counts: &Counts) {
    let (mut sink, mut stream) = ws.split();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Message>();
    let reader = async move {
        while let Some(Ok(message)) = stream.next().await {
            if message.is_text() || message.is_binary() {
                counts.messages.fetch_add(1, Ordering::SeqCst);
                if tx.send(message).is_err() {
                    return;
                }
            }
        }
    };
    let writer = async {
        let mut buffered = 0u32;
        loop {
            let sent = match rx.try_recv() {
                Ok(reply) => sink.send(reply).await,
                Err(_) => {
                    let n = counts.pushes.load(Ordering::SeqCst);
                    let fed = sink.feed(Message::text(format!("push {n}"))).await;
                    counts.pushes.fetch_add(1, Ordering::SeqCst);
                    buffered += 1;
                    match fed {
                        Ok(()) if buffered >= 64 => {
                            buffered = 0;
                            let flushed = sink.flush().await;
                            // The other connections' upgrades and floods get their turn.
                            tokio::task::yield_now().await;
                            flushed
                        }
                        other => other,
                    }
                }
            };
            if sent.is_err() {
                return;
            }
        }
    };
    tokio::select! {
        () = reader => {}
        () = writer => {}
    }
}

async fn echo(
    ws: &mut WebSocketStream<TcpStream>,
    payload: Vec<u8>,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    match String::from_utf8(payload) {
        Ok(text) => ws.send(Message::text(text)).await,
        Err(e) => ws.send(Message::binary(e.into_bytes())).await,
    }
}

/// A server frame's head (unmasked): FIN, the opcode, the payload's length.
fn head(fin: bool, opcode: u8, len: usize) -> Vec<u8> {
    let mut out = vec![(u8::from(fin) << 7) | opcode];
    match len {
        0..=125 => out.push(len as u8),
        126..=0xFFFF => {
            out.push(126);
            out.extend_from_slice(&(len as u16).to_be_bytes());
        }
        _ => {
            out.push(127);
            out.extend_from_slice(&(len as u64).to_be_bytes());
        }
    }
    out
}

/// `payload` as `pieces` frames (text, continuations, FIN on the last), a ping after the
/// first: written on the socket in one write each.
async fn fragmented(
    ws: &mut WebSocketStream<TcpStream>,
    payload: &[u8],
    pieces: usize,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    let pieces = pieces.clamp(1, payload.len().max(1));
    let step = payload.len().div_ceil(pieces);
    let chunks: Vec<&[u8]> = payload.chunks(step.max(1)).collect();
    let last = chunks.len() - 1;
    for (i, chunk) in chunks.iter().enumerate() {
        let opcode = if i == 0 { 0x1 } else { 0x0 };
        let mut frame = head(i == last, opcode, chunk.len());
        frame.extend_from_slice(chunk);
        if i == 0 && last > 0 {
            // A control frame may come between the fragments of a message.
            frame.extend_from_slice(&head(true, 0x9, 4));
            frame.extend_from_slice(b"ping");
        }
        ws.get_mut().write_all(&frame).await?;
        ws.get_mut().flush().await?;
    }
    Ok(())
}

/// The bytes of a [`Malformed`] frame.
fn malformed(frame: Malformed) -> Vec<u8> {
    match frame {
        Malformed::ReservedBits => {
            let mut bytes = head(true, 0x1, 5);
            bytes[0] |= 0x40;
            bytes.extend_from_slice(b"hello");
            bytes
        }
        Malformed::BadOpcode => {
            let mut bytes = head(true, 0x3, 5);
            bytes.extend_from_slice(b"hello");
            bytes
        }
        Malformed::LengthLie => {
            let mut bytes = vec![0x81, 127];
            bytes.extend_from_slice(&(u64::MAX - 1).to_be_bytes());
            bytes.extend_from_slice(b"hello");
            bytes
        }
        Malformed::Masked => {
            let mut bytes = head(true, 0x1, 5);
            bytes[1] |= 0x80;
            let key = [1u8, 2, 3, 4];
            bytes.extend_from_slice(&key);
            bytes.extend(b"hello".iter().zip(key.iter().cycle()).map(|(b, k)| b ^ k));
            bytes
        }
    }
}
