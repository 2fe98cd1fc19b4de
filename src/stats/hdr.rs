//! wrk2's histogram arithmetic over the Rust `hdrhistogram` crate.
//!
//! wrk2 prints its numbers with the C HdrHistogram it bundles, whose rules differ from the Rust
//! crate's in small ways that change printed digits: a percentile's count is rounded
//! (`trunc(p/100·n + 0.5)`) rather than ceiled, `max` is the *lowest* equivalent value of the top
//! bucket, the mean is summed in integers, and the spectrum iterator stays on a bucket while it
//! covers several rows. The bucket layout itself is identical (same index order, same
//! equivalent-value ranges), so these functions walk the Rust histogram bucket by bucket and apply
//! the C rules. An empty histogram gives 0 everywhere (wrk2 prints `-nan`; tsumo never does).

use hdrhistogram::Histogram;

/// One bucket of the histogram as the C iterator (`hdr_iter_next`) sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    /// Lowest value counted in this bucket (`value_from_index`).
    pub value_from_index: u64,
    /// Highest value counted in this bucket.
    pub highest_equivalent: u64,
    /// Samples in this bucket.
    pub count: u64,
    /// Samples in this bucket and every lower one.
    pub count_to_index: u64,
}

/// Walks every bucket (empty ones included) from the lowest, stopping after the bucket that
/// reaches the total count — exactly the C basic iterator.
#[derive(Debug, Clone)]
pub struct Buckets<'a> {
    h: &'a Histogram<u64>,
    next_value: u64,
    visited: usize,
    count_to_index: u64,
}

/// Iterates the buckets of `h` the way C HdrHistogram's basic iterator does.
pub fn buckets(h: &Histogram<u64>) -> Buckets<'_> {
    Buckets {
        h,
        next_value: 0,
        visited: 0,
        count_to_index: 0,
    }
}

impl Iterator for Buckets<'_> {
    type Item = Bucket;

    fn next(&mut self) -> Option<Bucket> {
        // `visited` guards against counts that disagree with the total (never with our histograms).
        if self.count_to_index >= self.h.len() || self.visited >= self.h.distinct_values() {
            return None;
        }
        let value_from_index = self.h.lowest_equivalent(self.next_value);
        let highest_equivalent = self.h.highest_equivalent(value_from_index);
        let count = self.h.count_at(value_from_index);
        self.count_to_index += count;
        self.visited += 1;
        self.next_value = self.h.next_non_equivalent(value_from_index);
        Some(Bucket {
            value_from_index,
            highest_equivalent,
            count,
            count_to_index: self.count_to_index,
        })
    }
}

/// `hdr_value_at_percentile`: the highest equivalent value of the first bucket whose cumulative
/// count reaches `trunc(p/100 × total + 0.5)` (at least 1). `p` is capped at 100; 0 when empty.
///
/// One departure from the C library: a percentile that falls in the highest non-empty bucket
/// is that bucket's [`max`], not its highest equivalent value, so no report ever shows a
/// percentile above the max (wrk2 can print `p99 44.77ms, max 44.74ms`).
pub fn value_at_percentile(h: &Histogram<u64>, percentile: f64) -> u64 {
    bucket_value_at_percentile(h, percentile).min(max(h))
}

fn bucket_value_at_percentile(h: &Histogram<u64>, percentile: f64) -> u64 {
    let requested = if percentile < 100.0 {
        percentile
    } else {
        100.0
    };
    let wanted = ((requested / 100.0) * h.len() as f64 + 0.5) as u64;
    let wanted = wanted.max(1);
    buckets(h)
        .find(|b| b.count_to_index >= wanted)
        .map_or(0, |b| b.highest_equivalent)
}

/// `hdr_mean`: mean of every sample taken at its bucket's median equivalent value.
pub fn mean(h: &Histogram<u64>) -> f64 {
    let total = h.len();
    if total == 0 {
        return 0.0;
    }
    // C sums in int64 and divides once; u128 keeps that exact without overflow.
    let sum: u128 = buckets(h)
        .filter(|b| b.count != 0)
        .map(|b| u128::from(b.count) * u128::from(h.median_equivalent(b.value_from_index)))
        .sum();
    sum as f64 / total as f64
}

