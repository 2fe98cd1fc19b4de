//! tsumo against a real nginx (tests/common/nginx.rs): the rate it promises, the report wrk2 users
//! parse, and HTTPS with certificate verification on, off, and with a given CA.
//!
//! The first tests check the fixture itself with a plain client, so a failure there points at the
//! setup rather than at tsumo.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use common::nginx::{index_body, Nginx, INDEX_LEN};

/// Sends raw bytes, reads until the server closes, returns what came back.
fn exchange(stream: &mut impl ReadWrite, request: &[u8]) -> Vec<u8> {
    stream.write_all(request).expect("write request");
    let mut response = Vec::new();
    // rustls reports a close without close_notify as an error; what was read still counts.
    let _ = stream.read_to_end(&mut response);
    response
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect to nginx");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

fn assert_index_response(response: &[u8]) {
    let text = String::from_utf8_lossy(response);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(
        text.contains(&format!("Content-Length: {INDEX_LEN}\r\n")),
        "{text}"
    );
    assert!(response.ends_with(&index_body()), "body is not index.html");
}

#[test]
fn fixture_serves_index_over_http_and_logs_what_it_received() {
    let nginx = Nginx::start();
    let response = exchange(
        &mut connect(nginx.http_port()),
        b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert_index_response(&response);

    // A POST with a body is answered with the page too (see the fixture's error_page).
    let body = [b'p'; 100];
    let mut post =
        b"POST /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nConnection: close\r\n\r\n"
            .to_vec();
    post.extend_from_slice(&body);
    assert_index_response(&exchange(&mut connect(nginx.http_port()), &post));

    let log = nginx.access_log_wait(2);
    assert_eq!(log.len(), 2, "{log:?}");
    assert_eq!(log[0].method, "GET");
    assert_eq!(log[0].uri, "/index.html");
    assert_eq!(log[0].status, 200);
    assert_eq!(log[0].request_length, 56);
    assert_eq!(log[0].content_length, None);
    assert_eq!(log[0].body_bytes_sent, INDEX_LEN as u64);
    assert_eq!(log[0].ssl_protocol, None);
    assert_eq!(log[1].method, "POST", "{log:?}");
    assert_eq!(log[1].status, 200);
    assert_eq!(log[1].content_length, Some(100));
}

#[test]
fn fixture_https_certificate_verifies_with_rustls() {
    let nginx = Nginx::start();
    let cert = {
        use rustls_pki_types::pem::PemObject;
        rustls_pki_types::CertificateDer::from_pem_file(nginx.cert_path()).expect("read cert")
    };
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).expect("add cert as root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    // Both names in the certificate: the IP the tests use, and localhost.
    for name in ["127.0.0.1", "localhost"] {
        let server_name = rustls_pki_types::ServerName::try_from(name)
            .unwrap()
            .to_owned();
        let conn = rustls::ClientConnection::new(Arc::new(config.clone()), server_name).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, connect(nginx.https_port()));
        let response = exchange(
            &mut tls,
            b"GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        assert_index_response(&response);
    }
    let log = nginx.access_log_wait(2);
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log[0].ssl_protocol.is_some(), "{log:?}");
    assert_eq!(log[0].server_port, nginx.https_port());
}

#[test]
fn fixture_extra_server_block_gets_its_own_port() {
    let nginx = Nginx::builder()
        .server("teapot", "location / { return 418; }")
        .start();
    let response = exchange(
        &mut connect(nginx.port("teapot")),
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    assert!(
        response.starts_with(b"HTTP/1.1 418"),
        "{}",
        String::from_utf8_lossy(&response)
    );
}

/// Proves the fixture carries load from a known-good generator, wrk (`scripts/test` installs
/// it, as it installs nginx).
#[test]
fn fixture_carries_wrk_load_without_errors() {
    let nginx = Nginx::start();
    let out = std::process::Command::new("wrk")
        .args(["-t1", "-c2", "-d2s", &nginx.http_url("/index.html")])
        .output()
        .expect("run wrk");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("Socket errors"), "{text}");
    assert!(!text.contains("Non-2xx"), "{text}");
    // Two keep-alive connections, never closed by nginx during the run.
    let log = nginx.access_log();
    let connections: std::collections::HashSet<u64> = log.iter().map(|l| l.connection).collect();
    assert!(log.len() > 1000, "only {} requests", log.len());
    assert_eq!(connections.len(), 2, "{text}");
}

// ---- tsumo against nginx ---------------------------------------------------------------------

use common::{json_errors_total, json_f64, json_u64, run_tsumo};

/// A paced run counts what nginx answered: every counted request is in nginx's log, on one
/// keep-alive connection per -c, and Requests/sec is the count over the run's time (the rate
/// reached is a benchmark's to measure, not a test's on a shared machine).
#[test]
fn every_counted_request_reached_nginx() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &["-t2", "-c10", "-d3s", "-R2000", "--json", "-", &url],
        Duration::from_secs(20),
    );
    run.assert_success();
    let json = run.json();
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    let requests = json_u64(&json, "counters.requests");
    assert!(requests > 0, "{json:#}");
    let rate = json_f64(&json, "requests_per_sec");
    let elapsed = json_f64(&json, "elapsed_s");
    assert!(
        (rate * elapsed - requests as f64).abs() < 1e-3 * requests as f64,
        "requests/sec {rate} over {elapsed} s for {requests}: {json:#}"
    );
    // nginx saw every request tsumo counted (and at most one per connection in flight at the
    // end besides), all GET /index.html on 10 connections.
    let log = nginx.access_log_wait(requests as usize);
    assert!(
        (requests..=requests + 10).contains(&(log.len() as u64)),
        "{} logged, {requests} counted",
        log.len()
    );
    assert!(log
        .iter()
        .all(|l| l.method == "GET" && l.uri == "/index.html" && l.status == 200));
    let connections: std::collections::HashSet<u64> = log.iter().map(|l| l.connection).collect();
    assert_eq!(
        connections.len(),
        10,
        "keep-alive: one nginx connection per -c"
    );
}

