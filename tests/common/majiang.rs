//! A real majiang-server (npm `@kobalab/majiang-server`, pinned by `scripts/package-lock.json`)
//! on 127.0.0.1, started in a fresh temp directory for one test and stopped when the fixture is
//! dropped.
//!
//! Why a real server: the mahjong mode is only right if the server people run accepts its logins,
//! its socket.io frames and its game replies; a stand-in written here would only agree with us.
//! The server binds every interface and has no host option, so it runs under the
//! `scripts/loopback.js` preload, which forces `listen()` onto 127.0.0.1. Sessions are files in
//! the temp dir (`--store`), so a test can count who is still logged in. `scripts/lib.sh`
//! (`start_majiang`) starts it the same way for `scripts/demo`; keep the two in step.
//!
//! The package is installed by `scripts/test` (`npm ci`); when it is missing, the first fixture
//! runs `npm ci` itself, so a bare `cargo test` works too. The raw HTTP helpers at the bottom
//! ([`login`], [`logout`], [`websocket_upgrade`]) use a plain `TcpStream`, so they check the
//! server (and a proxy in front of it) without trusting tsumo's own client.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{free_port, TempDir};

/// How long the server gets to print its start line (Node loads express, socket.io, the AI).
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// The line the server prints once it listens (followed by `http://127.0.0.1:PORT/server/`).
const START_LINE: &str = "Server start on ";

/// `scripts/` in this checkout.
pub fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts")
}

/// The server's entry point inside `scripts/node_modules`.
pub fn server_js() -> PathBuf {
    scripts_dir().join("node_modules/@kobalab/majiang-server/bin/server.js")
}

/// Runs `npm ci` in `scripts/` unless the server is already installed. Once per test process,
/// and under a file lock, so parallel tests (and parallel test binaries) install it only once.
pub fn ensure_installed() {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        if server_js().exists() {
            return;
        }
        let lock_path = std::env::temp_dir().join("tsumo-majiang-npm-ci.lock");
        let lock = File::create(&lock_path).expect("create the npm ci lock file");
        // Held until `lock` is dropped at the end of this closure.
        let locked = unsafe {
            use std::os::fd::AsRawFd as _;
            libc::flock(lock.as_raw_fd(), libc::LOCK_EX)
        };
        assert_eq!(locked, 0, "flock {}", lock_path.display());
        if server_js().exists() {
            return; // another process installed it while we waited
        }
        eprintln!("majiang fixture: installing majiang-server (npm ci in scripts/)");
        let output = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(scripts_dir())
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run npm ({e}); install Node.js and npm"));
        assert!(
            output.status.success() && server_js().exists(),
            "npm ci in scripts/ failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    });
}

/// Configures a [`Majiang`] before it starts.
#[derive(Debug, Clone, Default)]
pub struct MajiangBuilder {
    status: bool,
}

impl MajiangBuilder {
    /// Turns on `GET /server/status` (`--status`), the server's HTML lobby page.
    pub fn status(mut self) -> Self {
        self.status = true;
        self
    }

    /// Starts the server on a free port and waits for its start line. Panics, with the server's
    /// output, if it cannot.
    pub fn start(self) -> Majiang {
        ensure_installed();
        let dir = TempDir::new("tsumo-majiang");
        std::fs::create_dir_all(dir.path().join("sessions")).expect("create the session store");
        let mut last_failure = String::new();
        // A port picked by binding :0 can be taken by a parallel test before Node binds it:
        // then the server exits with EADDRINUSE (status 255) and we try another port.
        for _attempt in 0..5 {
            let port = free_port();
            match self.launch(dir.path(), port) {
                Ok((child, readers)) => {
                    return Majiang {
                        child,
                        port,
                        readers,
                        dir,
                    }
                }
                Err(Launch::PortTaken(log)) => last_failure = log,
                Err(Launch::Failed(log)) => panic!("majiang-server did not start:\n{log}"),
            }
        }
        panic!("majiang-server did not start (ports kept being taken):\n{last_failure}");
    }

    fn launch(&self, dir: &Path, port: u16) -> Result<(Child, Vec<JoinHandle<()>>), Launch> {
        let log_path = dir.join("majiang.log");
        let log = Arc::new(Mutex::new(
            File::create(&log_path).expect("create majiang.log"),
        ));
        let mut command = Command::new("node");
        command
            .arg("-r")
            .arg(scripts_dir().join("loopback.js"))
            .arg(server_js())
            .arg("--port")
            .arg(port.to_string())
            .arg("--store")
            .arg(dir.join("sessions"));
        if self.status {
            command.arg("--status");
        }
        let mut child = command
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so Drop can stop it and anything it started.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run node ({e}); install Node.js"));

        // Both pipes are drained for the server's whole life: it prints a status line on every
        // lobby change, and a full pipe would block its event loop.
        let (lines_tx, lines_rx) = mpsc::channel::<String>();
        let stdout = child.stdout.take().expect("stdout piped");
        let stderr = child.stderr.take().expect("stderr piped");
        let readers = vec![
            drain(stdout, Arc::clone(&log), Some(lines_tx)),
            drain(stderr, Arc::clone(&log), None),
        ];
        let failure = |child: &mut Child, readers: Vec<JoinHandle<()>>, what: &str| {
            let _ = child.kill();
            let _ = child.wait();
            for reader in readers {
                let _ = reader.join();
            }
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            format!("{what}\n--- majiang.log\n{text}")
        };

        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match lines_rx.recv_timeout(Duration::from_millis(50)) {
                Ok(line) if line.starts_with(START_LINE) => return Ok((child, readers)),
                Ok(_) => continue,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    // stdout closed: the server is exiting; wait for its status below.
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            if let Ok(Some(status)) = child.try_wait() {
                let log = failure(&mut child, readers, &format!("node exited with {status}"));
                return Err(if log.contains("EADDRINUSE") {
                    Launch::PortTaken(log)
                } else {
                    Launch::Failed(log)
                });
            }
            if Instant::now() > deadline {
                let _ = unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
                return Err(Launch::Failed(failure(
                    &mut child,
                    readers,
                    &format!("no {START_LINE:?} line after {START_TIMEOUT:?}"),
                )));
            }
        }
    }
}

enum Launch {
    PortTaken(String),
    Failed(String),
}

/// Copies `pipe` line by line into the shared log (and to `lines`, while someone listens).
fn drain(
    pipe: impl Read + Send + 'static,
    log: Arc<Mutex<File>>,
    mut lines: Option<mpsc::Sender<String>>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if let Ok(mut file) = log.lock() {
                let _ = file.write_all(&buf);
            }
            if let Some(tx) = &lines {
                let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                if tx.send(line).is_err() {
                    lines = None; // the start wait is over
                }
            }
        }
    })
}

