//! Engine.IO v4 / socket.io v5 text frames, the subset majiang-server uses (the open packet,
//! ping/pong, namespace connect/disconnect/connect-error, and events, `42[...]`) and the
//! acknowledgements `tsumo ws --socketio` asks for (`42<ID>[...]` out, `43<ID>[...]` back). No
//! binary packets, so anything else is surfaced as [`Packet::Other`] for the caller to count or
//! ignore rather than understood.
//!
//! Parsing borrows nothing from the frame so a [`Packet`] can outlive the read buffer; encoding
//! writes compact JSON with raw UTF-8 (rule keys and names are Japanese).

use serde_json::Value;
use std::fmt;

/// Client → server: connect to the default namespace `/` (its auth payload is ignored).
pub const CONNECT: &str = "40";
/// Client → server: answer to an Engine.IO ping (`2`); due within the server's ping timeout.
pub const PONG: &str = "3";
/// Client → server: leave the namespace (the polite way to end a session before closing).
pub const DISCONNECT: &str = "41";

/// Characters of the offending frame quoted in a [`FrameError`].
const QUOTE_CHARS: usize = 80;

/// One text frame, decoded.
#[derive(Debug, Clone, PartialEq)]
pub enum Packet {
    /// Engine.IO open (`0{...}`): the session id and the server's keep-alive timing.
    Open {
        sid: String,
        ping_interval_ms: u64,
        ping_timeout_ms: u64,
    },
    /// Engine.IO ping (`2`): answer with [`PONG`].
    Ping,
    /// Engine.IO pong (`3`).
    Pong,
    /// socket.io connect acknowledgement for namespace `/` (`40` or `40{"sid":...}`).
    Connected,
    /// socket.io disconnect (`41`): the server dropped us from the namespace.
    Disconnected,
    /// socket.io connect error (`44{"message":...}`): the message, or the raw payload.
    ConnectError(String),
    /// socket.io event (`42["NAME", arg, ...]`).
    Event { name: String, args: Vec<Value> },
    /// socket.io acknowledgement (`43<ID>[arg, ...]`) of the event sent with that id.
    Ack { id: u64, args: Vec<Value> },
    /// A well-formed frame majiang-server does not use (close, upgrade, noop, probes, acks,
    /// other namespaces): the whole frame.
    Other(String),
}

/// A frame that is not valid Engine.IO / socket.io text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError {
    reason: String,
    frame: String,
}

