//! wrk2's text report, to the character, plus tsumo's few additions at the end.
//!
//! People paste wrk2 output into issues and parse it with scripts; keeping the layout identical
//! (widths, trailing spaces, the spectrum rows) lets tsumo drop in. What tsumo adds comes after
//! `Transfer/sec`, where wrk2 prints the script's `done()` output, so parsers that stop there are
//! unaffected: protocol errors by kind with the first few quoted, HTTP/2's grant and GOAWAY and
//! RST_STREAM counts, TLS handshake counts, its own send lateness, a warning when it fell
//! behind, and the run's notes. An HTTP/2 run names its protocol in a line under the threads
//! line, as the closed-loop line does. Where wrk2 would print `-nan` (empty histogram), tsumo prints 0.

use hdrhistogram::Histogram;

use crate::error::Error;
use crate::plan::{Protocol, Scheme};
use crate::report::http::protocols::{http2_lines, http3_lines, protocol_lines, protocol_name};
use crate::report::http::saved::{OwnDelay, Percentiles, SavedPacing, SavedRun};
use crate::report::http::stages;
use crate::report::lines::{latency_block, part_lines, server_line, stats_row};
use crate::report::objectives;
use crate::report::schema::decode_histogram;
use crate::stats::format::{format_binary, format_metric, format_time_s, format_time_us};
use crate::stats::hdr;
use crate::stats::http::shortfall::{Behind, Shortfall};
use crate::stats::http::split::Timestamps;
use crate::stats::http::{Counters, RunResult};
use crate::sys::procstat::ServerUsage;

const SEPARATOR: &str = "----------------------------------------------------------";

/// What wrk2's layout is made of, from a finished run ([`render`]) or from a saved one
/// ([`render_merged`]): one renderer for both, [`Layout::render`].
struct Layout<'a> {
    url: &'a str,
    duration_s: f64,
    threads: usize,
    connections: usize,
    /// After the connections: ` (all parts)` for a merge.
    threads_of: &'static str,
    /// The HTTP/2 line under the threads line.
    http2: Option<String>,
    closed_loop: bool,
    latency: &'a Histogram<u64>,
    req_per_sec: &'a Histogram<u64>,
    /// The latency distribution (`-L`, `-U`; a merge is always read for it).
    distribution: bool,
    /// `-U`'s uncorrected distribution.
    uncorrected: Option<&'a Histogram<u64>>,
    counters: &'a Counters,
    /// In whole µs, as wrk2 measures the run.
    runtime_us: f64,
    /// HTTP/2's grant and counts against `-m`.
    streams_asked: Option<usize>,
    tls: Option<String>,
    /// Send lateness p50, p99, max (µs) of a run with a rate.
    lateness: Option<[u64; 3]>,
    pacing: Option<SavedPacing>,
    /// tsumo fell behind its own schedule, and why (one process's word, not a merge's).
    behind: Option<&'a Behind>,
    shortfall: Option<&'a Shortfall>,
    own_usage: Option<String>,
    server: Option<&'a ServerUsage>,
    part: Vec<String>,
    notes: &'a [String],
    /// `--slo`'s verdict lines, last.
    objectives: Vec<String>,
    /// `--stages`: a line per stage after wrk2's block (none without stages).
    stages: Vec<String>,
    /// The split of the corrected latency (absent from files of older tsumos).
    split: Option<SplitSummary<'a>>,
}

/// What the server caused and what tsumo added, as the report states them.
struct SplitSummary<'a> {
    timestamps: Timestamps,
    /// An HTTP/3 run (its stamps are user-space for a reason of its own).
    quic: bool,
    /// `TSUMO_TIMESTAMPS=user` asked for user-space stamps.
    asked: bool,
    corrected_p99: u64,
    server: Percentiles,
    own: OwnDelay,
    /// `-L`: the server's spectrum too.
    server_spectrum: Option<&'a Histogram<u64>>,
}

/// Part of the corrected p99 that tsumo's own delay must be, and by how much at least, for the
/// report to say the machine made the difference.
const OWN_SHARE_WARNING: f64 = 0.5;
const OWN_DIFFERENCE_WARNING_US: u64 = 1_000;

