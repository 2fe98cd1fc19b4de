//! `tsumo doctor` against a real nginx whose workers are capped the way the seed author's were
//! (1024 open files, 1024 worker_connections): the doctor must name the cap and the fix lines
//! and exit 1 for a run that does not fit, and pass one that does.

mod common;

use std::time::Duration;

use common::nginx::Nginx;
use common::{run_tsumo, Run};

const LIMIT: Duration = Duration::from_secs(30);

fn capped_nginx() -> Nginx {
    Nginx::builder()
        .main_snippet("worker_rlimit_nofile 1024;")
        .worker_connections(1024)
        .start()
}

fn line<'a>(run: &'a Run, name: &str) -> &'a str {
    run.stdout
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_else(|| panic!("no `{name}` line in:\n{}", run.stdout))
}

/// Waits until the master has started its worker (the fixture only waits for the ports).
fn wait_for_worker(master: u32) {
    let children = format!("/proc/{master}/task/{master}/children");
    for _ in 0..200 {
        if std::fs::read_to_string(&children).is_ok_and(|c| !c.trim().is_empty()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn nginx_with_1024_open_files_caps_4096_clients() {
    let nginx = capped_nginx();
    let master = nginx.master_pid();
    wait_for_worker(master);
    let pid = master.to_string();
    let url = nginx.http_url("/");
    let run = run_tsumo(&["doctor", "-c", "4096", "--proxy-pid", &pid, &url], LIMIT);
    println!("{}", run.stdout);
    assert_eq!(run.status.code(), Some(1), "stderr: {}", run.stderr);

    let workers = line(&run, "nginx");
    assert!(workers.starts_with("OK "), "{workers}");
    assert!(workers.contains("1 of master"), "{workers}");
    assert!(workers.contains("1024 each"), "{workers}");

    let config = run
        .stdout
        .lines()
        .find(|l| l.contains("nginx config"))
        .unwrap_or_else(|| panic!("no config line:\n{}", run.stdout));
    assert!(config.starts_with("OK "), "{config}");
    assert!(config.contains("worker_connections 1024"), "{config}");
    assert!(config.contains("-T"), "{config}");

    let capacity = run
        .stdout
        .lines()
        .find(|l| l.contains("nginx capacity"))
        .unwrap_or_else(|| panic!("no capacity line:\n{}", run.stdout));
    assert!(capacity.starts_with("FAIL "), "{capacity}");
    assert!(
        capacity.contains("512 proxied clients < 4096"),
        "{capacity}"
    );
    // 4096 clients, two connections each, on one worker, plus headroom.
    assert!(
        capacity.contains("worker_rlimit_nofile 16512;"),
        "{capacity}"
    );
    assert!(capacity.contains("worker_connections 8256;"), "{capacity}");
    assert!(capacity.contains("ulimit -n"), "{capacity}");
    assert_eq!(run.stdout.lines().count(), 8, "{}", run.stdout);
    assert!(line(&run, "target").starts_with("OK "), "{}", run.stdout);
}

#[test]
fn nginx_with_1024_open_files_carries_100_clients() {
    let nginx = capped_nginx();
    let master = nginx.master_pid();
    wait_for_worker(master);
    let pid = master.to_string();
    let run = run_tsumo(&["doctor", "-c", "100", "--proxy-pid", &pid], LIMIT);
    println!("{}", run.stdout);
    assert_eq!(run.status.code(), Some(0), "stderr: {}", run.stderr);
    let nginx_lines: Vec<&str> = run.stdout.lines().filter(|l| l.contains("nginx")).collect();
    assert_eq!(nginx_lines.len(), 3, "{}", run.stdout);
    for l in &nginx_lines {
        assert!(l.starts_with("OK "), "{l}");
    }
    assert!(
        run.stdout.contains("512 proxied clients ≥ 100"),
        "{}",
        run.stdout
    );
}

#[test]
fn plain_small_run_passes_with_one_line_per_check() {
    let run = run_tsumo(&["doctor", "-c", "10"], LIMIT);
    println!("{}", run.stdout);
    run.assert_success();
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", run.stdout);
    for (l, name) in lines
        .iter()
        .zip(["open files", "ephemeral ports", "somaxconn", "conntrack"])
    {
        assert!(l.contains(name), "{l}");
        let verdict = l.split_whitespace().next().unwrap_or("");
        assert!(["OK", "WARN"].contains(&verdict), "{l}");
        assert_eq!(verdict != "OK", l.contains(" — fix: "), "{l}");
    }
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, want) in [
        (
            &["doctor", "--proxy-pid", "4000000000"][..],
            "tsumo: --proxy-pid 4000000000: no such process",
        ),
        (
            &["doctor", "-c", "ten"][..],
            "tsumo: invalid value 'ten' for -c",
        ),
        (&["doctor", "--nope"][..], "tsumo: unknown option '--nope'"),
    ] {
        let run = run_tsumo(args, LIMIT);
        assert_eq!(run.status.code(), Some(2), "{args:?}");
        assert!(run.stderr.starts_with(want), "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    let own = std::process::id().to_string();
    let run = run_tsumo(&["doctor", "--proxy-pid", &own], LIMIT);
    assert_eq!(run.status.code(), Some(2));
    assert!(run.stderr.contains("not nginx"), "{}", run.stderr);
}

#[test]
fn help_exits_0() {
    let run = run_tsumo(&["doctor", "-h"], LIMIT);
    run.assert_success();
    assert!(run.stdout.contains("Usage: tsumo doctor"), "{}", run.stdout);
    assert!(run.stdout.contains("--proxy-pid"), "{}", run.stdout);
}

/// A URL nothing listens on: the target line says so with its fix, and the exit status is 1.
#[test]
fn url_with_nothing_listening_fails_the_target_check() {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}/");
    let run = run_tsumo(&["doctor", &url], LIMIT);
    println!("{}", run.stdout);
    assert_eq!(run.status.code(), Some(1), "stderr: {}", run.stderr);
    assert_eq!(
        line(&run, "target"),
        format!(
            "FAIL  target             nothing answers at 127.0.0.1:{port}: Connection refused \
             (os error 111) — fix: start the server, or correct the URL's host and port"
        )
    );
    assert!(run.stderr.is_empty(), "{}", run.stderr);
}

/// nginx listening: OK over HTTP; over HTTPS its self-signed certificate fails the check with
/// the fix, and passes with --cacert (or -k).
#[test]
fn url_of_a_listening_nginx_passes_the_target_check() {
    let nginx = Nginx::start();
    let run = run_tsumo(&["doctor", &nginx.http_url("/")], LIMIT);
    println!("{}", run.stdout);
    run.assert_success();
    assert_eq!(
        line(&run, "target"),
        format!(
            "OK    target             127.0.0.1:{} answers",
            nginx.http_port()
        )
    );

    let https = nginx.https_url("/");
    let run = run_tsumo(&["doctor", &https], LIMIT);
    assert_eq!(run.status.code(), Some(1), "stderr: {}", run.stderr);
    let target = line(&run, "target");
    assert!(target.starts_with("FAIL  target"), "{target}");
    assert!(target.contains("is self-signed — fix: pass"), "{target}");

    let cacert = nginx.cert_path();
    for extra in [&["--cacert", cacert.to_str().unwrap()][..], &["-k"][..]] {
        let mut args = vec!["doctor"];
        args.extend_from_slice(extra);
        args.push(&https);
        let run = run_tsumo(&args, LIMIT);
        run.assert_success();
        let target = line(&run, "target");
        assert!(target.starts_with("OK    target"), "{target}");
        assert!(target.contains("TLS handshake OK"), "{target}");
    }
}

/// A port that accepts TCP connections but never answers the TLS handshake (a listener that
/// never accepts: the kernel completes the connect): `doctor` and the run's pre-flight both
/// name the handshake, not "nothing answers".
#[test]
fn a_stalled_tls_handshake_is_named_by_doctor_and_by_the_preflight() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let url = format!("https://127.0.0.1:{port}/");

    let run = run_tsumo(&["doctor", &url], LIMIT);
    println!("{}", run.stdout);
    assert_eq!(run.status.code(), Some(1), "stderr: {}", run.stderr);
    assert_eq!(
        line(&run, "target"),
        format!(
            "FAIL  target             127.0.0.1:{port} accepted the TCP connection, but no \
             answer to the TLS handshake came within 2s — fix: check that this port serves TLS \
             and that the server is not stalled"
        )
    );

    let run = run_tsumo(&["-t1", "-c1", "-d1s", "-R10", "-T", "1s", &url], LIMIT);
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(run.stdout.is_empty(), "stdout: {}", run.stdout);
    assert_eq!(
        run.stderr.trim_end(),
        format!(
            "tsumo: TLS handshake with 127.0.0.1 failed: 127.0.0.1:{port} accepted the TCP \
             connection, but no answer to the TLS handshake came within 1s; check that this \
             port serves TLS and that the server is not stalled"
        )
    );
    drop(listener);
}
