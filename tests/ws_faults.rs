//! `tsumo ws` against servers that misbehave (tests/common/wsfaulty.rs): a reset, a close with
//! a code, silence, frames the protocol forbids, replies in continuation frames, a flood of
//! pushes. Each is counted by kind in the report and the JSON; none hangs or panics tsumo, and
//! the run ends on time.

mod common;

use std::time::Duration;

use common::wsfaulty::{Fault, Malformed, WsFaulty};
use common::{json_u64, run_tsumo, Run};

const LIMIT: Duration = Duration::from_secs(60);

/// `tsumo ws ARGS --json - URL`: the run and its JSON.
fn ws(args: &[&str], url: &str) -> (Run, serde_json::Value) {
    let mut all = vec!["ws"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-", url]);
    let run = run_tsumo(&all, LIMIT);
    assert!(
        !run.stderr.contains("panicked"),
        "tsumo panicked:\n{}",
        run.stderr
    );
    let doc = run.json();
    (run, doc)
}

fn closes(doc: &serde_json::Value, kind: &str) -> u64 {
    doc["connections"]["closes"][kind].as_u64().unwrap_or(0)
}

/// A reset instead of each connection's 5th reply: the resets counted as such, the message
/// unanswered, the four before it matched; the run, ended by the server, ends at once.
#[test]
fn a_reset_is_counted_as_a_reset() {
    let server = WsFaulty::start(Fault::Reset { after: 5 });
    let (run, doc) = ws(&["-t1", "-c2", "-d3s", "-R20"], &server.url());
    assert_eq!(closes(&doc, "reset"), 2, "{doc}");
    assert_eq!(json_u64(&doc, "messages.sent"), 10, "{doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), 8, "{doc}");
    assert_eq!(json_u64(&doc, "messages.unanswered"), 2, "{doc}");
    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    assert!(run.wall < Duration::from_secs(3 + 5), "{:?}", run.wall);
}

/// A close with 1011 (internal error) instead of each connection's 3rd reply: counted by its
/// code.
#[test]
fn a_close_is_counted_by_its_code() {
    let server = WsFaulty::start(Fault::CloseWith {
        code: 1011,
        after: 3,
    });
    let (run, doc) = ws(&["-t1", "-c3", "-d2s", "-R30"], &server.url());
    assert_eq!(closes(&doc, "close 1011"), 3, "{doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), 6, "{doc}");
    assert_eq!(json_u64(&doc, "messages.unanswered"), 3, "{doc}");
    assert!(run.stdout.contains("close 1011"), "{}", run.stdout);
}

/// A server that upgrades and never answers: every message timed out (the connection going on
/// with the next), none answered, the run ending within -d and -T and the close's second, and
/// failing (exit 1) in one line.
#[test]
fn a_server_that_never_answers_times_out_and_the_run_ends_on_time() {
    let server = WsFaulty::start(Fault::NeverAnswers);
    let (run, doc) = ws(
        &["-t1", "-c2", "-d2s", "-R10", "-T", "300ms"],
        &server.url(),
    );
    assert_eq!(json_u64(&doc, "messages.answered"), 0, "{doc}");
    let sent = json_u64(&doc, "messages.sent");
    let timed_out = json_u64(&doc, "messages.timed_out");
    let unanswered = json_u64(&doc, "messages.unanswered");
    assert!(timed_out > 0, "{doc}");
    assert_eq!(timed_out + unanswered, sent, "{doc}");
    assert_eq!(server.messages(), sent, "{doc}");
    assert_eq!(run.status.code(), Some(1), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    // -d 2 s, then -T for the last reply and up to a second for the close; the rest is start.
    assert!(run.wall < Duration::from_secs(2 + 4), "{:?}", run.wall);
}

/// Each frame the protocol forbids ends its connection, counted as a protocol violation; the
/// replies before it are matched.
#[test]
fn malformed_frames_are_protocol_violations() {
    for frame in [
        Malformed::ReservedBits,
        Malformed::BadOpcode,
        Malformed::LengthLie,
        Malformed::Masked,
    ] {
        let server = WsFaulty::start(Fault::Malformed { frame, after: 4 });
        let (run, doc) = ws(&["-t1", "-c2", "-d2s", "-R20"], &server.url());
        assert_eq!(closes(&doc, "protocol violation"), 2, "{frame:?}: {doc}");
        assert_eq!(json_u64(&doc, "messages.answered"), 6, "{frame:?}: {doc}");
        assert_eq!(json_u64(&doc, "messages.unanswered"), 2, "{frame:?}: {doc}");
        assert!(
            run.wall < Duration::from_secs(2 + 5),
            "{frame:?}: {:?}",
            run.wall
        );
    }
}

/// Replies split in continuation frames (a ping between the first two) are reassembled and
/// matched: exact counts, nothing pushed, no connection ended — also for a message longer
/// than the read buffer's resting size.
#[test]
fn fragmented_replies_are_reassembled_and_matched() {
    let server = WsFaulty::start(Fault::Fragmented { pieces: 3 });
    for size in ["64", "5000"] {
        let (run, doc) = ws(
            &["-t1", "-c2", "-d2s", "-R50", "--size", size],
            &server.url(),
        );
        run.assert_success();
        let sent = json_u64(&doc, "messages.sent");
        assert_eq!(json_u64(&doc, "messages.due"), 100, "{doc}");
        assert!(sent.abs_diff(100) <= 2, "{doc}");
        assert_eq!(json_u64(&doc, "messages.answered"), sent, "{doc}");
        assert_eq!(json_u64(&doc, "messages.pushed"), 0, "{doc}");
        assert_eq!(json_u64(&doc, "messages.unanswered"), 0, "{doc}");
        assert!(doc["connections"]["closes"]
            .as_object()
            .is_none_or(|c| c.is_empty()));
    }
}

/// 100,000 pushes (1,000 before each reply): every one counted as a push, every reply still
/// matched, and tsumo's memory bounded (it reads them as they come, holding none).
#[test]
fn a_flood_of_pushes_is_counted_and_the_replies_still_matched() {
    let server = WsFaulty::start(Fault::Flood { per_message: 1000 });
    let (run, doc) = ws(&["-t1", "-c2", "-d2s", "-R50"], &server.url());
    run.assert_success();
    let sent = json_u64(&doc, "messages.sent");
    assert!(sent.abs_diff(100) <= 2, "{doc}");
    assert_eq!(json_u64(&doc, "messages.answered"), sent, "{doc}");
    assert_eq!(json_u64(&doc, "messages.unanswered"), 0, "{doc}");
    assert_eq!(json_u64(&doc, "messages.pushed"), server.pushes(), "{doc}");
    assert_eq!(server.pushes(), sent * 1000, "{doc}");
    let rss = json_u64(&doc, "tsumo.peak_rss_bytes");
    assert!(rss < 64 << 20, "peak RSS {rss} bytes");
}

/// The Node echo server killed (SIGKILL) mid-run: the run ends with its connections, its
/// results so far are written (`--json`, `ended_by: "server gone"`, the failure line), and
/// tsumo exits 1 with one line naming it.
#[test]
fn a_server_that_dies_mid_run_fails_the_run_with_its_results_so_far() {
    let mut echo = common::wsecho::WsEcho::start(&[]);
    let dir = common::TempDir::new("ws-dies");
    let json = dir.path().join("run.json");
    let json_arg = json.display().to_string();
    let url = echo.url();
    let run = common::Signalled::spawn(&[
        "ws", "-t1", "-c4", "-d8s", "-R100", "--json", &json_arg, &url,
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    echo.kill();
    let run = run.finish(Duration::from_secs(20));
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("server gone"), "{}", run.stderr);
    // Ended with its connections, not at -d.
    assert!(run.wall < Duration::from_secs(8), "{:?}", run.wall);
    assert!(run.stdout.contains("Failed: server gone"), "{}", run.stdout);
    let doc = common::read_json(&json);
    assert_eq!(doc["ended_by"], "server gone", "{doc}");
    let failure = doc["failure"].as_str().unwrap_or_default();
    assert!(failure.starts_with("server gone"), "{doc}");
    let answered = json_u64(&doc, "messages.answered");
    assert!(answered > 0 && answered < 800, "{doc}");
    let ended: u64 = doc["connections"]["closes"]
        .as_object()
        .map_or(0, |c| c.values().filter_map(|n| n.as_u64()).sum());
    assert_eq!(ended, 4, "{doc}");
}

/// Pushes without end, the socket never empty (each reply queued behind the pushes before
/// it): every message sent is answered, timed out or left unanswered at the end, the pushes
/// are counted apart, and the run ends on time — a socket that always has something to read
/// holds neither the timeouts nor the end.
#[test]
fn an_endless_flood_of_pushes_does_not_hold_the_end() {
    let server = WsFaulty::start(Fault::FloodForever);
    let (run, doc) = ws(&["-t1", "-c2", "-d2s", "-R50", "-T", "2s"], &server.url());
    assert!(run.wall < Duration::from_secs(2 + 2 + 4), "{:?}", run.wall);
    assert_eq!(json_u64(&doc, "connections.opened"), 2, "{doc}");
    run.assert_success();
    let sent = json_u64(&doc, "messages.sent");
    let fates = ["answered", "timed_out", "unanswered"]
        .map(|fate| json_u64(&doc, &format!("messages.{fate}")));
    assert!(fates[0] > 0, "{doc}");
    assert_eq!(fates.iter().sum::<u64>(), sent, "{doc}");
    assert!(json_u64(&doc, "messages.pushed") > 1000, "{doc}");
    assert!(doc["connections"]["closes"]
        .as_object()
        .is_none_or(|c| c.is_empty()));
}
