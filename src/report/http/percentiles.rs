//! A histogram's summary as an HTTP run saves it (and the report and objectives read it): its
//! own module, as both the run's layout (`saved`) and each stage's (`stages`) use it.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::slo::Percentile;
use crate::stats::hdr;

/// Summary of one histogram, µs, computed with wrk2's arithmetic (as the text report prints).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Samples in the histogram.
    pub count: u64,
    pub p50: u64,
    pub p75: u64,
    pub p90: u64,
    pub p99: u64,
    #[serde(rename = "p99.9")]
    pub p99_9: u64,
    #[serde(rename = "p99.99")]
    pub p99_99: u64,
    /// Lowest equivalent value of the highest bucket (wrk2's Max).
    pub max: u64,
    pub min: u64,
    pub mean: f64,
    pub stdev: f64,
}

impl Percentiles {
    /// The value at `p` (µs) an objective judges; `None` when nothing was recorded.
    pub fn at(&self, p: Percentile) -> Option<f64> {
        let value = match p {
            Percentile::P50 => self.p50,
            Percentile::P75 => self.p75,
            Percentile::P90 => self.p90,
            Percentile::P99 => self.p99,
            Percentile::P99_9 => self.p99_9,
            Percentile::P99_99 => self.p99_99,
            Percentile::Max => self.max,
        };
        (self.count > 0).then_some(value as f64)
    }

    pub fn of(h: &Histogram<u64>) -> Percentiles {
        Percentiles {
            count: h.len(),
            p50: hdr::value_at_percentile(h, 50.0),
            p75: hdr::value_at_percentile(h, 75.0),
            p90: hdr::value_at_percentile(h, 90.0),
            p99: hdr::value_at_percentile(h, 99.0),
            p99_9: hdr::value_at_percentile(h, 99.9),
            p99_99: hdr::value_at_percentile(h, 99.99),
            max: hdr::max(h),
            min: hdr::min(h),
            mean: hdr::mean(h),
            stdev: hdr::stdev(h),
        }
    }
}
