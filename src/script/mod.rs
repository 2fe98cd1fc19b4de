//! wrk's Lua scripting API on LuaJIT (mlua): the `wrk` table, the hooks, thread objects.
//!
//! wrk2 scripts are the way users customise a run, so they must behave as under wrk2: the
//! script runs in one main state (`setup`, `done`) and in one state per worker (`init`,
//! `request`, `response`, `delay`), loaded in wrk's order, with LuaJIT's Lua 5.1 semantics.
//! Where wrk2 has a bug (tables swapped by `thread:get`, exiting on a failed `wrk.lookup`,
//! ignoring a script error and running without the script), tsumo does what the documentation
//! promises or stops with a one-line error instead.
//!
//! The engine owns one [`ThreadScript`] per worker (moved into the worker thread) and keeps the
//! [`Script`] for `done`. The main state reaches a worker's state only in `setup` (before the run)
//! and `done` (after it), so the two never contend for a state's lock.

mod limit;
mod stats;
mod thread;
mod wrk;
pub mod ws;

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mlua::{Function, Lua, Table, Value};

use crate::error::Error;
use crate::net::http1::request::Batch;
use crate::plan::Plan;
use crate::stats::http::RunResult;
use crate::sys::io_reason;

use limit::Limit;
use stats::Stats;
use thread::{type_name, Addr, ThreadHandle, ThreadShared};

/// Which hooks the script defines (decided on thread 0 after init, as wrk does; same for all
/// threads).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hooks {
    pub request: bool,
    pub response: bool,
    pub delay: bool,
}

/// An error raised by the script while the run is going (`request`, `response`, `delay`), as
/// Lua reports it: `file:line: message`.
#[derive(Debug, Clone)]
pub struct ScriptError(pub String);

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ScriptError {}

/// `--script-timeout 0`: how much longer than `-d` the code outside the run may take (the
/// engine's wait for the run's workers, so a hung hook ends tsumo at `-d` plus 5 s either way).
const OUTSIDE_RUN_GRACE: Duration = Duration::from_secs(5);

/// The main Lua state (`setup`, `done`).
pub struct Script {
    main: Lua,
    limit: Limit,
}

/// One worker's Lua state, moved into the worker thread.
pub struct ThreadScript {
    lua: Lua,
    /// The script path as given, to name it in errors that carry no Lua position.
    name: String,
    shared: Arc<ThreadShared>,
    hooks: Hooks,
    static_request: Vec<u8>,
    pipeline: usize,
    /// The global `request` function, looked up once: it runs for every batch.
    request_fn: Option<Function>,
    /// `--script-timeout` on every hook call.
    limit: Limit,
}

/// Reads `path` and compiles it, running nothing: a capacity search checks its script before
/// its first step, so a missing file or a syntax error is one line, not a step begun. The
/// error is as [`Script::load`] words it.
pub fn check(path: &std::path::Path) -> Result<(), Error> {
    let name = path.display().to_string();
    let source = std::fs::read(path)
        .map_err(|e| Error::Script(format!("{name}: cannot open {name}: {}", io_reason(&e))))?;
    Lua::new()
        .load(&source[..])
        .set_name(format!("@{name}"))
        .into_function()
        .map(drop)
        .map_err(|e| Error::Script(lua_message(&e)))
}

/// The main state: `wrk.addrs` set to the server's address, then the script run in it under
/// its limit; with its `wrk` table.
fn main_state(
    plan: &Plan,
    addr: SocketAddr,
    limit_for: &impl Fn(&Lua) -> mlua::Result<Limit>,
    (source, chunk_name): (&[u8], &str),
) -> mlua::Result<(Lua, Limit, Table)> {
    let main = wrk::new_state(plan)?;
    let main_limit = limit_for(&main)?;
    let main_wrk: Table = main.globals().get("wrk")?;
    main_wrk.set("addrs", main.create_sequence_from([Addr(addr)])?)?;
    main_limit.call(limit::TOP_LEVEL, || {
        main.load(source).set_name(chunk_name).exec()
    })?;
    Ok((main, main_limit, main_wrk))
}

/// As wrk, on the first thread's state: `request()` checked first (its requests, pipelined,
/// counted), then which hooks the script defines.
fn first_request(lua: &Lua, name: &str, limit: &Limit) -> Result<(usize, Hooks), Error> {
    let first = call_request(lua, name, limit).map_err(|e| Error::Script(e.0))?;
    let batch = Batch::parse(first).map_err(|e| {
        Error::Script(format!(
            "{name}: request() returned an invalid request: {e}"
        ))
    })?;
    let globals = lua.globals();
    let defines = |hook: &str| matches!(globals.get(hook), Ok(Value::Function(_)));
    let hooks = Hooks {
        request: defines("request"),
        response: defines("response"),
        delay: defines("delay"),
    };
    Ok((batch.len(), hooks))
}

