//! The one way a player retries: its login, its WebSocket connect and its logout all go
//! through [`retry`]. When a server hiccups (a full accept queue, a restart, a proxy reload)
//! thousands of players fail at the same instant; trying again at once, and all in step, would
//! hit it again all together. So the helper waits between tries — doubling from
//! [`FIRST_BACKOFF`] up to [`MAX_BACKOFF`] — and draws each wait at random from the upper half
//! of its step, which spreads the players out. A try that failed for good (a wrong answer, not
//! a lost connection) ends the retries at once. The error of the last try is handed back: it is
//! what the report shows.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;

use crate::sys::rng::XorShift;

/// The wait before the second try (at most; at least half of it).
pub(super) const FIRST_BACKOFF: Duration = Duration::from_millis(50);
/// How long a login or connect under way may still take once the run is over. A login the
/// server answers later still makes a session, which then cannot be logged out: on a loaded
/// server, logins took up to 1.3 s while the others logged out (1 s lost some), so 2 s.
pub(crate) const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// The longest wait between two tries, so the retries of a whole session stay within the
/// slack the session allows for logging everyone out.
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// How a failed try ended.
#[derive(Debug)]
pub(super) enum Failed<E> {
    /// Another try may succeed (a reset, refused or timed-out connection).
    Transient(E),
    /// Another try would fail the same way (the server answered, wrongly).
    Final(E),
}

/// Every try failed: the last try's error, and how many tries were made.
#[derive(Debug)]
pub(super) struct GaveUp<E> {
    pub tries: u32,
    pub last: E,
}

impl<E: fmt::Display> fmt::Display for GaveUp<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.tries {
            1 => write!(f, "{}", self.last),
            n => write!(f, "{} (after {n} tries)", self.last),
        }
    }
}

/// The waits between tries: exponential, capped, jittered.
#[derive(Debug, Clone)]
pub(super) struct Backoff {
    step: Duration,
    /// xorshift64 state; never zero.
    rng: XorShift,
}

impl Backoff {
    /// `seed` differs per player (and per call), so players do not wait in step.
    pub(super) fn new(seed: u64) -> Backoff {
        Backoff {
            step: FIRST_BACKOFF,
            rng: XorShift::new(seed | 1),
        }
    }

    /// The wait before the next try: uniform in the upper half of the current step, which
    /// then doubles (up to [`MAX_BACKOFF`]).
    pub(super) fn next_wait(&mut self) -> Duration {
        let step = self.step.as_nanos() as u64;
        let wait = step / 2 + self.rng.below(step / 2 + 1);
        self.step = (self.step * 2).min(MAX_BACKOFF);
        Duration::from_nanos(wait)
    }
}

/// What ends a player's tries besides their number.
#[derive(Clone, Copy)]
pub(super) enum Until<'a> {
    /// The run being over (the `-d` limit or a signal): no new try starts then, so that a login
    /// or connect does not hold the end of a run for its timeout × tries.
    Stopped(&'a watch::Receiver<bool>),
    /// A logout's bound, since a logout is what the end of a run is for: failed tries go on
    /// past their number while a wait still ends before it (a proxy full for a moment at the
    /// end of a run, its open-file limit while the sessions' sockets close, must not leave
    /// sessions on the server after two quick resets). The last error is then the answer, not
    /// the bound cutting a wait.
    Bound(tokio::time::Instant),
}

/// Runs `attempt` up to `tries` times (at least once), waiting a [`Backoff`] between tries,
/// until it succeeds or fails for good, or `until` ends the tries (none: their number alone).
pub(super) async fn retry<T, E, F, Fut>(
    tries: u32,
    seed: u64,
    until: Option<Until<'_>>,
    mut attempt: F,
) -> Result<T, GaveUp<E>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Failed<E>>>,
{
    let tries = tries.max(1);
    let mut backoff = Backoff::new(seed);
    let mut made = 0;
    loop {
        made += 1;
        let last = match attempt().await {
            Ok(value) => return Ok(value),
            Err(Failed::Final(last)) => return Err(GaveUp { tries: made, last }),
            Err(Failed::Transient(last)) => last,
        };
        let wait = backoff.next_wait();
        let more = made < tries
            || matches!(until, Some(Until::Bound(bound)) if tokio::time::Instant::now() + wait < bound);
        if !more {
            return Err(GaveUp { tries: made, last });
        }
        let wait = tokio::time::sleep(wait);
        match until {
            Some(Until::Stopped(stop)) => {
                let mut stop = stop.clone();
                tokio::select! {
                    _ = wait => {}
                    _ = stopped(&mut stop) => return Err(GaveUp { tries: made, last }),
                }
            }
            _ => wait.await,
        }
    }
}