impl SplitSummary<'_> {
    fn lines(&self, lines: &mut Vec<String>) {
        let t = |us: u64| format_time_us(us as f64);
        let s = &self.server;
        let source = match self.timestamps {
            Timestamps::Kernel => "kernel receive timestamps",
            Timestamps::User if self.quic => {
                "user-space timestamps (quinn reads QUIC's socket itself: no kernel stamp reaches \
                 tsumo): tsumo's read delay is in it"
            }
            Timestamps::User if self.asked => {
                "user-space timestamps (TSUMO_TIMESTAMPS=user asked for them): tsumo's read delay \
                 is in it"
            }
            Timestamps::User => {
                "user-space timestamps (the kernel's were not available): tsumo's read delay is in \
                 it"
            }
        };
        lines.push(format!(
            "Server's latency: p50 {}, p99 {}, max {} (the corrected latency less tsumo's own \
             delay; {source})",
            t(s.p50),
            t(s.p99),
            t(s.max)
        ));
        let own = &self.own;
        lines.push(format!(
            "tsumo's own delay: p50 {}, p99 {} (send {}, read {})",
            t(own.total.p50),
            t(own.total.p99),
            t(own.send.p99),
            t(own.read.p99)
        ));
        let gap = self.corrected_p99.saturating_sub(s.p99);
        if gap >= OWN_DIFFERENCE_WARNING_US
            && gap as f64 >= OWN_SHARE_WARNING * self.corrected_p99 as f64
        {
            lines.push(format!(
                "Warning: tsumo's own delay made {:.0}% of the corrected p99 ({} against the \
                 server's {}): this machine, not the server, made the difference",
                100.0 * gap as f64 / self.corrected_p99 as f64,
                t(self.corrected_p99),
                t(s.p99)
            ));
        }
    }
}

impl Layout<'_> {
    /// The whole text report; every line ends with `\n`.
    fn render(&self) -> String {
        let mut lines = vec![
            format!(
                "Running {} test @ {}",
                format_time_s(self.duration_s),
                self.url
            ),
            format!(
                "  {} threads and {} connections{}",
                self.threads, self.connections, self.threads_of
            ),
        ];
        lines.extend(self.http2.clone());
        thread_stats(&mut lines, self.closed_loop, self.latency, self.req_per_sec);
        if self.distribution {
            latency_block(&mut lines, self.latency, "Recorded Latency");
            lines.push(SEPARATOR.to_string());
        }
        if let Some(uncorrected) = self.uncorrected {
            lines.push(String::new());
            latency_block(
                &mut lines,
                uncorrected,
                "Uncorrected Latency (measured without taking delayed starts into account)",
            );
            lines.push(SEPARATOR.to_string());
        }
        let c = self.counters;
        totals(&mut lines, c, self.runtime_us);
        lines.extend(self.stages.iter().cloned());
        // tsumo's lines after wrk2's report.
        lines.extend(protocol_lines(&c.protocol));
        if let (Some(h2), Some(asked)) = (&c.http2, self.streams_asked) {
            lines.extend(http2_lines(h2, asked));
        }
        if let Some(h3) = &c.http3 {
            lines.extend(http3_lines(h3));
        }
        lines.extend(self.tls.clone());
        if let Some([p50, p99, max]) = self.lateness {
            lines.push(lateness_line(p50, p99, max));
            if let Some(pacing) = &self.pacing {
                lines.push(format!("Pacing: {}", pacing.describe()));
            }
            // One cause: a rate not reached names it in its own line, below.
            if let Some(behind) = self.behind.filter(|_| self.shortfall.is_none()) {
                lines.push(behind.line());
            }
        }
        if let Some(split) = &self.split {
            split.lines(&mut lines);
        }
        lines.extend(c.unsent.line());
        lines.extend(self.shortfall.map(Shortfall::line));
        lines.extend(self.own_usage.clone());
        lines.extend(self.server.map(server_line));
        lines.extend(self.part.iter().cloned());
        lines.extend(self.notes.iter().cloned());
        lines.extend(self.objectives.iter().cloned());
        if let Some(server) = self.split.as_ref().and_then(|s| s.server_spectrum) {
            lines.push(String::new());
            latency_block(
                &mut lines,
                server,
                "Server's Latency (the corrected latency less tsumo's own delay)",
            );
        }
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }
}

