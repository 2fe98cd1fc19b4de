//! `--bind ADDR[,ADDR…]` or a CIDR (`--bind 10.0.0.0/28`), shared by the HTTP, mahjong and
//! doctor command lines: the source addresses a run's connections are spread over.
//!
//! Why: the kernel gives one (source address, destination) pair at most the local port range
//! (about 28,000 ports by default), so one generator address caps a run at that many
//! connections to one server. Several source addresses multiply the budget (Tsung's `iprange`,
//! k6's `--local-ips`). Whether the host has the addresses is checked later, before traffic
//! (the pre-flight binds each one); here only the text is checked.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use clap::{Arg, ArgMatches};

use super::error::ArgError;
use super::shared::{value, For};
use super::units;

/// The most source addresses one `--bind` may give: a /22 of IPv4 (1,022 hosts) fits. More
/// addresses than this are a typing mistake, not a load test (each brings ~28,000 ports).
pub const MAX_SOURCES: usize = 1024;

/// The option, for every command's table.
pub(super) fn arg(command: For) -> Arg {
    value("bind", None, "bind")
        .value_name("ADDRS")
        .help(match command {
            For::Mahjong => {
                "Source addresses, one after another by player (its login,\n\
                 socket and logout): 127.0.0.2,127.0.0.3 or a CIDR such as\n\
                 10.0.0.0/28. Each address has its own port range."
            }
            For::Doctor => {
                "The run's source addresses (127.0.0.2,127.0.0.3 or a CIDR): each\n\
                 must be on this host, and each brings its own port range"
            }
            _ => {
                "Source addresses to connect from, one after another by connection:\n\
                 127.0.0.2,127.0.0.3 or a CIDR such as 10.0.0.0/28 (its hosts).\n\
                 Each address has its own local port range (about 28,000 ports)\n\
                 per destination, so N addresses carry N times the connections."
            }
        })
}

/// `--bind`, if given: the addresses in order, checked.
pub(super) fn parse(matches: &ArgMatches) -> Result<Vec<IpAddr>, ArgError> {
    match matches.get_one::<String>("bind") {
        None => Ok(Vec::new()),
        Some(text) => parse_sources(text).map_err(|reason| ArgError::Invalid {
            option: "--bind".to_string(),
            value: units::one_line(text),
            reason,
        }),
    }
}

/// `127.0.0.2,127.0.0.3`, `10.0.0.0/29`, or a mix: addresses of one family, each once.
pub fn parse_sources(text: &str) -> Result<Vec<IpAddr>, String> {
    let mut all = Vec::new();
    let mut seen = BTreeSet::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err("expected addresses separated by commas, or a CIDR such as \
                        10.0.0.0/28, with no empty item"
                .to_string());
        }
        for addr in item_addresses(item)? {
            if !usable(addr) {
                return Err(format!(
                    "{addr} cannot be a source address (unspecified, multicast or broadcast)"
                ));
            }
            if !seen.insert(addr) {
                return Err(format!("{addr} is given twice"));
            }
            all.push(addr);
            if all.len() > MAX_SOURCES {
                return Err(format!(
                    "more than {MAX_SOURCES} addresses; give a smaller range (a /22 of IPv4 \
                     holds 1,022), each address adds a whole port range"
                ));
            }
        }
    }
    if all.iter().any(IpAddr::is_ipv4) && all.iter().any(IpAddr::is_ipv6) {
        return Err(
            "IPv4 and IPv6 addresses mixed: a connection's source and destination \
                    are of one family, give the family of the target"
                .to_string(),
        );
    }
    Ok(all)
}