/// `hdr_stddev`: population standard deviation at bucket median equivalent values.
pub fn stdev(h: &Histogram<u64>) -> f64 {
    let total = h.len();
    if total == 0 {
        return 0.0;
    }
    let mean = mean(h);
    let mut deviation_total = 0.0_f64;
    for b in buckets(h).filter(|b| b.count != 0) {
        let dev = h.median_equivalent(b.value_from_index) as f64 - mean;
        deviation_total += (dev * dev) * b.count as f64;
    }
    (deviation_total / total as f64).sqrt()
}

/// `hdr_max`: the *lowest* equivalent value of the highest non-empty bucket (so it can be a
/// little below the 100th percentile, which is a highest equivalent value). 0 when empty.
pub fn max(h: &Histogram<u64>) -> u64 {
    buckets(h)
        .filter(|b| b.count != 0)
        .last()
        .map_or(0, |b| b.value_from_index)
}

/// `hdr_min`: the lowest value of the first non-empty bucket. 0 when empty.
pub fn min(h: &Histogram<u64>) -> u64 {
    buckets(h)
        .find(|b| b.count != 0)
        .map_or(0, |b| b.value_from_index)
}

/// wrk2's "+/- Stdev" column for a histogram: the share of samples (in %) between the bucket
/// holding `mean − stdev` and the first bucket reaching above `mean + stdev`, with both bounds
/// truncated to integers as wrk2 does. 0 when empty.
pub fn within_stdev_percent(h: &Histogram<u64>, mean: f64, stdev: f64) -> f64 {
    let total = h.len();
    if total == 0 {
        return 0.0;
    }
    let upper_value = (mean + stdev) as i64;
    let lower_value = (mean - stdev) as i64;
    let mut lower_count = 0_u64;
    let mut upper_count = total;
    for b in buckets(h) {
        let from = i64::try_from(b.value_from_index).unwrap_or(i64::MAX);
        let highest = i64::try_from(b.highest_equivalent).unwrap_or(i64::MAX);
        if lower_value > from {
            lower_count = b.count_to_index;
        }
        if upper_value < highest {
            upper_count = b.count_to_index;
            break;
        }
    }
    100.0 * (upper_count as f64 - lower_count as f64) / total as f64
}

/// One row of the detailed percentile spectrum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpectrumRow {
    /// Highest equivalent value of the bucket the row stops at (µs), or the [`max`] in the
    /// highest non-empty bucket (as [`value_at_percentile`]).
    pub value: u64,
    /// The percentile the row reports, 0..=100.
    pub percentile: f64,
    /// Cumulative count up to and including that bucket.
    pub count_to_index: u64,
}

/// The CLASSIC percentile spectrum (`hdr_percentiles_print`'s iterator): rows at 0, 10, …, 50,
/// 55, …, 75, 77.5, … (the step halves each time the distance to 100% halves), each at the first
/// bucket whose cumulative percentile reaches the target, and a final row at 100%.
#[derive(Debug, Clone)]
pub struct Spectrum<'a> {
    buckets: Buckets<'a>,
    current: Option<Bucket>,
    total: u64,
    ticks_per_half_distance: u32,
    percentile_to_iterate_to: f64,
    percentile: f64,
    seen_last_value: bool,
    /// No row shows more: wrk2 prints `6.643` rows above its own `#[Max = 6.640`.
    max: u64,
}

/// The spectrum wrk2 prints (`ticks_per_half_distance` = 5).
pub fn spectrum(h: &Histogram<u64>, ticks_per_half_distance: u32) -> Spectrum<'_> {
    Spectrum {
        buckets: buckets(h),
        current: None,
        total: h.len(),
        ticks_per_half_distance,
        percentile_to_iterate_to: 0.0,
        percentile: 0.0,
        seen_last_value: false,
        max: max(h),
    }
}

