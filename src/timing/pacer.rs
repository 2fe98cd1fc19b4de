//! Waits for intended send times: precise where it is cheap, coalesced where the rate is high.
//!
//! tokio's timer wheel has 1 ms resolution and wakes 1–2 ms late; with coordinated-omission
//! correction that lateness would land in every recorded latency (wrk2's ~1 ms floor). Each worker
//! therefore owns one `timerfd` (absolute, nanosecond deadlines on CLOCK_MONOTONIC) registered
//! with tokio's reactor through `AsyncFd`, and a min-heap of waiting tasks.
//!
//! What a wait costs is a sleep and a wake-up of the thread: the timer programmed, its interrupt,
//! the thread put to sleep and woken. On a VM each of these is a trip to the hypervisor; on the
//! machine this was built on (a nested VM) re-programming the timer costs at least 17 µs of the
//! thread's CPU, and a sleep with its timer wake-up 31–39 µs — more than tsumo's whole work for
//! a request (16 µs closed loop). So the pacer touches the timer as little as it can, and waits in
//! one of two ways ([`Pacing`]):
//!
//! - **Precise** (`--slack 0`, and `--slack auto` below 8,000 requests/s per thread): each send at
//!   its own time. The task sleeps in the heap until the timerfd fires a *lead* ahead of its
//!   deadline — the lead tracks the 75th percentile of how late the timer actually wakes us (a
//!   stochastic quantile estimate: up 750 ns after a late wake-up, down 250 ns after any other,
//!   at most [`MAX_LEAD`]), so one preempted thread's millisecond outlier moves it by one step
//!   only — then polls the reactor until the deadline has passed: it loops on
//!   `tokio::task::yield_now()`, and on the current-thread runtime the scheduler polls the I/O
//!   driver with a zero timeout (`epoll_wait(…, 0)`) before it runs a yielded task again (tokio
//!   1.54, `runtime/scheduler/current_thread/mod.rs`, `CoreGuard::block_on`), so responses keep
//!   being read and timestamped meanwhile. Lateness: a few µs.
//! - **Coalescing** (`--slack T`, and `auto` from 8,000/s per thread: 100 µs there, growing
//!   12.5 ns per request/s to 250 µs at 20,000/s): time is cut into slots of the slack, and
//!   the timer fires at the end of the slot of the earliest waiter, where every send of that
//!   slot is due: one wake-up serves them all. No lead and no polling: a waiter is released only
//!   once its time has come. Lateness: up to the slack plus the wake-up's own, and in practice
//!   less — the thread is often awake (reading responses) when a send falls due.
//!
//! In both, the timer is touched as little as possible:
//! - it is pointed at the earliest waiter in the runtime's park hook ([`before_park`]), just
//!   before the thread sleeps — the one moment it must be right — and not on every request; a
//!   waiter registered while the timer is idle arms it at once (a thread that never sleeps runs
//!   no park hook);
//! - whenever the worker is awake anyway (a connection has read its response and queues its
//!   next send, or a send found itself late), every waiter that is due is released from the
//!   heap too — no timer wake-up is taken for it;
//! - no `read(2)` of the expiration count: arming the timer again resets it, and the next expiry
//!   is a fresh edge for tokio's edge-triggered epoll.
//!
//! A request is never sent before its intended time (that would understate the corrected
//! latency). Every mode waits here: HTTP/1.1 connections and HTTP/2 streams for their send
//! times, a script's think times, and the mahjong players' think times ([`Pacing::THINK`]: 1 ms
//! slots, as coarse as tokio's timer they replaced, since a 1 s think time and the server's
//! 400 ms steps need no finer).
//!
//! Measured (`scripts/bench 2 rates` and `scripts/bench 2 perf`, BENCHMARKS.md; `-t1 -c50`, the
//! generator and nginx pinned to one core each): see BENCHMARKS.md's "Pacing at wrk2's cost".

use std::cell::{Cell, RefCell};
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};
use std::future::Future;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use super::clock::{self, Nanos};