/// A finished run's text report: wrk2's, then tsumo's additions (protocol errors, TLS, send
/// lateness, the fell-behind warning, the rate not reached, tsumo's own CPU and memory, the
/// server's, the run's part, notes). Every line ends with `\n`.
pub fn render(r: &RunResult) -> String {
    let plan = &r.plan;
    let http2 = match plan.protocol {
        Protocol::Http1 => None,
        Protocol::Http2(h2) => {
            let how = match plan.target.scheme {
                Scheme::Https => "h2 over TLS",
                Scheme::Http => "h2c, prior knowledge",
            };
            Some(format!(
                "  HTTP/2 ({how}), up to {} streams per connection",
                h2.streams
            ))
        }
        Protocol::Http3(h3) => Some(format!(
            "  HTTP/3 (h3 over QUIC{}), up to {} streams per connection",
            if h3.zero_rtt { ", 0-RTT on" } else { "" },
            h3.streams
        )),
    };
    let c = &r.counters;
    // The pre-flight check made the first, full handshake; the run's connections resume it.
    let tls = (c.tls_full_handshakes + c.tls_resumed_handshakes > 0).then(|| {
        format!(
            "TLS handshakes: {} full, {} resumed (after the pre-flight check's full handshake)",
            c.tls_full_handshakes, c.tls_resumed_handshakes
        )
    });
    // The saved layout, for what is judged or laid out on it (objectives, stages).
    let saved = (!plan.options.objectives.is_empty() || r.stages.is_some())
        .then(|| SavedRun::from_result(r));
    let lateness = plan.rate.map(|_| {
        let h = &r.send_lateness;
        [
            hdr::value_at_percentile(h, 50.0),
            hdr::value_at_percentile(h, 99.0),
            hdr::max(h),
        ]
    });
    Layout {
        url: &plan.target.url,
        duration_s: plan.options.duration.as_secs_f64(),
        threads: plan.options.threads,
        connections: plan.connections,
        threads_of: "",
        http2,
        closed_loop: plan.rate.is_none(),
        latency: &r.latency,
        req_per_sec: &r.req_per_sec,
        distribution: plan.options.latency || plan.u_latency,
        uncorrected: plan.u_latency.then_some(&r.uncorrected),
        counters: c,
        runtime_us: r.elapsed.as_micros() as f64,
        streams_asked: plan.protocol.http2().map(|h2| h2.streams),
        tls,
        lateness,
        pacing: SavedPacing::of(plan),
        behind: r.behind.as_ref(),
        shortfall: r.shortfall.as_ref(),
        own_usage: Some(own_usage_line(r)),
        server: r.server.as_ref(),
        part: part_lines(&plan.options.part, &r.start),
        notes: &r.notes,
        objectives: saved.as_ref().map_or_else(Vec::new, objective_lines),
        stages: saved.as_ref().map_or_else(Vec::new, |s| {
            stages::lines(&s.stages, s.stopped_in_stage, plan.connections)
        }),
        split: (!r.split.is_empty()).then(|| SplitSummary {
            timestamps: r.timestamps,
            quic: plan.protocol.http3().is_some(),
            asked: r.timestamps_asked,
            corrected_p99: hdr::value_at_percentile(&r.latency, 99.0),
            server: Percentiles::of(&r.split.server),
            own: OwnDelay::of(&r.split),
            server_spectrum: plan.options.latency.then_some(&r.split.server),
        }),
    }
    .render()
}

/// The closed-loop warning (when there was no `-R`), then `Thread Stats` and its two rows.
fn thread_stats(
    lines: &mut Vec<String>,
    closed_loop: bool,
    latency: &Histogram<u64>,
    req_per_sec: &Histogram<u64>,
) {
    if closed_loop {
        lines.push(
            "  closed loop (no -R): latency is not corrected for coordinated omission".to_string(),
        );
    }
    lines.push(format!(
        "  Thread Stats{:>6}{:>11}{:>8}{:>12}",
        "Avg", "Stdev", "Max", "+/- Stdev"
    ));
    lines.push(stats_row("Latency", latency, format_time_us));
    lines.push(stats_row("Req/Sec", req_per_sec, format_metric));
}

