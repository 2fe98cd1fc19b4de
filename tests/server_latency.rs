//! The server's latency, stamped by the kernel, against tsumo's own delay (issue 31).
//!
//! The point: on a busy machine a user-space stamp charges tsumo's late wake-ups to the server.
//! A server that answers every request exactly 5 ms after it arrived (it spins on its own core,
//! so its 5 ms are not at the mercy of the timer), and a CPU hog on tsumo's core: the server's
//! latency must still read 5 ms, while the corrected and the user-space latency carry tsumo's
//! delay, and the report says whose it is. The split must add up exactly. Nothing else is timed.

mod common;

use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::caddy::Caddy;
use common::hog::{pinned_tsumo, Hog};
use common::nginx::Nginx;
use common::{json_u64, read_json, run_command, run_tsumo, tsumo, Signalled, TempDir};

const LIMIT: Duration = Duration::from_secs(60);
const SERVICE: Duration = Duration::from_millis(5);
const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// Answers each request `SERVICE` after its last byte arrived (the kernel's receive stamp),
/// spinning on the last CPU, so that neither a timer nor tsumo's hog on CPU 0 moves its answer.
/// A VM's CPU can still be taken from it now and then: it keeps what each answer really took
/// (its write less its request's arrival), the truth tsumo's figure is held against.
struct FiveMsServer {
    _alone: std::sync::MutexGuard<'static, ()>,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Vec<u64>>>,
}

/// One client of the server: bytes of a request so far, and the answers due.
struct Client {
    stream: TcpStream,
    got: Vec<u8>,
    due: std::collections::VecDeque<Instant>,
}

/// One spinning server at a time: two on one CPU would each make the other's 5 ms late.
static ONE_SERVER: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl FiveMsServer {
    fn start(cpu: usize) -> FiveMsServer {
        let alone = ONE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let addr = listener.local_addr().expect("addr");
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            pin_to(cpu);
            let mut clients: Vec<Client> = Vec::new();
            let mut buf = [0u8; 4096];
            let mut taken_us = Vec::new();
            while !stopped.load(Ordering::Relaxed) {
                if let Ok((stream, _)) = listener.accept() {
                    stream.set_nonblocking(true).expect("nonblocking");
                    stream.set_nodelay(true).expect("nodelay");
                    stamp_receives(&stream);
                    clients.push(Client {
                        stream,
                        got: Vec::new(),
                        due: Default::default(),
                    });
                }
                clients.retain_mut(|c| {
                    match recv_stamped(&c.stream, &mut buf) {
                        Ok((0, _)) => return false,
                        Ok((n, arrived)) => {
                            c.got.extend_from_slice(&buf[..n]);
                            while let Some(end) = c.got.windows(4).position(|w| w == b"\r\n\r\n") {
                                c.got.drain(..end + 4);
                                c.due.push_back(arrived);
                            }
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(_) => return false,
                    }
                    while let Some(&arrived) = c.due.front() {
                        if arrived.elapsed() < SERVICE {
                            break;
                        }
                        c.due.pop_front();
                        if c.stream.write_all(RESPONSE).is_err() {
                            return false;
                        }
                        taken_us.push(arrived.elapsed().as_micros() as u64);
                    }
                    true
                });
            }
            taken_us
        });
        FiveMsServer {
            _alone: alone,
            addr,
            stop,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Stops it: what each answer took, µs, sorted.
    fn stop(mut self) -> Vec<u64> {
        self.stop.store(true, Ordering::Relaxed);
        let mut taken = self
            .thread
            .take()
            .map(|t| t.join().expect("the server thread"))
            .unwrap_or_default();
        taken.sort_unstable();
        taken
    }
}

/// The value at quantile `q` of sorted `values`.
fn quantile(values: &[u64], q: f64) -> u64 {
    values[((values.len() as f64 * q).ceil() as usize).clamp(1, values.len()) - 1]
}

/// Asks for software receive timestamps, as tsumo does (SO_TIMESTAMPING = 37).
fn stamp_receives(stream: &TcpStream) {
    use std::os::fd::AsRawFd;
    let flags: libc::c_uint = libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE;
    // SAFETY: a valid socket, and a pointer to a c_uint that outlives the call.
    let set = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            37,
            std::ptr::addr_of!(flags).cast(),
            std::mem::size_of::<libc::c_uint>() as libc::socklen_t,
        )
    };
    assert_eq!(
        set,
        0,
        "SO_TIMESTAMPING: {}",
        std::io::Error::last_os_error()
    );
}