/// The text report, line by line, in wrk2's layout (reference/wrk2.md §2.2): a script that
/// parses wrk2 output must parse tsumo's.
#[test]
fn text_report_has_wrk2_layout() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &["-t2", "-c10", "-d3s", "-R2000", "--latency", &url],
        Duration::from_secs(20),
    );
    run.assert_success();
    let out = &run.stdout;
    assert!(!out.to_lowercase().contains("nan"), "nan in report:\n{out}");
    let mut lines = out.lines().peekable();
    let mut next = |what: &str| {
        lines
            .next()
            .unwrap_or_else(|| panic!("report ends before {what}:\n{out}"))
            .to_string()
    };

    assert_eq!(next("header"), format!("Running 3s test @ {url}"));
    assert_eq!(next("header 2"), "  2 threads and 10 connections");
    assert_eq!(
        next("stats header"),
        "  Thread Stats   Avg      Stdev     Max   +/- Stdev"
    );
    let latency = next("Latency row");
    let fields = stats_row(&latency, "Latency", out);
    for value in &fields[..3] {
        assert!(parse_time_us(value).is_some(), "{value:?} in {latency:?}");
    }
    let req = next("Req/Sec row");
    let fields = stats_row(&req, "Req/Sec", out);
    // One sample per thread per second (how many each did is this machine's to say).
    let mean = parse_metric(&fields[0]).unwrap_or_else(|| panic!("{req:?}"));
    assert!(mean > 0.0, "{req:?}");

    assert_eq!(
        next("distribution title"),
        "  Latency Distribution (HdrHistogram - Recorded Latency)"
    );
    let mut previous = 0.0;
    for label in [
        " 50.000%", " 75.000%", " 90.000%", " 99.000%", " 99.900%", " 99.990%", " 99.999%",
        "100.000%",
    ] {
        let line = next(label);
        let value = line
            .strip_prefix(label)
            .and_then(|v| parse_time_us(v.trim()))
            .unwrap_or_else(|| panic!("{line:?} is not `{label}  <time>`"));
        assert!(value >= previous, "percentiles decrease at {line:?}");
        previous = value;
    }
    assert_eq!(next("blank"), "");
    assert_eq!(next("spectrum title"), "  Detailed Percentile spectrum:");
    assert_eq!(
        next("spectrum header"),
        "       Value   Percentile   TotalCount 1/(1-Percentile)"
    );
    assert_eq!(next("blank"), "");
    let mut rows = Vec::new();
    loop {
        let line = next("spectrum row");
        if line.starts_with("#[") {
            check_footer(&line, &next("footer 2"), &next("footer 3"), &rows, out);
            break;
        }
        let row: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(row.len(), 4, "spectrum row {line:?}");
        assert_eq!(line.len(), 51, "spectrum row width {line:?}");
        rows.push((
            row[0].parse::<f64>().unwrap(),
            row[1].parse::<f64>().unwrap(),
            row[2].parse::<u64>().unwrap(),
            row[3].to_string(),
        ));
    }
    assert_eq!(next("separator"), "-".repeat(58));

    let totals = next("totals");
    let words: Vec<&str> = totals.split_whitespace().collect();
    assert!(
        totals.starts_with("  ") && words.len() == 6 && words[1] == "requests" && words[2] == "in",
        "{totals:?}"
    );
    let requests: u64 = words[0].parse().unwrap();
    let runtime_us = words[3].strip_suffix(',').and_then(parse_time_us);
    // -d3s is the floor (a busy machine may end it later).
    assert!(runtime_us.is_some_and(|us| us >= 2.9e6), "{totals:?}");
    assert!(words[4].ends_with("MB") && words[5] == "read", "{totals:?}");
    let rate_line = next("Requests/sec");
    let rate: f64 = rate_line
        .strip_prefix("Requests/sec: ")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{rate_line:?}"));
    // The requests over the runtime, as printed (the runtime to 10 ms).
    let runtime_s = runtime_us.unwrap_or_default() / 1e6;
    assert!(requests > 0, "{totals:?}");
    assert!(
        (rate * runtime_s - requests as f64).abs() <= rate * 0.005 + 1.0,
        "{rate_line:?} for {totals:?}"
    );
    let transfer = next("Transfer/sec");
    let amount = transfer.strip_prefix("Transfer/sec: ").map(str::trim);
    assert!(
        amount.is_some_and(|a| ["B", "KB", "MB", "GB"].iter().any(|unit| a
            .strip_suffix(unit)
            .is_some_and(|n| n.parse::<f64>().is_ok()))),
        "{transfer:?}"
    );
    // tsumo's additions follow; send lateness is always there for a paced run.
    let rest: Vec<String> = std::iter::from_fn(|| lines.next().map(str::to_string)).collect();
    assert!(
        rest.iter().any(|l| l.starts_with("Send lateness: p50 ")),
        "{out}"
    );
}

