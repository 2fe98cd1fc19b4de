//! `tsumo doctor`: finds, before a run, the limits that would silently cap it.
//!
//! Why: a load test that hits a limit of the machine instead of the server measures the limit.
//! The authors of our seed write-ups lost days to exactly that: a full conntrack table
//! (`nf_conntrack: table full, dropping packet` at `nf_conntrack_max` 6144) and nginx workers left
//! at 1024 open files while every proxied client costs them two connections. Nothing reports
//! these at run time except a kernel log line or a connect error far from the cause, so each
//! check here prints one line with a verdict and, when it is not OK, the exact command or
//! config line that fixes it. Exit status 1 means "a run of this size would be capped".

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::process::ExitCode;

use crate::error::Error;
use crate::plan::Target;
use crate::sys::fds_needed;
use crate::sys::procstat::{process_tree, read_stat};

/// What `tsumo doctor` was asked to check.
#[derive(Debug, Clone)]
pub struct DoctorPlan {
    /// The planned number of connections (`-c`).
    pub connections: usize,
    /// The planned worker threads (`-t`), for the open files tsumo needs besides sockets.
    pub threads: usize,
    /// An nginx master process the traffic goes through.
    pub proxy_pid: Option<u32>,
    /// Where the connections go (its host:port for the ephemeral-port check).
    pub target: Option<Target>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Ok,
    Warn,
    Fail,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Ok => "OK",
            Verdict::Warn => "WARN",
            Verdict::Fail => "FAIL",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Check {
    pub verdict: Verdict,
    pub name: &'static str,
    /// What was found, with the numbers.
    pub finding: String,
    /// The command or config line that fixes it (only when not OK).
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, finding: String) -> Check {
        Check {
            verdict: Verdict::Ok,
            name,
            finding,
            fix: None,
        }
    }

    fn not_ok(verdict: Verdict, name: &'static str, finding: String, fix: String) -> Check {
        Check {
            verdict,
            name,
            finding,
            fix: Some(fix),
        }
    }
}

