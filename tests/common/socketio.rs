//! The Node.js socket.io server (`scripts/socketio-echo.js`, on the pinned `socket.io`
//! package) for a test of `tsumo ws --socketio`: started on a free port, stopped when dropped.

use std::process::Child;

/// `node scripts/socketio-echo.js PORT ARGS…`, stopped when dropped.
pub struct SocketIoEcho {
    child: Child,
    pub port: u16,
}

impl Drop for SocketIoEcho {
    fn drop(&mut self) {
        super::terminate(&mut self.child);
    }
}

impl SocketIoEcho {
    /// Started with `args` (`--stall-after N`, `--disconnect-after N`, `--ping-interval MS`),
    /// once it listens.
    pub fn start(args: &[&str]) -> SocketIoEcho {
        let (child, port) = super::wsecho::node_server("socketio-echo.js", args);
        SocketIoEcho { child, port }
    }

    /// The URL as a user types it: socket.io's default path is tsumo's too.
    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/", self.port)
    }
}
