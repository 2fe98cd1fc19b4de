//! tsumo — a constant-rate HTTP(S) load generator, compatible with wrk2's command line, Lua
//! scripts and report, that measures latency truthfully (sub-millisecond pacing, coordinated
//! omission corrected, its own lateness reported).
//!
//! # Layout
//!
//! A run flows `argv → cli → Plan → a mode on the engine (N workers, a recorder each) → merged
//! result → report`. The modules, top to bottom; each imports only modules below it, and in
//! every directory no modules side by side import each other in a cycle (both checked by
//! `tests/layering.rs`):
//!
//! - [`cli`]: the wrk2 command line and the subcommands (clap), wrk's number and duration
//!   units, bad input as one clear error line; each option defined once, as the clap `Arg`
//!   that carries its help (`cli::shared` for the options several commands take), and every
//!   `--help`'s option list rendered from its command's table by one renderer (`cli::help`); `--shard I/N` (or a Kubernetes Indexed Job's
//!   `JOB_COMPLETION_INDEX`), `--start-at` and `--run-id` for a run split over machines;
//!   `--bind` (addresses or a CIDR) for the source addresses of one machine.
//! - [`run`]: one command's run from its plan to its exit status: each mode's run with its
//!   report and files (`run::http`, `run::mahjong`), and the A/B rounds of `--vs`, one loop
//!   for both modes (`run::ab`, over the small `Side` trait each mode's runner implements).
//!   `run::capacity` is `tsumo capacity` for HTTP: each step of `capacity::search` one
//!   ordinary open-loop run through `web::run` (an unjudged warm-up run, then the judged one,
//!   then a pause), judged through the step's `SearchStep` impl; the table of steps, the answer, `--json`;
//!   with `--steps`, a fixed staircase instead, each run on its own instant at a fixed offset
//!   from `--start-at` so shards run each step together, each at its share of the rate.
//!   `run::mahjong_capacity` is `tsumo mahjong --capacity`, the same search over players: each
//!   step's new tables one more session on its own thread (`mahjong::session::run_with`'s
//!   hooks: player names after the earlier ones', a stop, the recorders to read) while the
//!   earlier ones play on; a step judged on the difference of every session's records over
//!   its window (`stats::mahjong`'s `since`; its failures since its tables began to log in,
//!   `add_failures`), saved as a session slice; fewer players by logging out the newest
//!   sessions; every player logged out at the end; a live line (`engine::ProgressMode`); a
//!   folder: the search's end in `mod.rs`, one session thread in `cohort`, the steps over
//!   them in `steps`, the live line in `live`. Every one of these writes its outputs through
//!   `run::output` (the text report, `--json`, `--html`, `--hgrm`, `--hlog`): each output it
//!   can, each failure one line on stderr, exit 1 for an output lost.
//!   The binary only parses, runs, renders and exits.
//! - [`dashboard`]: `--dashboard`: one listener per process (hyper's HTTP/1.1 server on a thread
//!   of its own) serving the live page (`view`: the current run's page so far, made by each
//!   kind's `live` and `report::tools::live`, then the final page) and `/metrics` (`metrics`:
//!   OpenMetrics on prometheus-client), both from `stats::live`; `--prometheus-rw`'s pushes
//!   of the same series (`remote_write`: remote write 1.0 on prost and snap).
//! - [`report`]: what tsumo says about a finished run, one room per kind of result, each laid
//!   out the same way (its saved type in `saved`, its `SavedResult` impl in `mod.rs`, `text`,
//!   `page`, `merge`, and `measures`: what `--slo` measures on it and its outcome as a
//!   capacity step, through `SearchStep`; a run and a session also have `live`, their page so
//!   far on the dashboard):
//!   - `report::http`: an HTTP run (HTTP/1.1, HTTP/2 or HTTP/3): wrk2's text layout, and its own
//!     outputs, `.hgrm` and the `--hlog` interval log;
//!   - `report::mahjong`: a mahjong session;
//!   - `report::capacity`: a capacity search, generic over its steps' kind (`SavedSearch<S>`,
//!     `S: SearchStep`): the table of steps, the answer and its curves, a staircase's shards
//!     merged step by step and judged again;
//!   - `report::tools`: what works on any result through the trait alone: the reader of
//!     saved files (`saved`), `compare` (side by side, with words on run-to-run noise),
//!     `merge` (exact sums of runs made at the same time) with `shards` (the shards of one
//!     run from files or one stream of JSON documents, checked and listed one line each),
//!     `plot`, and `page`, the one-file HTML page of a result, a comparison or merged shards;
//!   - the shared base, kept small: `result` (the trait, and `SearchStep`), `schema` (the
//!     format version, `SavedPart`, the histogram codec, the JSON writer), `timeline` (the
//!     `intervals` of both kinds), `chart` (SVG charts on plotters from plain data, importing
//!     no other part of `report`; a folder: the axes in `axis`, the drawing and legend in
//!     `draw`, the colours in `palette`), `lines` (the text lines every kind prints), `objectives`
//!     (the verdict lines, the exit status, what a capacity step is judged by);
//!   - `report::kinds`, the dispatcher: the one file that names every kind's saved type; it
//!     reads a document into its kind and merges results of one kind. A new kind of result is
//!     a folder of its own and an arm there.
//! - The modes, side by side, neither importing the other: [`web`] (HTTP/1.1, or HTTP/2 with
//!   `--http2`, or HTTP/3 with `--http3`, at a constant rate or closed loop: the main thread's
//!   side, one worker's connections, one connection's paced life — `conn` on httparse for
//!   HTTP/1.1, `mux` for the protocols with up to `-m` streams in flight, one life over two
//!   wires (`mux::h2` on hyper, `mux::h3` on quinn and h3, each a `Wire`: how to open a
//!   connection, send a stream and read its response); all share the worker, its schedule,
//!   pacer, recorder and report, so HTTP/2 and HTTP/3 are connection kinds, not copies of the
//!   mode: all wait for a send on `pace`'s turn (the pacer and the send lateness, written once), connect through
//!   `shared` (a connect within `--timeout` and its accounting, written once), and show what
//!   they did through `live` (the live counters, and each connection's progress for the unsent
//!   count)) and [`mahjong`] (bot players in lockstep phases — login, socket, table (`--seats`
//!   of tsumo's players each, the rest of the room left to players from outside), games,
//!   logout, always logged out — the bot with its two players, `tsumogiri` and the real
//!   `shanten` player, the protocol's messages (the events, and the frames a player sends, its
//!   `Action`s among them), and the rule object;
//!   `mahjong::hand` is the hand logic the real player stands on, mirroring majiang-core:
//!   table-driven shanten kept per suit (a discard or a next tile recomputes one suit), legal
//!   discards, calls, kans, sure yaku; think times end on the worker's pacer, as HTTP sends do,
//!   in 1 ms slots: a 400 ms game step needs no finer). Each
//!   is one implementation of the engine's `Mode` and `Worker` traits.
//! - [`engine`]: one run for every mode: worker threads (one current-thread tokio runtime and
//!   one pacer each, share-nothing), the start gate (now, or `--start-at`'s wall-clock instant
//!   converted once to CLOCK_MONOTONIC), one shutdown (duration, SIGINT, SIGTERM,
//!   SIGHUP, a worker ending the run, all work done, a caller's stop flag), the supervisor's tick (progress line,
//!   per-second samples), the bounded join and merge, the server sampler, tsumo's own CPU and
//!   memory. Signals are caught by one handler for the process (`engine::signals`), read by
//!   every run and by `--vs`'s loop; a second signal shortens the wind-down to a stated bound,
//!   never to nothing, and a worker that never ends is reported with what it recorded
//!   (`engine::Kept`). It holds no mode-specific code.
//! - [`script`]: the wrk Lua API on LuaJIT (mlua): one Lua state per worker plus the main
//!   state, the `wrk` table, hooks, thread objects, and the time limit on every hook call (a
//!   watchdog thread interrupts a call past `--script-timeout`). Without `request()`/`response()`
//!   hooks no Lua runs per request.
//! - [`ws`]: the WebSocket transport (tokio-tungstenite over our TCP/TLS stream, a 1 KB read
//!   buffer per socket, back to 1 KB after a longer message once it is empty, and no write
//!   buffer; its failures named in our error types) and the Engine.IO / socket.io text framing
//!   that majiang-server speaks over it.
//! - [`net`]: sockets for every mode: one TCP-or-TLS stream type over a TCP stream that keeps
//!   the kernel's receive timestamp of its last read (`stamp`: `SO_TIMESTAMPING`, read from
//!   `recvmsg`; user-space stamps where the kernel has none), the rustls configuration
//!   (ring provider, roots, `--insecure`, `--cacert`, ALPN `http/1.1`, `h2` or `h3`), the pre-flight
//!   check, HTTP/1.1 on the wire (request bytes built once, the response parser and body
//!   framing, one-shot exchanges), HTTP/2 on hyper and hyper-util (the client connection
//!   with the run's settings, wrk's raw requests mapped to HTTP/2, a frame observer counting
//!   GOAWAY and RST_STREAM by code and the server's stream grant), HTTP/3 on quinn and h3 (a
//!   QUIC connection from a UDP socket of its own, TLS 1.3 by the same rustls configuration
//!   with ALPN `h3`, full handshakes counted by the certificates verified, 0-RTT with
//!   `--0rtt`, packets sent and lost, stream and connection ends by kind), and `--bind`'s source
//!   addresses (round-robin by connection, bound with `IP_BIND_ADDRESS_NO_PORT`, each checked
//!   before traffic).
//! - [`timing`]: the clock, the pacer every mode waits on (one timerfd per worker, pointed at the
//!   earliest waiter by the runtime's park hook just before the thread sleeps: each send to the
//!   microsecond below 8,000 req/s per thread, above that the sends of a 100–250 µs slot on one
//!   wake-up; `--slack` chooses), the per-connection schedule (a shard's connections keep the
//!   whole run's interleaved phases), request deadlines (one watchdog sweep per worker instead of
//!   a timer per request).
//! - [`capacity`]: the capacity search as pure logic (issue 22): steps of load run through a
//!   `StepRunner`, grown geometrically until an objective breaks, bisected to `--resolution`,
//!   confirmed; a fixed staircase for sharded runs; a step limited by tsumo or by the machine
//!   (named as `tsumo doctor` names it) ends the search, never read as the server's limit;
//!   the answer line and what broke first.
//! - [`stats`]: what is recorded and what a run results in: the per-worker recorders
//!   (HdrHistograms and counters, HTTP/2's among them), the result types of both modes, wrk2-compatible histogram
//!   arithmetic, number formatting, and the judgement of a rate not reached; `end`: why a run
//!   ended (`EndReason`, saved as `ended_by`); `split`: the
//!   corrected latency split into what the server caused and tsumo's own send and read delay,
//!   exactly, response by response; `live`: what `--dashboard` shows, the intervals each
//!   worker closed handed over (a channel's send per interval, no lock on a worker), replaced by the merged
//!   timeline when the run ends; `timeline`: each
//!   worker's intervals of `--interval` (an HTTP recorder's open interval is closed by the
//!   clock value of the response that passes its end, or by the worker's timer), merged by
//!   adding.
//! - [`plan`], [`sys`], [`error`], [`slo`]: the validated, immutable description of a run
//!   (with its part of a sharded run; every mode's plan holds one `RunOptions`, both capacity
//!   plans one `SearchOptions`; an HTTP run's protocol is one `Protocol`, for it and its `--vs`
//!   side); the machine around it (open-file limit, the `/proc` sampler of the
//!   server, tsumo's own usage, `tsumo doctor`, the kernel clocks' one read and the wall clock
//!   with its NTP state, a seeded
//!   xorshift for jitter, backoff and the random hands of tests and benches); the typed
//!   errors that end a run before traffic starts, each kind with its exit status (1 the run
//!   failed, 2 bad command line or input, 99 an objective broke; `error::ExitStatus`); the
//!   objectives of `--slo` (their language, and the judgement of a run's measures, which each
//!   kind of result in the report layer reads from its saved form: `measures` in its folder).
//!
//! The binary (`main.rs`) allocates with mimalloc, arenas committed as used: hyper's HTTP/2
//! path allocates per request (headers, streams), and there mimalloc cut tsumo's CPU per
//! request at saturation by about 15 % against glibc's malloc; HTTP/1.1 (which allocates
//! nothing per request) and mahjong sessions measured the same either way, and a session's
//! memory per player is unchanged (BENCHMARKS.md, "The allocator").

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
