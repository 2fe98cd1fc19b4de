//! The socket against servers on 127.0.0.1: a tokio-tungstenite server for what a good server
//! does (the upgrade with path and cookie, pings answered, long messages, both close
//! handshakes), and a hand-written one for what a broken one does (a wrong accept, a refused
//! upgrade, an extension not offered, reserved bits, a hang-up without a close).

use super::*;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::Message as Sent;

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

/// Accepts one connection with tokio-tungstenite, handing the request's target and cookie out.
#[allow(clippy::result_large_err)] // the callback's error type is tungstenite's
async fn accept_ws(listener: &TcpListener) -> (WebSocketStream<TcpStream>, String, String) {
    let (stream, _) = listener.accept().await.unwrap();
    let mut seen = (String::new(), String::new());
    let ws =
        tokio_tungstenite::accept_hdr_async(stream, |request: &Request, response: Response| {
            seen.0 = request.uri().to_string();
            seen.1 = request
                .headers()
                .get("cookie")
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default();
            Ok(response)
        })
        .await
        .unwrap();
    (ws, seen.0, seen.1)
}

/// An unmasked server frame with the first byte `first` (FIN, RSV, opcode) and a short payload.
fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 126);
    let mut bytes = vec![first, payload.len() as u8];
    bytes.extend_from_slice(payload);
    bytes
}

/// Accepts one connection by hand and answers its upgrade with `answer(accept)`, where
/// `accept` is the right `Sec-WebSocket-Accept` for its key, followed at once by `after`.
async fn accept_raw(
    listener: &TcpListener,
    answer: impl FnOnce(&str) -> String,
    after: &[u8],
) -> TcpStream {
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
    let mut bytes = answer(&derive_accept_key(key.as_bytes())).into_bytes();
    bytes.extend_from_slice(after);
    stream.write_all(&bytes).await.unwrap();
    stream
}

fn switching(accept: &str, extra: &str) -> String {
    format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {accept}\r\n{extra}\r\n"
    )
}

