//! `--prometheus-rw URL`: the same series as `/metrics`, pushed with Prometheus remote write
//! (1.0: a snappy-compressed protobuf `WriteRequest` POSTed once a second, and once more at the
//! end) for a generator that nothing can scrape, such as a short-lived Kubernetes Job. The
//! series are read back from the OpenMetrics text `/metrics` serves, so both carry the same
//! names, labels and values; each gets `job="tsumo"`, as a scrape would.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::engine::signals;
use crate::net::http1::oneshot;
use crate::net::stream::Endpoint;
use crate::plan::Target;
use crate::stats::live::Live;

/// How often the series are pushed.
const EVERY: Duration = Duration::from_secs(1);
/// The longest a push during the command may take.
const PUSH_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest the last push may hold the exit: a receiver that accepts and never answers
/// costs this, not a push's timeout twice over.
const LAST_PUSH: Duration = Duration::from_secs(2);
/// A signal during the last push (a second one, or one caught since the command ended) cuts
/// the wait to this, as every wait of the exit after a second signal (docs/wrk2.md).
const AFTER_SIGNAL: Duration = Duration::from_secs(1);

#[derive(Clone, PartialEq, prost::Message)]
struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    timeseries: Vec<TimeSeries>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    samples: Vec<Sample>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Label {
    #[prost(string, tag = "1")]
    name: String,
    #[prost(string, tag = "2")]
    value: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct Sample {
    #[prost(double, tag = "1")]
    value: f64,
    #[prost(int64, tag = "2")]
    timestamp: i64,
}

/// The pushes' failures, said once at the end.
#[derive(Debug, Default)]
struct Failures {
    count: u64,
    last: Option<String>,
}

/// The pusher thread.
pub(super) struct Pusher {
    /// Told once: the command ended, push the last figures and end.
    stop: Arc<Notify>,
    thread: Option<JoinHandle<()>>,
    failures: Arc<Mutex<Failures>>,
    url: String,
}

impl Pusher {
    /// Starts pushing to `target` (reached at `endpoint`) once a second.
    pub fn start(live: Arc<Live>, target: &Target, endpoint: Endpoint) -> std::io::Result<Pusher> {
        let stop = Arc::new(Notify::new());
        let failures = Arc::new(Mutex::new(Failures::default()));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let head = request_head(target);
        let thread = {
            let (stop, failures) = (Arc::clone(&stop), Arc::clone(&failures));
            let failed = move |e: PushError| {
                let mut f = failures.lock().unwrap_or_else(|e| e.into_inner());
                f.count += 1;
                f.last = Some(e.to_string());
            };
            std::thread::Builder::new()
                .name("tsumo-remote-write".to_string())
                .spawn(move || {
                    crate::sys::yield_to_workers();
                    runtime.block_on(async move {
                        loop {
                            // A push under way when the command ends is dropped: the last
                            // one, with the final figures, follows at once.
                            let pushed = tokio::select! {
                                pushed = push(&live, &head, &endpoint, PUSH_TIMEOUT) => pushed,
                                () = stop.notified() => break,
                            };
                            if let Err(e) = pushed {
                                failed(e);
                            }
                            tokio::select! {
                                () = tokio::time::sleep(EVERY) => {}
                                () = stop.notified() => break,
                            }
                        }
                        if let Err(e) = push(&live, &head, &endpoint, LAST_PUSH).await {
                            failed(e);
                        }
                    })
                })?
        };
        Ok(Pusher {
            stop,
            thread: Some(thread),
            failures,
            url: target.url.clone(),
        })
    }

    /// Pushes a last time (the command's final figures) and stops, within [`LAST_PUSH`], or
    /// [`AFTER_SIGNAL`] after a signal that asks to leave; a line on stderr if pushes failed.
    pub fn finish(mut self) {
        let caught_before = signals::caught_count();
        self.stop.notify_one();
        let began = Instant::now();
        let mut deadline = began + LAST_PUSH + Duration::from_millis(100);
        let mut cut = false;
        if let Some(thread) = self.thread.take() {
            loop {
                if thread.is_finished() {
                    let _ = thread.join();
                    break;
                }
                let caught = signals::caught_count();
                if !cut && (caught >= 2 || caught > caught_before) {
                    cut = true;
                    deadline = deadline.min(Instant::now() + AFTER_SIGNAL);
                }
                if Instant::now() >= deadline {
                    // Left to end with the process: nothing waits for it.
                    let mut f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
                    f.count += 1;
                    f.last = Some(if cut {
                        "cut short by a signal".to_string()
                    } else {
                        "no response in time".to_string()
                    });
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(last) = &f.last {
            eprintln!(
                "tsumo: --prometheus-rw {}: {} of the pushes failed (the last: {last})",
                self.url, f.count
            );
        }
    }
}

/// The request line and headers of a push, up to its `Content-Length`.
fn request_head(target: &Target) -> String {
    let host = match target.explicit_port {
        Some(port) if target.host.contains(':') => format!("[{}]:{port}", target.host),
        Some(port) => format!("{}:{port}", target.host),
        None => target.host.clone(),
    };
    format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: tsumo/{}\r\n\
         Content-Type: application/x-protobuf\r\nContent-Encoding: snappy\r\n\
         X-Prometheus-Remote-Write-Version: 0.1.0\r\nConnection: close\r\n",
        target.path,
        env!("CARGO_PKG_VERSION")
    )
}

/// Why a push failed: said once at the end, the last one.
#[derive(Debug, thiserror::Error)]
enum PushError {
    #[error("{0}")]
    Compress(snap::Error),
    #[error("{0}")]
    Send(oneshot::OneshotError),
    /// The receiver's answer other than 2xx, with what it said.
    #[error("status {status}: {said}")]
    Status { status: u16, said: String },
}

async fn push(
    live: &Live,
    head: &str,
    endpoint: &Endpoint,
    timeout: Duration,
) -> Result<(), PushError> {
    let text = super::metrics::render(&live.lock());
    let now_ms = (crate::sys::wallclock::unix_now_ns() / 1_000_000) as i64;
    let request = WriteRequest {
        timeseries: series(&text, now_ms),
    };
    if request.timeseries.is_empty() {
        return Ok(());
    }
    let body = snap::raw::Encoder::new()
        .compress_vec(&prost::Message::encode_to_vec(&request))
        .map_err(PushError::Compress)?;
    let mut bytes = format!("{head}Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend_from_slice(&body);
    let response = oneshot::send(endpoint, &bytes, timeout)
        .await
        .map_err(PushError::Send)?;
    if (200..300).contains(&response.status) {
        Ok(())
    } else {
        let said = String::from_utf8_lossy(&response.body);
        Err(PushError::Status {
            status: response.status,
            said: said.trim().to_string(),
        })
    }
}

/// The samples of an OpenMetrics text, one series each, stamped `now_ms`.
fn series(text: &str, now_ms: i64) -> Vec<TimeSeries> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter_map(|line| {
            let (mut labels, value) = sample(line)?;
            labels.push(Label {
                name: "job".to_string(),
                value: "tsumo".to_string(),
            });
            // Remote write wants the labels sorted by name.
            labels.sort_by(|a, b| a.name.cmp(&b.name));
            Some(TimeSeries {
                labels,
                samples: vec![Sample {
                    value,
                    timestamp: now_ms,
                }],
            })
        })
        .collect()
}

/// One sample line, `name{k="v",…} value`: its labels (`__name__` among them) and value.
fn sample(line: &str) -> Option<(Vec<Label>, f64)> {
    let (series, value) = line.rsplit_once(' ')?;
    let value = match value {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        v => v.parse().ok()?,
    };
    let (name, rest) = match series.split_once('{') {
        Some((name, rest)) => (name, rest.strip_suffix('}')?),
        None => (series, ""),
    };
    let mut labels = vec![Label {
        name: "__name__".to_string(),
        value: name.to_string(),
    }];
    let mut chars = rest.chars().peekable();
    loop {
        let key: String = chars.by_ref().take_while(|&c| c != '=').collect();
        if key.is_empty() {
            break;
        }
        if chars.next() != Some('"') {
            return None;
        }
        let mut value = String::new();
        loop {
            match chars.next()? {
                '\\' => match chars.next()? {
                    'n' => value.push('\n'),
                    c => value.push(c),
                },
                '"' => break,
                c => value.push(c),
            }
        }
        labels.push(Label {
            name: key.trim_start_matches(',').to_string(),
            value,
        });
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
    Some((labels, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metrics_text_reads_back_as_series_with_sorted_labels() {
        let text = "# TYPE tsumo_requests counter\n\
                    tsumo_requests_total{run_id=\"r\",label=\"a \\\"b\\\", c\"} 10\n\
                    tsumo_latency_seconds_bucket{le=\"+Inf\",run_id=\"r\",label=\"a\"} 4\n\
                    tsumo_target_rate{run_id=\"r\",label=\"a\"} 300.0\n# EOF\n";
        let series = series(text, 7);
        assert_eq!(series.len(), 3);
        let names = |s: &TimeSeries| -> Vec<(String, String)> {
            s.labels
                .iter()
                .map(|l| (l.name.clone(), l.value.clone()))
                .collect()
        };
        assert_eq!(
            names(&series[0]),
            [
                ("__name__", "tsumo_requests_total"),
                ("job", "tsumo"),
                ("label", "a \"b\", c"),
                ("run_id", "r"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        assert_eq!(
            series[0].samples,
            [Sample {
                value: 10.0,
                timestamp: 7
            }]
        );
        assert_eq!(names(&series[1])[3], ("le".to_string(), "+Inf".to_string()));
        assert_eq!(series[2].samples[0].value, 300.0);
    }
}
