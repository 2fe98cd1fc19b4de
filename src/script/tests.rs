//! The wrk example scripts and the error fixtures in `tests/scripts/`, run through the API the
//! engine uses.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::net::http1::request;
use crate::plan::{RunOptions, Scheme, Target};
use crate::stats::http::Counters;
use crate::stats::{hdr, new_histogram};

const URL: &str = "http://127.0.0.1:8080/";

fn plan(script: &str) -> Plan {
    Plan {
        script: Some(PathBuf::from(format!("tests/scripts/{script}"))),
        options: RunOptions {
            quiet: true,
            ..RunOptions::for_tests()
        },
        ..Plan::for_tests(Target {
            url: URL.into(),
            scheme: Scheme::Http,
            host: "127.0.0.1".into(),
            explicit_port: Some(8080),
            path: "/".into(),
        })
    }
}

fn server() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8080))
}

fn load(script: &str) -> (Script, Vec<ThreadScript>) {
    match Script::load(&plan(script), server()) {
        Ok(loaded) => loaded,
        Err(e) => panic!("{script} failed to load: {e}"),
    }
}

fn load_error(plan: &Plan) -> String {
    match Script::load(plan, server()) {
        Ok(_) => panic!("{:?} loaded but should fail", plan.script),
        Err(Error::Script(message)) => message,
        Err(other) => panic!("not a script error: {other:?}"),
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run_result(latency: &[u64]) -> RunResult {
    let mut hist = new_histogram();
    for &v in latency {
        hist.record(v).unwrap();
    }
    let mut req_per_sec = new_histogram();
    req_per_sec.record_n(50, 4).unwrap();
    RunResult {
        plan: plan("report.lua"),
        elapsed: Duration::from_secs(2),
        interrupted: false,
        counters: Counters {
            requests: 100,
            bytes_read: 12_345,
            ..Counters::default()
        },
        latency: hist.clone(),
        uncorrected: hist,
        send_lateness: new_histogram(),
        req_per_sec,
        split: Default::default(),
        timestamps: Default::default(),
        timestamps_asked: false,
        notes: Vec::new(),
        server: None,
        ended_by: crate::stats::end::EndReason::Duration,
        usage: Default::default(),
        shortfall: None,
        behind: None,
        start: crate::stats::start::StartRecord::new(None, 0),
        timeline: None,
        stages: None,
    }
}

/// Runs `code` in `lua` and returns the error message, if any.
fn lua_error(lua: &Lua, code: &str) -> String {
    match lua.load(code).set_name("=test").exec() {
        Ok(()) => panic!("`{code}` should fail"),
        Err(e) => lua_message(&e),
    }
}

#[test]
fn post_builds_the_static_request_wrk_format_would() {
    let (_, threads) = load("post.lua");
    assert_eq!(threads.len(), 2);
    let expected = request::format(
        "POST",
        "/",
        "127.0.0.1:8080",
        &[(
            "Content-Type".into(),
            "application/x-www-form-urlencoded".into(),
        )],
        Some(b"foo=bar&baz=quux"),
    );
    for thread in &threads {
        assert_eq!(text(&thread.static_request()), text(&expected));
        assert_eq!(thread.hooks(), Hooks::default());
        assert_eq!(thread.pipeline(), 1);
    }
    assert!(text(&expected).contains("Content-Length: 16\r\n"));
}

#[test]
fn post2k_sends_a_binary_body_with_its_length() {
    let (_, threads) = load("post2k.lua");
    let bytes = threads[0].static_request();
    let batch = Batch::parse(bytes.clone()).unwrap();
    assert_eq!(batch.len(), 1);
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = text(&bytes[..head_end]);
    assert!(head.starts_with("POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"));
    assert!(head.contains("Content-Type: application/octet-stream\r\n"));
    assert!(head.ends_with("Content-Length: 2048\r\n\r\n"));
    assert_eq!(bytes.len() - head_end, 2048);
    assert_eq!(
        &bytes[head_end..head_end + 8],
        b"\0\x01\x02\x03\x04\x05\x06\x07"
    );
}

#[test]
fn without_hooks_the_request_matches_the_no_script_request() {
    // -H order is kept, so a script that changes nothing sends what a run without one sends.
    let mut plan = plan("report.lua");
    plan.headers = vec![
        ("X-B".into(), "1".into()),
        ("X-A".into(), "2".into()),
        ("Accept".into(), "*/*".into()),
    ];
    let (_, threads) = Script::load(&plan, server()).unwrap();
    let expected = request::from_plan(&plan).unwrap().bytes;
    assert_eq!(text(&threads[1].static_request()), text(&expected));
}

#[test]
fn host_header_follows_the_url() {
    let mut plan = plan("post.lua");
    plan.target.explicit_port = None;
    plan.target.host = "::1".into();
    let (_, threads) = Script::load(&plan, server()).unwrap();
    assert!(text(&threads[0].static_request()).contains("\r\nHost: [::1]\r\n"));
    let port: Value = threads[0].lua.load("return wrk.port").eval().unwrap();
    assert!(port.is_nil());

    let mut plan = self::plan("post.lua");
    plan.headers = vec![("host".into(), "example.com".into())];
    let (_, threads) = Script::load(&plan, server()).unwrap();
    let request = text(&threads[0].static_request());
    assert_eq!(request.matches("ost: ").count(), 1, "{request}");
    assert!(request.contains("\r\nhost: example.com\r\n"));
}

#[test]
fn pipeline_counts_three_requests() {
    let (_, threads) = load("pipeline.lua");
    for thread in &threads {
        assert!(thread.hooks().request);
        assert!(!thread.hooks().response);
        assert_eq!(thread.pipeline(), 3);
        let batch = Batch::parse(thread.request().unwrap()).unwrap();
        assert_eq!(batch.len(), 3);
    }
    let bytes = text(&threads[0].request().unwrap());
    let lines: Vec<&str> = bytes.lines().filter(|l| l.starts_with("GET")).collect();
    assert_eq!(
        lines,
        [
            "GET /?foo HTTP/1.1",
            "GET /?bar HTTP/1.1",
            "GET /?baz HTTP/1.1"
        ]
    );
}

#[test]
fn counter_paths_increase_per_thread() {
    let (_, threads) = load("counter.lua");
    assert!(threads[0].hooks().request);
    // Thread 0's request() already ran once for the start-up check, as in wrk.
    let first = text(&threads[0].request().unwrap());
    assert!(first.starts_with("GET /1 HTTP/1.1\r\n"), "{first}");
    assert!(first.contains("\r\nX-Counter: 1\r\n"), "{first}");
    let second = text(&threads[0].request().unwrap());
    assert!(second.starts_with("GET /2 HTTP/1.1\r\n"), "{second}");
    // Each thread has its own counter.
    let other = text(&threads[1].request().unwrap());
    assert!(other.starts_with("GET /0 HTTP/1.1\r\n"), "{other}");
}

#[test]
fn auth_switches_path_after_a_token() {
    let (_, threads) = load("auth.lua");
    let thread = &threads[0];
    assert!(thread.hooks().request && thread.hooks().response);
    assert!(text(&thread.request().unwrap()).starts_with("GET /authenticate HTTP/1.1\r\n"));
    // No token yet on a 403: nothing changes.
    thread.response(403, &[], b"denied").unwrap();
    assert!(text(&thread.request().unwrap()).starts_with("GET /authenticate "));
    let headers = vec![
        ("Content-Type".to_string(), b"text/plain".to_vec()),
        ("X-Token".to_string(), b"first".to_vec()),
        ("X-Token".to_string(), b"secret".to_vec()),
    ];
    thread.response(200, &headers, b"").unwrap();
    let after = text(&thread.request().unwrap());
    assert!(after.starts_with("GET /resource HTTP/1.1\r\n"), "{after}");
    assert!(after.contains("\r\nX-Token: secret\r\n"), "{after}");
    // The other thread has its own state.
    assert!(text(&threads[1].request().unwrap()).starts_with("GET /authenticate "));
}

#[test]
fn stop_after_one_hundred_responses() {
    let (_, threads) = load("stop.lua");
    assert!(threads[0].hooks().response);
    for _ in 0..99 {
        threads[0].response(200, &[], b"ok").unwrap();
    }
    assert!(!threads[0].stop_requested());
    threads[0].response(200, &[], b"ok").unwrap();
    assert!(threads[0].stop_requested());
    assert!(!threads[1].stop_requested());
}

#[test]
fn delay_returns_milliseconds() {
    let (_, threads) = load("delay.lua");
    assert!(threads[0].hooks().delay);
    assert!(!threads[0].hooks().request);
    for _ in 0..20 {
        let delay = threads[1].delay().unwrap();
        assert!(delay >= Duration::from_millis(10) && delay <= Duration::from_millis(50));
    }
}

#[test]
fn setup_runs_per_thread_and_done_reads_the_threads() {
    let (script, threads) = load("setup.lua");
    for (i, thread) in threads.iter().enumerate() {
        let id: i64 = thread.lua.globals().get("id").unwrap();
        assert_eq!(id, i as i64 + 1);
        for _ in 0..3 {
            Batch::parse(thread.request().unwrap()).unwrap();
            thread.response(200, &[], b"").unwrap();
        }
    }
    // Thread 0 made one more request (the start-up check), as in wrk.
    let made: Vec<i64> = threads
        .iter()
        .map(|t| t.lua.globals().get("requests").unwrap())
        .collect();
    assert_eq!(made, [4, 3]);
    script.done(&run_result(&[100, 200, 300])).unwrap();
}

#[test]
fn thread_objects_copy_values_between_states() {
    let (script, threads) = load("setup.lua");
    let handle = ThreadHandle::strong(&threads[1].lua, threads[1].shared.clone());
    script.main.globals().set("th", handle).unwrap();
    script
        .main
        .load(
            r#"
            th:set("tbl", { [200] = 51, name = "x", nested = { ok = true, list = { 1, 2, 3 } } })
            local back = th:get("tbl")
            assert(back[200] == 51 and back[51] == nil, "table inverted")
            assert(back.name == "x" and back.nested.ok == true and #back.nested.list == 3)
            assert(th:get("id") == 2)
            assert(th:get("nothing") == nil)
            th.addr = wrk.lookup("127.0.0.1", "9")[1]
            assert(tostring(th.addr) == "127.0.0.1:9", tostring(th.addr))
            th:stop()
            "#,
        )
        .exec()
        .unwrap();
    // The value really lives in the thread's state, keys and values the right way round.
    let copied: Table = threads[1].lua.globals().get("tbl").unwrap();
    assert_eq!(copied.get::<i64>(200).unwrap(), 51);
    assert_eq!(threads[1].addr(), SocketAddr::from(([127, 0, 0, 1], 9)));
    assert_eq!(threads[0].addr(), server());
    assert!(threads[1].stop_requested());
    assert!(!threads[0].stop_requested());

    // A thread reads its own globals through wrk.thread.
    let own: i64 = threads[0]
        .lua
        .load("return wrk.thread:get('id')")
        .eval()
        .unwrap();
    assert_eq!(own, 1);

    let main = &script.main;
    assert_eq!(
        lua_error(main, "th.foo = 1"),
        "test:1: cannot set 'number' on thread"
    );
    assert_eq!(
        lua_error(main, "th.addr = 'x'"),
        "test:1: cannot set 'string' on thread"
    );
    assert_eq!(
        lua_error(main, "\nth:set('f', print)"),
        "test:2: cannot transfer 'function' to thread"
    );
    assert_eq!(
        lua_error(main, "th:set('t', { th })"),
        "test:1: cannot transfer 'userdata' to thread"
    );
    assert!(
        lua_error(main, "local t = {} t.t = t th:set('t', t)").contains("nested more than"),
        "a table holding itself is refused"
    );
}

#[test]
fn addr_picks_a_reachable_address() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut plan = plan("addr.lua");
    plan.target.explicit_port = Some(addr.port());
    // The engine's address is deliberately different: setup must replace it.
    let (_, threads) = Script::load(&plan, SocketAddr::from(([127, 0, 0, 2], 1))).unwrap();
    for thread in &threads {
        assert_eq!(thread.addr(), addr);
    }
}

#[test]
fn wrk_functions_behave() {
    let (_, threads) = load("report.lua");
    let lua = &threads[0].lua;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let reachable: bool = lua
        .load(format!(
            "return wrk.connect(wrk.lookup('127.0.0.1', {port})[1])"
        ))
        .eval()
        .unwrap();
    assert!(reachable);
    drop(listener);
    let reachable: bool = lua
        .load(format!(
            "return wrk.connect(wrk.lookup('127.0.0.1', '{port}')[1])"
        ))
        .eval()
        .unwrap();
    assert!(!reachable);
    assert_eq!(
        lua_error(lua, "wrk.lookup('127.0.0.1', 'gopher-ish')"),
        "test:1: unable to resolve 127.0.0.1:gopher-ish (unknown service)"
    );
    let now: f64 = lua.load("return wrk.time_us()").eval().unwrap();
    assert!(now > 1.6e15);
    // wrk.format with its own headers table gets Host from wrk.headers; no body, no length.
    let formatted: String = lua
        .load("return wrk.format('GET', '/x', { Accept = '*/*' })")
        .eval()
        .unwrap();
    assert_eq!(
        formatted,
        "GET /x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\n\r\n"
    );
    let formatted: String = lua
        .load("return wrk.format('PUT', '/y', { ['content-length'] = 99 }, 'abc')")
        .eval()
        .unwrap();
    assert_eq!(
        formatted,
        "PUT /y HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 3\r\n\r\nabc"
    );
    let bit: i64 = lua
        .load("return bit.band(12, 10) + #{unpack({1, 2})}")
        .eval()
        .unwrap();
    assert_eq!(bit, 10);
}

#[test]
fn args_start_with_the_url() {
    let mut plan = plan("args.lua");
    plan.script_args = vec!["one".into(), "two".into()];
    let (_, threads) = Script::load(&plan, server()).unwrap();
    for thread in &threads {
        let args: Table = thread.lua.globals().get("received").unwrap();
        assert_eq!(args.get::<String>(0).unwrap(), URL);
        assert_eq!(args.get::<String>(1).unwrap(), "one");
        assert_eq!(args.get::<String>(2).unwrap(), "two");
        assert_eq!(args.raw_len(), 2);
    }
}

#[test]
fn report_done_runs() {
    let (script, _) = load("report.lua");
    script.done(&run_result(&[994, 1539, 4131, 6455])).unwrap();
}

#[test]
fn done_gets_summary_and_stats() {
    let (script, _) = load("post.lua");
    script
        .main
        .load(
            r#"
            function done(summary, latency, requests)
                seen = {
                    duration = summary.duration, requests = summary.requests,
                    bytes = summary.bytes, timeout = summary.errors.timeout,
                    p50 = latency:percentile(50), count = #latency, rps = requests.mean,
                }
            end
            "#,
        )
        .exec()
        .unwrap();
    script.done(&run_result(&[10, 20, 30, 40])).unwrap();
    let seen: Table = script.main.globals().get("seen").unwrap();
    assert_eq!(seen.get::<f64>("duration").unwrap(), 2_000_000.0);
    assert_eq!(seen.get::<f64>("requests").unwrap(), 100.0);
    assert_eq!(seen.get::<f64>("bytes").unwrap(), 12_345.0);
    assert_eq!(seen.get::<f64>("timeout").unwrap(), 0.0);
    assert_eq!(seen.get::<f64>("p50").unwrap(), 20.0);
    assert_eq!(seen.get::<f64>("count").unwrap(), 4.0);
    assert_eq!(seen.get::<f64>("rps").unwrap(), 50.0);
}

#[test]
fn stats_follow_wrk2_arithmetic() {
    let lua = Lua::new();
    let mut hist = new_histogram();
    for v in 1..=100 {
        hist.record(v).unwrap();
    }
    // Above 4095 buckets are 4 wide: 5000 is counted as [5000, 5003].
    hist.record(5000).unwrap();
    let expected_mean = hdr::mean(&hist);
    let expected_stdev = hdr::stdev(&hist);
    lua.globals().set("s", Stats::new(hist)).unwrap();
    let check = |code: &str| -> f64 { lua.load(code).eval().unwrap() };
    assert_eq!(check("return #s"), 101.0);
    assert_eq!(check("return s.min"), 1.0);
    assert_eq!(check("return s.max"), 5000.0);
    // wrk2 says 5003 (the bucket's highest value), above its own max; tsumo never does.
    assert_eq!(check("return s:percentile(100)"), 5000.0);
    assert_eq!(check("return s:percentile(50)"), 51.0);
    assert_eq!(check("return s.mean"), expected_mean);
    assert_eq!(check("return s.stdev"), expected_stdev);
    // s[i] = value at percentile 100·i/count.
    assert_eq!(check("return s[1]"), 1.0);
    assert_eq!(check("return s[50]"), 50.0);
    assert_eq!(check("return s[#s]"), 5000.0);
    assert_eq!(check("return s['3']"), 3.0);
    // s(i): i-th distinct value and its count.
    assert_eq!(check("local v, n = s(3) return v * 1000 + n"), 3001.0);
    assert_eq!(
        check("local v, n = s(101) return v * 1000 + n"),
        5_000_001.0
    );
    assert_eq!(check("local v, n = s(102) return v + n"), 0.0);
    assert!(check("return s.nothing == nil and 1 or 0") == 1.0);
}

#[test]
fn errors_name_file_and_line() {
    for (script, position) in [
        ("syntax.lua", "syntax.lua:3:"),
        ("err_toplevel.lua", "err_toplevel.lua:3:"),
        ("err_setup.lua", "err_setup.lua:4:"),
        ("err_init.lua", "err_init.lua:3:"),
    ] {
        let message = load_error(&plan(script));
        assert!(
            message.starts_with(&format!("tests/scripts/{position} ")),
            "{script}: {message}"
        );
        assert!(!message.contains('\n'), "{script}: {message}");
    }
    assert_eq!(
        load_error(&plan("err_init.lua")),
        "tests/scripts/err_init.lua:3: init failed"
    );
}

#[test]
fn errors_in_hooks_come_back_from_the_calls() {
    let (_, threads) = load("err_request.lua");
    let error = threads[0].request().unwrap_err();
    assert_eq!(
        error.to_string(),
        "tests/scripts/err_request.lua:7: request failed"
    );

    let (_, threads) = load("err_response.lua");
    let error = threads[1].response(503, &[], b"").unwrap_err();
    assert_eq!(
        error.to_string(),
        "tests/scripts/err_response.lua:3: response failed with status 503"
    );

    let (script, _) = load("err_done.lua");
    match script.done(&run_result(&[1])) {
        Err(Error::ScriptDone(message)) => {
            assert!(
                message.starts_with("tests/scripts/err_done.lua:3: "),
                "{message}"
            );
            assert!(!message.contains('\n'), "{message}");
        }
        other => panic!("done should fail: {other:?}"),
    }
}

#[test]
fn bad_request_and_missing_file_are_clear() {
    let message = load_error(&plan("missing.lua"));
    assert_eq!(
        message,
        "tests/scripts/missing.lua: cannot open tests/scripts/missing.lua: No such file or directory"
    );

    let dir = std::env::temp_dir().join(format!("tsumo-script-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad_request.lua");
    std::fs::write(&bad, "function request() return 'nonsense' end\n").unwrap();
    let mut plan = plan("unused");
    plan.script = Some(bad.clone());
    let message = load_error(&plan);
    assert!(
        message.starts_with(&format!(
            "{}: request() returned an invalid request",
            bad.display()
        )),
        "{message}"
    );
    std::fs::write(&bad, "function request() return 42 end\n").unwrap();
    let message = load_error(&plan);
    assert!(
        message.ends_with("request() must return a string, not a number"),
        "{message}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn thread_scripts_are_send() {
    fn assert_send<T: Send>() {}
    assert_send::<ThreadScript>();
    assert_send::<Script>();
}
