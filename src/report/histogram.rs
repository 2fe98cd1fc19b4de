//! A histogram as a saved result keeps it (a mahjong session's, a WebSocket run's): its usual
//! percentiles and the histogram itself.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::report::schema::{decode_histogram, encode_histogram};
use crate::slo::Percentile;
use crate::stats::hdr;

/// A histogram's usual percentiles (µs, wrk2's arithmetic) and the histogram itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedHistogram {
    /// Samples in the histogram; the percentiles mean nothing when it is 0.
    pub count: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    pub mean: f64,
    /// base64 HdrHistogram compressed V2 (`HISTF…`).
    pub histogram: String,
}

impl SavedHistogram {
    pub fn of(h: &Histogram<u64>) -> SavedHistogram {
        SavedHistogram {
            count: h.len(),
            p50: hdr::value_at_percentile(h, 50.0),
            p90: hdr::value_at_percentile(h, 90.0),
            p99: hdr::value_at_percentile(h, 99.0),
            max: hdr::max(h),
            mean: hdr::mean(h),
            histogram: encode_histogram(h),
        }
    }

    /// The histogram back; `source` and `what` name it in the error.
    pub fn decode(&self, source: &str, what: &str) -> Result<Histogram<u64>, Error> {
        decode_histogram(&self.histogram).map_err(|e| Error::File {
            path: source.to_string(),
            reason: format!("histogram '{what}': {e}"),
        })
    }

    /// The value at `p` (µs) when the histogram holds samples: the kept figure, else read
    /// from the histogram itself (`source` and `what` name it, as for [`Self::decode`]).
    pub fn at(&self, p: Percentile, source: &str, what: &str) -> Option<u64> {
        let h = self.sampled()?;
        Some(match p {
            Percentile::P50 => h.p50,
            Percentile::P90 => h.p90,
            Percentile::P99 => h.p99,
            Percentile::Max => h.max,
            other => hdr::value_at_percentile(&h.decode(source, what).ok()?, other.value()),
        })
    }

    /// The summary, when the histogram holds samples (an empty one's percentiles say 0).
    pub fn sampled(&self) -> Option<&SavedHistogram> {
        (self.count > 0).then_some(self)
    }
}
