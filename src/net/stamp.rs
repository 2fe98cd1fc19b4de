//! A TCP stream whose reads carry the kernel's receive timestamp.
//!
//! Why: a response is complete when its last byte reached this host, not when tsumo's thread
//! woke to read it; on a busy machine the two are milliseconds apart, and a user-space stamp
//! charges that wake-up to the server. The socket asks for software receive timestamps
//! (`SO_TIMESTAMPING` with `SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE`) and every
//! read is a `recvmsg` whose control message holds, for TCP, the arrival time of the last segment
//! that read consumed. [`Stamped::last_rx`] keeps it for whoever completes a message with those
//! bytes: the HTTP/1.1 parser, rustls above it, hyper's frame observer, tungstenite.
//!
//! The stamp is on CLOCK_REALTIME, as the kernel keeps it; [`crate::timing::clock::from_realtime`]
//! puts it on the run's monotonic clock at the moment it is used.
//!
//! Whether a run stamps in the kernel is decided once per process ([`kernel_stamps`]): a socket
//! that refuses the option (another kernel, a sandbox) turns it off for every connection, so one
//! histogram never mixes kernel and user-space times.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

/// `SO_TIMESTAMPING` (and its control message, `SCM_TIMESTAMPING`) on Linux's generic socket
/// numbering (x86_64, aarch64); libc does not export it for these targets.
const SO_TIMESTAMPING: libc::c_int = 37;
const SCM_TIMESTAMPING: libc::c_int = SO_TIMESTAMPING;
/// Room for one `scm_timestamping` (three timespecs) with its header, aligned.
const CONTROL_LEN: usize = 64;

pub use crate::stats::http::split::Timestamps;

/// 0: not decided yet; 1: kernel; 2: user.
static DECIDED: AtomicU8 = AtomicU8::new(0);

/// Whether this process stamps responses in the kernel: decided at the first call, by asking a
/// fresh TCP socket for the option; `TSUMO_TIMESTAMPS=user` in the environment chooses user-space
/// stamps (every other load generator's way), to compare or to check the fallback.
pub fn kernel_stamps() -> Timestamps {
    match DECIDED.load(Ordering::Relaxed) {
        1 => Timestamps::Kernel,
        2 => Timestamps::User,
        _ => {
            let decided = if !user_asked() && probe() {
                Timestamps::Kernel
            } else {
                Timestamps::User
            };
            let code = if decided == Timestamps::Kernel { 1 } else { 2 };
            // A concurrent first call decides the same.
            let _ = DECIDED.compare_exchange(0, code, Ordering::Relaxed, Ordering::Relaxed);
            match DECIDED.load(Ordering::Relaxed) {
                1 => Timestamps::Kernel,
                _ => Timestamps::User,
            }
        }
    }
}

/// `TSUMO_TIMESTAMPS=user` in the environment: user-space stamps asked for (a report says so,
/// rather than that the kernel's were not available).
pub fn user_asked() -> bool {
    std::env::var_os("TSUMO_TIMESTAMPS").is_some_and(|v| v == "user")
}

/// Whether a TCP socket accepts `SO_TIMESTAMPING`. The socket that accepted it stays open for
/// the process's life: the kernel starts stamping packets a moment after the first socket in
/// the system asks (a deferred switch) and stops when the last one closes, so with it open the
/// stamping is on before the first connection and stays on between reconnects.
fn probe() -> bool {
    // SAFETY: socket() has no memory arguments.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return false;
    }
    if enable(fd).is_ok() {
        // Kept open on purpose (see above).
        return true;
    }
    // SAFETY: fd is ours and open.
    unsafe { libc::close(fd) };
    false
}

fn enable(fd: libc::c_int) -> io::Result<()> {
    let flags: libc::c_uint = libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE;
    // SAFETY: a valid descriptor, and a pointer to a c_uint that outlives the call.
    let set = unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            SO_TIMESTAMPING,
            std::ptr::addr_of!(flags).cast(),
            std::mem::size_of::<libc::c_uint>() as libc::socklen_t,
        )
    };
    if set != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A connected TCP stream that keeps the kernel's receive time of its last read.
pub struct Stamped {
    tcp: TcpStream,
    kernel: bool,
    /// CLOCK_REALTIME ns of the last segment the last read consumed; 0: none (user-space
    /// stamps, or a read the kernel gave no stamp).
    last_rx_realtime: u64,
}

