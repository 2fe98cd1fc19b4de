//! tsumo's own cost: the process's CPU time and peak memory (every mode reports them, so a
//! saturated generator can be told from a slow server), and each worker thread's CPU time.

use serde::{Deserialize, Serialize};

/// The process's CPU time (user + system) and peak resident memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct OwnUsage {
    #[serde(rename = "cpu_s")]
    pub cpu_seconds: f64,
    pub peak_rss_bytes: u64,
}

impl OwnUsage {
    /// So far, for the whole process.
    pub fn now() -> OwnUsage {
        match rusage(libc::RUSAGE_SELF) {
            Some(usage) => OwnUsage {
                cpu_seconds: cpu_seconds(&usage),
                // ru_maxrss is in KiB on Linux.
                peak_rss_bytes: usage.ru_maxrss.max(0) as u64 * 1024,
            },
            None => OwnUsage::default(),
        }
    }
}

/// One worker thread's CPU time (user + system) when it ended.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadUsage {
    pub cpu_seconds: f64,
}

impl ThreadUsage {
    /// The calling thread's, so far.
    pub fn now() -> ThreadUsage {
        ThreadUsage {
            cpu_seconds: rusage(libc::RUSAGE_THREAD).map_or(0.0, |u| cpu_seconds(&u)),
        }
    }
}

fn rusage(who: libc::c_int) -> Option<libc::rusage> {
    // SAFETY: getrusage fills the struct we pass; all-zero is a valid rusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    (unsafe { libc::getrusage(who, &mut usage) } == 0).then_some(usage)
}

fn cpu_seconds(usage: &libc::rusage) -> f64 {
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}
