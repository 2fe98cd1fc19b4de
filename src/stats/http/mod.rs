//! What an HTTP run records (HTTP/1.1, HTTP/2 or HTTP/3): each worker's [`Recorder`] (the
//! latency histograms and the send lateness, the [`Counters`], the [`Timeline`] of intervals),
//! merged at the end into the run's [`RunResult`]. Beside them, each its own file: `split`, the
//! corrected latency split into what the server caused and tsumo's own send and read delay,
//! exactly, response by response; `shortfall`, the judgement of a rate not reached and of
//! tsumo sending behind its schedule; `protocol`, HTTP/1.1's violations by kind; `http2` and
//! `http3`, those protocols' frames, grants, packets and ends; `over`, the latency-limit
//! counts; `live`, the run's intervals as `--dashboard` adds them up; `stages`, each `--stages`
//! stage's own record.

pub mod counters;
pub mod http2;
pub mod http3;
pub mod live;
pub mod over;
pub mod protocol;
pub mod recorder;
pub mod result;
pub mod shortfall;
pub mod split;
pub mod stages;
pub mod timeline;

pub use counters::{Counters, Errors, TlsFailure, TlsFailures, Unsent};
pub use recorder::{Recorder, TLS_FAILURE_QUOTES};
pub use result::RunResult;
pub use timeline::{Interval, RunTimeline, Timeline};
