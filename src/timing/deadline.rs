//! Request timeouts without a timer per request.
//!
//! A tokio timeout per request costs a timer-wheel insert and removal and several clock reads —
//! more user CPU than parsing the response. Timeouts need no sub-millisecond precision, so each
//! connection instead owns a [`Deadline`] slot stamped with its send time, and one watchdog task
//! per worker sweeps the slots a few times per timeout period, expiring the overdue ones and
//! waking their tasks. A request times out between `timeout` and `timeout + timeout/4` (at most
//! 250 ms late) after it was sent.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use super::clock::{self, Nanos};

/// One connection's deadline slot.
#[derive(Default)]
pub struct Deadline {
    /// When the guarded operation started; 0 while none is in progress.
    started: Cell<Nanos>,
    expired: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

/// The guarded operation did not finish in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

impl Deadline {
    /// Runs `operation`, which started at `started`; it fails with [`Elapsed`] once the
    /// watchdog finds it overdue.
    pub fn guard<F: Future>(&self, started: Nanos, operation: F) -> Guarded<'_, F> {
        self.started.set(started.max(1));
        self.expired.set(false);
        Guarded {
            deadline: self,
            operation,
        }
    }
}

/// A future bounded by a [`Deadline`].
pub struct Guarded<'a, F> {
    deadline: &'a Deadline,
    operation: F,
}

impl<F: Future> Future for Guarded<'_, F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `operation` is structurally pinned: it is never moved out of `self`.
        let this = unsafe { self.get_unchecked_mut() };
        let deadline = this.deadline;
        if deadline.expired.get() {
            return Poll::Ready(Err(Elapsed));
        }
        // SAFETY: see above; `this` is not moved after this point.
        let operation = unsafe { Pin::new_unchecked(&mut this.operation) };
        match operation.poll(cx) {
            Poll::Ready(value) => {
                deadline.started.set(0);
                Poll::Ready(Ok(value))
            }
            Poll::Pending => {
                let mut waker = deadline.waker.borrow_mut();
                match waker.as_ref() {
                    Some(w) if w.will_wake(cx.waker()) => {}
                    _ => *waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }
}

impl<F> Drop for Guarded<'_, F> {
    fn drop(&mut self) {
        self.deadline.started.set(0);
    }
}

/// All deadline slots of one worker, and the sweep that expires them.
pub struct Watchdog {
    timeout: Nanos,
    slots: RefCell<Vec<Rc<Deadline>>>,
}

impl Watchdog {
    pub fn new(timeout: Duration) -> Rc<Watchdog> {
        Rc::new(Watchdog {
            timeout: timeout.as_nanos().min(u64::MAX as u128) as Nanos,
            slots: RefCell::new(Vec::new()),
        })
    }

    /// A new slot, swept by this watchdog.
    pub fn slot(&self) -> Rc<Deadline> {
        let slot = Rc::new(Deadline::default());
        self.slots.borrow_mut().push(Rc::clone(&slot));
        slot
    }

    /// Time between sweeps: a quarter of the timeout, between 1 ms and 250 ms.
    fn period(&self) -> Duration {
        Duration::from_nanos(self.timeout / 4)
            .clamp(Duration::from_millis(1), Duration::from_millis(250))
    }

    /// Sweeps for ever (until the worker's tasks are dropped).
    pub async fn run(self: Rc<Self>) {
        let mut ticker = tokio::time::interval(self.period());
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            self.sweep(clock::now());
        }
    }

    /// Expires every slot whose operation started `timeout` or more before `now`.
    pub fn sweep(&self, now: Nanos) {
        for slot in self.slots.borrow().iter() {
            let started = slot.started.get();
            if started != 0 && now.saturating_sub(started) >= self.timeout {
                slot.started.set(0);
                slot.expired.set(true);
                if let Some(waker) = slot.waker.borrow_mut().take() {
                    waker.wake();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expires_overdue_operations_only() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let dog = Watchdog::new(Duration::from_millis(100));
            tokio::task::spawn_local(Rc::clone(&dog).run());
            let slot = dog.slot();
            let quick = slot
                .guard(clock::now(), tokio::time::sleep(Duration::from_millis(10)))
                .await;
            assert_eq!(quick, Ok(()));
            let start = clock::now();
            let stuck = slot.guard(start, std::future::pending::<()>()).await;
            assert_eq!(stuck, Err(Elapsed));
            // Not before its 100 ms (how much after is the machine's; 10 s is a hung test).
            let waited = clock::now() - start;
            assert!(
                (100_000_000..10_000_000_000).contains(&waited),
                "{waited} ns"
            );
            // The slot is reusable after expiring.
            let again = slot.guard(clock::now(), async { 7 }).await;
            assert_eq!(again, Ok(7));
        });
    }
}
