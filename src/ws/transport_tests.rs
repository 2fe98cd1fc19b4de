//! The socket against a hand-written server on 127.0.0.1: the upgrade, masked client frames,
//! pings answered, both close handshakes, long messages, and a wrong accept refused.

use super::*;
use crate::ws::codec::tests::frame;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads one client frame: (first byte, payload unmasked). Panics if it is not masked.
async fn read_client_frame(stream: &mut TcpStream) -> (u8, Vec<u8>) {
    let mut head = [0u8; 2];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(head[1] & 0x80, 0x80, "client frame not masked");
    let len = match head[1] & 0x7F {
        126 => stream.read_u16().await.unwrap() as usize,
        127 => stream.read_u64().await.unwrap() as usize,
        short => short as usize,
    };
    let mut mask = [0u8; 4];
    stream.read_exact(&mut mask).await.unwrap();
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).await.unwrap();
    codec::apply_mask(&mut payload, mask);
    (head[0], payload)
}

/// Accepts one connection and answers its upgrade (with a wrong accept if `wrong_accept`),
/// followed at once by `after` in the same write. Returns the stream and the request head.
async fn accept(listener: &TcpListener, wrong_accept: bool, after: &[u8]) -> (TcpStream, String) {
    let (mut stream, _) = listener.accept().await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(stream.read_u8().await.unwrap());
    }
    let head = String::from_utf8(head).unwrap();
    let key = head
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .unwrap();
    let accept = if wrong_accept {
        handshake::accept("something else")
    } else {
        handshake::accept(key)
    };
    let mut answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {accept}\r\n\r\n"
    )
    .into_bytes();
    answer.extend_from_slice(after);
    stream.write_all(&answer).await.unwrap();
    (stream, head)
}

async fn listener() -> (TcpListener, Endpoint, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let url = format!("ws://{addr}/socket.io/?EIO=4&transport=websocket");
    (
        listener,
        Endpoint {
            addr,
            tls: None,
            source: None,
        },
        url,
    )
}

#[tokio::test]
async fn talks_both_ways_answers_pings_and_echoes_the_servers_close() {
    let (listener, endpoint, url) = listener().await;
    let server = tokio::spawn(async move {
        let (mut stream, head) = accept(&listener, false, &frame(0x81, b"0{\"sid\":\"x\"}")).await;
        assert!(head.starts_with("GET /socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n"));
        assert!(head.contains("Cookie: MAJIANG=abc\r\n"), "{head}");
        assert_eq!(read_client_frame(&mut stream).await, (0x81, b"40".to_vec()));
        let long = vec![b'r'; 70_000];
        let mut burst = frame(0x89, b"ping!");
        burst.extend(frame(0x01, b"4"));
        burst.extend(frame(0x80, &long));
        stream.write_all(&burst).await.unwrap();
        assert_eq!(
            read_client_frame(&mut stream).await,
            (0x8A, b"ping!".to_vec())
        );
        let echoed = read_client_frame(&mut stream).await;
        assert_eq!(echoed.0, 0x81);
        assert_eq!(echoed.1.len(), 70_001);
        stream
            .write_all(&frame(0x88, b"\x03\xe9going away"))
            .await
            .unwrap();
        assert_eq!(
            read_client_frame(&mut stream).await,
            (0x88, b"\x03\xe9".to_vec())
        );
    });
    let mut ws = connect(&endpoint, &url, "MAJIANG=abc").await.unwrap();
    assert_eq!(ws.next().await.unwrap(), Message::Text("0{\"sid\":\"x\"}"));
    ws.send_text("40").await.unwrap();
    let long = match ws.next().await.unwrap() {
        Message::Text(text) => text.to_string(),
        other => panic!("{other:?}"),
    };
    assert_eq!(long.len(), 70_001);
    assert!(long.starts_with("4rrr"));
    ws.send_text(&long).await.unwrap();
    match ws.next().await {
        Err(WsError::Closed {
            code: Some(1001),
            reason,
        }) => assert_eq!(reason, "going away"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(ws.next().await, Err(WsError::AlreadyClosed)));
    server.await.unwrap();
}

#[tokio::test]
async fn client_close_waits_for_the_servers_answer() {
    let (listener, endpoint, url) = listener().await;
    let server = tokio::spawn(async move {
        let (mut stream, _) = accept(&listener, false, b"").await;
        assert_eq!(read_client_frame(&mut stream).await, (0x81, b"41".to_vec()));
        assert_eq!(
            read_client_frame(&mut stream).await,
            (0x88, b"\x03\xe8".to_vec())
        );
        // A late message, then the answer to the close, then the end of the stream.
        let mut answer = frame(0x81, b"late");
        answer.extend(frame(0x88, b"\x03\xe8"));
        stream.write_all(&answer).await.unwrap();
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "{rest:?}");
    });
    let mut ws = connect(&endpoint, &url, "").await.unwrap();
    ws.send_text("41").await.unwrap();
    ws.close().await.unwrap();
    assert!(matches!(
        ws.send_text("after").await,
        Err(WsError::AlreadyClosed)
    ));
    server.await.unwrap();
}

#[tokio::test]
async fn a_wrong_accept_is_refused() {
    let (listener, endpoint, url) = listener().await;
    let server = tokio::spawn(async move { accept(&listener, true, b"").await });
    match connect(&endpoint, &url, "").await {
        Err(WsConnectError::Handshake(HandshakeError::BadAccept { .. })) => {}
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted a wrong Sec-WebSocket-Accept"),
    }
    server.await.unwrap();
}

#[tokio::test]
async fn a_server_violating_the_protocol_or_hanging_up_is_reported() {
    let (listener, endpoint, url) = listener().await;
    let server = tokio::spawn(async move {
        let (mut first, _) = accept(&listener, false, &frame(0xC1, b"deflated?")).await;
        let (second, _) = accept(&listener, false, &frame(0x81, b"bye")).await;
        drop(second);
        let _ = first.read_u8().await;
    });
    let mut ws = connect(&endpoint, &url, "").await.unwrap();
    let violation = ws.next().await.map(|_| ()).unwrap_err();
    assert!(
        violation.to_string().contains("reserved bits"),
        "{violation}"
    );
    let mut other = connect(&endpoint, &url, "").await.unwrap();
    assert_eq!(other.next().await.unwrap(), Message::Text("bye"));
    assert!(matches!(other.next().await, Err(WsError::Eof)));
    drop(ws);
    server.await.unwrap();
}

#[test]
fn masking_keys_differ_between_sockets() {
    let (mut a, mut b) = (seed(), seed());
    assert_ne!(splitmix(&mut a), splitmix(&mut b));
}
