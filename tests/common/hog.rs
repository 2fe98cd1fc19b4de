//! A CPU hog on CPU 0, and tsumo pinned beside it: the load a shared machine puts on tsumo's
//! core, for tests of what a report blames for it.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A busy loop pinned to CPU 0 (`taskset`), killed when dropped.
pub struct Hog(Child);

impl Hog {
    pub fn start() -> Hog {
        let child = Command::new("taskset")
            .args(["-c", "0", "sh", "-c", "while :; do :; done"])
            .stdin(Stdio::null())
            .spawn()
            .expect("taskset (util-linux) starts the hog");
        Hog(child)
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// tsumo on CPU 0 (`taskset`), with `env` set, under the time limit `limit`.
pub fn pinned_tsumo(args: &[&str], env: &[(&str, &str)], limit: Duration) -> super::Run {
    let mut command = Command::new("taskset");
    command
        .args(["-c", "0", env!("CARGO_BIN_EXE_tsumo")])
        .args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    super::run_command(command, limit)
}