/// Splits a `Thread Stats` row into its four values, checking the name and the % column.
fn stats_row(line: &str, name: &str, out: &str) -> Vec<String> {
    let rest = line
        .strip_prefix(&format!("    {name:<10}"))
        .unwrap_or_else(|| panic!("{line:?} is not the {name} row:\n{out}"));
    let fields: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
    assert_eq!(fields.len(), 4, "{line:?}");
    let share: f64 = fields[3]
        .strip_suffix('%')
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{line:?}"));
    assert!((0.0..=100.0).contains(&share), "{line:?}");
    fields
}

fn check_footer(
    first: &str,
    second: &str,
    third: &str,
    rows: &[(f64, f64, u64, String)],
    out: &str,
) {
    assert!(
        first.starts_with("#[Mean    = ") && first.contains(", StdDeviation   = "),
        "{out}"
    );
    assert!(
        second.starts_with("#[Max     = ") && second.contains(", Total count    = "),
        "{out}"
    );
    assert_eq!(
        third, "#[Buckets =           27, SubBuckets     =         2048]",
        "{out}"
    );
    assert!(rows.len() > 10, "spectrum too short:\n{out}");
    for pair in rows.windows(2) {
        assert!(
            pair[0].0 <= pair[1].0 && pair[0].1 <= pair[1].1 && pair[0].2 <= pair[1].2,
            "{out}"
        );
    }
    let (first_row, last_row) = (&rows[0], &rows[rows.len() - 1]);
    assert_eq!(first_row.1, 0.0, "{out}");
    assert_eq!((last_row.1, last_row.3.as_str()), (1.0, "inf"), "{out}");
    let total: u64 = second
        .trim_end_matches(']')
        .rsplit('=')
        .next()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{second:?}"));
    assert_eq!(total, last_row.2, "{out}");
}

/// `823.62us`, `4.04ms`, `1.42s`, `0.92m` → µs.
fn parse_time_us(s: &str) -> Option<f64> {
    let (number, scale) = if let Some(n) = s.strip_suffix("us") {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e6)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60e6)
    } else {
        return None;
    };
    number.parse::<f64>().ok().map(|n| n * scale)
}

/// `125.00`, `1.08k`, `2.00M` → number.
fn parse_metric(s: &str) -> Option<f64> {
    let (number, scale) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1e3),
        'M' => (&s[..s.len() - 1], 1e6),
        'G' => (&s[..s.len() - 1], 1e9),
        _ => (s, 1.0),
    };
    number.parse::<f64>().ok().map(|n| n * scale)
}

/// With verification on (the default), a self-signed certificate must stop the run at once,
/// with exit code 1 and one line on stderr that tells the user about `--insecure`.
#[test]
fn https_self_signed_without_insecure_fails_naming_the_flag() {
    let nginx = Nginx::start();
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d2s",
            "-R10",
            &nginx.https_url("/index.html"),
        ],
        Duration::from_secs(15),
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr: {:?}", run.stderr);
    assert!(lines[0].contains("--insecure"), "stderr: {:?}", run.stderr);
}

fn assert_https_run_clean(extra: &[&str], nginx: &Nginx) {
    let url = nginx.https_url("/index.html");
    let mut args = vec!["-t1", "-c2", "-d2s", "-R200", "--json", "-"];
    args.extend_from_slice(extra);
    args.push(&url);
    let run = run_tsumo(&args, Duration::from_secs(15));
    run.assert_success();
    let json = run.json();
    let requests = json_u64(&json, "counters.requests");
    assert!(requests >= 360, "{json:#}");
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    let log = nginx.access_log_wait(requests as usize);
    assert!(log.len() as u64 >= requests);
    assert!(log.iter().all(|l| l.ssl_protocol.is_some()), "all over TLS");
}

#[test]
fn https_with_insecure_runs_without_errors() {
    let nginx = Nginx::start();
    assert_https_run_clean(&["--insecure"], &nginx);
}

#[test]
fn https_with_cacert_verifies_and_runs_without_errors() {
    let nginx = Nginx::start();
    let cert = nginx.cert_path();
    assert_https_run_clean(&["--cacert", cert.to_str().unwrap()], &nginx);
}

