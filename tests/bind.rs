//! `--bind`: connections spread over several source addresses, seen from a real nginx's access
//! log (`$remote_addr`), in both modes; a bad address stops the run with one line before any
//! traffic; `tsumo doctor` counts the port budget per source address.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::majiang::Majiang;
use common::nginx::{AccessLogLine, Nginx};
use common::run_tsumo;

const LIMIT: Duration = Duration::from_secs(60);

/// The source addresses both modes' runs are spread over.
const SOURCES: [&str; 2] = ["127.0.0.2", "127.0.0.3"];

/// `tsumo ARGS --bind 127.0.0.2,127.0.0.3 --json - --quiet URL`: its document, once it exited 0
/// and saved the addresses with its plan.
fn run_bound(args: &[&str], url: &str) -> serde_json::Value {
    let bind = SOURCES.join(",");
    let mut args = args.to_vec();
    args.extend(["--bind", &bind, "--json", "-", "--quiet", url]);
    let doc = run_tsumo(&args, LIMIT).assert_success().json();
    assert_eq!(doc["plan"]["bind"], serde_json::json!(SOURCES), "{doc:#}");
    doc
}

/// Requests and distinct connections in the access log from each of [`SOURCES`], in order; a
/// line from any other address fails the test.
fn per_source<'a>(log: impl IntoIterator<Item = &'a AccessLogLine>) -> [(usize, usize); 2] {
    let mut requests = [0; 2];
    let mut connections: [BTreeSet<u64>; 2] = Default::default();
    for line in log {
        let Some(i) = SOURCES.iter().position(|s| *s == line.remote_addr) else {
            panic!("a request from {}, not from {SOURCES:?}", line.remote_addr);
        };
        requests[i] += 1;
        connections[i].insert(line.connection);
    }
    [0, 1].map(|i| (requests[i], connections[i].len()))
}

#[test]
fn http_connections_alternate_over_two_source_addresses() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let doc = run_bound(&["-t2", "-c4", "-R200", "-d2s"], &url);
    let requests = common::json_u64(&doc, "counters.requests") as usize;
    assert_eq!(common::json_errors_total(&doc), 0, "{doc:#}");
    let log = nginx.access_log_wait(requests);
    // Two connections from each address, each carrying its schedule's share.
    let sources = per_source(&log);
    for (addr, (requests, connections)) in SOURCES.iter().zip(sources) {
        assert_eq!(connections, 2, "{addr}: {sources:?}");
        assert!(requests >= 150, "{addr}: {sources:?}");
    }
}

#[test]
fn mahjong_players_alternate_over_two_source_addresses() {
    let server = Majiang::start();
    let nginx = Nginx::builder().ws_proxy("majiang", server.port()).start();
    let url = format!("http://127.0.0.1:{}/server", nginx.port("majiang"));
    let args = [
        "mahjong", "-c8", "-t1", "--think", "0", "--ramp", "5ms", "-d", "3s",
    ];
    let doc = run_bound(&args, &url);
    for phase in ["login", "connect", "logout"] {
        assert_eq!(doc["phases"][phase]["ok"], 8, "{phase}: {doc:#}");
    }
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
    // Each player's login, socket and logout: four players from each address.
    let log = nginx.access_log_wait(3 * 8);
    for (what, filter) in [
        ("login", "/server/auth/"),
        ("logout", "/server/logout"),
        ("socket", "/server/socket.io/"),
    ] {
        let lines = log.iter().filter(|l| l.uri.starts_with(filter));
        let requests = per_source(lines).map(|(requests, _)| requests);
        assert_eq!(requests, [4, 4], "{what} requests from {SOURCES:?}");
    }
}

#[test]
fn bad_source_addresses_stop_before_any_traffic() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/");
    let majiang_url = format!("http://127.0.0.1:{}/server", nginx.http_port());
    let cases: [(&[&str], &str); 6] = [
        (
            &["--bind", "192.0.2.1", &url],
            "tsumo: --bind: this host has no address 192.0.2.1 (",
        ),
        (
            &["--bind", "127.0.0.2,192.0.2.7", "-d1s", &url],
            "tsumo: --bind: this host has no address 192.0.2.7",
        ),
        (
            &["mahjong", "--bind", "192.0.2.1", &majiang_url],
            "tsumo: --bind: this host has no address 192.0.2.1",
        ),
        (
            &["--bind", "10.0.0.0/8", &url],
            "tsumo: invalid value '10.0.0.0/8' for --bind: '10.0.0.0/8' holds 16777214 \
             addresses, more than 1024",
        ),
        (
            &["--bind", "localhost", &url],
            "tsumo: invalid value 'localhost' for --bind: 'localhost' is not an IP address",
        ),
        (
            &["--bind", "::1", &url],
            "tsumo: --bind: the source addresses are IPv6 but 127.0.0.1 has only IPv4 \
             addresses",
        ),
    ];
    for (args, want) in cases {
        let run = run_tsumo(args, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", run.stderr);
        assert!(run.stderr.starts_with(want), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
    }
    assert!(nginx.access_log().is_empty(), "{:?}", nginx.access_log());
}

/// The line of a check (`OK    ephemeral ports  …`).
fn line<'a>(stdout: &'a str, name: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l[6..].starts_with(name))
        .unwrap_or_else(|| panic!("no `{name}` line in:\n{stdout}"))
}

#[test]
fn doctor_counts_the_port_budget_per_source_address() {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").expect("range");
    let mut range = text
        .split_whitespace()
        .map(|s| s.parse::<u64>().expect("port"));
    let (low, high) = (range.next().expect("low"), range.next().expect("high"));
    let ports = high - low + 1;
    // One address more than one address's range carries.
    let connections = (ports + ports / 2).to_string();

    let alone = run_tsumo(&["doctor", "-c", &connections], LIMIT);
    let ephemeral = line(&alone.stdout, "ephemeral ports");
    assert!(ephemeral.starts_with("FAIL"), "{ephemeral}");
    assert!(
        ephemeral.contains("or --bind with 2 source addresses"),
        "{ephemeral}"
    );

    let bound = run_tsumo(
        &[
            "doctor",
            "-c",
            &connections,
            "--bind",
            "127.0.0.2,127.0.0.3",
        ],
        LIMIT,
    );
    let sources = line(&bound.stdout, "source addresses");
    assert!(sources.starts_with("OK"), "{sources}");
    assert!(
        sources.contains("2 (127.0.0.2 … 127.0.0.3), each on this host"),
        "{sources}"
    );
    let ephemeral = line(&bound.stdout, "ephemeral ports");
    assert!(!ephemeral.starts_with("FAIL"), "{ephemeral}");
    assert!(
        ephemeral.contains(&format!(
            "{ports} ports ({low}-{high}) × 2 source addresses = {}",
            2 * ports
        )),
        "{ephemeral}"
    );

    let missing = run_tsumo(&["doctor", "--bind", "127.0.0.2,192.0.2.1"], LIMIT);
    assert_eq!(missing.status.code(), Some(1), "{}", missing.stdout);
    let sources = line(&missing.stdout, "source addresses");
    assert!(sources.starts_with("FAIL"), "{sources}");
    assert!(
        sources.contains("this host has no address 192.0.2.1"),
        "{sources}"
    );
    assert!(sources.contains("fix: add the address"), "{sources}");
}
