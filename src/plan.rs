//! The validated, immutable description of a run, shared by every mode.
//!
//! `cli` turns argv into a `Plan`; everything after that (engine, report) reads it and never
//! re-validates. Keeping it plain data makes it easy to print in the report and store in JSON.
//! What every mode has is one [`RunOptions`], held by each mode's plan, so that code working
//! on any run (the engine's settings, the outputs, the A/B loop) reads it one way; the two
//! capacity searches share [`SearchOptions`] the same way.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::slo::Objective;

/// Which part of a run split over several processes (or machines) this process runs:
/// `--shard I/N`, or a Kubernetes Indexed Job's `JOB_COMPLETION_INDEX`.
///
/// Shard `index` (0-based here; `I − 1` of `--shard I/N`) owns the run's connections (HTTP)
/// or tables (mahjong) `index, index + count, index + 2·count, …`: interleaved, so each shard's
/// share of the whole run's schedule is evenly spread and the shards together send exactly what
/// one process would have sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shard {
    /// 0-based.
    pub index: usize,
    /// Shards in the run, at least 1.
    pub count: usize,
}

impl Shard {
    /// The whole run in one process.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// The whole run's number of this shard's `local`-th connection (or table).
    pub fn global(self, local: usize) -> usize {
        self.index + self.count * local
    }
}

/// How this process takes part in a run that may be split over several: its shard, the common
/// start, and the id every shard's JSON carries so that `tsumo merge` knows the parts of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Part {
    pub shard: Shard,
    /// `--start-at`: the wall-clock instant to start the schedule, in ns since the Unix epoch.
    pub start_at: Option<u64>,
    /// `--run-id`, or derived from the command line and the start time.
    pub run_id: String,
    /// The command line exactly as given (argv, `argv[0]` first), saved so a result says
    /// what ran it; empty in a plan not made from a command line.
    pub command: Vec<String>,
}

impl Default for Part {
    fn default() -> Part {
        Part {
            shard: Shard::WHOLE,
            start_at: None,
            run_id: String::new(),
            command: Vec::new(),
        }
    }
}

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    Http,
    Https,
}

impl Scheme {
    /// The default port for the scheme, used when the URL has none.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// The URL under test, split the way the engine and the Lua API need it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    /// The URL exactly as typed (printed in the report header, as wrk2 does).
    pub url: String,
    pub scheme: Scheme,
    /// Host without IPv6 brackets.
    pub host: String,
    /// The port as written in the URL, if any (wrk's `wrk.port` is nil without one).
    pub explicit_port: Option<u16>,
    /// Path + query, `/` when the URL has none. The fragment is not sent.
    pub path: String,
}

impl Target {
    /// The port to connect to.
    pub fn port(&self) -> u16 {
        self.explicit_port
            .unwrap_or_else(|| self.scheme.default_port())
    }

    /// The default `Host` header value: host (bracketed for IPv6), plus `:port` only if the URL
    /// gave one — as wrk does.
    pub fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        match self.explicit_port {
            Some(p) => format!("{host}:{p}"),
            None => host,
        }
    }
}

/// Where `--json` writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum JsonOut {
    Stdout,
    File(PathBuf),
}