/// A signal two seconds into a 30 s run (Ctrl-C's SIGINT, or the SIGTERM and SIGHUP that
/// `timeout`, CI runners and Kubernetes send): the report of the two seconds that ran comes out,
/// with exit code 0, and the JSON is written and names the signal.
fn assert_signal_ends_the_run_with_its_report(signal: libc::c_int, name: &str) {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let json_dir = common::TempDir::new("signal");
    let json = json_dir.path().join("run.json");
    let mut tsumo = common::Signalled::spawn(&[
        "-t2",
        "-c10",
        "-d30s",
        "-R1000",
        "--json",
        json.to_str().unwrap(),
        &url,
    ]);
    std::thread::sleep(Duration::from_secs(2));
    tsumo.kill(signal, None);
    let common::Run { status, stdout, .. } = tsumo.finish(Duration::from_secs(5));
    assert!(status.success(), "{name}: exit status {status:?}\n{stdout}");
    let totals = stdout
        .lines()
        .find(|l| l.contains(" requests in "))
        .unwrap_or_else(|| panic!("no totals line after {name}:\n{stdout}"));
    let requests: u64 = totals.split_whitespace().next().unwrap().parse().unwrap();
    assert!(requests > 0, "{totals}");
    // The JSON is written too, and says the run was interrupted, and by what; the totals are
    // its, and cover the part that ran, not 30 s.
    let doc = common::read_json(&json);
    assert_eq!(doc["interrupted"], serde_json::Value::Bool(true));
    assert_eq!(doc["ended_by"], name);
    assert_eq!(json_u64(&doc, "counters.requests"), requests, "{totals}");
    assert!(json_f64(&doc, "elapsed_s") < 30.0, "{doc:#}");
}

#[test]
fn ctrl_c_prints_the_report_of_what_ran_at_once() {
    assert_signal_ends_the_run_with_its_report(libc::SIGINT, "SIGINT");
}

#[test]
fn sigterm_prints_the_report_of_what_ran_at_once() {
    assert_signal_ends_the_run_with_its_report(libc::SIGTERM, "SIGTERM");
}

#[test]
fn sighup_prints_the_report_of_what_ran_at_once() {
    assert_signal_ends_the_run_with_its_report(libc::SIGHUP, "SIGHUP");
}

/// `--progress` writes a status line per second on stderr (not a terminal here) and leaves
/// stdout alone: with `--quiet`, nothing at all.
#[test]
fn progress_goes_to_stderr_only() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = common::run_tsumo(
        &["-t1", "-c2", "-d3s", "-R200", "--progress", "--quiet", &url],
        Duration::from_secs(15),
    );
    run.assert_success();
    assert!(run.stdout.is_empty(), "stdout: {}", run.stdout);
    // At most one line per second of the 3 s (a busy machine may skip one, never add one).
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert!(
        (1..=3).contains(&lines.len()),
        "one line per second expected:\n{}",
        run.stderr
    );
    for line in lines {
        assert!(
            line.starts_with('[') && line.contains("req/s") && line.contains("0 errors"),
            "{line}"
        );
    }
}

// ---- TLS: certificates made with openssl, and every refusal explained in one line ----

/// A run that must stop at the pre-flight: exit 1 and one line on stderr, returned.
fn refused_line(args: &[&str]) -> String {
    let mut all = vec!["-t1", "-c1", "-d2s", "-R10"];
    all.extend_from_slice(args);
    let run = run_tsumo(&all, Duration::from_secs(15));
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "stderr: {:?}", run.stderr);
    assert!(run.stdout.is_empty(), "stdout: {:?}", run.stdout);
    run.stderr.trim_end().to_string()
}

/// The usual self-signed certificate (`openssl req -x509`, basicConstraints CA:TRUE) given as
/// `--cacert` is trusted, as curl trusts it; without it the line says it is self-signed.
#[test]
fn openssl_self_signed_certificate_is_trusted_with_cacert() {
    let dir = common::TempDir::new("tls-openssl");
    let cert = common::certs::self_signed(
        dir.path(),
        "server",
        "localhost",
        Some("IP:127.0.0.1,DNS:localhost"),
    );
    let nginx = Nginx::builder().tls_server("openssl", &cert).start();
    let url = format!("https://127.0.0.1:{}/", nginx.port("openssl"));
    let cacert = cert.cert.to_str().unwrap();

    let run = run_tsumo(
        &[
            "-t1", "-c2", "-d2s", "-R100", "--json", "-", "--cacert", cacert, &url,
        ],
        Duration::from_secs(15),
    );
    run.assert_success();
    let json = run.json();
    assert!(json_u64(&json, "counters.requests") >= 180, "{json:#}");
    assert_eq!(json_errors_total(&json), 0, "{json:#}");

    let line = refused_line(&[&url]);
    assert_eq!(
        line,
        format!(
            "tsumo: TLS handshake with 127.0.0.1 failed: the server's certificate \
             (CN=localhost) is self-signed; pass that certificate's file as --cacert FILE to \
             trust it; --insecure (-k) skips verification"
        )
    );
}