impl Script {
    /// Loads the script into the main state and one state per worker, in wrk's order: for each
    /// thread, a new state runs the script, gets `wrk.thread`, then `setup(thread)` runs in the
    /// main state and `wrk.init(args)` in the thread's state. Thread 0's `request()` is called
    /// once to check it and count its pipelined requests. `addr` is the resolved server address.
    pub fn load(plan: &Plan, addr: SocketAddr) -> Result<(Script, Vec<ThreadScript>), Error> {
        let path = plan
            .script
            .as_ref()
            .ok_or_else(|| Error::Script("no Lua script to load".into()))?;
        let name = path.display().to_string();
        let source = std::fs::read(path)
            .map_err(|e| Error::Script(format!("{name}: cannot open {name}: {}", io_reason(&e))))?;
        let chunk_name = format!("@{name}");
        let script_err = |e: mlua::Error| Error::Script(lua_message(&e));

        // `--script-timeout 0` lifts the limit for the run's hooks only: outside the run there
        // is no run to end, and a hook that never returned would hang tsumo for ever.
        let outside_bound = plan.options.duration + OUTSIDE_RUN_GRACE;
        let limit_for = |lua: &Lua| match plan.script_timeout {
            Some(limit) => Limit::new(lua, Some(limit)),
            None => Limit::outside_run(lua, outside_bound),
        };
        let (main, main_limit, main_wrk) =
            main_state(plan, addr, &limit_for, (&source, &chunk_name)).map_err(script_err)?;

        let mut threads = Vec::with_capacity(plan.options.threads);
        let mut hooks = Hooks::default();
        let mut pipeline = 1;
        for index in 0..plan.options.threads {
            let lua = wrk::new_state(plan).map_err(script_err)?;
            let mut limit = limit_for(&lua).map_err(script_err)?;
            limit
                .call(limit::TOP_LEVEL, || {
                    lua.load(&source[..]).set_name(chunk_name.as_str()).exec()
                })
                .map_err(script_err)?;
            let shared = ThreadShared::new(addr);
            let thread_wrk: Table = lua.globals().get("wrk").map_err(script_err)?;
            thread_wrk
                .set("thread", ThreadHandle::weak(&lua, shared.clone()))
                .map_err(script_err)?;

            let setup: Function = main_wrk.get("setup").map_err(script_err)?;
            let thread = ThreadHandle::strong(&lua, shared.clone());
            main_limit
                .call("setup", || setup.call::<()>(thread))
                .map_err(script_err)?;

            let init: Function = thread_wrk.get("init").map_err(script_err)?;
            let args = init_args(&lua, plan).map_err(script_err)?;
            limit
                .call("init", || init.call::<()>(args))
                .map_err(script_err)?;

            if index == 0 {
                (pipeline, hooks) = first_request(&lua, &name, &limit)?;
            }

            let static_request = match static_request(&lua, &name, &limit) {
                Ok(bytes) => bytes,
                // A dynamic script never sends wrk.request()'s bytes; only its request() matters.
                Err(_) if hooks.request => Vec::new(),
                Err(e) => return Err(Error::Script(e.0)),
            };
            if plan.script_timeout.is_none() {
                limit.lift(&lua).map_err(script_err)?;
            }
            let request_fn = match lua.globals().get::<Value>("request") {
                Ok(Value::Function(f)) if hooks.request => Some(f),
                _ => None,
            };
            threads.push(ThreadScript {
                lua,
                name: name.clone(),
                shared,
                hooks,
                static_request,
                pipeline,
                request_fn,
                limit,
            });
        }
        flush_lua_output();
        Ok((
            Script {
                main,
                limit: main_limit,
            },
            threads,
        ))
    }

