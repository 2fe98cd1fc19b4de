//! When a QUIC connection's datagrams left: its UDP socket, wrapped.
//!
//! An HTTP/3 request is handed to h3 and quinn in tsumo's connection task; h3 writes it into
//! quinn's stream, and quinn's connection driver, a task of its own, packs it into a datagram
//! and sends it. After a stall of tsumo's (a SIGSTOP, a hog on its core) the requests due in it
//! are handed over in a burst and leave milliseconds later; stamped at the hand-off, that wait
//! would read as the server's. So, as HTTP/2's frame log does for hyper's writes, [`SendLog`]
//! notes the first datagram sent at or after each hand-off, and a request's send is that one
//! when it came more than `stats::http::split::HELD_UP` later (`stats::http::split::send_stamp`).
//!
//! The stamp is read just before the send (`sendmsg`), as HTTP/1.1 stamps before its write: the
//! datagram is with the kernel once that returns. The clock is read only for a send that follows
//! a hand-off not yet stamped: one read per batch of datagrams at most, none for quinn's
//! acknowledgements and retransmissions between requests. A datagram may carry several streams'
//! frames, or none of this request's (an acknowledgement sent first): the first send at or after
//! the hand-off is never later than the one that carried the request's bytes.
//!
//! quinn wants a socket it may use from any thread; the worker's runtime is single-threaded, so
//! every access is in fact from one thread, and relaxed atomics are plain loads and stores.

use std::fmt;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{Context, Poll};

use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};

use crate::timing::clock::{self, Nanos};

/// The fewest stamped sends kept, how many a stream slot adds, and the most: a stream reads its
/// send's stamp when its response ended, and meanwhile its connection stamps at most one send
/// per other request handed over.
const SENDS_KEPT: usize = 64;
const SENDS_KEPT_PER_STREAM: usize = 4;
const MOST_KEPT: usize = 4096;

/// One connection's sends, as its socket saw them.
pub struct SendLog {
    /// Sends (`try_send` calls that succeeded, each one or more datagrams) so far.
    sends: AtomicU64,
    /// A request was handed over since the last stamped send: stamp the next.
    armed: AtomicBool,
    /// Stamped sends: send `n` at `n % len`, as (n + 1, when it began).
    stamps: Box<[(AtomicU64, AtomicU64)]>,
}

impl fmt::Debug for SendLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendLog")
            .field("sends", &self.sends.load(Relaxed))
            .finish()
    }
}

impl SendLog {
    /// `streams`: the connection's streams at once (`-m`), which size the stamps kept.
    pub fn new(streams: usize) -> Arc<SendLog> {
        let kept = SENDS_KEPT.max(streams.saturating_mul(SENDS_KEPT_PER_STREAM).min(MOST_KEPT));
        Arc::new(SendLog {
            sends: AtomicU64::new(0),
            armed: AtomicBool::new(false),
            stamps: (0..kept)
                .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
                .collect(),
        })
    }

    /// A request is handed over now: the number of the send it leaves in, or one before it.
    #[inline]
    pub fn handed_off(&self) -> u64 {
        self.armed.store(true, Relaxed);
        self.sends.load(Relaxed)
    }

    /// When send number `send` began, if it was the first after a hand-off and is still kept.
    #[inline]
    pub fn sent_at(&self, send: u64) -> Option<Nanos> {
        let (tag, at) = &self.stamps[(send % self.stamps.len() as u64) as usize];
        (tag.load(Relaxed) == send + 1).then(|| at.load(Relaxed))
    }

    /// A send is about to begin: its stamp, if a hand-off waits for one.
    #[inline]
    fn sending(&self) -> Option<Nanos> {
        self.armed.load(Relaxed).then(clock::now)
    }

    /// A send succeeded, stamped `stamp` when it began.
    #[inline]
    fn sent(&self, stamp: Option<Nanos>) {
        let send = self.sends.load(Relaxed);
        if let Some(at) = stamp {
            let (tag, slot) = &self.stamps[(send % self.stamps.len() as u64) as usize];
            slot.store(at, Relaxed);
            tag.store(send + 1, Relaxed);
            self.armed.store(false, Relaxed);
        }
        self.sends.store(send + 1, Relaxed);
    }
}

/// A UDP socket of quinn's runtime whose sends are noted in a [`SendLog`].
#[derive(Debug)]
pub struct StampedSocket {
    inner: Arc<dyn AsyncUdpSocket>,
    log: Arc<SendLog>,
}

impl StampedSocket {
    pub fn new(inner: Arc<dyn AsyncUdpSocket>, log: Arc<SendLog>) -> Arc<StampedSocket> {
        Arc::new(StampedSocket { inner, log })
    }
}

impl AsyncUdpSocket for StampedSocket {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        Arc::clone(&self.inner).create_io_poller()
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        let stamp = self.log.sending();
        let sent = self.inner.try_send(transmit);
        // Not sent (it would block, or failed): quinn sends it again or drops it, and the hand-off
        // waits for the next that goes.
        if sent.is_ok() {
            self.log.sent(stamp);
        }
        sent
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        self.inner.poll_recv(cx, bufs, meta)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn max_transmit_segments(&self) -> usize {
        self.inner.max_transmit_segments()
    }