#[tokio::test]
async fn talks_both_ways_answers_pings_and_answers_the_servers_close() {
    let (listener, endpoint, url) = listener().await;
    let server = tokio::spawn(async move {
        let (mut ws, target, cookie) = accept_ws(&listener).await;
        assert_eq!(target, "/socket.io/?EIO=4&transport=websocket");
        assert_eq!(cookie, "MAJIANG=abc");
        ws.send(Sent::text("0{\"sid\":\"x\"}")).await.unwrap();
        assert_eq!(ws.next().await.unwrap().unwrap(), Sent::text("40"));
        ws.send(Sent::Ping(Bytes::from_static(b"ping!")))
            .await
            .unwrap();
        ws.send(Sent::text(format!("4{}", "r".repeat(70_000))))
            .await
            .unwrap();
        assert_eq!(
            ws.next().await.unwrap().unwrap(),
            Sent::Pong(Bytes::from_static(b"ping!"))
        );
        let echoed = ws.next().await.unwrap().unwrap();
        assert_eq!(echoed.len(), 70_001);
        ws.close(Some(CloseFrame {
            code: CloseCode::Away,
            reason: "going away".into(),
        }))
        .await
        .unwrap();
        match ws.next().await.unwrap().unwrap() {
            Sent::Close(Some(answer)) => assert_eq!(answer.code, CloseCode::Away),
            other => panic!("{other:?}"),
        }
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
        let (mut ws, _, cookie) = accept_ws(&listener).await;
        assert_eq!(cookie, "", "no Cookie header without a cookie");
        assert_eq!(ws.next().await.unwrap().unwrap(), Sent::text("41"));
        ws.send(Sent::text("late")).await.unwrap();
        match ws.next().await.unwrap().unwrap() {
            Sent::Close(Some(close)) => assert_eq!(close.code, CloseCode::Normal),
            other => panic!("{other:?}"),
        }
        // The answer goes out on this read, which then sees the client end the stream.
        assert!(ws.next().await.is_none());
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
async fn a_wrong_accept_is_refused_with_the_expected_value() {
    let (listener, endpoint, url) = listener().await;
    let server = tokio::spawn(async move {
        accept_raw(&listener, |_| switching("AAAA", ""), b"").await;
    });
    match connect(&endpoint, &url, "").await {
        Err(WsConnectError::Handshake(e @ HandshakeError::BadAccept { .. })) => {
            assert!(
                e.to_string()
                    .starts_with("Sec-WebSocket-Accept does not match the key (expected \""),
                "{e}"
            );
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted a wrong Sec-WebSocket-Accept"),
    }
    server.await.unwrap();
}

#[tokio::test]
async fn refused_upgrades_and_unoffered_extensions_are_named() {
    let (listener, endpoint, url) = listener().await;
    let server = tokio::spawn(async move {
        let _refused = accept_raw(
            &listener,
            |_| "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".to_string(),
            b"",
        )
        .await;
        let _deflate = accept_raw(
            &listener,
            |accept| switching(accept, "Sec-WebSocket-Extensions: permessage-deflate\r\n"),
            b"",
        )
        .await;
        let _without_upgrade = accept_raw(
            &listener,
            |_| "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n\r\n".to_string(),
            b"",
        )
        .await;
    });
    let refused = connect(&endpoint, &url, "").await.err().unwrap();
    assert_eq!(
        refused.to_string(),
        "WebSocket handshake failed: answered 400 Bad Request instead of 101 Switching Protocols"
    );
    let deflate = connect(&endpoint, &url, "").await.err().unwrap();
    assert_eq!(
        deflate.to_string(),
        "WebSocket handshake failed: the server chose an extension, which was not offered"
    );
    let without_upgrade = connect(&endpoint, &url, "").await.err().unwrap();
    assert_eq!(
        without_upgrade.to_string(),
        "WebSocket handshake failed: 101 without Upgrade: websocket"
    );
    server.await.unwrap();
}

#[tokio::test]
async fn bad_urls_and_cookies_are_refused_before_connecting() {
    // Nothing listens here: a refusal must come before any connect.
    let endpoint = Endpoint {
        addr: "127.0.0.1:9".parse().unwrap(),
        tls: None,
        source: None,
    };
    for url in ["http://h/", "ws:///", "not a url"] {
        assert!(
            matches!(
                connect(&endpoint, url, "").await,
                Err(WsConnectError::Handshake(HandshakeError::Url(_)))
            ),
            "{url}"
        );
    }
    assert!(matches!(
        connect(&endpoint, "ws://h/", "a\r\nX: y").await,
        Err(WsConnectError::Handshake(HandshakeError::Header("cookie")))
    ));
}

#[tokio::test]
async fn a_server_violating_the_protocol_or_hanging_up_is_reported() {
    let (listener, endpoint, url) = listener().await;
    let server = tokio::spawn(async move {
        let rsv1 = frame(0xC1, b"deflated?");
        let mut first = accept_raw(&listener, |a| switching(a, ""), &rsv1).await;
        let second = accept_raw(&listener, |a| switching(a, ""), &frame(0x81, b"bye")).await;
        drop(second);
        let _ = first.read_u8().await;
    });
    let mut ws = connect(&endpoint, &url, "").await.unwrap();
    let violation = ws.next().await.map(|_| ()).unwrap_err();
    assert!(violation.is_violation(), "{violation}");
    assert_eq!(
        violation.to_string(),
        "WebSocket protocol violation by the server: Reserved bits are non-zero"
    );
    let mut other = connect(&endpoint, &url, "").await.unwrap();
    assert_eq!(other.next().await.unwrap(), Message::Text("bye"));
    let eof = other.next().await.map(|_| ()).unwrap_err();
    assert!(matches!(eof, WsError::Eof), "{eof}");
    assert!(!eof.is_violation());
    drop(ws);
    server.await.unwrap();
}
