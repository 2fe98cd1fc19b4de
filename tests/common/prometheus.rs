//! A real Prometheus (Debian's `prometheus`) for the tests: started on a free port of
//! 127.0.0.1 with a storage directory of its own, scraping the given targets every second, and
//! asked through its HTTP API. Killed when dropped.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::TempDir;

/// Where Debian puts it; `TSUMO_PROMETHEUS` overrides.
fn binary() -> PathBuf {
    std::env::var_os("TSUMO_PROMETHEUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/prometheus"))
}

pub struct Prometheus {
    child: Child,
    pub port: u16,
    dir: TempDir,
}

impl Prometheus {
    /// Starts one that scrapes `targets` (`127.0.0.1:PORT`) every second.
    pub fn start(targets: &[String]) -> Prometheus {
        Prometheus::start_with(targets, &[])
    }

    /// [`Prometheus::start`] with more flags (`--web.enable-remote-write-receiver`).
    pub fn start_with(targets: &[String], extra: &[&str]) -> Prometheus {
        let dir = TempDir::new("tsumo-prometheus");
        let port = super::free_port();
        let listed: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n\
             scrape_configs:\n  - job_name: tsumo\n    static_configs:\n      - targets: [{}]\n",
            listed.join(", ")
        );
        let config_path = dir.path().join("prometheus.yml");
        std::fs::write(&config_path, config).expect("write prometheus.yml");
        let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("create log");
        let child = Command::new(binary())
            .arg(format!("--config.file={}", config_path.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run {} ({e}); install prometheus (scripts/test does)",
                    binary().display()
                )
            });
        let mut prometheus = Prometheus { child, port, dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = prometheus.child.try_wait() {
                panic!("prometheus exited with {status}:\n{}", prometheus.log());
            }
            if get(port, "/-/ready").is_some_and(|(status, _)| status == 200) {
                return prometheus;
            }
            assert!(
                Instant::now() < deadline,
                "prometheus not ready after 60s:\n{}",
                prometheus.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }

    /// An instant query's result (`data.result`), through `/api/v1/query`.
    pub fn query(&self, expr: &str) -> Vec<serde_json::Value> {
        self.api_result(&format!("/api/v1/query?query={}", encode(expr)), expr)
    }

    /// An instant query's result evaluated at `time` (Unix seconds).
    pub fn query_at(&self, expr: &str, time: f64) -> Vec<serde_json::Value> {
        let path = format!("/api/v1/query?query={}&time={time:.3}", encode(expr));
        self.api_result(&path, expr)
    }

    /// A range query's result (`data.result`: one `values` list per series), through
    /// `/api/v1/query_range`, from `start` to `end` (Unix seconds) every `step_s` seconds.
    pub fn query_range(
        &self,
        expr: &str,
        start: f64,
        end: f64,
        step_s: f64,
    ) -> Vec<serde_json::Value> {
        let path = format!(
            "/api/v1/query_range?query={}&start={start:.3}&end={end:.3}&step={step_s}",
            encode(expr)
        );
        self.api_result(&path, expr)
    }

    /// A label's values among the series that `selector` matches between `start` and `end`
    /// (`/api/v1/label/NAME/values?match[]=`: what Grafana's `label_values(selector, NAME)`
    /// asks).
    pub fn label_values(&self, name: &str, selector: &str, start: f64, end: f64) -> Vec<String> {
        let path = format!(
            "/api/v1/label/{name}/values?match[]={}&start={start:.3}&end={end:.3}",
            encode(selector)
        );
        let values = self.api_data(&path, selector);
        let values = values.as_array().cloned().unwrap_or_default();
        values
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    }

    /// An API answer's `data.result`.
    fn api_result(&self, path: &str, what: &str) -> Vec<serde_json::Value> {
        self.api_data(path, what)["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// An API answer's `data`, asserted a success.
    fn api_data(&self, path: &str, what: &str) -> serde_json::Value {
        let (status, body) = get(self.port, path)
            .unwrap_or_else(|| panic!("prometheus did not answer {what}:\n{}", self.log()));
        assert_eq!(status, 200, "{what}: {body}");
        let mut doc: serde_json::Value = serde_json::from_str(&body).expect("an answer is JSON");
        doc["data"].take()
    }

    /// The one number an instant query gives (None for no series).
    pub fn number(&self, expr: &str) -> Option<f64> {
        let result = self.query(expr);
        assert!(
            result.len() <= 1,
            "{expr}: more than one series: {result:?}"
        );
        let value = result.first()?["value"][1].as_str()?.to_string();
        value.parse().ok()
    }

    /// The targets' last scrape errors, for a failure's message.
    pub fn targets(&self) -> String {
        get(self.port, "/api/v1/targets").map_or(String::new(), |(_, body)| body)
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The latency buckets' upper bounds, seconds, as `/metrics` has them.
pub const BUCKETS_S: [f64; 17] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

/// The bucket `[lower, upper]` (seconds) that holds `value_s`.
pub fn bucket_of(value_s: f64) -> (f64, f64) {
    let mut lower = 0.0;
    for upper in BUCKETS_S {
        if value_s <= upper {
            return (lower, upper);
        }
        lower = upper;
    }
    (lower, f64::INFINITY)
}

/// A query's text percent-encoded for a URL.
fn encode(expr: &str) -> String {
    let mut encoded = String::new();
    for b in expr.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    encoded
}

/// A GET over HTTP/1.0 to 127.0.0.1: the status and the body, or None when nothing answers.
pub fn get(port: u16, path: &str) -> Option<(u16, String)> {
    get_with_head(port, path).map(|(status, _, body)| (status, body))
}

/// [`get`] with the response's head too (in lower case).
pub fn get_with_head(port: u16, path: &str) -> Option<(u16, String, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).ok()?;
    let answer = String::from_utf8_lossy(&answer).to_string();
    let (head, body) = answer.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, head.to_ascii_lowercase(), body.to_string()))
}

/// Reads a dashboard's `/metrics` and `/` over and over while a command runs (what a scrape and
/// a browser would see), keeping the last of each it got.
pub struct Watch {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Watched>,
}

/// What a [`Watch`] saw.
#[derive(Debug, Default)]
pub struct Watched {
    /// The last `/metrics` read.
    pub metrics: String,
    /// The last `/` read.
    pub page: String,
    /// The last live page (before the final one).
    pub live: String,
    /// The most players logged in that a live page showed (a mahjong session's figure).
    pub most_logged_in: f64,
}

impl Watch {
    pub fn start(port: u16) -> Watch {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = std::sync::Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut seen = Watched::default();
            while !stopped.load(std::sync::atomic::Ordering::SeqCst) {
                if let Some((200, body)) = get(port, "/metrics") {
                    seen.metrics = body;
                }
                if let Some((200, body)) = get(port, "/") {
                    if body.contains("(live)") {
                        let logged_in =
                            super::browser::figure_value(&body, "data-figure=\"logged-in\"");
                        seen.most_logged_in = seen.most_logged_in.max(logged_in.unwrap_or(0.0));
                        seen.live.clone_from(&body);
                    }
                    seen.page = body;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            seen
        });
        Watch { stop, thread }
    }

    /// Stops watching: what it saw.
    pub fn stop(self) -> Watched {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().expect("the watch thread")
    }
}
