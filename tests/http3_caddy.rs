//! `--http3` against a real QUIC server, Caddy (see `common::caddy` for what makes Caddy 2.6
//! answer on 127.0.0.1): every request due sent and counted, the JSON saying `h3`, the wrk2
//! report with the protocol and QUIC's counts named, a Lua script's POST unchanged, the same
//! server over h2 and h3 with `--vs`, bad command lines as one line and exit 2, and `tsumo doctor
//! --http3`. (A port that does not answer over UDP: `tests/http3_faults.rs`.)

mod common;

use std::time::Duration;

use common::caddy::Caddy;
use common::{json_errors_total, json_u64, run_tsumo, TempDir};

const LIMIT: Duration = Duration::from_secs(60);

/// At -R2000 over 10 connections of 4 streams each, every request due is sent once, none is
/// lost and the counts add up interval by interval (the rate reached is a benchmark's).
#[test]
fn every_request_due_is_sent_and_counted_over_h3() {
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let url = caddy.url("/");
    // A connection whose 4 streams are all still waiting when a request falls due cannot send
    // it (counted as never sent, `unsent.busy`): on a busy machine that is the truth, not the
    // count this test checks, so it tries again (as tests/http_nginx.rs does).
    let (run, json) = common::up_to_three_tries(
        || {
            let run = run_tsumo(
                &[
                    "--http3", "-m4", "-t2", "-c10", "-d3s", "-R2000", "--cacert", &cacert,
                    "--json", "-", &url,
                ],
                LIMIT,
            );
            let json = run.json();
            (run, json)
        },
        |(_, json)| {
            (json_u64(json, "counters.unsent.busy") > 0)
                .then(|| "a connection was busy when a request fell due".to_string())
        },
    );
    run.assert_success();
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    assert_eq!(json["plan"]["protocol"], "h3", "{json:#}");
    assert_eq!(json["plan"]["http3"]["streams"], 4, "{json:#}");
    let intervals = json["intervals"].as_array().expect("intervals");
    let sum = |field: &str| intervals.iter().map(|i| json_u64(i, field)).sum::<u64>();
    // Every request due in the 3 s was sent: 2000 × 3.
    assert_eq!(sum("sent"), 6000, "{json:#}");
    assert_eq!(json_u64(&json, "counters.unsent.busy"), 0, "{json:#}");
    let requests = json_u64(&json, "counters.requests");
    // At most 10 connections × 4 streams were still in flight when the run ended.
    assert!((6000 - 40..=6000).contains(&requests), "{requests} counted");
    assert_eq!(sum("completed"), requests);
    assert_eq!(json_u64(&json, "latency.count"), requests);
    assert!(
        json_u64(&json, "counters.bytes_read") > requests * common::caddy::HELLO.len() as u64,
        "bytes read count the bodies: {json:#}"
    );
    // One QUIC connection per -c, each with a handshake of its own (full or resumed).
    assert_eq!(json_u64(&json, "counters.connections_opened"), 10);
    assert_eq!(
        json_u64(&json, "counters.tls_full_handshakes")
            + json_u64(&json, "counters.tls_resumed_handshakes"),
        10,
        "{json:#}"
    );
    let h3 = &json["counters"]["http3"];
    assert!(json_u64(h3, "packets_sent") > 6000, "{json:#}");
    // quinn stamps in user space: the run says so.
    assert_eq!(json["timestamps"], "user", "{json:#}");
    common::schema::assert_valid_doc(common::schema::Kind::Run, &json);
}

