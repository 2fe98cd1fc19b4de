//! Sub-millisecond waits for intended send times.
//!
//! tokio's timer wheel has 1 ms resolution and wakes 1–2 ms late; with coordinated-omission
//! correction that lateness would land in every recorded latency (wrk2's ~1 ms floor). Each worker
//! therefore owns one `timerfd` armed at the earliest pending deadline (absolute, nanosecond
//! precision, CLOCK_MONOTONIC), registered with tokio's reactor through `AsyncFd`. Waiting tasks
//! sit in a min-heap; when the timerfd fires, the driver task wakes every due task and re-arms the
//! timerfd for the next deadline. No spinning: an idle worker sleeps in epoll.

use std::cell::{Cell, RefCell};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use super::clock::{self, Nanos};

struct Waiter {
    deadline: Nanos,
    seq: u64,
    waker: Waker,
}

impl PartialEq for Waiter {
    fn eq(&self, other: &Self) -> bool {
        (self.deadline, self.seq) == (other.deadline, other.seq)
    }
}
impl Eq for Waiter {}
impl PartialOrd for Waiter {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiter {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.deadline, self.seq).cmp(&(other.deadline, other.seq))
    }
}

/// One worker's precise timer. Create it inside the worker's runtime, spawn [`Pacer::drive`] on
/// the worker's `LocalSet`, then `sleep_until` from any task of that worker.
pub struct Pacer {
    fd: AsyncFd<OwnedFd>,
    waiters: RefCell<BinaryHeap<Reverse<Waiter>>>,
    /// Deadline the timerfd is armed for; 0 when disarmed.
    armed: Cell<Nanos>,
    seq: Cell<u64>,
}

impl Pacer {
    /// Creates the timerfd and registers it with the current tokio runtime.
    pub fn new() -> io::Result<Rc<Pacer>> {
        // SAFETY: plain syscall; the result is checked.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: raw is a fresh, owned file descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: the fd is owned by the AsyncFd and stays open as long as it is registered.
        let fd = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }
            .map_err(io::Error::from)?;
        Ok(Rc::new(Pacer {
            fd,
            waiters: RefCell::new(BinaryHeap::new()),
            armed: Cell::new(0),
            seq: Cell::new(0),
        }))
    }

    /// A future that completes at `deadline` (CLOCK_MONOTONIC ns), at once if it has passed.
    pub fn sleep_until(self: &Rc<Self>, deadline: Nanos) -> PaceSleep {
        PaceSleep {
            pacer: Rc::clone(self),
            deadline,
            registered: false,
        }
    }

    /// Wakes due waiters whenever the timerfd fires. Runs for the worker's lifetime.
    pub async fn drive(self: Rc<Self>) {
        loop {
            let mut guard = match self.fd.readable().await {
                Ok(guard) => guard,
                Err(_) => return,
            };
            let mut expirations = [0u8; 8];
            // SAFETY: reading 8 bytes into an 8-byte buffer from our own timerfd.
            let _ = unsafe {
                libc::read(
                    self.fd.get_ref().as_raw_fd(),
                    expirations.as_mut_ptr().cast(),
                    8,
                )
            };
            guard.clear_ready();
            self.armed.set(0);
            self.wake_due();
        }
    }

    fn wake_due(&self) {
        let now = clock::now();
        let next = {
            let mut waiters = self.waiters.borrow_mut();
            while let Some(Reverse(top)) = waiters.peek() {
                if top.deadline > now {
                    break;
                }
                if let Some(Reverse(w)) = waiters.pop() {
                    w.waker.wake();
                }
            }
            waiters.peek().map(|Reverse(w)| w.deadline)
        };
        if let Some(deadline) = next {
            self.arm(deadline);
        }
    }

    fn register(&self, deadline: Nanos, waker: Waker) {
        let seq = self.seq.get();
        self.seq.set(seq + 1);
        self.waiters.borrow_mut().push(Reverse(Waiter {
            deadline,
            seq,
            waker,
        }));
        let armed = self.armed.get();
        if armed == 0 || deadline < armed {
            self.arm(deadline);
        }
    }

    fn arm(&self, deadline: Nanos) {
        let spec = libc::itimerspec {
            it_interval: clock::timespec(0),
            it_value: clock::timespec(deadline.max(1)),
        };
        // SAFETY: valid fd and itimerspec; failure only leaves the timer unarmed, and the
        // waiters are then woken by the next arm (never by a dangling pointer).
        let rc = unsafe {
            libc::timerfd_settime(
                self.fd.get_ref().as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        if rc == 0 {
            self.armed.set(deadline.max(1));
        }
    }
}

/// Completes at its deadline; see [`Pacer::sleep_until`].
pub struct PaceSleep {
    pacer: Rc<Pacer>,
    deadline: Nanos,
    registered: bool,
}

impl Future for PaceSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if clock::now() >= self.deadline {
            return Poll::Ready(());
        }
        if !self.registered {
            self.registered = true;
            self.pacer.register(self.deadline, cx.waker().clone());
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_within_a_fraction_of_a_millisecond() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        let lateness = local.block_on(&rt, async {
            let pacer = Pacer::new().unwrap();
            tokio::task::spawn_local(Rc::clone(&pacer).drive());
            let mut worst = 0;
            let start = clock::now();
            for i in 1..=200u64 {
                let deadline = start + i * 250_000;
                pacer.sleep_until(deadline).await;
                worst = worst.max(clock::now() - deadline);
            }
            worst
        });
        // tokio's own timers would be ~1 ms late; a loaded CI machine may add some jitter.
        assert!(lateness < 5_000_000, "worst lateness {lateness} ns");
    }

    #[test]
    fn many_waiters_each_woken() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        let woken = local.block_on(&rt, async {
            let pacer = Pacer::new().unwrap();
            tokio::task::spawn_local(Rc::clone(&pacer).drive());
            let start = clock::now();
            let mut handles = Vec::new();
            // Deadlines registered out of order must still all fire.
            for i in (0..50u64).rev() {
                let p = Rc::clone(&pacer);
                handles.push(tokio::task::spawn_local(async move {
                    p.sleep_until(start + 1_000_000 + i * 100_000).await;
                    clock::now() >= start + 1_000_000 + i * 100_000
                }));
            }
            let mut ok = 0;
            for h in handles {
                if h.await.unwrap() {
                    ok += 1;
                }
            }
            ok
        });
        assert_eq!(woken, 50);
    }
}