/// The options every run has, whatever its mode (an HTTP run, a mahjong session, a capacity
/// search's steps): held once by each mode's plan, so the engine, the outputs and the A/B loop
/// read them the same way for every mode.
#[derive(Debug, Clone, Serialize)]
pub struct RunOptions {
    /// `--shard`, `--start-at`, `--run-id`.
    pub part: Part,
    /// `--bind`: the source addresses connections (or players: each player's login, socket and
    /// logout from its one address) are spread over, round-robin (empty: the kernel chooses).
    pub bind: Vec<IpAddr>,
    /// Worker threads (`-t`), at least 1; every mahjong table lives on one thread.
    pub threads: usize,
    /// Run length (`-d`); for a mahjong session, the longest it may last: players still
    /// playing then are logged out.
    pub duration: Duration,
    /// The run's name in reports and comparisons (`--label`; default: the URL as typed).
    pub label: String,
    /// Server processes to sample during the run (`--server-pid`, repeatable; children count).
    pub server_pids: Vec<u32>,
    /// `--interval`: the length of the intervals the run is also recorded in.
    pub interval: Duration,
    /// `--vs URL`: the same load against a second target, alternated with the first in
    /// `rounds` rounds, then compared.
    pub vs: Option<Target>,
    /// The second target's name (`--vs-label`; default: its URL).
    pub vs_label: Option<String>,
    /// Rounds of an A/B run (`--rounds`).
    pub rounds: u32,
    /// `-L`: print the latency distributions (HTTP: and the spectrum).
    pub latency: bool,
    /// `-k/--insecure`: do not verify the server certificate.
    pub insecure: bool,
    /// `--cacert FILE`: extra trusted roots (PEM).
    pub cacert: Option<PathBuf>,
    /// `--json FILE|-`.
    pub json: Option<JsonOut>,
    /// `--html FILE`: also write the run's page (with `--vs`, the comparison's).
    pub html: Option<PathBuf>,
    /// `--junit FILE`: also write the objectives' verdicts as JUnit XML (`run::ci`).
    #[serde(skip)]
    pub junit: Option<PathBuf>,
    /// `--quiet`: no text report on stdout.
    pub quiet: bool,
    /// `--progress`: the progress line on stderr even when it is not a terminal.
    pub progress: bool,
    /// `--slo`, repeatable: what the run must hold, judged at its end (exit 99 if broken).
    pub objectives: Vec<Objective>,
    /// `--dashboard ADDR` (with `--dashboard-linger`): the live page and `/metrics`.
    #[serde(skip)]
    pub dashboard: Option<DashboardAt>,
    /// `--prometheus-rw URL`: where the same series are pushed with Prometheus remote write.
    #[serde(skip)]
    pub remote_write: Option<Target>,
}

/// `--dashboard ADDR` and `--dashboard-linger T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DashboardAt {
    /// Where the live page and `/metrics` are served (127.0.0.1 when only a port is given).
    pub addr: SocketAddr,
    /// How long the page stays up after the command ended (0: tsumo exits as before).
    pub linger: Duration,
}

/// One part of a `--stages` profile: `duration_ns` long, the rate going linearly from `from` to
/// `to` requests/s over it (equal: a hold; a duration of 0: a jump).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    pub duration_ns: u64,
    pub from: u64,
    pub to: u64,
}

/// Everything a run needs, validated.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub target: Target,
    /// The options every mode has: threads, length, part, name, outputs, objectives.
    #[serde(flatten)]
    pub options: RunOptions,
    /// This process's connections (`-c`, divided by the shards), at least `options.threads`; the
    /// remainder of `c / t` is spread over the first threads, never dropped.
    pub connections: usize,
    /// This process's target rate in requests/s (`-R`, divided by the shards). `None` means
    /// closed loop at full speed. With `--stages`, the profile's mean rate (divided by the
    /// shards), for what needs one rate (the report's target, the shortfall).
    pub rate: Option<u64>,
    /// `--stages`: the whole run's rate over time, in order (not divided by the shards: each
    /// shard runs its connections of the whole run's schedule); empty without it.
    #[serde(skip)]
    pub stages: Vec<Stage>,
    /// Lua script (`-s`).
    pub script: Option<PathBuf>,
    /// `--script-timeout`: how long one call of a script hook may run before it is
    /// interrupted as a script error; `None` (`0`) for no limit, with LuaJIT's compiler on.
    pub script_timeout: Option<Duration>,
    /// Extra headers (`-H`), in command-line order; a later duplicate name replaces an earlier one.
    pub headers: Vec<(String, String)>,
    /// `-U`: also print the uncorrected distribution (implies `options.latency`).
    pub u_latency: bool,
    /// `-B`: with pipelining, record only the last response of each batch.
    pub batch_latency: bool,
    /// Per-request timeout (`-T/--timeout`).
    pub timeout: Duration,
    /// `--slack`: sends due within one slot of this length share a wake-up (0: each its own,
    /// to the microsecond); `None` (`auto`, the default): chosen from the per-thread rate.
    pub slack: Option<Duration>,
    /// Put before the progress line (a capacity step's number and target); empty
    /// otherwise.
    pub progress_prefix: String,
    /// A capacity step's judged run: ended once its errors broke beyond doubt
    /// ([`EndEarly`]); `None` for every other run.
    #[serde(skip)]
    pub end_early: Option<EndEarly>,
    /// Positional arguments after the URL (and after `--`), for the script's `init(args)`.
    pub script_args: Vec<String>,
    /// `--hgrm FILE`: also write the corrected latency distribution in the format of
    /// HdrHistogram's plotter.
    pub hgrm: Option<PathBuf>,
    /// `--hlog FILE`: also write the corrected latency, interval by interval, as an
    /// HdrHistogram interval log.
    pub hlog: Option<PathBuf>,
    /// `--requests FILE` (with `--requests-sample F`): every request on record.
    #[serde(skip)]
    pub requests: Option<RequestsOut>,
    /// The protocol spoken: HTTP/1.1, `--http2` or `--http3`, with its settings.
    #[serde(flatten)]
    pub protocol: Protocol,
    /// The protocol the `--vs` run speaks: this run's, HTTP/1.1 with `--vs-http1`, or HTTP/2
    /// with `--vs-http2` where this one speaks HTTP/3.
    #[serde(skip)]
    pub vs_protocol: Protocol,
}

