//! One worker's intervals (`--interval`): a timer on the worker's thread closes each at its
//! end, as the difference of the worker's totals, into its timeline (and hands it to
//! `--dashboard`'s live state); the last one is closed when the connections are done.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use crate::stats::sink::Sink;
use crate::stats::timeline::IntervalClock;
use crate::stats::ws::timeline::{Interval, Totals};
use crate::stats::ws::Recorder;
use crate::timing::clock;

/// The interval being recorded, and the totals it began with.
pub struct Intervals {
    clock: IntervalClock,
    index: u64,
    was: Totals,
    sink: Option<Arc<dyn Sink<Interval>>>,
}

impl Intervals {
    pub fn new(t0: clock::Nanos, length: Duration) -> Intervals {
        Intervals {
            clock: IntervalClock::new(t0, length),
            index: 0,
            was: Totals::default(),
            sink: crate::stats::live::sink::<crate::stats::ws::live::Data>(),
        }
    }

    /// Closes the current interval: what was counted since it began.
    pub fn close(&mut self, recorder: &RefCell<Recorder>) {
        let mut record = recorder.borrow_mut();
        let now = Totals::of(&record);
        let interval = now.since(&self.was);
        if let Some(sink) = &self.sink {
            sink.closed(self.index, &interval);
        }
        record.timeline.length = Some(self.clock.length);
        record.timeline.add(self.index, &interval);
        self.was = now;
    }
}

/// Closes each interval at its end (a worker's timer, off the connections' paths).
pub async fn tick(intervals: Rc<RefCell<Intervals>>, recorder: Rc<RefCell<Recorder>>) {
    loop {
        let ends_at = {
            let intervals = intervals.borrow();
            intervals.clock.end_of(intervals.index)
        };
        tokio::time::sleep(Duration::from_nanos(ends_at.saturating_sub(clock::now()))).await;
        let mut intervals = intervals.borrow_mut();
        intervals.close(&recorder);
        // A tick later than a whole interval folds the one it missed into this one.
        intervals.index = (intervals.index + 1).max(intervals.clock.index(clock::now()));
    }
}
