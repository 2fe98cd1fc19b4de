//! `tsumo doctor`: finds, before a run, the limits that would silently cap it.
//!
//! Why: a load test that hits a limit of the machine instead of the server measures the limit.
//! The authors of our seed write-ups lost days to exactly that: a full conntrack table
//! (`nf_conntrack: table full, dropping packet` at `nf_conntrack_max` 6144) and nginx workers left
//! at 1024 open files while every proxied client costs them two connections. Nothing reports
//! these at run time except a kernel log line or a connect error far from the cause, so each
//! check here prints one line with a verdict and, when it is not OK, the exact command or
//! config line that fixes it. Exit status 1 means "a run of this size would be capped".

mod nginx;
mod system;

use std::fmt::Write as _;
use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::error::Error;
use crate::plan::Target;

/// What `tsumo doctor` was asked to check.
#[derive(Debug, Clone)]
pub struct DoctorPlan {
    /// The planned number of connections (`-c`).
    pub connections: usize,
    /// The planned worker threads (`-t`), for the open files tsumo needs besides sockets.
    pub threads: usize,
    /// An nginx master process the traffic goes through.
    pub proxy_pid: Option<u32>,
    /// Where the connections go (its host:port for the ephemeral-port check, and the target
    /// check: does it answer, does its TLS handshake pass).
    pub target: Option<Target>,
    /// `--insecure`: the target check does not verify the certificate.
    pub insecure: bool,
    /// `--cacert`: more certificates the target check trusts.
    pub cacert: Option<PathBuf>,
    /// `--bind`: the source addresses the run will spread its connections over; each has its
    /// own port range toward the destination.
    pub bind: Vec<IpAddr>,
    /// `--http3`: the run speaks QUIC (the target check is a QUIC handshake, and the UDP
    /// receive buffer is checked).
    pub http3: bool,
    /// `-R`: the planned rate, requests per second (the UDP receive buffer's check).
    pub rate: Option<u64>,
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
    pub fn ok(name: &'static str, finding: String) -> Check {
        Check {
            verdict: Verdict::Ok,
            name,
            finding,
            fix: None,
        }
    }

    pub fn not_ok(verdict: Verdict, name: &'static str, finding: String, fix: String) -> Check {
        Check {
            verdict,
            name,
            finding,
            fix: Some(fix),
        }
    }
}

/// Runs every check, prints the report and returns 1 if any check failed, or the error's status
/// (2 for bad input, as a `--proxy-pid` that is not nginx's master). `network` holds the checks
/// made by the caller (the source addresses and the target: they bind and connect, and `net`,
/// above this module, knows how).
pub fn run(plan: &DoctorPlan, network: Result<Vec<Check>, Error>) -> ExitCode {
    // The target first: when nothing answers there, the limits below matter less.
    let all = checks(plan).and_then(|list| {
        let mut first = network?;
        first.extend(list);
        Ok(first)
    });
    match all {
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
            e.exit_status().into()
        }
    }
}

/// Every check for this plan, in report order. Fails only on bad input (a PID that is gone).
pub fn checks(plan: &DoctorPlan) -> Result<Vec<Check>, Error> {
    let mut list = vec![
        system::open_files(plan),
        system::ephemeral_ports(plan),
        system::somaxconn(plan),
        system::conntrack(plan),
    ];
    list.extend(system::udp_receive_buffer(plan));
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

fn show_limit(n: u64) -> String {
    if n == libc::RLIM_INFINITY {
        "unlimited".to_string()
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            insecure: false,
            cacert: None,
            bind: Vec::new(),
            http3: false,
            rate: None,
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
    fn the_udp_receive_buffer_is_checked_for_http3_at_the_planned_rate() {
        let plan = |rate: u64| DoctorPlan {
            connections: 1,
            threads: 1,
            proxy_pid: None,
            target: None,
            insecure: false,
            cacert: None,
            bind: Vec::new(),
            http3: true,
            rate: Some(rate),
        };
        let line = |rate| {
            checks(&plan(rate))
                .expect("checks")
                .into_iter()
                .find(|c| c.name == "UDP receive buffer")
                .expect("the UDP receive buffer's line")
        };
        // 100 datagrams in 10 ms fit any buffer Linux gives by default.
        assert_ne!(line(10_000).verdict, Verdict::Fail);
        // 100,000 full-size datagrams in 10 ms fit none.
        let over = line(10_000_000);
        assert_eq!(over.verdict, Verdict::Fail, "{over:?}");
        assert!(over
            .fix
            .as_deref()
            .is_some_and(|f| f.contains("net.core.rmem_max")));
    }

    #[test]
    fn missing_proxy_pid_is_an_error() {
        let plan = DoctorPlan {
            connections: 10,
            threads: 2,
            proxy_pid: Some(4_000_000_000),
            target: None,
            insecure: false,
            cacert: None,
            bind: Vec::new(),
            http3: false,
            rate: None,
        };
        let err = checks(&plan).map(|_| ()).expect_err("no such process");
        assert_eq!(err.to_string(), "--proxy-pid 4000000000: no such process");
    }
}
