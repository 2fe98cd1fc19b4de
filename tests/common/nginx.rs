//! A real nginx (the Debian binary) serving a 2 KiB static page over HTTP and HTTPS, started in a
//! fresh temp directory for one test and stopped when the fixture is dropped.
//!
//! Why a real server: tsumo's numbers are only worth something against the server people actually
//! measure, and nginx's framing, keep-alive and TLS are the reference, not our own test code.
//! Everything nginx writes (config, pid, logs, temp files, certificate) lives in the temp
//! directory, so tests run in parallel and need no setup beyond the package (`scripts/test`
//! installs it). `scripts/lib.sh` writes the same configuration for `scripts/demo`; keep the two
//! in step.
//!
//! The access log records what the server received (`AccessLogLine`), so a test can check the
//! method, path, request size and body length tsumo actually sent. More server blocks (a reverse
//! proxy, say) are added with [`NginxBuilder::server`] and [`NginxBuilder::http_snippet`]; a
//! WebSocket reverse proxy in front of majiang-server with [`NginxBuilder::ws_proxy`].

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{free_port, free_ports, TempDir};

/// Size of `/index.html`, in bytes.
pub const INDEX_LEN: usize = 2048;

/// How long nginx gets to open its ports.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// The nginx binary: `$TSUMO_NGINX`, else the Debian path, else `nginx` on `PATH`.
pub fn nginx_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("TSUMO_NGINX") {
        return PathBuf::from(p);
    }
    let debian = Path::new("/usr/sbin/nginx");
    if debian.exists() {
        return debian.to_path_buf();
    }
    PathBuf::from("nginx")
}

/// The body of `/index.html`: 2048 bytes of printable lines, the same every time.
pub fn index_body() -> Vec<u8> {
    (0..INDEX_LEN)
        .map(|i| {
            if i % 64 == 63 {
                b'\n'
            } else {
                b'a' + (i % 26) as u8
            }
        })
        .collect()
}

/// An extra `server { }` block: nginx listens on a port of its own, reported by [`Nginx::port`].
#[derive(Debug, Clone)]
struct ExtraServer {
    name: String,
    body: String,
    /// `listen … ssl`.
    tls: bool,
    /// `listen … http2`: h2 (ALPN) with `tls`, else prior-knowledge h2c only.
    http2: bool,
}

/// Configures an [`Nginx`] before it starts.
#[derive(Debug, Clone, Default)]
pub struct NginxBuilder {
    servers: Vec<ExtraServer>,
    http_snippets: Vec<String>,
    /// A [`NginxBuilder::ws_proxy`] was added: the `$connection_upgrade` map goes in `http { }`.
    upgrade_map: bool,
    /// Directives for the main context (`worker_rlimit_nofile 1024;`, ...).
    main_snippets: Vec<String>,
    /// `worker_connections` in `events { }`; 4096 when not set.
    worker_connections: Option<u32>,
    /// Addresses every server block listens on too, besides 127.0.0.1 (a test bridge's).
    also_listen: Vec<String>,
}

impl NginxBuilder {
    /// Adds a `server { listen 127.0.0.1:PORT; BODY }` block on a fresh port, found later with
    /// `nginx.port(name)`. `body` holds the directives inside the block, without `listen`.
    pub fn server(mut self, name: &str, body: &str) -> Self {
        self.servers.push(ExtraServer {
            name: name.to_string(),
            body: body.to_string(),
            tls: false,
            http2: false,
        });
        self
    }

    /// Adds an HTTP/2 server on a port of its own (`nginx.port(name)`): `listen … ssl http2`
    /// (h2 by ALPN, HTTP/1.1 still offered) with `tls`, else `listen … http2` (prior-knowledge
    /// h2c only). `body` as for [`NginxBuilder::server`], where `@ROOT@` stands for the
    /// fixture's directory (`root @ROOT@/www;` serves its pages); the certificate is the
    /// fixture's own.
    pub fn h2_server(mut self, name: &str, body: &str, tls: bool) -> Self {
        self.servers.push(ExtraServer {
            name: name.to_string(),
            body: body.to_string(),
            tls,
            http2: true,
        });
        self
    }

    /// Adds an HTTPS server on a port of its own (`nginx.port(name)`) that presents `cert` and
    /// answers every request with 200 "ok".
    pub fn tls_server(mut self, name: &str, cert: &super::certs::CertFiles) -> Self {
        self.servers.push(ExtraServer {
            name: name.to_string(),
            body: format!(
                "ssl_certificate {};\n        ssl_certificate_key {};\n        \
                 location / {{ return 200 \"ok\\n\"; }}",
                cert.cert.display(),
                cert.key.display()
            ),
            tls: true,
            http2: false,
        });
        self
    }

