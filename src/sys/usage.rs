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
    /// Marks the start of a run, so that [`OwnUsage::since`] counts that run alone (an A/B
    /// comparison runs several in one process): the kernel's peak-RSS mark is reset to the
    /// memory in use now (`/proc/self/clear_refs`, Linux 4.0+). Where that is refused, the peak
    /// stays the process's so far.
    pub fn start_of_run() -> OwnUsage {
        // "5" resets the mm's high-water mark, VmHWM (proc(5)).
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        OwnUsage::now()
    }

    /// What the run that [`OwnUsage::start_of_run`] marked used: CPU since then, and its peak.
    pub fn since(self, start: OwnUsage) -> OwnUsage {
        OwnUsage {
            // Whole µs, as getrusage counts: no float noise such as 0.017438999999999996.
            cpu_seconds: ((self.cpu_seconds - start.cpu_seconds).max(0.0) * 1e6).round() / 1e6,
            peak_rss_bytes: self.peak_rss_bytes,
        }
    }

    /// So far, for the whole process.
    pub fn now() -> OwnUsage {
        match rusage(libc::RUSAGE_SELF) {
            Some(usage) => OwnUsage {
                cpu_seconds: cpu_seconds(&usage),
                // ru_maxrss (KiB on Linux) also keeps the peak of threads that have exited, which
                // no reset clears; VmHWM is the one start_of_run resets.
                peak_rss_bytes: peak_since_reset().unwrap_or(usage.ru_maxrss.max(0) as u64 * 1024),
            },
            None => OwnUsage::default(),
        }
    }
}

/// One worker thread's time: on a CPU, and runnable but waiting for one (from
/// `/proc/thread-self/schedstat`). Their sum over a run's duration says whether the thread ever
/// had nothing to do: a thread runnable all the time was the bottleneck, even on a machine that
/// gave it less than a core.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadUsage {
    pub cpu_seconds: f64,
    pub runnable_seconds: f64,
}

impl ThreadUsage {
    /// The calling thread's, so far.
    pub fn now() -> ThreadUsage {
        let cpu_seconds = rusage(libc::RUSAGE_THREAD).map_or(0.0, |u| cpu_seconds(&u));
        let runnable_seconds = std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|s| {
                let mut fields = s.split_whitespace().map(str::parse::<u64>);
                let on_cpu = fields.next()?.ok()?;
                let waiting = fields.next()?.ok()?;
                Some((on_cpu + waiting) as f64 / 1e9)
            })
            // Without schedstat, the CPU time is the best lower bound.
            .unwrap_or(cpu_seconds);
        ThreadUsage {
            cpu_seconds,
            runnable_seconds,
        }
    }

    /// What was used between `earlier` and `self`.
    pub fn since(self, earlier: ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            cpu_seconds: (self.cpu_seconds - earlier.cpu_seconds).max(0.0),
            runnable_seconds: (self.runnable_seconds - earlier.runnable_seconds).max(0.0),
        }
    }
}

/// The process's peak resident memory since the last reset (`VmHWM` of `/proc/self/status`).
fn peak_since_reset() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_usage_is_its_cpu_since_the_start_and_its_peak() {
        let start = OwnUsage {
            cpu_seconds: 1.25,
            peak_rss_bytes: 10 << 20,
        };
        let end = OwnUsage {
            cpu_seconds: 1.267439,
            peak_rss_bytes: 12 << 20,
        };
        assert_eq!(
            end.since(start),
            OwnUsage {
                cpu_seconds: 0.017439,
                peak_rss_bytes: 12 << 20,
            }
        );
        // A mark taken after a reset reads the memory in use, never zero.
        assert!(OwnUsage::start_of_run().peak_rss_bytes > 0);
    }
}
