//! The server sampler (`--server-pid`) against real processes: a shell burning a core, a tree
//! whose busy child is born after sampling starts, and nginx answering requests.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::nginx::Nginx;
use tsumo::sys::procstat::Sampler;

/// A shell command in a process group of its own, killed with its children on drop.
struct Spawned(Child);

impl Spawned {
    fn shell(script: &str) -> Spawned {
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        Spawned(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        // The group is the shell's own (process_group(0)): only what this test started.
        unsafe {
            libc::kill(-(self.0.id() as libc::pid_t), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

#[test]
fn busy_loop_shows_cpu_and_plausible_rss() {
    let busy = Spawned::shell("while :; do :; done");
    let sampler = Sampler::start(&[busy.pid()], Duration::from_millis(250)).expect("start");
    std::thread::sleep(Duration::from_millis(1500));
    let usage = sampler.stop();
    println!("{usage:?}");
    assert_eq!(usage.pids, [busy.pid()]);
    assert!(usage.samples >= 5, "{usage:?}");
    // It used CPU (how much of a shared core it got is the machine's to say).
    assert!(usage.cpu_percent_peak > 0.0, "{usage:?}");
    assert!(usage.cpu_percent_mean > 0.0, "{usage:?}");
    // One core at most: a shell loop is single-threaded (ticks round, so allow some slack).
    assert!(usage.cpu_percent_peak < 160.0, "{usage:?}");
    assert!(usage.rss_bytes_peak > 100 * 1024, "{usage:?}");
    assert!(usage.rss_bytes_peak < 1 << 30, "{usage:?}");
    assert!(usage.rss_bytes_mean <= usage.rss_bytes_peak, "{usage:?}");
}

#[test]
fn children_born_after_start_count_and_exits_are_harmless() {
    // The parent only waits; its busy child appears after the baseline, a short-lived one exits.
    let tree = Spawned::shell("sleep 0.3; sleep 0.1 & (while :; do :; done) & wait");
    let sampler = Sampler::start(&[tree.pid()], Duration::from_millis(200)).expect("start");
    std::thread::sleep(Duration::from_millis(1500));
    let usage = sampler.stop();
    println!("{usage:?}");
    assert!(usage.cpu_percent_peak > 0.0, "{usage:?}");
    assert!(usage.cpu_percent_mean > 0.0, "{usage:?}");
}

#[test]
fn process_exiting_mid_run_stops_counting() {
    let short = Spawned::shell("sleep 0.2");
    let sampler = Sampler::start(&[short.pid()], Duration::from_millis(100)).expect("start");
    std::thread::sleep(Duration::from_millis(600));
    let usage = sampler.stop();
    assert!(usage.samples >= 3, "{usage:?}");
    assert!(usage.cpu_percent_peak < 50.0, "{usage:?}");
}

#[test]
fn missing_pid_is_refused() {
    let err = Sampler::start(&[std::process::id(), 4_000_000_000], Duration::from_secs(1))
        .map(|_| ())
        .expect_err("no such process");
    assert_eq!(err.to_string(), "--server-pid 4000000000: no such process");
}

#[test]
fn nginx_under_load_uses_cpu() {
    let nginx = Nginx::start();
    let port = nginx.http_port();
    let sampler = Sampler::start(&[nginx.master_pid()], Duration::from_millis(250)).expect("start");
    let deadline = Instant::now() + Duration::from_millis(1500);
    let clients: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(move || {
                let mut answered = 0u64;
                while Instant::now() < deadline {
                    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
                        continue;
                    };
                    let request =
                        b"GET /index.html HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
                    let mut response = Vec::new();
                    if s.write_all(request).is_ok() && s.read_to_end(&mut response).is_ok() {
                        answered += u64::from(response.starts_with(b"HTTP/1.1 200"));
                    }
                }
                answered
            })
        })
        .collect();
    let answered: u64 = clients.into_iter().map(|c| c.join().unwrap_or(0)).sum();
    let usage = sampler.stop();
    println!("{answered} responses; {usage:?}");
    assert!(answered > 0, "{answered}");
    assert!(usage.samples >= 5, "{usage:?}");
    assert!(usage.cpu_percent_mean > 0.0, "{usage:?}");
    assert!(usage.cpu_percent_peak > 0.0, "{usage:?}");
    // Master + worker, each at least a megabyte or so resident.
    assert!(usage.rss_bytes_peak > 1 << 20, "{usage:?}");
    assert!(usage.rss_bytes_peak < 1 << 30, "{usage:?}");
}
