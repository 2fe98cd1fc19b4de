//! `--hlog FILE`: the corrected latency of each interval as an HdrHistogram interval log, the
//! format Java's `HistogramLogWriter` writes and `HistogramLogProcessor`, `HistogramLogAnalyzer`
//! and hdr-plot read.
//!
//! Written with the hdrhistogram crate's interval-log writer (compressed V2 histograms, one line
//! per interval, timestamps in seconds from the run's start, the max in ms), plus what the crate
//! leaves out and Java's writer puts in: the format version comment and the column legend.
//! Values are µs, as every histogram of tsumo's; `HistogramLogProcessor -outputValueUnitRatio
//! 1000` prints them in ms.

use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, IntervalLogWriterError};
use hdrhistogram::serialization::{V2DeflateSerializeError, V2DeflateSerializer};

use crate::error::Error;
use crate::stats::http::RunTimeline;

/// The line Java's `HistogramLogWriter` names its columns with.
const LEGEND: &str =
    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";

/// Why the log could not be made (in memory: neither happens short of a bug in the writer).
#[derive(Debug, thiserror::Error)]
pub enum HlogError {
    #[error("{0}")]
    Header(#[from] std::io::Error),
    #[error("{0:?}")]
    Interval(IntervalLogWriterError<V2DeflateSerializeError>),
}

/// The log of `timeline`'s intervals (`elapsed`: the run's, where the last interval ends).
pub fn render_hlog(timeline: &RunTimeline, elapsed: Duration) -> Result<Vec<u8>, HlogError> {
    let start = UNIX_EPOCH + Duration::from_nanos(timeline.start_unix_ns);
    let mut log = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    IntervalLogWriterBuilder::new()
        .add_comment(&format!(
            "[Logged with tsumo {}]",
            env!("CARGO_PKG_VERSION")
        ))
        .add_comment("[Histogram log format version 1.3]")
        .add_comment("[Corrected latency in microseconds, one histogram per --interval]")
        .with_start_time(start)
        .with_base_time(start)
        .begin_log_with(&mut log, &mut serializer)?;
    log.extend_from_slice(LEGEND.as_bytes());
    let mut writer = IntervalLogWriterBuilder::new()
        .with_max_value_divisor(1000.0)
        .begin_log_with(&mut log, &mut serializer)?;
    let length = Duration::from_nanos(timeline.length);
    let count = timeline.intervals.len();
    for (k, (interval, _)) in timeline.intervals.iter().enumerate() {
        let offset = length * k as u32;
        let duration = if k + 1 == count {
            elapsed.saturating_sub(offset).min(length)
        } else {
            length
        };
        writer
            .write_histogram(&interval.latency.unpack(), offset, duration, None)
            .map_err(HlogError::Interval)?;
    }
    Ok(log)
}

/// Writes the log to `path`.
pub fn write_hlog(timeline: &RunTimeline, elapsed: Duration, path: &Path) -> Result<(), Error> {
    let error = |reason: String| Error::Write {
        path: path.display().to_string(),
        reason,
    };
    let log = render_hlog(timeline, elapsed).map_err(|e| error(e.to_string()))?;
    crate::sys::output::write_whole(path, &log).map_err(|e| error(e.to_string()))
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use base64::engine::general_purpose::STANDARD as BASE64;
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use hdrhistogram::serialization::Deserializer;
    use hdrhistogram::Histogram;

    use super::*;
    use crate::stats::new_histogram;
    use crate::stats::timeline::Packed;

    #[test]
    fn the_log_reads_back_to_the_same_histograms() {
        let histograms: Vec<Histogram<u64>> = (0..4u64)
            .map(|k| {
                let mut h = new_histogram();
                for i in 0..(100 * (k + 1)) {
                    h.record(200 + i * 31 + k * 5000).unwrap();
                }
                h
            })
            .collect();
        let timeline = RunTimeline {
            length: 1_000_000_000,
            start_unix_ns: 1_800_000_000_000_000_000,
            intervals: histograms
                .iter()
                .map(|h| {
                    let interval = crate::stats::http::Interval {
                        latency: Packed::pack(h),
                        ..crate::stats::http::Interval::default()
                    };
                    (interval, None)
                })
                .collect(),
        };
        let log = render_hlog(&timeline, Duration::from_millis(3_500)).unwrap();
        let text = String::from_utf8(log.clone()).unwrap();
        assert!(text.contains("#[Histogram log format version 1.3]\n"));
        assert!(text.contains("#[StartTime: 1800000000.000 (seconds since epoch)]\n"));
        assert!(text.contains(LEGEND));
        let mut read = Vec::new();
        for entry in IntervalLogIterator::new(&log) {
            match entry.unwrap() {
                LogEntry::Interval(interval) => {
                    let bytes = BASE64.decode(interval.encoded_histogram()).unwrap();
                    let h: Histogram<u64> = Deserializer::new()
                        .deserialize(&mut Cursor::new(bytes))
                        .unwrap();
                    read.push((interval.start_timestamp(), interval.duration(), h));
                }
                LogEntry::StartTime(t) | LogEntry::BaseTime(t) => {
                    assert_eq!(t, Duration::from_secs(1_800_000_000));
                }
            }
        }
        assert_eq!(read.len(), 4);
        for (k, (start, duration, h)) in read.iter().enumerate() {
            assert_eq!(*start, Duration::from_secs(k as u64));
            assert_eq!(h, &histograms[k]);
            let want = if k == 3 { 500 } else { 1000 };
            assert_eq!(*duration, Duration::from_millis(want));
        }
    }
}
