//! tsumo against a real nginx (tests/common/nginx.rs): the rate it promises, the report wrk2 users
//! parse, and HTTPS with certificate verification on, off, and with a given CA.
//!
//! The first tests check the fixture itself with a plain client, so a failure there points at the
//! setup rather than at tsumo.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use common::nginx::{index_body, Nginx, INDEX_LEN};

/// Sends raw bytes, reads until the server closes, returns what came back.
fn exchange(stream: &mut impl ReadWrite, request: &[u8]) -> Vec<u8> {
    stream.write_all(request).expect("write request");
    let mut response = Vec::new();
    // rustls reports a close without close_notify as an error; what was read still counts.
    let _ = stream.read_to_end(&mut response);
    response
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect to nginx");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

fn assert_index_response(response: &[u8]) {
    let text = String::from_utf8_lossy(response);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(
        text.contains(&format!("Content-Length: {INDEX_LEN}\r\n")),
        "{text}"
    );
    assert!(response.ends_with(&index_body()), "body is not index.html");
}

#[test]
fn fixture_serves_index_over_http_and_logs_what_it_received() {
    let nginx = Nginx::start();
    let response = exchange(
        &mut connect(nginx.http_port()),
        b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_index_response(&response);

    // A POST with a body is answered with the page too (see the fixture's error_page).
    let body = [b'p'; 100];
    let mut post =
        b"POST /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nConnection: close\r\n\r\n"
            .to_vec();
    post.extend_from_slice(&body);
    assert_index_response(&exchange(&mut connect(nginx.http_port()), &post));

    let log = nginx.access_log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0].method, "GET");
    assert_eq!(log[0].uri, "/index.html");
    assert_eq!(log[0].status, 200);
    assert_eq!(log[0].request_length, 56);
    assert_eq!(log[0].content_length, None);
    assert_eq!(log[0].body_bytes_sent, INDEX_LEN as u64);
    assert_eq!(log[0].ssl_protocol, None);
    assert_eq!(log[1].method, "POST", "{log:?}");
    assert_eq!(log[1].status, 200);
    assert_eq!(log[1].content_length, Some(100));
}

#[test]
fn fixture_https_certificate_verifies_with_rustls() {
    let nginx = Nginx::start();
    let cert = {
        use rustls_pki_types::pem::PemObject;
        rustls_pki_types::CertificateDer::from_pem_file(nginx.cert_path()).expect("read cert")
    };
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).expect("add cert as root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    // Both names in the certificate: the IP the tests use, and localhost.
    for name in ["127.0.0.1", "localhost"] {
        let server_name = rustls_pki_types::ServerName::try_from(name)
            .unwrap()
            .to_owned();
        let conn = rustls::ClientConnection::new(Arc::new(config.clone()), server_name).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, connect(nginx.https_port()));
        let response = exchange(
            &mut tls,
            b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        assert_index_response(&response);
    }
    let log = nginx.access_log();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[0].ssl_protocol.is_some(), "{log:?}");
    assert_eq!(log[0].server_port, nginx.https_port());
}

#[test]
fn fixture_extra_server_block_gets_its_own_port() {
    let nginx = Nginx::builder()
        .server("teapot", "location / { return 418; }")
        .start();
    let response = exchange(
        &mut connect(nginx.port("teapot")),
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(
        response.starts_with(b"HTTP/1.1 418"),
        "{}",
        String::from_utf8_lossy(&response)
    );
}

/// Proves the fixture carries load from a known-good generator: `cargo test -- --ignored`.
#[test]
#[ignore = "needs wrk; a manual check of the fixture"]
fn fixture_carries_wrk_load_without_errors() {
    let nginx = Nginx::start();
    let out = std::process::Command::new("wrk")
        .args(["-t1", "-c2", "-d2s", &nginx.http_url("/index.html")])
        .output()
        .expect("run wrk");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("Socket errors"), "{text}");
    assert!(!text.contains("Non-2xx"), "{text}");
    // Two keep-alive connections, never closed by nginx during the run.
    let log = nginx.access_log();
    let connections: std::collections::HashSet<u64> = log.iter().map(|l| l.connection).collect();
    assert!(log.len() > 1000, "only {} requests", log.len());
    assert_eq!(connections.len(), 2, "{text}");
}