/// Requests, bytes, errors and rates, as wrk prints them; `runtime_us` in whole µs, as wrk2
/// measures the run.
fn totals(lines: &mut Vec<String>, c: &Counters, runtime_us: f64) {
    let runtime_s = runtime_us / 1_000_000.0;
    let per_second = |n: u64| {
        if runtime_s > 0.0 {
            n as f64 / runtime_s
        } else {
            0.0
        }
    };

    lines.push(format!(
        "  {} requests in {}, {}B read",
        c.requests,
        format_time_us(runtime_us),
        format_binary(c.bytes_read as f64)
    ));
    let e = &c.errors;
    if e.socket_total() > 0 {
        lines.push(format!(
            "  Socket errors: connect {}, read {}, write {}, timeout {}",
            e.connect, e.read, e.write, e.timeout
        ));
    }
    if e.status > 0 {
        lines.push(format!("  Non-2xx or 3xx responses: {}", e.status));
    }
    lines.push(format!("Requests/sec: {:9.2}", per_second(c.requests)));
    lines.push(format!(
        "Transfer/sec: {:>10}B",
        format_binary(per_second(c.bytes_read))
    ));
}

/// `Send lateness: p50 …, p99 …, max …` (µs in).
fn lateness_line(p50: u64, p99: u64, max: u64) -> String {
    format!(
        "Send lateness: p50 {}, p99 {}, max {}",
        format_time_us(p50 as f64),
        format_time_us(p99 as f64),
        format_time_us(max as f64)
    )
}

/// A merged run (`tsumo merge` of shards or of runs side by side) in wrk2's layout, from its
/// saved document: the totals' threads and connections, `Thread Stats` (the Req/Sec row from
/// every part's per-thread samples), the whole latency distribution (a merge is always read for
/// it), totals and rates, then protocol errors, HTTP/2 counts and send lateness. What belongs to
/// one process (its CPU, its start) is on the per-shard lines that follow.
pub fn render_merged(s: &SavedRun) -> Result<String, Error> {
    let plan = &s.plan;
    let latency = decode_histogram(&s.histograms.latency)?;
    let req_per_sec = decode_histogram(&s.histograms.req_per_sec)?;
    let lateness = &s.send_lateness;
    let server_spectrum = match &s.histograms.split {
        Some(split) => Some(decode_histogram(&split.server_latency)?),
        None => None,
    };
    Ok(Layout {
        url: &plan.url,
        duration_s: plan.duration_s,
        threads: plan.threads,
        connections: plan.connections,
        threads_of: " (all parts)",
        http2: plan.streams().map(|n| {
            format!(
                "  {}, up to {n} streams per connection",
                protocol_name(plan)
            )
        }),
        closed_loop: plan.rate.is_none(),
        latency: &latency,
        req_per_sec: &req_per_sec,
        distribution: true,
        uncorrected: None,
        counters: &s.counters,
        runtime_us: (s.elapsed_s * 1e6).round(),
        streams_asked: plan.protocol.http2().map(|h2| h2.streams),
        tls: None,
        lateness: plan
            .rate
            .map(|_| [lateness.p50, lateness.p99, lateness.max]),
        pacing: plan.pacing,
        behind: s.behind_schedule.as_ref(),
        shortfall: s.rate_shortfall.as_ref(),
        own_usage: None,
        server: s.server.as_ref(),
        part: Vec::new(),
        notes: &[],
        objectives: objective_lines(s),
        stages: stages::lines(&s.stages, s.stopped_in_stage, plan.connections),
        split: s
            .server_latency
            .zip(s.own_delay)
            .map(|(server, own)| SplitSummary {
                timestamps: s.timestamps,
                quic: plan.protocol.http3().is_some(),
                asked: s.timestamps_asked,
                corrected_p99: s.latency.p99,
                server,
                own,
                server_spectrum: server_spectrum.as_ref(),
            }),
    }
    .render())
}

/// The objectives' lines: the whole run's, then each stage's breaches.
fn objective_lines(s: &SavedRun) -> Vec<String> {
    let mut lines = objectives::lines(&s.objectives);
    lines.extend(stages::objective_lines(&s.stages));
    lines
}

