//! A run as JSON (`--json FILE|-`): for scripts, and to be read back by tsumo later.
//!
//! [`SavedRun`] is the schema, both written and read, so merging or comparing saved runs works
//! from the same types. Conventions: latencies and lateness are in µs (integers for histogram
//! values, floats for mean/stdev); durations are seconds as floats (`duration_s`, `timeout_s`,
//! `elapsed_s`) rather than serde's `{secs, nanos}`; every histogram is kept whole as a
//! base64 HdrHistogram compressed V2 string (`HISTF…`, readable by any HdrHistogram library), so
//! percentiles can be recomputed or merged exactly later. `"schema"` is the format version of
//! both kinds of saved file ([`SCHEMA_VERSION`], with the other pieces both share in
//! [`schema`](crate::report::schema)); a mahjong session's layout is
//! [`SavedSession`](crate::report::mahjong::saved::SavedSession).

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use super::intervals::{http_intervals, set_targets, SavedInterval};
pub use super::percentiles::Percentiles;
use super::stages::{self, SavedStage};
use crate::error::Error;
use crate::plan::{JsonOut, Plan, Protocol, Stage};
use crate::report::schema::{
    encode_histogram, first_schema, write_value, SavedPart, SCHEMA_VERSION,
};
use crate::slo::{self, Verdict};
use crate::stats::end::EndReason;
use crate::stats::http::shortfall::{Behind, Shortfall};
use crate::stats::http::split::{SplitHistograms, Timestamps};
use crate::stats::http::Counters;
use crate::stats::http::RunResult;
use crate::sys::procstat::ServerUsage;
use crate::sys::usage::OwnUsage;
use crate::timing::pacer::Pacing;
use crate::timing::stages::Target;

/// One run as saved to JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedRun {
    /// Always `"tsumo"`.
    pub tool: String,
    /// tsumo's version (`CARGO_PKG_VERSION`) that wrote the file.
    pub version: String,
    /// The format version, see [`SCHEMA_VERSION`].
    #[serde(default = "first_schema")]
    pub schema: u32,
    /// `"http"`: tells an HTTP run's file from a mahjong session's (`"mode": "mahjong"`).
    #[serde(default = "http_mode")]
    pub mode: String,
    /// The run's name in comparisons (`--label`; default: the URL).
    pub label: String,
    pub plan: SavedPlan,
    /// Wall time of the run, seconds.
    pub elapsed_s: f64,
    /// Stopped by Ctrl-C before the planned duration.
    pub interrupted: bool,
    /// Requests, bytes, errors by kind, connections, TLS handshakes.
    pub counters: Counters,
    /// Completed requests / elapsed, as in `Requests/sec`.
    pub requests_per_sec: f64,
    /// Bytes read / elapsed, as in `Transfer/sec`.
    pub bytes_per_sec: f64,
    /// Corrected latency, µs.
    pub latency: Percentiles,
    /// Uncorrected latency, µs.
    pub uncorrected: Percentiles,
    /// Send lateness (actual − intended send time), µs.
    pub send_lateness: Percentiles,
    /// Where the receive times came from: `"kernel"` (the kernel's stamp of the read that
    /// completed a response) or `"user"` (tsumo's clock when it read it; every file of older
    /// tsumos).
    #[serde(default)]
    pub timestamps: Timestamps,
    /// `true` when `TSUMO_TIMESTAMPS=user` asked for user-space stamps; absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timestamps_asked: bool,
    /// What the server caused of the corrected latency (its service, plus the wait behind its
    /// own slowness), µs; absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_latency: Option<Percentiles>,
    /// What tsumo added: its send delay on a free connection and its read delay, per response,
    /// µs; absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_delay: Option<OwnDelay>,
    /// The corrected latency as a user-space stamp (wrk2's, oha's) gives it: to when tsumo's
    /// thread read each response, µs; absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_latency: Option<Percentiles>,
    pub histograms: SavedHistograms,
    /// Conditions met during the run, as printed after the text report.
    pub notes: Vec<String>,
    /// CPU and memory of the `--server-pid` processes during the run; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerUsage>,
    /// What ended the run: `duration`, `SIGINT`, `SIGTERM`, `SIGHUP`, `done`, `ended`,
    /// `script error` or `settled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_by: Option<EndReason>,
    /// tsumo's own CPU time and peak memory (`cpu_s`, `peak_rss_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tsumo: Option<OwnUsage>,
    /// Present when a fixed-rate run did not reach its rate: by how much and which side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_shortfall: Option<Shortfall>,
    /// Present when tsumo sent behind its own schedule, with the cause its warning named; a
    /// merge has none (one process's word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind_schedule: Option<Behind>,
    /// The script error that stopped the run (`FILE:LINE: message`, as stderr's `tsumo: script
    /// error:` line); absent when none did. A merge names each part's: `SOURCE: FILE:LINE: …`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script_error: Option<String>,
    /// `--slo`: each objective as typed, what the run measured, its unit and whether it held
    /// (`expr`, `measured`, `unit`, `held`); absent without objectives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objectives: Vec<Verdict>,
    /// The run interval by interval (`--interval`); absent in files of older tsumos.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<SavedInterval>,
    /// `--stages`: each stage's own results (see [`SavedStage`]), in order; absent without
    /// stages, and in files of older tsumos.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<SavedStage>,
    /// `--stages`: the stage (its `index`) a run cut short stopped in; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_in_stage: Option<usize>,
    /// `--requests`: where the per-request log went, its rows and whether it is whole; absent
    /// without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_log: Option<crate::stats::requests::RequestsLog>,
    /// `merged_from`, `run_id`, `shard`, `start`: written last, at the top level.
    #[serde(flatten)]
    pub part: SavedPart,
}

