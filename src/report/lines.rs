//! The text lines every kind of result prints the same way: the `--server-pid` line, the run's
//! shard and start, a list of error counts, and wrk2's `Thread Stats` row and latency block.

use hdrhistogram::Histogram;

use crate::plan::Part;
use crate::stats::format::{format_binary, format_time_us, print_units};
use crate::stats::hdr;
use crate::stats::start::StartRecord;
use crate::sys::procstat::ServerUsage;

/// The `--server-pid` line, shared by every kind's report.
pub fn server_line(server: &ServerUsage) -> String {
    let pids: Vec<String> = server.pids.iter().map(u32::to_string).collect();
    format!(
        "Server CPU: {:.1}% mean, {:.1}% peak; RSS: {}B mean, {}B peak (PID {} with children, {} samples)",
        server.cpu_percent_mean,
        server.cpu_percent_peak,
        format_binary(server.rss_bytes_mean as f64),
        format_binary(server.rss_bytes_peak as f64),
        pids.join(", "),
        server.samples
    )
}

/// The run's shard (when split) and its start (with `--start-at`), for every kind's report.
pub fn part_lines(part: &Part, start: &StartRecord) -> Vec<String> {
    let mut lines = Vec::new();
    if part.shard.count > 1 {
        lines.push(format!(
            "Shard {} of {} of run {} (tsumo merge of every shard's --json gives the whole run)",
            part.shard.index + 1,
            part.shard.count,
            part.run_id
        ));
    }
    lines.extend(start.line());
    lines
}

/// `0`, or each kind that happened, with its count: `read 2, status 5`.
pub fn counts_said(kinds: &[(&str, u64)]) -> String {
    let said: Vec<String> = kinds
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, n)| format!("{kind} {n}"))
        .collect();
    if said.is_empty() {
        "0".to_string()
    } else {
        said.join(", ")
    }
}

/// Percentiles of the `Latency Distribution` table.
const DISTRIBUTION_PERCENTILES: [f64; 8] = [50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0];

/// wrk2's spectrum resolution (`hdr_percentiles_print(…, 5, …)`).
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// A `Thread Stats` row: mean, stdev, max and the share within one stdev.
pub fn stats_row(name: &str, h: &Histogram<u64>, formatter: fn(f64) -> String) -> String {
    let mean = hdr::mean(h);
    let stdev = hdr::stdev(h);
    let max = hdr::max(h) as f64;
    let within = hdr::within_stdev_percent(h, mean, stdev);
    format!(
        "    {name:<10}{}{}{}{within:8.2}%",
        print_units(mean, formatter, 8),
        print_units(stdev, formatter, 10),
        print_units(max, formatter, 9),
    )
}

/// The percentile table, the detailed spectrum and its footer (`print_hdr_latency`).
pub fn latency_block(lines: &mut Vec<String>, h: &Histogram<u64>, title: &str) {
    lines.push(format!("  Latency Distribution (HdrHistogram - {title})"));
    for p in DISTRIBUTION_PERCENTILES {
        let value = hdr::value_at_percentile(h, p) as f64;
        lines.push(format!(
            "{p:7.3}%{}",
            print_units(value, format_time_us, 10)
        ));
    }
    lines.push(String::new());
    lines.push("  Detailed Percentile spectrum:".to_string());
    lines.push(format!(
        "{:>12} {:>12} {:>12} {:>12}",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    ));
    lines.push(String::new());
    for row in hdr::spectrum(h, TICKS_PER_HALF_DISTANCE) {
        let value = row.value as f64 / 1000.0;
        let percentile = row.percentile / 100.0;
        let inverted = 1.0 / (1.0 - percentile);
        lines.push(format!(
            "{value:12.3} {percentile:12.6} {:12} {inverted:12.2}",
            row.count_to_index
        ));
    }
    // counts_len = (buckets + 1) × sub_bucket_count / 2.
    let sub_buckets = 2 * h.distinct_values() / (usize::from(h.buckets()) + 1);
    lines.push(format!(
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        hdr::mean(h) / 1000.0,
        hdr::stdev(h) / 1000.0
    ));
    lines.push(format!(
        "#[Max     = {:12.3}, Total count    = {:12}]",
        hdr::max(h) as f64 / 1000.0,
        h.len()
    ));
    lines.push(format!(
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        sub_buckets
    ));
}