/// A certificate with only a CN and no subjectAltName, as `openssl req -x509` made them for
/// years: given as `--cacert` (the very certificate the server presents) it is pinned, its CN
/// standing for the missing names as curl takes it, and the run goes through. The same CN-only
/// certificate signed by a CA of `--cacert` is refused, and the line says why.
#[test]
fn cn_only_certificate_given_as_cacert_is_pinned_and_refused_otherwise_with_the_reason() {
    let dir = common::TempDir::new("tls-cn-only");
    let own = common::certs::self_signed(dir.path(), "own", "localhost", None);
    let ca = common::certs::self_signed(dir.path(), "ca", "tsumo test CA", None);
    let leaf = common::certs::signed_by(&ca, dir.path(), "leaf", "localhost", None);
    let nginx = Nginx::builder()
        .tls_server("own", &own)
        .tls_server("leaf", &leaf)
        .start();

    let url = format!("https://localhost:{}/", nginx.port("own"));
    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d1s",
            "-R20",
            "--json",
            "-",
            "--cacert",
            own.cert.to_str().unwrap(),
            &url,
        ],
        Duration::from_secs(15),
    );
    run.assert_success();
    let json = run.json();
    assert!(json_u64(&json, "counters.requests") >= 15, "{json:#}");
    assert_eq!(json_errors_total(&json), 0, "{json:#}");

    // Pinned, but asked for by another name than its CN: refused, naming both.
    let by_ip = format!("https://127.0.0.1:{}/", nginx.port("own"));
    let line = refused_line(&["--cacert", own.cert.to_str().unwrap(), &by_ip]);
    assert_eq!(
        line,
        "tsumo: TLS handshake with 127.0.0.1 failed: the server's certificate (CN=localhost) \
         has no subjectAltName, and its CN is localhost, not 127.0.0.1; use localhost in the \
         URL, or give the server a certificate with subjectAltName for 127.0.0.1; --insecure \
         (-k) skips verification"
    );

    let leaf_url = format!("https://localhost:{}/", nginx.port("leaf"));
    let line = refused_line(&["--cacert", ca.cert.to_str().unwrap(), &leaf_url]);
    assert_eq!(
        line,
        "tsumo: TLS handshake with localhost failed: the server's certificate (CN=localhost) \
         has no subjectAltName; names are not checked against the CN; give the server a \
         certificate with subjectAltName for localhost (openssl: -addext \
         subjectAltName=DNS:localhost), or pass the server's own certificate as --cacert to pin \
         it; --insecure (-k) skips verification"
    );
}

/// An https:// URL aimed at nginx's plain-HTTP port: the line says so and points at http://.
#[test]
fn https_url_on_a_plain_http_port_says_the_server_answered_in_plain_http() {
    let nginx = Nginx::start();
    let url = format!("https://127.0.0.1:{}/index.html", nginx.http_port());
    let line = refused_line(&[&url]);
    assert_eq!(
        line,
        "tsumo: TLS handshake with 127.0.0.1 failed: the server answered in plain HTTP, not \
         TLS; try http:// instead of https://, or the port that serves TLS"
    );
}

/// A certificate for another name: the line names the host and the certificate's names, even
/// when the certificate itself is given as `--cacert`.
#[test]
fn wrong_host_name_names_the_host_and_the_certificates_names() {
    let dir = common::TempDir::new("tls-name");
    let cert = common::certs::self_signed(
        dir.path(),
        "other",
        "other.test",
        Some("DNS:other.test,DNS:www.other.test"),
    );
    let nginx = Nginx::builder().tls_server("other", &cert).start();
    let url = format!("https://127.0.0.1:{}/", nginx.port("other"));
    let line = refused_line(&["--cacert", cert.cert.to_str().unwrap(), &url]);
    assert_eq!(
        line,
        "tsumo: TLS handshake with 127.0.0.1 failed: the server's certificate (CN=other.test) \
         is for other.test, www.other.test, not for 127.0.0.1; use a name the certificate has \
         in the URL, or give the server a certificate for 127.0.0.1; --insecure (-k) skips \
         verification"
    );
}

/// `--cacert` holding an unrelated CA: the line says the file lacks the issuer and names both
/// certificates, and does not suggest `--cacert` as if it had not been given. With the right CA
/// the run goes through (webpki's own path, a CA-signed certificate).
#[test]
fn cacert_with_an_unrelated_ca_says_the_file_lacks_the_issuer() {
    let dir = common::TempDir::new("tls-ca");
    let ca = common::certs::self_signed(dir.path(), "ca", "tsumo test CA", None);
    let unrelated = common::certs::self_signed(dir.path(), "unrelated", "unrelated CA", None);
    let leaf = common::certs::signed_by(
        &ca,
        dir.path(),
        "leaf",
        "localhost",
        Some("IP:127.0.0.1,DNS:localhost"),
    );
    let nginx = Nginx::builder().tls_server("leaf", &leaf).start();
    let url = format!("https://127.0.0.1:{}/", nginx.port("leaf"));

    let path = unrelated.cert.to_str().unwrap();
    let line = refused_line(&["--cacert", path, &url]);
    assert_eq!(
        line,
        format!(
            "tsumo: TLS handshake with 127.0.0.1 failed: {path} does not contain the issuer of \
             the server's certificate (CN=localhost, issued by CN=tsumo test CA); pass the \
             certificate of CN=tsumo test CA as --cacert; --insecure (-k) skips verification"
        )
    );

    let run = run_tsumo(
        &[
            "-t1",
            "-c1",
            "-d1s",
            "-R20",
            "--json",
            "-",
            "--cacert",
            ca.cert.to_str().unwrap(),
            &url,
        ],
        Duration::from_secs(15),
    );
    run.assert_success();
    assert_eq!(json_errors_total(&run.json()), 0, "{}", run.stdout);
}