/// A running majiang-server; stopped (with its process group) and its directory removed on drop.
#[derive(Debug)]
pub struct Majiang {
    child: Child,
    port: u16,
    readers: Vec<JoinHandle<()>>,
    // Declared last: removed after the process is gone.
    dir: TempDir,
}

impl Majiang {
    /// The server with sessions in a file store and no status page.
    pub fn start() -> Majiang {
        Majiang::builder().start()
    }

    pub fn builder() -> MajiangBuilder {
        MajiangBuilder::default()
    }

    /// `http://127.0.0.1:PORT/server`, the base URL the server's own bot takes.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/server", self.port)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's process id (to stop and resume it: SIGSTOP, SIGCONT).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The names of the players whose sessions are stored now (`passport.user.name`).
    pub fn session_names(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.store_dir()) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|ext| ext == "json"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|text| {
                let doc: serde_json::Value = serde_json::from_str(&text).ok()?;
                Some(doc["passport"]["user"]["name"].as_str()?.to_string())
            })
            .collect();
        names.sort();
        names
    }

    /// The temp directory: `majiang.log` and the `sessions/` store.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The session store: one `<session id>.json` per logged-in player.
    pub fn store_dir(&self) -> PathBuf {
        self.dir().join("sessions")
    }

    /// How many sessions are stored now, i.e. logins not yet logged out.
    pub fn session_files(&self) -> usize {
        std::fs::read_dir(self.store_dir())
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|ext| ext == "json"))
                    .count()
            })
            .unwrap_or(0)
    }

    /// [`Majiang::session_files`] once it equals `count`, or whatever it is after `limit`: a
    /// logout answers before the store has deleted the file.
    pub fn wait_session_files(&self, count: usize, limit: Duration) -> usize {
        let deadline = Instant::now() + limit;
        loop {
            let now = self.session_files();
            if now == count || Instant::now() > deadline {
                return now;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Everything the server printed so far, stdout and stderr interleaved: the start line, a
    /// `** 接続: …` status line per lobby change, stack traces of game exceptions.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir().join("majiang.log")).unwrap_or_default()
    }

    /// Panics with the log unless the server is still running.
    pub fn assert_running(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("majiang-server exited with {status}:\n{}", self.log());
        }
    }
}

impl Drop for Majiang {
    fn drop(&mut self) {
        let group = -(self.child.id() as libc::pid_t);
        unsafe {
            libc::kill(group, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // Whatever is left of the group (a stuck server, a child it started) goes now.
        unsafe {
            libc::kill(group, libc::SIGKILL);
        }
        let _ = self.child.wait();
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
    }
}

// --- Raw HTTP over a plain TcpStream --------------------------------------------------------

/// Read and write timeout of the raw helpers: a hung server fails the test instead of hanging it.
const IO_TIMEOUT: Duration = Duration::from_secs(5);

/// A response head as received: status code and headers (names lowercased).
#[derive(Debug, Clone)]
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The head exactly as received, for failure messages.
    pub head: String,
}

impl RawResponse {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of the `MAJIANG` cookie the response sets (`Some("")` when it clears it).
    pub fn majiang_cookie(&self) -> Option<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == "set-cookie")
            .find_map(|(_, v)| v.strip_prefix("MAJIANG="))
            .map(|v| v.split(';').next().unwrap_or(""))
    }
}