    /// Calls `done(summary, latency, requests)` in the main state, if the script defines it.
    pub fn done(&self, result: &RunResult) -> Result<(), Error> {
        let script_err = |e: mlua::Error| Error::ScriptDone(lua_message(&e));
        let done = match self.main.globals().get::<Value>("done") {
            Ok(Value::Function(done)) => done,
            _ => return Ok(()),
        };
        let summary = summary_table(&self.main, result).map_err(script_err)?;
        let latency = self
            .main
            .create_userdata(Stats::new(result.latency.clone()))
            .map_err(script_err)?;
        let requests = self
            .main
            .create_userdata(Stats::new(result.req_per_sec.clone()))
            .map_err(script_err)?;
        let outcome = self
            .limit
            .call("done", || done.call::<()>((summary, latency, requests)));
        flush_lua_output();
        outcome.map_err(script_err)
    }
}

impl ThreadScript {
    pub fn hooks(&self) -> Hooks {
        self.hooks
    }

    /// `thread.addr` after `setup` (which may change it, as addr.lua does).
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr()
    }

    /// The request `wrk.init` built once (what `wrk.request()` returns); sent when the script
    /// has no `request` hook.
    pub fn static_request(&self) -> Vec<u8> {
        self.static_request.clone()
    }

    /// Requests in one `request()` result, counted on thread 0's check call (wrk's
    /// `cfg.pipeline`).
    pub fn pipeline(&self) -> usize {
        self.pipeline
    }

    /// Calls the global `request()` and returns its bytes.
    pub fn request(&self) -> Result<Vec<u8>, ScriptError> {
        let mut bytes = Vec::new();
        self.request_into(&mut bytes)?;
        Ok(bytes)
    }

    /// Calls the script's `request()` and puts its bytes in `out` (replacing what was there):
    /// the hot path of a dynamic script, with no allocation once `out` has grown.
    pub fn request_into(&self, out: &mut Vec<u8>) -> Result<(), ScriptError> {
        let Some(request) = &self.request_fn else {
            *out = call_request(&self.lua, &self.name, &self.limit)?;
            return Ok(());
        };
        match self.limit.call("request", || request.call::<Value>(())) {
            Ok(Value::String(s)) => {
                out.clear();
                out.extend_from_slice(&s.as_bytes());
                Ok(())
            }
            Ok(other) => Err(ScriptError(format!(
                "{}: request() must return a string, not a {}",
                self.name,
                type_name(&other)
            ))),
            Err(e) => Err(ScriptError(lua_message(&e))),
        }
    }

    /// Calls `response(status, headers, body)`; `headers` maps names as received to values (the
    /// last duplicate wins).
    pub fn response(
        &self,
        status: u16,
        headers: &[(String, Vec<u8>)],
        body: &[u8],
    ) -> Result<(), ScriptError> {
        let run = || -> mlua::Result<()> {
            let response: Function = self.hook("response")?;
            let table = self.lua.create_table_with_capacity(0, headers.len())?;
            for (name, value) in headers {
                table.raw_set(name.as_str(), self.lua.create_string(value)?)?;
            }
            let body = self.lua.create_string(body)?;
            self.limit
                .call("response", || response.call((status, table, body)))
        };
        run().map_err(|e| ScriptError(lua_message(&e)))
    }

    /// Calls `delay()`: milliseconds to wait before the next request.
    pub fn delay(&self) -> Result<Duration, ScriptError> {
        let value: Value = self
            .hook("delay")
            .and_then(|delay: Function| self.limit.call("delay", || delay.call(())))
            .map_err(|e| ScriptError(lua_message(&e)))?;
        let ms = match value {
            Value::Integer(i) => i as f64,
            Value::Number(n) => n,
            other => {
                return Err(ScriptError(format!(
                    "{}: delay() must return a number of milliseconds, not a {}",
                    self.name,
                    type_name(&other)
                )))
            }
        };
        if ms.is_nan() || ms < 0.0 {
            return Err(ScriptError(format!(
                "{}: delay() returned {ms}; it must be 0 or more milliseconds",
                self.name
            )));
        }
        Duration::try_from_secs_f64(ms / 1000.0).map_err(|_| {
            ScriptError(format!(
                "{}: delay() returned {ms} milliseconds, too long to wait",
                self.name
            ))
        })
    }

    /// True once `thread:stop()` was called for this thread (from any state).
    pub fn stop_requested(&self) -> bool {
        self.shared.stop_requested()
    }

    /// A global function the engine calls, with a clear error when the script removed it.
    fn hook(&self, name: &str) -> mlua::Result<Function> {
        match self.lua.globals().get::<Value>(name)? {
            Value::Function(f) => Ok(f),
            other => Err(mlua::Error::RuntimeError(format!(
                "{}: {name} is a {}, not a function",
                self.name,
                type_name(&other)
            ))),
        }
    }
}

