//! The `.hgrm` percentile distribution: the text HdrHistogram's own tools write
//! (`outputPercentileDistribution`) and its plotter reads (HistogramLogProcessor output,
//! hdrhistogram.github.io/HdrHistogram/plotFiles.html).
//!
//! Why a file format of someone else's: people already keep and overlay `.hgrm` files from wrk2,
//! Java services and HdrHistogram's tools; writing the same text lets tsumo's runs sit on the same
//! chart. Values are in milliseconds (µs / 1000), rows come from the same percentile iterator as
//! wrk2's spectrum (5 ticks per half distance), and the last (100%) row has no `1/(1-Percentile)`
//! column, as in the Java original, since it would be infinite.

use std::fmt::Write as _;
use std::path::Path;

use hdrhistogram::Histogram;

use crate::error::Error;
use crate::stats::hdr;

/// Rows per halving of the distance to 100%, as wrk2 and HdrHistogram's default.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// µs per output unit (ms).
const VALUE_SCALE: f64 = 1000.0;

/// The distribution as text, `.hgrm` layout, values in ms.
pub fn render_hgrm(h: &Histogram<u64>) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    for row in hdr::spectrum(h, TICKS_PER_HALF_DISTANCE) {
        let value = row.value as f64 / VALUE_SCALE;
        let percentile = row.percentile / 100.0;
        if row.percentile < 100.0 {
            let inverted = 1.0 / (1.0 - percentile);
            let _ = writeln!(
                out,
                "{value:12.3} {percentile:2.12} {:10} {inverted:14.2}",
                row.count_to_index
            );
        } else {
            let _ = writeln!(
                out,
                "{value:12.3} {percentile:2.12} {:10}",
                row.count_to_index
            );
        }
    }
    // counts_len = (buckets + 1) × sub_bucket_count / 2.
    let sub_buckets = 2 * h.distinct_values() / (usize::from(h.buckets()) + 1);
    let _ = writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        hdr::mean(h) / VALUE_SCALE,
        hdr::stdev(h) / VALUE_SCALE
    );
    let _ = writeln!(
        out,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        hdr::max(h) as f64 / VALUE_SCALE,
        h.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        sub_buckets
    );
    out
}

/// Writes [`render_hgrm`] of `h` to `path`.
pub fn write_hgrm(h: &Histogram<u64>, path: &Path) -> Result<(), Error> {
    crate::sys::output::write_whole(path, render_hgrm(h).as_bytes()).map_err(|e| Error::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    #[test]
    fn layout_matches_hdrhistogram_output() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
        }
        let text = render_hgrm(&h);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "       Value     Percentile TotalCount 1/(1-Percentile)"
        );
        assert_eq!(lines[1], "");
        assert_eq!(
            lines[2],
            "       0.010 0.000000000000          1           1.00"
        );
        assert_eq!(
            lines[3],
            "       1.000 0.100000000000        100           1.11"
        );
        let rows = &lines[2..lines.len() - 3];
        let last = rows[rows.len() - 1];
        // Never above the max (10,000 µs), not its bucket's highest value (10,007).
        assert_eq!(last, "      10.000 1.000000000000       1000");
        for row in &rows[..rows.len() - 1] {
            let fields: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(fields.len(), 4, "{row}");
            assert_eq!(row.len(), 12 + 1 + 14 + 1 + 10 + 1 + 14, "{row:?}");
        }
        assert!(lines[lines.len() - 3].starts_with("#[Mean    =        5.00"));
        assert_eq!(
            lines[lines.len() - 2],
            "#[Max     =       10.000, Total count    =         1000]"
        );
        assert_eq!(
            lines[lines.len() - 1],
            "#[Buckets =           27, SubBuckets     =         2048]"
        );
    }

    #[test]
    fn empty_histogram_and_unwritable_path() {
        let text = render_hgrm(&new_histogram());
        assert!(text.contains("\n       0.000 1.000000000000          0\n"));
        let bad = Path::new("/nonexistent-dir-for-tsumo/x.hgrm");
        match write_hgrm(&new_histogram(), bad) {
            Err(Error::Write { path, .. }) => assert_eq!(path, "/nonexistent-dir-for-tsumo/x.hgrm"),
            other => panic!("{other:?}"),
        }
    }
}