/// Upper bound of the learned lead (how early the timerfd is armed in precise pacing), and so
/// of the reactor polling per wake-up.
pub const MAX_LEAD: Nanos = 100_000;
const INITIAL_LEAD: Nanos = 10_000;
/// The lead moves by this much per sample: up when a wake-up overshot it, down otherwise.
const LEAD_STEP_DOWN: Nanos = 250;
const LEAD_STEP_UP: Nanos = 3 * LEAD_STEP_DOWN;
/// A deadline this close past the lead is polled for rather than slept for: one poll of the
/// reactor costs about a microsecond, a sleep and a timer wake-up several.
const POLL_SLACK: Nanos = 5_000;

/// How a worker's pacer waits for intended send times: each send to the microsecond, or the
/// sends of one slot of `slack` together, at the slot's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// The slot length; 0 for precise pacing.
    pub slack: Nanos,
    /// Chosen from the per-thread rate (`--slack auto`, the default) rather than given.
    pub auto: bool,
}

impl Pacing {
    /// Each send at its own time, to the microsecond: today's cost at any rate.
    pub const PRECISE: Pacing = Pacing {
        slack: 0,
        auto: false,
    };
    /// Per-thread rates (requests/s) below this are paced precisely by `auto`.
    pub const PRECISE_BELOW: u64 = 8_000;
    /// Auto slack, in ns per request/s of the per-thread rate, times 2: 12.5 ns, so 100 µs at
    /// 8,000/s and 250 µs at 20,000/s.
    const TWICE_SLACK_PER_RATE: Nanos = 25;
    const MIN_AUTO_SLACK: Nanos = 100_000;
    const MAX_AUTO_SLACK: Nanos = 250_000;
    /// The slots of the mahjong players' think-time waits: far below any think time a person
    /// takes (and the server's 400 ms steps), as coarse as tokio's timer, and one wake-up for
    /// every reply due within one.
    pub const THINK: Pacing = Pacing {
        slack: 1_000_000,
        auto: true,
    };

    /// The pacing `--slack auto` picks for one worker thread's rate (`None`: closed loop, where
    /// only a script's think times are waited for). Precise below [`Self::PRECISE_BELOW`]: a
    /// wake-up per send is cheap there. Above, the slot grows with the rate, from 50 µs (at
    /// 8,000/s) to 250 µs (at 20,000/s and more), so each wake-up serves more sends.
    pub fn auto(rate_per_thread: Option<u64>) -> Pacing {
        let slack = match rate_per_thread {
            Some(rate) if rate >= Self::PRECISE_BELOW => {
                (rate.saturating_mul(Self::TWICE_SLACK_PER_RATE) / 2)
                    .clamp(Self::MIN_AUTO_SLACK, Self::MAX_AUTO_SLACK)
            }
            _ => 0,
        };
        Pacing { slack, auto: true }
    }

    /// The pacing of a run of `rate` requests/s over `threads` worker threads: `--slack`'s if
    /// given (`None`: auto).
    pub fn choose(slack: Option<Duration>, rate: Option<u64>, threads: usize) -> Pacing {
        match slack {
            Some(slack) => Pacing::given(slack),
            None => Pacing::auto(rate.map(|rate| rate / threads.max(1) as u64)),
        }
    }

    /// The pacing of `--slack DURATION` (0: precise).
    pub fn given(slack: Duration) -> Pacing {
        Pacing {
            slack: slack.as_nanos().min(u64::MAX as u128) as Nanos,
            auto: false,
        }
    }

    /// The slot in whole microseconds, for the report.
    pub fn slack_us(&self) -> u64 {
        clock::to_us(self.slack)
    }
}

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

thread_local! {
    /// The pacer of this thread's runtime, for the runtime's park hook.
    static CURRENT: RefCell<Weak<Pacer>> = const { RefCell::new(Weak::new()) };
}

/// The hook a worker's runtime runs before its thread sleeps — the one moment the timer must be
/// right. Install it with `Builder::on_thread_park(timing::pacer::before_park)`.
pub fn before_park() {
    let pacer = CURRENT.with(|current| current.borrow().upgrade());
    if let Some(pacer) = pacer {
        pacer.before_sleep();
    }
}

