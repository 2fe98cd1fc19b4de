//! `/metrics`: the live state in OpenMetrics text, on prometheus-client's encoder, named as
//! Prometheus names things (`tsumo_requests_total`, base units: seconds, bytes). Each series
//! carries the run's labels (`run_id`, `label`, and `shard` for a part of a sharded run), so
//! that one Prometheus scraping every shard adds them up with `sum by (run_id)`; the rounds of
//! `--vs` and the steps of a search under one label add up into one series, as counters do.
//!
//! Each kind's series and their encoding are in its own file (`http`, `mahjong`, `ws`),
//! behind one small trait; `Snapshot::of` is the one dispatch over the kinds.
//!
//! Latencies are Prometheus histograms with fixed buckets from 50 µs to 10 s, filled from the
//! intervals' HdrHistograms: each recorded value goes to the first bucket at or above it, so
//! `histogram_quantile` lands in the bucket that holds the report's percentile.

mod http;
mod mahjong;
mod ws;

use hdrhistogram::Histogram;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use crate::stats::live::{CapacityLive, LiveData, LiveRun, RunLabels, State};

/// The latency buckets' upper bounds, seconds (the last, +Inf, is the encoder's).
pub const BUCKETS_S: [f64; 17] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

/// The state as OpenMetrics text.
pub fn render(state: &State) -> String {
    let mut registry = Registry::with_prefix("tsumo");
    registry.register_collector(Box::new(Snapshot::of(state)));
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
    text
}

/// What `/metrics` shows, taken under the lock: each kind's series by label set.
#[derive(Debug, Default)]
struct Snapshot {
    http: Vec<(Labels, http::Series)>,
    mahjong: Vec<(Labels, mahjong::Series)>,
    ws: Vec<(Labels, ws::Series)>,
    /// A capacity search's step and verdicts, with the labels of its first run.
    capacity: Option<(Labels, CapacityLive)>,
}

/// One kind's series in `/metrics`: each run's part added under its labels (runs under one
/// label set add up, as counters do), then every label set's encoded, family by family.
trait SeriesOf: Default {
    /// The kind's part of a live run.
    type Part;
    fn add(&mut self, run: &LiveRun, part: &Self::Part);
    fn encode(runs: &[(Labels, Self)], e: &mut DescriptorEncoder) -> Result<(), std::fmt::Error>;
}

/// Adds a run's part into the series of its label set (a new one when it has none yet).
fn add_to<S: SeriesOf>(
    series: &mut Vec<(Labels, S)>,
    labels: Labels,
    run: &LiveRun,
    part: &S::Part,
) {
    let at = match series.iter().position(|(l, _)| *l == labels) {
        Some(at) => at,
        None => {
            series.push((labels, S::default()));
            series.len() - 1
        }
    };
    series[at].1.add(run, part);
}

