//! The WebSocket mode's scripts (`tsumo ws -s script.lua`): wrk's Lua runtime (the same state
//! with its `wrk` table, sandbox, time limit and one-line errors), with the WebSocket hooks:
//! `connect()`, `message()`, `reply(data)` and `done(summary, latency, requests)`.
//!
//! Each connection has its own Lua state ([`ConnScript`]), the script run in it as wrk runs it
//! in each thread's: its globals are that connection's state, and nothing is shared between
//! connections. `done` runs after the run in a state of its own, as wrk's main state.

use std::path::Path;
use std::time::Duration;

use hdrhistogram::Histogram;
use mlua::{Function, Lua, Value};

use super::limit::{self, Limit};
use super::stats::Stats;
use super::thread::type_name;
use super::{flush_lua_output, lua_message, wrk, ScriptError};
use crate::error::Error;
use crate::plan::Target;
use crate::sys::io_reason;

/// How long one hook call may take, in CPU time: the HTTP mode's default `--script-timeout`.
const HOOK_LIMIT: Duration = Duration::from_secs(1);

/// The key a message's reply carries, as the script gave it: a string's bytes, or a number
/// written in decimal (so `5` and `"5"` are the same key).
pub type Key = Vec<u8>;

/// A script read and checked before any traffic: it loads, and it defines `message()`.
#[derive(Debug)]
pub struct WsSource {
    name: String,
    source: Vec<u8>,
    target: Target,
}

impl WsSource {
    /// Reads `path`, runs it once in a fresh state and checks it defines `message()`: a
    /// missing file, a syntax or top-level error, or no `message()` is one line (exit 2).
    pub fn load(path: &Path, target: &Target) -> Result<WsSource, Error> {
        let name = path.display().to_string();
        let source = std::fs::read(path)
            .map_err(|e| Error::Script(format!("{name}: cannot open {name}: {}", io_reason(&e))))?;
        let source = WsSource {
            name,
            source,
            target: target.clone(),
        };
        let (lua, _limit) = source.state().map_err(|e| Error::Script(lua_message(&e)))?;
        flush_lua_output();
        if !matches!(lua.globals().get("message"), Ok(Value::Function(_))) {
            return Err(Error::Script(format!(
                "{}: the script defines no message() function (docs/websocket.md)",
                source.name
            )));
        }
        Ok(source)
    }

    /// A new state with the script run in it, under the hook limit.
    fn state(&self) -> mlua::Result<(Lua, Limit)> {
        let lua = wrk::new_state_for(&self.target, &[])?;
        let limit = Limit::new(&lua, Some(HOOK_LIMIT))?;
        limit.call(limit::TOP_LEVEL, || {
            lua.load(&self.source[..])
                .set_name(format!("@{}", self.name))
                .exec()
        })?;
        Ok((lua, limit))
    }

    /// One connection's state.
    pub fn connection(&self) -> Result<ConnScript, ScriptError> {
        let err = |e: mlua::Error| ScriptError(lua_message(&e));
        let (lua, limit) = self.state().map_err(err)?;
        let function = |name: &str| match lua.globals().get::<Value>(name) {
            Ok(Value::Function(f)) => Some(f),
            _ => None,
        };
        let message = function("message")
            .ok_or_else(|| ScriptError(format!("{}: message is not a function", self.name)))?;
        Ok(ConnScript {
            name: self.name.clone(),
            connect: function("connect"),
            reply: function("reply"),
            message,
            limit,
            lua,
        })
    }

    /// Calls `done(summary, latency, requests)` in a state of its own, if the script defines it.
    pub fn done(
        &self,
        summary: &DoneSummary,
        latency: Histogram<u64>,
        per_second: Histogram<u64>,
    ) -> Result<(), Error> {
        let err = |e: mlua::Error| Error::ScriptDone(lua_message(&e));
        let (lua, limit) = self.state().map_err(err)?;
        let done = match lua.globals().get::<Value>("done") {
            Ok(Value::Function(done)) => done,
            _ => return Ok(()),
        };
        let table = |pairs: &[(&str, f64)]| -> mlua::Result<mlua::Table> {
            let table = lua.create_table()?;
            for (name, value) in pairs {
                table.set(*name, *value)?;
            }
            Ok(table)
        };
        let run = || -> mlua::Result<()> {
            let summary_table = table(&summary.fields)?;
            summary_table.set("errors", table(&summary.errors)?)?;
            let latency = lua.create_userdata(Stats::new(latency))?;
            let requests = lua.create_userdata(Stats::new(per_second))?;
            limit.call("done", || {
                done.call::<()>((summary_table, latency, requests))
            })
        };
        let outcome = run();
        flush_lua_output();
        outcome.map_err(err)
    }
}