/// Certificates refused after the pre-flight (here: the script sends the thread to a server
/// with another name's certificate) are counted by reason in the JSON and quoted once in the
/// report.
#[test]
fn certificate_failures_during_the_run_are_counted_and_quoted() {
    let dir = common::TempDir::new("tls-midrun");
    let other =
        common::certs::self_signed(dir.path(), "other", "other.test", Some("DNS:other.test"));
    let nginx = Nginx::builder().tls_server("other", &other).start();
    // Both certificates are trusted: the pre-flight passes, the thread's connections do not.
    let bundle = dir.path().join("bundle.pem");
    let mut pem = std::fs::read(nginx.cert_path()).unwrap();
    pem.extend(std::fs::read(&other.cert).unwrap());
    std::fs::write(&bundle, pem).unwrap();
    let script = dir.path().join("elsewhere.lua");
    std::fs::write(
        &script,
        format!(
            "function setup(thread)\n  thread.addr = wrk.lookup(\"127.0.0.1\", \"{}\")[1]\nend\n",
            nginx.port("other")
        ),
    )
    .unwrap();
    let json_path = dir.path().join("run.json");
    let run = run_tsumo(
        &[
            "-t1",
            "-c2",
            "-d2s",
            "-R20",
            "--cacert",
            bundle.to_str().unwrap(),
            "-s",
            script.to_str().unwrap(),
            "--json",
            json_path.to_str().unwrap(),
            &nginx.https_url("/index.html"),
        ],
        Duration::from_secs(20),
    );
    // No response at all: the report and JSON are written, and the exit status says so.
    assert_eq!(run.status.code(), Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("no response was received"),
        "{}",
        run.stderr
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let connect = json_u64(&json, "counters.errors.connect");
    assert!(connect >= 2, "{json:#}");
    assert_eq!(json_u64(&json, "counters.tls_failures.wrong_name"), connect);
    let note = run
        .stdout
        .lines()
        .find(|l| l.starts_with("TLS handshakes failed during the run"))
        .unwrap_or_else(|| panic!("no TLS failure line:\n{}", run.stdout));
    assert_eq!(
        note,
        format!(
            "TLS handshakes failed during the run: {connect} ({connect} certificate for another \
             name); first: \"the server's certificate (CN=other.test) is for other.test, not \
             for 127.0.0.1; use a name the certificate has in the URL, or give the server a \
             certificate for 127.0.0.1; --insecure (-k) skips verification\""
        )
    );
    let notes = json["notes"].as_array().expect("notes");
    assert!(notes.iter().any(|n| n.as_str() == Some(note)), "{json:#}");
}

/// The pacing in use is stated in the text and in the JSON: chosen from the per-thread rate
/// (`--slack auto`), or as given; a coalescing pacer still sends every request it counts.
#[test]
fn the_pacing_in_use_is_stated_and_every_request_still_goes() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    // (arguments, slack_us, auto, the text's line)
    let cases: [(&[&str], u64, bool, &str); 3] = [
        (
            &["-R2000"],
            0,
            true,
            "Pacing: each send paced to the microsecond (auto)",
        ),
        (
            &["-R20000"],
            250,
            true,
            "Pacing: sends coalesced in 250us slots (auto); --slack 0 paces each to the \
             microsecond",
        ),
        (
            &["-R2000", "--slack", "1ms"],
            1000,
            false,
            "Pacing: sends coalesced in 1000us slots; --slack 0 paces each to the microsecond",
        ),
    ];
    for (extra, slack_us, auto, line) in cases {
        let mut args = vec!["-t1", "-c10", "-d2s", "--json", "-"];
        args.extend_from_slice(extra);
        args.push(&url);
        let run = run_tsumo(&args, Duration::from_secs(20));
        run.assert_success();
        let json = run.json();
        assert_eq!(
            json_u64(&json, "plan.pacing.slack_us"),
            slack_us,
            "{json:#}"
        );
        assert_eq!(json["plan"]["pacing"]["auto"], auto, "{json:#}");
        assert_eq!(json_errors_total(&json), 0, "{json:#}");
        let requests = json_u64(&json, "counters.requests");
        let log = nginx.access_log_wait(requests as usize);
        assert!(requests > 0 && log.len() as u64 >= requests, "{json:#}");
        // The same run's text report says it in one line.
        let mut args = vec!["-t1", "-c10", "-d1s"];
        args.extend_from_slice(extra);
        args.push(&url);
        let text = run_tsumo(&args, Duration::from_secs(20));
        text.assert_success();
        assert!(
            text.stdout.lines().any(|l| l == line),
            "{line:?} not in:\n{}",
            text.stdout
        );
    }
    // A closed loop has no schedule, and no pacing to state.
    let run = run_tsumo(
        &["-t1", "-c2", "-d1s", "--json", "-", &url],
        Duration::from_secs(20),
    );
    run.assert_success();
    assert!(run.json()["plan"].get("pacing").is_none());
}

