//! The machine's side of `tsumo doctor`: tsumo's own open-file limit and the kernel settings a
//! run of N connections can exhaust (the local port range, the listen backlog cap, the
//! connection-tracking table). Each check reads /proc and returns one report line.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::Path;

use super::{show_limit, Check, DoctorPlan, Verdict};
use crate::sys::fds_needed;

fn read_sysctl(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn read_number(path: &str) -> Option<u64> {
    read_sysctl(path)?.parse().ok()
}

/// tsumo's own RLIMIT_NOFILE against its sockets plus headroom.
pub(super) fn open_files(plan: &DoctorPlan) -> Check {
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

/// The local port range against N connections to one destination: each (source address,
/// destination) pair has its own set of ports, so the budget is the range times the source
/// addresses (`--bind`; one without it).
pub(super) fn ephemeral_ports(plan: &DoctorPlan) -> Check {
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
    let sources = plan.bind.len().max(1) as u64;
    let budget = range * sources;
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
    let free = budget.saturating_sub(in_use);
    let busy = if in_use > 0 {
        format!(", {in_use} already in use")
    } else {
        String::new()
    };
    let per_source = match plan.bind.len() {
        0 => String::new(),
        1 => " from 1 source address".to_string(),
        n => format!(" × {n} source addresses = {budget}"),
    };
    let finding = format!(
        "{range} ports ({low}-{high}{busy}){per_source} for {c} connections {to}; \
         tcp_tw_reuse={tw_reuse}"
    );
    if c > free {
        // Addresses needed at the present range, and at the widest one.
        let needed = (c + in_use).div_ceil(range);
        let fix = if c + in_use <= 64511 * sources {
            let wider = (c + in_use).div_ceil(64511);
            format!(
                "`sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"` (then {wider} source \
                 address{}), or --bind with {needed} source addresses",
                if wider == 1 { "" } else { "es" }
            )
        } else {
            format!(
                "--bind with {needed} source addresses (or {} with the port range widened to \
                 1024-65535): one (source, destination) pair has at most 64511 ports",
                (c + in_use).div_ceil(64511)
            )
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
pub(super) fn somaxconn(plan: &DoctorPlan) -> Check {
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
/// `--http3`: the receive buffer each QUIC socket asks for, against `net.core.rmem_max`; with
/// `-R`, whether one connection's datagrams of a 10 ms stall of its thread fit (each response
/// at least one full-size datagram, 1,252 bytes, which the kernel charges about 2,304 bytes
/// against twice the buffer asked for). A full buffer drops datagrams that QUIC must recover.
pub(super) fn udp_receive_buffer(plan: &DoctorPlan) -> Option<Check> {
    if !plan.http3 {
        return None;
    }
    let name = "UDP receive buffer";
    let asked = crate::sys::udp::QUIC_RECEIVE_BUFFER as u64;
    let Some(max) = crate::sys::udp::rmem_max() else {
        return Some(Check::not_ok(
            Verdict::Warn,
            name,
            "cannot read /proc/sys/net/core/rmem_max".to_string(),
            "`sysctl net.core.rmem_max`".to_string(),
        ));
    };
    let given = max.min(asked);
    let fix = |bytes: u64| format!("`sysctl -w net.core.rmem_max={bytes}`");
    let finding = format!(
        "net.core.rmem_max {max}: each QUIC socket gets {} KiB of the {} KiB it asks for",
        given >> 10,
        asked >> 10
    );
    if let Some(rate) = plan.rate {
        let per_connection = rate as f64 / plan.connections.max(1) as f64;
        let datagrams = (per_connection * 0.010).ceil() as u64;
        let needed = datagrams * 2_304;
        if needed > 2 * given {
            let suggest = needed.div_ceil(2).next_power_of_two();
            return Some(Check::not_ok(
                Verdict::Fail,
                name,
                format!(
                    "{finding}; at -R {rate} over -c {}, {datagrams} datagrams reach one socket \
                     in 10 ms and overflow it",
                    plan.connections
                ),
                format!("{} (or more connections, -c)", fix(suggest)),
            ));
        }
    }
    Some(match max < asked {
        true => Check::not_ok(Verdict::Warn, name, finding, fix(asked)),
        false => Check::ok(name, finding),
    })
}

pub(super) fn conntrack(plan: &DoctorPlan) -> Check {
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

#[cfg(test)]
mod tests {
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
}