/// `--requests FILE`: where each request's row goes, and the fraction of requests logged
/// (`--requests-sample`, in (0, 1]; 1 without it).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestsOut {
    pub path: PathBuf,
    pub sample: f64,
}

/// The protocol of a run, with its settings: one of three, never two at once. Saved as today's
/// `http2` and `http3` fields (absent for HTTP/1.1), through [`ProtocolFields`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "ProtocolFields", into = "ProtocolFields")]
pub enum Protocol {
    /// HTTP/1.1, the default: one request in flight per connection.
    #[default]
    Http1,
    /// `--http2`: h2 over TLS, prior-knowledge h2c over plain TCP.
    Http2(Http2),
    /// `--http3`: HTTP/3 over QUIC (https:// only).
    Http3(Http3),
}

impl Protocol {
    /// Streams per connection of an HTTP/2 or HTTP/3 run (`-m`); `None` for HTTP/1.1.
    pub fn streams(&self) -> Option<usize> {
        match self {
            Protocol::Http1 => None,
            Protocol::Http2(h2) => Some(h2.streams),
            Protocol::Http3(h3) => Some(h3.streams),
        }
    }

    /// The HTTP/2 settings, when the protocol is HTTP/2.
    pub fn http2(&self) -> Option<Http2> {
        match self {
            Protocol::Http2(h2) => Some(*h2),
            _ => None,
        }
    }

    /// The HTTP/3 settings, when the protocol is HTTP/3.
    pub fn http3(&self) -> Option<Http3> {
        match self {
            Protocol::Http3(h3) => Some(*h3),
            _ => None,
        }
    }
}

/// How a [`Protocol`] is saved (the fields a result's `plan` has always had): `http2` or
/// `http3` with its settings, neither for HTTP/1.1. A file holding both (no tsumo wrote one)
/// reads as HTTP/3, as reports always read it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct ProtocolFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http2: Option<Http2>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http3: Option<Http3>,
}

impl From<ProtocolFields> for Protocol {
    fn from(fields: ProtocolFields) -> Protocol {
        match (fields.http2, fields.http3) {
            (_, Some(h3)) => Protocol::Http3(h3),
            (Some(h2), None) => Protocol::Http2(h2),
            (None, None) => Protocol::Http1,
        }
    }
}

impl From<Protocol> for ProtocolFields {
    fn from(protocol: Protocol) -> ProtocolFields {
        ProtocolFields {
            http2: protocol.http2(),
            http3: protocol.http3(),
        }
    }
}

/// The HTTP/3 settings of a run (`--http3` and the options around it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Http3 {
    /// Concurrent streams per connection (`-m/--streams`).
    pub streams: usize,
    /// `--0rtt`: a resumed connection's first requests go in its first flight.
    pub zero_rtt: bool,
}

