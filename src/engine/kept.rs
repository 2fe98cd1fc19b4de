//! What a worker has recorded, kept where the main thread can take it even when the worker's
//! thread never ends (a script hook that never returns, with `--script-timeout 0`): the run then
//! reports the counts that worker made up to there, instead of none.
//!
//! Why a lock and not snapshots: the worker records through a mutex no one else takes while it
//! runs. Uncontended, a lock and an unlock cost about 5 ns against a `RefCell`'s 0.6 (measured
//! here, 50 M pairs), a few per request: well under 1 % of tsumo's microseconds per request.
//! A copy of the recorder every second would copy its histograms (hundreds of KB) on the
//! worker's thread, which is lateness, and would still lose the last second.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};

/// A worker's recorder, shared with the main thread.
#[derive(Debug, Default)]
pub struct Kept<R>(Arc<Mutex<R>>);

impl<R> Clone for Kept<R> {
    fn clone(&self) -> Self {
        Kept(Arc::clone(&self.0))
    }
}

impl<R: Default> Kept<R> {
    /// The worker's access: named as `RefCell`'s, since it is used as one (one thread, no
    /// guard held across an await or a script hook).
    pub fn borrow_mut(&self) -> MutexGuard<'_, R> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes what was recorded, leaving an empty recorder.
    pub fn take(&self) -> R {
        std::mem::take(&mut *self.borrow_mut())
    }

    /// The main thread's access to a worker that never ended: `None` when the worker is stuck
    /// while holding it (then what it recorded cannot be read safely).
    pub fn try_take(&self) -> Option<R> {
        match self.0.try_lock() {
            Ok(mut recorder) => Some(std::mem::take(&mut *recorder)),
            Err(TryLockError::Poisoned(poisoned)) => {
                Some(std::mem::take(&mut *poisoned.into_inner()))
            }
            Err(TryLockError::WouldBlock) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_thread_takes_what_a_worker_recorded_unless_the_worker_holds_it() {
        let kept: Kept<u64> = Kept::default();
        let worker = kept.clone();
        *worker.borrow_mut() += 3;
        let held = worker.borrow_mut();
        assert_eq!(kept.try_take(), None);
        drop(held);
        assert_eq!(kept.try_take(), Some(3));
        assert_eq!(worker.take(), 0);
    }
}
