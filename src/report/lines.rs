//! The text lines every kind of result prints the same way: the `--server-pid` line, the run's
//! shard and start, and a list of error counts.

use crate::plan::Part;
use crate::stats::format::format_binary;
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
