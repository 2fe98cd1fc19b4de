//! The lobby-level socket.io events of majiang-server (`HELLO`, `ROOM`, `START`, `GAME`, `END`,
//! `ERROR`), decoded into [`ServerEvent`] without copying, and the frames a client sends. Kept
//! apart from the bot so the driver's phase logic (login → room → game → lobby) reads as a match
//! on a small enum, and so a malformed event becomes a typed [`ProtocolError`] the run can count.

use crate::ws::socketio;
use serde_json::{json, Value};
use thiserror::Error;

/// Characters of an offending message quoted in a [`ProtocolError`].
const QUOTE_CHARS: usize = 80;

/// A message the mahjong client cannot understand. One line, quoting the message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtocolError {
    #[error("GAME message is not a JSON object: {0}")]
    NotObject(String),
    #[error("GAME message has a seq that is not a whole number: {0}")]
    BadSeq(String),
    #[error("GAME request seq {seq} has no payload: {message}")]
    NoPayload { seq: u64, message: String },
    #[error("GAME {step} without a valid {field}: {message}")]
    BadField {
        step: &'static str,
        field: &'static str,
        message: String,
    },
    #[error("{event} event with unexpected arguments: {args}")]
    BadEvent { event: &'static str, args: String },
}

/// Compact JSON of `value`, cut to [`QUOTE_CHARS`] characters, for error messages.
pub(crate) fn quote(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn quote_args(args: &[Value]) -> String {
    quote(&Value::Array(args.to_vec()))
}

/// A server → client event, borrowing from the decoded frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ServerEvent<'a> {
    /// `HELLO`: the uid when the session was accepted, `None` for `HELLO null` (no valid login;
    /// the server disconnects next). Also sent on leaving a room: "you are back in the lobby".
    Hello(Option<&'a str>),
    /// `ROOM`: the room's number and how many members it has (offline ones included).
    Room { room_no: &'a str, members: usize },
    /// `START`: we are seated; `GAME` messages follow (some may already have arrived).
    Start,
    /// `GAME`: the message object, for [`crate::mahjong::bot::Bot::on_game`].
    Game(&'a Value),
    /// `END`: the game is over for us; `None` means it was aborted by a server exception (a
    /// partial rule object, for instance).
    End(Option<&'a Value>),
    /// `ERROR`: the server's message (no such room, already playing, room full, duplicate
    /// connection).
    Error(&'a str),
    /// An event majiang-server does not document: its name.
    Unknown(&'a str),
}

/// Decodes an event's name and arguments (as from [`socketio::Packet::Event`]).
pub fn classify<'a>(name: &'a str, args: &'a [Value]) -> Result<ServerEvent<'a>, ProtocolError> {
    let bad = |event: &'static str| ProtocolError::BadEvent {
        event,
        args: quote_args(args),
    };
    match name {
        "HELLO" => match args.first() {
            None | Some(Value::Null) => Ok(ServerEvent::Hello(None)),
            Some(user) => user
                .get("uid")
                .and_then(Value::as_str)
                .map(|uid| ServerEvent::Hello(Some(uid)))
                .ok_or_else(|| bad("HELLO")),
        },
        "ROOM" => args
            .first()
            .and_then(room_fields)
            .map(|(room_no, members)| ServerEvent::Room { room_no, members })
            .ok_or_else(|| bad("ROOM")),
        "START" => Ok(ServerEvent::Start),
        "GAME" => match args.first() {
            Some(msg) if msg.is_object() => Ok(ServerEvent::Game(msg)),
            _ => Err(bad("GAME")),
        },
        "END" => match args.first() {
            None | Some(Value::Null) => Ok(ServerEvent::End(None)),
            Some(record) => Ok(ServerEvent::End(Some(record))),
        },
        "ERROR" => match args.first() {
            Some(Value::String(message)) => Ok(ServerEvent::Error(message)),
            _ => Err(bad("ERROR")),
        },
        other => Ok(ServerEvent::Unknown(other)),
    }
}

fn room_fields(room: &Value) -> Option<(&str, usize)> {
    let room_no = room.get("room_no")?.as_str()?;
    let members = room.get("user")?.as_array()?.len();
    Some((room_no, members))
}

/// The uid from `HELLO`'s arguments; `None` for `HELLO null` (login not accepted) or a
/// malformed user.
pub fn hello_uid(args: &[Value]) -> Option<String> {
    args.first()?.get("uid")?.as_str().map(str::to_owned)
}

/// The room number and member count from `ROOM`'s arguments.
pub fn room_update(args: &[Value]) -> Option<(String, usize)> {
    room_fields(args.first()?).map(|(no, members)| (no.to_owned(), members))
}

/// `42["ROOM"]`: create a room; we become its owner.
pub fn create_room() -> String {
    socketio::event("ROOM", &[])
}

/// `42["ROOM","<no>"]`: join a room.
pub fn join_room(room_no: &str) -> String {
    socketio::event("ROOM", &[json!(room_no)])
}

/// `42["ROOM","<no>","<uid>"]`: leave (own uid), kick (another member's uid, owner only), or
/// dissolve (the owner's own uid).
pub fn leave_room(room_no: &str, uid: &str) -> String {
    socketio::event("ROOM", &[json!(room_no), json!(uid)])
}

/// `42["START","<no>",<rule>[,<timer>]]`: start the game (owner only). `rule` must be complete
/// (see [`crate::mahjong::rules`]); an empty `timer` means none: the server then waits for ever
/// on a silent player.
pub fn start(room_no: &str, rule: &Value, timer: &[u64]) -> String {
    if timer.is_empty() {
        socketio::event("START", &[json!(room_no), rule.clone()])
    } else {
        socketio::event("START", &[json!(room_no), rule.clone(), json!(timer)])
    }
}

/// A client's answer to a `GAME` request, as a strategy decides it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `{seq}` alone: OK / pass (on our own draw the server then discards the drawn tile).
    Pass,
    /// `{dapai: tile}`: discard, with the protocol's suffixes (`_` drawn tile, `*` riichi).
    Discard(String),
    /// `{hule: "-"}`: win (tsumo on our draw, ron on a discard or an added kan).
    Hule,
    /// `{gang: meld}`: closed or added kan on our draw.
    Gang(String),
    /// `{fulou: meld}`: chi, pon or open kan on a discard.
    Fulou(String),
}

/// `42["GAME",{"seq":n}]` or `42["GAME",{"dapai":"<tile>","seq":n}]`: a reply to a game
/// request, written straight into one string (the frame a player sends most).
pub fn game_reply(seq: u64, action: &Action) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(40);
    out.push_str(r#"42["GAME",{"#);
    let (key, text) = match action {
        Action::Pass => ("", ""),
        Action::Discard(tile) => ("dapai", tile.as_str()),
        Action::Hule => ("hule", "-"),
        Action::Gang(meld) => ("gang", meld.as_str()),
        Action::Fulou(meld) => ("fulou", meld.as_str()),
    };
    if !key.is_empty() {
        let _ = write!(out, r#""{key}":"#);
        if text
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
        {
            out.push('"');
            out.push_str(text);
            out.push('"');
        } else {
            // Value's Display escapes; writing into a String cannot fail.
            let _ = write!(out, "{}", Value::String(text.to_string()));
        }
        out.push(',');
    }
    let _ = write!(out, r#""seq":{seq}}}]"#);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ws::socketio::{parse, Packet};

    fn decode(frame: &str) -> (String, Vec<Value>) {
        match parse(frame).unwrap() {
            Packet::Event { name, args } => (name, args),
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn hello_with_user_and_null() {
        let (name, args) = decode(r#"42["HELLO",{"name":"alice","uid":"IdW4Eh"}]"#);
        assert_eq!(
            classify(&name, &args),
            Ok(ServerEvent::Hello(Some("IdW4Eh")))
        );
        assert_eq!(hello_uid(&args).as_deref(), Some("IdW4Eh"));
        let (name, args) = decode(r#"42["HELLO",null]"#);
        assert_eq!(classify(&name, &args), Ok(ServerEvent::Hello(None)));
        assert_eq!(hello_uid(&args), None);
        let (name, args) = decode(r#"42["HELLO",{"name":"x"}]"#);
        assert!(classify(&name, &args).is_err());
    }

    #[test]
    fn room_updates_count_members() {
        let (name, args) = decode(
            r#"42["ROOM",{"room_no":"N5702","user":[{"name":"alice","uid":"a","offline":false},{"name":"bob","uid":"b","offline":true}]}]"#,
        );
        assert_eq!(
            classify(&name, &args),
            Ok(ServerEvent::Room {
                room_no: "N5702",
                members: 2
            })
        );
        assert_eq!(room_update(&args), Some(("N5702".to_owned(), 2)));
        assert_eq!(room_update(&[json!({"room_no": "N5702"})]), None);
        assert_eq!(room_update(&[]), None);
        assert!(classify("ROOM", &[json!(1)]).is_err());
    }

    #[test]
    fn start_game_end_error() {
        assert_eq!(classify("START", &[]), Ok(ServerEvent::Start));
        let msg = json!({"seq": 1, "kaiju": {}});
        assert_eq!(
            classify("GAME", std::slice::from_ref(&msg)),
            Ok(ServerEvent::Game(&msg))
        );
        assert!(classify("GAME", &[json!("x")]).is_err());
        assert_eq!(classify("END", &[]), Ok(ServerEvent::End(None)));
        let record = json!({"rank": [1, 2, 3, 4]});
        assert_eq!(
            classify("END", std::slice::from_ref(&record)),
            Ok(ServerEvent::End(Some(&record)))
        );
        let (name, args) = decode(r#"42["ERROR","既に接続済みです"]"#);
        assert_eq!(
            classify(&name, &args),
            Ok(ServerEvent::Error("既に接続済みです"))
        );
        assert_eq!(classify("PING", &[]), Ok(ServerEvent::Unknown("PING")));
        let err = classify("ERROR", &[json!({"long": "x".repeat(300)})]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("ERROR event with unexpected arguments"),
            "{text}"
        );
        assert!(text.chars().count() < 160, "{text}");
    }

    #[test]
    fn client_frames() {
        assert_eq!(create_room(), r#"42["ROOM"]"#);
        assert_eq!(join_room("K1234"), r#"42["ROOM","K1234"]"#);
        assert_eq!(leave_room("K1234", "u1"), r#"42["ROOM","K1234","u1"]"#);
        let rule = json!({"場数": 1});
        assert_eq!(
            start("K1234", &rule, &[]),
            r#"42["START","K1234",{"場数":1}]"#
        );
        assert_eq!(
            start("K1234", &rule, &[10, 20]),
            r#"42["START","K1234",{"場数":1},[10,20]]"#
        );
        assert_eq!(
            game_reply(9, &Action::Discard("m0_".into())),
            r#"42["GAME",{"dapai":"m0_","seq":9}]"#
        );
        assert_eq!(game_reply(10, &Action::Pass), r#"42["GAME",{"seq":10}]"#);
        assert_eq!(
            game_reply(12, &Action::Hule),
            r#"42["GAME",{"hule":"-","seq":12}]"#
        );
        assert_eq!(
            game_reply(13, &Action::Fulou("m3-45".into())),
            r#"42["GAME",{"fulou":"m3-45","seq":13}]"#
        );
        assert_eq!(
            game_reply(14, &Action::Gang("p444+4".into())),
            r#"42["GAME",{"gang":"p444+4","seq":14}]"#
        );
        assert_eq!(
            game_reply(11, &Action::Discard("a\"b".into())),
            r#"42["GAME",{"dapai":"a\"b","seq":11}]"#
        );
    }
}