    /// Adds raw directives to the main context, outside every block (`worker_rlimit_nofile
    /// 1024;`, say).
    pub fn main_snippet(mut self, text: &str) -> Self {
        self.main_snippets.push(text.to_string());
        self
    }

    /// Every server block also listens on `addr` (same ports): a test bridge's address that
    /// network namespaces reach. The fixture still checks its ports on 127.0.0.1.
    pub fn also_listen(mut self, addr: &str) -> Self {
        self.also_listen.push(addr.to_string());
        self
    }

    /// Sets `worker_connections` (default 4096).
    pub fn worker_connections(mut self, n: u32) -> Self {
        self.worker_connections = Some(n);
        self
    }

    /// Adds raw directives to the `http { }` block (an `upstream`, a `map`, ...).
    pub fn http_snippet(mut self, text: &str) -> Self {
        self.http_snippets.push(text.to_string());
        self
    }

    /// Adds a reverse proxy on a port of its own (`nginx.port(name)`) that passes `/server/` to
    /// 127.0.0.1:`upstream_port`: majiang-server's HTTP login and logout and its socket.io
    /// WebSocket upgrade. Connections stay open for an hour without traffic (a game is quiet
    /// between socket.io pings, but a table waiting on a slow player can be quieter).
    pub fn ws_proxy(self, name: &str, upstream_port: u16) -> Self {
        self.ws_proxy_on(name, upstream_port, false)
    }

    /// As [`NginxBuilder::ws_proxy`], over TLS (`listen … ssl`, the fixture's certificate:
    /// [`Nginx::cert_path`] for `--cacert`).
    pub fn wss_proxy(self, name: &str, upstream_port: u16) -> Self {
        self.ws_proxy_on(name, upstream_port, true)
    }

    fn ws_proxy_on(mut self, name: &str, upstream_port: u16, tls: bool) -> Self {
        self.upgrade_map = true;
        let body = format!(
            r#"location /server/ {{
            proxy_pass http://127.0.0.1:{upstream_port};
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
        }}"#
        );
        self.servers.push(ExtraServer {
            name: name.to_string(),
            body,
            tls,
            http2: false,
        });
        self
    }

    /// Writes the files, starts nginx and waits until every port accepts connections.
    /// Panics (with nginx's own error output) if it cannot.
    pub fn start(self) -> Nginx {
        let dir = TempDir::new("tsumo-nginx");
        let root = dir.path().to_path_buf();
        for sub in ["www", "tmp"] {
            std::fs::create_dir_all(root.join(sub)).expect("create nginx dirs");
        }
        std::fs::write(root.join("www/index.html"), index_body()).expect("write index.html");
        write_self_signed_cert(&root);

        let mut last_failure = String::new();
        // A port picked by binding :0 can be taken by a parallel test before nginx binds it:
        // then nginx exits with EADDRINUSE and we try again with new ports.
        for _attempt in 0..5 {
            // Distinct ports: two picks in a row may get the same one back from the kernel.
            let mut picked = free_ports(2 + self.servers.len()).into_iter();
            let mut next = || picked.next().unwrap_or_else(free_port);
            let ports = Ports {
                http: next(),
                https: next(),
                extra: self
                    .servers
                    .iter()
                    .map(|s| (s.name.clone(), next()))
                    .collect(),
            };
            std::fs::write(root.join("nginx.conf"), self.config(&root, &ports))
                .expect("write nginx.conf");
            let _ = std::fs::remove_file(root.join("error.log"));
            match launch(&root, &ports) {
                Ok(child) => return Nginx { child, ports, dir },
                Err(Launch::PortTaken(log)) => last_failure = log,
                Err(Launch::Failed(log)) => panic!("nginx did not start:\n{log}"),
            }
        }
        panic!("nginx did not start (ports kept being taken):\n{last_failure}");
    }

    fn config(&self, root: &Path, ports: &Ports) -> String {
        let dir = root.display();
        // Workers must read the temp dir (mode 0700, owned by us): as root, keep them root.
        let user = if unsafe { libc::geteuid() } == 0 {
            "user root root;\n"
        } else {
            ""
        };
        let listen = |port: u16, flags: &str| -> String {
            std::iter::once("127.0.0.1")
                .chain(self.also_listen.iter().map(String::as_str))
                .map(|addr| format!("listen {addr}:{port}{flags};"))
                .collect::<Vec<_>>()
                .join("\n        ")
        };
        let mut extra_servers = String::new();
        for s in &self.servers {
            let flags = match (s.tls, s.http2) {
                (true, true) => " ssl http2",
                (true, false) => " ssl",
                (false, true) => " http2",
                (false, false) => "",
            };
            let _ = write!(
                extra_servers,
                "    server {{\n        {}\n        {}\n    }}\n",
                listen(ports.extra[&s.name], flags),
                s.body
                    .replace("@ROOT@", &dir.to_string())
                    .replace("@HTTP_PORT@", &ports.http.to_string())
            );
        }
        let mut snippets = self.http_snippets.join("\n    ");
        if self.upgrade_map {
            // WebSocket proxying: pass the client's Upgrade on, and close plain requests upstream.
            snippets.push_str(
                "\n    map $http_upgrade $connection_upgrade {\n        default upgrade;\n        '' close;\n    }",
            );
        }
        let main_snippets = self.main_snippets.join("\n");
        let worker_connections = self.worker_connections.unwrap_or(4096);
        format!(
            r#"# Written by tests/common/nginx.rs (scripts/lib.sh writes the same for scripts/demo).
daemon off;
master_process on;
worker_processes 1;
{user}pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
{main_snippets}
events {{
    worker_connections {worker_connections};
}}

http {{
    default_type application/octet-stream;
    # One line per request: what the server received, for tests to assert on. "$request" is the
    # request line as sent ($request_method turns to GET after the error_page below).
    log_format tsumo '"$request" $status $request_length $content_length $body_bytes_sent $connection $connection_requests $server_port $ssl_protocol $remote_addr $msec';
    access_log {dir}/access.log tsumo;
    client_body_temp_path {dir}/tmp/client_body;
    proxy_temp_path {dir}/tmp/proxy;
    fastcgi_temp_path {dir}/tmp/fastcgi;
    uwsgi_temp_path {dir}/tmp/uwsgi;
    scgi_temp_path {dir}/tmp/scgi;
    # A run must never see nginx close a keep-alive connection on its own.
    keepalive_requests 1000000;
    keepalive_timeout 75s;
    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    ssl_session_cache shared:TLS:1m;
    {snippets}

    server {{
        {listen_http}
        {listen_https}
        root {dir}/www;
        # Static files answer POST with 405; serve the file instead, so a POST benchmark
        # (wrk2 with a 2 KiB body) measures nginx reading the body and answering 200.
        error_page 405 =200 $uri;
    }}
{extra_servers}}}
"#,
            listen_http = listen(ports.http, ""),
            listen_https = listen(ports.https, " ssl"),
        )
    }
}