/// `done`'s first argument: wrk's fields (`duration` in µs, `requests`, `bytes`) and the
/// WebSocket counts, and `errors`.
#[derive(Debug, Default)]
pub struct DoneSummary {
    pub fields: Vec<(&'static str, f64)>,
    pub errors: Vec<(&'static str, f64)>,
}

/// What `message()` returned: the bytes (in the caller's buffer), text or binary, and the key.
#[derive(Debug)]
pub struct Outgoing {
    pub binary: bool,
    pub key: Option<Key>,
}

/// One connection's Lua state and its hooks.
pub struct ConnScript {
    name: String,
    connect: Option<Function>,
    message: Function,
    reply: Option<Function>,
    limit: Limit,
    // Last: the functions above are references into it.
    lua: Lua,
}

impl ConnScript {
    /// `connect()`: the upgrade's headers (a table name → value) and, as its second value, the
    /// subprotocol(s) to ask for (`Sec-WebSocket-Protocol`). Nothing without the hook.
    pub fn connect(&self) -> Result<Vec<(String, String)>, ScriptError> {
        let Some(connect) = &self.connect else {
            return Ok(Vec::new());
        };
        let (headers, protocol) = self
            .limit
            .call("connect", || connect.call::<(Value, Value)>(()))
            .map_err(|e| ScriptError(lua_message(&e)))?;
        let bad = |what: &str| ScriptError(format!("{}: connect() {what}", self.name));
        let mut out = Vec::new();
        match headers {
            Value::Nil => {}
            Value::Table(table) => {
                for pair in table.pairs::<Value, Value>() {
                    let (name, value) = pair.map_err(|e| ScriptError(lua_message(&e)))?;
                    match (text_of(&name), text_of(&value)) {
                        (Some(name), Some(value)) if header_ok(&name, &value) => {
                            out.push((name, value))
                        }
                        _ => return Err(bad("returned a header that cannot be sent")),
                    }
                }
            }
            other => {
                return Err(bad(&format!(
                    "must return a table of headers, not a {}",
                    type_name(&other)
                )))
            }
        }
        match protocol {
            Value::Nil => {}
            other => match text_of(&other) {
                Some(protocol) if header_ok("x", &protocol) => {
                    out.push(("Sec-WebSocket-Protocol".to_string(), protocol))
                }
                _ => return Err(bad("returned a subprotocol that is not a string")),
            },
        }
        Ok(out)
    }

    /// `message()`: the next message into `out` (replacing what was there); `data [, key
    /// [, "binary"]]`. Text must be UTF-8.
    pub fn message(&self, out: &mut Vec<u8>) -> Result<Outgoing, ScriptError> {
        let (data, key, kind) = self
            .limit
            .call("message", || self.message.call::<(Value, Value, Value)>(()))
            .map_err(|e| ScriptError(lua_message(&e)))?;
        let Value::String(data) = data else {
            return Err(ScriptError(format!(
                "{}: message() must return a string, not a {}",
                self.name,
                type_name(&data)
            )));
        };
        out.clear();
        out.extend_from_slice(&data.as_bytes());
        let binary = match &kind {
            Value::Nil => false,
            Value::String(s) if s.as_bytes().as_ref() == b"binary" => true,
            Value::String(s) if s.as_bytes().as_ref() == b"text" => false,
            other => {
                return Err(ScriptError(format!(
                    "{}: message()'s third value must be \"binary\" or \"text\", not {}",
                    self.name,
                    text_of(other).unwrap_or_else(|| type_name(other).to_string())
                )))
            }
        };
        if !binary && std::str::from_utf8(out).is_err() {
            return Err(ScriptError(format!(
                "{}: message() returned text that is not UTF-8 (return \"binary\" as its third value)",
                self.name
            )));
        }
        let key = self.key(key, "message")?;
        Ok(Outgoing { binary, key })
    }

    /// Whether the script defines `reply()`.
    pub fn has_reply(&self) -> bool {
        self.reply.is_some()
    }

    /// `reply(data, binary)`: the key the server's message answers, `None` for a push (or
    /// without the hook).
    pub fn reply(&self, data: &[u8], binary: bool) -> Result<Option<Key>, ScriptError> {
        let Some(reply) = &self.reply else {
            return Ok(None);
        };
        let run = || -> mlua::Result<Value> {
            let data = self.lua.create_string(data)?;
            self.limit.call("reply", || reply.call((data, binary)))
        };
        let key = run().map_err(|e| ScriptError(lua_message(&e)))?;
        self.key(key, "reply")
    }

    fn key(&self, value: Value, hook: &str) -> Result<Option<Key>, ScriptError> {
        match value {
            Value::Nil => Ok(None),
            Value::String(s) => Ok(Some(s.as_bytes().to_vec())),
            number @ (Value::Integer(_) | Value::Number(_)) => {
                Ok(text_of(&number).map(String::into_bytes))
            }
            other => Err(ScriptError(format!(
                "{}: {hook}() returned a key that is a {}; a key is a string or a number",
                self.name,
                type_name(&other)
            ))),
        }
    }
}

/// A string or a number as text (integers without a fraction).
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => s.to_str().ok().map(|s| s.to_string()),
        Value::Integer(i) => Some(i.to_string()),
        Value::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => Some((*n as i64).to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// What an upgrade request can carry as a header.
fn header_ok(name: &str, value: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_graphic() && b != b':')
        && value
            .bytes()
            .all(|b| b == b'\t' || (b >= 0x20 && b != 0x7f))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(text: &str) -> Result<WsSource, Error> {
        let dir = std::env::temp_dir().join(format!("tsumo-ws-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| Error::Script(e.to_string()))?;
        let path = dir.join(format!("s{}.lua", text.len()));
        std::fs::write(&path, text).map_err(|e| Error::Script(e.to_string()))?;
        let target = Target {
            url: "ws://127.0.0.1:1/".to_string(),
            scheme: crate::plan::Scheme::Http,
            host: "127.0.0.1".to_string(),
            explicit_port: Some(1),
            path: "/".to_string(),
        };
        WsSource::load(&path, &target)
    }

    #[test]
    fn keys_are_strings_or_numbers_and_messages_text_or_binary() {
        let s = source(
            "n = 0\nfunction message() n = n + 1\n if n == 2 then return '\\255', nil, 'binary' end\n return 'm' .. n, n end\n\
             function reply(d) return tonumber(d:match('%d+')) end\n\
             function connect() return {['X-Room'] = 'a'}, 'chat' end",
        )
        .unwrap();
        let c = s.connection().unwrap();
        let mut out = Vec::new();
        let first = c.message(&mut out).unwrap();
        assert_eq!(
            (out.as_slice(), first.binary, first.key),
            (&b"m1"[..], false, Some(b"1".to_vec()))
        );
        let second = c.message(&mut out).unwrap();
        assert_eq!(
            (out.as_slice(), second.binary, second.key),
            (&b"\xff"[..], true, None)
        );
        assert_eq!(c.reply(b"id 1", false).unwrap(), Some(b"1".to_vec()));
        assert_eq!(c.reply(b"none", false).unwrap(), None);
        assert_eq!(
            c.connect().unwrap(),
            [
                ("X-Room".to_string(), "a".to_string()),
                ("Sec-WebSocket-Protocol".to_string(), "chat".to_string())
            ]
        );
    }

    #[test]
    fn a_script_without_message_or_that_does_not_load_is_refused() {
        let e = source("function reply(d) return nil end")
            .unwrap_err()
            .to_string();
        assert!(e.contains("defines no message() function"), "{e}");
        let e = source("function message( return 1 end")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected"), "{e}");
    }
}
