//! `tsumo ws [-t -c -d -R --size N] ws://host/path`: the WebSocket run's command line, turned
//! into a [`WsPlan`]. wrk's units and one-line errors, as for the wrk2 line; the URL is
//! checked by the same parser (`ws` read as `http`, `wss` as `https`), so `wss://` takes the
//! same TLS options.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Command;

use super::error::ArgError;
use super::help::Page;
use super::shared::{self, flag, value, For};
use super::units::duration_text;
use super::wrk::DEFAULT_ROUNDS;
use super::{extra_argument, json_out, shard, subcommand_matches, url, url_args};
use super::{Options, Parsed};
use crate::plan::{RunOptions, WsPlan};

const DEFAULT_THREADS: usize = 2;
const DEFAULT_CONNECTIONS: usize = 10;
const DEFAULT_DURATION: Duration = Duration::from_secs(10);
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
const DEFAULT_SIZE: usize = 64;

/// The shortest message: its sequence number (16 decimal digits) and nothing else.
pub const MIN_SIZE: usize = 16;

/// The longest message (the transport's limit on what the server may send back).
const MAX_SIZE: usize = crate::ws::transport::MAX_MESSAGE;

/// `--socketio`'s event without `--event`.
const DEFAULT_EVENT: &str = "echo";

/// Event names socket.io keeps for itself: a client may not emit them.
const RESERVED_EVENTS: [&str; 6] = [
    "connect",
    "connect_error",
    "disconnect",
    "disconnecting",
    "newListener",
    "removeListener",
];

const USAGE: &str = "usage: tsumo ws [options] ws://host[:port]/path";

const PAGE: Page = Page {
    before: "\
tsumo ws — WebSocket messages at a constant rate, each round trip timed and corrected

Usage: tsumo ws [options] ws://host[:port]/path  (or wss://)

Each connection sends text messages of --size bytes, a sequence number inside, at its
share of -R; an echo server's replies are matched to them by that number. The round
trip counts from the message's intended send time (corrected for coordinated omission)
and, with -U, from its actual send. Without -R: a closed loop, each connection sending
its next message when the previous one is answered. A connection has one message in
flight at a time, as a wrk2 connection has one request. With -s script.lua, the
script's message() makes each message and reply(data) names the message a reply
answers (docs/websocket.md). With --socketio, the connections speak socket.io: each
message is an event sent with an acknowledgement id, and the server's acknowledgement
is its reply.
",
    heading: "Options",
    column: 25,
    after: "\
Examples:
  tsumo ws -c 10 -d 30s -R 1000 -L ws://127.0.0.1:8080/echo
  tsumo ws -c 4 -d 10s --size 1k --json ws.json wss://example.com/socket
  tsumo ws -c 4 -d 10s -R 200 -s docs/examples/ws-jsonrpc.lua ws://127.0.0.1:8080/rpc
  tsumo ws -c 10 -R 1000 --socketio --event echo ws://127.0.0.1:3000/
  tsumo ws -c 10 -R 1000 --slo 'p99<20ms' --slo 'errors<0.1%' ws://127.0.0.1:8080/echo
  tsumo ws -R 1000 --label nginx ws://127.0.0.1/echo --vs ws://127.0.0.1:8080/echo
  tsumo ws -c 100 -R 10k --shard 1/2 --start-at $AT --json s1.json ws://h/echo

Exit status: 0 the run ran; 1 it failed (no connection opened, nothing answered); 2 bad
command line; 99 the run ran and an objective (--slo) broke.
",
};

