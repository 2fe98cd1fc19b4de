//! SIGINT, SIGTERM and SIGHUP, caught by one handler for the whole process, registered once
//! and never dropped: every run reads it, and so does a caller running several (`--vs`), so a
//! signal that comes between two runs, while the next one prepares, is not lost to either.
//!
//! Each signal caught is kept in order. A run reads those caught from where the previous run
//! stopped reading: one caught before the run began (between two rounds) is already pending
//! when the run begins, and the run stops before it sends anything.

use std::sync::{Arc, Mutex, OnceLock};

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::Notify;

use crate::error::Error;

/// Every signal caught so far, and how far the runs have read them.
#[derive(Default)]
struct Caught {
    state: Mutex<State>,
    arrived: Notify,
}

#[derive(Default)]
struct State {
    names: Vec<&'static str>,
    /// Signals before this index were read by a run (each answered by that run).
    answered: usize,
}

impl Caught {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding it cannot leave the list half-written: use it as it is.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, name: &'static str) {
        self.state().names.push(name);
        self.arrived.notify_waiters();
    }

    fn count(&self) -> usize {
        self.state().names.len()
    }

    fn since(&self, mark: usize) -> Option<&'static str> {
        self.state().names.get(mark).copied()
    }

    /// A reader from the first signal no run has read.
    fn reader(&'static self) -> Signals {
        let state = self.state();
        Signals {
            caught: self,
            from: state.answered,
            began: state.names.len(),
            seen: state.answered,
        }
    }

    fn answered_up_to(&self, seen: usize) {
        let mut state = self.state();
        state.answered = state.answered.max(seen);
    }
}

/// Why the process's signal handler could not be set up (kept with the handler's place, so
/// every run that asks says the same).
#[derive(Debug, Clone, thiserror::Error)]
enum HandlerError {
    /// Its thread, its runtime or a signal's registration failed.
    #[error("signal handler: {0}")]
    Io(Arc<std::io::Error>),
    #[error("signal handler: its thread ended")]
    Ended,
}

impl From<std::io::Error> for HandlerError {
    fn from(e: std::io::Error) -> HandlerError {
        HandlerError::Io(Arc::new(e))
    }
}

static CAUGHT: OnceLock<Result<&'static Caught, HandlerError>> = OnceLock::new();

/// The process's handler, registered on first use: a thread of its own with a runtime that
/// only catches the three signals (a run's runtime comes and goes; the handler must not).
fn caught() -> Result<&'static Caught, Error> {
    CAUGHT
        .get_or_init(|| {
            let caught: &'static Caught = Box::leak(Box::default());
            let (ready, registered) = std::sync::mpsc::channel();
            let spawned = std::thread::Builder::new()
                .name("tsumo-signals".to_string())
                .spawn(move || catch_forever(caught, ready));
            if let Err(e) = spawned {
                return Err(e.into());
            }
            match registered.recv() {
                Ok(Ok(())) => Ok(caught),
                Ok(Err(e)) => Err(e),
                Err(_) => Err(HandlerError::Ended),
            }
        })
        .clone()
        .map_err(|e| Error::Thread(e.to_string()))
}

fn catch_forever(
    caught: &'static Caught,
    ready: std::sync::mpsc::Sender<Result<(), HandlerError>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = ready.send(Err(e.into()));
            return;
        }
    };
    runtime.block_on(async {
        let catch = |kind| signal(kind).map_err(HandlerError::from);
        let registered = (|| {
            Ok::<_, HandlerError>((
                catch(SignalKind::interrupt())?,
                catch(SignalKind::terminate())?,
                catch(SignalKind::hangup())?,
            ))
        })();
        let (mut interrupt, mut terminate, mut hangup) = match registered {
            Ok(signals) => signals,
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        };
        let _ = ready.send(Ok(()));
        loop {
            let name = tokio::select! {
                _ = interrupt.recv() => "SIGINT",
                _ = terminate.recv() => "SIGTERM",
                _ = hangup.recv() => "SIGHUP",
            };
            caught.push(name);
        }
    });
}

/// Starts catching the signals for the process (once handled, none ends it by itself), and
/// returns a mark: [`since`] of it names the first signal caught after this call.
pub fn watch() -> Result<usize, Error> {
    Ok(caught()?.count())
}

/// The first signal caught since `mark` (from [`watch`]), read by a run or not.
pub fn since(mark: usize) -> Option<&'static str> {
    CAUGHT.get()?.as_ref().ok()?.since(mark)
}

/// How many signals the process caught so far (none before anything asked to catch them): a
/// wait of the exit that sees a second one cuts itself short.
pub fn caught_count() -> usize {
    match CAUGHT.get() {
        Some(Ok(caught)) => caught.count(),
        _ => 0,
    }
}

/// One run's reader of the process's signals. Dropped, it marks what it read as answered, so
/// the next run starts after it.
pub struct Signals {
    caught: &'static Caught,
    /// The first signal this run reads: the first no earlier run read.
    from: usize,
    /// Signals caught by the time the run began: those from `from` came before it.
    began: usize,
    /// Read up to here.
    seen: usize,
}

impl Signals {
    /// Catches the signals (registering the handler on first use) and reads them from the
    /// first one no earlier run read.
    pub fn new() -> Result<Signals, Error> {
        Ok(caught()?.reader())
    }

    /// A signal caught before this run began that no earlier run read (one that came while
    /// it prepared): the run must not start.
    pub fn before_the_run(&self) -> Option<&'static str> {
        (self.from < self.began)
            .then(|| self.caught.since(self.from))
            .flatten()
    }

    /// The next signal's name.
    pub async fn recv(&mut self) -> &'static str {
        loop {
            let arrived = self.caught.arrived.notified();
            if let Some(name) = self.caught.since(self.seen) {
                self.seen += 1;
                return name;
            }
            arrived.await;
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        self.caught.answered_up_to(self.seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaked() -> &'static Caught {
        Box::leak(Box::default())
    }

    fn now<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn a_signal_between_two_runs_stops_the_next_before_it_starts() {
        let caught = leaked();
        let mark = caught.count();
        let mut first = caught.reader();
        assert_eq!(first.before_the_run(), None);
        caught.push("SIGINT");
        assert_eq!(now(first.recv()), "SIGINT");
        drop(first);
        // The first run answered its SIGINT: the next starts clean.
        let second = caught.reader();
        assert_eq!(second.before_the_run(), None);
        drop(second);
        // A SIGTERM after that run ended, while the next one prepares (no reader then).
        caught.push("SIGTERM");
        let mut third = caught.reader();
        assert_eq!(third.before_the_run(), Some("SIGTERM"));
        // It is that run's first signal too: the supervisor ends on it at once.
        assert_eq!(now(third.recv()), "SIGTERM");
        drop(third);
        // The caller's own watch saw both, in order.
        assert_eq!(caught.since(mark), Some("SIGINT"));
        assert_eq!(caught.since(mark + 1), Some("SIGTERM"));
        assert_eq!(caught.since(mark + 2), None);
    }

    #[test]
    fn a_signal_during_a_run_is_the_runs_own() {
        let caught = leaked();
        let mut run = caught.reader();
        caught.push("SIGHUP");
        assert_eq!(run.before_the_run(), None);
        assert_eq!(now(run.recv()), "SIGHUP");
    }

    #[test]
    fn a_reader_waiting_is_woken_by_a_signal_from_another_thread() {
        let caught = leaked();
        let mut run = caught.reader();
        let pusher = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(20));
            caught.push("SIGTERM");
        });
        assert_eq!(now(run.recv()), "SIGTERM");
        pusher.join().unwrap();
    }
}
