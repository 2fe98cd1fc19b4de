//! tsumo — a constant-rate HTTP(S) load generator, compatible with wrk2's command line, Lua
//! scripts and report, that measures latency truthfully (sub-millisecond pacing, coordinated
//! omission corrected, its own lateness reported); and mahjong WebSocket sessions, capacity
//! searches, saved runs and their comparison.
//!
//! # Map
//!
//! A run flows `argv → cli → Plan → a mode on the engine (N workers, a recorder each) → merged
//! result → report`. Top to bottom, each module importing only those below it
//! (`tests/layering.rs` checks it; the whole layout is in `docs/architecture.md`):
//!
//! - [`cli`]: the command lines (clap), one line per bad input;
//! - [`run`]: one command from its plan to its exit status, its outputs written whole;
//! - [`dashboard`]: `--dashboard`'s live page and `/metrics`, `--prometheus-rw`;
//! - [`report`]: a finished result, one folder per kind (`http`, `mahjong`, `capacity`), the
//!   tools that work on any kind, `kinds` the one dispatcher;
//! - [`web`], [`mahjong`], [`wsload`]: the modes, side by side: HTTP/1.1, HTTP/2 and HTTP/3
//!   at a constant rate; bot players of majiang-server; WebSocket messages to any server;
//! - [`engine`]: worker threads, the start gate, one shutdown, the supervisor, the merge;
//! - [`script`]: the wrk Lua API (LuaJIT);
//! - [`ws`]: WebSocket and socket.io framing;
//! - [`net`]: TCP/TLS streams with the kernel's receive stamps, HTTP/1.1 on the wire, HTTP/2
//!   and HTTP/3 clients, `--bind`;
//! - [`timing`]: the clock, the pacer, the schedule, request deadlines;
//! - [`capacity`]: the capacity search as pure logic;
//! - [`stats`]: recording, one folder per kind (`http`, `mahjong`): recorders, intervals,
//!   the split of latency; histograms, timelines, the sink and the live data;
//! - [`plan`], [`sys`], [`error`], [`slo`]: the immutable run description, the machine around
//!   it, typed errors with their exit status, the objectives of `--slo`.
//!
//! The binary (`main.rs`) allocates with mimalloc (BENCHMARKS.md, "The allocator").

pub mod capacity;
pub mod cli;
pub mod dashboard;
pub mod engine;
pub mod error;
pub mod mahjong;
pub mod net;
pub mod plan;
pub mod report;
pub mod run;
pub mod script;
pub mod slo;
pub mod stats;
pub mod sys;
pub mod timing;
pub mod web;
pub mod ws;
pub mod wsload;