/// Parses the arguments after the `ws` word.
pub fn parse(args: Vec<OsString>) -> Result<Parsed, ArgError> {
    let command = command();
    let matches = subcommand_matches(&command, args.clone())?;
    if matches.get_flag("help") {
        return Ok(Parsed::Print(PAGE.render(&command)));
    }
    let options = Options {
        command: &command,
        matches: &matches,
    };
    let (threads, connections) = threads_and_connections(&options)?;
    let duration = options.duration("duration")?.unwrap_or(DEFAULT_DURATION);
    if duration.is_zero() {
        return Err(options.invalid("duration", "must be longer than zero"));
    }
    let timeout = options.duration("timeout")?.unwrap_or(DEFAULT_TIMEOUT);
    if timeout.is_zero() {
        return Err(options.invalid("timeout", "must be longer than zero"));
    }
    let rate = options.metric("rate")?;
    if rate == Some(0) {
        return Err(options.invalid("rate", "must be at least 1 message/s"));
    }
    let size = options.count("size")?.unwrap_or(DEFAULT_SIZE);
    if size < MIN_SIZE {
        let reason = format!("must be at least {MIN_SIZE} bytes (the sequence number)");
        return Err(options.invalid("size", &reason));
    }
    if size > MAX_SIZE {
        return Err(options.invalid("size", "must be at most 4M bytes"));
    }
    let Some(typed) = matches.get_one::<String>("url") else {
        return Err(ArgError::Refused(format!("missing URL ({USAGE})")));
    };
    let mut target = ws_target(typed)?;
    if let Some(extra) = extra_argument(&matches) {
        return Err(ArgError::Refused(format!(
            "unexpected argument '{extra}' ({USAGE})"
        )));
    }
    let (connect_rate, ping) = connection_options(&options)?;
    let socketio = socketio_event(&options, &mut target)?;
    let u_latency = matches.get_flag("u_latency");
    let (vs, rounds) = vs_and_rounds(&options)?;
    let part = shard::part(
        &matches,
        &args,
        &shard::process_env,
        crate::sys::wallclock::unix_now_ns(),
    )?;
    // As HTTP shards: 1/N of the connections and of the rate, on the whole run's send times.
    let (connections, rate) = shard::split_http(connections, rate, threads, part.shard)?;
    Ok(Parsed::Ws(Box::new(WsPlan {
        target,
        options: RunOptions {
            part,
            bind: Vec::new(),
            threads,
            duration,
            label: matches
                .get_one::<String>("label")
                .cloned()
                .unwrap_or_else(|| typed.clone()),
            server_pids: super::server_pids(&matches)?,
            interval: super::interval(&options)?,
            vs,
            vs_label: matches.get_one::<String>("vs_label").cloned(),
            rounds,
            latency: matches.get_flag("latency") || u_latency,
            insecure: matches.get_flag("insecure"),
            cacert: matches.get_one::<PathBuf>("cacert").cloned(),
            json: json_out(matches.get_one::<PathBuf>("json").cloned()),
            html: matches.get_one::<PathBuf>("html").cloned(),
            junit: matches.get_one::<PathBuf>("junit").cloned(),
            quiet: matches.get_flag("quiet"),
            progress: matches.get_flag("progress"),
            objectives: super::slo::ws(&matches, rate.is_some())?,
            dashboard: super::shared::dashboard_at(&options)?,
            remote_write: super::shared::remote_write(&options)?,
        },
        connections,
        rate,
        size,
        timeout,
        u_latency,
        script: matches.get_one::<PathBuf>("script").cloned(),
        connect_rate,
        ping,
        requests: super::wrk::requests(&options)?,
        socketio,
    })))
}

/// `-t` and `-c`: at least one connection per thread.
fn threads_and_connections(options: &Options<'_>) -> Result<(usize, usize), ArgError> {
    let threads = options.count("threads")?.unwrap_or(DEFAULT_THREADS);
    let connections = options.count("connections")?.unwrap_or(DEFAULT_CONNECTIONS);
    if threads == 0 {
        return Err(options.invalid("threads", "must be at least 1"));
    }
    if connections == 0 {
        return Err(options.invalid("connections", "must be at least 1"));
    }
    if connections < threads {
        return Err(ArgError::Refused(format!(
            "-c {connections} is fewer connections than -t {threads} threads; \
             give at least one connection per thread"
        )));
    }
    Ok((threads, connections))
}

/// The `--vs` target (a `ws://` or `wss://` URL) and `--rounds` (the `--vs-*` options only with
/// `--vs`).
fn vs_and_rounds(options: &Options<'_>) -> Result<(Option<crate::plan::Target>, u32), ArgError> {
    let rounds = super::ab_rounds(options, DEFAULT_ROUNDS)?;
    let vs = match options.matches.get_one::<String>("vs") {
        Some(text) => Some(ws_target(text).map_err(|e| match e {
            ArgError::Refused(line) => ArgError::Refused(format!("{line} for --vs")),
            other => other,
        })?),
        None => None,
    };
    Ok((vs, rounds))
}

/// `--socketio [--event NAME]`: the event each message is sent as (`echo` by default); the
/// target's URL becomes the Engine.IO one.
fn socketio_event(
    options: &Options<'_>,
    target: &mut crate::plan::Target,
) -> Result<Option<String>, ArgError> {
    let event = options.matches.get_one::<String>("event");
    if !options.matches.get_flag("socketio") {
        return match event {
            Some(_) => Err(ArgError::Refused(
                "--event names the socket.io event: it needs --socketio".to_string(),
            )),
            None => Ok(None),
        };
    }
    let event = event.map_or(DEFAULT_EVENT, String::as_str);
    if event.is_empty() {
        return Err(options.invalid("event", "must not be empty"));
    }
    if RESERVED_EVENTS.contains(&event) {
        return Err(options.invalid("event", "is reserved by socket.io"));
    }
    target.url = crate::ws::socketio::engine_url(&target.url);
    Ok(Some(event.to_string()))
}