fn http_mode() -> String {
    super::MODE.to_string()
}

/// The plan's settings that shape the results (output options are left out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedPlan {
    /// The URL as typed.
    pub url: String,
    pub threads: usize,
    pub connections: usize,
    /// Planned run length, seconds.
    pub duration_s: f64,
    /// Total target rate (requests/s); `null` for a closed-loop run.
    pub rate: Option<u64>,
    /// Per-request timeout, seconds.
    pub timeout_s: f64,
    pub script: Option<String>,
    pub script_args: Vec<String>,
    /// Extra headers as `[name, value]` pairs.
    pub headers: Vec<(String, String)>,
    pub latency: bool,
    pub u_latency: bool,
    pub batch_latency: bool,
    pub insecure: bool,
    pub cacert: Option<String>,
    /// The protocol spoken, by its ALPN name: `http/1.1`, `h2` or `h3`; absent in files of
    /// older tsumos (read as `h2` when `http2` is there, else `http/1.1`).
    #[serde(default, rename = "protocol", skip_serializing_if = "String::is_empty")]
    pub alpn: String,
    /// The protocol and its settings, saved as `http2` (`--http2` and its settings; absent for
    /// an HTTP/1.1 run) or `http3` (absent unless the run spoke HTTP/3).
    #[serde(flatten)]
    pub protocol: Protocol,
    /// `--bind`: the source addresses the connections were spread over (a merge: every part's,
    /// each once); absent when the kernel chose, and in files of older tsumos.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bind: Vec<IpAddr>,
    /// How the sends of a fixed-rate run were paced (`--slack`); absent in a closed loop and in
    /// files of older tsumos.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<SavedPacing>,
    /// `--stages`: the whole run's profile, in order (`rate` is its mean); absent without it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<Stage>,
}

/// The pacer's slot, as the report states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedPacing {
    /// Sends due within one slot of this many µs shared a wake-up, each sent at its time or up
    /// to this much after it; 0: each send to the microsecond.
    pub slack_us: u64,
    /// Chosen by tsumo from the per-thread rate (`--slack auto`), not given.
    pub auto: bool,
    /// `--stages` with auto pacing: the choice follows the rate over the run (precise while a
    /// thread's share is low); `slack_us` is then the peak's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub follows_rate: bool,
}