/// The HTTP/2 settings of a run (`--http2` and the options around it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Http2 {
    /// Concurrent streams per connection (`-m/--streams`).
    pub streams: usize,
    /// Our SETTINGS_INITIAL_WINDOW_SIZE, bytes (`--h2-window`); the connection window is this
    /// times the streams, so flow control never holds a response back.
    pub window: u32,
    /// Our SETTINGS_MAX_FRAME_SIZE, bytes (`--h2-max-frame`).
    pub max_frame: u32,
    /// Our SETTINGS_HEADER_TABLE_SIZE, bytes (`--h2-header-table`): the HPACK table the server
    /// may use for response headers.
    pub header_table: u32,
}

impl Http2 {
    /// The window a connection opens with: room for every stream's window, within HTTP/2's
    /// 2^31-1 limit.
    pub fn connection_window(&self) -> u32 {
        let total = u64::from(self.window) * self.streams as u64;
        total.min(i32::MAX as u64) as u32
    }
}

impl Plan {
    /// Connections owned by worker `thread`: `c / t`, plus one for the first `c % t` threads.
    pub fn connections_for_thread(&self, thread: usize) -> usize {
        let threads = self.options.threads;
        let base = self.connections / threads;
        base + usize::from(thread < self.connections % threads)
    }
}

#[cfg(test)]
impl Plan {
    /// The plan unit tests start from: `target`, 2 threads and 2 connections for 1 s, closed
    /// loop, every option at its default and no output ([`RunOptions::for_tests`]); a test
    /// changes what it is about with `Plan { rate: …, ..Plan::for_tests(target) }`.
    pub(crate) fn for_tests(target: Target) -> Plan {
        Plan {
            target,
            options: RunOptions::for_tests(),
            connections: 2,
            rate: None,
            stages: Vec::new(),
            script: None,
            headers: Vec::new(),
            u_latency: false,
            batch_latency: false,
            timeout: Duration::from_secs(2),
            slack: None,
            progress_prefix: String::new(),
            end_early: None,
            script_args: Vec::new(),
            hgrm: None,
            hlog: None,
            requests: None,
            script_timeout: Some(Duration::from_secs(1)),
            protocol: Protocol::Http1,
            vs_protocol: Protocol::Http1,
        }
    }
}

impl RunOptions {
    /// `--vs URL2`'s two sides' options, with URL2: both run as this run does but write no
    /// file of their own (the A/B loop writes the comparison's), and the second is labelled
    /// `--vs-label` (default: URL2). `None` without `--vs`.
    pub fn vs_sides(&self) -> Option<(&Target, [RunOptions; 2])> {
        let vs = self.vs.as_ref()?;
        let first = RunOptions {
            vs: None,
            json: None,
            html: None,
            ..self.clone()
        };
        let second = RunOptions {
            label: self.vs_label.clone().unwrap_or_else(|| vs.url.clone()),
            ..first.clone()
        };
        Some((vs, [first, second]))
    }
}

#[cfg(test)]
impl RunOptions {
    /// 2 threads for 1 s, labelled `test`, every option at its default and no output.
    pub(crate) fn for_tests() -> RunOptions {
        RunOptions {
            part: Part::default(),
            bind: Vec::new(),
            threads: 2,
            duration: Duration::from_secs(1),
            label: String::from("test"),
            server_pids: Vec::new(),
            interval: Duration::from_secs(1),
            vs: None,
            vs_label: None,
            rounds: 1,
            latency: false,
            insecure: false,
            cacert: None,
            json: None,
            html: None,
            junit: None,
            quiet: false,
            progress: false,
            objectives: Vec::new(),
            dashboard: None,
            remote_write: None,
        }
    }
}

/// Which player every bot seat runs (`tsumo mahjong --bot NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BotKind {
    /// Plays: discards by shanten, riichi, calls and wins (the default).
    #[default]
    Shanten,
    /// Discards every drawn tile, never calls or wins: every game the same length.
    Tsumogiri,
}

impl BotKind {
    pub const ALL: [BotKind; 2] = [BotKind::Shanten, BotKind::Tsumogiri];

