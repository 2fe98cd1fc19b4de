//! `tsumo doctor [-c N] [-t N] [--proxy-pid PID] [URL]`: the command line of the pre-flight
//! checks, turned into a [`DoctorPlan`]. Same conventions as the other command lines: wrk's
//! units, one-line errors naming the option and the fix.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Command;

use super::error::ArgError;
use super::help::Page;
use super::shared::{self, flag, value, For};
use super::{extra_argument, subcommand_matches, url, url_args, Parsed};
use crate::sys::doctor::DoctorPlan;

const DEFAULT_CONNECTIONS: usize = 10;
const DEFAULT_THREADS: usize = 2;

const USAGE: &str =
    "usage: tsumo doctor [-c N] [-t N] [--proxy-pid PID] [--bind ADDRS] [-k] [--cacert FILE] [URL]";

/// The help page's prose around the option list.
const PAGE: Page = Page {
    before: "\
tsumo doctor — find the limits that would silently cap a run, before running it

Usage: tsumo doctor [options] [URL]

One line per check, each OK, WARN or FAIL; a line that is not OK ends with the exact
command or config line that fixes it. Checks: tsumo's own open-file limit, the ephemeral
port range for connections to one destination (URL's host:port, with the sockets already
open to it; times the source addresses of --bind, which must all be on this host),
net.core.somaxconn, the conntrack table (nf_conntrack_max against the entries in use plus
the planned connections), and with --proxy-pid an nginx's workers: their
open-file limit, worker_connections (read with the master's own binary and `-T`) and how
many proxied clients fit (each uses two connections: client side and upstream side).
With a URL, the target itself: it must accept a connection and, for https, complete a TLS
handshake with the certificate verified as a run would (-k, --cacert as for a run).

Exit status: 0 when nothing would cap the run (WARN included), 1 when a check FAILs,
2 for a bad command line (an option or value, a --proxy-pid that is not nginx's master).
",
    heading: "Options",
    column: 25,
    after: "\
Examples:
  tsumo doctor -c 4096 --proxy-pid $(cat /run/nginx.pid) http://127.0.0.1:8080/
  tsumo doctor -c 1k
",
};

/// Parses the arguments after the `doctor` word.
pub fn parse(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    let command = command();
    let matches = subcommand_matches(&command, args)?;
    if matches.get_flag("help") {
        return Ok(Parsed::Print(PAGE.render(&command)));
    }
    let options = super::Options {
        command: &command,
        matches: &matches,
    };
    let invalid = |id: &str, reason: &str| options.invalid(id, reason);
    let count = |id: &str, default: usize| -> Result<usize, ArgError> {
        match options.count(id)? {
            None => Ok(default),
            Some(0) => Err(invalid(id, "must be at least 1")),
            Some(n) => Ok(n),
        }
    };
    let connections = count("connections", DEFAULT_CONNECTIONS)?;
    let threads = count("threads", DEFAULT_THREADS)?;
    let proxy_pid = matches
        .get_one::<String>("proxy_pid")
        .map(|text| match text.parse::<u32>() {
            Ok(0) | Err(_) => Err(invalid("proxy_pid", "expected a process ID (a number ≥ 1)")),
            Ok(pid) => Ok(pid),
        })
        .transpose()?;
    let target = matches
        .get_one::<String>("url")
        .map(|text| {
            url::parse_url(text)
                .map_err(|r| ArgError::Refused(format!("invalid URL '{text}': {r}")))
        })
        .transpose()?;
    if let Some(extra) = extra_argument(&matches) {
        return Err(ArgError::Refused(format!(
            "unexpected argument '{extra}' ({USAGE})"
        )));
    }
    Ok(Parsed::Doctor(Box::new(DoctorPlan {
        connections,
        threads,
        proxy_pid,
        target,
        insecure: matches.get_flag("insecure"),
        cacert: matches.get_one::<PathBuf>("cacert").cloned(),
        bind: super::bind::parse(&matches)?,
        http3: matches.get_flag("http3"),
        rate: options.metric("rate")?,
    })))
}

/// The option table, in the help's order.
pub(super) fn command() -> Command {
    super::subcommand("tsumo doctor")
        .args([
            shared::connections(For::Doctor, DEFAULT_CONNECTIONS),
            shared::threads(For::Doctor, DEFAULT_THREADS),
            value("proxy_pid", None, "proxy-pid")
                .value_name("PID")
                .help("The master process of an nginx the traffic goes through"),
            super::bind::arg(For::Doctor),
            shared::insecure(For::Doctor),
            shared::cacert(For::Doctor),
            flag("http3", None, "http3").help(
                "The run speaks HTTP/3: check the target with a QUIC handshake, and\n\
                 the UDP receive buffer (net.core.rmem_max)",
            ),
            value("rate", Some('R'), "rate")
                .value_name("N")
                .help("The planned rate, requests/sec (the UDP receive buffer's check)"),
            shared::help(),
        ])
        .args(url_args())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<DoctorPlan, String> {
        match parse(args.iter().map(OsString::from).collect()) {
            Ok(Parsed::Doctor(plan)) => Ok(*plan),
            Ok(_) => Err("not a doctor plan".into()),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn defaults_and_options() {
        let p = run(&[]).expect("defaults");
        assert_eq!((p.connections, p.threads, p.proxy_pid), (10, 2, None));
        assert!(p.target.is_none());
        let p = run(&[
            "-c",
            "4k",
            "--proxy-pid",
            "77",
            "http://127.0.0.1:81/x",
            "-t4",
        ])
        .expect("options");
        assert_eq!((p.connections, p.threads, p.proxy_pid), (4000, 4, Some(77)));
        assert_eq!(p.target.map(|t| t.port()), Some(81));
    }

    #[test]
    fn help() {
        match parse(vec![OsString::from("-h")]) {
            Ok(Parsed::Print(text)) => {
                assert!(text.contains("Usage: tsumo doctor"));
                for arg in command().get_arguments() {
                    if let Some(long) = arg.get_long() {
                        assert!(text.contains(&format!("--{long}")), "--{long}");
                    }
                }
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn errors_are_one_line() {
        let cases: &[(&[&str], &str)] = &[
            (&["-c0"], "invalid value '0' for -c: must be at least 1"),
            (&["-c", "x"], "invalid value 'x' for -c:"),
            (
                &["--proxy-pid", "nginx"],
                "invalid value 'nginx' for --proxy-pid: expected a process ID",
            ),
            (&["--proxy-pid"], "option '--proxy-pid' needs a value"),
            (&["ftp://h"], "invalid URL 'ftp://h':"),
            (&["http://h", "extra"], "unexpected argument 'extra'"),
            (&["--bogus"], "unknown option '--bogus'"),
        ];
        for (args, want) in cases {
            let got = run(args).map(|p| format!("{p:?}")).expect_err("error");
            assert!(got.starts_with(want), "{args:?}: {got}");
            assert!(!got.contains('\n'), "{args:?}: {got:?}");
        }
    }
}
