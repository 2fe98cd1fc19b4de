//! The thread object (`wrk.thread` in a worker's state, the argument of `setup` in the main
//! state), server addresses (`wrk.addr`), and the copying of values between Lua states.
//!
//! Lua states share nothing, so wrk lets the main state reach a worker's state only through this
//! userdata: `thread:get`/`thread:set` copy plain values (nil, booleans, numbers, strings, tables
//! of those) from one state into the other, `thread.addr` chooses the server address, and
//! `thread:stop()` ends that worker early. Unlike wrk2, tables keep their keys and values the
//! right way round.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use mlua::{Lua, UserData, UserDataFields, UserDataMethods, Value, WeakLua};

use super::lua_error_at_caller;

/// Nesting beyond this is taken for a table that contains itself.
const MAX_TABLE_DEPTH: usize = 100;

/// What a worker and the Lua thread objects that name it share.
#[derive(Debug)]
pub(crate) struct ThreadShared {
    /// The server address the worker connects to (`thread.addr`).
    pub addr: Mutex<SocketAddr>,
    /// Set by `thread:stop()`.
    pub stop: AtomicBool,
}

impl ThreadShared {
    pub fn new(addr: SocketAddr) -> Arc<ThreadShared> {
        Arc::new(ThreadShared {
            addr: Mutex::new(addr),
            stop: AtomicBool::new(false),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        *self.addr.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_addr(&self, addr: SocketAddr) {
        *self.addr.lock().unwrap_or_else(PoisonError::into_inner) = addr;
    }

    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// How a thread object holds the worker's state: the main state's objects keep it alive (so
/// `done` can still call `thread:get` after the worker is gone); the worker's own `wrk.thread`
/// holds it weakly, or the state would own itself and never be freed.
enum StateRef {
    Strong(Lua),
    Weak(WeakLua),
}

/// The `wrk.thread` userdata.
pub(crate) struct ThreadHandle {
    state: StateRef,
    shared: Arc<ThreadShared>,
}

impl ThreadHandle {
    /// A handle for another state (the main state's `setup` argument).
    pub fn strong(worker: &Lua, shared: Arc<ThreadShared>) -> ThreadHandle {
        ThreadHandle {
            state: StateRef::Strong(worker.clone()),
            shared,
        }
    }

    /// The worker's own `wrk.thread`.
    pub fn weak(worker: &Lua, shared: Arc<ThreadShared>) -> ThreadHandle {
        ThreadHandle {
            state: StateRef::Weak(worker.weak()),
            shared,
        }
    }

    fn state(&self) -> mlua::Result<Lua> {
        match &self.state {
            StateRef::Strong(lua) => Ok(lua.clone()),
            StateRef::Weak(weak) => weak
                .try_upgrade()
                .ok_or_else(|| mlua::Error::RuntimeError("the thread's Lua state is gone".into())),
        }
    }
}

impl UserData for ThreadHandle {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("addr", |_, this| Ok(Addr(this.shared.addr())));
        fields.add_field_method_set("addr", |lua, this, value: Value| {
            if let Value::UserData(ud) = &value {
                if let Ok(addr) = ud.borrow::<Addr>() {
                    this.shared.set_addr(addr.0);
                    return Ok(());
                }
            }
            Err(cannot_set(lua, &value))
        });
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("get", |lua, this, name: Value| {
            let worker = this.state()?;
            let value: Value = worker.globals().get(name_in(&worker, name)?)?;
            transfer(value, lua, 0).map_err(|e| lua_error_at_caller(lua, e))
        });
        methods.add_method("set", |lua, this, (name, value): (Value, Value)| {
            let worker = this.state()?;
            let copy = transfer(value, &worker, 0).map_err(|e| lua_error_at_caller(lua, e))?;
            worker.globals().set(name_in(&worker, name)?, copy)
        });
        methods.add_method("stop", |_, this, ()| {
            this.shared.stop.store(true, Ordering::Relaxed);
            Ok(())
        });
        methods.add_meta_method(
            mlua::MetaMethod::NewIndex,
            |lua, _, (_key, value): (Value, Value)| -> mlua::Result<()> {
                Err(cannot_set(lua, &value))
            },
        );
        methods.add_meta_method(mlua::MetaMethod::Index, |_, _, _key: Value| Ok(Value::Nil));
        methods.add_meta_method(mlua::MetaMethod::ToString, |_, this, ()| {
            Ok(format!("thread: {}", Addr(this.shared.addr()).text()))
        });
    }
}

/// A global's name, copied into the state that holds the global.
fn name_in(worker: &Lua, name: Value) -> mlua::Result<Value> {
    transfer(name, worker, 0)
}

fn cannot_set(lua: &Lua, value: &Value) -> mlua::Error {
    lua_error_at_caller(
        lua,
        mlua::Error::RuntimeError(format!("cannot set '{}' on thread", type_name(value))),
    )
}

/// Lua's own name for a value's type (`luaL_typename`).
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Integer(_) | Value::Number(_) => "number",
        Value::LightUserData(_) => "userdata",
        other => other.type_name(),
    }
}

/// Copies `value` into the state `to`: nil, booleans, numbers, strings and tables of those.
pub(crate) fn transfer(value: Value, to: &Lua, depth: usize) -> mlua::Result<Value> {
    match value {
        Value::Nil | Value::Boolean(_) | Value::Integer(_) | Value::Number(_) => Ok(value),
        Value::String(s) => Ok(Value::String(to.create_string(s.as_bytes())?)),
        Value::Table(table) => {
            if depth >= MAX_TABLE_DEPTH {
                return Err(mlua::Error::RuntimeError(format!(
                    "cannot transfer a table nested more than {MAX_TABLE_DEPTH} levels deep \
                     (does it contain itself?) to thread"
                )));
            }
            let copy = to.create_table()?;
            for pair in table.pairs::<Value, Value>() {
                let (key, value) = pair?;
                copy.raw_set(
                    transfer(key, to, depth + 1)?,
                    transfer(value, to, depth + 1)?,
                )?;
            }
            Ok(Value::Table(copy))
        }
        other => Err(mlua::Error::RuntimeError(format!(
            "cannot transfer '{}' to thread",
            type_name(&other)
        ))),
    }
}

/// A server address (`wrk.addr` userdata): what `wrk.lookup` returns and `thread.addr` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Addr(pub SocketAddr);

impl Addr {
    /// `ip:port` as wrk prints it (numeric, IPv6 without brackets).
    pub fn text(&self) -> String {
        format!("{}:{}", self.0.ip(), self.0.port())
    }
}

impl UserData for Addr {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_meta_method(mlua::MetaMethod::ToString, |_, this, ()| Ok(this.text()));
        methods.add_meta_method(mlua::MetaMethod::Eq, |_, this, other: mlua::AnyUserData| {
            Ok(other.borrow::<Addr>().is_ok_and(|o| *o == *this))
        });
    }
}
