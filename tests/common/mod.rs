//! Shared pieces of the integration tests: the `tsumo` binary under a hard time limit, a
//! throw-away directory, and the servers the tests aim it at.
//!
//! Every test file that says `mod common;` compiles all of this but uses only part of it, hence
//! the `dead_code` allowance. Servers: [`nginx`] (the real thing, when installed),
//! [`majiang`] (the real mahjong server, installed from `scripts/package-lock.json`) and
//! [`faulty`] (in-process servers that misbehave on purpose); [`certs`] makes certificates with
//! `openssl` as users do.

#![allow(dead_code)]

pub mod browser;
pub mod caddy;
pub mod certs;
pub mod duckdb;
pub mod fake_majiang;
pub mod faulty;
pub mod growing;
pub mod hog;
pub mod majiang;
pub mod netns;
pub mod nginx;
pub mod prometheus;
pub mod responder;
pub mod schema;
pub mod serial;
pub mod socketio;
pub mod wsecho;
pub mod wsfaulty;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The path of the `tsumo` binary built by cargo for this test run, for a test that hands it
/// to another program (`sh -c`, `taskset`, chromium's page) or checks the saved command line.
pub const TSUMO: &str = env!("CARGO_BIN_EXE_tsumo");

/// The `tsumo` binary built by cargo for this test run. Not told of a CI step summary the
/// tests themselves may run under (each run would append its summary there).
pub fn tsumo() -> Command {
    let mut command = Command::new(TSUMO);
    command.env_remove("GITHUB_STEP_SUMMARY");
    command
}

/// A whole pipe read on a thread, so a chatty process never blocks on a full pipe.
pub fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// A pipe's lines, each sent as it is read on a thread of its own, till the pipe ends or the
/// receiver is dropped: for a test that acts on a line as it comes.
pub fn lines(pipe: impl Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    lines
}

/// What a finished `tsumo` run left behind.
#[derive(Debug)]
pub struct Run {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// Wall time from spawn to exit.
    pub wall: Duration,
}

impl Run {
    /// Parses stdout as the `--json -` document.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }

    /// Panics with both streams unless the exit code is 0.
    pub fn assert_success(&self) -> &Self {
        assert!(
            self.status.success(),
            "tsumo failed ({}):\nstdout:\n{}\nstderr:\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }
}

/// A child process that is killed (SIGKILL) and reaped when dropped, unless it was reaped
/// already: a test that fails (panics) while tsumo runs leaves no tsumo running.
pub struct KillOnDrop(pub std::process::Child);

impl std::ops::Deref for KillOnDrop {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for KillOnDrop {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // `Ok(Some(_))`: reaped already (std keeps the status), its pid perhaps reused.
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// tsumo started with `args`, its stdout and stderr piped, killed if the test fails first.
pub fn spawn_piped(args: &[&str]) -> KillOnDrop {
    KillOnDrop(
        tsumo()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn tsumo"),
    )
}

/// A tsumo process a test sends signals to, its output drained as it runs (a full pipe would
/// block it); killed if the test fails before [`Signalled::finish`].
pub struct Signalled {
    child: KillOnDrop,
    /// Spawned, or when the last signal was sent.
    since: Instant,
    started: Instant,
    out: std::thread::JoinHandle<String>,
    err: std::thread::JoinHandle<String>,
}

impl Signalled {
    pub fn spawn(args: &[&str]) -> Signalled {
        let mut child = spawn_piped(args);
        let out = drain(child.stdout.take().expect("stdout piped"));
        let err = drain(child.stderr.take().expect("stderr piped"));
        Signalled {
            child,
            since: Instant::now(),
            started: Instant::now(),
            out,
            err,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it has exited (without reaping what [`Signalled::finish`] reads).
    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Sends `signal`; with `again`, a second one that much later.
    pub fn kill(&mut self, signal: libc::c_int, again: Option<Duration>) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) on our own child, which has not been reaped yet.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "signal {signal}");
        if let Some(gap) = again {
            std::thread::sleep(gap);
            // SAFETY: as above.
            assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "signal {signal}");
        }
        self.since = Instant::now();
    }

    /// Waits for the exit, failing (and killing it) if it runs `limit` past the last signal
    /// sent (or past the spawn, if none was).
    pub fn finish(mut self, limit: Duration) -> Run {
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for tsumo") {
                break status;
            }
            if self.since.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "tsumo still running {limit:?} after its last signal; killed.\nstdout:\n{}\n\
                     stderr:\n{}",
                    self.out.join().unwrap_or_default(),
                    self.err.join().unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        Run {
            status,
            stdout: self.out.join().unwrap_or_default(),
            stderr: self.err.join().unwrap_or_default(),
            wall: self.started.elapsed(),
        }
    }
}

/// The `--json FILE` a run wrote.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no --json file {} ({e})", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("--json is not JSON ({e}): {text}"))
}

/// Polls `ready` until it holds, failing with `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ready() {
        assert!(Instant::now() < deadline, "{what} (waited {limit:?})");
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Runs `tsumo ARGS`, killing it and failing the test if it is still running after `limit`.
/// Every test passes `-d` as well; the limit only catches a hung process.
pub fn run_tsumo(args: &[&str], limit: Duration) -> Run {
    let mut command = tsumo();
    command.args(args);
    run_command(command, limit)
}

