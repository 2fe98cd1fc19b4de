//! The Node.js WebSocket echo server (`scripts/ws-echo.js`, on the pinned `ws` package) for a
//! test of `tsumo ws`: started on a free port, stopped when dropped.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// `node scripts/ws-echo.js PORT ARGS…`, stopped when dropped.
pub struct WsEcho {
    child: Child,
    pub port: u16,
}

impl Drop for WsEcho {
    fn drop(&mut self) {
        super::terminate(&mut self.child);
    }
}

impl WsEcho {
    /// Started with `args` (`--stall-after N`, `--close-after N`), once it listens.
    pub fn start(args: &[&str]) -> WsEcho {
        let (child, port) = node_server("ws-echo.js", args);
        WsEcho { child, port }
    }

    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/", self.port)
    }

    /// Kills the server (SIGKILL), as a crash would, and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// R × d messages sent (one per connection's share at most off), each echo matched, nothing
/// unanswered or pushed, every connection opened: a run's exact counts against an echo server.
pub fn assert_exact(doc: &serde_json::Value, rate: u64, seconds: u64, connections: u64) {
    use super::json_u64;
    let sent = json_u64(doc, "messages.sent");
    let due = rate * seconds;
    assert!(
        sent.abs_diff(due) <= connections,
        "sent {sent}, due {due}: {doc}"
    );
    assert_eq!(json_u64(doc, "messages.due"), due, "{doc}");
    assert_eq!(json_u64(doc, "messages.answered"), sent, "{doc}");
    assert_eq!(json_u64(doc, "messages.unanswered"), 0, "{doc}");
    assert_eq!(json_u64(doc, "messages.timed_out"), 0, "{doc}");
    assert_eq!(json_u64(doc, "messages.pushed"), 0, "{doc}");
    assert_eq!(json_u64(doc, "connections.opened"), connections, "{doc}");
}

/// `node scripts/SCRIPT PORT ARGS…` (one of the repo's Node servers, on the pinned packages) on
/// a free port, once it listens: the process and its port.
pub fn node_server(script: &str, args: &[&str]) -> (Child, u16) {
    super::majiang::ensure_installed();
    let port = super::free_port();
    let child = Command::new("node")
        .arg(super::majiang::scripts_dir().join(script))
        .arg(port.to_string())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn node");
    super::wait_for(
        &format!("node {script} listens"),
        Duration::from_secs(15),
        || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
    );
    (child, port)
}
