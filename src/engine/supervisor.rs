//! The main thread during a run: once a second it samples each worker's completions (the
//! report's per-second samples and the progress line); it ends the run at the duration, on
//! SIGINT, SIGTERM or SIGHUP (what Ctrl-C, `timeout`, CI runners and Kubernetes send), when a
//! worker asks to end it, when every worker has finished its work, when the mode finds its
//! verdict settled (a capacity step broken or held beyond doubt), or when it finds the server
//! gone (a `--stages` run's).

use std::sync::atomic::Ordering;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::signals::Signals;
use super::worker::Started;
use super::{Gauges, Mode, Settings};
use crate::stats::end::EndReason;
use crate::stats::new_histogram;
use crate::timing::clock::{self, Nanos};

pub(super) struct Supervised {
    pub elapsed: Duration,
    pub ended_by: EndReason,
    pub per_second: Histogram<u64>,
    /// Still caught: a signal during the join shortens the wait (see `Started::join`).
    pub signals: Signals,
}

const TICK: Nanos = 1_000_000_000;

/// Waits for the end of the run, sampling each worker's completions once a second.
pub(super) async fn supervise<M: Mode>(
    mode: &M,
    settings: &Settings,
    t0: Nanos,
    started: &Started<M::Worker>,
    mut signals: Signals,
) -> Supervised {
    let gauges = &started.gauges;
    let control = &started.control;
    let duration_ns = settings.duration.as_nanos().min(u64::MAX as u128) as Nanos;
    let stop_at = t0.saturating_add(duration_ns);
    let mut per_second = new_histogram();
    let mut last_counts: Vec<u64> = vec![0; gauges.len()];
    let mut last_tick = t0;
    let mut samples = 0u64;
    let mut sample = |now: Nanos, last_tick: Nanos| -> f64 {
        let span = (now - last_tick) as f64 / 1e9;
        let mut total = 0.0;
        for (counters, last) in gauges.iter().zip(last_counts.iter_mut()) {
            let count = counters.completed();
            let rate = count.saturating_sub(*last) as f64 / span.max(1e-9);
            *last = count;
            per_second.saturating_record(rate.round() as u64);
            total += rate;
        }
        total
    };
    let ended_by = loop {
        let next_tick = last_tick.saturating_add(TICK).min(stop_at);
        let wait = Duration::from_nanos(next_tick.saturating_sub(clock::now()));
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            name = signals.recv() => break EndReason::Signal(name),
            _ = control.wake.notified() => {
                if control.end_requested.load(Ordering::SeqCst) {
                    break EndReason::Ended;
                }
                if control.finished.load(Ordering::SeqCst) >= gauges.len() {
                    break EndReason::Done;
                }
                continue;
            }
        }
        let now = clock::now();
        if now < next_tick {
            continue;
        }
        let stopped = settings.stop.as_ref();
        if next_tick == stop_at || stopped.is_some_and(|s| s.load(Ordering::SeqCst)) {
            break EndReason::Duration;
        }
        let rate = sample(now, last_tick);
        samples += 1;
        last_tick = now;
        let line = mode.progress_line(Duration::from_nanos(now - t0), gauges, rate);
        settings.progress.show_line(&line);
        if mode.settled(Duration::from_nanos(now - t0), gauges) {
            break EndReason::Settled;
        }
        if mode.server_gone(gauges) {
            break EndReason::ServerGone;
        }
    };
    let end = clock::now();
    // The last, partial second counts if it is at least half a second, or if it is all there is.
    if samples == 0 || end - last_tick >= TICK / 2 {
        sample(end, last_tick);
    }
    Supervised {
        elapsed: Duration::from_nanos(end - t0),
        ended_by,
        per_second,
        signals,
    }
}