impl FrameError {
    fn new(reason: impl Into<String>, frame: &str) -> Self {
        FrameError {
            reason: reason.into(),
            frame: quote(frame),
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad socket.io frame ({}): {}", self.reason, self.frame)
    }
}

impl std::error::Error for FrameError {}

/// The first [`QUOTE_CHARS`] characters of `frame`, on one line.
fn quote(frame: &str) -> String {
    let mut out: String = frame
        .chars()
        .take(QUOTE_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if frame.chars().nth(QUOTE_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// Decodes one text frame.
pub fn parse(frame: &str) -> Result<Packet, FrameError> {
    let mut chars = frame.chars();
    let Some(kind) = chars.next() else {
        return Err(FrameError::new("empty frame", frame));
    };
    let rest = chars.as_str();
    match kind {
        '0' => parse_open(rest, frame),
        '2' if rest.is_empty() => Ok(Packet::Ping),
        '3' if rest.is_empty() => Ok(Packet::Pong),
        '4' => parse_socketio(rest, frame),
        // close, ping/pong probes, upgrade, noop: valid Engine.IO, unused by a websocket-only client.
        '1' | '2' | '3' | '5' | '6' => Ok(Packet::Other(frame.to_owned())),
        _ => Err(FrameError::new("unknown Engine.IO packet type", frame)),
    }
}

fn parse_open(json: &str, frame: &str) -> Result<Packet, FrameError> {
    let value: Value = serde_json::from_str(json)
        .map_err(|e| FrameError::new(format!("open packet is not JSON: {e}"), frame))?;
    let sid = value
        .get("sid")
        .and_then(Value::as_str)
        .ok_or_else(|| FrameError::new("open packet without sid", frame))?;
    let ms = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| FrameError::new(format!("open packet without {key}"), frame))
    };
    Ok(Packet::Open {
        sid: sid.to_owned(),
        ping_interval_ms: ms("pingInterval")?,
        ping_timeout_ms: ms("pingTimeout")?,
    })
}

/// `rest` is the frame after the Engine.IO `4` (message) type.
fn parse_socketio(rest: &str, frame: &str) -> Result<Packet, FrameError> {
    let mut chars = rest.chars();
    let Some(kind) = chars.next() else {
        return Err(FrameError::new(
            "message without socket.io packet type",
            frame,
        ));
    };
    let payload = chars.as_str();
    // Another namespace is written "/ns,..." right after the type; majiang-server uses only "/".
    if payload.starts_with('/') && ('0'..='6').contains(&kind) {
        return Ok(Packet::Other(frame.to_owned()));
    }
    match kind {
        '0' if payload.is_empty() || payload.starts_with('{') => Ok(Packet::Connected),
        '1' if payload.is_empty() => Ok(Packet::Disconnected),
        '2' if payload.starts_with('[') => parse_event(payload, frame),
        // An event with an acknowledgement id: valid, never sent by majiang-server.
        '2' if payload.starts_with(|c: char| c.is_ascii_digit()) => {
            Ok(Packet::Other(frame.to_owned()))
        }
        '4' => Ok(Packet::ConnectError(connect_error_message(payload))),
        '3' if payload.starts_with(|c: char| c.is_ascii_digit()) => parse_ack(payload, frame),
        // an ack without an id, binary event, binary ack
        '3' | '5' | '6' => Ok(Packet::Other(frame.to_owned())),
        '0' | '1' | '2' => Err(FrameError::new(
            "socket.io packet with a bad payload",
            frame,
        )),
        _ => Err(FrameError::new("unknown socket.io packet type", frame)),
    }
}

fn parse_event(json: &str, frame: &str) -> Result<Packet, FrameError> {
    let value: Value = serde_json::from_str(json)
        .map_err(|e| FrameError::new(format!("event is not JSON: {e}"), frame))?;
    let Value::Array(mut items) = value else {
        return Err(FrameError::new("event is not a JSON array", frame));
    };
    if items.is_empty() {
        return Err(FrameError::new("event without a name", frame));
    }
    let Value::String(name) = items.remove(0) else {
        return Err(FrameError::new("event name is not a string", frame));
    };
    Ok(Packet::Event { name, args: items })
}

/// `json` is the ack after its type: the id's digits, then the JSON array of its arguments.
fn parse_ack(json: &str, frame: &str) -> Result<Packet, FrameError> {
    let digits = json.bytes().take_while(u8::is_ascii_digit).count();
    let (id, args) = json.split_at(digits);
    let id = id
        .parse()
        .map_err(|_| FrameError::new("ack id out of range", frame))?;
    let args = serde_json::from_str(args)
        .map_err(|e| FrameError::new(format!("ack is not a JSON array: {e}"), frame))?;
    Ok(Packet::Ack { id, args })
}

/// socket.io sends `{"message": "..."}`; anything else is reported as it came.
fn connect_error_message(payload: &str) -> String {
    serde_json::from_str::<Value>(payload)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| payload.to_owned())
}

/// Encodes an event frame: `42["NAME",arg,...]`, compact JSON with raw UTF-8.
pub fn event(name: &str, args: &[Value]) -> String {
    use std::fmt::Write as _;
    // Value's Display writes compact JSON and cannot fail; writing into a String cannot fail.
    let mut out = String::with_capacity(16 + name.len());
    out.push_str("42[");
    let _ = write!(out, "{}", Value::String(name.to_owned()));
    for arg in args {
        let _ = write!(out, ",{arg}");
    }
    out.push(']');
    out
}

/// Where a socket.io server's WebSocket is, from a `ws://` URL as typed: the path the URL gives,
/// or socket.io's default `/socket.io/` for none (or `/`), with Engine.IO v4's query
/// (`EIO=4&transport=websocket`) added unless the URL already names `EIO`.
pub fn engine_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("ws", url));
    let (authority, path_query) = match rest.find(['/', '?']) {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
    let path = match path {
        "" | "/" => "/socket.io/",
        given => given,
    };
    let named = query
        .split('&')
        .any(|pair| pair.split('=').next() == Some("EIO"));
    let query = match (query, named) {
        (_, true) => query.to_string(),
        ("", false) => "EIO=4&transport=websocket".to_string(),
        (given, false) => format!("{given}&EIO=4&transport=websocket"),
    };
    format!("{scheme}://{authority}{path}?{query}")
}

