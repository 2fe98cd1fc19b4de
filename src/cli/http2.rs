//! The HTTP/2 and HTTP/3 options of the wrk2 line: `--http2`, `--http3`, `-m/--streams`, the
//! settings tsumo sends in HTTP/2's SETTINGS frame, and `--0rtt`. Each is refused where it would
//! silently do nothing (a mistake worth a line), and sizes take binary suffixes (`64k` = 65536
//! bytes).

use clap::parser::ValueSource;
use clap::Arg;

use super::error::ArgError;
use super::shared::{flag, value};
use super::{units, Options};
use crate::plan::{Http2, Http3, Protocol};

/// Our defaults: one stream per connection as h2load's `-m`; a stream window large enough that
/// flow control never holds a response back; the protocol's own frame and table sizes.
pub const DEFAULT_STREAMS: usize = 1;
pub const DEFAULT_WINDOW: u32 = 16 << 20;
pub const DEFAULT_MAX_FRAME: u32 = 16 << 10;
pub const DEFAULT_HEADER_TABLE: u32 = 4 << 10;

/// HTTP/2's bounds (RFC 9113, section 6.5.2).
const MAX_WINDOW: u64 = (1 << 31) - 1;
const FRAME_RANGE: std::ops::RangeInclusive<u64> = (1 << 14)..=((1 << 24) - 1);

/// The options' rows in the option table, under a heading of their own.
pub fn args() -> [Arg; 9] {
    [
        flag("http2", None, "http2").help(
            "Speak HTTP/2: h2 (ALPN) on https://, prior-knowledge h2c on\n\
             http://. Without it, https:// offers only http/1.1.",
        ),
        flag("http3", None, "http3").help(
            "Speak HTTP/3 over QUIC (UDP) to an https:// URL, on quinn and h3;\n\
             -m streams per connection as for --http2",
        ),
        flag("zero_rtt", None, "0rtt").help(
            "With --http3: send a resumed connection's first requests in its\n\
             first flight (0-RTT). Off by default: 0-RTT requests can be replayed",
        ),
        value("streams", Some('m'), "streams")
            .value_name("N")
            .help(format!(
                "Concurrent streams per connection [default: {DEFAULT_STREAMS}] \
                 (h2load's -m). The\n\
                 schedule stays per connection: a request due while N streams are\n\
                 busy waits, and the wait is in the corrected latency."
            )),
        value("h2_window", None, "h2-window")
            .value_name("B")
            .help(format!(
                "Initial stream window [default: {}]; the connection's window is\n\
                 this times -m (at most 2^31-1), so flow control never stalls a reply",
                bytes_text(DEFAULT_WINDOW)
            )),
        value("h2_max_frame", None, "h2-max-frame")
            .value_name("B")
            .help(format!(
                "Largest frame the server may send [default: {}]",
                bytes_text(DEFAULT_MAX_FRAME)
            )),
        value("h2_header_table", None, "h2-header-table")
            .value_name("B")
            .help(format!(
                "HPACK table the server may use for response headers [default: {}]",
                bytes_text(DEFAULT_HEADER_TABLE)
            )),
        flag("vs_http1", None, "vs-http1").help(
            "With --vs: run the --vs URL over HTTP/1.1 (a backend behind an\n\
             HTTP/2 proxy, compared with the proxy)",
        ),
        flag("vs_http2", None, "vs-http2").help(
            "With --http3 and --vs: run the --vs URL over HTTP/2 (the same\n\
             server over h2 and h3)",
        ),
    ]
    .map(|arg| arg.help_heading("HTTP/2 and HTTP/3 (sizes in bytes; k, m: x1024)"))
}

/// The protocol options of a run: HTTP/1.1 when neither `--http2` nor `--http3` is given.
#[derive(Debug, Clone, Copy, Default)]
pub struct Protocols {
    /// The run's protocol.
    pub run: Protocol,
    /// The `--vs` run's: the run's, unless `--vs-http1` or `--vs-http2` (with `--http3`).
    pub vs: Protocol,
}

/// The HTTP/2 options tsumo sends in its SETTINGS, with how they are named.
const H2_SETTINGS: [(&str, &str); 3] = [
    ("h2_window", "--h2-window"),
    ("h2_max_frame", "--h2-max-frame"),
    ("h2_header_table", "--h2-header-table"),
];