/// Connects to 127.0.0.1:`port` with the helpers' timeouts.
pub fn connect(port: u16) -> TcpStream {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT)
        .unwrap_or_else(|e| panic!("connect to {addr}: {e}"));
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    stream
}

/// Reads a response head (up to the blank line), leaving anything after it in `stream`.
/// Byte by byte, so nothing that follows (a WebSocket frame) is swallowed.
pub fn read_head(stream: &mut TcpStream) -> RawResponse {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            Ok(_) => panic!(
                "connection closed inside the response head: {:?}",
                String::from_utf8_lossy(&head)
            ),
            Err(e) => panic!(
                "reading the response head: {e} (so far {:?})",
                String::from_utf8_lossy(&head)
            ),
        }
        assert!(head.len() < 64 * 1024, "response head over 64 KiB");
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    RawResponse {
        status,
        headers,
        head,
    }
}

/// `POST path` with a form body (and the `MAJIANG` cookie, if given), `Connection: close`;
/// returns once the whole response is in.
pub fn post_form(port: u16, path: &str, body: &str, cookie: Option<&str>) -> RawResponse {
    let mut stream = connect(port);
    let cookie = cookie
        .map(|c| format!("Cookie: MAJIANG={c}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{cookie}\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .expect("write the request");
    let response = read_head(&mut stream);
    // Read to the end, not just the head: express-session holds back the body's last byte until
    // the session is saved, and a logout sent before that save lands is undone by it.
    let mut body = Vec::new();
    stream
        .read_to_end(&mut body)
        .unwrap_or_else(|e| panic!("reading the body after\n{}: {e}", response.head));
    response
}

/// Logs `name` in (`POST /server/auth/`, any password) and returns the `MAJIANG` cookie value
/// (`s%3A<session id>.<signature>`). Panics unless the server answers 302 with a cookie.
pub fn login(port: u16, name: &str) -> String {
    let response = post_form(
        port,
        "/server/auth/",
        &format!("name={name}&passwd=*"),
        None,
    );
    assert_eq!(response.status, 302, "login answer:\n{}", response.head);
    response
        .majiang_cookie()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| panic!("login set no MAJIANG cookie:\n{}", response.head))
        .to_string()
}

/// `POST /server/logout` with the cookie; the answer is returned for the caller to check.
pub fn logout(port: u16, cookie: &str) -> RawResponse {
    post_form(port, "/server/logout", "", Some(cookie))
}

/// RFC 6455's sample key and the `Sec-WebSocket-Accept` a server must answer it with.
pub const WEBSOCKET_KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";
pub const WEBSOCKET_ACCEPT: &str = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

/// Sends the socket.io WebSocket upgrade (`GET /server/socket.io/?EIO=4&transport=websocket`)
/// with the cookie and returns the answer's head and the stream, positioned at the first frame.
pub fn websocket_upgrade(port: u16, cookie: &str) -> (RawResponse, TcpStream) {
    let mut stream = connect(port);
    let request = format!(
        "GET /server/socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n\
         Host: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: {WEBSOCKET_KEY}\r\nSec-WebSocket-Version: 13\r\n\
         Cookie: MAJIANG={cookie}\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .expect("write the upgrade request");
    let head = read_head(&mut stream);
    (head, stream)
}

/// One WebSocket frame from the server: opcode, whether it was masked, and its payload.
#[derive(Debug, Clone)]
pub struct Frame {
    pub fin: bool,
    pub opcode: u8,
    pub masked: bool,
    pub payload: Vec<u8>,
}

/// Reads one WebSocket frame (unmasking it if the sender masked it).
pub fn read_frame(stream: &mut TcpStream) -> Frame {
    let mut head = [0u8; 2];
    stream.read_exact(&mut head).expect("read a frame header");
    let masked = head[1] & 0x80 != 0;
    let len = match head[1] & 0x7f {
        126 => {
            let mut b = [0u8; 2];
            stream.read_exact(&mut b).expect("read a 16-bit length");
            u16::from_be_bytes(b) as usize
        }
        127 => {
            let mut b = [0u8; 8];
            stream.read_exact(&mut b).expect("read a 64-bit length");
            u64::from_be_bytes(b) as usize
        }
        n => n as usize,
    };
    assert!(len <= 1 << 20, "frame of {len} bytes");
    let mut mask = [0u8; 4];
    if masked {
        stream.read_exact(&mut mask).expect("read the mask");
    }
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).expect("read the payload");
    if masked {
        for (i, b) in payload.iter_mut().enumerate() {
            *b ^= mask[i % 4];
        }
    }
    Frame {
        fin: head[0] & 0x80 != 0,
        opcode: head[0] & 0x0f,
        masked,
        payload,
    }
}
