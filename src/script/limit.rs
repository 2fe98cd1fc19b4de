//! The time limit on script hooks (`--script-timeout`, 1 s by default): a hook that runs past
//! it is interrupted and fails as a script error at its `file:line`, so a script stuck in a
//! loop ends the run at once instead of holding a worker thread (and Ctrl-C) hostage.
//!
//! How: every hook call is stamped with its start time and its thread's CPU clock in a
//! [`Slot`]; one watchdog thread for the process looks at the slots every [`TICK`] and, on a
//! call past its limit, installs a count hook in that Lua state from its own thread (the
//! asynchronous `lua_sethook` that Lua's own interpreter uses for Ctrl-C). The hook raises the
//! error at the next bytecode.
//!
//! The limit counts the CPU time the hook's thread used since the call began, not the wall
//! time (issue 43: on a busy machine a hook that used 2 ms of CPU could wait 1 s for a core
//! and be cut). The watchdog reads the thread's CPU clock (`pthread_getcpuclockid`) at each
//! tick, so the hook's own path pays nothing (reading a thread's CPU clock is a system call,
//! 0.45 µs here, a third of a `request()` call); the CPU the thread used between the tick
//! before the call and the call's start may be counted with it (at most a tick's). A call
//! that waits rather than runs (a sleep, a blocking read) uses no CPU: it is cut once its wall
//! time passes [`WALL_BACKSTOP`] times the limit, at its next bytecode (a call blocked inside C
//! returns first). The bound outside the run (below) stays wall time: it bounds a hang.
//!
//! LuaJIT never runs hooks inside compiled machine code, so a loop the JIT has compiled cannot
//! be interrupted by any means (measured: `while true do end`, a numeric `for`, a loop calling
//! `os.clock()` — none stopped with the compiler on, all within one tick with it off). A state
//! with a limit therefore runs with the JIT compiler off: about 8% more per dynamic `request()`
//! (1.23 µs against 1.33 µs for a `wrk.format`-style request builder). `--script-timeout 0`
//! removes the limit and turns the compiler back on for the hooks of the run (`request`,
//! `response`, `delay`), which the engine's bounded join covers (`-d` plus 5 s). The code that
//! runs outside the run — the script's top level, `setup`, `init`, the first `request()` (the
//! check), `done` — has no run to end it, so it keeps a limit of `-d` plus 5 s even then
//! ([`Limit::outside_run`], lifted from a worker's state once the run's hooks take over).

use std::cell::Cell;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use mlua::{ffi, Lua};

use crate::stats::format::format_time_us;
use crate::timing::clock;

/// How often the watchdog looks: a hook is interrupted at most this long after its limit.
const TICK: Duration = Duration::from_millis(20);

/// The end of the message the interrupting hook raises; [`Limit::call`] recognises it and
/// rewrites the message in words (the hook itself cannot know the hook's name or the limit).
const MARKER: &str = "tsumo: script time limit";

/// A call that used no CPU past its limit (it waits) is cut at this many times the limit of
/// wall time.
pub(crate) const WALL_BACKSTOP: u64 = 10;

/// `clock` of a slot no call has stamped yet.
const NO_CLOCK: i64 = i64::MIN;

/// `started` of a call the watchdog has interrupted.
const FIRED: u64 = u64::MAX;

/// The name [`Limit::call`] takes for the script's top level (a chunk, not a hook).
pub(crate) const TOP_LEVEL: &str = "";

/// One Lua state under the limit.
struct Slot {
    /// The state's `lua_State*`: LuaJIT's hooks belong to the global state, so any thread of
    /// it will do.
    state: usize,
    limit_ns: u64,
    /// The limit counts the call's thread CPU time (`--script-timeout`), with the wall-time
    /// backstop; `false`: wall time (the bound outside the run).
    cpu: bool,
    /// When the running hook call started (CLOCK_MONOTONIC ns); 0 when none runs; [`FIRED`]
    /// once the watchdog has interrupted it.
    started: AtomicU64,
    /// The CPU clock of the thread that made the last call ([`NO_CLOCK`] before one), stored
    /// before `started`.
    clock: AtomicI64,
    /// The watchdog's own reading of that clock (only it locks this).
    cpu_seen: Mutex<CpuSeen>,
    /// Held by the watchdog while it installs the hook and by the caller while it removes it,
    /// so a call that ends just as the watchdog fires never leaves a hook behind for the next.
    hook: Mutex<()>,
}

