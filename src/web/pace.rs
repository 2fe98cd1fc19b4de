//! A request's paced send, one for an HTTP/1.1 connection and an HTTP/2 stream: when it is due,
//! its wait on the worker's pacer, and how late tsumo itself was in sending it.

use std::future::Future;
use std::rc::Rc;

use crate::stats::http::Recorder;
use crate::timing::clock::{self, Nanos};
use crate::timing::pacer::Pacer;
use crate::timing::schedule::Schedule;

/// One request's turn to be sent.
pub struct Turn {
    /// When the request is due.
    pub intended: Nanos,
    /// The clock when the turn began.
    now: Nanos,
    /// On a schedule (`false`: closed loop, where a request is due when its connection is free).
    paced: bool,
}

impl Turn {
    /// Request `index` of `schedule`, moved by the script's think time so that the think time
    /// adds no corrected latency; closed loop (no schedule): now, plus the think time.
    pub fn next(schedule: Option<&Schedule>, index: u64, think: Nanos) -> Turn {
        let now = clock::now();
        let intended = match schedule {
            Some(schedule) => schedule.intended(index) + think,
            None => now + think,
        };
        Turn {
            intended,
            now,
            paced: schedule.is_some(),
        }
    }

    /// A request sent again, still due at its first intended time.
    pub fn again(intended: Nanos, paced: bool) -> Turn {
        Turn {
            intended,
            now: clock::now(),
            paced,
        }
    }

    /// The wait on the pacer for the intended time, or `None` when that time has passed: a
    /// paced send that is late already releases every other waiter that is due as well.
    pub fn wait(&self, pacer: &Rc<Pacer>) -> Option<impl Future<Output = ()> + 'static> {
        if self.intended > self.now {
            return Some(pacer.sleep_until(self.intended));
        }
        if self.paced {
            pacer.release_due(self.now);
        }
        None
    }

    /// The request's intended and actual send times as it goes now (`waited`: it waited for its
    /// time or for its connection; if not, the clock is not read again). Closed loop: both are
    /// the send time.
    pub fn sent(&self, waited: bool) -> (Nanos, Nanos) {
        let sent = if waited { clock::now() } else { self.now };
        match self.paced {
            true => (self.intended, sent),
            false => (sent, sent),
        }
    }

    /// Records how late tsumo was in sending a paced request: only the delay tsumo caused, from
    /// when the request was due and its connection (or stream) free, at `free_at`, to `sent`.
    /// One that fell due while its connection was busy is counted as such.
    pub fn record_lateness(&self, recorder: &mut Recorder, free_at: Nanos, sent: Nanos) {
        if !self.paced {
            return;
        }
        recorder.roll_to(sent);
        recorder.at_intended(self.intended);
        let due = self.intended.max(free_at);
        recorder.record_send_lateness(clock::to_us(sent.saturating_sub(due)));
        if free_at > self.intended {
            recorder.counters.due_while_busy += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;

    fn paced(intended: Nanos, now: Nanos) -> Turn {
        Turn {
            intended,
            now,
            paced: true,
        }
    }

    #[test]
    fn lateness_counts_from_the_later_of_due_and_free() {
        let mut recorder = Recorder::new();
        // Free before it was due: late by sent − intended.
        paced(10 * MS, 0).record_lateness(&mut recorder, 5 * MS, 12 * MS);
        // Due while busy: late only by sent − free.
        paced(10 * MS, 0).record_lateness(&mut recorder, 20 * MS, 21 * MS);
        assert_eq!(recorder.send_lateness.len(), 2);
        assert_eq!(recorder.send_lateness.count_at(2_000), 1);
        assert_eq!(recorder.send_lateness.count_at(1_000), 1);
        assert_eq!(recorder.counters.due_while_busy, 1);
    }

    #[test]
    fn a_closed_loop_send_is_due_when_it_goes_and_records_no_lateness() {
        let mut recorder = Recorder::new();
        let turn = Turn {
            intended: 7 * MS,
            now: 7 * MS,
            paced: false,
        };
        assert_eq!(turn.sent(false), (7 * MS, 7 * MS));
        turn.record_lateness(&mut recorder, 9 * MS, 9 * MS);
        assert_eq!(recorder.send_lateness.len(), 0);
        assert_eq!(recorder.counters.due_while_busy, 0);
        // A paced one keeps its intended time; without a wait the clock is not read again.
        assert_eq!(paced(3 * MS, 5 * MS).sent(false), (3 * MS, 5 * MS));
    }

    #[test]
    fn think_time_moves_the_intended_time() {
        let schedule = Schedule::of_shard(0, crate::plan::Shard::WHOLE, 0, 1, 1_000);
        let turn = Turn::next(Some(&schedule), 2, 4 * MS);
        assert_eq!(turn.intended, schedule.intended(2) + 4 * MS);
        let closed = Turn::next(None, 2, 4 * MS);
        assert_eq!(closed.intended, closed.now + 4 * MS);
    }
}
