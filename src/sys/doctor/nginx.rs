//! The nginx side of `tsumo doctor --proxy-pid`: an nginx master's workers, their open-file
//! limits from /proc, `worker_connections` from `nginx -T` run with the master's own binary and
//! start options, and the number of proxied clients that fit (each costs a worker two
//! connections).

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{show_limit, Check, Verdict};
use crate::error::Error;
use crate::sys::procstat::{process_tree, read_stat};

/// nginx's default when the config does not say.
const DEFAULT_WORKER_CONNECTIONS: u64 = 512;
/// Connections and files a worker needs besides proxied clients: listeners, logs, files served.
const WORKER_HEADROOM: u64 = 64;
const NGINX_T_TIMEOUT: Duration = Duration::from_secs(10);

/// The nginx master's workers, its config, and whether `clients` proxied clients fit.
pub(super) fn checks(master: u32, clients: usize) -> Result<Vec<Check>, Error> {
    is_master(master)?;
    let workers = workers_of(master);
    let limits: Vec<(u32, Option<u64>)> =
        workers.iter().map(|&w| (w, open_files_soft(w))).collect();
    let files: Vec<u64> = limits.iter().filter_map(|(_, l)| *l).collect();
    if workers.is_empty() {
        return Ok(vec![Check::not_ok(
            Verdict::Fail,
            "nginx workers",
            format!("PID {master} has no worker processes"),
            "start nginx (or check its error log): is this the master's PID?".to_string(),
        )]);
    }
    let mut list = vec![workers_check(master, &workers, &limits)];
    let (config, worker_connections) = config_check(master);
    list.push(config);
    list.push(capacity_check(
        workers.len(),
        &files,
        worker_connections,
        clients,
    ));
    Ok(list)
}

/// A usage error unless `master` is an nginx master process.
fn is_master(master: u32) -> Result<(), Error> {
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
    Ok(())
}

/// The workers' PIDs and open-file limits (each, or one for all when they agree).
fn workers_check(master: u32, workers: &[u32], limits: &[(u32, Option<u64>)]) -> Check {
    let pids = workers
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let shown: Vec<String> = limits
        .iter()
        .map(|(_, l)| l.map_or("?".to_string(), show_limit))
        .collect();
    let mut distinct = shown.clone();
    distinct.dedup();
    let files_text = if distinct.len() == 1 {
        format!("{} each", distinct[0])
    } else {
        shown.join(", ")
    };
    Check::ok(
        "nginx workers",
        format!(
            "{} of master {master} (PIDs {pids}); open files (soft limit) {files_text}",
            workers.len()
        ),
    )
}

/// `worker_connections` from `nginx -T`, or a warning when it cannot be read.
fn config_check(master: u32) -> (Check, Option<u64>) {
    match nginx_t(master) {
        Ok((wc, how)) => (
            Check::ok(
                "nginx config",
                format!("worker_connections {wc} (from {how})"),
            ),
            Some(wc),
        ),
        Err(why) => (
            Check::not_ok(
                Verdict::Warn,
                "nginx config",
                format!("worker_connections unknown: {why}; judging by open files only"),
                "run tsumo doctor as root or as nginx's user".to_string(),
            ),
            None,
        ),
    }
}

/// How many proxied clients the workers carry, against the `clients` planned, with the fix.
fn capacity_check(
    workers: usize,
    files: &[u64],
    worker_connections: Option<u64>,
    clients: usize,
) -> Check {
    // Each proxied client holds two connections in a worker: client side and upstream side.
    let n = workers as u64;
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
        show_limit(least_files),
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
    if capacity < clients || files.len() < workers {
        let why = if files.len() < workers {
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
    }
}

/// The worker processes of an nginx master: its children titled `nginx: worker process`;
/// without such titles, all its children; with no children (`master_process off`), itself.
fn workers_of(master: u32) -> Vec<u32> {
    let children: Vec<u32> = process_tree(&[master])
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

fn split_cmdline(bytes: &[u8]) -> Vec<String> {
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

fn parse_limits(text: &str) -> Option<u64> {
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
fn start_options(cmdline: &[String]) -> Vec<String> {
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
fn parse_worker_connections(dump: &str) -> u64 {
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

/// Why `nginx -T` told nothing; `shown` is the command as it was run.
#[derive(Debug, thiserror::Error)]
enum NginxTError {
    #[error("cannot read /proc/{master}/exe ({source})")]
    Exe { master: u32, source: std::io::Error },
    #[error("cannot run `{shown}` ({source})")]
    Spawn {
        shown: String,
        source: std::io::Error,
    },
    #[error("`{shown}` did not finish in {NGINX_T_TIMEOUT:?}", NGINX_T_TIMEOUT = NGINX_T_TIMEOUT)]
    Timeout { shown: String },
    #[error("`{shown}`: {source}")]
    Wait {
        shown: String,
        source: std::io::Error,
    },
    /// It exited with an error: its first line that says why.
    #[error("`{shown}` failed: {first}")]
    Failed { shown: String, first: String },
}

/// Runs the master's own binary with `-T` and its start options; returns worker_connections
/// and the command that was run, or why it could not be.
fn nginx_t(master: u32) -> Result<(u64, String), NginxTError> {
    let exe = std::fs::read_link(format!("/proc/{master}/exe"))
        .map_err(|source| NginxTError::Exe { master, source })?;
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
        .map_err(|source| NginxTError::Spawn {
            shown: shown.clone(),
            source,
        })?;
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
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(NginxTError::Timeout { shown });
            }
            Err(source) => return Err(NginxTError::Wait { shown, source }),
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
        return Err(NginxTError::Failed {
            shown,
            first: first.to_string(),
        });
    }
    Ok((parse_worker_connections(&dump), format!("`{shown}`")))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