/// `--http2` or `--http3` and their settings, `--vs-http1` and `--vs-http2`; `https` says
/// whether the URL is https:// (QUIC has no plain form), `vs_https` the same of the `--vs` URL
/// (`None` without one).
pub fn parse(
    options: &Options<'_>,
    https: bool,
    vs_https: Option<bool>,
) -> Result<Protocols, ArgError> {
    let m = options.matches;
    let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
    let (h2, h3) = (m.get_flag("http2"), m.get_flag("http3"));
    let (vs_http1, vs_http2) = (m.get_flag("vs_http1"), m.get_flag("vs_http2"));
    if h2 && h3 {
        return Err(ArgError::Refused(
            "--http2 and --http3 exclude each other: choose one protocol".to_string(),
        ));
    }
    if h3 && !https {
        return Err(ArgError::Refused(
            "--http3 needs an https:// URL (QUIC is always encrypted; HTTP/3 has no plain form)"
                .to_string(),
        ));
    }
    // The --vs run speaks h3 too unless told otherwise: refused here, not by a failed run.
    if h3 && !vs_http1 && !vs_http2 && vs_https == Some(false) {
        return Err(ArgError::Refused(
            "--http3 runs the --vs URL over HTTP/3 too, which needs https://: give an https:// \
             --vs URL, or add --vs-http2 or --vs-http1 to run it over TCP"
                .to_string(),
        ));
    }
    if m.get_flag("zero_rtt") && !h3 {
        return Err(ArgError::Refused(
            "--0rtt needs --http3 (0-RTT is QUIC's)".to_string(),
        ));
    }
    if vs_http2 && !(h3 && m.contains_id("vs")) {
        return Err(ArgError::Refused(
            "--vs-http2 needs --http3 and --vs URL".to_string(),
        ));
    }
    if vs_http1 && !(h2 || h3) {
        return Err(ArgError::Refused(
            "--vs-http1 needs --http2 (or --http3) and --vs".to_string(),
        ));
    }
    if vs_http1 && !m.contains_id("vs") {
        return Err(ArgError::Refused("--vs-http1 needs --vs URL".to_string()));
    }
    if !h2 {
        if let Some((_, what)) = H2_SETTINGS.iter().find(|(id, _)| given(id)) {
            return Err(ArgError::Refused(format!(
                "{what} needs --http2 (it is an HTTP/2 setting)"
            )));
        }
    }
    if !h2 && !h3 && given("streams") {
        return Err(ArgError::Refused(
            "-m/--streams needs --http2 or --http3 (HTTP/1.1 has one request in flight \
             per connection)"
                .to_string(),
        ));
    }
    if !h2 && !h3 {
        return Ok(Protocols::default());
    }
    let streams = options.count("streams")?.unwrap_or(DEFAULT_STREAMS);
    if streams == 0 {
        return Err(options.invalid("streams", "must be at least 1"));
    }
    if streams > u32::MAX as usize {
        return Err(options.invalid("streams", "number is too large"));
    }
    let window = bytes(options, "h2_window", 1..=MAX_WINDOW, "1 to 2^31-1")?;
    let max_frame = bytes(options, "h2_max_frame", FRAME_RANGE, "16k to 16m-1")?;
    let header_table = bytes(
        options,
        "h2_header_table",
        0..=u64::from(u32::MAX),
        "up to 4g-1",
    )?;
    let http2 = Http2 {
        streams,
        window: window.unwrap_or(DEFAULT_WINDOW),
        max_frame: max_frame.unwrap_or(DEFAULT_MAX_FRAME),
        header_table: header_table.unwrap_or(DEFAULT_HEADER_TABLE),
    };
    let run = match h3 {
        false => Protocol::Http2(http2),
        true => Protocol::Http3(Http3 {
            streams,
            zero_rtt: m.get_flag("zero_rtt"),
        }),
    };
    let vs = match (vs_http1, vs_http2) {
        (true, _) => Protocol::Http1,
        (false, true) => Protocol::Http2(http2),
        (false, false) => run,
    };
    Ok(Protocols { run, vs })
}

/// A size in bytes with an optional binary suffix (k, m, g: ×1024), within `range`.
fn bytes(
    options: &Options<'_>,
    id: &str,
    range: std::ops::RangeInclusive<u64>,
    bounds: &str,
) -> Result<Option<u32>, ArgError> {
    let Some(text) = options.matches.get_one::<String>(id) else {
        return Ok(None);
    };
    let n = parse_bytes(text).map_err(|reason| options.invalid(id, &reason))?;
    if !range.contains(&n) {
        return Err(options.invalid(id, &format!("must be {bounds} bytes")));
    }
    u32::try_from(n)
        .map(Some)
        .map_err(|_| options.invalid(id, "number is too large"))
}

/// A size as [`parse_bytes`] reads it back: `16m`, `4k`, `100` (a help's defaults).
fn bytes_text(size: u32) -> String {
    match size {
        0 => "0".to_string(),
        n if n % (1 << 30) == 0 => format!("{}g", n >> 30),
        n if n % (1 << 20) == 0 => format!("{}m", n >> 20),
        n if n % (1 << 10) == 0 => format!("{}k", n >> 10),
        n => n.to_string(),
    }
}

/// `65536`, `64k`, `16m`: bytes with binary suffixes.
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let (base, unit) = units::split_number(text)?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        _ => {
            return Err(format!(
                "unknown suffix '{}' (use bytes, optionally with k, m or g: x1024)",
                units::one_line(unit)
            ))
        }
    };
    base.checked_mul(1 << shift)
        .ok_or_else(|| "number is too large".to_string())
}

#[cfg(test)]
mod tests {
    use super::{bytes_text, parse_bytes};

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_bytes("65536"), Ok(65536));
        assert_eq!(parse_bytes("64k"), Ok(65536));
        assert_eq!(parse_bytes("16M"), Ok(16 << 20));
        assert!(parse_bytes("1x").is_err());
        assert!(parse_bytes("-1").is_err());
        for size in [16 << 20, 16 << 10, 4 << 10, 1 << 30, 100, 0] {
            assert_eq!(parse_bytes(&bytes_text(size)), Ok(u64::from(size)));
        }
    }
}