/// `--connect-rate N/s` and `--ping T`.
fn connection_options(options: &Options<'_>) -> Result<(Option<u64>, Option<Duration>), ArgError> {
    let connect_rate = match options.matches.get_one::<String>("connect_rate") {
        None => None,
        Some(text) => Some(per_second(options, text)?),
    };
    let ping = options.duration("ping")?;
    if ping.is_some_and(|p| p.is_zero()) {
        return Err(options.invalid("ping", "must be longer than zero"));
    }
    Ok((connect_rate, ping))
}

/// `--connect-rate`'s `N/s` (or `N`): a rate of at least 1 per second, with `-R`'s suffixes.
fn per_second(options: &Options<'_>, text: &str) -> Result<u64, ArgError> {
    let number = text.strip_suffix("/s").unwrap_or(text);
    let refused = |reason: &str| options.invalid("connect_rate", reason);
    match super::units::parse_metric(number).map_err(|reason| refused(&reason))? {
        0 => Err(refused("must be at least 1/s")),
        n => Ok(n),
    }
}

/// A `ws://` or `wss://` URL as the target to connect to (`http` or `https`, the URL kept as
/// typed). Any other scheme is refused in one line.
fn ws_target(typed: &str) -> Result<crate::plan::Target, ArgError> {
    let refused = |reason: &str| ArgError::Refused(format!("invalid URL '{typed}': {reason}"));
    let Some((scheme, rest)) = typed.split_once("://") else {
        return Err(refused("expected ws://host[:port]/path or wss://..."));
    };
    let as_http = if scheme.eq_ignore_ascii_case("ws") {
        "http"
    } else if scheme.eq_ignore_ascii_case("wss") {
        "https"
    } else {
        return Err(refused("scheme must be ws or wss"));
    };
    let mut target = url::parse_url(&format!("{as_http}://{rest}")).map_err(|r| refused(&r))?;
    target.url = typed.to_string();
    Ok(target)
}

