//! The process's own limits: tsumo raises its open-file soft limit to the hard limit at start and
//! refuses, before any traffic, a run whose connections cannot fit. Also the wall clock
//! (`wallclock`: Unix time, RFC 3339, the NTP state) for runs started on one instant, and the
//! one `clock_gettime` every clock of tsumo reads through (`wallclock::clock_ns`), output files
//! checked and written whole (`output`), and how a thread that only serves people watching
//! gives way to the workers ([`yield_to_workers`]).

pub mod doctor;
pub mod machine;
pub mod output;
pub mod procstat;
pub mod rng;
pub mod udp;
pub mod usage;
pub mod wallclock;

use crate::error::Error;

/// File descriptors a run needs besides its sockets: stdio, each worker's epoll, timerfd and
/// wakeup fds, and some headroom for scripts and output files.
pub fn fds_needed(connections: usize, threads: usize) -> u64 {
    connections as u64 + threads as u64 * 4 + 32
}

/// Makes the calling thread give way to the workers (the dashboard's, the remote-write
/// pusher's): nice 10, and `SCHED_BATCH`, so its wake-ups never preempt a worker about to send.
/// Its work is for people watching; the workers' sends are the measurement. Best effort.
pub fn yield_to_workers() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain syscalls on the calling thread (0 and its own thread id), valid arguments.
    unsafe {
        let _ = libc::sched_setscheduler(0, libc::SCHED_BATCH, &param);
        let _ = libc::setpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t, 10);
    }
}

/// The OS's description of an I/O error, without Rust's `(os error N)` suffix, for one-line
/// errors.
pub fn io_reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(end) => text[..end].to_string(),
        None => text,
    }
}

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the (soft, hard) limits now in force.
pub fn raise_open_files() -> (u64, u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain syscalls with a valid rlimit struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return (0, 0);
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim.rlim_cur = lim.rlim_max;
            }
        }
    }
    (lim.rlim_cur, lim.rlim_max)
}

/// Fails, naming `ulimit -n`, when `connections` cannot fit under the open-file limit.
pub fn check_open_files(connections: usize, threads: usize) -> Result<(), Error> {
    let (soft, hard) = raise_open_files();
    let needed = fds_needed(connections, threads);
    if soft != 0 && needed > soft {
        return Err(Error::Limits(format!(
            "{connections} connections need about {needed} open files, but the limit is {soft} \
             (hard limit {hard}): raise it with `ulimit -n {needed}` (as root if above the hard \
             limit) or use fewer connections (-c)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_that_yields_to_the_workers_is_batch_and_nice_10() {
        let (policy, nice) = std::thread::spawn(|| {
            super::yield_to_workers();
            // SAFETY: plain syscalls on the calling thread.
            unsafe {
                (
                    libc::sched_getscheduler(0),
                    libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t),
                )
            }
        })
        .join()
        .unwrap();
        assert_eq!(policy, libc::SCHED_BATCH);
        assert_eq!(nice, 10);
        // The caller's own thread is left as it was.
        // SAFETY: a plain syscall on the calling thread.
        assert_ne!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_BATCH);
    }
}