/// One worker's timer. Create it inside the worker's runtime (built with [`before_park`] as its
/// park hook), spawn [`Pacer::drive`] on the worker's `LocalSet`, then `sleep_until` from any
/// task of that worker.
pub struct Pacer {
    fd: AsyncFd<OwnedFd>,
    waiters: RefCell<BinaryHeap<Reverse<Waiter>>>,
    /// The expiry the timerfd is armed for; 0 when disarmed or fired.
    armed: Cell<Nanos>,
    seq: Cell<u64>,
    /// Precise pacing: how early the timerfd is armed; tracks the 75th percentile of how late
    /// it wakes us. Always 0 when coalescing.
    lead: Cell<Nanos>,
    pacing: Cell<Pacing>,
    /// With `--stages` and auto pacing: the pacings to come, each from its instant on, so the
    /// choice follows the rate (see [`Pacer::follow`]).
    changes: RefCell<VecDeque<(Nanos, Pacing)>>,
}

impl Pacer {
    /// Creates the timerfd, registers it with the current tokio runtime, and makes this the
    /// thread's pacer for [`before_park`].
    pub fn new(pacing: Pacing) -> io::Result<Rc<Pacer>> {
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
        let pacer = Rc::new(Pacer {
            fd,
            waiters: RefCell::new(BinaryHeap::new()),
            armed: Cell::new(0),
            seq: Cell::new(0),
            lead: Cell::new(if pacing.slack == 0 { INITIAL_LEAD } else { 0 }),
            pacing: Cell::new(pacing),
            changes: RefCell::new(VecDeque::new()),
        });
        CURRENT.with(|current| *current.borrow_mut() = Rc::downgrade(&pacer));
        Ok(pacer)
    }

