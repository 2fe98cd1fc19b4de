//! Sub-millisecond waits for intended send times.
//!
//! tokio's timer wheel has 1 ms resolution and wakes 1–2 ms late; with coordinated-omission
//! correction that lateness would land in every recorded latency (wrk2's ~1 ms floor). Each worker
//! therefore owns one `timerfd` armed at the earliest pending deadline (absolute, nanosecond
//! precision, CLOCK_MONOTONIC), registered with tokio's reactor through `AsyncFd`. Waiting tasks
//! sit in a min-heap; when the timerfd fires, the driver task wakes every due task and re-arms the
//! timerfd for the next deadline.
//!
//! Waking a sleeping CPU takes tens of microseconds (on a VM, ~30 µs on loopback-idle machines),
//! which would show up as send lateness and so as corrected latency. The timerfd is therefore
//! armed a little *before* the deadline — by a margin that tracks how late the kernel actually
//! wakes us (an EWMA of the overshoot) — and the last stretch is a short busy-wait. The spin is
//! bounded by [`MAX_MARGIN`] per wake-up, so an idle worker still sleeps in epoll almost all the
//! time.

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

/// Upper bound of the early-wake margin (and so of the busy-wait per wake-up).
pub const MAX_MARGIN: Nanos = 200_000;
const INITIAL_MARGIN: Nanos = 50_000;
const MIN_MARGIN: Nanos = 5_000;

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
    /// Deadline the timerfd is armed for (already early by the margin); 0 when disarmed.
    armed: Cell<Nanos>,
    seq: Cell<u64>,
    /// EWMA of how late the timerfd wakes us, in ns (×16 fixed point).
    overshoot_x16: Cell<Nanos>,
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
            overshoot_x16: Cell::new(INITIAL_MARGIN / 2 * 16),
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
            let armed = self.armed.replace(0);
            if armed != 0 {
                self.learn_overshoot(clock::now().saturating_sub(armed));
            }
            self.wake_due();
        }
    }

    /// How early the timerfd is armed: twice the typical overshoot, bounded.
    fn margin(&self) -> Nanos {
        (self.overshoot_x16.get() / 8).clamp(MIN_MARGIN, MAX_MARGIN)
    }

    fn learn_overshoot(&self, overshoot: Nanos) {
        // EWMA with weight 1/16; one huge outlier (a preempted thread) moves it only a little.
        let old = self.overshoot_x16.get();
        let sample = overshoot.min(MAX_MARGIN * 4);
        self.overshoot_x16.set(old - old / 16 + sample);
    }

    fn wake_due(&self) {
        let mut now = clock::now();
        let margin = self.margin();
        let next = {
            let mut waiters = self.waiters.borrow_mut();
            let mut woken = false;
            while let Some(Reverse(top)) = waiters.peek() {
                if top.deadline > now {
                    // Spin only before the first wake: a woken task runs only once we yield.
                    if woken || top.deadline - now > margin {
                        break;
                    }
                    // Close enough: spin the last stretch instead of sleeping through it.
                    while now < top.deadline {
                        std::hint::spin_loop();
                        now = clock::now();
                    }
                }
                if let Some(Reverse(w)) = waiters.pop() {
                    w.waker.wake();
                    woken = true;
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
        if armed == 0 || deadline.saturating_sub(self.margin()) < armed {
            self.arm(deadline);
        }
    }

    /// Arms the timerfd to fire the margin ahead of `deadline`.
    fn arm(&self, deadline: Nanos) {
        let deadline = deadline.saturating_sub(self.margin()).max(1);
        let spec = libc::itimerspec {
            it_interval: clock::timespec(0),
            it_value: clock::timespec(deadline),
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
            self.armed.set(deadline);
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