/// A non-blocking read, and when its last byte arrived (the kernel's stamp, on `Instant`'s
/// clock).
fn recv_stamped(stream: &TcpStream, buf: &mut [u8]) -> std::io::Result<(usize, Instant)> {
    use std::os::fd::AsRawFd;
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut control = [0u64; 8];
    // SAFETY: a zeroed msghdr, then pointed at live buffers of the stated lengths.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: as above; the kernel writes within those lengths.
    let n = unsafe { libc::recvmsg(stream.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let now = Instant::now();
    let mut arrived = now;
    // SAFETY: the CMSG macros walk the control buffer the kernel filled.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if !cmsg.is_null() && (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == 37 {
            let ts = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::timespec>());
            let stamp = Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
            let real = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            arrived = now - real.saturating_sub(stamp).min(Duration::from_secs(1));
        }
    }
    Ok((n as usize, arrived))
}

impl Drop for FiveMsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn pin_to(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET stays within it; 0 is this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Every histogram of the split counts each response once, and the corrected latency is the
/// server's plus tsumo's send delay, exactly, summed response by response.
fn assert_split_adds_up(doc: &serde_json::Value) {
    let requests = json_u64(doc, "counters.requests");
    assert!(requests > 0, "{doc:#}");
    for path in [
        "latency.count",
        "server_latency.count",
        "user_latency.count",
        "own_delay.total.count",
        "own_delay.send.count",
        "own_delay.read.count",
    ] {
        assert_eq!(json_u64(doc, path), requests, "{path}");
    }
    let sums = &doc["counters"]["latency_sums"];
    assert_eq!(
        sums["corrected_us"].as_u64(),
        Some(sums["server_us"].as_u64().unwrap() + sums["own_send_us"].as_u64().unwrap()),
        "{sums}"
    );
}

/// What a hogged run must show of the split, or why it does not: `None` when the server's
/// share is its 5 ms (or what its answers really took, where the VM took its CPU) and tsumo's
/// delay sits in the corrected and user-space latency only.
///
/// The bound is behaviour, not a quiet machine: a hog on tsumo's core (and others beside the
/// suite) delays tsumo by milliseconds to seconds, and every request queued behind such a delay
/// is tsumo's (issue 43: before, the server's p50 read 1.2 s against its own 5 ms). The server's
/// share may exceed what its answers took by a loopback's µs and the stamp-to-write time of a
/// send (a preemption in between longer than 200 µs moves the send's stamp to the write's
/// return: web/conn.rs), so 1 ms above the server's own figure.
fn split_misplaced(doc: &serde_json::Value, taken: &[u64]) -> Option<String> {
    let server_p50 = json_u64(doc, "server_latency.p50");
    let server_p99 = json_u64(doc, "server_latency.p99");
    let corrected_p99 = json_u64(doc, "latency.p99");
    let user_p99 = json_u64(doc, "user_latency.p99");
    let (truth_p50, truth_p99) = (quantile(taken, 0.5), quantile(taken, 0.99));
    eprintln!(
        "server p50 {server_p50} p99 {server_p99} (its own: p50 {truth_p50} p99 {truth_p99} max \
         {}); corrected p99 {corrected_p99}; user-space p99 {user_p99}; own {}",
        taken.last().copied().unwrap_or_default(),
        doc["own_delay"]
    );
    // What the 5 ms server fixes: the server's share is its 5 ms and a loopback's µs; where the
    // VM took the server's CPU from it, what its answers really took.
    for (name, us, truth) in [
        ("p50", server_p50, truth_p50),
        ("p99", server_p99, truth_p99),
    ] {
        if !(5_000..=truth.max(5_000) + 1_000).contains(&us) {
            return Some(format!(
                "server's {name} {us}us against the server's own {truth}us"
            ));
        }
    }
    // tsumo's delay is in the corrected and the user-space latency, not in the server's.
    if user_p99 <= server_p99 {
        return Some(format!(
            "user-space p99 {user_p99}us <= server's p99 {server_p99}us"
        ));
    }
    if corrected_p99 < server_p99 {
        return Some(format!(
            "corrected p99 {corrected_p99}us < server's p99 {server_p99}us"
        ));
    }
    None
}

#[test]
fn a_hog_on_tsumos_core_moves_tsumos_delay_not_the_servers_latency() {
    let dir = TempDir::new("server-latency");
    let json = dir.path().join("run.json");
    let (run, doc, taken) = common::up_to_three_tries(
        || {
            let server = FiveMsServer::start(cpus() - 1);
            let hog = (std::env::var_os("NO_HOG").is_none()).then(Hog::start);
            let run = pinned_tsumo(
                &[
                    "-t1",
                    "-c10",
                    "-d4s",
                    "-R200",
                    "--json",
                    json.to_str().unwrap(),
                    &server.url(),
                ],
                &[],
                LIMIT,
            );
            drop(hog);
            let taken = server.stop();
            run.assert_success();
            let doc = read_json(&json);
            (run, doc, taken)
        },
        |(_, doc, taken)| split_misplaced(doc, taken),
    );
    assert_eq!(doc["timestamps"], "kernel", "{doc:#}");
    assert_eq!(doc["counters"].get("unstamped"), None, "{doc:#}");
    assert_split_adds_up(&doc);
    if let Some(why) = split_misplaced(&doc, &taken) {
        panic!("{why}: {doc:#}");
    }
    // The text report names tsumo's own delay, send and read.
    let own_line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("tsumo's own delay: p50 "))
        .unwrap_or_else(|| panic!("no own-delay line:\n{}", run.stdout));
    assert!(
        own_line.contains("(send ") && own_line.contains(", read "),
        "{own_line}"
    );
    assert!(
        run.stdout.contains("kernel receive timestamps"),
        "{}",
        run.stdout
    );
}