    /// Completes at `deadline` (CLOCK_MONOTONIC ns) or later, never earlier; at once if it has
    /// passed. Precise: the task sleeps until the timerfd fires the lead ahead of the deadline,
    /// then polls the reactor — serving the worker's sockets — for the last few microseconds.
    /// Coalescing: it sleeps until its slot ends or the worker, awake anyway, finds it due.
    pub fn sleep_until(self: &Rc<Self>, deadline: Nanos) -> impl Future<Output = ()> + 'static {
        let pacer = Rc::clone(self);
        pacer.advance(deadline);
        async move {
            let mut slept = false;
            loop {
                let now = clock::now();
                // Awake anyway: release whichever other waiters are due.
                pacer.fire_due(now);
                if now >= deadline {
                    return;
                }
                if !slept && deadline - now > pacer.poll_window() {
                    TimerWait {
                        pacer: &pacer,
                        deadline,
                        registered: false,
                    }
                    .await;
                    slept = true;
                } else {
                    // Back to the scheduler, which polls the I/O driver (zero timeout) before
                    // it polls this task again: the worker serves its sockets meanwhile.
                    tokio::task::yield_now().await;
                }
            }
        }
    }

    /// The pacing in use now.
    pub fn pacing(&self) -> Pacing {
        self.pacing.get()
    }

    /// Follows a changing rate: from each instant of `changes` (CLOCK_MONOTONIC ns, in order)
    /// on, deadlines are paced as its pacing says. `--stages` with auto pacing gives the
    /// profile's choice over time, so a ramp is paced precisely while its rate is low.
    pub fn follow(&self, changes: impl IntoIterator<Item = (Nanos, Pacing)>) {
        self.changes.borrow_mut().extend(changes);
    }

    /// Takes up the pacing of the last change at or before `deadline`.
    fn advance(&self, deadline: Nanos) {
        let mut changes = self.changes.borrow_mut();
        let mut next = None;
        while changes.front().is_some_and(|(at, _)| *at <= deadline) {
            next = changes.pop_front().map(|(_, pacing)| pacing);
        }
        let Some(pacing) = next else {
            return;
        };
        if pacing.slack == 0 && self.pacing.get().slack != 0 {
            self.lead.set(INITIAL_LEAD);
        }
        self.pacing.set(pacing);
    }

    /// Releases the waiters due at `now`, for a task that is awake and does not wait (a send
    /// already late): a thread that never sleeps never runs the park hook, and its waiters
    /// must still go.
    pub fn release_due(&self, now: Nanos) {
        self.fire_due(now);
    }

    /// Wakes due waiters whenever the timerfd fires. Runs for the worker's lifetime.
    pub async fn drive(self: Rc<Self>) {
        loop {
            let mut guard = match self.fd.readable().await {
                Ok(guard) => guard,
                Err(_) => return,
            };
            // No read(2) of the expiration count: arming the timer again resets it, and the
            // next expiry is a new edge for the (edge-triggered) reactor.
            guard.clear_ready();
            let now = clock::now();
            let armed = self.armed.replace(0);
            if armed != 0 && now >= armed && self.pacing.get().slack == 0 {
                self.learn_overshoot(now - armed);
            }
            self.fire_due(now);
        }
    }

    /// Deadlines this close are polled for, not slept for (none when coalescing).
    fn poll_window(&self) -> Nanos {
        if self.pacing.get().slack == 0 {
            self.lead.get() + POLL_SLACK
        } else {
            0
        }
    }

    /// The widest the poll window can be.
    fn widest_window(&self) -> Nanos {
        if self.pacing.get().slack == 0 {
            MAX_LEAD + POLL_SLACK
        } else {
            0
        }
    }

    /// Moves the lead one step toward the 75th percentile of the timer's overshoot: a stochastic
    /// quantile estimate, which a preempted thread's millisecond outlier moves by one step only.
    fn learn_overshoot(&self, overshoot: Nanos) {
        let lead = self.lead.get();
        let lead = if overshoot > lead {
            (lead + LEAD_STEP_UP).min(MAX_LEAD)
        } else {
            lead.saturating_sub(LEAD_STEP_DOWN)
        };
        self.lead.set(lead);
    }

    /// Wakes every waiter whose deadline is within the poll window (it polls the rest of the
    /// way itself). Returns whether any was woken.
    fn fire_due(&self, now: Nanos) -> bool {
        let horizon = now + self.poll_window();
        let mut fired = false;
        let mut waiters = self.waiters.borrow_mut();
        while let Some(Reverse(top)) = waiters.peek() {
            if top.deadline > horizon {
                break;
            }
            if let Some(Reverse(waiter)) = waiters.pop() {
                waiter.waker.wake();
                fired = true;
            }
        }
        fired
    }

    /// Before the thread sleeps: releases what is due, or else points the timer at the earliest
    /// waiter — moving it when it is set for another time, so the thread wakes once, on time.
    fn before_sleep(&self) {
        if self.fire_due(clock::now()) {
            return;
        }
        let next = self.waiters.borrow().peek().map(|Reverse(w)| w.deadline);
        if let Some(deadline) = next {
            self.arm(self.expiry(deadline));
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
        // A backstop for a thread that does not sleep (and so never runs the park hook): the
        // timer is set whenever it is idle. Where it points is settled before the thread sleeps.
        if self.armed.get() == 0 {
            self.arm(self.expiry(deadline));
        }
    }

    /// When the timer fires for a waiter due at `deadline`: the lead ahead of it (precise), or
    /// the end of its slot (coalescing), where every send of the slot is due.
    fn expiry(&self, deadline: Nanos) -> Nanos {
        let slack = self.pacing.get().slack;
        let at = if slack == 0 {
            deadline.saturating_sub(self.lead.get())
        } else {
            deadline.div_ceil(slack).saturating_mul(slack)
        };
        at.max(1)
    }

    /// Arms the timerfd for `expiry`, unless it is armed for it already.
    fn arm(&self, expiry: Nanos) {
        if self.armed.get() == expiry {
            return;
        }
        let spec = libc::itimerspec {
            it_interval: clock::timespec(0),
            it_value: clock::timespec(expiry),
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
            self.armed.set(expiry);
        }
    }
}

