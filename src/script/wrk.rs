//! A fresh Lua state holding the global `wrk` table.
//!
//! The Lua-shaped part (defaults, `wrk.format`, `wrk.init`, `wrk.setup`) lives in `wrk.lua`, as
//! in wrk, so it reads like the API it implements; this file adds what needs the system:
//! `wrk.lookup`, `wrk.connect` and `wrk.time_us`.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mlua::{AnyUserData, Lua, Table, Value};

use super::lua_error_at_caller;
use super::thread::{type_name, Addr};
use crate::plan::{Plan, Scheme, Target};

/// The Lua half of the API, run once per state with the URL's parts as its argument.
const WRK_LUA: &str = include_str!("wrk.lua");

/// How long `wrk.connect` waits: it only tests reachability (wrk's blocks until the kernel
/// gives up, which would hang `setup`).
const CONNECT_TEST_TIMEOUT: Duration = Duration::from_secs(2);

/// A new state with the standard libraries (the safe set: no `ffi`, no `debug`) and `wrk`.
pub(crate) fn new_state(plan: &Plan) -> mlua::Result<Lua> {
    new_state_for(&plan.target, &plan.headers)
}

/// [`new_state`] for a target and headers of any mode (the WebSocket mode's scripts too).
pub(crate) fn new_state_for(
    target: &Target,
    plan_headers: &[(String, String)],
) -> mlua::Result<Lua> {
    let lua = Lua::new();
    let config = lua.create_table()?;
    config.set(
        "scheme",
        match target.scheme {
            Scheme::Http => "http",
            Scheme::Https => "https",
        },
    )?;
    config.set("host", target.host.as_str())?;
    config.set("port", target.explicit_port.map(|p| p.to_string()))?;
    config.set("path", target.path.as_str())?;
    let headers = lua.create_table()?;
    for (name, value) in plan_headers {
        headers.push(lua.create_sequence_from([name.as_str(), value.as_str()])?)?;
    }
    config.set("headers", headers)?;

    let wrk: Table = lua.load(WRK_LUA).set_name("=wrk.lua").call(config)?;
    wrk.set("lookup", lua.create_function(lookup)?)?;
    wrk.set("connect", lua.create_function(connect)?)?;
    wrk.set("time_us", lua.create_function(|_, ()| Ok(time_us()))?)?;
    lua.globals().set("wrk", wrk)?;
    Ok(lua)
}

/// `wrk.lookup(host, service)`: every address of `host`, as `wrk.addr` userdata. wrk exits
/// the process when this fails; here it is a Lua error the script can catch with `pcall`.
fn lookup(lua: &Lua, (host, service): (String, Value)) -> mlua::Result<Table> {
    let service_text = match &service {
        Value::String(s) => s.to_string_lossy(),
        Value::Integer(i) => i.to_string(),
        Value::Number(n) => n.to_string(),
        other => type_name(other).to_string(),
    };
    let fail = |reason: String| {
        lua_error_at_caller(
            lua,
            mlua::Error::RuntimeError(format!("unable to resolve {host}:{service_text} {reason}")),
        )
    };
    let port = service_port(&service).ok_or_else(|| fail("(unknown service)".into()))?;
    let addrs: Vec<SocketAddr> = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| fail(e.to_string()))?
        .collect();
    if addrs.is_empty() {
        return Err(fail("(no addresses)".into()));
    }
    lua.create_sequence_from(addrs.into_iter().map(Addr))
}

/// A port number, or one of the service names a URL scheme gives.
fn service_port(service: &Value) -> Option<u16> {
    match service {
        Value::Integer(i) => u16::try_from(*i).ok(),
        Value::Number(n) if n.fract() == 0.0 && (0.0..=65535.0).contains(n) => Some(*n as u16),
        Value::String(s) => {
            let text = s.to_str().ok()?;
            match text.trim() {
                "http" => Some(80),
                "https" => Some(443),
                number => number.parse().ok(),
            }
        }
        _ => None,
    }
}

/// `wrk.connect(addr)`: whether a TCP connection to `addr` can be opened now.
fn connect(lua: &Lua, addr: Value) -> mlua::Result<bool> {
    let addr = match &addr {
        Value::UserData(ud) => addr_of(ud),
        _ => None,
    }
    .ok_or_else(|| {
        lua_error_at_caller(
            lua,
            mlua::Error::RuntimeError(format!(
                "bad argument #1 to 'connect' (wrk.addr expected, got {})",
                type_name(&addr)
            )),
        )
    })?;
    Ok(TcpStream::connect_timeout(&addr, CONNECT_TEST_TIMEOUT).is_ok())
}

fn addr_of(ud: &AnyUserData) -> Option<SocketAddr> {
    ud.borrow::<Addr>().ok().map(|a| a.0)
}

/// `wrk.time_us()` (wrk2): wall-clock time in µs, as `gettimeofday` gives it.
fn time_us() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_micros() as f64)
}