    /// The name on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            BotKind::Shanten => "shanten",
            BotKind::Tsumogiri => "tsumogiri",
        }
    }

    pub fn parse(name: &str) -> Option<BotKind> {
        BotKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// Everything a WebSocket run needs, validated (`tsumo ws …`).
#[derive(Debug, Clone, Serialize)]
pub struct WsPlan {
    /// What to connect to: the `ws://` URL's host and port as an `http` target (`wss://`: an
    /// `https` one, with the run's TLS settings); `url` is the URL as typed.
    pub target: Target,
    /// The options every mode has.
    #[serde(flatten)]
    pub options: RunOptions,
    /// This process's connections (`-c`), at least one per thread.
    pub connections: usize,
    /// Messages per second over all connections (`-R`); `None`: closed loop.
    pub rate: Option<u64>,
    /// Each message's length in bytes (`--size`).
    pub size: usize,
    /// `-T`: how long a connect (TCP, TLS, upgrade) and a reply may take.
    pub timeout: Duration,
    /// `-U`: also print the uncorrected distribution.
    pub u_latency: bool,
    /// `-s`: the Lua script that makes the messages and finds the replies' keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<std::path::PathBuf>,
    /// `--connect-rate N/s`: connections opened per second before the start; `None`: all at
    /// once.
    pub connect_rate: Option<u64>,
    /// `--ping T`: each connection pings every T and times the pong.
    pub ping: Option<Duration>,
    /// `--requests FILE` (with `--requests-sample F`): every message on record.
    #[serde(skip)]
    pub requests: Option<RequestsOut>,
    /// `--socketio`: the event (`--event`) each message is sent as, acknowledged by the server;
    /// `target.url` is then the Engine.IO URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socketio: Option<String>,
}

/// Everything a mahjong session run needs, validated (`tsumo mahjong …`).
#[derive(Debug, Clone, Serialize)]
pub struct MahjongPlan {
    /// The server's base URL, e.g. `http://127.0.0.1:4615/server` (path = the base path).
    pub server: Target,
    /// The options every mode has: threads, length, part, name, outputs, objectives.
    #[serde(flatten)]
    pub options: RunOptions,
    /// This process's bot players (`-c`, divided by the shards), a multiple of `seats`.
    pub players: usize,
    /// tsumo's players per table (`--seats`, 1–4); the other seats of each room are left for
    /// players from outside (e.g. `majiang-bot`), and the table starts once the room is full.
    pub seats: usize,
    /// Interval between successive players' logins, and between their connects (`--ramp`).
    pub ramp: Duration,
    /// Delay before each own-turn action (`--think`), plus a uniform random `0..think_jitter`.
    pub think: Duration,
    pub think_jitter: Duration,
    /// The player every seat runs (`--bot`).
    pub bot: BotKind,
    /// Games per table (`--games`).
    pub games: u32,
    /// The complete rule object sent with `START` (`--rule FILE` merged onto the default).
    pub rule: serde_json::Value,
    /// `--rule FILE` as given: an input no output of the session may overwrite.
    pub rule_file: Option<PathBuf>,
    /// The `START` timer (`--timer LIMIT[+BANK]`), seconds.
    pub timer: Option<Vec<u64>>,
    /// Every phase completes for every player before the next starts; with `--start-when-full`
    /// each table starts as soon as it is full instead.
    pub lockstep: bool,
    /// Time allowed for each login, logout and connect + handshake (`--connect-timeout`).
    pub connect_timeout: Duration,
    /// Tries of a failed login, connect or logout before it counts as failed (`--retries`).
    pub retries: u32,
    /// How long each player's logout may take once its session is over, retries and waiting
    /// for its turn included (`--logout-timeout`).
    pub logout_timeout: Duration,
    /// `--stages`: the players online over time (empty without it). Players then arrive as the
    /// profile rises and leave as it falls; `players` is this process's most at once.
    #[serde(skip)]
    pub stages: Vec<Stage>,
    /// `--stay N`: with `--stages`, each table's players log out after N games and others
    /// arrive in their place (`None`: a table plays until the profile falls or ends).
    #[serde(skip)]
    pub stay: Option<u32>,
    /// `--requests FILE` (with `--requests-sample F`): every timed reply of the bots on record.
    #[serde(skip)]
    pub requests: Option<RequestsOut>,
}

impl MahjongPlan {
    /// This process's tables: `seats` players each.
    pub fn tables(&self) -> usize {
        self.players / self.seats.max(1)
    }

    /// Tables on worker `thread`: tables are spread like connections in HTTP mode.
    pub fn tables_for_thread(&self, thread: usize) -> usize {
        let tables = self.tables();
        let threads = self.options.threads;
        tables / threads + usize::from(thread < tables % threads)
    }
}

/// A capacity search's settings, the same for a search over a rate and one over players: the
/// loads it tries and how long each step runs.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The first load (`--from`): a target rate, or players (a multiple of `--seats`).
    pub from: u64,
    /// The highest load tried (`--to`).
    pub to: Option<u64>,
    /// `--resolution`, a share (0.05).
    pub resolution: f64,
    /// Each step's judged length (`--step`): a run's, or of the tables' play.
    pub step: Duration,
    /// The unjudged load before each step is judged (`--warmup`): a run at the step's rate,
    /// or play once a step's tables are seated.
    pub warmup: Duration,
    /// The rest after each step (`--pause`); in a search over players, after tables were
    /// logged out, before the next step.
    pub pause: Duration,
    /// `--whole-steps`: no step ends early because it held far under its objectives.
    pub whole_steps: bool,
}