/// Without kernel stamps (asked for here; another OS, or a socket that refuses the option),
/// the run says so in the report and the JSON, and no histogram mixes the two: the read delay
/// is 0 for every response, since the receive time is the read.
#[test]
fn user_space_stamps_are_said_and_never_mixed() {
    let server = FiveMsServer::start(cpus() - 1);
    let dir = TempDir::new("user-stamps");
    let (user, kernel) = (dir.path().join("user.json"), dir.path().join("kernel.json"));
    for (path, env) in [(&user, "user"), (&kernel, "kernel")] {
        let run = pinned_tsumo(
            &[
                "-t1",
                "-c4",
                "-d2s",
                "-R100",
                "--json",
                path.to_str().unwrap(),
                "--quiet",
                &server.url(),
            ],
            &[("TSUMO_TIMESTAMPS", env)],
            LIMIT,
        );
        run.assert_success();
    }
    let doc = read_json(&user);
    assert_eq!(doc["timestamps"], "user", "{doc:#}");
    // Asked for, and said so: not "the kernel's were not available".
    assert_eq!(doc["timestamps_asked"], true, "{doc:#}");
    assert_split_adds_up(&doc);
    assert_eq!(json_u64(&doc, "own_delay.read.max"), 0, "{doc:#}");
    assert_eq!(read_json(&kernel)["timestamps"], "kernel");
    assert!(read_json(&kernel).get("timestamps_asked").is_none());
    // Never added into one histogram: a merge of the two is refused.
    let mut merge = tsumo();
    merge
        .arg("merge")
        .arg(&user)
        .arg(&kernel)
        .arg("-o")
        .arg(dir.path().join("m.json"));
    let merged = run_command(merge, LIMIT);
    assert_eq!(merged.status.code(), Some(2), "{}", merged.stderr);
    assert!(
        merged.stderr.contains("user timestamps but") && merged.stderr.contains("not one measure"),
        "{}",
        merged.stderr
    );
    let text = pinned_tsumo(
        &["-t1", "-c4", "-d1s", "-R100", &server.url()],
        &[("TSUMO_TIMESTAMPS", "user")],
        LIMIT,
    );
    text.assert_success();
    assert!(
        text.stdout
            .contains("user-space timestamps (TSUMO_TIMESTAMPS=user asked for them)"),
        "{}",
        text.stdout
    );
}