/// wrk2's layout with the protocol named under the threads line, and QUIC's counts and the
/// handshakes after the totals.
#[test]
fn text_report_keeps_wrk2_layout_and_names_http3() {
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let url = caddy.url("/");
    let run = run_tsumo(
        &[
            "--http3", "-t1", "-c4", "-m2", "-d2s", "-R400", "-L", "--cacert", &cacert, &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let out = &run.stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("Running 2s test @ {url}"), "{out}");
    assert_eq!(lines[1], "  1 threads and 4 connections", "{out}");
    assert_eq!(
        lines[2], "  HTTP/3 (h3 over QUIC), up to 2 streams per connection",
        "{out}"
    );
    assert!(lines[3].starts_with("  Thread Stats"), "{out}");
    for needle in ["Requests/sec:", "QUIC packets: ", "TLS handshakes: "] {
        assert!(out.contains(needle), "no {needle:?} in:\n{out}");
    }
}

/// A Lua script's POST with a body goes as it does over HTTP/2.
#[test]
fn a_scripts_post_goes_over_h3() {
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let dir = TempDir::new("tsumo-h3-lua");
    let script = dir.path().join("post.lua");
    std::fs::write(
        &script,
        "wrk.method = \"POST\"\nwrk.body = string.rep(\"x\", 2048)\n\
         wrk.headers[\"Content-Type\"] = \"application/octet-stream\"\n\
         local seen = 0\n\
         response = function(status, headers, body)\n\
           if status == 200 and body == \"hello from caddy over h3\" then seen = seen + 1 end\n\
         end\n\
         done = function() io.stderr:write(\"lua saw ok responses\\n\") end\n",
    )
    .expect("write post.lua");
    let script = script.display().to_string();
    let url = caddy.url("/");
    let run = run_tsumo(
        &[
            "--http3", "-t1", "-c2", "-d1s", "-R200", "-s", &script, "--cacert", &cacert, "--json",
            "-", &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let json = run.json();
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    assert!(json_u64(&json, "counters.requests") > 150, "{json:#}");
    // 2 KB bodies written: the bytes written count them.
    assert!(
        json_u64(&json, "counters.bytes_written") > 2048 * 150,
        "{json:#}"
    );
}

/// HTTP/2 and HTTP/3 count a response's bytes alike: its fields as `name: value` lines after
/// `:status: 200`, the empty line, the body (h3 read 0.82× h2's when h2 counted its frames and
/// h3 its fields without the status). A script's `response()` sums the same from what it sees.
#[test]
fn h2_and_h3_count_a_responses_fields_and_body_alike() {
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let dir = TempDir::new("tsumo-h3-bytes");
    let script = dir.path().join("bytes.lua");
    std::fs::write(
        &script,
        "local threads = {}\n\
         setup = function(thread) table.insert(threads, thread) end\n\
         counted = 0\n\
         response = function(status, headers, body)\n\
           local head = string.len(\":status: 200\\r\\n\") + 2\n\
           for name, value in pairs(headers) do head = head + #name + #value + 4 end\n\
           counted = counted + head + #body\n\
         end\n\
         done = function()\n\
           local all = 0\n\
           for _, t in ipairs(threads) do all = all + t:get(\"counted\") end\n\
           io.stderr:write(string.format(\"counted %d\\n\", all))\n\
         end\n",
    )
    .expect("write bytes.lua");
    let script = script.display().to_string();
    let url = caddy.url("/");
    for protocol in ["--http3", "--http2"] {
        let run = run_tsumo(
            &[
                protocol, "-t1", "-c2", "-d1s", "-R100", "-s", &script, "--cacert", &cacert,
                "--json", "-", &url,
            ],
            LIMIT,
        );
        run.assert_success();
        let json = run.json();
        let counted: u64 = run
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix("counted ")?.parse().ok())
            .unwrap_or_else(|| panic!("{protocol}: {}", run.stderr));
        assert!(json_u64(&json, "counters.requests") > 50, "{json:#}");
        assert_eq!(
            json_u64(&json, "counters.bytes_read"),
            counted,
            "{protocol}: {json:#}"
        );
    }
}

/// `--0rtt`: the run's connection resumes the pre-flight check's session and sends its first
/// requests in its first flight, which Caddy accepts; without it, the same run resumes with no
/// early data.
#[test]
fn zero_rtt_sends_the_first_requests_early_and_is_counted() {
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let url = caddy.url("/");
    for zero_rtt in [true, false] {
        let mut args = vec![
            "--http3", "-t1", "-c1", "-d1s", "-R50", "--cacert", &cacert, "--json", "-", &url,
        ];
        if zero_rtt {
            args.insert(0, "--0rtt");
        }
        let run = run_tsumo(&args, LIMIT);
        run.assert_success();
        let json = run.json();
        assert_eq!(json_errors_total(&json), 0, "{json:#}");
        assert_eq!(
            json_u64(&json, "counters.tls_resumed_handshakes"),
            1,
            "{json:#}"
        );
        assert_eq!(
            json_u64(&json, "counters.tls_full_handshakes"),
            0,
            "{json:#}"
        );
        let h3 = &json["counters"]["http3"];
        let early = u64::from(zero_rtt);
        assert_eq!(json_u64(h3, "zero_rtt_sent"), early, "{json:#}");
        assert_eq!(json_u64(h3, "zero_rtt_accepted"), early, "{json:#}");
    }
}

/// `--vs` with `--vs-http2`: the same server over h3 and h2, side by side.
#[test]
fn vs_compares_the_same_server_over_h3_and_h2() {
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let url = caddy.url("/");
    let run = run_tsumo(
        &[
            "--http3",
            "-t1",
            "-c2",
            "-d1s",
            "-R200",
            "--cacert",
            &cacert,
            "--vs",
            &url,
            "--vs-http2",
            "--vs-label",
            "h2",
            "--label",
            "h3",
            "--rounds",
            "1",
            "--json",
            "-",
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let json = run.json();
    let runs = json["runs"].as_array().expect("the comparison's runs");
    let protocols: Vec<&str> = runs
        .iter()
        .map(|r| r["plan"]["protocol"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(protocols, ["h3", "h2"], "{json:#}");
    for r in runs {
        assert_eq!(json_errors_total(r), 0, "{r:#}");
        assert!(json_u64(r, "counters.requests") > 150, "{r:#}");
    }
    // h3 is timed in user space and h2 by the kernel: no verdict on latency, either way.
    let dir = TempDir::new("h3-vs-h2");
    let saved = dir.path().join("vs.json");
    std::fs::write(&saved, run.stdout.as_bytes()).expect("write the comparison");
    let compared = run_tsumo(&["compare", saved.to_str().unwrap_or_default()], LIMIT);
    compared.assert_success();
    let text = &compared.stdout;
    let stamps: Vec<&str> = runs
        .iter()
        .map(|r| r["timestamps"].as_str().unwrap_or(""))
        .collect();
    assert!(
        stamps != ["user", "kernel"]
            || text.contains(
                "latency not compared: h2 is timed by the kernel's receive stamps and h3 in user \
             space"
            ),
        "{text}"
    );
    assert!(
        !text.contains("slower") && !text.contains("faster"),
        "{text}"
    );
}

/// Bad command lines: one line, exit 2, no traffic.
#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: [(&[&str], &str); 5] = [
        (
            &["--http3", "-d1s", "-R10", "http://127.0.0.1:1/"],
            "--http3 needs an https:// URL",
        ),
        // The --vs run would speak h3 to an http:// URL: refused before any run, not after one.
        (
            &[
                "--http3",
                "-d1s",
                "-R10",
                "https://127.0.0.1:1/",
                "--vs",
                "http://127.0.0.1:1/",
            ],
            "--http3 runs the --vs URL over HTTP/3 too, which needs https://",
        ),
        (
            &["--http3", "--http2", "-d1s", "https://127.0.0.1:1/"],
            "--http2 and --http3 exclude each other",
        ),
        (
            &["--0rtt", "-d1s", "https://127.0.0.1:1/"],
            "--0rtt needs --http3",
        ),
        (
            &[
                "--http3",
                "--h2-window",
                "1m",
                "-d1s",
                "https://127.0.0.1:1/",
            ],
            "--h2-window needs --http2",
        ),
    ];
    for (args, needle) in cases {
        let run = run_tsumo(args, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", run.stderr);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {}", run.stderr);
        assert!(lines[0].contains(needle), "{args:?}: {}", run.stderr);
    }
}

/// `tsumo doctor --http3`: the target checked with a QUIC handshake, and the UDP receive buffer
/// against the planned rate (100,000 full-size datagrams in 10 ms on one socket fit no buffer).
#[test]
fn doctor_checks_the_target_over_quic_and_the_udp_receive_buffer() {
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let url = caddy.url("/");
    let run = run_tsumo(
        &[
            "doctor", "--http3", "-R", "2000", "-c", "10", "--cacert", &cacert, &url,
        ],
        LIMIT,
    );
    let target = run
        .stdout
        .lines()
        .find(|l| l.contains("target"))
        .unwrap_or_default();
    assert!(
        target.starts_with("OK") && target.contains("answers over QUIC (h3), handshake OK"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("UDP receive buffer"), "{}", run.stdout);
    let run = run_tsumo(&["doctor", "--http3", "-R", "10m", "-c", "1"], LIMIT);
    assert_eq!(run.status.code(), Some(1), "{}", run.stdout);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with("FAIL  UDP receive buffer") && l.contains("net.core.rmem_max")),
        "{}",
        run.stdout
    );
}

/// `--stages` over h3: each stage's target is its integral and each stage's sends add up to it
/// (the whole profile's 800 requests), as over HTTP/1.1 and h2 (tests/stages.rs).
#[test]
fn stages_over_h3_send_each_stages_integral() {
    let caddy = Caddy::start();
    let cacert = caddy.cacert().display().to_string();
    let url = caddy.url("/");
    let run = run_tsumo(
        &[
            "--http3",
            "-m4",
            "-t1",
            "-c4",
            "--stages",
            "1s:0-400,1s:400,0s:400-200,1s:200",
            "--cacert",
            &cacert,
            "--json",
            "-",
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    let json = run.json();
    assert_eq!(json["plan"]["protocol"], "h3", "{json:#}");
    assert_eq!(json_errors_total(&json), 0, "{json:#}");
    let intervals = json["intervals"].as_array().expect("intervals");
    let sent: u64 = intervals.iter().map(|i| json_u64(i, "sent")).sum();
    assert_eq!(
        sent + json_u64(&json, "counters.unsent.busy"),
        800,
        "{json:#}"
    );
    let stages = json["stages"].as_array().expect("stages");
    let targets: Vec<u64> = stages.iter().map(|s| json_u64(s, "target")).collect();
    let indexes: Vec<u64> = stages.iter().map(|s| json_u64(s, "index")).collect();
    assert_eq!(targets, [200, 400, 200], "{json:#}");
    assert_eq!(indexes, [1, 2, 4], "the jump keeps its number: {json:#}");
    let requests: u64 = stages.iter().map(|s| json_u64(s, "requests")).sum();
    assert_eq!(requests, json_u64(&json, "counters.requests"), "{json:#}");
    common::schema::assert_valid_doc(common::schema::Kind::Run, &json);
}