/// Runs every check, prints the report and returns 1 if any check failed.
pub fn run(plan: &DoctorPlan) -> ExitCode {
    match checks(plan) {
        Ok(list) => {
            print!("{}", render(&list));
            if list.iter().any(|c| c.verdict == Verdict::Fail) {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("tsumo: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Every check for this plan, in report order. Fails only on bad input (a PID that is gone).
pub fn checks(plan: &DoctorPlan) -> Result<Vec<Check>, Error> {
    let mut list = vec![
        open_files(plan),
        ephemeral_ports(plan),
        somaxconn(plan),
        conntrack(plan),
    ];
    if let Some(pid) = plan.proxy_pid {
        list.extend(nginx::checks(pid, plan.connections)?);
    }
    Ok(list)
}

/// One line per check: `VERDICT  name  finding — fix: …`.
pub fn render(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let _ = write!(out, "{:<4}  {:<18} {}", c.verdict.word(), c.name, c.finding);
        if let Some(fix) = &c.fix {
            let _ = write!(out, " — fix: {fix}");
        }
        out.push('\n');
    }
    out
}

fn read_sysctl(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn read_number(path: &str) -> Option<u64> {
    read_sysctl(path)?.parse().ok()
}

fn show_limit(n: u64) -> String {
    if n == libc::RLIM_INFINITY {
        "unlimited".to_string()
    } else {
        n.to_string()
    }
}

/// tsumo's own RLIMIT_NOFILE against its sockets plus headroom.
fn open_files(plan: &DoctorPlan) -> Check {
    let name = "open files (tsumo)";
    let needed = fds_needed(plan.connections, plan.threads);
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills a valid struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Check::not_ok(
            Verdict::Warn,
            name,
            "cannot read the open-file limit".to_string(),
            format!("`ulimit -n {needed}` before running tsumo"),
        );
    }
    let (soft, hard) = (lim.rlim_cur, lim.rlim_max);
    let c = plan.connections;
    let limits = format!("soft {}, hard {}", show_limit(soft), show_limit(hard));
    if hard < needed {
        Check::not_ok(
            Verdict::Fail,
            name,
            format!("{limits} < {needed} needed for -c {c}"),
            format!(
                "`ulimit -n {needed}` (as root: it is above the hard limit) in the shell that \
                 starts tsumo, or `* - nofile {needed}` in /etc/security/limits.conf"
            ),
        )
    } else if soft < needed {
        Check::ok(
            name,
            format!("{limits}; -c {c} needs {needed}: tsumo raises its soft limit to the hard one"),
        )
    } else {
        Check::ok(name, format!("{limits} ≥ {needed} needed for -c {c}"))
    }
}

/// The local port range against N connections to one destination (each (source address,
/// destination) pair has its own set of ports).
fn ephemeral_ports(plan: &DoctorPlan) -> Check {
    let name = "ephemeral ports";
    let c = plan.connections as u64;
    let Some((low, high)) =
        read_sysctl("/proc/sys/net/ipv4/ip_local_port_range").and_then(|s| parse_port_range(&s))
    else {
        return Check::not_ok(
            Verdict::Warn,
            name,
            "cannot read /proc/sys/net/ipv4/ip_local_port_range".to_string(),
            "`sysctl net.ipv4.ip_local_port_range` to see it".to_string(),
        );
    };
    let range = u64::from(high.saturating_sub(low)) + 1;
    let tw_reuse = read_number("/proc/sys/net/ipv4/tcp_tw_reuse").unwrap_or(0);
    let destination = plan.target.as_ref().and_then(|t| {
        (t.host.as_str(), t.port())
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
    });
    let (to, in_use) = match (&plan.target, destination) {
        (Some(_), Some(addr)) => (format!("to {addr}"), sockets_to(addr)),
        (Some(t), None) => (format!("to {}:{} (unresolved)", t.host, t.port()), 0),
        (None, _) => ("to one destination".to_string(), 0),
    };
    let loopback = destination.is_some_and(|a| a.ip().is_loopback());
    // tcp_tw_reuse: 0 off, 1 on, 2 (the default) for loopback only.
    let reuse_on = tw_reuse == 1 || (tw_reuse == 2 && loopback);
    let free = range.saturating_sub(in_use);
    let busy = if in_use > 0 {
        format!(", {in_use} already in use")
    } else {
        String::new()
    };
    let finding = format!(
        "{range} ports ({low}-{high}{busy}) for {c} connections {to}; tcp_tw_reuse={tw_reuse}"
    );
    if c > free {
        let fix = if c + in_use <= 64511 {
            "`sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"`".to_string()
        } else {
            "more destinations or source addresses: one (source, destination) pair has at most \
             64511 ports"
                .to_string()
        };
        let fix = if in_use > 0 && !reuse_on {
            format!("{fix} and `sysctl -w net.ipv4.tcp_tw_reuse=1`")
        } else {
            fix
        };
        Check::not_ok(Verdict::Fail, name, format!("{finding}: too few"), fix)
    } else if 2 * c > free && !reuse_on {
        Check::not_ok(
            Verdict::Warn,
            name,
            format!(
                "{finding}: closed connections keep their port in TIME_WAIT for 60 s, so a run \
                 right after this one may run out"
            ),
            "`sysctl -w net.ipv4.tcp_tw_reuse=1`".to_string(),
        )
    } else {
        Check::ok(name, finding)
    }
}

fn parse_port_range(text: &str) -> Option<(u16, u16)> {
    let mut it = text.split_whitespace().map(|s| s.parse::<u16>().ok());
    let (low, high) = (it.next()??, it.next()??);
    (low <= high).then_some((low, high))
}

/// Sockets of this network namespace (any state but LISTEN) whose remote end is `to`: each one
/// holds a local port toward that destination.
fn sockets_to(to: SocketAddr) -> u64 {
    let file = if to.is_ipv4() {
        "/proc/net/tcp"
    } else {
        "/proc/net/tcp6"
    };
    let text = std::fs::read_to_string(file).unwrap_or_default();
    text.lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.len() > 3 && fields[3] != "0A" && parse_proc_addr(fields[2]) == Some(to)
        })
        .count() as u64
}

/// `0100007F:1F90` (IPv4) or 32 hex digits + port (IPv6), as /proc/net/tcp prints them: each
/// 32-bit word of the address in the machine's byte order, the port in hex.
fn parse_proc_addr(text: &str) -> Option<SocketAddr> {
    let (addr, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let mut bytes = Vec::with_capacity(16);
    for chunk in addr.as_bytes().chunks(8) {
        let word = u32::from_str_radix(std::str::from_utf8(chunk).ok()?, 16).ok()?;
        bytes.extend_from_slice(&word.to_ne_bytes());
    }
    let ip = match bytes.len() {
        4 => IpAddr::from(<[u8; 4]>::try_from(bytes).ok()?),
        16 => IpAddr::from(<[u8; 16]>::try_from(bytes).ok()?),
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The listen backlog cap: matters when the server runs on this machine and N connections
/// arrive at once.
fn somaxconn(plan: &DoctorPlan) -> Check {
    let name = "somaxconn";
    let c = plan.connections as u64;
    match read_number("/proc/sys/net/core/somaxconn") {
        None => Check::not_ok(
            Verdict::Warn,
            name,
            "cannot read /proc/sys/net/core/somaxconn".to_string(),
            "`sysctl net.core.somaxconn` to see it".to_string(),
        ),
        Some(max) if max < c => Check::not_ok(
            Verdict::Warn,
            name,
            format!(
                "net.core.somaxconn {max} < {c}: a server on this machine cannot queue {c} \
                 connects at once (the rest are retried after 1 s)"
            ),
            format!("`sysctl -w net.core.somaxconn={c}` and in nginx `listen … backlog={c};`"),
        ),
        Some(max) => Check::ok(
            name,
            format!("net.core.somaxconn {max} ≥ {c} connections (listen backlog cap)"),
        ),
    }
}

/// The connection-tracking table: when full, the kernel drops new connections' packets.
fn conntrack(plan: &DoctorPlan) -> Check {
    let name = "conntrack";
    let dir = "/proc/sys/net/netfilter";
    if !Path::new(dir).join("nf_conntrack_max").exists() {
        return Check::ok(
            name,
            "nf_conntrack is not loaded: no connection-tracking table to fill".to_string(),
        );
    }
    let (Some(max), Some(count)) = (
        read_number(&format!("{dir}/nf_conntrack_max")),
        read_number(&format!("{dir}/nf_conntrack_count")),
    ) else {
        return Check::not_ok(
            Verdict::Warn,
            name,
            format!("cannot read {dir}/nf_conntrack_max or nf_conntrack_count"),
            "`sysctl net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_count`".to_string(),
        );
    };
    // Through a proxy on this machine both legs are tracked: client to proxy, proxy to upstream.
    let legs = if plan.proxy_pid.is_some() { 2 } else { 1 };
    let needed = plan.connections as u64 * legs;
    let time_wait =
        read_number(&format!("{dir}/nf_conntrack_tcp_timeout_time_wait")).unwrap_or(120);
    let suggest = (count + 2 * needed).div_ceil(1024) * 1024;
    let fix = format!("`sysctl -w net.netfilter.nf_conntrack_max={suggest}`");
    let via = if legs == 2 {
        format!(
            " (2 × -c {}: both legs through the proxy)",
            plan.connections
        )
    } else {
        String::new()
    };
    let finding = format!("nf_conntrack_max {max}, {count} in use, {needed} more needed{via}");
    if count + needed > max {
        Check::not_ok(
            Verdict::Fail,
            name,
            format!("{finding}: the table fills and new connections' packets are dropped"),
            fix,
        )
    } else if count + 2 * needed > max {
        Check::not_ok(
            Verdict::Warn,
            name,
            format!(
                "{finding}: closed connections stay in the table for {time_wait} s, so a run \
                 right after this one fills it"
            ),
            fix,
        )
    } else {
        Check::ok(name, finding)
    }
}

/// The nginx checks: workers, their open-file limits, `worker_connections` (from `nginx -T`) and
/// the number of proxied clients that fit.
mod nginx {
    use std::io::Read;
    use std::path::PathBuf;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::{read_stat, Check, Verdict};
    use crate::error::Error;

    /// nginx's default when the config does not say.
    const DEFAULT_WORKER_CONNECTIONS: u64 = 512;
    /// Connections and files a worker needs besides proxied clients: listeners, logs, files served.
    const WORKER_HEADROOM: u64 = 64;
    const NGINX_T_TIMEOUT: Duration = Duration::from_secs(10);

    pub fn checks(master: u32, clients: usize) -> Result<Vec<Check>, Error> {
        let Some(stat) = read_stat(master) else {
            return Err(Error::Usage(format!(
                "--proxy-pid {master}: no such process"
            )));
        };
        let title = cmdline(master);
        let comm = std::fs::read_to_string(format!("/proc/{master}/comm")).unwrap_or_default();
        let comm = comm.trim();
        if !comm.contains("nginx") && !title.first().is_some_and(|t| t.starts_with("nginx")) {
            return Err(Error::Usage(format!(
                "--proxy-pid {master} is `{comm}`, not nginx; pass the nginx master's PID \
                 (its pid file, e.g. `cat /run/nginx.pid`)"
            )));
        }
        if title.first().is_some_and(|t| t.contains("worker process")) {
            return Err(Error::Usage(format!(
                "--proxy-pid {master} is an nginx worker; pass its master process, PID {}",
                stat.ppid
            )));
        }
        let workers = workers_of(master);
        let mut list = Vec::new();
        let limits: Vec<(u32, Option<u64>)> =
            workers.iter().map(|&w| (w, open_files_soft(w))).collect();
        let files: Vec<u64> = limits.iter().filter_map(|(_, l)| *l).collect();
        if workers.is_empty() {
            list.push(Check::not_ok(
                Verdict::Fail,
                "nginx workers",
                format!("PID {master} has no worker processes"),
                "start nginx (or check its error log): is this the master's PID?".to_string(),
            ));
            return Ok(list);
        }
        let pids = workers
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let shown: Vec<String> = limits
            .iter()
            .map(|(_, l)| l.map_or("?".to_string(), super::show_limit))
            .collect();
        let mut distinct = shown.clone();
        distinct.dedup();
        let files_text = if distinct.len() == 1 {
            format!("{} each", distinct[0])
        } else {
            shown.join(", ")
        };
        list.push(Check::ok(
            "nginx workers",
            format!(
                "{} of master {master} (PIDs {pids}); open files (soft limit) {files_text}",
                workers.len()
            ),
        ));

        let worker_connections = match nginx_t(master) {
            Ok((wc, how)) => {
                list.push(Check::ok(
                    "nginx config",
                    format!("worker_connections {wc} (from {how})"),
                ));
                Some(wc)
            }
            Err(why) => {
                list.push(Check::not_ok(
                    Verdict::Warn,
                    "nginx config",
                    format!("worker_connections unknown: {why}; judging by open files only"),
                    "run tsumo doctor as root or as nginx's user".to_string(),
                ));
                None
            }
        };

        // Each proxied client holds two connections in a worker: client side and upstream side.
        let n = workers.len() as u64;
        let per_worker: Vec<u64> = files
            .iter()
            .map(|&f| worker_connections.map_or(f, |wc| wc.min(f)))
            .collect();
        let capacity = per_worker.iter().sum::<u64>() / 2;
        let clients = clients as u64;
        let wc_text = worker_connections.map_or("worker_connections ?".to_string(), |wc| {
            format!("{wc} worker_connections")
        });
        let least_files = files.iter().copied().min().unwrap_or(0);
        let formula = format!(
            "{n} worker{} × min({wc_text}, {} open files) / 2 = {capacity} proxied clients",
            if n == 1 { "" } else { "s" },
            super::show_limit(least_files),
        );
        let need_per_worker = (2 * clients).div_ceil(n) + WORKER_HEADROOM;
        let mut fixes = Vec::new();
        if files.iter().any(|&f| f < need_per_worker) {
            let nofile = 2 * need_per_worker;
            fixes.push(format!(
                "`worker_rlimit_nofile {nofile};` (main context of nginx.conf, or `ulimit -n \
                 {nofile}` in the shell that starts nginx)"
            ));
        }
        if worker_connections.is_some_and(|wc| wc < need_per_worker) {
            fixes.push(format!(
                "`worker_connections {need_per_worker};` (events {{ }} of nginx.conf)"
            ));
        }
        let fix = if fixes.is_empty() {
            "run tsumo doctor as root, to read every worker's limits".to_string()
        } else {
            format!("{}; then `nginx -s reload`", fixes.join(" and "))
        };
        let check = if capacity < clients || files.len() < workers.len() {
            let why = if files.len() < workers.len() {
                "cannot read every worker's /proc/PID/limits".to_string()
            } else {
                format!("{formula} < {clients}")
            };
            Check::not_ok(Verdict::Fail, "nginx capacity", why, fix)
        } else if worker_connections.is_none() {
            Check::not_ok(
                Verdict::Warn,
                "nginx capacity",
                format!("{formula} ≥ {clients} if worker_connections allows"),
                format!("make sure nginx.conf has `worker_connections {need_per_worker};` or more"),
            )
        } else {
            Check::ok("nginx capacity", format!("{formula} ≥ {clients}"))
        };
        list.push(check);
        Ok(list)
    }

    /// The worker processes of an nginx master: its children titled `nginx: worker process`;
    /// without such titles, all its children; with no children (`master_process off`), itself.
    fn workers_of(master: u32) -> Vec<u32> {
        let children: Vec<u32> = super::process_tree(&[master])
            .into_iter()
            .filter(|(pid, stat)| *pid != master && stat.ppid == master)
            .map(|(pid, _)| pid)
            .collect();
        let titled: Vec<u32> = children
            .iter()
            .copied()
            .filter(|&c| {
                // Old workers finishing their connections after a reload no longer accept.
                cmdline(c)
                    .first()
                    .is_some_and(|t| t.contains("worker process") && !t.contains("shutting down"))
            })
            .collect();
        let mut workers = if !titled.is_empty() {
            titled
        } else if cmdline(master)
            .first()
            .is_some_and(|t| t.contains("master process"))
        {
            // A master between reloads can have no workers for a moment; so be it.
            children
                .into_iter()
                .filter(|&c| !cmdline(c).iter().any(|t| t.contains("cache")))
                .collect()
        } else if children.is_empty() {
            vec![master]
        } else {
            children
        };
        workers.sort_unstable();
        workers
    }

    /// `/proc/PID/cmdline` split at NULs (nginx rewrites its title into the first element).
    fn cmdline(pid: u32) -> Vec<String> {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|bytes| split_cmdline(&bytes))
            .unwrap_or_default()
    }

    pub(super) fn split_cmdline(bytes: &[u8]) -> Vec<String> {
        bytes
            .split(|&b| b == 0)
            .filter(|part| !part.is_empty())
            .map(|part| String::from_utf8_lossy(part).into_owned())
            .collect()
    }

    /// The soft `Max open files` of a process.
    fn open_files_soft(pid: u32) -> Option<u64> {
        parse_limits(&std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?)
    }

    pub(super) fn parse_limits(text: &str) -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with("Max open files"))?;
        let soft = line
            .strip_prefix("Max open files")?
            .split_whitespace()
            .next()?;
        if soft == "unlimited" {
            Some(libc::RLIM_INFINITY)
        } else {
            soft.parse().ok()
        }
    }

    /// The `-p`, `-c` and `-e` options the master was started with, so `nginx -T` reads the same
    /// files. nginx overwrites its argv with `nginx: master process /path/nginx -c FILE …`.
    pub(super) fn start_options(cmdline: &[String]) -> Vec<String> {
        let words: Vec<&str> = match cmdline {
            [title] if title.starts_with("nginx: ") => title
                .split_once(" process ")
                .map(|(_, rest)| rest.split_whitespace().skip(1).collect())
                .unwrap_or_default(),
            [_, rest @ ..] => rest.iter().map(String::as_str).collect(),
            [] => Vec::new(),
        };
        let mut options = Vec::new();
        let mut it = words.iter();
        while let Some(word) = it.next() {
            for flag in ["-p", "-c", "-e"] {
                if *word == flag {
                    if let Some(value) = it.next() {
                        options.extend([flag.to_string(), value.to_string()]);
                    }
                } else if let Some(value) = word.strip_prefix(flag).filter(|v| !v.is_empty()) {
                    options.extend([flag.to_string(), value.to_string()]);
                }
            }
        }
        options
    }

    /// `worker_connections` from a `nginx -T` dump (comments stripped), or nginx's default.
    pub(super) fn parse_worker_connections(dump: &str) -> u64 {
        let mut tokens = Vec::new();
        for line in dump.lines() {
            let code = line.split('#').next().unwrap_or("");
            for word in code.split_whitespace() {
                let mut rest = word;
                while let Some(at) = rest.find([';', '{', '}']) {
                    if at > 0 {
                        tokens.push(&rest[..at]);
                    }
                    tokens.push(&rest[at..at + 1]);
                    rest = &rest[at + 1..];
                }
                if !rest.is_empty() {
                    tokens.push(rest);
                }
            }
        }
        tokens
            .windows(3)
            .find(|w| w[0] == "worker_connections" && w[2] == ";")
            .and_then(|w| w[1].parse().ok())
            .unwrap_or(DEFAULT_WORKER_CONNECTIONS)
    }

    /// Runs the master's own binary with `-T` and its start options; returns worker_connections
    /// and the command that was run, or why it could not be.
    fn nginx_t(master: u32) -> Result<(u64, String), String> {
        let exe = std::fs::read_link(format!("/proc/{master}/exe"))
            .map_err(|e| format!("cannot read /proc/{master}/exe ({e})"))?;
        let text = exe.to_string_lossy();
        // A binary replaced on disk since nginx started (an upgrade) shows as `… (deleted)`.
        let exe = PathBuf::from(text.strip_suffix(" (deleted)").unwrap_or(&text));
        let options = start_options(&cmdline(master));
        let shown = format!("{} -T {}", exe.display(), options.join(" "));
        let shown = shown.trim_end().to_string();
        let mut child = Command::new(&exe)
            .arg("-T")
            .args(&options)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run `{shown}` ({e})"))?;
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let out = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(pipe) = stdout.as_mut() {
                let _ = pipe.read_to_string(&mut s);
            }
            s
        });
        let err = std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(pipe) = stderr.as_mut() {
                let _ = pipe.read_to_string(&mut s);
            }
            s
        });
        let deadline = Instant::now() + NGINX_T_TIMEOUT;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("`{shown}` did not finish in {NGINX_T_TIMEOUT:?}"));
                }
                Err(e) => return Err(format!("`{shown}`: {e}")),
            }
        };
        let dump = out.join().unwrap_or_default();
        let errors = err.join().unwrap_or_default();
        if !status.success() {
            let first = errors
                .lines()
                .find(|l| l.contains("emerg") || l.contains("failed"))
                .or_else(|| errors.lines().next())
                .unwrap_or("no output");
            return Err(format!("`{shown}` failed: {first}"));
        }
        Ok((parse_worker_connections(&dump), format!("`{shown}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::nginx::{parse_limits, parse_worker_connections, split_cmdline, start_options};
    use super::*;

    #[test]
    fn proc_net_tcp_addresses() {
        let v4 = parse_proc_addr("0100007F:1F90").expect("v4");
        if cfg!(target_endian = "little") {
            assert_eq!(v4, "127.0.0.1:8080".parse().expect("addr"));
            let v6 = parse_proc_addr("00000000000000000000000001000000:0050").expect("v6");
            assert_eq!(v6, "[::1]:80".parse().expect("addr"));
        }
        assert_eq!(parse_proc_addr("zz:1"), None);
    }

    #[test]
    fn port_range() {
        assert_eq!(parse_port_range("32768\t60999"), Some((32768, 60999)));
        assert_eq!(parse_port_range("5 4"), None);
        assert_eq!(parse_port_range(""), None);
    }

    #[test]
    fn limits_file() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max cpu time              unlimited            unlimited            seconds   \n\
                    Max open files            1024                 524288               files     \n";
        assert_eq!(parse_limits(text), Some(1024));
        assert_eq!(
            parse_limits("Max open files            unlimited            unlimited    files"),
            Some(libc::RLIM_INFINITY)
        );
        assert_eq!(parse_limits("Max processes 1 1"), None);
    }

    #[test]
    fn master_start_options() {
        let title = vec![
            "nginx: master process /usr/sbin/nginx -p /tmp/x -c /tmp/x/nginx.conf -e /tmp/x/e.log"
                .to_string(),
        ];
        assert_eq!(
            start_options(&title),
            [
                "-p",
                "/tmp/x",
                "-c",
                "/tmp/x/nginx.conf",
                "-e",
                "/tmp/x/e.log"
            ]
        );
        let plain: Vec<String> = ["nginx", "-c/etc/n.conf", "-g", "daemon off;"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(start_options(&plain), ["-c", "/etc/n.conf"]);
        let bare = vec!["nginx: master process /usr/sbin/nginx".to_string()];
        assert!(start_options(&bare).is_empty());
        assert_eq!(
            split_cmdline(b"nginx: master process nginx\0\0\0"),
            ["nginx: master process nginx"]
        );
    }

    #[test]
    fn worker_connections_from_dump() {
        let dump = "# configuration file /etc/nginx/nginx.conf:\n\
                    # worker_connections 99;\n\
                    events {\n    worker_connections  768; # more?\n}\n";
        assert_eq!(parse_worker_connections(dump), 768);
        assert_eq!(
            parse_worker_connections("events{worker_connections 10;}"),
            10
        );
        assert_eq!(parse_worker_connections("events {}"), 512);
    }

    #[test]
    fn render_one_line_per_check_with_fix() {
        let text = render(&[
            Check::ok("a", "fine".to_string()),
            Check::not_ok(Verdict::Fail, "b", "bad".to_string(), "`do x`".to_string()),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].starts_with("OK    a"));
        assert!(lines[1].starts_with("FAIL  b"));
        assert!(lines[1].ends_with("bad — fix: `do x`"));
    }

    #[test]
    fn small_plan_against_this_machine() {
        let plan = DoctorPlan {
            connections: 10,
            threads: 2,
            proxy_pid: None,
            target: None,
        };
        let list = checks(&plan).expect("checks");
        let names: Vec<&str> = list.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "open files (tsumo)",
                "ephemeral ports",
                "somaxconn",
                "conntrack"
            ]
        );
        for c in &list {
            assert_eq!(c.fix.is_some(), c.verdict != Verdict::Ok, "{c:?}");
        }
    }

    #[test]
    fn missing_proxy_pid_is_an_error() {
        let plan = DoctorPlan {
            connections: 10,
            threads: 2,
            proxy_pid: Some(4_000_000_000),
            target: None,
        };
        let err = checks(&plan).map(|_| ()).expect_err("no such process");
        assert_eq!(err.to_string(), "--proxy-pid 4000000000: no such process");
    }
}