/// `--slo` on an ordinary run: each objective judged at the end and printed after the report
/// with what was measured; all held exits 0, one broken exits 99 with one line naming it, and
/// the JSON lists every verdict.
#[test]
fn objectives_are_judged_printed_and_broken_ones_exit_99() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &[
            "-t1",
            "-c2",
            "-d2s",
            "-R200",
            "--slo",
            "p99<10s",
            "--slo",
            "errors<50%",
            "--slo",
            "rate>1%",
            &url,
        ],
        Duration::from_secs(20),
    );
    run.assert_success();
    // Generous limits: a shared machine may be slow, and a request due at the very end while
    // its connection still waits is counted among the errors (never sent).
    let tail: Vec<&str> = run.stdout.lines().rev().take(4).collect();
    assert_eq!(tail[3], "Objectives: all 3 held", "{}", run.stdout);
    assert!(
        tail[2].starts_with("  held    p99<10s     server's p99 "),
        "{tail:?}"
    );
    assert!(
        tail[1].starts_with("  held    errors<50%  errors "),
        "{tail:?}"
    );
    assert!(
        tail[0].starts_with("  held    rate>1%     rate "),
        "{tail:?}"
    );

    let run = run_tsumo(
        &[
            "-t1", "-c2", "-d2s", "-R200", "--slo", "p99<1us", "--slo", "p99<10s", "--json", "-",
            &url,
        ],
        Duration::from_secs(20),
    );
    assert_eq!(run.status.code(), Some(99), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("tsumo: objectives broken: p99<1us (server's p99 "),
        "{}",
        run.stderr
    );
    let json = run.json();
    let objectives = json["objectives"].as_array().expect("objectives");
    assert_eq!(objectives.len(), 2, "{json:#}");
    // Judged on what the server caused (the corrected latency less tsumo's own delay).
    let p99 = json_u64(&json, "server_latency.p99") as f64;
    for (objective, (expr, held)) in objectives
        .iter()
        .zip([("p99<1us", false), ("p99<10s", true)])
    {
        assert_eq!(objective["expr"], expr);
        assert_eq!(objective["measured"], p99);
        assert_eq!(objective["judged_on"], "server_latency");
        assert_eq!(objective["unit"], "us");
        assert_eq!(objective["held"], held);
    }
}

/// The histogram saved in `encoded` (base64 compressed V2).
fn decoded(encoded: &serde_json::Value) -> hdrhistogram::Histogram<u64> {
    tsumo::report::schema::decode_histogram(encoded.as_str().expect("a histogram string"))
        .expect("a saved histogram decodes")
}

/// Issue 23's timeline: a 6 s run at -R1000 has at least 5 intervals in its JSON and in its
/// `--hlog`; each interval has its own latency figures (read from its own histogram), and the
/// intervals add up exactly to the whole run: counts, and the histograms value by value. The
/// log reads back (the crate's reader, and Java's HistogramLogProcessor where java is) to the
/// same histograms.
#[test]
fn timeline_intervals_add_up_to_the_run_and_the_hlog_reads_back() {
    use base64::Engine;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
    use tsumo::stats::hdr;

    let nginx = Nginx::start();
    let dir = common::TempDir::new("timeline");
    let hlog = dir.path().join("run.hlog");
    let pid = nginx.master_pid().to_string();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &[
            "-t2",
            "-c4",
            "-d6s",
            "-R1000",
            "--server-pid",
            &pid,
            "--hlog",
            hlog.to_str().unwrap(),
            "--json",
            "-",
            &url,
        ],
        Duration::from_secs(60),
    );
    run.assert_success();
    let json = run.json();
    common::schema::assert_valid_doc(common::schema::Kind::Run, &json);
    let intervals = json["intervals"].as_array().expect("an intervals array");
    assert!(intervals.len() >= 5, "{} intervals", intervals.len());

    let start_unix_ns = json["start"]["actual_unix_ns"].as_u64().unwrap();
    let mut latency = decoded(&json["histograms"]["latency"]);
    latency.reset();
    let mut lateness = latency.clone();
    let (mut completed, mut sent, mut bytes_read, mut errors) = (0, 0, 0, 0);
    for (k, interval) in intervals.iter().enumerate() {
        assert_eq!(interval["start_s"].as_f64(), Some(k as f64), "{interval:#}");
        let offset = interval["start_unix_ns"].as_u64().unwrap() - start_unix_ns;
        assert_eq!(offset, k as u64 * 1_000_000_000, "interval {k}");
        let h = decoded(&interval["latency"]["histogram"]);
        assert_eq!(json_u64(interval, "latency.count"), h.len(), "interval {k}");
        assert_eq!(json_u64(interval, "completed"), h.len(), "interval {k}");
        assert_eq!(
            json_u64(interval, "latency.p99"),
            hdr::value_at_percentile(&h, 99.0)
        );
        assert_eq!(json_u64(interval, "latency.max"), hdr::max(&h));
        latency.add(&h).unwrap();
        lateness
            .add(decoded(&interval["send_lateness"]["histogram"]))
            .unwrap();
        completed += json_u64(interval, "completed");
        sent += json_u64(interval, "sent");
        bytes_read += json_u64(interval, "bytes_read");
        errors += ["connect", "read", "write", "timeout", "status_4xx_5xx"]
            .iter()
            .map(|kind| json_u64(interval, &format!("errors.{kind}")))
            .sum::<u64>();
    }
    // The first five whole seconds each had requests of their own.
    for interval in &intervals[..5] {
        assert!(json_u64(interval, "latency.count") > 0, "{interval:#}");
        assert!(json_u64(interval, "sent") > 0, "{interval:#}");
    }
    assert!(
        intervals
            .iter()
            .any(|i| i["server"]["samples"].as_u64().unwrap_or(0) > 0),
        "no interval has the server's samples"
    );
    assert_eq!(latency, decoded(&json["histograms"]["latency"]));
    assert_eq!(lateness, decoded(&json["histograms"]["send_lateness"]));
    assert_eq!(completed, json_u64(&json, "counters.requests"));
    assert_eq!(bytes_read, json_u64(&json, "counters.bytes_read"));
    assert_eq!(errors, json_errors_total(&json));
    assert!(sent >= completed, "sent {sent}, completed {completed}");

    let log = std::fs::read(&hlog).expect("the --hlog file");
    let text = String::from_utf8_lossy(&log);
    assert!(
        text.contains("#[Histogram log format version 1.3]"),
        "{text}"
    );
    let mut read = Vec::new();
    for entry in IntervalLogIterator::new(&log) {
        if let LogEntry::Interval(interval) = entry.expect("a log line") {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(interval.encoded_histogram())
                .unwrap();
            let h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
                .deserialize(&mut std::io::Cursor::new(bytes))
                .unwrap();
            read.push((interval.start_timestamp(), h));
        }
    }
    assert_eq!(read.len(), intervals.len());
    for (k, (start, h)) in read.iter().enumerate() {
        assert_eq!(*start, Duration::from_secs(k as u64));
        assert_eq!(h, &decoded(&intervals[k]["latency"]["histogram"]), "{k}");
    }

    // Java's own reader, as people plot these logs.
    let Ok(java) = which_java() else {
        eprintln!("skipped HistogramLogProcessor: no java on PATH");
        return;
    };
    let out = std::process::Command::new(java)
        .args(["-cp", "/usr/share/java/hdrhistogram.jar"])
        .args(["org.HdrHistogram.HistogramLogProcessor", "-i"])
        .arg(&hlog)
        .args(["-outputValueUnitRatio", "1000"])
        .output()
        .expect("java runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let total = stdout
        .lines()
        .find_map(|l| l.split("Total count").nth(1))
        .and_then(|rest| {
            rest.trim_start_matches([' ', '='])
                .trim_end_matches(']')
                .trim()
                .parse::<u64>()
                .ok()
        })
        .unwrap_or_else(|| panic!("no total count in:\n{stdout}"));
    assert_eq!(total, latency.len(), "{stdout}");
}