/// A run's labels.
type Labels = Vec<(&'static str, String)>;

fn label_set(labels: &RunLabels) -> Vec<(&'static str, String)> {
    let mut set = vec![
        ("run_id", labels.run_id.clone()),
        ("label", labels.label.clone()),
    ];
    if let Some(shard) = &labels.shard {
        set.push(("shard", shard.clone()));
    }
    set
}

impl Snapshot {
    /// The one dispatch over the kinds: each run's part to its kind's series.
    fn of(state: &State) -> Snapshot {
        let mut snapshot = Snapshot::default();
        for run in &state.runs {
            let labels = label_set(&run.labels);
            match &run.data {
                LiveData::Http(h) => add_to(&mut snapshot.http, labels, run, h),
                LiveData::Mahjong(m) => add_to(&mut snapshot.mahjong, labels, run, m),
                LiveData::Ws(w) => add_to(&mut snapshot.ws, labels, run, w),
            }
        }
        if let (Some(capacity), Some(first)) = (&state.capacity, state.runs.first()) {
            snapshot.capacity = Some((label_set(&first.labels), capacity.clone()));
        }
        snapshot
    }
}

/// A capacity search: the current step's load, and the steps judged so far by verdict.
fn encode_capacity(
    e: &mut DescriptorEncoder,
    (labels, capacity): &(Labels, CapacityLive),
) -> Result<(), std::fmt::Error> {
    let mut set = labels.clone();
    set.push(("unit", capacity.unit.replace('/', "_per_")));
    let mut metric = e.encode_descriptor(
        "capacity_step_load",
        "The load of the capacity search's step now running (requests/sec or players)",
        None,
        MetricType::Gauge,
    )?;
    metric.encode_family(&set)?.encode_gauge(&capacity.load)?;
    let mut metric = e.encode_descriptor(
        "capacity_steps",
        "The capacity search's steps judged so far, by verdict",
        None,
        MetricType::Counter,
    )?;
    for (verdict, count) in &capacity.verdicts {
        let mut set = labels.clone();
        set.push(("verdict", verdict.to_string()));
        metric
            .encode_family(&set)?
            .encode_counter::<NoLabelSet, u64, u64>(count, None)?;
    }
    Ok(())
}

/// A histogram of µs as Prometheus buckets (counts per bucket, not cumulative: the encoder
/// adds them up), with its sum in seconds.
fn buckets(h: &Histogram<u64>) -> (f64, u64, Vec<(f64, u64)>) {
    let mut counts = vec![0u64; BUCKETS_S.len() + 1];
    for v in h.iter_recorded() {
        let value_s = h.highest_equivalent(v.value_iterated_to()) as f64 / 1e6;
        let bucket = BUCKETS_S
            .iter()
            .position(|&bound| value_s <= bound)
            .unwrap_or(BUCKETS_S.len());
        counts[bucket] += v.count_at_value();
    }
    let bounds = BUCKETS_S.iter().copied().chain([f64::INFINITY]);
    let sum_s = h.mean() * h.len() as f64 / 1e6;
    (sum_s, h.len(), bounds.zip(counts).collect())
}

/// One more label (`kind="read"`; an empty key for none) and how a series' count is read.
type CountOf<T> = (&'static str, &'static str, fn(&T) -> u64);
/// The same for a gauge's value (none: no sample).
type GaugeOf<T> = (&'static str, &'static str, fn(&T) -> Option<f64>);
/// The same for a histogram (none: not measured).
type HistogramOf<T> = (
    &'static str,
    &'static str,
    fn(&T) -> Option<&Histogram<u64>>,
);

/// One counter family: one value per run.
fn counter<'a, T: 'a>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    unit: Option<&Unit>,
    runs: impl IntoIterator<Item = &'a (Labels, T)>,
    extra: &[CountOf<T>],
) -> Result<(), std::fmt::Error> {
    let mut metric = encoder.encode_descriptor(name, help, unit, MetricType::Counter)?;
    for (labels, series) in runs {
        for (key, value, pick) in extra {
            let mut set = labels.clone();
            if !key.is_empty() {
                set.push((key, value.to_string()));
            }
            metric
                .encode_family(&set)?
                .encode_counter::<NoLabelSet, u64, u64>(&pick(series), None)?;
        }
    }
    Ok(())
}

/// One gauge family: one value per run (and per `extra` label).
fn gauge<'a, T: 'a>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    runs: impl IntoIterator<Item = &'a (Labels, T)>,
    extra: &[GaugeOf<T>],
) -> Result<(), std::fmt::Error> {
    let mut metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (labels, series) in runs {
        for (key, value, pick) in extra {
            let Some(v) = pick(series) else { continue };
            let mut set = labels.clone();
            if !key.is_empty() {
                set.push((key, value.to_string()));
            }
            metric.encode_family(&set)?.encode_gauge(&v)?;
        }
    }
    Ok(())
}