impl SavedPacing {
    /// The pacing of a run of `plan`, when it has a rate: the one its workers pace with (with
    /// `--stages`, chosen for the peak, not the mean that `rate` holds).
    pub fn of(plan: &Plan) -> Option<SavedPacing> {
        plan.rate?;
        let rate = crate::timing::stages::pacing_rate(plan);
        let pacing = Pacing::choose(plan.slack, rate, plan.options.threads);
        Some(SavedPacing {
            slack_us: pacing.slack_us(),
            auto: pacing.auto,
            follows_rate: pacing.auto && !plan.stages.is_empty(),
        })
    }

    /// `paced to the microsecond` / `sends coalesced in 100us slots (auto)`.
    pub fn describe(&self) -> String {
        let chosen = if self.auto { " (auto)" } else { "" };
        if self.follows_rate && self.slack_us > 0 {
            format!(
                "as the rate goes (auto): each send to the microsecond below {} req/s a thread, \
                 in slots of up to {}us above; --slack 0 paces each to the microsecond",
                Pacing::PRECISE_BELOW,
                self.slack_us
            )
        } else if self.slack_us == 0 {
            format!("each send paced to the microsecond{chosen}")
        } else {
            format!(
                "sends coalesced in {}us slots{chosen}; --slack 0 paces each to the microsecond",
                self.slack_us
            )
        }
    }
}

impl SavedPlan {
    /// The protocol and its streams per connection, as a report names them: `HTTP/1.1`,
    /// `HTTP/2 -m4`, `HTTP/3 -m4`.
    pub fn protocol_short(&self) -> String {
        match self.protocol {
            Protocol::Http1 => "HTTP/1.1".to_string(),
            Protocol::Http2(h2) => format!("HTTP/2 -m{}", h2.streams),
            Protocol::Http3(h3) => format!("HTTP/3 -m{}", h3.streams),
        }
    }

    /// Streams per connection of an HTTP/2 or HTTP/3 run.
    pub fn streams(&self) -> Option<usize> {
        self.protocol.streams()
    }

    pub fn from_plan(plan: &Plan) -> SavedPlan {
        let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
        SavedPlan {
            url: plan.target.url.clone(),
            threads: plan.options.threads,
            connections: plan.connections,
            duration_s: plan.options.duration.as_secs_f64(),
            rate: plan.rate,
            timeout_s: plan.timeout.as_secs_f64(),
            script: path(&plan.script),
            script_args: plan.script_args.clone(),
            headers: plan.headers.clone(),
            latency: plan.options.latency,
            u_latency: plan.u_latency,
            batch_latency: plan.batch_latency,
            insecure: plan.options.insecure,
            cacert: path(&plan.options.cacert),
            alpn: String::from_utf8_lossy(crate::web::alpn(plan).id()).into_owned(),
            protocol: plan.protocol,
            bind: plan.options.bind.clone(),
            pacing: SavedPacing::of(plan),
            stages: plan.stages.clone(),
        }
    }
}

/// tsumo's own delay per response, µs: `total` = `send` + `read`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OwnDelay {
    pub total: Percentiles,
    /// From when the request was due and its connection free to its send.
    pub send: Percentiles,
    /// From the kernel's receive stamp to tsumo's read.
    pub read: Percentiles,
}

impl OwnDelay {
    pub fn of(split: &SplitHistograms) -> OwnDelay {
        OwnDelay {
            total: Percentiles::of(&split.own),
            send: Percentiles::of(&split.own_send),
            read: Percentiles::of(&split.own_read),
        }
    }
}