impl Stamped {
    /// Wraps `tcp`, asking for receive timestamps when the process stamps in the kernel. A
    /// socket that refuses the option is read with user-space times.
    pub fn new(tcp: TcpStream) -> Stamped {
        let kernel = kernel_stamps() == Timestamps::Kernel && enable(tcp.as_raw_fd()).is_ok();
        Stamped {
            tcp,
            kernel,
            last_rx_realtime: 0,
        }
    }

    /// The kernel's receive time (CLOCK_REALTIME ns) of the last segment the last read consumed,
    /// if the kernel gave one.
    #[inline]
    pub fn last_rx(&self) -> Option<u64> {
        (self.last_rx_realtime != 0).then_some(self.last_rx_realtime)
    }

    pub fn get_ref(&self) -> &TcpStream {
        &self.tcp
    }
}

/// One `recvmsg` into `buf`: the bytes read and the software receive stamp (CLOCK_REALTIME ns),
/// if the control message held one.
fn recv_stamped(fd: libc::c_int, buf: &mut [MaybeUninit<u8>]) -> io::Result<(usize, u64)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // u64s: the control buffer must be aligned for cmsghdr.
    let mut control = [0u64; CONTROL_LEN / 8];
    // SAFETY: zeroed msghdr is a valid "no name, no control" header; fields are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = CONTROL_LEN as _;
    // SAFETY: msg points at a live iovec over `buf` and a live control buffer of its stated
    // length; the kernel writes at most those lengths.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = 0;
    // SAFETY: the kernel filled msg's control buffer and set msg_controllen; the CMSG macros walk
    // only within it.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == SCM_TIMESTAMPING {
                // scm_timestamping: ts[0] is the software stamp.
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::timespec>());
                stamp = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok((n as usize, stamp))
}

impl AsyncRead for Stamped {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.kernel {
            return Pin::new(&mut this.tcp).poll_read(cx, buf);
        }
        let fd = this.tcp.as_raw_fd();
        loop {
            ready!(this.tcp.poll_read_ready(cx))?;
            // SAFETY: recvmsg writes only initialized bytes into what it reports as read.
            let unfilled = unsafe { buf.unfilled_mut() };
            let len = unfilled.len();
            let mut got = None;
            // A read shorter than asked drained the socket: its readiness is cleared (as tokio's
            // own read does), so the next read waits for the reactor instead of a recvmsg that
            // can only say EAGAIN. tokio clears readiness only on WouldBlock, against the event
            // it saw before the call, so the closure answers WouldBlock with the bytes kept.
            let result = this.tcp.try_io(Interest::READABLE, || {
                let (n, stamp) = recv_stamped(fd, unfilled)?;
                got = Some((n, stamp));
                match n {
                    n if n > 0 && n < len => Err(io::ErrorKind::WouldBlock.into()),
                    _ => Ok(()),
                }
            });
            match (got, result) {
                (Some((n, stamp)), _) => {
                    // SAFETY: the kernel wrote n bytes at the start of the unfilled part.
                    unsafe { buf.assume_init(n) };
                    buf.advance(n);
                    if n > 0 {
                        this.last_rx_realtime = stamp;
                    }
                    return Poll::Ready(Ok(()));
                }
                (None, Err(e)) if e.kind() != io::ErrorKind::WouldBlock => {
                    return Poll::Ready(Err(e))
                }
                // Readiness was cleared: wait for the next.
                (None, _) => continue,
            }
        }
    }
}

impl AsyncWrite for Stamped {
    #[inline]
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write(cx, buf)
    }

    #[inline]
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().tcp).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().tcp).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A read on loopback is stamped by the kernel between the write and the read.
    #[test]
    fn a_loopback_read_carries_the_kernels_receive_time() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let client = TcpStream::connect(addr).await.unwrap();
            let (mut server, _) = listener.accept().await.unwrap();
            let mut stamped = Stamped::new(client);
            if kernel_stamps() == Timestamps::User {
                return; // not this kernel: the fallback is tested elsewhere
            }
            // The kernel's switch to stamping is deferred a moment after the first socket asks.
            std::thread::sleep(std::time::Duration::from_millis(20));
            let real = crate::timing::clock::realtime_now;
            let before = real();
            server.write_all(b"hello").await.unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
            let mut buf = [0u8; 16];
            let n = stamped.read(&mut buf).await.unwrap();
            let after = real();
            assert_eq!(&buf[..n], b"hello");
            let at = stamped.last_rx().expect("a kernel stamp");
            assert!(before <= at && at <= after, "{before} <= {at} <= {after}");
            // Stamped when it arrived, not when it was read 20 ms later.
            assert!(after - at >= 15_000_000, "{}", after - at);
        });
    }
}