/// The stamp reaches every path: HTTP/1.1 over TLS (the read under rustls), and HTTP/2 over
/// TLS and in clear (the read that completed a stream's last frame, under hyper), against nginx.
#[test]
fn tls_and_http2_responses_are_stamped_by_the_kernel() {
    let nginx = Nginx::builder()
        .h2_server("h2", "root @ROOT@/www;", true)
        .h2_server("h2c", "root @ROOT@/www;", false)
        .start();
    let h2 = format!("https://127.0.0.1:{}/index.html", nginx.port("h2"));
    let h2c = format!("http://127.0.0.1:{}/index.html", nginx.port("h2c"));
    let https = nginx.https_url("/index.html");
    let cases: [(&str, Vec<&str>); 3] = [
        ("https", vec!["-k", &https]),
        ("h2", vec!["--http2", "-k", &h2]),
        ("h2c", vec!["--http2", &h2c]),
    ];
    for (name, extra) in cases {
        let mut args = vec!["-t1", "-c4", "-d1s", "-R200", "--json", "-"];
        args.extend(extra);
        let mut command = tsumo();
        command.args(&args);
        let run = run_command(command, LIMIT);
        run.assert_success();
        let doc = run.json();
        assert_eq!(doc["timestamps"], "kernel", "{name}: {doc:#}");
        assert_eq!(doc["counters"].get("unstamped"), None, "{name}: {doc:#}");
        assert_split_adds_up(&doc);
    }
}

/// tsumo stopped 150 ms every second (SIGSTOP, then SIGCONT) at 2,000 req/s against nginx, which
/// answers in well under a millisecond: the stalls are tsumo's. The requests due during one go
/// out one behind the other once it runs again, each waiting on its connection for the one
/// before; that wait is tsumo's too (issue 43: before, only the first late send on a connection
/// was, and the server's p99 read 134 ms). The corrected latency shows the stalls; the server's
/// does not, `--slo 'p99<20ms'` (judged on the server's latency) holds, and the report says the
/// machine made the difference. Bounds are behaviour (a stall is 150 ms, nginx's answer is
/// not), not speed.
#[test]
fn tsumo_stopped_150ms_every_second_is_not_the_servers_latency() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    stopped_150ms_every_second("http/1.1", ("kernel", "p99"), &[&url]);
}

/// The same over HTTP/2 (h2c, `-m4`): hyper writes the burst of requests that follows a stall
/// after tsumo handed them over, milliseconds later; a send is the first write at or after its
/// hand-off, so that wait is tsumo's too (before: the server's p99 read 130 ms).
#[test]
fn tsumo_stopped_150ms_every_second_is_not_the_servers_latency_over_http2() {
    let nginx = Nginx::builder()
        .h2_server("h2c", "root @ROOT@/www;", false)
        .start();
    let url = format!("http://127.0.0.1:{}/index.html", nginx.port("h2c"));
    stopped_150ms_every_second("h2c", ("kernel", "p99"), &["--http2", "-m4", &url]);
}

/// The same over HTTP/3 (`-m4`) against Caddy: the requests due in a stall are handed to h3 and
/// quinn in a burst, and quinn's connection driver sends them after; a send is the first
/// datagram of its connection at or after its hand-off when that went over 200 µs later
/// (net::http3::sent; the test after this one holds tsumo between the two, which a SIGSTOP
/// cannot). Judged at the p50, not the p99: quinn reads its own socket, so a receive is tsumo's
/// read (user-space stamps), and a response in flight when tsumo stopped is read after the stall:
/// the stall is the server's for that stamp, and its stream slot's R′ carries it to the requests
/// that queue behind it on that slot. How many depends on how many were in flight at the stop,
/// so on how busy the machine keeps Caddy: beside the other stall tests, the server's p90 read
/// 46.6 ms and its p99 199 ms (uncorrected p99 103 ms), with either send stamp. What this
/// checks is behaviour: the stalls are in the corrected latency and tsumo's send delay, the
/// split adds up, and the server's typical answer is its own.
#[test]
fn tsumo_stopped_150ms_every_second_is_not_the_servers_latency_over_http3() {
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let url = caddy.url("/");
    stopped_150ms_every_second(
        "h3",
        ("user", "p50"),
        &["--http3", "-m4", "--cacert", &cacert, &url],
    );
}

