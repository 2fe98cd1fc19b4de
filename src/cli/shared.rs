//! The options several command lines take, each defined once: its names, its value, and its
//! help in every command that shows it (a command whose help says something of its own names
//! itself with [`For`], and the sentence is chosen here beside the others). Also the two
//! builders every option table is made of, and the option defaults a help shows as text.
//!
//! An option's own command defines the rest (`-R` in `wrk`, `--seats` in `mahjong`), and the
//! help lists are rendered from the tables by `help`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Arg, ArgAction};

use super::error::ArgError;
use super::units::duration_text;
use crate::stats::timeline::{DEFAULT_INTERVAL, MIN_INTERVAL};

/// The command whose table a shared option is in, for the help it shows there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum For {
    /// The wrk2 line, an HTTP run (`tsumo [options] <url>`).
    Run,
    /// A mahjong session, and its search over players (`tsumo mahjong`).
    Mahjong,
    /// The search over rates (`tsumo capacity`).
    Capacity,
    /// The pre-flight checks (`tsumo doctor`).
    Doctor,
    /// `tsumo merge`.
    Merge,
    /// `tsumo plot`.
    Plot,
    /// `tsumo report`.
    Report,
}

/// An option that takes a value. As with getopt, the next word is the value whatever it looks
/// like (`-t -1`, `--json -`); values stay strings: our parsers give better errors than clap's.
pub(super) fn value(id: &'static str, short: Option<char>, long: &'static str) -> Arg {
    Arg::new(id)
        .short(short)
        .long(long)
        .action(ArgAction::Set)
        .num_args(1)
        .allow_hyphen_values(true)
}

/// An option without a value.
pub(super) fn flag(id: &'static str, short: Option<char>, long: &'static str) -> Arg {
    Arg::new(id)
        .short(short)
        .long(long)
        .action(ArgAction::SetTrue)
}

/// An option naming a file (clap refuses an empty name).
pub(super) fn file(id: &'static str, short: Option<char>, long: &'static str) -> Arg {
    value(id, short, long)
        .value_name("FILE")
        .value_parser(clap::value_parser!(PathBuf))
}

/// `-h, --help`, every command's.
pub(super) fn help() -> Arg {
    flag("help", Some('h'), "help").help("Print this help")
}

/// `-t, --threads <N>`.
pub(super) fn threads(command: For, default: usize) -> Arg {
    let help = match command {
        For::Mahjong => format!("Worker threads [default: {default}]; a table lives on one thread"),
        For::Doctor => format!("Planned worker threads [default: {default}]"),
        _ => format!("Number of worker threads [default: {default}]"),
    };
    value("threads", Some('t'), "threads")
        .value_name("N")
        .help(help)
}

/// `-c, --connections <N>` (a mahjong session's `-c` is `--players`).
pub(super) fn connections(command: For, default: usize) -> Arg {
    let help = match command {
        For::Doctor => format!("Planned connections (or mahjong players) [default: {default}]"),
        _ => format!(
            "Total connections to keep open [default: {default}]. Spread over the\n\
             threads (the remainder goes to the first ones); at least -t."
        ),
    };
    value("connections", Some('c'), "connections")
        .value_name("N")
        .help(help)
}

/// `-d, --duration <T>`.
pub(super) fn duration(command: For, default: Duration) -> Arg {
    let default = duration_text(default);
    let help = match command {
        For::Mahjong => format!(
            "Longest the session may last [default: {default}]; players still\n\
             playing then are logged out"
        ),
        _ => format!("Duration of the test [default: {default}]"),
    };
    value("duration", Some('d'), "duration")
        .value_name("T")
        .help(help)
}

/// `-L, --latency`.
pub(super) fn latency(command: For) -> Arg {
    flag("latency", Some('L'), "latency").help(match command {
        For::Mahjong => "Print each phase's latency distribution",
        _ => "Print the latency distribution and percentile spectrum",
    })
}

/// `-k, --insecure`.
pub(super) fn insecure(command: For) -> Arg {
    flag("insecure", Some('k'), "insecure").help(match command {
        For::Mahjong => "Do not verify the server's certificate (https://, wss://)",
        For::Doctor => "Do not verify the target's TLS certificate",
        _ => "Do not verify the server's TLS certificate",
    })
}

