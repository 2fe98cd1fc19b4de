//! A server killed (SIGKILL) in the middle of a capacity search: the search fails (exit 1,
//! `limited_by: "server-failed"`, the failure line in the JSON's `failure` and on stderr), keeps
//! every step judged so far and the killed step's own verdicts, and never calls the dead server
//! a system limit (HTTP: nginx) or a step that held (mahjong: majiang-server, whose players'
//! sessions are then left on it: listed in the JSON's `left_on_server`). The kill is timed by
//! reading tsumo's stderr as it runs: `capacity: step N at …`, or the progress line of a judged
//! window.

mod common;

use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::majiang::Majiang;
use common::nginx::Nginx;
use serde_json::Value;

/// tsumo running, its stderr read line by line as it comes; killed if the test fails.
struct Watched {
    child: common::KillOnDrop,
    lines: mpsc::Receiver<String>,
    stderr: String,
    stdout: std::thread::JoinHandle<String>,
}

impl Watched {
    fn spawn(args: &[&str]) -> Watched {
        let mut child = common::spawn_piped(args);
        let stdout = common::drain(child.stdout.take().expect("stdout piped"));
        let lines = common::lines(child.stderr.take().expect("stderr piped"));
        Watched {
            child,
            lines,
            stderr: String::new(),
            stdout,
        }
    }

    /// Waits for a stderr line that `wanted` accepts: true when it came, false when tsumo
    /// exited first (its stderr so far in `self.stderr`).
    fn wait_line(&mut self, limit: Duration, wanted: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.stderr.push_str(&line);
                    self.stderr.push('\n');
                    if wanted(&line) {
                        return true;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return false,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = self.child.kill();
                    panic!("no such line within {limit:?}:\n{}", self.stderr);
                }
            }
        }
    }

    /// Waits for the exit (within `limit`): its exit code, stdout and whole stderr.
    fn finish(mut self, limit: Duration) -> (Option<i32>, String, String) {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for tsumo") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("tsumo still running after {limit:?}:\n{}", self.stderr);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = self.stdout.join().unwrap_or_default();
        self.stderr.extend(self.lines.iter().map(|l| l + "\n"));
        (status.code(), stdout, self.stderr)
    }
}

/// SIGKILL to nginx's master, then to its workers (read before: an orphaned worker would go
/// on answering on the listening socket it inherited).
fn kill_nginx(nginx: &Nginx) {
    let master = nginx.master_pid();
    let children = std::fs::read_to_string(format!("/proc/{master}/task/{master}/children"))
        .expect("nginx's workers");
    let workers: Vec<libc::pid_t> = children
        .split_whitespace()
        .map(|pid| pid.parse().expect("a pid"))
        .collect();
    assert!(!workers.is_empty(), "nginx has no worker");
    for pid in std::iter::once(master as libc::pid_t).chain(workers) {
        // SAFETY: kill(2) on nginx's processes, started by this test.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0, "kill {pid}");
    }
}

