//! `/metrics`: the live state in OpenMetrics text, on prometheus-client's encoder, named as
//! Prometheus names things (`tsumo_requests_total`, base units: seconds, bytes). Each series
//! carries the run's labels (`run_id`, `label`, and `shard` for a part of a sharded run), so
//! that one Prometheus scraping every shard adds them up with `sum by (run_id)`; the rounds of
//! `--vs` and the steps of a search under one label add up into one series, as counters do.
//!
//! Latencies are Prometheus histograms with fixed buckets from 50 µs to 10 s, filled from the
//! intervals' HdrHistograms: each recorded value goes to the first bucket at or above it, so
//! `histogram_quantile` lands in the bucket that holds the report's percentile.

use hdrhistogram::Histogram;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use crate::stats::live::{CapacityLive, LiveData, RunLabels, State};
use crate::stats::new_histogram;

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

/// What `/metrics` shows, taken under the lock.
#[derive(Debug, Default)]
struct Snapshot {
    http: Vec<(Vec<(&'static str, String)>, HttpSeries)>,
    mahjong: Vec<(Vec<(&'static str, String)>, MahjongSeries)>,
    /// A capacity search's step and verdicts, with the labels of its first run.
    capacity: Option<(Labels, CapacityLive)>,
}

#[derive(Debug)]
struct HttpSeries {
    counts: crate::stats::http::Interval,
    latency: Histogram<u64>,
    server_latency: Histogram<u64>,
    send_lateness: Histogram<u64>,
    rate: Option<u64>,
}

#[derive(Debug)]
struct MahjongSeries {
    /// The last whole interval's players.
    last: crate::stats::mahjong::Interval,
    sum: crate::stats::mahjong::Interval,
    draw_overshoot: Histogram<u64>,
    deal_overshoot: Histogram<u64>,
    reply_lateness: Histogram<u64>,
}

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
    fn of(state: &State) -> Snapshot {
        let mut snapshot = Snapshot::default();
        for run in &state.runs {
            let labels = label_set(&run.labels);
            match &run.data {
                LiveData::Http(h) => {
                    let series = match snapshot.http.iter_mut().find(|(l, _)| *l == labels) {
                        Some((_, series)) => series,
                        None => {
                            snapshot.http.push((
                                labels,
                                HttpSeries {
                                    counts: crate::stats::http::Interval::default(),
                                    latency: new_histogram(),
                                    server_latency: new_histogram(),
                                    send_lateness: new_histogram(),
                                    rate: None,
                                },
                            ));
                            match snapshot.http.last_mut() {
                                Some((_, series)) => series,
                                None => continue,
                            }
                        }
                    };
                    series.counts.add(&h.totals.counts);
                    let _ = series.latency.add(&h.totals.latency);
                    let _ = series.server_latency.add(&h.totals.server_latency);
                    let _ = series.send_lateness.add(&h.totals.send_lateness);
                    series.rate = h.rate;
                }
                LiveData::Mahjong(m) => {
                    let sum = m.totals.counts.clone();
                    // The players at the last whole interval's end.
                    let last = m
                        .intervals
                        .iter()
                        .rev()
                        .find(|(&index, (handed, _))| run.is_whole(index, *handed))
                        .map(|(_, (_, interval))| crate::stats::mahjong::Interval {
                            players: interval.players,
                            ..crate::stats::mahjong::Interval::default()
                        })
                        .unwrap_or_default();
                    let draw = m.totals.draw_overshoot.clone();
                    let deal = m.totals.deal_overshoot.clone();
                    let reply = m.totals.reply_lateness.clone();
                    // Sessions under one label (a search's steps of tables, playing at once;
                    // the rounds of --vs) add up: their players, games and overshoot.
                    match snapshot.mahjong.iter_mut().find(|(l, _)| *l == labels) {
                        Some((_, series)) => {
                            series.last.add(&last);
                            series.sum.add(&sum);
                            let _ = series.draw_overshoot.add(&draw);
                            let _ = series.deal_overshoot.add(&deal);
                            let _ = series.reply_lateness.add(&reply);
                        }
                        None => snapshot.mahjong.push((
                            labels,
                            MahjongSeries {
                                last,
                                sum,
                                draw_overshoot: draw,
                                deal_overshoot: deal,
                                reply_lateness: reply,
                            },
                        )),
                    }
                }
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

type Labels = Vec<(&'static str, String)>;

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
            self.encode_http(&mut e)?;
        }
        if !self.mahjong.is_empty() {
            self.encode_mahjong(&mut e)?;
        }
        if let Some(capacity) = &self.capacity {
            encode_capacity(&mut e, capacity)?;
        }
        Ok(())
    }
}

impl Snapshot {
    /// The HTTP runs' counters, then their latencies.
    fn encode_http(&self, e: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let runs = &self.http;
        counter(
            e,
            "requests",
            "Requests completed (a whole response read): the report's request count",
            None,
            runs,
            &[("", "", |s: &HttpSeries| s.counts.completed)],
        )?;
        counter(
            e,
            "requests_sent",
            "Requests written to the server",
            None,
            runs,
            &[("", "", |s: &HttpSeries| s.counts.sent)],
        )?;
        counter(
            e,
            "responses",
            "Complete responses by status: 2xx or 3xx, or another (wrk's Non-2xx or 3xx)",
            None,
            runs,
            &[
                ("class", "2xx_3xx", |s: &HttpSeries| {
                    s.counts.completed.saturating_sub(s.counts.errors.status)
                }),
                ("class", "other", |s: &HttpSeries| s.counts.errors.status),
            ],
        )?;
        counter(
            e,
            "errors",
            "Socket errors by kind, as wrk's Socket errors line counts them",
            None,
            runs,
            &[
                ("kind", "connect", |s: &HttpSeries| s.counts.errors.connect),
                ("kind", "read", |s: &HttpSeries| s.counts.errors.read),
                ("kind", "write", |s: &HttpSeries| s.counts.errors.write),
                ("kind", "timeout", |s: &HttpSeries| s.counts.errors.timeout),
            ],
        )?;
        counter(
            e,
            "never_sent",
            "Requests due but never sent, by why (counted when the run ends)",
            None,
            runs,
            &[
                ("why", "busy", |s: &HttpSeries| s.counts.unsent.busy),
                ("why", "connect_failed", |s: &HttpSeries| {
                    s.counts.unsent.connect_failed
                }),
                ("why", "connect_timeout", |s: &HttpSeries| {
                    s.counts.unsent.connect_timeout
                }),
                ("why", "late", |s: &HttpSeries| s.counts.unsent.late),
            ],
        )?;
        counter(
            e,
            "read",
            "Bytes read from the server, headers included",
            Some(&Unit::Bytes),
            runs,
            &[("", "", |s: &HttpSeries| s.counts.bytes_read)],
        )?;
        counter(
            e,
            "written",
            "Bytes written to the server",
            Some(&Unit::Bytes),
            runs,
            &[("", "", |s: &HttpSeries| s.counts.bytes_written)],
        )?;
        self.encode_http_latencies(e)
    }

    /// The HTTP runs' latency histograms and target rate.
    fn encode_http_latencies(&self, e: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let runs = &self.http;
        histogram(
            e,
            "latency",
            "Latency corrected for coordinated omission, from each request's due time",
            runs,
            &[("", "", |s: &HttpSeries| Some(&s.latency))],
        )?;
        histogram(
            e,
            "server_latency",
            "What the server caused of the corrected latency",
            runs,
            &[("", "", |s: &HttpSeries| {
                (!s.server_latency.is_empty()).then_some(&s.server_latency)
            })],
        )?;
        histogram(
            e,
            "send_lateness",
            "How late tsumo wrote each paced request after its due time",
            runs,
            &[("", "", |s: &HttpSeries| Some(&s.send_lateness))],
        )?;
        gauge(
            e,
            "target_rate",
            "The target rate (-R), requests per second",
            runs,
            &[("", "", |s: &HttpSeries| s.rate.map(|r| r as f64))],
        )
    }

    fn encode_mahjong(&self, e: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let runs = &self.mahjong;
        gauge(
            e,
            "players",
            "Players at the last whole interval's end, by where they are",
            runs,
            &[
                ("phase", "logged_in", |s: &MahjongSeries| {
                    Some(s.last.players.logged_in as f64)
                }),
                ("phase", "connected", |s: &MahjongSeries| {
                    Some(s.last.players.connected as f64)
                }),
                ("phase", "playing", |s: &MahjongSeries| {
                    Some(s.last.players.playing as f64)
                }),
            ],
        )?;
        counter(
            e,
            "games_started",
            "Games started",
            None,
            runs,
            &[("", "", |s: &MahjongSeries| s.sum.games_started)],
        )?;
        counter(
            e,
            "games_ended",
            "Games ended, by how",
            None,
            runs,
            &[
                ("how", "completed", |s: &MahjongSeries| {
                    s.sum.games_completed
                }),
                ("how", "aborted", |s: &MahjongSeries| s.sum.games_aborted),
                ("how", "cut", |s: &MahjongSeries| s.sum.games_cut),
            ],
        )?;
        counter(
            e,
            "hands",
            "Hands dealt, per player",
            None,
            runs,
            &[("", "", |s: &MahjongSeries| s.sum.hands)],
        )?;
        counter(
            e,
            "messages",
            "WebSocket messages, by direction",
            None,
            runs,
            &[
                ("direction", "in", |s: &MahjongSeries| s.sum.messages_in),
                ("direction", "out", |s: &MahjongSeries| s.sum.messages_out),
            ],
        )?;
        counter(
            e,
            "session_errors",
            "Errors of the session's players (failed logins, sockets lost, bad frames)",
            None,
            runs,
            &[("", "", |s: &MahjongSeries| s.sum.errors)],
        )?;
        counter(
            e,
            "disconnects",
            "WebSockets the server closed (or that failed) before the player was done",
            None,
            runs,
            &[("", "", |s: &MahjongSeries| s.sum.disconnects)],
        )?;
        histogram(
            e,
            "reply_lateness",
            "How late tsumo's players replied after their intended reply time",
            runs,
            &[("", "", |s: &MahjongSeries| Some(&s.reply_lateness))],
        )?;
        histogram(
            e,
            "step_overshoot",
            "Game steps beyond their due time, by kind: own draws beyond the think time, \
             deals beyond the server's minimum",
            runs,
            &[
                ("kind", "draw", |s: &MahjongSeries| Some(&s.draw_overshoot)),
                ("kind", "deal", |s: &MahjongSeries| Some(&s.deal_overshoot)),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::http::live::{Data, Totals};
    use crate::stats::live::LiveRun;
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