/// `--cacert <FILE>`.
pub(super) fn cacert(command: For) -> Arg {
    file("cacert", None, "cacert").help(match command {
        For::Run => "Also trust this PEM file's certificates (CAs, or the server's own)",
        _ => "Also trust the certificates in this PEM file",
    })
}

/// `--json <FILE>`: the results as JSON, `-` for stdout.
pub(super) fn json(command: For) -> Arg {
    file("json", None, "json").help(match command {
        For::Mahjong => "Write the results as JSON (`-` for stdout)",
        For::Capacity => "Write `capacity` (the answer) and `steps` (each step's full run)",
        _ => {
            "Write the results as JSON to FILE; '-' writes them to stdout\n\
             instead of the text report"
        }
    })
}

/// `--html <FILE>`: the result's page.
pub(super) fn html(command: For) -> Arg {
    file("html", None, "html").help(match command {
        For::Mahjong => {
            "Also write the session's page (one self-contained HTML file;\n\
             with --vs, the comparison's)"
        }
        For::Capacity => {
            "Also write the search's page: the answer, and each objective's\n\
             measure against offered load with the objective and answer marked"
        }
        _ => {
            "Also write the run's page: one self-contained HTML file, the answer\n\
             first, then charts of the run over time (with --vs: the comparison)"
        }
    })
}

/// `--junit <FILE>`: the objectives' verdicts as JUnit XML, for a CI page.
pub(super) fn junit(command: For) -> Arg {
    file("junit", None, "junit").help(match command {
        For::Capacity => {
            "Also write each step's objectives as JUnit XML (one suite per\n\
             step), for a CI system's test page"
        }
        _ => {
            "Also write each objective's verdict as JUnit XML (a test case\n\
             each, its measured value in the message), for a CI test page"
        }
    })
}

/// `--quiet`.
pub(super) fn quiet(command: For) -> Arg {
    flag("quiet", None, "quiet").help(match command {
        For::Mahjong => "No text report on stdout",
        _ => "Do not print the text report",
    })
}

/// `--progress`.
pub(super) fn progress(command: For) -> Arg {
    flag("progress", None, "progress").help(match command {
        For::Mahjong => "Live status line on stderr even when it is not a terminal",
        _ => "Show the live status line on stderr even when it is not a terminal",
    })
}

/// `--label <NAME>`.
pub(super) fn label(command: For) -> Arg {
    value("label", None, "label")
        .value_name("NAME")
        .help(match command {
            For::Mahjong => "Name of the run in reports [default: the URL]",
            For::Merge => "Label of the merged run [default: merged (N runs)]",
            _ => "Name of the run in reports and comparisons [default: the URL]",
        })
}

/// `--server-pid <PID>`, repeatable.
pub(super) fn server_pid() -> Arg {
    value("server_pid", None, "server-pid")
        .action(ArgAction::Append)
        .value_name("PID")
        .help(
            "Sample this server process (and its children) once a second: CPU\n\
             and memory in the report. Repeatable.",
        )
}

/// `--interval <T>`.
pub(super) fn interval(command: For) -> Arg {
    let (default, least) = (duration_text(DEFAULT_INTERVAL), duration_text(MIN_INTERVAL));
    let help = match command {
        For::Mahjong => format!(
            "Also record the session interval by interval, in --json's\n\
             `intervals` [default: {default}; at least {least}]"
        ),
        _ => format!(
            "Also record the run interval by interval, in --json's `intervals`\n\
             [default: {default}; at least {least}]"
        ),
    };
    value("interval", None, "interval")
        .value_name("T")
        .help(help)
}

/// `--vs <URL>`: an A/B comparison.
pub(super) fn vs(command: For) -> Arg {
    value("vs", None, "vs")
        .value_name("URL")
        .help(match command {
            For::Mahjong => {
                "Run the same session against a second server too, alternating\n\
                 in rounds, and end with the comparison table (see --rounds)"
            }
            _ => {
                "Run the same load against URL too, alternating with the first URL\n\
                 in rounds, and end with the comparison table (see --rounds)"
            }
        })
}

/// `--vs-label <NAME>`.
pub(super) fn vs_label(command: For) -> Arg {
    value("vs_label", None, "vs-label")
        .value_name("NAME")
        .help(match command {
            For::Mahjong => "Name of the --vs session [default: its URL]",
            _ => "Name of the --vs run [default: its URL]",
        })
}

