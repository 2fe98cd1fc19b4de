//! UDP sockets as the kernel counts them, for HTTP/3: the receive buffer a QUIC socket asks for
//! and the limit the kernel holds it to (`net.core.rmem_max`), and the datagrams a socket's full
//! receive buffer dropped (`/proc/net/udp`'s `drops`, per socket), which QUIC must then recover
//! and quinn's own counts never show.

use std::collections::HashSet;

/// The receive buffer each QUIC socket of tsumo asks for (quic-go asks the same): room for the
/// datagrams that arrive while its thread is busy elsewhere. The kernel gives at most
/// `net.core.rmem_max`.
pub const QUIC_RECEIVE_BUFFER: usize = 2 << 20;

/// `net.core.rmem_max`, bytes: the largest receive buffer a socket may ask for.
pub fn rmem_max() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/net/core/rmem_max")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Asks the kernel for [`QUIC_RECEIVE_BUFFER`] on `socket` (held to `net.core.rmem_max`; a
/// refusal leaves the default, which the drops count then shows).
pub fn ask_receive_buffer(socket: &std::net::UdpSocket) {
    use std::os::fd::AsRawFd;
    let size = QUIC_RECEIVE_BUFFER as libc::c_int;
    // SAFETY: setsockopt on an open socket with a valid int option.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// The datagrams dropped so far by the UDP sockets bound to these local `ports` (IPv4 and IPv6).
pub fn drops(ports: &HashSet<u16>) -> u64 {
    if ports.is_empty() {
        return 0;
    }
    ["/proc/net/udp", "/proc/net/udp6"]
        .iter()
        .filter_map(|path| std::fs::read_to_string(path).ok())
        .map(|table| drops_in(&table, ports))
        .sum()
}

/// [`drops`] in one table of `/proc/net/udp`'s layout: `sl local_address rem_address st … drops`,
/// the local port in hexadecimal after the address's colon, drops last.
fn drops_in(table: &str, ports: &HashSet<u16>) -> u64 {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let port = fields.get(1)?.rsplit(':').next()?;
            let port = u16::from_str_radix(port, 16).ok()?;
            ports
                .contains(&port)
                .then(|| fields.last()?.parse::<u64>().ok())?
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_are_read_for_our_ports_only() {
        let table = "   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
             9297: 0100007F:20FB 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 1091742 2 000000008c43987a 3\n\
             9298: 00000000:C350 0100007F:20FB 01 00000000:00000000 00:00000000 00000000     0        0 1091743 2 000000008c43987b 40\n";
        let ours: HashSet<u16> = [0xC350].into_iter().collect();
        assert_eq!(drops_in(table, &ours), 40);
        let both: HashSet<u16> = [0xC350, 0x20FB].into_iter().collect();
        assert_eq!(drops_in(table, &both), 43);
    }

    #[test]
    fn a_socket_of_ours_is_found_with_no_drops() {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind a UDP socket");
        ask_receive_buffer(&socket);
        let port = socket.local_addr().expect("its address").port();
        assert_eq!(drops(&[port].into_iter().collect()), 0);
        assert!(rmem_max().is_some());
    }
}