#[derive(Debug)]
struct Ports {
    http: u16,
    https: u16,
    extra: std::collections::HashMap<String, u16>,
}

impl Ports {
    fn all(&self) -> Vec<u16> {
        let mut all = vec![self.http, self.https];
        all.extend(self.extra.values().copied());
        all
    }
}

enum Launch {
    PortTaken(String),
    Failed(String),
}

fn launch(root: &Path, ports: &Ports) -> Result<Child, Launch> {
    let stderr = std::fs::File::create(root.join("stderr.log")).expect("create stderr.log");
    // An open port alone does not prove it is this nginx's: when a parallel test picked the same
    // port, its nginx answers there while ours exits with EADDRINUSE. nginx writes its pid file
    // only after binding every listener, so the file naming our child proves the ports are ours.
    // Removed before the spawn: a busy machine can let nginx write it before this thread runs
    // again, and removing it then leaves a running nginx that never looks started.
    let pid_file = root.join("nginx.pid");
    let _ = std::fs::remove_file(&pid_file);
    let mut child = Command::new(nginx_binary())
        .arg("-p")
        .arg(root)
        .arg("-c")
        .arg(root.join("nginx.conf"))
        .arg("-e")
        .arg(root.join("error.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} ({e}); install nginx (scripts/test does)",
                nginx_binary().display()
            )
        });
    let deadline = Instant::now() + START_TIMEOUT;
    let mut waiting = ports.all();
    let child_pid = child.id().to_string();
    let ours = || std::fs::read_to_string(&pid_file).is_ok_and(|pid| pid.trim() == child_pid);
    loop {
        waiting.retain(|&port| {
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err()
        });
        if waiting.is_empty() && ours() {
            return Ok(child);
        }
        if let Ok(Some(status)) = child.try_wait() {
            let log = logs(root, &format!("nginx exited with {status}"));
            return Err(if log.contains("Address already in use") {
                Launch::PortTaken(log)
            } else {
                Launch::Failed(log)
            });
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Launch::Failed(logs(
                root,
                &format!("ports {waiting:?} not open after {START_TIMEOUT:?}"),
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn logs(root: &Path, what: &str) -> String {
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap_or_default();
    format!(
        "{what}\n--- stderr\n{}--- error.log\n{}--- nginx.conf\n{}",
        read("stderr.log"),
        read("error.log"),
        read("nginx.conf")
    )
}

/// Writes `cert.pem` (self-signed, for `localhost` and 127.0.0.1) and `key.pem` into `dir`.
fn write_self_signed_cert(dir: &Path) {
    let certified =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .expect("generate certificate");
    std::fs::write(dir.join("cert.pem"), certified.cert.pem()).expect("write cert.pem");
    std::fs::write(dir.join("key.pem"), certified.signing_key.serialize_pem())
        .expect("write key.pem");
}

/// A running nginx; stopped (and its directory removed) on drop.
#[derive(Debug)]
pub struct Nginx {
    child: Child,
    ports: Ports,
    // Declared last: removed after the process is gone.
    dir: TempDir,
}

impl Nginx {
    /// The static server, plain HTTP and HTTPS, and nothing else.
    pub fn start() -> Nginx {
        Nginx::builder().start()
    }

    pub fn builder() -> NginxBuilder {
        NginxBuilder::default()
    }

    /// The PID of the master process (the fixture runs nginx in the foreground).
    pub fn master_pid(&self) -> u32 {
        self.child.id()
    }

    pub fn http_port(&self) -> u16 {
        self.ports.http
    }

    pub fn https_port(&self) -> u16 {
        self.ports.https
    }

    /// The port of a server block added with [`NginxBuilder::server`].
    pub fn port(&self, name: &str) -> u16 {
        *self
            .ports
            .extra
            .get(name)
            .unwrap_or_else(|| panic!("no nginx server named {name:?}"))
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn http_url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.ports.http)
    }

    /// `https://127.0.0.1:PORT{path}` (the certificate names 127.0.0.1 and `localhost`).
    pub fn https_url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.ports.https)
    }

    /// The self-signed certificate (PEM), for `--cacert`.
    pub fn cert_path(&self) -> PathBuf {
        self.dir.path().join("cert.pem")
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.dir().join("error.log")).unwrap_or_default()
    }

    /// The access log once it has at least `lines` lines (or after 2 s, whatever it has):
    /// nginx logs a request after answering it, so a client can be done before the line is.
    pub fn access_log_wait(&self, lines: usize) -> Vec<AccessLogLine> {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let log = self.access_log();
            if log.len() >= lines || Instant::now() > deadline {
                return log;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Every request nginx has logged so far (nginx writes each line as the request ends).
    pub fn access_log(&self) -> Vec<AccessLogLine> {
        std::fs::read_to_string(self.dir().join("access.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| AccessLogLine::parse(l).unwrap_or_else(|| panic!("bad access log line {l:?}")))
            .collect()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM is nginx's fast shutdown: the master stops its workers, then exits.
        super::terminate(&mut self.child);
    }
}

/// One line of the `tsumo` access log format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessLogLine {
    /// From the request line as received (not changed by nginx's internal redirects).
    pub method: String,
    pub uri: String,
    /// `HTTP/1.1`, `HTTP/2.0`.
    pub protocol: String,
    pub status: u16,
    /// Request line + headers (+ body, when nginx reads rather than discards it), as received.
    pub request_length: u64,
    /// The request's `Content-Length` header, if it had one.
    pub content_length: Option<u64>,
    /// Response body bytes sent.
    pub body_bytes_sent: u64,
    /// nginx's serial number of the connection: one value per keep-alive connection.
    pub connection: u64,
    /// Which request this was on its connection (1 for the first).
    pub connection_requests: u64,
    pub server_port: u16,
    /// `None` for plain HTTP, else e.g. `TLSv1.3`.
    pub ssl_protocol: Option<String>,
    /// The client's address (the source address of the connection).
    pub remote_addr: String,
    /// When nginx logged the request (as it finished answering it: `$msec`), Unix ms.
    pub logged_ms: u64,
}

impl AccessLogLine {
    fn parse(line: &str) -> Option<AccessLogLine> {
        // nginx escapes `"` inside variables, so the quoted request line ends at the next `" `.
        let (request, rest) = line.strip_prefix('"')?.split_once("\" ")?;
        let mut request = request.split(' ');
        let f: Vec<&str> = rest.split(' ').collect();
        if f.len() != 10 {
            return None;
        }
        let dash = |s: &str| (s != "-").then(|| s.to_string());
        Some(AccessLogLine {
            method: request.next()?.to_string(),
            uri: request.next().unwrap_or("").to_string(),
            protocol: request.next().unwrap_or("").to_string(),
            status: f[0].parse().ok()?,
            request_length: f[1].parse().ok()?,
            content_length: dash(f[2]).map(|s| s.parse()).transpose().ok()?,
            body_bytes_sent: f[3].parse().ok()?,
            connection: f[4].parse().ok()?,
            connection_requests: f[5].parse().ok()?,
            server_port: f[6].parse().ok()?,
            ssl_protocol: dash(f[7]),
            remote_addr: f[8].to_string(),
            logged_ms: {
                let (s, ms) = f[9].split_once('.')?;
                s.parse::<u64>().ok()? * 1000 + ms.parse::<u64>().ok()?
            },
        })
    }
}