fn strings(doc: &Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} missing in {doc:#}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

/// nginx SIGKILLed 1 s into step 2's 3 s judged run (50 req/s held in step 1): the step's
/// connections are refused from then on, which today reads as a somaxconn limit with exit 0.
/// Now: exit 1, the failure named on stderr, stdout and in the JSON, step 1 kept as held, step
/// 2 kept with its broken errors objective. Tried up to three times: on a busy machine step 1
/// can end the search by itself (tsumo's own lateness) before step 2 begins, or be disturbed
/// and run again as step 2.
#[test]
fn nginx_killed_mid_search_fails_the_search_and_keeps_its_steps() {
    let dir = common::TempDir::new("tsumo-server-dies");
    for attempt in 1..=3 {
        let nginx = Nginx::start();
        let url = nginx.http_url("/index.html");
        let json = dir.path().join(format!("search-{attempt}.json"));
        let json_arg = json.to_string_lossy().to_string();
        let mut tsumo = Watched::spawn(&[
            "capacity",
            "-t1",
            "-c4",
            "--slo",
            "p99<500ms",
            "--slo",
            "errors<1%",
            "--from",
            "50",
            "--step",
            "3s",
            "--warmup",
            "0",
            "--pause",
            "200ms",
            "--json",
            &json_arg,
            &url,
        ]);
        let began = tsumo.wait_line(Duration::from_secs(60), |l| {
            l.starts_with("capacity: step 2 at ")
        });
        // A step 1 disturbed by other work is run again as step 2, at 50.
        let grew = tsumo
            .stderr
            .contains("capacity: step 2 at 100 requests/sec");
        if !began || !grew {
            let _ = tsumo.child.kill();
            let (_, _, stderr) = tsumo.finish(Duration::from_secs(30));
            assert!(
                attempt < 3,
                "the search did not grow to 100 in step 2, 3 times:\n{stderr}"
            );
            continue;
        }
        // Into step 2's judged run (no warm-up).
        std::thread::sleep(Duration::from_secs(1));
        kill_nginx(&nginx);
        let port = nginx.http_port();
        let (code, stdout, stderr) = tsumo.finish(Duration::from_secs(60));
        assert_eq!(code, Some(1), "{stdout}\n{stderr}");
        let failure = format!(
            "the server stopped answering during step 2 at 100 requests/sec: unable to connect \
             to 127.0.0.1:{port}: "
        );
        let last = stderr.lines().last().unwrap_or_default();
        assert!(last.starts_with(&format!("tsumo: {failure}")), "{stderr}");
        assert!(
            stdout.contains(
                "Capacity: at least 50 requests/sec; the search failed: the server stopped \
                 answering at 100 (broke there: errors "
            ),
            "{stdout}"
        );
        assert!(stdout.contains(&format!("Failed: {failure}")), "{stdout}");
        assert!(!stdout.contains("somaxconn"), "{stdout}");

        let doc = common::read_json(&json);
        let capacity = &doc["capacity"];
        assert_eq!(capacity["limited_by"], "server-failed", "{capacity:#}");
        assert_eq!(capacity["value"], 50, "{capacity:#}");
        assert_eq!(capacity["held"], serde_json::json!([50]), "{capacity:#}");
        let reason = capacity["reason"].as_str().unwrap_or_default();
        assert!(
            reason.starts_with(&format!("at 100: unable to connect to 127.0.0.1:{port}: "))
                && reason.contains("; broke there: errors<1% (errors "),
            "{reason}"
        );
        assert!(
            doc["failure"]
                .as_str()
                .is_some_and(|f| f.starts_with(&failure)),
            "{doc:#}"
        );
        assert_eq!(strings(&doc, "outcomes"), ["held", "server-failed"]);
        let steps = doc["steps"].as_array().expect("steps");
        assert_eq!(steps.len(), 2, "{doc:#}");
        assert_eq!(steps[1]["plan"]["rate"], 100);
        // The killed step's own verdicts: its errors objective broke (about 2 s of 3 refused).
        let errors = &steps[1]["objectives"][1];
        assert_eq!(errors["expr"], "errors<1%");
        assert_eq!(errors["held"], false, "{errors:#}");
        assert!(steps[1]["counters"]["errors"]["connect"].as_u64() > Some(0));
        // Read back by tsumo: the saved search's page says why it failed.
        let page = dir.path().join(format!("page-{attempt}.html"));
        let page_arg = page.to_string_lossy().to_string();
        let report = common::run_tsumo(
            &["report", &json_arg, "-o", &page_arg],
            Duration::from_secs(30),
        );
        report.assert_success();
        let html = std::fs::read_to_string(&page).expect("the page");
        assert!(
            html.contains("the server stopped answering during step 2"),
            "{html}"
        );
        return;
    }
}

/// majiang-server SIGKILLed during step 2's judged window (4 players held in step 1): its
/// players disconnect, which today is a step held ("8 playing", exit status from the sessions
/// left alone, neither in the JSON). Now: the step is `server-failed`, the search ends there
/// with exit 1, step 1 is kept as held, and the JSON has the failure line and the 8 sessions
/// left on the dead server (their logouts could not be answered).
#[test]
fn majiang_server_killed_mid_search_fails_the_search_and_lists_the_sessions_left() {
    let server = Majiang::start();
    let url = server.url();
    let dir = common::TempDir::new("tsumo-mj-dies");
    let json = dir.path().join("search.json");
    let json_arg = json.to_string_lossy().to_string();
    let mut tsumo = Watched::spawn(&[
        "mahjong",
        "--capacity",
        "-t1",
        "--ramp",
        "1ms",
        "--step",
        "3s",
        "--warmup",
        "1s",
        "--pause",
        "1s",
        "--slo",
        "draw_overshoot.p99<60s",
        "--from",
        "4",
        "--to",
        "16",
        "--bot",
        "tsumogiri",
        "--progress",
        "--json",
        &json_arg,
        &url,
    ]);
    let judged = tsumo.wait_line(Duration::from_secs(90), |l| {
        // The progress line, after its lead (the lag a player feels).
        l.contains("; step 2 at 8 players") && l.contains(": judged ")
    });
    assert!(judged, "the search ended before step 2:\n{}", tsumo.stderr);
    // SAFETY: kill(2) on the server's process group, started by this test.
    assert_eq!(
        unsafe { libc::kill(-(server.pid() as libc::pid_t), libc::SIGKILL) },
        0
    );
    let (code, stdout, stderr) = tsumo.finish(Duration::from_secs(90));
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    let port = server.port();
    let failure = format!(
        "the server stopped answering during step 2 at 8 players: unable to connect to \
         127.0.0.1:{port}: "
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with(&format!("tsumo: {failure}"))),
        "{stderr}"
    );
    assert!(
        stdout.contains(
            "Capacity: at least 4 players; the search failed: the server stopped answering at 8"
        ),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("Failed: {failure}")), "{stdout}");

    let doc = common::read_json(&json);
    let capacity = &doc["capacity"];
    assert_eq!(capacity["limited_by"], "server-failed", "{capacity:#}");
    assert_eq!(capacity["value"], 4, "{capacity:#}");
    assert_eq!(strings(&doc, "outcomes"), ["held", "server-failed"]);
    assert_eq!(doc["steps"].as_array().map(Vec::len), Some(2), "{doc:#}");
    assert!(
        doc["failure"]
            .as_str()
            .is_some_and(|f| f.starts_with(&failure)),
        "{doc:#}"
    );
    // Every player was logged in when the server died: none could log out.
    let mut left = strings(&doc, "left_on_server");
    left.sort();
    let mut players: Vec<String> = (0..8).map(|i| format!("tsumo{i}")).collect();
    players.sort();
    assert_eq!(left, players, "{doc:#}");
    assert!(
        stdout.contains("Failed: 8 sessions left on the server: "),
        "{stdout}"
    );
}
