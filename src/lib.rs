//! tsumo — a constant-rate HTTP(S) load generator, compatible with wrk2's command line, Lua
//! scripts and report, that measures latency truthfully (sub-millisecond pacing, coordinated
//! omission corrected, its own lateness reported).
//!
//! # Layout
//!
//! A run flows `argv → cli → Plan → engine (N workers) → Recorder per worker → RunResult →
//! report` (a mahjong session: `cli → MahjongPlan → mahjong::session → MahjongRecorder per
//! worker → mahjong::report`). Read the modules in that order:
//!
//! - [`cli`]: the wrk2 command line (clap), wrk's number and duration units, bad input as one
//!   clear error line.
//! - [`plan`]: the validated, immutable description of a run.
//! - [`engine`]: worker threads (one current-thread tokio runtime each, share-nothing), the
//!   per-connection schedule, the sub-millisecond pacer (timerfd), request deadlines (one
//!   watchdog sweep per worker instead of a timer per request), shutdown (duration end, Ctrl-C,
//!   or the script stopping) and live progress.
//! - [`http`]: one HTTP/1.1 connection over TCP or TLS: request bytes built once, the response
//!   parser and body framing, error categories.
//! - [`tls`]: rustls client configuration (ring provider, roots, `--insecure`, `--cacert`).
//! - [`stats`]: the per-worker `Recorder` (HdrHistograms and counters) and wrk2-compatible
//!   histogram arithmetic.
//! - [`script`]: the wrk Lua API on LuaJIT (mlua): one Lua state per worker plus the main
//!   state, the `wrk` table, hooks, thread objects. Without `request()`/`response()` hooks no Lua
//!   runs per request.
//! - [`report`]: renderers of a finished run (wrk2's text layout, JSON, `.hgrm`) and the tools
//!   on saved runs: `compare` (side by side, with words on run-to-run noise), `merge` (exact
//!   sums of runs made at the same time) and `plot` (latency by percentile, SVG).
//! - [`ws`]: the WebSocket transport (tokio-tungstenite over our TCP/TLS stream, small read
//!   buffers) and the Engine.IO / socket.io text framing that majiang-server speaks over it.
//! - [`mahjong`]: `tsumo mahjong`: bot players in lockstep phases over worker threads (login,
//!   socket, table, games, logout — always logged out), the bot, the complete rule object, and
//!   the session report. It shares the clock, pre-flight check, progress line, histograms and
//!   unit formatting with HTTP mode; its think time waits on tokio's millisecond timer, not the
//!   pacer, whose sub-millisecond last stretch costs CPU a 400 ms game step does not need.
//! - [`sys`]: the machine around a run: tsumo's open-file limit, the `/proc` sampler of the
//!   server's CPU and memory (`--server-pid`), and `tsumo doctor`'s checks of the limits that
//!   silently cap a test (open files, ephemeral ports, somaxconn, conntrack, nginx workers).
//! - [`error`]: the typed errors that end a run before traffic starts.

pub mod cli;
pub mod engine;
pub mod error;
pub mod http;
pub mod mahjong;
pub mod net;
pub mod plan;
pub mod report;
pub mod script;
pub mod stats;
pub mod sys;
pub mod timing;
pub mod ws;
