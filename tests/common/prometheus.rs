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
        let mut encoded = String::new();
        for b in expr.bytes() {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                encoded.push(b as char);
            } else {
                encoded.push_str(&format!("%{b:02X}"));
            }
        }
        let (status, body) = get(self.port, &format!("/api/v1/query?query={encoded}"))
            .unwrap_or_else(|| panic!("prometheus did not answer a query:\n{}", self.log()));
        assert_eq!(status, 200, "query {expr}: {body}");
        let doc: serde_json::Value = serde_json::from_str(&body).expect("query answer is JSON");
        doc["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
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