/// What the watchdog read of a slot's thread CPU clock, ns.
#[derive(Default)]
struct CpuSeen {
    /// The call it watches (its `started`), and the thread's CPU when that call began.
    call: u64,
    at_start: u64,
    /// The clock and its reading at the last tick.
    last: Option<(i64, u64)>,
}

impl Slot {
    /// Whether the call that started at `started` is past the limit at `now`: its thread's
    /// CPU since it began (or its wall time past the backstop), or its wall time for a wall
    /// limit. Called every tick, whether a call runs or not, to keep the last reading.
    fn over(&self, started: Option<u64>, now: u64) -> bool {
        let wall = started.map(|s| now.saturating_sub(s));
        if !self.cpu {
            return wall.is_some_and(|w| w > self.limit_ns);
        }
        if wall.is_some_and(|w| w > self.limit_ns.saturating_mul(WALL_BACKSTOP)) {
            return true;
        }
        let clock = self.clock.load(Ordering::Acquire);
        let Some(cpu) = thread_cpu(clock) else {
            return wall.is_some_and(|w| w > self.limit_ns);
        };
        let mut seen = self
            .cpu_seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let last = seen.last.filter(|(c, _)| *c == clock).map(|(_, v)| v);
        seen.last = Some((clock, cpu));
        let (Some(started), Some(wall)) = (started, wall) else {
            return false;
        };
        if seen.call != started {
            // The CPU since the call began: at most its wall time, and at most the thread's
            // since the last tick.
            let before = last.map_or(wall, |last| cpu.saturating_sub(last).min(wall));
            seen.call = started;
            seen.at_start = cpu.saturating_sub(before);
        }
        cpu.saturating_sub(seen.at_start) > self.limit_ns
    }
}

/// The calling thread's CPU clock, to be read from another thread.
fn own_cpu_clock() -> i64 {
    thread_local! {
        static CLOCK: Cell<Option<i64>> = const { Cell::new(None) };
    }
    CLOCK.with(|cached| {
        if let Some(clock) = cached.get() {
            return clock;
        }
        let mut clock: libc::clockid_t = 0;
        // SAFETY: pthread_self() is this live thread; `clock` is a valid out-pointer.
        let clock = match unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) } {
            0 => i64::from(clock),
            _ => NO_CLOCK,
        };
        cached.set(Some(clock));
        clock
    })
}

/// A thread's CPU time by its clock, ns; `None` without one (or once the thread is gone).
fn thread_cpu(clock: i64) -> Option<u64> {
    let clock = libc::clockid_t::try_from(clock).ok()?;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec; an invalid clock fails with EINVAL.
    (unsafe { libc::clock_gettime(clock, &mut ts) } == 0)
        .then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// The time limit of one Lua state's hooks. `None` limit: calls run as they are.
pub(crate) struct Limit {
    slot: Option<Arc<Slot>>,
    limit: Duration,
    /// What set the limit, as the error names it.
    source: &'static str,
}

impl Limit {
    /// Puts `lua` under `limit` (and turns its JIT compiler off, see the module docs); `None`
    /// leaves it as it is.
    pub(crate) fn new(lua: &Lua, limit: Option<Duration>) -> mlua::Result<Limit> {
        Limit::counting(lua, limit, true)
    }

    /// [`Limit::new`], counting CPU time (`cpu`) or wall time.
    fn counting(lua: &Lua, limit: Option<Duration>, cpu: bool) -> mlua::Result<Limit> {
        let Some(limit) = limit else {
            return Ok(Limit {
                slot: None,
                limit: Duration::ZERO,
                source: "",
            });
        };
        lua.load("jit.off()").set_name("=tsumo").exec()?;
        let slot = Arc::new(Slot {
            state: lua.state() as usize,
            limit_ns: u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX),
            cpu,
            started: AtomicU64::new(0),
            clock: AtomicI64::new(NO_CLOCK),
            cpu_seen: Mutex::default(),
            hook: Mutex::new(()),
        });
        watched().push(Arc::downgrade(&slot));
        Ok(Limit {
            slot: Some(slot),
            limit,
            source: "--script-timeout",
        })
    }

    /// The limit of `--script-timeout 0` on the code that runs outside the run: `bound` (`-d`
    /// plus 5 s). The state runs without the JIT compiler until [`Limit::lift`].
    pub(crate) fn outside_run(lua: &Lua, bound: Duration) -> mlua::Result<Limit> {
        let mut limit = Limit::counting(lua, Some(bound), false)?;
        limit.source = "with --script-timeout 0, a hook outside the run may take -d plus 5s";
        Ok(limit)
    }

    /// Ends an [`outside_run`](Limit::outside_run) limit before the run: its hooks then run
    /// unlimited, with the JIT compiler on.
    pub(crate) fn lift(&mut self, lua: &Lua) -> mlua::Result<()> {
        if self.slot.take().is_some() {
            lua.load("jit.on()").set_name("=tsumo").exec()?;
        }
        Ok(())
    }

    /// Runs `call` (a call into the script's hook `name`) under the limit. An interrupted
    /// call fails with `file:line: name() ran past the … script time limit …`.
    pub(crate) fn call<R>(
        &self,
        name: &str,
        call: impl FnOnce() -> mlua::Result<R>,
    ) -> mlua::Result<R> {
        let Some(slot) = &self.slot else {
            return call();
        };
        if slot.cpu {
            slot.clock.store(own_cpu_clock(), Ordering::Relaxed);
        }
        slot.started.store(clock::now().max(1), Ordering::Release);
        let outcome = call();
        if slot.started.swap(0, Ordering::AcqRel) != FIRED {
            return outcome;
        }
        {
            let _installing = slot.hook.lock();
            // SAFETY: the state is alive (this Limit's owner holds it) and this thread is the
            // one running it; removing a hook is always allowed.
            unsafe { ffi::lua_sethook(slot.state as *mut ffi::lua_State, None, 0, 0) };
        }
        match outcome {
            Ok(value) => Ok(value),
            Err(e) => {
                let message = super::lua_message(&e);
                let what = if name == TOP_LEVEL {
                    "the script's top level".to_string()
                } else {
                    format!("{name}()")
                };
                match message.strip_suffix(MARKER) {
                    Some(position) => Err(mlua::Error::RuntimeError(format!(
                        "{position}{what} ran past the {} script time limit and was \
                         interrupted ({})",
                        format_time_us(self.limit.as_micros() as f64),
                        self.source
                    ))),
                    None => Err(e),
                }
            }
        }
    }
}