/// A stall of tsumo's between a request's hand-off to h3 and quinn's send of its datagram, which
/// a SIGSTOP cannot place (it stops both): a script's `request()` that takes 5 ms of tsumo's CPU.
/// The connection's task makes the next request right after handing one over, and quinn's
/// connection driver (a task of its own) sends the one handed over only once that is made. A
/// send is the first datagram at or after the hand-off when that went over 200 µs later, so the
/// 5 ms are tsumo's send delay; stamped at the hand-off, they were the server's (Caddy answers
/// in well under a millisecond: before, the server's p50 read 5.4 ms).
#[test]
fn a_request_held_up_between_its_hand_off_and_its_datagram_is_not_the_servers_over_http3() {
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let url = caddy.url("/");
    let dir = TempDir::new("held-up");
    let script = dir.path().join("slow.lua");
    // os.clock is tsumo's CPU time: 5 ms of it take 5 ms or more, however busy the machine.
    std::fs::write(
        &script,
        "request = function()\n\
           local t = os.clock()\n\
           while os.clock() - t < 0.005 do end\n\
           return wrk.format()\n\
         end\n",
    )
    .expect("write slow.lua");
    let json = dir.path().join("run.json");
    let run = run_tsumo(
        &[
            "--http3",
            "-t1",
            "-c1",
            "-m4",
            "-d3s",
            "-R40",
            "-s",
            script.to_str().unwrap(),
            "--cacert",
            &cacert,
            "--json",
            json.to_str().unwrap(),
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let doc = read_json(&json);
    let server_p50 = json_u64(&doc, "server_latency.p50");
    let send_p50 = json_u64(&doc, "own_delay.send.p50");
    let corrected_p50 = json_u64(&doc, "latency.p50");
    eprintln!(
        "h3: server p50 {server_p50}; own send p50 {send_p50}; corrected p50 {corrected_p50}"
    );
    assert_split_adds_up(&doc);
    assert!(json_u64(&doc, "counters.requests") >= 100, "{doc:#}");
    // Each request left 5 ms or more after its hand-off: tsumo's, in the corrected latency.
    assert!(corrected_p50 >= 5_000, "corrected p50 {corrected_p50}us");
    assert!(send_p50 >= 4_500, "own send p50 {send_p50}us: {doc:#}");
    // The server's is Caddy's answer, not the 5 ms before the datagram went.
    assert!(
        server_p50 < 2_500,
        "server's p50 {server_p50}us (the script's 5 ms): {doc:#}"
    );
}

/// tsumo (`target`, its receives stamped as `stamps` says) stopped 150 ms every second at
/// -R2000, the server's latency judged at quantile `judged`: what the stall tests above check.
fn stopped_150ms_every_second(name: &str, (stamps, judged): (&str, &str), target: &[&str]) {
    let objective = format!("{judged}<20ms");
    let dir = TempDir::new("stalls");
    let json = dir.path().join("run.json");
    let mut args = vec![
        "-t1",
        "-c10",
        "-d5s",
        "-R2000",
        "--slo",
        &objective,
        "--json",
        json.to_str().unwrap(),
    ];
    args.extend(target);
    let mut run = Signalled::spawn(&args);
    // Every second until it exits: on a busy machine its start can take a second or more, so a
    // fixed count of stalls could fall before the run's first request.
    loop {
        std::thread::sleep(Duration::from_millis(850));
        if run.exited() {
            break;
        }
        run.kill(libc::SIGSTOP, None);
        std::thread::sleep(Duration::from_millis(150));
        run.kill(libc::SIGCONT, None);
    }
    let run = run.finish(LIMIT);
    let doc = read_json(&json);
    let server_p99 = json_u64(&doc, "server_latency.p99");
    let server_judged = json_u64(&doc, &format!("server_latency.{judged}"));
    let corrected_p99 = json_u64(&doc, "latency.p99");
    eprintln!(
        "{name}: server p50 {} p90 {} p99 {server_p99}; corrected p99 {corrected_p99}; \
         uncorrected p99 {}; own {}",
        json_u64(&doc, "server_latency.p50"),
        json_u64(&doc, "server_latency.p90"),
        json_u64(&doc, "uncorrected.p99"),
        doc["own_delay"]
    );
    assert_eq!(doc["timestamps"], stamps, "{name}: {doc:#}");
    assert_split_adds_up(&doc);
    // Four or five stalls of 150 ms at 2,000 req/s: over 1,000 of some 10,000 requests were due
    // during one, so the corrected p99 is deep in a stall.
    assert!(
        corrected_p99 >= 100_000,
        "{name}: corrected p99 {corrected_p99}us"
    );
    assert!(
        server_judged < 20_000,
        "{name}: server's {judged} {server_judged}us: {doc:#}"
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{name}: the objective judged on the server's latency holds:\n{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stdout.contains("Objectives: all 1 held"),
        "{name}: {}",
        run.stdout
    );
    // The warning weighs the p99s (the corrected one against the server's).
    assert!(
        judged != "p99"
            || run.stdout.contains("Warning: tsumo's own delay made")
                && run
                    .stdout
                    .contains("this machine, not the server, made the difference"),
        "{name}: {}",
        run.stdout
    );
}