impl Spectrum<'_> {
    fn row(&self) -> SpectrumRow {
        SpectrumRow {
            value: self
                .current
                .map_or(0, |b| b.highest_equivalent)
                .min(self.max),
            percentile: self.percentile,
            count_to_index: self.current.map_or(0, |b| b.count_to_index),
        }
    }

    /// The next target: 100 / (ticks × 2^(floor(log2(100 / (100 − p))) + 1)), computed with the
    /// same floating-point steps as C so rows land on the same percentiles.
    fn advance(&mut self) {
        let p = self.percentile_to_iterate_to;
        let exponent = (((100.0 / (100.0 - p)).ln() / 2.0_f64.ln()) as i64).saturating_add(1);
        let half_distance = 2.0_f64.powi(exponent.clamp(0, 62) as i32) as i64;
        let ticks = i64::from(self.ticks_per_half_distance) * half_distance;
        self.percentile_to_iterate_to += 100.0 / ticks as f64;
    }
}

impl Iterator for Spectrum<'_> {
    type Item = SpectrumRow;

    fn next(&mut self) -> Option<SpectrumRow> {
        let count_to_index = self.current.map_or(0, |b| b.count_to_index);
        if count_to_index >= self.total {
            if self.seen_last_value {
                return None;
            }
            self.seen_last_value = true;
            self.percentile = 100.0;
            return Some(self.row());
        }
        if self.current.is_none() {
            self.current = Some(self.buckets.next()?);
        }
        while let Some(b) = self.current {
            let current_percentile = (100.0 * b.count_to_index as f64) / self.total as f64;
            if b.count != 0 && self.percentile_to_iterate_to <= current_percentile {
                self.percentile = self.percentile_to_iterate_to;
                self.advance();
                return Some(self.row());
            }
            match self.buckets.next() {
                Some(next) => self.current = Some(next),
                // C returns a row with the previous percentile here; unreachable below 100%.
                None => break,
            }
        }
        Some(self.row())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    fn hist(values: &[u64]) -> Histogram<u64> {
        let mut h = new_histogram();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn wrk2_parameters_match_the_footer() {
        let h = new_histogram();
        assert_eq!(h.buckets(), 27);
        assert_eq!(h.distinct_values(), 28 * 1024);
    }

    #[test]
    fn empty_histogram_is_all_zero_never_nan() {
        let h = new_histogram();
        assert_eq!(value_at_percentile(&h, 50.0), 0);
        assert_eq!(value_at_percentile(&h, 100.0), 0);
        assert_eq!(mean(&h), 0.0);
        assert_eq!(stdev(&h), 0.0);
        assert_eq!(max(&h), 0);
        assert_eq!(min(&h), 0);
        assert_eq!(within_stdev_percent(&h, 0.0, 0.0), 0.0);
        let rows: Vec<_> = spectrum(&h, 5).collect();
        assert_eq!(
            rows,
            vec![SpectrumRow {
                value: 0,
                percentile: 100.0,
                count_to_index: 0
            }]
        );
    }

    #[test]
    fn percentile_rounds_count_half_up_unlike_the_crate() {
        // 1..=10: p = 45% → count trunc(4.5 + 0.5) = 5 → value 5; the crate's ceil gives 5 too,
        // but p = 44% → C: trunc(4.4+0.5)=4 → 4; crate: ceil(4.4)=5.
        let h = hist(&(1..=10).collect::<Vec<_>>());
        assert_eq!(value_at_percentile(&h, 44.0), 4);
        assert_eq!(h.value_at_percentile(44.0), 5);
        assert_eq!(value_at_percentile(&h, 0.0), 1);
        assert_eq!(value_at_percentile(&h, 100.0), 10);
        assert_eq!(value_at_percentile(&h, 150.0), 10);
    }

    #[test]
    fn percentile_returns_highest_equivalent_and_max_lowest_but_never_above_the_max() {
        // Above 2047 µs buckets are 2 µs wide: 4038 and 4039 share one bucket.
        let h = hist(&[100, 4038, 5000]);
        assert_eq!(value_at_percentile(&h, 50.0), 4039);
        assert_eq!(max(&h), 5000);
        // In the top bucket a percentile is the max, not the bucket's highest value (5003).
        let h = hist(&[100, 4038]);
        assert_eq!(value_at_percentile(&h, 100.0), 4038);
        assert_eq!(value_at_percentile(&h, 99.0), 4038);
        assert_eq!(max(&h), 4038);
        assert_eq!(min(&h), 100);
        let h = hist(&[4039]);
        assert_eq!(max(&h), 4038);
        assert_eq!(min(&h), 4038);
    }

    #[test]
    fn mean_and_stdev_use_bucket_medians() {
        let h = hist(&[2, 4, 4, 4, 5, 5, 7, 9]);
        assert_eq!(mean(&h), 5.0);
        assert_eq!(stdev(&h), 2.0);
        // 5000 sits in a 4-wide bucket [5000, 5003]: median 5002.
        let h = hist(&[5000]);
        assert_eq!(mean(&h), 5002.0);
        assert_eq!(stdev(&h), 0.0);
    }

    #[test]
    fn within_stdev_counts_between_truncated_bounds() {
        // mean 5, stdev 2 → [3, 7]: lower = count below 3 (1), upper = count through 7 (7).
        let h = hist(&[2, 4, 4, 4, 5, 5, 7, 9]);
        let pct = within_stdev_percent(&h, mean(&h), stdev(&h));
        assert_eq!(pct, 100.0 * 6.0 / 8.0);
        // Everything equal: upper bound never exceeded → total.
        let h = hist(&[10, 10, 10]);
        assert_eq!(within_stdev_percent(&h, 10.0, 0.0), 100.0);
    }

    #[test]
    fn spectrum_rows_follow_the_classic_tick_rule() {
        let h = hist(&(1..=1000).collect::<Vec<_>>());
        let rows: Vec<_> = spectrum(&h, 5).collect();
        let percentiles: Vec<f64> = rows.iter().map(|r| r.percentile).collect();
        let expected_prefix = [
            0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 55.0, 60.0, 65.0, 70.0, 75.0, 77.5, 80.0, 82.5,
            85.0, 87.5,
        ];
        for (got, want) in percentiles.iter().zip(expected_prefix) {
            assert!((got - want).abs() < 1e-9, "{got} vs {want}");
        }
        // First row: the first bucket; 10% of 1000 samples is value 100.
        assert_eq!(rows[0].value, 1);
        assert_eq!(rows[0].count_to_index, 1);
        assert_eq!(rows[1].value, 100);
        assert_eq!(rows[1].count_to_index, 100);
        let last = rows.last().unwrap();
        assert_eq!(last.percentile, 100.0);
        assert_eq!(last.count_to_index, 1000);
        assert_eq!(last.value, 1000);
        // Percentiles never go backwards.
        assert!(percentiles.windows(2).all(|w| w[0] <= w[1]));
    }

    /// Issue 19: the last rows of `-L`'s spectrum read 6.643 ms against `#[Max = 6.640`: the
    /// top bucket's highest value, not its max.
    #[test]
    fn no_spectrum_row_is_above_the_max() {
        // Above 4096 µs buckets are 4 µs wide: 6640 sits in [6640, 6643].
        let h = hist(&[100, 2000, 5000, 6640]);
        assert_eq!(max(&h), 6640);
        let rows: Vec<_> = spectrum(&h, 5).collect();
        assert!(rows.iter().all(|r| r.value <= 6640), "{rows:?}");
        let last = rows.last().unwrap();
        assert_eq!((last.value, last.percentile), (6640, 100.0));
        // Rows in lower buckets keep their highest equivalent value.
        assert_eq!(rows[rows.len() - 2].value, 6640);
        assert!(rows.iter().any(|r| r.value == 5003), "{rows:?}");
    }

    #[test]
    fn spectrum_stays_on_a_bucket_covering_several_rows() {
        // Half the samples at 1, half at 3: rows 0..50 sit on bucket 1, row 55 on bucket 3,
        // then the final 100% row.
        let mut h = new_histogram();
        h.record_n(1, 50).unwrap();
        h.record_n(3, 50).unwrap();
        let rows: Vec<_> = spectrum(&h, 5).collect();
        let got: Vec<(u64, f64, u64)> = rows
            .iter()
            .map(|r| (r.value, r.percentile, r.count_to_index))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 0.0, 50),
                (1, 10.0, 50),
                (1, 20.0, 50),
                (1, 30.0, 50),
                (1, 40.0, 50),
                (1, 50.0, 50),
                (3, 55.0, 100),
                (3, 100.0, 100),
            ]
        );
    }
}
