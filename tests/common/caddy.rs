//! Caddy (Debian's `caddy` 2.6, installed by `scripts/test`) as a real HTTP/3 server: HTTP/1.1,
//! HTTP/2 and HTTP/3 on one port of 127.0.0.1 (TCP and UDP), with a certificate of our own for
//! `localhost` and 127.0.0.1 (tsumo verifies it with `--cacert`).
//!
//! What makes Caddy 2.6 answer a QUIC client on 127.0.0.1 (found in issue 34): a client sends
//! no SNI to an IP literal; Caddy's certificate library then looks for a certificate by the
//! connection's local address, which quic-go 0.29 reports as the listening socket's (`::` for
//! Caddy's default wildcard listener), finds none and aborts the handshake with TLS alert 80.
//! `bind 127.0.0.1` (the address is then 127.0.0.1, which the certificate names) or a
//! `default_sni` that names a loaded certificate each fix it; the fixture has both. (The
//! "stall" seen with `default_sni` was oha 1.16's own: after its last response it waits for
//! the 30 s idle timeout, since quic-go does not close on a client's GOAWAY.) The request's
//! host must be one of the site's addresses, else Caddy answers 200 with an empty body.
//!
//! `respond` answers `/` with a fixed body; `/static/` serves files from the fixture's folder.
//! Caddy runs in the foreground, its admin endpoint off, its storage in the fixture's folder,
//! and is stopped when the fixture is dropped.

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::certs::{self, CertFiles};
use super::TempDir;

/// The body Caddy answers `/` with.
pub const HELLO: &str = "hello from caddy over h3";

pub struct Caddy {
    child: Child,
    port: u16,
    cert: CertFiles,
    dir: TempDir,
}

/// A port free for both TCP and UDP on 127.0.0.1.
fn free_tcp_and_udp_port() -> u16 {
    for _ in 0..50 {
        let port = super::free_port();
        if UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no port free for both TCP and UDP on 127.0.0.1");
}

impl Caddy {
    pub fn start() -> Caddy {
        Self::start_with("")
    }

    /// Caddy with `extra` lines in its site block (a `header` or a second `handle`, say).
    pub fn start_with(extra: &str) -> Caddy {
        let dir = TempDir::new("tsumo-caddy");
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join("www")).expect("create caddy's www");
        std::fs::write(root.join("www/index.html"), super::nginx::index_body())
            .expect("write index.html");
        let ca = certs::self_signed(&root, "ca", "tsumo test CA", None);
        let cert = certs::signed_by(
            &ca,
            &root,
            "server",
            "localhost",
            Some("DNS:localhost,IP:127.0.0.1"),
        );
        let mut last = String::new();
        for _attempt in 0..5 {
            let port = free_tcp_and_udp_port();
            std::fs::write(root.join("Caddyfile"), config(&root, port, &cert, extra))
                .expect("write the Caddyfile");
            let log = root.join("caddy.log");
            let mut child = Command::new(caddy_binary())
                .args(["run", "--adapter", "caddyfile", "--config"])
                .arg(root.join("Caddyfile"))
                .env("HOME", &root)
                .env("XDG_DATA_HOME", root.join("data"))
                .env("XDG_CONFIG_HOME", root.join("config"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).expect("create caddy.log"))
                .spawn()
                .expect("start caddy (scripts/test installs it)");
            match wait_ready(&mut child, port) {
                Ok(()) => {
                    return Caddy {
                        child,
                        port,
                        cert: ca,
                        dir,
                    }
                }
                Err(why) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    last = format!(
                        "{why}\n{}",
                        std::fs::read_to_string(&log).unwrap_or_default()
                    );
                }
            }
        }
        panic!("caddy did not start:\n{last}");
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `https://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// The CA that signed Caddy's certificate, for `--cacert`.
    pub fn cacert(&self) -> &Path {
        &self.cert.cert
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Stops Caddy now (a server that dies during a run).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn caddy_binary() -> PathBuf {
    for dir in ["/usr/bin", "/usr/local/bin"] {
        let path = Path::new(dir).join("caddy");
        if path.exists() {
            return path;
        }
    }
    PathBuf::from("caddy")
}

fn config(root: &Path, port: u16, cert: &CertFiles, extra: &str) -> String {
    let root = root.display();
    format!(
        r#"# Written by tests/common/caddy.rs.
{{
	admin off
	auto_https disable_redirects
	skip_install_trust
	storage file_system {root}/data
	default_sni localhost
	servers {{
		protocols h1 h2 h3
	}}
}}

https://localhost:{port}, https://127.0.0.1:{port} {{
	bind 127.0.0.1
	tls {cert} {key}
	{extra}
	handle_path /static/* {{
		root * {root}/www
		file_server
	}}
	handle {{
		respond "{HELLO}"
	}}
}}
"#,
        cert = cert.cert.display(),
        key = cert.key.display(),
    )
}

/// Waits until Caddy answers over TCP on its port (its UDP listener starts with it).
fn wait_ready(child: &mut Child, port: u16) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("caddy exited: {status}"));
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            // The UDP listener is up once the port is taken for UDP too.
            if UdpSocket::bind(("127.0.0.1", port)).is_err() {
                return Ok(());
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err("caddy did not listen within 10s".to_string())
}

impl Drop for Caddy {
    fn drop(&mut self) {
        super::terminate(&mut self.child);
    }
}