/// `tsumo mahjong --capacity`: the search over players, and the session each step's tables
/// play (its `players` set per step of tables, its games unbounded).
#[derive(Debug, Clone)]
pub struct MahjongCapacityPlan {
    pub session: MahjongPlan,
    pub search: SearchOptions,
}

/// `tsumo capacity`: the search's settings, and the run each step makes (its `-R` and `-d`
/// set per step; its `--json` is the search's file).
#[derive(Debug, Clone)]
pub struct CapacityPlan {
    pub run: Plan,
    pub search: SearchOptions,
    /// A fixed staircase instead of the search (`--steps`, or `--step-count` from `--from` to
    /// `--to`): the whole run's target rates in order, each split over the shards.
    pub staircase: Option<Vec<u64>>,
    /// The most connections a search's step opens (`--max-connections`, at least `-c`);
    /// `None`: as many as the open-file limit leaves room for, up to 10,000.
    pub max_connections: Option<usize>,
}

/// When a capacity search's judged step may end early (the rule is the capacity search's, in its
/// `early` module): the lowest errors limit among its objectives, its latency objectives, and
/// the warm-up's last seconds already steady beyond doubt; and whether a step far under them
/// may end as held. Part of a run's plan, as its objectives are.
#[derive(Debug, Clone, PartialEq)]
pub struct EndEarly {
    /// The errors objective's limit, in % (the lowest, with several); `None`: no errors
    /// objective.
    pub errors_limit: Option<f64>,
    /// The warm-up's last whole seconds that failed at least `slo::FAR` times the limit.
    pub warm_up_s: u32,
    /// The latency objectives (`p99<10ms`), each counted in the gauges against its limit over
    /// and times `slo::FAR`.
    pub latency: Vec<LatencyEnd>,
    /// How a step far under every objective may end as held; `None`: never (`--whole-steps`,
    /// or an objective the watch cannot judge as the run goes, such as `max<X`).
    pub held: Option<HeldEnd>,
}

/// A latency objective as a step's watch reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyEnd {
    /// The share of responses the objective lets reach its limit: 0.01 for `p99`, 0 for `max`.
    pub over_share: f64,
    /// The objective's limit, µs.
    pub limit_us: u64,
    /// The warm-up's last whole seconds whose responses reached `slo::FAR` times the limit
    /// at least `slo::FAR` times `over_share` (steady beyond doubt).
    pub warm_up_s: u32,
}

/// When a step far under its objectives ends as held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeldEnd {
    /// The judged run's rate, requests/sec.
    pub rate: u64,
    /// Its judged time at least.
    pub min_judged: Duration,
    /// The share of the requests due so far that must have been answered (the achieved
    /// rate), 0 to 1.
    pub answered_share: f64,
}