/// `--rounds <N>` of an A/B comparison.
pub(super) fn rounds(default: usize) -> Arg {
    value("rounds", None, "rounds")
        .value_name("N")
        .help(format!(
            "Rounds of the --vs comparison [default: {default}]"
        ))
}

/// `--dashboard <ADDR>`: the live page and `/metrics`.
pub(super) fn dashboard() -> Arg {
    value("dashboard", None, "dashboard")
        .value_name("ADDR")
        .help(
            "Serve a live page of the run at ADDR (PORT, or HOST:PORT of this\n\
             machine; 127.0.0.1 when only a port: --dashboard 5665), and\n\
             /metrics for Prometheus on the same listener. The final page is\n\
             the same as --html's",
        )
}

/// `--prometheus-rw <URL>`.
pub(super) fn prometheus_rw() -> Arg {
    value("prometheus_rw", None, "prometheus-rw")
        .value_name("URL")
        .help(
            "Push the same series as /metrics once a second with Prometheus\n\
             remote write (http://host:9090/api/v1/write), for a generator\n\
             nothing scrapes",
        )
}

/// `--prometheus-rw` as given.
pub(super) fn remote_write(
    options: &super::Options<'_>,
) -> Result<Option<crate::plan::Target>, ArgError> {
    options
        .matches
        .get_one::<String>("prometheus_rw")
        .map(|text| {
            super::url::parse_url(text).map_err(|reason| options.invalid("prometheus_rw", &reason))
        })
        .transpose()
}

/// `--dashboard-linger <T>`.
pub(super) fn dashboard_linger() -> Arg {
    value("dashboard_linger", None, "dashboard-linger")
        .value_name("T")
        .help("Keep the dashboard up this long after the end [default: 0s]")
}

/// `--dashboard` and `--dashboard-linger` as given (the address is bound when the command
/// starts, before any traffic: one in use, or not this machine's, is refused then).
pub(super) fn dashboard_at(
    options: &super::Options<'_>,
) -> Result<Option<crate::plan::DashboardAt>, ArgError> {
    let linger = options.duration("dashboard_linger")?;
    let Some(text) = options.matches.get_one::<String>("dashboard") else {
        if linger.is_some() {
            return Err(ArgError::Refused(
                "--dashboard-linger needs --dashboard".to_string(),
            ));
        }
        return Ok(None);
    };
    let addr = dashboard_addr(text).map_err(|reason| options.invalid("dashboard", reason))?;
    Ok(Some(crate::plan::DashboardAt {
        addr,
        linger: linger.unwrap_or_default(),
    }))
}

/// `5665`, `:5665`, `127.0.0.1:5665`, `[::1]:5665`, `localhost:5665`.
fn dashboard_addr(text: &str) -> Result<std::net::SocketAddr, &'static str> {
    use std::net::{IpAddr, Ipv4Addr, SocketAddr};
    let port_only = text.strip_prefix(':').unwrap_or(text);
    if let Ok(port) = port_only.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    match text.rsplit_once(':') {
        Some(("localhost", port)) => port
            .parse::<u16>()
            .map(|port| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))
            .map_err(|_| "the port must be a number from 0 to 65535"),
        Some((_, port)) if port.parse::<u16>().is_err() => {
            Err("the port must be a number from 0 to 65535")
        }
        _ => Err("must be PORT or IP:PORT of this machine (127.0.0.1:5665)"),
    }
}

#[cfg(test)]
mod dashboard_tests {
    use super::dashboard_addr;

    #[test]
    fn a_dashboard_address_is_a_port_or_an_address_of_this_machine() {
        assert_eq!(
            dashboard_addr("5665").unwrap().to_string(),
            "127.0.0.1:5665"
        );
        assert_eq!(dashboard_addr(":0").unwrap().to_string(), "127.0.0.1:0");
        assert_eq!(
            dashboard_addr("localhost:80").unwrap().to_string(),
            "127.0.0.1:80"
        );
        assert_eq!(dashboard_addr("[::1]:9").unwrap().to_string(), "[::1]:9");
        assert!(dashboard_addr("127.0.0.1:99999").is_err());
        assert!(dashboard_addr("example:80").is_err());
        assert!(dashboard_addr("nonsense").is_err());
    }
}