/// The slots the watchdog looks at (dead ones are dropped as it goes), and the watchdog,
/// started with the first slot.
fn watched() -> std::sync::MutexGuard<'static, Vec<Weak<Slot>>> {
    static SLOTS: OnceLock<Mutex<Vec<Weak<Slot>>>> = OnceLock::new();
    let slots = SLOTS.get_or_init(|| {
        let _ = std::thread::Builder::new()
            .name("tsumo-script-limit".into())
            .spawn(watch);
        Mutex::new(Vec::new())
    });
    slots
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn watch() {
    loop {
        std::thread::sleep(TICK);
        let now = clock::now();
        watched().retain(|slot| {
            let Some(slot) = slot.upgrade() else {
                return false;
            };
            let started = slot.started.load(Ordering::Acquire);
            let running = (started != 0 && started != FIRED).then_some(started);
            if slot.over(running, now) {
                let _installing = slot.hook.lock();
                let claimed = slot.started.compare_exchange(
                    started,
                    FIRED,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
                if claimed.is_ok() {
                    // SAFETY: the call is still running (it has not swapped `started` back),
                    // so the state is alive; lua_sethook is Lua's asynchronous interrupt.
                    unsafe {
                        ffi::lua_sethook(
                            slot.state as *mut ffi::lua_State,
                            Some(interrupt),
                            ffi::LUA_MASKCOUNT,
                            1,
                        )
                    };
                }
            }
            true
        });
    }
}

/// The count hook: raises the limit's error where the script is. It stays installed, firing at
/// every instruction, until the call returns to tsumo: a script that catches the error with
/// `pcall` and loops on meets it again at its first instruction outside the `pcall`.
unsafe extern "C-unwind" fn interrupt(state: *mut ffi::lua_State, ar: *mut ffi::lua_Debug) {
    // SAFETY (whole body): called by LuaJIT on the state's own thread with a valid `ar`.
    unsafe {
        {
            // Scoped: nothing of Rust's may be left to drop when lua_error unwinds.
            let mut message = String::new();
            if ffi::lua_getinfo(state, c"Sl".as_ptr(), ar) != 0 && (*ar).currentline > 0 {
                let source = std::ffi::CStr::from_ptr((*ar).short_src.as_ptr());
                message = format!("{}:{}: ", source.to_string_lossy(), (*ar).currentline);
            }
            message.push_str(MARKER);
            ffi::lua_pushlstring(state, message.as_ptr().cast(), message.len());
        }
        ffi::lua_error(state)
    }
}
