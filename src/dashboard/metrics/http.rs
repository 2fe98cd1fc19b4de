//! `/metrics` of an HTTP run: requests, responses, errors, never-sent requests and bytes as
//! counters, the latencies as histograms, the target rate as a gauge.

use hdrhistogram::Histogram;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::registry::Unit;

use super::{counter, gauge, histogram, Labels, SeriesOf};
use crate::report::http::live::target_now;
use crate::stats::http::{live, Interval};
use crate::stats::live::LiveRun;
use crate::stats::new_histogram;

/// An HTTP run's series: its sums, added up over the runs under one label set.
#[derive(Debug)]
pub(super) struct Series {
    counts: Interval,
    latency: Histogram<u64>,
    server_latency: Histogram<u64>,
    send_lateness: Histogram<u64>,
    /// The target now: `-R`, or the profile's rate at this moment.
    rate: Option<f64>,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            counts: Interval::default(),
            latency: new_histogram(),
            server_latency: new_histogram(),
            send_lateness: new_histogram(),
            rate: None,
        }
    }
}

impl SeriesOf for Series {
    type Part = live::Data;

    fn add(&mut self, run: &LiveRun, h: &live::Data) {
        self.counts.add(&h.totals.counts);
        let _ = self.latency.add(&h.totals.latency);
        let _ = self.server_latency.add(&h.totals.server_latency);
        let _ = self.send_lateness.add(&h.totals.send_lateness);
        self.rate = target_now(run, h);
    }

    /// The HTTP runs' counters, then their latencies.
    fn encode(runs: &[(Labels, Series)], e: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
        counter(
            e,
            "requests",
            "Requests completed (a whole response read): the report's request count",
            None,
            runs,
            &[("", "", |s: &Series| s.counts.completed)],
        )?;
        counter(
            e,
            "requests_sent",
            "Requests written to the server",
            None,
            runs,
            &[("", "", |s: &Series| s.counts.sent)],
        )?;
        counter(
            e,
            "responses",
            "Complete responses by status: 2xx or 3xx, or another (wrk's Non-2xx or 3xx)",
            None,
            runs,
            &[
                ("class", "2xx_3xx", |s: &Series| {
                    s.counts.completed.saturating_sub(s.counts.errors.status)
                }),
                ("class", "other", |s: &Series| s.counts.errors.status),
            ],
        )?;
        counter(
            e,
            "errors",
            "Socket errors by kind, as wrk's Socket errors line counts them",
            None,
            runs,
            &[
                ("kind", "connect", |s: &Series| s.counts.errors.connect),
                ("kind", "read", |s: &Series| s.counts.errors.read),
                ("kind", "write", |s: &Series| s.counts.errors.write),
                ("kind", "timeout", |s: &Series| s.counts.errors.timeout),
            ],
        )?;
        counter(
            e,
            "never_sent",
            "Requests due but never sent, by why (counted when the run ends)",
            None,
            runs,
            &[
                ("why", "busy", |s: &Series| s.counts.unsent.busy),
                ("why", "connect_failed", |s: &Series| {
                    s.counts.unsent.connect_failed
                }),
                ("why", "connect_timeout", |s: &Series| {
                    s.counts.unsent.connect_timeout
                }),
                ("why", "late", |s: &Series| s.counts.unsent.late),
            ],
        )?;
        counter(
            e,
            "read",
            "Bytes read from the server, headers included",
            Some(&Unit::Bytes),
            runs,
            &[("", "", |s: &Series| s.counts.bytes_read)],
        )?;
        counter(
            e,
            "written",
            "Bytes written to the server",
            Some(&Unit::Bytes),
            runs,
            &[("", "", |s: &Series| s.counts.bytes_written)],
        )?;
        latencies(runs, e)
    }
}

/// The HTTP runs' latency histograms and target rate.
fn latencies(runs: &[(Labels, Series)], e: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
    histogram(
        e,
        "latency",
        "Latency corrected for coordinated omission, from each request's due time",
        runs,
        &[("", "", |s: &Series| Some(&s.latency))],
    )?;
    histogram(
        e,
        "server_latency",
        "What the server caused of the corrected latency",
        runs,
        &[("", "", |s: &Series| {
            (!s.server_latency.is_empty()).then_some(&s.server_latency)
        })],
    )?;
    histogram(
        e,
        "send_lateness",
        "How late tsumo wrote each paced request after its due time",
        runs,
        &[("", "", |s: &Series| Some(&s.send_lateness))],
    )?;
    gauge(
        e,
        "target_rate",
        "The target rate (-R, or --stages' rate at this moment), requests per second",
        runs,
        &[("", "", |s: &Series| s.rate)],
    )
}