/// Waits in the pacer's heap until the timerfd (or another task's [`Pacer::fire_due`]) wakes it
/// within its poll window of its deadline.
struct TimerWait<'a> {
    pacer: &'a Pacer,
    deadline: Nanos,
    registered: bool,
}

impl Future for TimerWait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if !self.registered {
            // The caller has just found the deadline beyond its poll window.
            self.registered = true;
            self.pacer.register(self.deadline, cx.waker().clone());
            return Poll::Pending;
        }
        // As loose as any poll window: a waiter taken off the heap always completes here.
        if clock::now() + self.pacer.widest_window() >= self.deadline {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Runs `body` on a worker-like runtime (current thread, LocalSet) with a driven pacer.
    fn on_worker<F, T>(pacing: Pacing, body: impl FnOnce(Rc<Pacer>) -> F) -> T
    where
        F: Future<Output = T>,
    {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .on_thread_park(before_park)
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let pacer = Pacer::new(pacing).unwrap();
            tokio::task::spawn_local(Rc::clone(&pacer).drive());
            body(pacer).await
        })
    }

    /// CPU time of the calling thread, ns.
    fn thread_cpu() -> Nanos {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// The pacings the tests below run with: precise, and slots of 100 µs.
    const BOTH: [Pacing; 2] = [
        Pacing::PRECISE,
        Pacing {
            slack: 100_000,
            auto: false,
        },
    ];

    /// Never early, every time. How late is the machine's to say (a shared one preempts us
    /// now and then): the pacer's precision is measured by `scripts/bench`, not asserted here.
    #[test]
    fn wakes_on_time_never_early() {
        for pacing in BOTH {
            wakes_on_time_never_early_with(pacing);
        }
    }

    fn wakes_on_time_never_early_with(pacing: Pacing) {
        let woken = on_worker(pacing, |pacer| async move {
            let start = clock::now();
            let mut woken = 0;
            for i in 1..=400u64 {
                let deadline = start + i * 250_000;
                pacer.sleep_until(deadline).await;
                let now = clock::now();
                assert!(now >= deadline, "woke {} ns early", deadline - now);
                woken += 1;
            }
            woken
        });
        assert_eq!(woken, 400);
    }

    #[test]
    fn many_waiters_each_woken() {
        for pacing in BOTH {
            many_waiters_each_woken_with(pacing);
        }
    }

    fn many_waiters_each_woken_with(pacing: Pacing) {
        let woken = on_worker(pacing, |pacer| async move {
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

    /// Coalescing: the sends due within one slot wait for its end and go together, none before
    /// its own time. (20 ms slots, so that a busy machine cannot blur what is asserted: only
    /// lower bounds.)
    #[test]
    fn sends_of_one_slot_go_together_at_its_end() {
        let slack = 20_000_000;
        let (slot_end, woken) = on_worker(Pacing::given(Duration::from_nanos(slack)), |pacer| {
            async move {
                // A slot wholly in the future.
                let slot_end = (clock::now() / slack + 2) * slack;
                let offsets = [15_000_000, 9_000_000, 1_000_000];
                let handles: Vec<_> = offsets
                    .into_iter()
                    .map(|offset| {
                        let pacer = Rc::clone(&pacer);
                        let deadline = slot_end - offset;
                        tokio::task::spawn_local(async move {
                            pacer.sleep_until(deadline).await;
                            (deadline, clock::now())
                        })
                    })
                    .collect();
                let mut woken = Vec::new();
                for handle in handles {
                    woken.push(handle.await.unwrap());
                }
                (slot_end, woken)
            }
        });
        assert_eq!(woken.len(), 3);
        for (deadline, at) in woken {
            assert!(at >= deadline, "woke {} ns early", deadline - at);
            assert!(
                at >= slot_end,
                "woke {} ns before its slot's end",
                slot_end - at
            );
        }
    }

    /// `--slack auto`: precise below 8,000 requests/s per thread; from there a slot that grows
    /// with the rate, from 100 µs to 250 µs.
    #[test]
    fn auto_pacing_follows_the_per_thread_rate() {
        let slack = |rate| Pacing::auto(rate).slack;
        assert_eq!(slack(None), 0);
        assert_eq!(slack(Some(1_000)), 0);
        assert_eq!(slack(Some(7_999)), 0);
        assert_eq!(slack(Some(8_000)), 100_000);
        assert_eq!(slack(Some(12_000)), 150_000);
        assert_eq!(slack(Some(20_000)), 250_000);
        assert_eq!(slack(Some(u64::MAX)), 250_000);
        assert!(Pacing::auto(Some(20_000)).auto);
        // Per thread: 40,000/s over 2 threads is 20,000 each, over 8 threads 5,000.
        assert_eq!(Pacing::choose(None, Some(40_000), 2).slack, 250_000);
        assert_eq!(
            Pacing::choose(None, Some(40_000), 8),
            Pacing::auto(Some(5_000))
        );
        // Given: as given, at any rate.
        let given = Pacing::choose(Some(Duration::ZERO), Some(100_000), 1);
        assert_eq!(given, Pacing::PRECISE);
        let given = Pacing::choose(Some(Duration::from_millis(1)), Some(10), 1);
        assert_eq!((given.slack, given.auto), (1_000_000, false));
        assert_eq!(given.slack_us(), 1_000);
    }

    #[test]
    fn waiting_sleeps_instead_of_spinning() {
        // 200 waits of 1 ms: a busy-wait would cost the thread the whole 200 ms of CPU (and the
        // old last-stretch spin up to a fifth of it); sleeping in epoll costs a few per cent.
        let (cpu, wall) = on_worker(Pacing::PRECISE, |pacer| async move {
            let (cpu0, start) = (thread_cpu(), clock::now());
            for i in 1..=200u64 {
                pacer.sleep_until(start + i * 1_000_000).await;
            }
            (thread_cpu() - cpu0, clock::now() - start)
        });
        assert!(cpu * 10 < wall, "{cpu} ns of CPU in {wall} ns");
    }

    #[test]
    fn serves_sockets_while_a_send_is_imminent() {
        // One task keeps a deadline always a few microseconds away (so it never sleeps in the
        // timerfd and polls the reactor instead); another task ping-pongs over a socket pair
        // with a plain thread meanwhile. Both must make progress: 100 round trips while the
        // waits go on (a count, not a rate; 10 s is only the limit of a hung test).
        let (echo, peer) = std::os::unix::net::UnixStream::pair().unwrap();
        let echoer = std::thread::spawn(move || {
            use std::io::{Read, Write};
            let mut echo = echo;
            let mut byte = [0u8; 1];
            while echo.read_exact(&mut byte).is_ok() && echo.write_all(&byte).is_ok() {}
        });
        let (waits, pongs) = on_worker(Pacing::PRECISE, |pacer| async move {
            peer.set_nonblocking(true).unwrap();
            let mut peer = tokio::net::UnixStream::from_std(peer).unwrap();
            let limit = clock::now() + 10_000_000_000;
            let done = Rc::new(std::cell::Cell::new(false));
            let pinger_done = Rc::clone(&done);
            let pinger = tokio::task::spawn_local(async move {
                let mut pongs = 0u32;
                let mut byte = [7u8; 1];
                while pongs < 100 && clock::now() < limit {
                    peer.write_all(&byte).await.unwrap();
                    peer.read_exact(&mut byte).await.unwrap();
                    pongs += 1;
                }
                pinger_done.set(true);
                pongs
            });
            let mut waits = 0u32;
            while !done.get() && clock::now() < limit {
                pacer.sleep_until(clock::now() + 3_000).await;
                waits += 1;
            }
            (waits, pinger.await.unwrap())
        });
        echoer.join().unwrap();
        assert_eq!(pongs, 100, "round trips while waiting");
        assert!(waits > 0, "{waits} waits");
    }
}
