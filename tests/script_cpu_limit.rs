//! `--script-timeout` counts the CPU time a hook's thread used, not the wall time (issue 43): on
//! a busy machine a hook that used 2 ms of CPU could wait for a core past the limit and be cut
//! as a script error, ending the run. A hook that waits (sleeps) uses no CPU: it runs on, up to
//! a backstop of 10 times the limit in wall time; a hook that loops is cut as before
//! (tests/lua_scripts.rs).

mod common;

use std::time::Duration;

use common::hog::{pinned_tsumo, Hog};
use common::nginx::Nginx;
use common::TempDir;

fn script(dir: &TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write the script");
    path.to_str().expect("a UTF-8 path").to_string()
}

/// Every 50th `request()` sleeps 50 ms, past `--script-timeout 20ms` in wall time but using
/// no CPU: not cut (before: `request() ran past the 20.00ms script time limit`, exit 1). One
/// that sleeps 300 ms, past 10 times the limit, is cut when it returns (at its next line).
#[test]
fn a_hook_that_sleeps_uses_no_cpu_and_is_cut_only_past_the_backstop() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = TempDir::new("cpu-limit");
    let sleeps = script(
        &dir,
        "sleeps.lua",
        "local n = 0\nrequest = function()\n  n = n + 1\n  \
         if n % 50 == 0 then os.execute('sleep 0.05') end\n  return wrk.format()\nend\n",
    );
    let args = |lua: &str| {
        vec![
            "-t1".to_string(),
            "-c2".to_string(),
            "-R200".to_string(),
            "-d2s".to_string(),
            "--script-timeout".to_string(),
            "20ms".to_string(),
            "-s".to_string(),
            lua.to_string(),
            url.clone(),
        ]
    };
    let run = |lua: &str| {
        let args = args(lua);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::run_tsumo(&args, Duration::from_secs(30))
    };
    let slept = run(&sleeps);
    slept.assert_success();
    assert!(
        !slept.stderr.contains("script time limit"),
        "{}",
        slept.stderr
    );
    let blocks = script(
        &dir,
        "blocks.lua",
        "local n = 0\nrequest = function()\n  n = n + 1\n  \
         if n == 100 then os.execute('sleep 0.3') end\n  return wrk.format()\nend\n",
    );
    let blocked = run(&blocks);
    assert_eq!(blocked.status.code(), Some(1), "{}", blocked.stderr);
    assert!(
        blocked.stderr.contains(
            "blocks.lua:5: request() ran past the 20.00ms script time limit and was interrupted \
             (--script-timeout)"
        ),
        "{}",
        blocked.stderr
    );
}

/// A `request()` that uses about 3 ms of CPU every 20th call, tsumo pinned to CPU 0 beside a
/// greedy hog (nice -10) there: each such call waits for the core far longer than it runs, past
/// `--script-timeout 20ms` of wall time, yet uses well under 20 ms of CPU. Not cut (before:
/// cut as a script error, exit 1).
#[test]
fn a_hook_using_little_cpu_beside_a_hog_is_not_cut() {
    let nginx = Nginx::start();
    let url = nginx.http_url("/index.html");
    let dir = TempDir::new("cpu-limit");
    let lua = script(
        &dir,
        "little_cpu.lua",
        "local n = 0\nrequest = function()\n  n = n + 1\n  if n % 20 == 0 then\n    \
         local t = os.clock() + 0.003\n    while os.clock() < t do end\n  end\n  \
         return wrk.format()\nend\n",
    );
    let _hog = Hog::greedy();
    let run = pinned_tsumo(
        &[
            "-t1",
            "-c2",
            "-R100",
            "-d3s",
            "--script-timeout",
            "20ms",
            "-s",
            &lua,
            &url,
        ],
        &[],
        Duration::from_secs(60),
    );
    assert!(
        !run.stderr.contains("script time limit"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    run.assert_success();
}