/// Runs `command` (tsumo, perhaps wrapped: `ip netns exec NS tsumo …`) as [`run_tsumo`] does.
pub fn run_command(mut command: Command, limit: Duration) -> Run {
    let args: Vec<String> = std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let started = Instant::now();
    let mut child = KillOnDrop(
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn tsumo"),
    );
    // Drain both pipes on threads so a chatty child cannot block on a full pipe.
    let out_reader = drain(child.stdout.take().expect("stdout piped"));
    let err_reader = drain(child.stderr.take().expect("stderr piped"));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for tsumo") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            let stdout = out_reader.join().unwrap_or_default();
            let stderr = err_reader.join().unwrap_or_default();
            panic!(
                "tsumo {args:?} still running after {limit:?}; killed.\nstdout:\n{stdout}\nstderr:\n{stderr}"
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let wall = started.elapsed();
    Run {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        wall,
    }
}

/// Runs each job on a thread of its own, named after it, and waits for all of them; then fails,
/// naming every job that failed (each one's panic message is printed under its name). For work
/// that waits on a server's pace rather than on the CPU — majiang-server spaces a game's steps
/// by 400 ms or more, so a full game takes minutes and almost no CPU — side by side they take
/// the time of the longest.
pub fn all_at_once(jobs: &[(&str, &(dyn Fn() + Sync))]) {
    let failed: Vec<&str> = std::thread::scope(|scope| {
        let running: Vec<_> = jobs
            .iter()
            .map(|&(name, job)| {
                let thread = std::thread::Builder::new()
                    .name(name.to_string())
                    .spawn_scoped(scope, job)
                    .expect("spawn a job thread");
                (name, thread)
            })
            .collect();
        running
            .into_iter()
            .filter_map(|(name, thread)| thread.join().is_err().then_some(name))
            .collect()
    });
    assert!(failed.is_empty(), "failed: {}", failed.join("; "));
}

/// `attempt`, tried again (three tries in all) while `again` says why its result cannot vouch
/// for what a test checks: on a busy machine the generator or the server can truthfully be the
/// limit a test did not set out to measure. The last try's result is returned either way.
pub fn up_to_three_tries<T>(
    mut attempt: impl FnMut() -> T,
    again: impl Fn(&T) -> Option<String>,
) -> T {
    let mut tries = 1;
    loop {
        let result = attempt();
        match again(&result) {
            Some(why) if tries < 3 => eprintln!("try {tries}: {why}; again"),
            _ => return result,
        }
        tries += 1;
    }
}

/// Reads a number at a dotted path (`"counters.errors.read"`) of a JSON document.
pub fn json_f64(doc: &serde_json::Value, path: &str) -> f64 {
    let mut v = doc;
    for key in path.split('.') {
        v = v
            .get(key)
            .unwrap_or_else(|| panic!("JSON has no `{path}` (missing `{key}`):\n{doc:#}"));
    }
    v.as_f64()
        .unwrap_or_else(|| panic!("JSON `{path}` is not a number: {v}"))
}

/// [`json_f64`] for counters.
pub fn json_u64(doc: &serde_json::Value, path: &str) -> u64 {
    json_f64(doc, path) as u64
}

/// Errors of every kind in a `--json` document (`counters.errors.*`).
pub fn json_errors_total(doc: &serde_json::Value) -> u64 {
    ["connect", "read", "write", "timeout", "status_4xx_5xx"]
        .iter()
        .map(|kind| json_u64(doc, &format!("counters.errors.{kind}")))
        .sum()
}

/// A directory under the system temp dir, removed with its contents on drop.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new(prefix: &str) -> TempDir {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "{prefix}-{}-{}-{nanos}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A port on 127.0.0.1 that was free a moment ago (bind to port 0, read it, let it go).
/// Another process may take it before we use it; callers that can, retry.
/// `n` distinct free ports: every listener is held until all are picked.
pub fn free_ports(n: usize) -> Vec<u16> {
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0"))
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().expect("local addr").port())
        .collect()
}

/// Stops a server started by a fixture: SIGTERM, up to 5 s for it to exit, then SIGKILL.
pub fn terminate(child: &mut std::process::Child) {
    // SAFETY: kill(2) on the child's own pid.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("bind 127.0.0.1:0")
}

/// The IPv4 addresses of this machine's interfaces other than loopback (none on a machine with
/// only `lo`), to check that a server bound to 127.0.0.1 is not reachable on them.
pub fn non_loopback_ipv4() -> Vec<std::net::Ipv4Addr> {
    let mut found = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list`, which is walked read-only and freed once.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return found;
        }
        let mut entry = list;
        while !entry.is_null() {
            let addr = (*entry).ifa_addr;
            if !addr.is_null() && i32::from((*addr).sa_family) == libc::AF_INET {
                let v4 = &*(addr as *const libc::sockaddr_in);
                let ip = std::net::Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr));
                if !ip.is_loopback() && !ip.is_unspecified() {
                    found.push(ip);
                }
            }
            entry = (*entry).ifa_next;
        }
        libc::freeifaddrs(list);
    }
    found
}

/// `tsumo merge - -o MERGED` with `stream` on its stdin, as `kubectl logs` of a run's pods gives
/// the shards' documents: the finished process's output.
pub fn merge_stream(stream: &str, merged: &Path) -> std::process::Output {
    let mut child = tsumo()
        .args(["merge", "-", "-o"])
        .arg(merged)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tsumo merge");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stream.as_bytes())
        .expect("write stream");
    child.wait_with_output().expect("tsumo merge")
}