/// Starts an event frame that asks for an acknowledgement with `id`: `out` becomes `42<ID>`, to
/// which the caller appends the event's JSON array (`["NAME",arg,...]`).
pub fn start_acked_event(out: &mut String, id: u64) {
    use std::fmt::Write as _;
    out.clear();
    // Writing into a String cannot fail.
    let _ = write!(out, "42{id}");
}

/// Encodes an event frame that asks for an acknowledgement: `42<ID>["NAME",arg,...]`.
pub fn acked_event(id: u64, name: &str, args: &[Value]) -> String {
    let mut out = String::new();
    start_acked_event(&mut out, id);
    out.push_str(&event(name, args)[2..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn open_packet_from_the_server() {
        let frame = r#"0{"sid":"KkCHwQquR1JaFYxMAAAC","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}"#;
        assert_eq!(
            parse(frame).unwrap(),
            Packet::Open {
                sid: "KkCHwQquR1JaFYxMAAAC".into(),
                ping_interval_ms: 25000,
                ping_timeout_ms: 20000,
            }
        );
    }

    #[test]
    fn open_packet_missing_timing_is_an_error() {
        let err = parse(r#"0{"sid":"x"}"#).unwrap_err();
        assert!(err.to_string().contains("pingInterval"), "{err}");
        assert!(parse("0not json").is_err());
    }

    #[test]
    fn keepalive_and_namespace_packets() {
        assert_eq!(parse("2").unwrap(), Packet::Ping);
        assert_eq!(parse("3").unwrap(), Packet::Pong);
        assert_eq!(parse("40").unwrap(), Packet::Connected);
        assert_eq!(
            parse(r#"40{"sid":"nO0tHGTd5bQ9ifKUAAAB"}"#).unwrap(),
            Packet::Connected
        );
        assert_eq!(parse("41").unwrap(), Packet::Disconnected);
        assert_eq!(
            parse(r#"44{"message":"Not authorized"}"#).unwrap(),
            Packet::ConnectError("Not authorized".into())
        );
        assert_eq!(parse("44").unwrap(), Packet::ConnectError(String::new()));
    }

    #[test]
    fn unused_but_valid_frames_are_other() {
        for frame in [
            "1",
            "6",
            "2probe",
            "3probe",
            "5",
            "40/admin,",
            r#"43[1]"#,
            r#"43/admin,1[1]"#,
            "42/x,[\"A\"]",
            "421[\"A\"]",
        ] {
            assert_eq!(
                parse(frame).unwrap(),
                Packet::Other(frame.into()),
                "{frame}"
            );
        }
    }

    #[test]
    fn acks_carry_their_id_and_args() {
        assert_eq!(
            parse(r#"437["0000000000000007...."]"#).unwrap(),
            Packet::Ack {
                id: 7,
                args: vec![json!("0000000000000007....")]
            }
        );
        assert_eq!(
            parse("4312[]").unwrap(),
            Packet::Ack {
                id: 12,
                args: vec![]
            }
        );
        for frame in ["437", "437{}", "437[1", "4399999999999999999999[1]"] {
            assert!(parse(frame).is_err(), "{frame:?} should fail");
        }
        let frame = acked_event(12, "echo", &[json!({"seq":12})]);
        assert_eq!(frame, r#"4212["echo",{"seq":12}]"#);
        let mut out = String::from("junk");
        start_acked_event(&mut out, 0);
        assert_eq!(out, "420");
    }

    #[test]
    fn engine_url_defaults_the_path_and_adds_the_query() {
        assert_eq!(
            engine_url("ws://127.0.0.1:3000"),
            "ws://127.0.0.1:3000/socket.io/?EIO=4&transport=websocket"
        );
        assert_eq!(
            engine_url("wss://h/"),
            "wss://h/socket.io/?EIO=4&transport=websocket"
        );
        assert_eq!(
            engine_url("ws://h/chat/socket.io/?room=1"),
            "ws://h/chat/socket.io/?room=1&EIO=4&transport=websocket"
        );
        assert_eq!(
            engine_url("ws://h/?EIO=4&transport=websocket"),
            "ws://h/socket.io/?EIO=4&transport=websocket"
        );
    }

    #[test]
    fn hello_event() {
        let frame = r#"42["HELLO",{"name":"raw1","uid":"xmWi0l0TZxqrDMMdG8QxWYkPH8uayOI0"}]"#;
        let Packet::Event { name, args } = parse(frame).unwrap() else {
            panic!("not an event");
        };
        assert_eq!(name, "HELLO");
        assert_eq!(
            args,
            vec![json!({"name":"raw1","uid":"xmWi0l0TZxqrDMMdG8QxWYkPH8uayOI0"})]
        );
        assert_eq!(event(&name, &args), frame);
    }

    #[test]
    fn hello_null_and_start_without_args() {
        assert_eq!(
            parse(r#"42["HELLO",null]"#).unwrap(),
            Packet::Event {
                name: "HELLO".into(),
                args: vec![Value::Null]
            }
        );
        assert_eq!(
            parse(r#"42["START"]"#).unwrap(),
            Packet::Event {
                name: "START".into(),
                args: vec![]
            }
        );
    }

    /// Found by the `socketio_frame` fuzz target: without serde_json's `float_roundtrip`, a
    /// long number parsed one ulp off and came back as a different number after re-encoding.
    #[test]
    fn event_numbers_survive_re_encoding() {
        let frame = r#"42["x",[4011111111111111111111111111111111111111111111333,0.1,-2.5e-300]]"#;
        let packet = parse(frame).unwrap();
        let Packet::Event { name, args } = &packet else {
            panic!("not an event");
        };
        assert_eq!(parse(&event(name, args)).unwrap(), packet);
    }

    #[test]
    fn game_event_with_japanese_text_round_trips() {
        let frame = r#"42["GAME",{"pingju":{"fenpei":[0,0,0,0],"name":"荒牌平局","shoupai":["","","",""]},"seq":143}]"#;
        let packet = parse(frame).unwrap();
        let Packet::Event { name, args } = &packet else {
            panic!("not an event");
        };
        assert_eq!(name, "GAME");
        assert_eq!(args[0]["pingju"]["name"], "荒牌平局");
        assert_eq!(args[0]["seq"], 143);
        // serde_json sorts keys (no preserve_order), and the frame above is already sorted.
        assert_eq!(event(name, args), frame);
    }

    #[test]
    fn encoders_match_the_documented_client_frames() {
        assert_eq!(event("ROOM", &[]), r#"42["ROOM"]"#);
        assert_eq!(event("ROOM", &[json!("K1234")]), r#"42["ROOM","K1234"]"#);
        assert_eq!(
            event("GAME", &[json!({"dapai":"m3_","seq":9})]),
            r#"42["GAME",{"dapai":"m3_","seq":9}]"#
        );
        assert_eq!(
            event(
                "START",
                &[json!("K1234"), json!({"場数":1}), json!([10, 20])]
            ),
            r#"42["START","K1234",{"場数":1},[10,20]]"#
        );
        assert_eq!(event("a\"b", &[]), r#"42["a\"b"]"#);
        assert_eq!(parse(CONNECT).unwrap(), Packet::Connected);
        assert_eq!(parse(DISCONNECT).unwrap(), Packet::Disconnected);
        assert_eq!(parse(PONG).unwrap(), Packet::Pong);
    }

    #[test]
    fn malformed_frames_are_errors_quoting_the_frame() {
        for frame in [
            "",
            "x",
            "4",
            "47",
            r#"42{"a":1}"#,
            "42[]",
            "42[1]",
            "42[\"A\"",
            "40junk",
            "41x",
        ] {
            assert!(parse(frame).is_err(), "{frame:?} should fail");
        }
        let long = format!("42[{}", "9".repeat(200));
        let msg = parse(&long).unwrap_err().to_string();
        assert!(msg.starts_with("bad socket.io frame"), "{msg}");
        assert!(
            msg.contains(&long[..80]) && !msg.contains(&long[..81]),
            "{msg}"
        );
        assert!(!msg.contains('\n'));
        let multiline = parse("42[\"A\",\n").unwrap_err().to_string();
        assert!(!multiline.contains('\n'), "{multiline}");
    }
}