/// Whole histograms, each a base64 HdrHistogram compressed V2 string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedHistograms {
    pub latency: String,
    pub uncorrected: String,
    pub send_lateness: String,
    /// Requests per second per thread, one sample per thread per second.
    pub req_per_sec: String,
    /// The split of the corrected latency (absent in files of older tsumos).
    #[serde(flatten)]
    pub split: Option<SavedSplit>,
}

/// The split's whole histograms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSplit {
    pub server_latency: String,
    pub own_delay: String,
    pub own_send: String,
    pub own_read: String,
    pub user_latency: String,
}

impl SavedSplit {
    pub fn of(split: &SplitHistograms) -> SavedSplit {
        SavedSplit {
            server_latency: encode_histogram(&split.server),
            own_delay: encode_histogram(&split.own),
            own_send: encode_histogram(&split.own_send),
            own_read: encode_histogram(&split.own_read),
            user_latency: encode_histogram(&split.user),
        }
    }

    /// Each histogram with its name, in the order [`SavedSplit::of`] writes them.
    pub fn encoded(&self) -> [(&'static str, &String); 5] {
        [
            ("server_latency", &self.server_latency),
            ("own_delay", &self.own_delay),
            ("own_send", &self.own_send),
            ("own_read", &self.own_read),
            ("user_latency", &self.user_latency),
        ]
    }
}

impl SavedRun {
    /// Sets the split's summaries and histograms from `split`.
    pub fn set_split(&mut self, split: &SplitHistograms) {
        self.server_latency = Some(Percentiles::of(&split.server));
        self.own_delay = Some(OwnDelay::of(split));
        self.user_latency = Some(Percentiles::of(&split.user));
        self.histograms.split = Some(SavedSplit::of(split));
    }
}

impl SavedRun {
    /// Everything in `r`, in the saved layout.
    pub fn from_result(r: &RunResult) -> SavedRun {
        let elapsed_s = r.elapsed.as_secs_f64();
        // Whole µs, as wrk2 (and the text report) measure the run.
        let runtime_s = r.elapsed.as_micros() as f64 / 1_000_000.0;
        let per_second = |n: u64| {
            if runtime_s > 0.0 {
                n as f64 / runtime_s
            } else {
                0.0
            }
        };
        let mut saved = SavedRun {
            tool: "tsumo".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            schema: SCHEMA_VERSION,
            mode: http_mode(),
            label: r.plan.options.label.clone(),
            plan: SavedPlan::from_plan(&r.plan),
            elapsed_s,
            interrupted: r.interrupted,
            counters: r.counters.clone(),
            requests_per_sec: per_second(r.counters.requests),
            bytes_per_sec: per_second(r.counters.bytes_read),
            latency: Percentiles::of(&r.latency),
            uncorrected: Percentiles::of(&r.uncorrected),
            send_lateness: Percentiles::of(&r.send_lateness),
            timestamps: r.timestamps,
            timestamps_asked: r.timestamps_asked,
            server_latency: None,
            own_delay: None,
            user_latency: None,
            histograms: SavedHistograms {
                latency: encode_histogram(&r.latency),
                uncorrected: encode_histogram(&r.uncorrected),
                send_lateness: encode_histogram(&r.send_lateness),
                req_per_sec: encode_histogram(&r.req_per_sec),
                split: None,
            },
            notes: r.notes.clone(),
            server: r.server.clone(),
            ended_by: Some(r.ended_by),
            tsumo: Some(r.usage),
            rate_shortfall: r.shortfall.clone(),
            behind_schedule: r.behind.clone(),
            script_error: None,
            objectives: Vec::new(),
            intervals: r.timeline.as_ref().map_or_else(Vec::new, |t| {
                let mut intervals = http_intervals(t, elapsed_s);
                set_targets(&mut intervals, &Target::of(&r.plan));
                intervals
            }),
            stages: Vec::new(),
            stopped_in_stage: None,
            requests_log: None,
            part: SavedPart::of(&r.plan.options.part, &r.start),
        };
        if let Some(run_stages) = &r.stages {
            let side = r.shortfall.as_ref().map(|s| s.side);
            let objectives = &r.plan.options.objectives;
            saved.stages = stages::saved(run_stages, r.plan.connections, side, objectives);
            saved.stopped_in_stage = run_stages.stopped_in;
        }
        saved.set_split(&r.split);
        // Judged on the saved measures, as a saved run is judged again (`report::objectives`).
        saved.objectives = slo::judge(&r.plan.options.objectives, &saved);
        saved
    }
}

/// The JSON value of a run (see [`SavedRun`] for the layout).
pub fn to_json(r: &RunResult) -> serde_json::Value {
    // Only non-string map keys make to_value fail; SavedRun has none.
    serde_json::to_value(SavedRun::from_result(r)).unwrap_or(serde_json::Value::Null)
}

/// Writes the JSON result to a file or stdout, pretty-printed, ending with a newline.
pub fn write(r: &RunResult, out: &JsonOut) -> Result<(), Error> {
    write_value(&SavedRun::from_result(r), out)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::plan::{RunOptions, Scheme, Target};
    use crate::report::schema::decode_histogram;
    use crate::stats::hdr;
    use crate::stats::http::Errors;
    use crate::stats::new_histogram;
    use crate::stats::start::StartRecord;

    fn result() -> RunResult {
        let mut latency = new_histogram();
        let mut uncorrected = new_histogram();
        let mut send_lateness = new_histogram();
        let mut req_per_sec = new_histogram();
        for i in 0..5000u64 {
            latency.record(200 + (i * 7919) % 90_000).unwrap();
            uncorrected.record(100 + (i * 31) % 2000).unwrap();
            send_lateness.record(i % 50).unwrap();
        }
        for i in 0..20u64 {
            req_per_sec.record(400 + i).unwrap();
        }
        RunResult {
            plan: Plan {
                options: RunOptions {
                    duration: Duration::from_millis(10_500),
                    latency: true,
                    insecure: true,
                    json: Some(JsonOut::Stdout),
                    label: "https://example.test/x".to_string(),
                    ..RunOptions::for_tests()
                },
                connections: 4,
                rate: Some(500),
                script: Some("s.lua".into()),
                headers: vec![("X-A".to_string(), "1".to_string())],
                script_args: vec!["a".to_string()],
                ..Plan::for_tests(Target {
                    url: "https://example.test/x".to_string(),
                    scheme: Scheme::Https,
                    host: "example.test".to_string(),
                    explicit_port: None,
                    path: "/x".to_string(),
                })
            },
            elapsed: Duration::from_secs(10),
            interrupted: true,
            counters: Counters {
                requests: 5000,
                bytes_read: 1_000_000,
                errors: Errors {
                    timeout: 3,
                    status: 2,
                    ..Errors::default()
                },
                ..Counters::default()
            },
            latency,
            uncorrected,
            send_lateness,
            split: Default::default(),
            timestamps: Default::default(),
            timestamps_asked: false,
            req_per_sec,
            notes: vec!["a note".to_string()],
            server: None,
            ended_by: EndReason::Signal("SIGINT"),
            usage: Default::default(),
            shortfall: None,
            behind: None,
            start: StartRecord::new(None, 1_796_061_600_000_000_000),
            timeline: None,
            stages: None,
        }
    }

    #[test]
    fn json_has_the_documented_fields() {
        let r = result();
        let v = to_json(&r);
        assert_eq!(v["tool"], "tsumo");
        assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(v["label"], "https://example.test/x");
        assert_eq!(v["plan"]["duration_s"], 10.5);
        assert_eq!(v["plan"]["rate"], 500);
        // 500/s over 2 threads: each send paced to the microsecond, chosen by tsumo.
        assert_eq!(v["plan"]["pacing"]["slack_us"], 0);
        assert_eq!(v["plan"]["pacing"]["auto"], true);
        // With stages the workers pace for the peak, 16,000/s on one thread (200 µs slots),
        // not the mean `rate` holds (12,000/s: 150 µs).
        let mut staged = result();
        staged.plan.options.threads = 1;
        staged.plan.rate = Some(12_000);
        staged.plan.stages = vec![
            Stage {
                duration_ns: 1_000_000_000,
                from: 0,
                to: 16_000,
            },
            Stage {
                duration_ns: 1_000_000_000,
                from: 16_000,
                to: 16_000,
            },
        ];
        assert_eq!(to_json(&staged)["plan"]["pacing"]["slack_us"], 200);
        assert_eq!(to_json(&staged)["plan"]["pacing"]["follows_rate"], true);
        assert!(to_json(&result())["plan"]["pacing"]
            .get("follows_rate")
            .is_none());
        assert_eq!(v["plan"]["headers"][0][0], "X-A");
        assert_eq!(v["elapsed_s"], 10.0);
        assert_eq!(v["interrupted"], true);
        assert_eq!(v["counters"]["errors"]["timeout"], 3);
        assert_eq!(v["counters"]["errors"]["status_4xx_5xx"], 2);
        assert_eq!(v["requests_per_sec"], 500.0);
        assert_eq!(v["bytes_per_sec"], 100_000.0);
        assert_eq!(
            v["latency"]["p50"],
            hdr::value_at_percentile(&r.latency, 50.0)
        );
        assert_eq!(
            v["latency"]["p99.9"],
            hdr::value_at_percentile(&r.latency, 99.9)
        );
        assert_eq!(v["uncorrected"]["max"], hdr::max(&r.uncorrected));
        assert_eq!(v["send_lateness"]["min"], 0);
        assert_eq!(v["send_lateness"]["count"], 5000);
        for name in ["latency", "uncorrected", "send_lateness", "req_per_sec"] {
            let s = v["histograms"][name].as_str().unwrap();
            assert!(s.starts_with("HISTF"), "{name}: {s}");
        }
        assert_eq!(v["notes"][0], "a note");
    }

    #[test]
    fn histograms_round_trip_exactly() {
        let r = result();
        let saved: SavedRun = serde_json::from_value(to_json(&r)).unwrap();
        assert_eq!(saved, SavedRun::from_result(&r));
        let pairs = [
            (&saved.histograms.latency, &r.latency),
            (&saved.histograms.uncorrected, &r.uncorrected),
            (&saved.histograms.send_lateness, &r.send_lateness),
            (&saved.histograms.req_per_sec, &r.req_per_sec),
        ];
        for (encoded, original) in pairs {
            let decoded = decode_histogram(encoded).unwrap();
            assert_eq!(&decoded, original);
            assert_eq!(decoded.high(), original.high());
            assert_eq!(
                hdr::value_at_percentile(&decoded, 99.0),
                hdr::value_at_percentile(original, 99.0)
            );
        }
        let empty = decode_histogram(&encode_histogram(&new_histogram())).unwrap();
        assert_eq!(empty.len(), 0);
    }

    #[test]
    fn bad_histogram_strings_are_errors_not_panics() {
        assert!(decode_histogram("not base64!").is_err());
        assert!(decode_histogram("SElTVEY=").is_err());
    }

    #[test]
    fn write_to_file_and_load_back() {
        let r = result();
        let dir = std::env::temp_dir().join(format!("tsumo-json-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.json");
        write(&r, &JsonOut::File(path.clone())).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("}\n"));
        let loaded: SavedRun = serde_json::from_str(&text).unwrap();
        assert_eq!(loaded, SavedRun::from_result(&r));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_file_names_the_path() {
        let path = std::path::PathBuf::from("/nonexistent-dir-for-tsumo/run.json");
        match write(&result(), &JsonOut::File(path)) {
            Err(Error::Write { path, .. }) => {
                assert_eq!(path, "/nonexistent-dir-for-tsumo/run.json")
            }
            other => panic!("expected a file error, got {other:?}"),
        }
    }
}