/// tsumo's own CPU and peak memory, per completed request.
fn own_usage_line(r: &RunResult) -> String {
    let requests = r.counters.requests.max(1) as f64;
    format!(
        "tsumo: {:.2}s CPU ({} per request), peak RSS {}B",
        r.usage.cpu_seconds,
        format_time_us(r.usage.cpu_seconds * 1e6 / requests),
        format_binary(r.usage.peak_rss_bytes as f64)
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::plan::{Plan, RunOptions, Scheme, Target};
    use crate::stats::http::protocol::Violation;
    use crate::stats::http::{Counters, Errors};
    use crate::stats::new_histogram;
    use crate::sys::usage::OwnUsage;

    fn plan(rate: Option<u64>, latency: bool, u_latency: bool) -> Plan {
        Plan {
            options: RunOptions {
                duration: Duration::from_secs(12),
                latency,
                ..RunOptions::for_tests()
            },
            connections: 10,
            rate,
            u_latency,
            ..Plan::for_tests(Target {
                url: "http://127.0.0.1:8080/index.html".to_string(),
                scheme: Scheme::Http,
                host: "127.0.0.1".to_string(),
                explicit_port: Some(8080),
                path: "/index.html".to_string(),
            })
        }
    }

    fn result(plan: Plan) -> RunResult {
        let mut latency = new_histogram();
        let mut uncorrected = new_histogram();
        let mut send_lateness = new_histogram();
        let mut req_per_sec = new_histogram();
        for i in 0..3950u64 {
            latency.record(300 + (i * 37) % 1500).unwrap();
            uncorrected.record(50 + (i * 13) % 400).unwrap();
            send_lateness.record((i * 7) % 120).unwrap();
        }
        latency.record(4038).unwrap();
        for i in 0..24u64 {
            req_per_sec.record(950 + (i * 17) % 200).unwrap();
        }
        RunResult {
            plan,
            elapsed: Duration::from_micros(12_001_234),
            interrupted: false,
            counters: Counters {
                requests: 23_986,
                bytes_read: 5_924_542,
                bytes_written: 1_000_000,
                errors: Errors::default(),
                connections_opened: 10,
                ..Counters::default()
            },
            latency,
            uncorrected,
            send_lateness,
            req_per_sec,
            split: Default::default(),
            timestamps: Default::default(),
            timestamps_asked: false,
            notes: vec!["note: one".to_string()],
            server: None,
            ended_by: crate::stats::end::EndReason::Duration,
            usage: OwnUsage {
                cpu_seconds: 0.24,
                peak_rss_bytes: 8 << 20,
            },
            shortfall: None,
            behind: None,
            start: crate::stats::start::StartRecord::new(None, 0),
            timeline: None,
            stages: None,
        }
    }

    fn matches(pattern: &str, line: &str) -> bool {
        // A tiny matcher: `#` one digit, `~` one space-or-digit, `*` any run of characters;
        // everything else literal. Enough for line shapes without a regex crate.
        fn go(p: &[char], s: &[char]) -> bool {
            match p.first() {
                None => s.is_empty(),
                Some('*') => (0..=s.len()).any(|i| go(&p[1..], &s[i..])),
                Some('#') => s.first().is_some_and(char::is_ascii_digit) && go(&p[1..], &s[1..]),
                Some('~') => {
                    s.first().is_some_and(|c| c.is_ascii_digit() || *c == ' ')
                        && go(&p[1..], &s[1..])
                }
                Some(c) => s.first() == Some(c) && go(&p[1..], &s[1..]),
            }
        }
        let p: Vec<char> = pattern.chars().collect();
        let s: Vec<char> = line.chars().collect();
        go(&p, &s)
    }

    #[test]
    fn full_report_has_wrk2_line_shapes() {
        let out = render(&result(plan(Some(2000), true, true)));
        let lines: Vec<&str> = out.lines().collect();
        assert!(out.ends_with('\n'));
        assert_eq!(
            lines[0],
            "Running 12s test @ http://127.0.0.1:8080/index.html"
        );
        assert_eq!(lines[1], "  2 threads and 10 connections");
        assert_eq!(
            lines[2],
            "  Thread Stats   Avg      Stdev     Max   +/- Stdev"
        );
        // 50 columns each, as in wrk2 (`%-10s` + 8 + 10 + 9 + `%8.2f%%`).
        assert_eq!(
            lines[3],
            "    Latency     1.05ms  435.78us   4.04ms   58.21%"
        );
        assert_eq!(
            lines[4],
            "    Req/Sec     1.05k    58.72     1.14k    58.33%"
        );
        assert_eq!(
            lines[5],
            "  Latency Distribution (HdrHistogram - Recorded Latency)"
        );
        assert_eq!(lines[6], " 50.000%    1.05ms");
        assert_eq!(lines[13], "100.000%    4.04ms");
        for line in &lines[6..14] {
            assert_eq!(line.len(), 18, "{line:?}");
            assert!(matches("~~#.###% *#.##*s", line), "{line:?}");
        }
        assert_eq!(lines[14], "");
        assert_eq!(lines[15], "  Detailed Percentile spectrum:");
        assert_eq!(
            lines[16],
            "       Value   Percentile   TotalCount 1/(1-Percentile)"
        );
        assert_eq!(lines[17], "");
        assert_eq!(
            lines[18],
            "       0.300     0.000000            3         1.00"
        );
        assert_eq!(
            lines[19],
            "       0.449     0.100000          397         1.11"
        );
        assert_eq!(
            lines[24],
            "       1.122     0.550000         2175         2.22"
        );
        assert_eq!(
            lines[29],
            "       1.461     0.775000         3064         4.44"
        );
        let footer = lines.iter().position(|l| l.starts_with("#[Mean")).unwrap();
        for row in &lines[18..footer] {
            assert!(
                matches("~~~~~~~#.### ~~~~#.###### ~~~~~~~~~~~# ~~~~~~*#.##", row)
                    || row.ends_with("inf"),
                "{row:?}"
            );
        }
        assert_eq!(
            lines[footer - 2],
            "       4.038     0.999756         3951      4096.00"
        );
        assert_eq!(
            lines[footer - 1],
            "       4.038     1.000000         3951          inf"
        );
        assert_eq!(
            lines[footer],
            "#[Mean    =        1.049, StdDeviation   =        0.436]"
        );
        assert_eq!(
            lines[footer + 1],
            "#[Max     =        4.038, Total count    =         3951]"
        );
        assert_eq!(
            lines[footer + 2],
            "#[Buckets =           27, SubBuckets     =         2048]"
        );
        assert_eq!(lines[footer + 3], SEPARATOR);
        assert_eq!(SEPARATOR.len(), 58);
        assert_eq!(lines[footer + 4], "");
        assert_eq!(
            lines[footer + 5],
            "  Latency Distribution (HdrHistogram - Uncorrected Latency (measured without taking \
             delayed starts into account))"
        );
        assert_eq!(lines[footer + 6], " 50.000%  249.00us");
        let tail: Vec<&str> = lines[lines.len() - 8..].to_vec();
        assert_eq!(
            tail,
            vec![
                SEPARATOR,
                "  23986 requests in 12.00s, 5.65MB read",
                "Requests/sec:   1998.63",
                "Transfer/sec:    482.09KB",
                "Send lateness: p50 59.00us, p99 118.00us, max 119.00us",
                "Pacing: each send paced to the microsecond (auto)",
                "tsumo: 0.24s CPU (10.01us per request), peak RSS 8.00MB",
                "note: one",
            ]
        );
    }

    #[test]
    fn short_report_without_latency_flags() {
        let mut r = result(plan(None, false, false));
        r.counters.errors = Errors {
            connect: 1,
            read: 2,
            write: 3,
            timeout: 4,
            status: 5,
            protocol: 0,
        };
        r.counters.tls_full_handshakes = 10;
        r.counters.tls_resumed_handshakes = 2;
        r.notes.clear();
        let out = render(&r);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            vec![
                "Running 12s test @ http://127.0.0.1:8080/index.html",
                "  2 threads and 10 connections",
                "  closed loop (no -R): latency is not corrected for coordinated omission",
                "  Thread Stats   Avg      Stdev     Max   +/- Stdev",
                lines[4],
                lines[5],
                "  23986 requests in 12.00s, 5.65MB read",
                "  Socket errors: connect 1, read 2, write 3, timeout 4",
                "  Non-2xx or 3xx responses: 5",
                "Requests/sec:   1998.63",
                "Transfer/sec:    482.09KB",
                "TLS handshakes: 10 full, 2 resumed (after the pre-flight check's full handshake)",
                "tsumo: 0.24s CPU (10.01us per request), peak RSS 8.00MB",
            ]
        );
    }

    #[test]
    fn protocol_errors_follow_transfer_sec_with_the_first_quoted() {
        let mut r = result(plan(None, false, false));
        r.notes.clear();
        for _ in 0..3 {
            r.counters.protocol_error(
                Violation::UnsolicitedResponse,
                "HTTP/1.1 200 OK\\r\\n…".into(),
            );
        }
        r.counters
            .protocol_error(Violation::BadChunkSize, "zz".into());
        let out = render(&r);
        let lines: Vec<&str> = out.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.starts_with("Transfer/sec"))
            .unwrap();
        assert_eq!(
            lines[at - 2],
            "  Socket errors: connect 0, read 4, write 0, timeout 0"
        );
        assert_eq!(
            lines[at + 1..at + 7],
            [
                "Protocol errors: 3 unsolicited response, 1 bad chunk size (among the read errors)",
                "  unsolicited response: \"HTTP/1.1 200 OK\\r\\n…\"",
                "  unsolicited response: \"HTTP/1.1 200 OK\\r\\n…\"",
                "  unsolicited response: \"HTTP/1.1 200 OK\\r\\n…\"",
                "  bad chunk size: \"zz\"",
                "tsumo: 0.24s CPU (10.01us per request), peak RSS 8.00MB",
            ]
        );
    }

    #[test]
    fn empty_run_prints_zeros_not_nan() {
        let mut r = result(plan(Some(100), true, false));
        r.latency = new_histogram();
        r.req_per_sec = new_histogram();
        r.send_lateness = new_histogram();
        r.counters = Counters::default();
        r.elapsed = Duration::ZERO;
        let out = render(&r);
        assert!(!out.contains("nan"), "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[2],
            "  Thread Stats   Avg      Stdev     Max   +/- Stdev"
        );
        assert_eq!(
            lines[3],
            "    Latency     0.00us    0.00us   0.00us    0.00%"
        );
        assert_eq!(
            lines[4],
            "    Req/Sec     0.00      0.00     0.00      0.00%"
        );
        assert_eq!(lines[6], " 50.000%    0.00us");
        assert!(out.contains("\n       0.000     1.000000            0          inf\n"));
        assert!(out.contains("#[Mean    =        0.000, StdDeviation   =        0.000]"));
        assert!(out.contains("Requests/sec:      0.00\n"));
        assert!(out.contains("Send lateness: p50 0.00us, p99 0.00us, max 0.00us\n"));
    }

    /// The warning names one cause (`Behind`), and only when no rate-not-reached line names
    /// it already: never tsumo and the server in one breath.
    #[test]
    fn warns_of_lateness_once_with_its_cause() {
        use crate::stats::http::shortfall::{Behind, LateCause};
        let mut r = result(plan(Some(100), false, false));
        r.send_lateness = new_histogram();
        r.send_lateness.record_n(10, 90).unwrap();
        r.send_lateness.record_n(5000, 10).unwrap();
        assert!(
            !render(&r).contains("Warning"),
            "no cause judged, no warning"
        );
        r.behind = Some(Behind {
            cause: LateCause::OwnCpu,
            send_lateness_p99_us: 5000,
            busiest_thread_cpu: 0.97,
            busiest_thread_waiting: 0.01,
            machine: None,
        });
        let out = render(&r);
        assert!(
            out.contains(
                "\nWarning: tsumo fell behind its own schedule (send lateness p99 5.00ms): its \
                 busiest worker thread used 97% of a core; latencies include its delay: add \
                 threads (-t) or lower the rate (-R).\n"
            ),
            "{out}"
        );
        assert!(out.contains("Send lateness: p50 10.00us, p99 5.00ms, max 5.00ms\n"));
        // A rate not reached is the one line that says who held it back.
        let mut total = crate::stats::http::Recorder::new();
        total.counters.requests = 10;
        total.counters.due_while_busy = 10;
        for _ in 0..10 {
            total.record_send_lateness(5000);
        }
        r.shortfall = Shortfall::judge(100, 4, &total, Duration::from_secs(1), &[]);
        let out = render(&r);
        assert!(out.contains("Rate not reached"), "{out}");
        assert!(!out.contains("Warning: tsumo fell behind"), "{out}");
    }
}
