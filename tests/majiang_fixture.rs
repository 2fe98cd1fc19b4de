//! The majiang-server fixture and the nginx WebSocket proxy in front of it, checked with a plain
//! `TcpStream` client before the mahjong mode relies on them: a login makes a session file and a
//! logout removes it, the socket.io WebSocket upgrade answers with the Engine.IO open packet, the
//! same works through nginx, and the server is reachable on 127.0.0.1 only.

mod common;

use std::net::{IpAddr, SocketAddr, TcpStream};
use std::time::Duration;

use common::majiang::{self, Majiang, WEBSOCKET_ACCEPT};
use common::nginx::Nginx;

/// How long a logout may take to delete its session file (the store deletes it after answering).
const STORE_LAG: Duration = Duration::from_secs(3);

/// Logs `name` in and out on `port` (the server's, or nginx's in front of it), checking the
/// answers and that the session file comes and goes.
fn login_and_logout(server: &Majiang, port: u16, name: &str) {
    let before = server.session_files();
    let cookie = majiang::login(port, name);
    assert!(
        cookie.starts_with("s%3A"),
        "cookie {cookie:?} is not a signed session id"
    );
    assert_eq!(
        server.session_files(),
        before + 1,
        "login of {name} stored no session file"
    );

    let answer = majiang::logout(port, &cookie);
    assert_eq!(answer.status, 302, "logout answer:\n{}", answer.head);
    assert_eq!(
        answer.majiang_cookie(),
        Some(""),
        "logout did not clear the cookie:\n{}",
        answer.head
    );
    assert_eq!(
        server.wait_session_files(before, STORE_LAG),
        before,
        "the session file of {name} outlived its logout"
    );
}

/// Logs in, upgrades to a WebSocket on `port` and reads the Engine.IO open packet, then logs out.
fn websocket_open(server: &Majiang, port: u16, name: &str) {
    let before = server.session_files();
    let cookie = majiang::login(port, name);
    let (head, mut stream) = majiang::websocket_upgrade(port, &cookie);
    assert_eq!(head.status, 101, "upgrade answer:\n{}", head.head);
    assert!(head.head.starts_with("HTTP/1.1 101 Switching Protocols"));
    assert_eq!(
        head.header("sec-websocket-accept"),
        Some(WEBSOCKET_ACCEPT),
        "{}",
        head.head
    );
    assert!(head
        .header("upgrade")
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket")));

    let frame = majiang::read_frame(&mut stream);
    let text = String::from_utf8_lossy(&frame.payload);
    assert!(
        frame.fin && frame.opcode == 1 && !frame.masked,
        "not an unmasked text frame: {frame:?}"
    );
    assert!(
        text.starts_with("0{\"sid\""),
        "first frame is not the Engine.IO open packet: {text}"
    );
    drop(stream);

    let answer = majiang::logout(port, &cookie);
    assert_eq!(answer.status, 302, "logout answer:\n{}", answer.head);
    assert_eq!(
        server.wait_session_files(before, STORE_LAG),
        before,
        "the session file of {name} outlived its logout"
    );
}

#[test]
fn login_logout_and_websocket_direct_and_through_nginx() {
    let server = Majiang::start();
    let nginx = Nginx::builder().ws_proxy("majiang", server.port()).start();
    let proxy = nginx.port("majiang");
    assert!(server
        .url()
        .ends_with(&format!(":{}/server", server.port())));
    assert!(
        server.log().contains(&format!(
            "Server start on http://127.0.0.1:{}/server/",
            server.port()
        )),
        "{}",
        server.log()
    );
    assert_eq!(server.session_files(), 0);

    login_and_logout(&server, server.port(), "alice");
    login_and_logout(&server, proxy, "bob");
    websocket_open(&server, server.port(), "carol");
    websocket_open(&server, proxy, "dave");

    assert_eq!(
        server.wait_session_files(0, STORE_LAG),
        0,
        "sessions left after every player logged out"
    );
    let proxied: Vec<_> = nginx
        .access_log_wait(4)
        .into_iter()
        .map(|l| (l.method, l.uri, l.status))
        .collect();
    assert!(
        proxied.contains(&(
            "GET".to_string(),
            "/server/socket.io/?EIO=4&transport=websocket".to_string(),
            101
        )),
        "nginx logged no WebSocket upgrade: {proxied:?}\n{}",
        nginx.error_log()
    );
}

#[test]
fn server_listens_on_loopback_only() {
    let server = Majiang::start();
    let port = server.port();
    let others: Vec<IpAddr> = common::non_loopback_ipv4()
        .into_iter()
        .map(IpAddr::V4)
        .chain([IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1])])
        .collect();
    for ip in others {
        let addr = SocketAddr::new(ip, port);
        let result = TcpStream::connect_timeout(&addr, Duration::from_secs(1));
        assert!(
            result.is_err(),
            "majiang-server answers on {addr}, not only on 127.0.0.1"
        );
    }
    // The same port on 127.0.0.1 does answer: the refusals above are not a dead server.
    majiang::connect(port);
}