/// `args` for `init`: `args[0]` is the URL, then the positional arguments after it.
fn init_args(lua: &Lua, plan: &Plan) -> mlua::Result<Table> {
    let args = lua.create_table()?;
    args.raw_set(0, plan.target.url.as_str())?;
    for (i, arg) in plan.script_args.iter().enumerate() {
        args.raw_set(i + 1, arg.as_str())?;
    }
    Ok(args)
}

/// wrk's `script_request`: the global `request()`, or `wrk.request()` when there is none.
fn call_request(lua: &Lua, name: &str, limit: &Limit) -> Result<Vec<u8>, ScriptError> {
    let run = || -> mlua::Result<Value> {
        match lua.globals().get::<Value>("request")? {
            Value::Function(request) => limit.call("request", || request.call(())),
            _ => wrk_request(lua, limit),
        }
    };
    let value = run().map_err(|e| ScriptError(lua_message(&e)))?;
    request_bytes(value, name)
}

/// The bytes of `wrk.request()` (the request `wrk.init` built).
fn static_request(lua: &Lua, name: &str, limit: &Limit) -> Result<Vec<u8>, ScriptError> {
    let value = wrk_request(lua, limit).map_err(|e| ScriptError(lua_message(&e)))?;
    request_bytes(value, name)
}

fn wrk_request(lua: &Lua, limit: &Limit) -> mlua::Result<Value> {
    let wrk: Table = lua.globals().get("wrk")?;
    let request: Function = wrk.get("request")?;
    limit.call("wrk.request", || request.call(()))
}

fn request_bytes(value: Value, name: &str) -> Result<Vec<u8>, ScriptError> {
    match value {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        other => Err(ScriptError(format!(
            "{name}: request() must return a string, not a {}",
            type_name(&other)
        ))),
    }
}

/// `done`'s first argument.
fn summary_table(lua: &Lua, result: &RunResult) -> mlua::Result<Table> {
    let counters = &result.counters;
    let errors = lua.create_table()?;
    errors.set("connect", counters.errors.connect as f64)?;
    errors.set("read", counters.errors.read as f64)?;
    errors.set("write", counters.errors.write as f64)?;
    errors.set("status", counters.errors.status as f64)?;
    errors.set("timeout", counters.errors.timeout as f64)?;
    let summary = lua.create_table()?;
    summary.set("duration", result.elapsed.as_micros() as f64)?;
    summary.set("requests", counters.requests as f64)?;
    summary.set("bytes", counters.bytes_read as f64)?;
    summary.set("errors", errors)?;
    Ok(summary)
}

/// The one line a Lua error stands for: `file:line: message`, without mlua's traceback and
/// callback wrapping.
fn lua_message(error: &mlua::Error) -> String {
    let text = match error {
        mlua::Error::RuntimeError(message) | mlua::Error::MemoryError(message) => message.clone(),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::CallbackError { cause, .. } => return lua_message(cause),
        mlua::Error::WithContext { cause, .. } => return lua_message(cause),
        other => other.to_string(),
    };
    text.lines()
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

/// Prefixes a Rust-raised error with the position of the Lua code that called into Rust, as
/// `luaL_error` does, so `cannot set 'number' on thread` says where.
fn lua_error_at_caller(lua: &Lua, error: mlua::Error) -> mlua::Error {
    match error {
        mlua::Error::RuntimeError(message) => {
            mlua::Error::RuntimeError(format!("{}{message}", caller_position(lua)))
        }
        other => other,
    }
}

/// `short_src:line: ` of the nearest Lua function on the stack that is the script's (mlua's
/// generated `__index`/`__newindex` helpers are skipped), or nothing.
fn caller_position(lua: &Lua) -> String {
    for level in 1..8 {
        let position = lua.inspect_stack(level, |debug| {
            let source = debug.source();
            if source.what == "C" {
                return None;
            }
            let short_src = source.short_src?;
            if short_src.starts_with("__mlua") {
                return None;
            }
            let line = debug.current_line()?;
            Some(format!("{short_src}:{line}: "))
        });
        match position {
            None => break,
            Some(None) => continue,
            Some(Some(position)) => return position,
        }
    }
    String::new()
}

/// Lua's `print` and `io.write` go through C stdio, which is fully buffered on a pipe: flush it
/// so script output comes before (after `load`) or after (after `done`) tsumo's report, as in
/// wrk.
fn flush_lua_output() {
    // SAFETY: fflush(NULL) flushes every open C output stream; no pointer is dereferenced.
    unsafe {
        libc::fflush(std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests;