/// Runs `operation` (a login or connect with its retries); once the run is over it gets `grace`
/// more to finish — a login the server is answering right now should still get its cookie, so
/// that its session is logged out — and is dropped after that (`None`).
pub(super) async fn until_stopped<T>(
    stop: &watch::Receiver<bool>,
    grace: Duration,
    operation: impl Future<Output = T>,
) -> Option<T> {
    let mut stop = stop.clone();
    tokio::pin!(operation);
    tokio::select! {
        out = &mut operation => return Some(out),
        _ = stopped(&mut stop) => {}
    }
    tokio::time::timeout(grace, operation).await.ok()
}

/// Completes once the run is over (never, if the run's sender is gone without saying so).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|over| *over).await.is_err() {
        std::future::pending::<()>().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    fn run<T>(future: impl Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn waits_double_up_to_the_cap_each_in_the_upper_half_of_its_step() {
        let mut backoff = Backoff::new(7);
        let mut step = FIRST_BACKOFF;
        for _ in 0..10 {
            let wait = backoff.next_wait();
            assert!(
                wait >= step / 2 && wait <= step,
                "{wait:?} for a step of {step:?}"
            );
            step = (step * 2).min(MAX_BACKOFF);
        }
    }

    #[test]
    fn players_do_not_wait_in_step() {
        let waits: std::collections::HashSet<Duration> = (0..100u64)
            .map(|player| Backoff::new(player.wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_wait())
            .collect();
        assert!(waits.len() > 90, "only {} distinct waits", waits.len());
    }

    #[test]
    fn transient_failures_are_retried_and_the_last_error_is_kept() {
        let calls = Cell::new(0);
        let started = tokio::time::Instant::now;
        let (result, waited) = run(async {
            let t0 = started();
            let result: Result<(), _> = retry(3, 1, None, || {
                calls.set(calls.get() + 1);
                let n = calls.get();
                async move { Err(Failed::Transient(format!("refused #{n}"))) }
            })
            .await;
            (result, t0.elapsed())
        });
        let gave_up = result.unwrap_err();
        assert_eq!((calls.get(), gave_up.tries), (3, 3));
        assert_eq!(gave_up.to_string(), "refused #3 (after 3 tries)");
        // Two waits: at least half of the first two steps.
        assert!(waited >= FIRST_BACKOFF / 2 + FIRST_BACKOFF, "{waited:?}");
    }

    #[test]
    fn a_final_failure_stops_at_once_and_success_ends_early() {
        let calls = Cell::new(0);
        let result: Result<(), _> = run(retry(5, 1, None, || {
            calls.set(calls.get() + 1);
            async { Err(Failed::Final("answered 404")) }
        }));
        assert_eq!(calls.get(), 1);
        assert_eq!(result.unwrap_err().to_string(), "answered 404");

        calls.set(0);
        let result = run(retry(5, 1, None, || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                if n < 2 {
                    Err(Failed::Transient("reset"))
                } else {
                    Ok(n)
                }
            }
        }));
        assert_eq!(result.unwrap(), 2);
    }

    #[test]
    fn a_logouts_tries_go_on_until_its_bound() {
        let calls = Cell::new(0);
        let bound = Duration::from_secs(1);
        let result: Result<(), _> = run(async {
            let until = tokio::time::Instant::now() + bound;
            retry(1, 1, Some(Until::Bound(until)), || {
                calls.set(calls.get() + 1);
                async { Err(Failed::Transient("reset")) }
            })
            .await
        });
        // One try was asked for; waits of 25–50, 50–100, 100–200 ms… fit a third and more in
        // the bound (a busy machine's late wake-ups included). They give up before it, their
        // last error kept.
        let gave_up = result.unwrap_err();
        assert!(calls.get() >= 3, "{} tries", calls.get());
        assert_eq!(gave_up.tries, calls.get());
        assert_eq!(
            gave_up.to_string(),
            format!("reset (after {} tries)", calls.get())
        );
        // A try that fails for good still ends them at once.
        calls.set(0);
        let result: Result<(), _> = run(retry(
            1,
            1,
            Some(Until::Bound(tokio::time::Instant::now() + bound)),
            || {
                calls.set(calls.get() + 1);
                async { Err(Failed::Final("answered 404")) }
            },
        ));
        assert_eq!((calls.get(), result.unwrap_err().tries), (1, 1));
    }
}
