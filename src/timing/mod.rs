//! Time for every mode: the monotonic clock in nanoseconds, the sub-millisecond pacer each
//! worker waits on, the per-connection schedule of an open-loop run, and request deadlines.
//! Below every mode, so HTTP connections and mahjong players wait on the same machinery.

pub mod clock;
pub mod deadline;
pub mod layers;
pub mod pacer;
pub mod schedule;
pub mod stages;