/// One histogram family of µs histograms, in seconds.
fn histogram<'a, T: 'a>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    runs: impl IntoIterator<Item = &'a (Labels, T)>,
    extra: &[HistogramOf<T>],
) -> Result<(), std::fmt::Error> {
    let mut metric =
        encoder.encode_descriptor(name, help, Some(&Unit::Seconds), MetricType::Histogram)?;
    for (labels, series) in runs {
        for (key, value, pick) in extra {
            let Some(h) = pick(series) else { continue };
            let mut set = labels.clone();
            if !key.is_empty() {
                set.push((key, value.to_string()));
            }
            let (sum, count, buckets) = buckets(h);
            metric
                .encode_family(&set)?
                .encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
        }
    }
    Ok(())
}

impl Collector for Snapshot {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        if !self.http.is_empty() {
            http::Series::encode(&self.http, &mut e)?;
        }
        if !self.mahjong.is_empty() {
            mahjong::Series::encode(&self.mahjong, &mut e)?;
        }
        if !self.ws.is_empty() {
            ws::Series::encode(&self.ws, &mut e)?;
        }
        if let Some(capacity) = &self.capacity {
            encode_capacity(&mut e, capacity)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::http::live::{Data, Totals};
    use crate::stats::new_histogram;
    use crate::stats::timeline::Packed;

    fn state() -> State {
        let mut h = new_histogram();
        for us in [40, 900, 1_000, 1_001, 20_000_000] {
            h.record(us).unwrap();
        }
        let interval = crate::stats::http::Interval {
            sent: 6,
            completed: 5,
            latency: Packed::pack(&h),
            ..crate::stats::http::Interval::default()
        };
        let mut totals = Totals::default();
        totals.counts.sent = 6;
        totals.counts.completed = 5;
        totals.counts.errors.status = 1;
        totals.latency = h;
        let run = |label: &str| LiveRun {
            labels: RunLabels {
                run_id: "r1".into(),
                label: label.into(),
                shard: Some("2/3".into()),
            },
            workers: 1,
            length: 1_000_000_000,
            start_unix_ns: None,
            t0: None,
            server: Vec::new(),
            ended: true,
            data: LiveData::Http(Box::new(Data {
                rate: Some(100),
                intervals: [(0, (1, interval.clone()))].into(),
                totals: totals.clone(),
                ..Default::default()
            })),
        };
        State {
            runs: vec![run("a"), run("a"), run("b")],
            ..State::default()
        }
    }

    #[test]
    fn counters_add_up_by_labels_and_latency_lands_in_its_buckets() {
        let text = render(&state());
        assert!(
            text.contains("tsumo_requests_total{run_id=\"r1\",label=\"a\",shard=\"2/3\"} 10\n"),
            "{text}"
        );
        assert!(text.contains("tsumo_requests_total{run_id=\"r1\",label=\"b\",shard=\"2/3\"} 5\n"));
        assert!(text.contains(
            "tsumo_responses_total{run_id=\"r1\",label=\"b\",shard=\"2/3\",class=\"other\"} 1\n"
        ));
        let bucket = |le: &str| {
            format!("tsumo_latency_seconds_bucket{{le=\"{le}\",run_id=\"r1\",label=\"b\",shard=\"2/3\"}}")
        };
        assert!(
            text.contains(&format!("{} 1\n", bucket("0.00005"))),
            "{text}"
        );
        assert!(text.contains(&format!("{} 3\n", bucket("0.001"))), "{text}");
        assert!(
            text.contains(&format!("{} 4\n", bucket("0.0025"))),
            "{text}"
        );
        assert!(text.contains(&format!("{} 4\n", bucket("10.0"))), "{text}");
        assert!(text.contains(&format!("{} 5\n", bucket("+Inf"))), "{text}");
        assert!(text.contains("tsumo_target_rate{run_id=\"r1\",label=\"b\",shard=\"2/3\"} 100"));
        assert!(text.ends_with("# EOF\n"));
    }
}