/// The option table, in the help's order.
pub(super) fn command() -> Command {
    super::subcommand("tsumo ws")
        .args([
            shared::connections(For::Run, DEFAULT_CONNECTIONS),
            shared::duration(For::Run, DEFAULT_DURATION),
            shared::threads(For::Run, DEFAULT_THREADS),
            value("rate", Some('R'), "rate").value_name("N").help(
                "Messages per second, total over all connections.\n\
                 Without -R: closed loop, each connection as fast as it is answered.",
            ),
            value("size", None, "size").value_name("N").help(format!(
                "Each message's length in bytes, at least {MIN_SIZE} [default: {DEFAULT_SIZE}]"
            )),
            shared::file("script", Some('s'), "script")
                .help("Lua script: connect(), message(), reply(data), done() (docs/websocket.md)"),
            value("timeout", Some('T'), "timeout")
                .value_name("T")
                .help(format!(
                    "Longest a connect (TCP, TLS, upgrade) and a reply may take\n\
                     [default: {}]",
                    duration_text(DEFAULT_TIMEOUT)
                )),
            value("connect_rate", None, "connect-rate")
                .value_name("N/s")
                .help(
                    "Open the connections at N per second before the start
[default: all at once]",
                ),
            value("ping", None, "ping")
                .value_name("T")
                .help("Each connection sends a ping every T and times the pong"),
            flag("socketio", None, "socketio").help(
                "Speak socket.io (Engine.IO v4, path /socket.io/ unless the URL gives one):\n\
                 each message an event with an ack id, the ack its reply",
            ),
            value("event", None, "event")
                .value_name("NAME")
                .help(format!(
                    "The event --socketio sends, its payload the --size message\n\
                     [default: {DEFAULT_EVENT}]"
                )),
            shared::latency(For::Run),
            flag("u_latency", Some('U'), "u_latency")
                .help("Also print the uncorrected distribution (implies -L)"),
            shared::insecure(For::Run),
            shared::cacert(For::Run),
            shared::json(For::Run),
            shared::interval(For::Run),
            shared::file("requests", None, "requests").help(
                "Also write every message as one CSV row (times, connection, sequence,\n\
                 bytes, round trip, error); zstd-compressed when FILE ends in .zst",
            ),
            value("requests_sample", None, "requests-sample")
                .value_name("F")
                .help("With --requests, log this fraction of the messages, in (0, 1]"),
            shared::html(For::Run),
            shared::junit(For::Run),
            shared::dashboard(),
            shared::dashboard_linger(),
            shared::prometheus_rw(),
            super::slo::ws_arg(),
            shared::quiet(For::Run),
            shared::progress(For::Run),
            shared::label(For::Run),
            shared::vs(For::Run),
            shared::vs_label(For::Run),
            shared::rounds(DEFAULT_ROUNDS),
            shard::shard_arg(For::Run),
            shard::shards_arg(),
            shard::start_at_arg(For::Run),
            shard::run_id_arg(For::Run),
            shared::server_pid(),
            shared::help(),
        ])
        .args(url_args())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Scheme;

    fn plan(args: &[&str]) -> Result<WsPlan, String> {
        let args = args.iter().map(OsString::from).collect();
        match parse(args) {
            Ok(Parsed::Ws(plan)) => Ok(*plan),
            Ok(_) => Err("not a ws plan".to_string()),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn a_wss_url_connects_as_https_and_keeps_its_text() {
        let p = plan(&["-c4", "-R", "2k", "wss://example.com:8443/chat?room=1"]).unwrap();
        assert_eq!(p.target.scheme, Scheme::Https);
        assert_eq!(p.target.port(), 8443);
        assert_eq!(p.target.path, "/chat?room=1");
        assert_eq!(p.target.url, "wss://example.com:8443/chat?room=1");
        assert_eq!(
            (p.connections, p.rate, p.size),
            (4, Some(2000), DEFAULT_SIZE)
        );
        let closed = plan(&["ws://127.0.0.1/"]).unwrap();
        assert_eq!(closed.rate, None);
        assert_eq!(closed.target.scheme, Scheme::Http);
    }

    #[test]
    fn bad_values_are_one_line_each() {
        let refused = |args: &[&str]| plan(args).unwrap_err();
        assert_eq!(
            refused(&["https://example.com/"]),
            "invalid URL 'https://example.com/': scheme must be ws or wss"
        );
        assert!(refused(&["--size", "15", "ws://h/"]).contains("at least 16 bytes"));
        assert!(refused(&["--size", "5M", "ws://h/"]).contains("at most 4M"));
        assert!(refused(&["ws://h/", "extra"]).contains("unexpected argument 'extra'"));
        assert!(refused(&["--connect-rate", "0/s", "ws://h/"]).contains("at least 1/s"));
        assert!(refused(&["--connect-rate", "fast", "ws://h/"]).contains("--connect-rate"));
        assert!(refused(&["--ping", "0s", "ws://h/"]).contains("longer than zero"));
        let p = plan(&["--connect-rate", "2k/s", "--ping", "500ms", "ws://h/"]).unwrap();
        assert_eq!(p.connect_rate, Some(2000));
        assert_eq!(p.ping, Some(Duration::from_millis(500)));
        assert_eq!(plan(&["ws://h/"]).unwrap().connect_rate, None);
    }

    #[test]
    fn a_shard_takes_its_share_and_vs_takes_a_ws_url() {
        let p = plan(&["-t1", "-c4", "-R200", "--shard", "2/2", "ws://h/"]).unwrap();
        assert_eq!((p.connections, p.rate), (2, Some(100)));
        assert_eq!(p.options.part.shard.index, 1);
        let refused = plan(&["-c3", "-R200", "--shard", "1/2", "ws://h/"]).unwrap_err();
        assert!(
            refused.contains("do not split evenly into 2 shards"),
            "{refused}"
        );
        let vs = plan(&["ws://a/", "--vs", "wss://b/x", "--vs-label", "b"]).unwrap();
        assert_eq!(vs.options.vs.map(|t| t.url), Some("wss://b/x".to_string()));
        assert_eq!(
            (vs.options.rounds, vs.options.vs_label),
            (3, Some("b".into()))
        );
        let http = plan(&["ws://a/", "--vs", "http://b/"]).unwrap_err();
        assert!(
            http.ends_with("scheme must be ws or wss for --vs"),
            "{http}"
        );
    }

    #[test]
    fn socketio_takes_an_event_and_the_engine_io_url() {
        let p = plan(&["--socketio", "ws://h:3000"]).unwrap();
        assert_eq!(p.socketio.as_deref(), Some("echo"));
        assert_eq!(
            p.target.url,
            "ws://h:3000/socket.io/?EIO=4&transport=websocket"
        );
        assert_eq!(p.options.label, "ws://h:3000");
        let chat = plan(&["--socketio", "--event", "chat", "ws://h/"]).unwrap();
        assert_eq!(chat.socketio.as_deref(), Some("chat"));
        assert_eq!(plan(&["ws://h/"]).unwrap().socketio, None);
        let refused = |args: &[&str]| plan(args).unwrap_err();
        assert!(refused(&["--event", "chat", "ws://h/"]).contains("needs --socketio"));
        assert!(refused(&["--socketio", "--event", "", "ws://h/"]).contains("not be empty"));
        assert!(refused(&["--socketio", "--event", "connect", "ws://h/"]).contains("reserved"));
    }
}