/// `java` on PATH.
fn which_java() -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("java"))
        .find(|path| path.is_file())
        .ok_or(())
}

/// Issue 30 (7, "rate>100% holds"): a run sends exactly R·d requests, the ones due in
/// [start, start + d) over all connections and threads; the slot due at start + d itself is not
/// the run's (before: 11 at -R10 -d1s, so the achieved rate was above the target). So the rate
/// measured is under 100 % (the elapsed time is a little over d: `rate>100%` can never hold and
/// is refused, issue 43) and `rate>99%` holds; nothing is counted as never sent.
#[test]
fn a_run_sends_exactly_rate_times_duration_requests() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    // Every try's requests reach nginx's log, retried ones too.
    let logged = std::cell::Cell::new(0u64);
    for (load, due) in [
        (&["-t1", "-c1", "-d1s", "-R10"][..], 10),
        (&["-t2", "-c4", "-d2s", "-R200"][..], 400),
    ] {
        let mut args = load.to_vec();
        args.extend(["--slo", "rate>99%", "--json", "-", &url]);
        // A connection still waiting on its response when its last request falls due cannot
        // send it (counted as never sent, `unsent.busy`): on a busy machine that is the truth,
        // not the count this test checks, so it tries again.
        let (run, json) = common::up_to_three_tries(
            || {
                let run = run_tsumo(&args, Duration::from_secs(20));
                let json = run.json();
                logged.set(logged.get() + json_u64(&json, "counters.requests"));
                (run, json)
            },
            |(_, json)| {
                (json_u64(json, "counters.unsent.busy") > 0)
                    .then(|| "a connection was busy when a request fell due".to_string())
            },
        );
        assert_eq!(
            json_u64(&json, "counters.requests"),
            due,
            "{load:?}: {json:#}"
        );
        assert_eq!(json_errors_total(&json), 0, "{load:?}: {json:#}");
        let logged = logged.get() as usize;
        assert_eq!(nginx.access_log_wait(logged).len(), logged, "{load:?}");
        assert_eq!(run.status.code(), Some(0), "{load:?}: {}", run.stderr);
        let held: Vec<(&str, bool)> = json["objectives"]
            .as_array()
            .expect("objectives")
            .iter()
            .map(|o| (o["expr"].as_str().unwrap_or(""), o["held"] == true))
            .collect();
        assert_eq!(held, [("rate>99%", true)], "{json:#}");
        let rate = json["objectives"][0]["measured"].as_f64().unwrap_or(0.0);
        assert!((99.0..100.0).contains(&rate), "{json:#}");
    }
}