    fn max_receive_segments(&self) -> usize {
        self.inner.max_receive_segments()
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::http::split::{send_stamp, HELD_UP};
    use std::net::{Ipv4Addr, UdpSocket};
    use std::sync::Mutex;
    use std::time::Duration;

    /// A socket that sends nothing: it says "would block" while told to, and keeps what it sent.
    #[derive(Debug, Default)]
    struct Fake {
        blocked: AtomicBool,
        sent: Mutex<Vec<Vec<u8>>>,
    }

    #[derive(Debug)]
    struct Ready;

    impl UdpPoller for Ready {
        fn poll_writable(self: Pin<&mut Self>, _: &mut Context) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    impl AsyncUdpSocket for Fake {
        fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
            Box::pin(Ready)
        }

        fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
            if self.blocked.load(Relaxed) {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let mut sent = self.sent.lock().map_err(|_| io::ErrorKind::Other)?;
            sent.push(transmit.contents.to_vec());
            Ok(())
        }

        fn poll_recv(
            &self,
            _: &mut Context,
            _: &mut [IoSliceMut<'_>],
            _: &mut [RecvMeta],
        ) -> Poll<io::Result<usize>> {
            Poll::Pending
        }

        fn local_addr(&self) -> io::Result<SocketAddr> {
            Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, 4433)))
        }
    }

    fn send(socket: &StampedSocket, bytes: &[u8]) -> io::Result<()> {
        socket.try_send(&Transmit {
            destination: SocketAddr::from((Ipv4Addr::LOCALHOST, 443)),
            ecn: None,
            contents: bytes,
            segment_size: None,
            src_ip: None,
        })
    }

    fn stamped(fake: &Arc<Fake>, streams: usize) -> (StampedSocket, Arc<SendLog>) {
        let log = SendLog::new(streams);
        let inner: Arc<dyn AsyncUdpSocket> = Arc::clone(fake) as Arc<dyn AsyncUdpSocket>;
        let socket = StampedSocket {
            inner,
            log: Arc::clone(&log),
        };
        (socket, log)
    }

    #[test]
    fn a_request_held_up_after_its_hand_off_is_sent_when_its_datagram_went() {
        let fake = Arc::new(Fake::default());
        let (socket, log) = stamped(&fake, 4);
        // An acknowledgement before the hand-off: not stamped, and not the request's.
        send(&socket, b"ack").unwrap();
        assert_eq!(log.sent_at(0), None);
        let handed = clock::now();
        let send_no = log.handed_off();
        assert_eq!(send_no, 1);
        // tsumo stalls between the hand-off and quinn's send (a SIGSTOP, a preemption).
        std::thread::sleep(Duration::from_millis(3));
        // The socket is full once: that try is no send, and the stamp waits for the one that is.
        fake.blocked.store(true, Relaxed);
        assert!(send(&socket, b"request").is_err());
        assert_eq!(log.sent_at(send_no), None);
        fake.blocked.store(false, Relaxed);
        let before = clock::now();
        send(&socket, b"request").unwrap();
        let after = clock::now();
        let at = log
            .sent_at(send_no)
            .expect("the first send after the hand-off is stamped");
        assert!((before..=after).contains(&at), "{before} {at} {after}");
        // Held up more than 200 µs: the send is the datagram's, not the hand-off's.
        assert!(at - handed > HELD_UP);
        assert_eq!(send_stamp(handed, log.sent_at(send_no).unwrap_or(0)), at);
        // The sends after it (acknowledgements, retransmissions) read no clock, until the next
        // hand-off.
        send(&socket, b"ack").unwrap();
        send(&socket, b"ack").unwrap();
        assert_eq!(log.sent_at(send_no + 1), None);
        assert_eq!(log.sent_at(send_no + 2), None);
        assert_eq!(log.sent_at(send_no), Some(at));
        assert_eq!(fake.sent.lock().unwrap().len(), 4);
    }

    #[test]
    fn a_send_soon_after_its_hand_off_keeps_the_hand_off() {
        let fake = Arc::new(Fake::default());
        let (socket, log) = stamped(&fake, 4);
        // Two requests handed over together leave in the same send.
        let handed = clock::now();
        let first = log.handed_off();
        let second = log.handed_off();
        assert_eq!(first, second);
        send(&socket, b"two requests").unwrap();
        let at = log.sent_at(first).expect("stamped");
        assert!(at >= handed);
        // Within 200 µs (a send on a quiet machine takes a few µs): the hand-off stands.
        if at - handed <= HELD_UP {
            assert_eq!(send_stamp(handed, at), handed);
        }
        // A send not yet made, or stamped so long ago it was overwritten, is unknown: the
        // hand-off stands (send_stamp of 0).
        assert_eq!(log.sent_at(first + 1), None);
        for _ in 0..SENDS_KEPT + 1 {
            log.handed_off();
            send(&socket, b"request").unwrap();
        }
        assert_eq!(log.sent_at(first), None);
        assert_eq!(send_stamp(handed, 0), handed);
    }

    #[test]
    fn a_real_socket_sends_through_the_wrapper() {
        let receiver = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let to = receiver.local_addr().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let runtime = quinn::TokioRuntime;
            let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
            let inner = quinn::Runtime::wrap_udp_socket(&runtime, socket).unwrap();
            let log = SendLog::new(1);
            let stamped = StampedSocket::new(inner, Arc::clone(&log));
            let mut poller = Arc::clone(&stamped).create_io_poller();
            let n = log.handed_off();
            // As quinn's driver sends: writable first, then the send (tokio's socket would block
            // until its readiness is known).
            loop {
                std::future::poll_fn(|cx| poller.as_mut().poll_writable(cx))
                    .await
                    .unwrap();
                let transmit = Transmit {
                    destination: to,
                    ecn: None,
                    contents: b"hello",
                    segment_size: None,
                    src_ip: None,
                };
                match stamped.try_send(&transmit) {
                    Ok(()) => break,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => panic!("{e}"),
                }
            }
            assert!(log.sent_at(n).is_some());
        });
        let mut buf = [0; 16];
        let (n, _) = receiver.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"hello");
    }
}
