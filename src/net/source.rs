//! Source addresses (`--bind`): which one a connection uses, and the socket bound to it before
//! the connect.
//!
//! Why: one (source address, destination) pair has at most the local port range of ports
//! (about 28,000 by default), so one generator address caps a run at that many connections to a
//! server. Connections are spread round-robin over the addresses by their number in this
//! process, so every address carries an equal share; a reconnect keeps its address. The socket
//! is bound with `IP_BIND_ADDRESS_NO_PORT`: the kernel then picks the port at connect time, per
//! destination, instead of reserving one at bind time for every destination at once.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;

use tokio::net::{TcpSocket, TcpStream};

/// The source address of connection number `slot` (counted in this process): round-robin over
/// `sources`; `None` (the kernel chooses) when there are none.
pub fn pick(sources: &[IpAddr], slot: usize) -> Option<IpAddr> {
    (!sources.is_empty()).then(|| sources[slot % sources.len()])
}

/// A TCP connection to `addr`, from `source` when given.
pub async fn connect(addr: SocketAddr, source: Option<IpAddr>) -> io::Result<TcpStream> {
    match source {
        None => TcpStream::connect(addr).await,
        Some(ip) => bound_socket(ip)?.connect(addr).await,
    }
}

/// A socket bound to `ip` with the port left to the connect.
fn bound_socket(ip: IpAddr) -> io::Result<TcpSocket> {
    let socket = match ip {
        IpAddr::V4(_) => TcpSocket::new_v4()?,
        IpAddr::V6(_) => TcpSocket::new_v6()?,
    };
    let on: libc::c_int = 1;
    // SAFETY: a valid socket descriptor, and a pointer to an int that outlives the call.
    let set = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            std::ptr::addr_of!(on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if set != 0 {
        return Err(io::Error::last_os_error());
    }
    socket.bind(SocketAddr::new(ip, 0))?;
    Ok(socket)
}

/// Why `ip` cannot be a source address on this host, if it cannot: it is bound once, as every
/// connection will be. The reason says what to do.
pub fn unusable(ip: IpAddr) -> Option<String> {
    let error = bound_socket(ip).err()?;
    Some(match error.raw_os_error() {
        Some(libc::EADDRNOTAVAIL) => format!(
            "this host has no address {ip} ({error}); `ip -brief address` lists the ones it has, \
             `ip address add {ip}/32 dev DEVICE` adds one"
        ),
        _ => format!("cannot bind a socket to {ip}: {error}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_by_slot() {
        let sources: Vec<IpAddr> = vec![[127, 0, 0, 2].into(), [127, 0, 0, 3].into()];
        let picked: Vec<_> = (0..5).map(|slot| pick(&sources, slot)).collect();
        assert_eq!(
            picked,
            [0, 1, 0, 1, 0].map(|i| Some(sources[i])),
            "alternating"
        );
        assert_eq!(pick(&[], 7), None);
    }

    #[test]
    fn loopback_addresses_bind_and_foreign_ones_do_not() {
        assert_eq!(unusable([127, 0, 0, 3].into()), None);
        // TEST-NET-1 (RFC 5737) is on no host.
        let reason = unusable([192, 0, 2, 1].into()).expect("not on this host");
        assert!(
            reason.starts_with("this host has no address 192.0.2.1"),
            "{reason}"
        );
    }
}