/// One item: an address, or every host address of a CIDR block.
fn item_addresses(item: &str) -> Result<Vec<IpAddr>, String> {
    let Some((addr, prefix)) = item.split_once('/') else {
        return item
            .parse::<IpAddr>()
            .map(|a| vec![a])
            .map_err(|_| format!("'{item}' is not an IP address"));
    };
    let addr: IpAddr = addr
        .parse()
        .map_err(|_| format!("'{item}': '{addr}' is not an IP address"))?;
    let bits = if addr.is_ipv4() { 32 } else { 128 };
    let prefix: u32 = prefix
        .parse()
        .ok()
        .filter(|p| *p <= bits)
        .ok_or_else(|| format!("'{item}': the prefix length must be 0 to {bits}"))?;
    let host_bits = bits - prefix;
    // Checked before expanding: a /8 must not allocate 16 million addresses first.
    let size = 1u128.checked_shl(host_bits).unwrap_or(u128::MAX);
    let hosts = if addr.is_ipv4() && host_bits >= 2 {
        size - 2
    } else {
        size
    };
    if hosts > MAX_SOURCES as u128 {
        return Err(format!(
            "'{item}' holds {hosts} addresses, more than {MAX_SOURCES}; use a longer prefix \
             (/{} at most for IPv4)",
            32 - MAX_SOURCES.ilog2()
        ));
    }
    Ok(match addr {
        IpAddr::V4(v4) => {
            let network = u32::from(v4) & !(((1u64 << host_bits) - 1) as u32);
            // Without the network and broadcast addresses, except in a /31 or /32.
            let (first, last) = if host_bits >= 2 {
                (1, size - 2)
            } else {
                (0, size - 1)
            };
            (first..=last)
                .map(|i| IpAddr::V4(Ipv4Addr::from(network | i as u32)))
                .collect()
        }
        IpAddr::V6(v6) => {
            let network = u128::from(v6) & !(size - 1);
            (0..size)
                .map(|i| IpAddr::V6(Ipv6Addr::from(network | i)))
                .collect()
        }
    })
}

fn usable(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => !(v4.is_unspecified() || v4.is_multicast() || v4.is_broadcast()),
        IpAddr::V6(v6) => !(v6.is_unspecified() || v6.is_multicast()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Vec<String> {
        match parse_sources(text) {
            Ok(list) => list.iter().map(ToString::to_string).collect(),
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn err(text: &str) -> String {
        match parse_sources(text) {
            Ok(list) => panic!("{text} parsed: {list:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn lists_and_blocks() {
        assert_eq!(ok("127.0.0.2"), ["127.0.0.2"]);
        assert_eq!(ok("127.0.0.2, 127.0.0.3"), ["127.0.0.2", "127.0.0.3"]);
        assert_eq!(
            ok("10.77.0.0/29"),
            [
                "10.77.0.1",
                "10.77.0.2",
                "10.77.0.3",
                "10.77.0.4",
                "10.77.0.5",
                "10.77.0.6"
            ]
        );
        // Host bits are ignored, as `ip route` does; /31 and /32 keep every address.
        assert_eq!(ok("10.0.0.5/30"), ["10.0.0.5", "10.0.0.6"]);
        assert_eq!(ok("10.0.0.4/31"), ["10.0.0.4", "10.0.0.5"]);
        assert_eq!(ok("10.0.0.9/32"), ["10.0.0.9"]);
        assert_eq!(
            ok("10.0.0.0/30,10.0.1.7"),
            ["10.0.0.1", "10.0.0.2", "10.0.1.7"]
        );
        assert_eq!(ok("::1"), ["::1"]);
        assert_eq!(ok("fd00::/127"), ["fd00::", "fd00::1"]);
        assert_eq!(ok("10.0.0.0/22").len(), 1022);
    }

    #[test]
    fn mistakes() {
        assert!(err("localhost").contains("'localhost' is not an IP address"));
        assert!(err("127.0.0.2,").contains("no empty item"));
        assert!(err("10.0.0.0/33").contains("prefix length must be 0 to 32"));
        assert!(err("10.0.0.0/x").contains("prefix length"));
        let big = err("10.0.0.0/8");
        assert!(big.contains("16777214 addresses, more than 1024"), "{big}");
        assert!(big.contains("/22"), "{big}");
        assert!(err("fd00::/64").contains("more than 1024"));
        assert!(err("0.0.0.0/0").contains("more than 1024"));
        assert!(err("127.0.0.2,127.0.0.0/30").contains("127.0.0.2 is given twice"));
        assert!(err("0.0.0.0").contains("cannot be a source address"));
        assert!(err("224.0.0.1").contains("cannot be a source address"));
        assert!(err("127.0.0.2,::1").contains("mixed"));
    }
}
