//! A CPU hog on CPU 0, and tsumo pinned beside it: the load a shared machine puts on tsumo's
//! core, for tests of what a report blames for it.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A busy loop pinned to CPU 0 (`taskset`), killed when dropped.
pub struct Hog(Child);

impl Hog {
    pub fn start() -> Hog {
        Hog::niced("0")
    }

    /// A hog ahead of tsumo on its core (nice -10, as root; as another user `nice` says it
    /// cannot and runs it at 0): the CPU's scheduler lets a sleeper such as tsumo in at once
    /// beside an equal hog, so on a quiet machine an equal hog may make it barely late.
    pub fn greedy() -> Hog {
        Hog::niced("-10")
    }

    fn niced(nice: &str) -> Hog {
        let child = Command::new("taskset")
            .args([
                "-c",
                "0",
                "nice",
                "-n",
                nice,
                "sh",
                "-c",
                "while :; do :; done",
            ])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
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
    command.args(["-c", "0", super::TSUMO]).args(args);
    for (k, v) in env {
        command.env(k, v);
    }
    super::run_command(command, limit)
}
