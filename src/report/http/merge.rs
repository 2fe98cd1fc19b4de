//! HTTP runs side by side merged into one ([`SavedResult::merge`](crate::report::result::SavedResult::merge)), exactly: histograms are
//! decoded, added and encoded again, and percentiles are recomputed from the sums with wrk2's
//! arithmetic. Counters and rates are summed (the runs ran side by side); elapsed time is the
//! longest.

use hdrhistogram::Histogram;

use super::intervals::merge_http;
use super::saved::{Percentiles, SavedRun};
use super::stages;
use crate::error::Error;
use crate::report::objectives;
use crate::report::result::SearchStep;
use crate::report::result::{add_encoded, add_sources};
use crate::report::schema::encode_histogram;
use crate::stats::http::split::SplitHistograms;
use crate::stats::new_histogram;

pub(super) fn merge(saved: &[(&SavedRun, &str)], label: &str) -> Result<SavedRun, Error> {
    let judged: Vec<_> = saved.iter().map(|(r, s)| (&r.objectives[..], *s)).collect();
    objectives::refuse_different(&judged)?;
    same_timestamps(saved)?;
    let mut merged = emptied(saved[0].0);
    let mut histograms: [Histogram<u64>; 4] = std::array::from_fn(|_| new_histogram());
    let names = ["latency", "uncorrected", "send_lateness", "req_per_sec"];
    // The split, where every part has one (files of older tsumos have none).
    let mut split = saved
        .iter()
        .all(|(run, _)| run.histograms.split.is_some())
        .then(SplitHistograms::default);
    for (run, source) in saved {
        merged.counters.add(&run.counters);
        merged.elapsed_s = merged.elapsed_s.max(run.elapsed_s);
        merged.interrupted |= run.interrupted;
        merged.plan.threads += run.plan.threads;
        merged.plan.connections += run.plan.connections;
        merged.plan.duration_s = merged.plan.duration_s.max(run.plan.duration_s);
        merged.plan.rate = merged.plan.rate.zip(run.plan.rate).map(|(a, b)| a + b);
        add_sources(&mut merged.plan.bind, &run.plan.bind);
        let h = &run.histograms;
        let encoded = [&h.latency, &h.uncorrected, &h.send_lateness, &h.req_per_sec];
        for ((sum, encoded), name) in histograms.iter_mut().zip(encoded).zip(names) {
            add_encoded(sum, encoded, source, name)?;
        }
        if let (Some(sum), Some(part)) = (split.as_mut(), &h.split) {
            for (sum, (name, encoded)) in sum.parts_mut().into_iter().zip(part.encoded()) {
                add_encoded(sum, encoded, source, name)?;
            }
        }
        for note in &run.notes {
            if !merged.notes.contains(note) {
                merged.notes.push(note.clone());
            }
        }
    }
    merged.script_error = script_errors(saved);
    let [latency, uncorrected, send_lateness, req_per_sec] = &histograms;
    merged.latency = Percentiles::of(latency);
    merged.uncorrected = Percentiles::of(uncorrected);
    merged.send_lateness = Percentiles::of(send_lateness);
    merged.histograms.latency = encode_histogram(latency);
    merged.histograms.uncorrected = encode_histogram(uncorrected);
    merged.histograms.send_lateness = encode_histogram(send_lateness);
    merged.histograms.req_per_sec = encode_histogram(req_per_sec);
    match &split {
        Some(split) => merged.set_split(split),
        None => {
            merged.server_latency = None;
            merged.own_delay = None;
            merged.user_latency = None;
            merged.histograms.split = None;
        }
    }
    // The runs went on side by side: the rates are the totals over the whole interval, the
    // longest run's (a 1 s run and an 8 s run did not add their rates for 8 s).
    if merged.elapsed_s > 0.0 {
        let over_all = |rate: fn(&SavedRun) -> f64| -> f64 {
            saved
                .iter()
                .map(|(run, _)| rate(run) * (run.elapsed_s / merged.elapsed_s))
                .sum()
        };
        merged.requests_per_sec = over_all(|r| r.requests_per_sec);
        merged.bytes_per_sec = over_all(|r| r.bytes_per_sec);
    }
    let intervals: Vec<_> = saved
        .iter()
        .map(|(r, src)| (&r.intervals[..], *src))
        .collect();
    merged.intervals = merge_http(&intervals)?;
    let parts: Vec<_> = saved.iter().map(|(r, src)| (&r.stages[..], *src)).collect();
    merged.stages = stages::merge(&parts, merged.plan.connections)?;
    let ends: Vec<_> = saved
        .iter()
        .map(|(r, _)| (r.ended_by, r.stopped_in_stage))
        .collect();
    (merged.ended_by, merged.stopped_in_stage) = crate::stats::end::merged(&ends);
    // The parts' objectives (the same in every part), judged on the whole and on each stage.
    merged.objectives = merged.judge_again();
    stages::judge_again(&mut merged.stages, &merged.objectives);
    merged.label = label.to_string();
    Ok(merged)
}

/// Kernel and user-space stamps are not one measure: never added into one histogram.
fn same_timestamps(saved: &[(&SavedRun, &str)]) -> Result<(), Error> {
    let (first, first_source) = saved[0];
    if let Some((other, source)) = saved.iter().find(|(r, _)| r.timestamps != first.timestamps) {
        return Err(Error::Usage(format!(
            "merge: {first_source} was timed with {} timestamps but {source} with {}; their \
             latencies are not one measure",
            first.timestamps.as_str(),
            other.timestamps.as_str()
        )));
    }
    Ok(())
}

/// The first run with what the merge sums cleared: every field not summed is the first run's
/// (the same tool wrote them all).
fn emptied(first: &SavedRun) -> SavedRun {
    let mut merged = first.clone();
    merged.counters = Default::default();
    merged.requests_per_sec = 0.0;
    merged.bytes_per_sec = 0.0;
    merged.elapsed_s = 0.0;
    merged.notes.clear();
    // Why one process sent late is not the merge's word.
    merged.behind_schedule = None;
    // The first part's log is not the merge's (`tsumo merge --requests` writes that).
    merged.requests_log = None;
    merged.plan.threads = 0;
    merged.plan.connections = 0;
    merged.plan.rate = Some(0);
    merged
}

/// The runs' script errors in one line, each named by its file when there are several runs.
fn script_errors(saved: &[(&SavedRun, &str)]) -> Option<String> {
    let script_errors: Vec<String> = saved
        .iter()
        .filter_map(|(run, source)| {
            let e = run.script_error.as_ref()?;
            Some(if saved.len() == 1 {
                e.clone()
            } else {
                format!("{source}: {e}")
            })
        })
        .collect();
    (!script_errors.is_empty()).then(|| script_errors.join("; "))
}
