//! `--dashboard ADDR`: the run as it goes, in a browser and for Prometheus. One listener per
//! process, bound before any traffic, on its own thread (a current-thread tokio runtime and
//! hyper's HTTP/1.1 server), off the workers' threads:
//!
//! - `/`: while the command runs, the live page: the answer so far, then the report's charts
//!   growing interval by interval (`view`); it fetches `/live` once a second, saying which
//!   render it has (`?since=`: held until a newer one, never sent it again), swaps a new one in,
//!   and fetches nothing from outside the machine. A render is made at most twice a second.
//!   Once the command made its final page (the same as `--html`'s), `/` is that page, and the
//!   live page loads it.
//! - `/metrics`: OpenMetrics text (`metrics`), for a Prometheus that scrapes tsumo.
//! - `--prometheus-rw URL` (with or without the listener): the same series pushed with
//!   Prometheus remote write once a second and at the end (`remote_write`).
//!
//! Both are made from [`crate::stats::live`]: the intervals the workers closed, the same ones
//! the report's timeline is made of. When the command ends, tsumo exits as before, or after
//! `--dashboard-linger`. The listener's and the pusher's threads give way to the workers
//! (`sys::yield_to_workers`).

mod metrics;
mod remote_write;
mod server;
mod view;

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::plan::{DashboardAt, RunOptions};
use crate::stats::live::{self, Arm, Feed, Live, LiveRun, RunLabels};

/// The dashboard of a command: its listener bound, its remote-write pusher started.
pub struct Dashboard {
    live: Arc<Live>,
    addr: Option<SocketAddr>,
    linger: Duration,
    pusher: Option<remote_write::Pusher>,
}

impl Dashboard {
    /// Binds `--dashboard`'s address and starts serving, and starts `--prometheus-rw`'s
    /// pushes, when asked for (`None` when neither is). An address in use or not this
    /// machine's, and a receiver that does not answer, are bad input, before any traffic.
    pub fn open(options: &RunOptions) -> Result<Option<Dashboard>, Error> {
        if options.dashboard.is_none() && options.remote_write.is_none() {
            return Ok(None);
        }
        let live = live::enable();
        let mut dashboard = Dashboard {
            live: Arc::clone(&live),
            addr: None,
            linger: Duration::ZERO,
            pusher: None,
        };
        if let Some(at) = options.dashboard {
            dashboard.addr = Some(Dashboard::bind(at, &live)?);
            dashboard.linger = at.linger;
        }
        if let Some(target) = &options.remote_write {
            let refused = |e: &dyn std::fmt::Display| {
                Error::Usage(format!("--prometheus-rw {}: {e}", target.url))
            };
            let endpoint =
                crate::net::preflight::preflight_blocking(crate::net::preflight::Probe {
                    target,
                    insecure: options.insecure,
                    cacert: options.cacert.as_deref(),
                    timeout: Duration::from_secs(5),
                    alpn: crate::net::tls::Alpn::Http1,
                    bind: &[],
                    quic: None,
                })
                .map_err(|e| refused(&e))?;
            dashboard.pusher =
                Some(remote_write::Pusher::start(live, target, endpoint).map_err(|e| refused(&e))?);
        }
        Ok(Some(dashboard))
    }

    fn bind(at: DashboardAt, live: &Arc<Live>) -> Result<SocketAddr, Error> {
        let refused = |reason: &str| Error::Usage(format!("--dashboard {}: {reason}", at.addr));
        let listener = TcpListener::bind(at.addr).map_err(|e| match e.kind() {
            ErrorKind::AddrInUse => refused("address in use (another tsumo, or another server)"),
            ErrorKind::AddrNotAvailable => refused("not an address of this machine"),
            ErrorKind::PermissionDenied => refused("permission denied (a port below 1024?)"),
            _ => refused(&e.to_string()),
        })?;
        let addr = listener.local_addr().map_err(|e| refused(&e.to_string()))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| refused(&e.to_string()))?;
        server::spawn(listener, Arc::clone(live)).map_err(|e| refused(&e.to_string()))?;
        let host = match addr {
            SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
            SocketAddr::V4(v4) => v4.ip().to_string(),
        };
        eprintln!(
            "dashboard: http://{host}:{}/ (Prometheus: /metrics)",
            addr.port()
        );
        Ok(addr)
    }

    /// Where it listens, with `--dashboard`.
    pub fn addr(&self) -> Option<SocketAddr> {
        self.addr
    }

    /// The command ended: the page shows its final state; kept up for `--dashboard-linger`,
    /// or until a signal (SIGINT, SIGTERM, SIGHUP) ends the wait.
    pub fn close(mut self) {
        self.live.done();
        if let Some(pusher) = self.pusher.take() {
            pusher.finish();
        }
        if self.linger.is_zero() {
            return;
        }
        let Ok(mark) = crate::engine::signals::watch() else {
            std::thread::sleep(self.linger);
            return;
        };
        let until = std::time::Instant::now() + self.linger;
        while crate::engine::signals::since(mark).is_none() {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
    }
}

/// The labels of a run of these options.
pub fn labels(options: &RunOptions, label: &str) -> RunLabels {
    let shard = options.part.shard;
    RunLabels {
        run_id: options.part.run_id.clone(),
        label: label.to_string(),
        shard: (shard.count > 1).then(|| format!("{}/{}", shard.index + 1, shard.count)),
    }
}

/// Tells the dashboard, if there is one, that a run of these options begins, of the kind its
/// `data` is (an HTTP run's `stats::http::live::Data` with its target rate, a mahjong
/// session's): where to say that it ended.
pub fn begin<K: Arm>(options: &RunOptions, data: K) -> Option<Feed<K>> {
    let data = data.into_data();
    live::get().map(|live| {
        live.begin(LiveRun {
            labels: labels(options, &options.label),
            workers: options.threads,
            length: options.interval.as_nanos().min(u64::MAX as u128) as u64,
            start_unix_ns: None,
            t0: None,
            server: Vec::new(),
            ended: false,
            data,
        })
    })
}
