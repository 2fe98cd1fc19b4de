//! `--dashboard`: the live page and `/metrics`, against real parts. A real Prometheus scrapes
//! tsumo every second during a run against nginx, and what it stored is the JSON's: the request
//! counter's last value is the run's count, and `histogram_quantile(0.99, …)` lies in the
//! bucket of the JSON's p99. Headless Chromium opens the page twice while the run goes: the
//! request figure grew, and is `/metrics`' of that moment within one interval; nothing on the
//! console, nothing fetched from outside 127.0.0.1; after the end the page is the report, its
//! figures the JSON's. Bad addresses are one line and exit 2, before any traffic.

mod common;

use std::net::TcpListener;
use std::time::{Duration, Instant};

use common::browser;
use common::nginx::Nginx;
use common::prometheus::{bucket_of, get, get_with_head, Prometheus, BUCKETS_S};
use common::{free_port, json_f64, json_u64, read_json, run_tsumo, Signalled, TempDir};

const LIMIT: Duration = Duration::from_secs(120);

/// A capacity search of two short steps (200 and 400 requests/sec, 1 s each after 500 ms of
/// warm-up), for the dashboard's view of a search; its target and outputs follow.
const SHORT_SEARCH: [&str; 16] = [
    "capacity",
    "--slo",
    "p99<500ms",
    "--from",
    "200",
    "--to",
    "400",
    "--step",
    "1s",
    "--warmup",
    "500ms",
    "--pause",
    "0s",
    "-t1",
    "-c4",
    "--quiet",
];

/// A counter's value in `/metrics`' text (the first series of that name).
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Waits for the line that says where the dashboard is (tsumo binds port 0 in some tests).
fn wait_for_listener(port: u16) {
    common::wait_for("the dashboard to listen", Duration::from_secs(30), || {
        get(port, "/metrics").is_some()
    });
}

#[test]
fn prometheus_scrapes_the_runs_count_and_its_p99_bucket() {
    let nginx = Nginx::start();
    let port = free_port();
    let prometheus = Prometheus::start(&[format!("127.0.0.1:{port}")]);
    let dir = TempDir::new("tsumo-dashboard");
    let json = dir.path().join("run.json");
    let (json_arg, at) = (json.display().to_string(), format!("127.0.0.1:{port}"));
    let url = nginx.http_url("/");
    let run = run_tsumo(
        &[
            "-t2",
            "-c4",
            "-d6s",
            "-R400",
            "--quiet",
            "--dashboard",
            &at,
            "--dashboard-linger",
            "3s",
            "--label",
            "nginx",
            "--json",
            &json_arg,
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    assert!(
        run.stderr.contains(&format!(
            "dashboard: http://127.0.0.1:{port}/ (Prometheus: /metrics)"
        )),
        "{}",
        run.stderr
    );
    let doc = read_json(&json);
    let requests = json_u64(&doc, "counters.requests");
    assert!(requests > 1000, "{requests} requests");
    let selector = "{job=\"tsumo\",label=\"nginx\"}";
    let scraped = prometheus
        .number(&format!(
            "max_over_time(tsumo_requests_total{selector}[10m])"
        ))
        .unwrap_or_else(|| panic!("no tsumo_requests_total:\n{}", prometheus.targets()));
    assert_eq!(scraped, requests as f64, "{}", prometheus.targets());
    let sent = prometheus
        .number(&format!(
            "max_over_time(tsumo_requests_sent_total{selector}[10m])"
        ))
        .expect("tsumo_requests_sent_total");
    assert!(sent >= scraped, "sent {sent}, completed {scraped}");
    let target = prometheus
        .number(&format!("max_over_time(tsumo_target_rate{selector}[10m])"))
        .expect("tsumo_target_rate");
    assert_eq!(target, 400.0);
    // Each bucket's counter at its last value: the whole run's distribution.
    let p99 = prometheus
        .number(&format!(
            "histogram_quantile(0.99, sum by (le) \
             (max_over_time(tsumo_latency_seconds_bucket{selector}[10m])))"
        ))
        .expect("tsumo_latency_seconds_bucket");
    let json_p99_s = json_f64(&doc, "latency.p99") / 1e6;
    let (lower, upper) = bucket_of(json_p99_s);
    assert!(
        lower <= p99 && p99 <= upper,
        "Prometheus' p99 {p99}s outside the bucket ({lower}, {upper}] of the JSON's {json_p99_s}s"
    );
    let count = prometheus
        .number(&format!(
            "max_over_time(tsumo_latency_seconds_count{selector}[10m])"
        ))
        .expect("tsumo_latency_seconds_count");
    assert_eq!(count, json_u64(&doc, "latency.count") as f64);
}

/// The request figure of the live page (its `data-value`).
fn page_requests(page: &browser::Page) -> f64 {
    browser::figure_value(&page.dom, "data-figure=\"requests\"")
        .unwrap_or_else(|| panic!("no requests figure with a value:\n{}", page.dom))
}

/// Chromium's flags that make any fetch off 127.0.0.1 fail, loudly (a console error): names
/// resolve to nothing, and what is not loopback goes to a proxy that is not there.
const LOCAL_ONLY: [&str; 3] = [
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--proxy-server=http://127.0.0.1:9",
    "--virtual-time-budget=2500",
];

#[test]
fn a_browser_follows_the_run_and_ends_on_its_report() {
    let nginx = Nginx::start();
    let port = free_port();
    let dir = TempDir::new("tsumo-dashboard-browser");
    let json = dir.path().join("run.json");
    let (json_arg, at) = (json.display().to_string(), format!("127.0.0.1:{port}"));
    let url = nginx.http_url("/");
    const RATE: f64 = 500.0;
    let tsumo = Signalled::spawn(&[
        "-t2",
        "-c4",
        "-d15s",
        "-R500",
        "--quiet",
        "--dashboard",
        &at,
        "--dashboard-linger",
        "60s",
        "--json",
        &json_arg,
        &url,
    ]);
    wait_for_listener(port);
    let started = Instant::now();
    let page_url = format!("http://127.0.0.1:{port}/");
    std::thread::sleep(Duration::from_secs(3));
    let mut seen = Vec::new();
    for name in ["dashboard-live-1", "dashboard-live-2"] {
        let page = browser::open_url(&page_url, name, LIMIT, &LOCAL_ONLY);
        let (_, metrics) = get(port, "/metrics").expect("/metrics answers");
        page.assert_no_console_messages();
        assert!(
            started.elapsed() < Duration::from_secs(14),
            "the browser took too long to see the run live"
        );
        assert!(page.dom.contains("HTTP run (live)"), "{}", page.dom);
        assert!(
            !page.dom.contains("data-polls=\"0\""),
            "the page never fetched /live again:\n{}",
            page.dom
        );
        for outside in ["src=\"http", "href=\"http", "url(http"] {
            assert!(!page.dom.contains(outside), "{outside} in the page");
        }
        let shown = page_requests(&page);
        let scraped = metric(&metrics, "tsumo_requests_total").expect("tsumo_requests_total");
        // /metrics was read after the page: at most one interval (1 s at -R500) further on,
        // and a fetch's worth more for the page's last poll.
        assert!(
            shown <= scraped && scraped - shown <= 2.0 * RATE,
            "page {shown}, /metrics {scraped}"
        );
        assert!(
            page.dom.contains("data-chart=\"rate-over-time\""),
            "{}",
            page.dom
        );
        seen.push(shown);
        std::thread::sleep(Duration::from_secs(3));
    }
    assert!(
        seen[1] > seen[0],
        "the requests figure did not grow: {seen:?}"
    );

    // After the end, during the linger: the report's page, the JSON's figures.
    common::wait_for("the run's JSON", Duration::from_secs(60), || json.exists());
    common::wait_for("the final page", Duration::from_secs(30), || {
        get(port, "/live").is_some_and(|(_, body)| body.is_empty())
    });
    let page = browser::open_url(&page_url, "dashboard-final", LIMIT, &LOCAL_ONLY);
    page.assert_no_console_messages();
    let doc = read_json(&json);
    let figure = |id: &str| -> f64 {
        browser::figure_value(&page.dom, &format!("data-figure=\"{id}\""))
            .unwrap_or_else(|| panic!("no figure {id} with a value:\n{}", page.dom))
    };
    assert_eq!(figure("achieved"), json_f64(&doc, "requests_per_sec"));
    for p in ["p50", "p99", "max"] {
        assert_eq!(figure(p), json_f64(&doc, &format!("latency.{p}")), "{p}");
    }
    let (_, metrics) = get(port, "/metrics").expect("/metrics after the end");
    assert_eq!(
        metric(&metrics, "tsumo_requests_total"),
        Some(json_u64(&doc, "counters.requests") as f64)
    );
    let mut tsumo = tsumo;
    tsumo.kill(libc::SIGINT, None);
    let run = tsumo.finish(Duration::from_secs(30));
    assert!(run.status.success(), "{}", run.stderr);
}

/// `--prometheus-rw`: pushed to a real Prometheus' remote-write receiver (nothing scrapes), the
/// request counter's last value is the JSON's count.
#[test]
fn prometheus_receives_a_runs_series_by_remote_write() {
    let nginx = Nginx::start();
    let prometheus = Prometheus::start_with(&[], &["--web.enable-remote-write-receiver"]);
    let dir = TempDir::new("tsumo-remote-write");
    let json = dir.path().join("run.json");
    let json_arg = json.display().to_string();
    let receiver = format!("http://127.0.0.1:{}/api/v1/write", prometheus.port);
    let url = nginx.http_url("/");
    let run = run_tsumo(
        &[
            "-t2",
            "-c4",
            "-d4s",
            "-R300",
            "--quiet",
            "--label",
            "pushed",
            "--prometheus-rw",
            &receiver,
            "--json",
            &json_arg,
            &url,
        ],
        LIMIT,
    );
    run.assert_success();
    assert!(!run.stderr.contains("pushes failed"), "{}", run.stderr);
    let doc = read_json(&json);
    let pushed = prometheus
        .number("max_over_time(tsumo_requests_total{job=\"tsumo\",label=\"pushed\"}[10m])")
        .unwrap_or_else(|| panic!("nothing pushed:\n{}", prometheus.log()));
    assert_eq!(pushed, json_u64(&doc, "counters.requests") as f64);
    let buckets =
        prometheus.query("max_over_time(tsumo_latency_seconds_bucket{label=\"pushed\"}[10m])");
    assert_eq!(buckets.len(), BUCKETS_S.len() + 1, "{buckets:?}");
}

/// The render id a `/live` answer's head names.
fn render_id(head: &str) -> Option<u64> {
    head.lines()
        .find_map(|line| line.strip_prefix("x-tsumo-render: "))
        .and_then(|id| id.trim().parse().ok())
}

/// A client polling `/live` in a tight loop at 10 ms intervals, as the page does (`?since=`
/// the render it has): the page is rendered at most twice a second whatever the pace of the
/// polls or of the intervals, a client is never sent a render it has, and one that has the
/// latest is held until there is a newer one (or gets `204` after a while): a few answers a
/// second, not thousands.
#[test]
fn a_client_polling_hard_gets_only_new_renders_a_few_times_a_second() {
    let nginx = Nginx::start();
    let port = free_port();
    let at = format!("127.0.0.1:{port}");
    let url = nginx.http_url("/");
    let mut tsumo = Signalled::spawn(&[
        "-t1",
        "-c2",
        "-d60s",
        "-R200",
        "--interval",
        "10ms",
        "--quiet",
        "--dashboard",
        &at,
        &url,
    ]);
    wait_for_listener(port);
    common::wait_for(
        "a whole interval on the page",
        Duration::from_secs(30),
        || {
            get(port, "/live")
                .is_some_and(|(_, body)| body.contains("data-chart=\"rate-over-time\""))
        },
    );
    let began = Instant::now();
    let (mut answers, mut renders) = (0, 0);
    let mut seen: Option<u64> = None;
    while began.elapsed() < Duration::from_secs(4) {
        let path = match seen {
            Some(id) => format!("/live?since={id}"),
            None => "/live".to_string(),
        };
        let (status, head, body) = get_with_head(port, &path).expect("/live answers");
        answers += 1;
        if status == 204 {
            assert!(body.is_empty(), "{body}");
            continue;
        }
        assert_eq!(status, 200, "{head}");
        let id = render_id(&head).unwrap_or_else(|| panic!("no render id:\n{head}"));
        assert_ne!(Some(id), seen, "a render the client had, sent again");
        assert!(body.contains("data-chart=\"rate-over-time\""), "{body}");
        seen = Some(id);
        renders += 1;
    }
    let seconds = began.elapsed().as_secs_f64();
    assert!(renders >= 2, "{renders} renders in {seconds:.1}s");
    assert!(
        (answers as f64) <= seconds * 2.0 + 2.0,
        "{answers} answers ({renders} renders) in {seconds:.1}s"
    );
    tsumo.kill(libc::SIGINT, None);
    let run = tsumo.finish(Duration::from_secs(30));
    assert!(run.status.success(), "{}", run.stderr);
}

/// A remote-write receiver that accepts and never answers (in process): it holds every
/// connection it accepted, reading nothing.
fn silent_receiver() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a silent receiver");
    let port = listener.local_addr().expect("its port").port();
    let accepted = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&accepted);
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    (port, accepted)
}

/// A receiver that never answers holds the exit for the last push's bound (2 s), not for two
/// pushes' timeouts (8–9 s before); two signals cut it to 1 s, as the docs promise for every
/// wait after a second signal. Either way the pushes that failed are said.
#[test]
fn a_receiver_that_never_answers_holds_the_exit_briefly_and_two_signals_cut_it() {
    let nginx = Nginx::start();
    let (port, accepted) = silent_receiver();
    let receiver = format!("http://127.0.0.1:{port}/api/v1/write");
    let url = nginx.http_url("/");
    let run = run_tsumo(
        &[
            "-t1",
            "-c2",
            "-d2s",
            "-R100",
            "--quiet",
            "--prometheus-rw",
            &receiver,
            &url,
        ],
        LIMIT,
    );
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(
        run.stderr
            .contains("pushes failed (the last: no response in time)"),
        "{}",
        run.stderr
    );
    // 2 s of run, 2 s for the last push, and room for a busy machine; 10–11 s before.
    assert!(
        run.wall < Duration::from_secs(8),
        "{:?}: {}",
        run.wall,
        run.stderr
    );

    let answered = nginx.access_log().len();
    let mut tsumo = Signalled::spawn(&[
        "-t1",
        "-c2",
        "-d60s",
        "-R100",
        "--quiet",
        "--prometheus-rw",
        &receiver,
        &url,
    ]);
    // The run sends (its signals are caught from then on), and a push is under way.
    let before = accepted.load(std::sync::atomic::Ordering::SeqCst);
    // (More than the pre-flight's one request: the run's own.)
    common::wait_for(
        "the run's requests answered",
        Duration::from_secs(30),
        || nginx.access_log().len() > answered + 5,
    );
    common::wait_for("a push under way", Duration::from_secs(30), || {
        accepted.load(std::sync::atomic::Ordering::SeqCst) > before
    });
    tsumo.kill(libc::SIGINT, Some(Duration::from_millis(100)));
    // 1 s after the second signal, and room for a busy machine; 8 s before.
    let run = tsumo.finish(Duration::from_secs(4));
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    assert!(
        run.stderr
            .contains("pushes failed (the last: cut short by a signal)"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_bad_dashboard_is_one_line_and_exit_2_before_any_traffic() {
    // Nothing listens at the target: a run that started would say so, not the dashboard.
    let target = format!("http://127.0.0.1:{}/", free_port());
    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let in_use = taken.local_addr().expect("addr").to_string();
    let nowhere = format!("http://127.0.0.1:{}/api/v1/write", free_port());
    let cases: [(&[&str], &str); 7] = [
        (
            &["-d1s", "-R10", "--prometheus-rw", &nowhere, &target],
            "--prometheus-rw http://127.0.0.1:",
        ),
        (
            &["-d1s", "-R10", "--prometheus-rw", "ftp://x/", &target],
            "invalid value 'ftp://x/' for --prometheus-rw",
        ),
        (
            &["-d1s", "-R10", "--dashboard", &in_use, &target],
            "address in use",
        ),
        (
            &["-d1s", "-R10", "--dashboard", "192.0.2.1:5665", &target],
            "not an address of this machine",
        ),
        (
            &["-d1s", "-R10", "--dashboard", "nonsense", &target],
            "invalid value 'nonsense' for --dashboard",
        ),
        (
            &["-d1s", "-R10", "--dashboard-linger", "3s", &target],
            "--dashboard-linger needs --dashboard",
        ),
        (
            &["compare", "a.json", "b.json", "--dashboard", "5665"],
            "--dashboard is for a command that runs",
        ),
    ];
    for (args, says) in cases {
        let run = run_tsumo(args, Duration::from_secs(30));
        assert_eq!(run.status.code(), Some(2), "{args:?}: {}", run.stderr);
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {}", run.stderr);
        assert!(lines[0].contains(says), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    }
    drop(taken);
}

#[test]
fn prometheus_scrapes_a_mahjong_sessions_games_and_a_searchs_steps() {
    let server = common::majiang::Majiang::start();
    let nginx = Nginx::start();
    let ports = common::free_ports(2);
    let targets: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let prometheus = Prometheus::start(&targets);
    let dir = TempDir::new("tsumo-dashboard-mahjong");
    let [session_json, search_json] =
        ["session.json", "search.json"].map(|f| dir.path().join(f).display().to_string());
    let url = server.url();
    let nginx_url = nginx.http_url("/");
    let (session_at, search_at) = (targets[0].clone(), targets[1].clone());
    let session = || {
        let run = run_tsumo(
            &[
                "mahjong",
                "-c8",
                "-t1",
                "--think",
                "0",
                "--ramp",
                "1ms",
                "-d",
                "6s",
                "--quiet",
                "--dashboard",
                &session_at,
                "--dashboard-linger",
                "3s",
                "--json",
                &session_json,
                &url,
            ],
            LIMIT,
        );
        run.assert_success();
    };
    let search = || {
        let mut args = SHORT_SEARCH.to_vec();
        args.extend([
            "--dashboard",
            &search_at,
            "--dashboard-linger",
            "3s",
            "--json",
            &search_json,
            &nginx_url,
        ]);
        let run = run_tsumo(&args, LIMIT);
        assert!(run.status.code().is_some(), "{}", run.stderr);
    };
    common::all_at_once(&[("session", &session), ("search", &search)]);

    let doc = read_json(std::path::Path::new(&session_json));
    let job = |at: &str| format!("{{instance=\"{at}\"}}");
    let started = prometheus
        .number(&format!(
            "max_over_time(tsumo_games_started_total{}[10m])",
            job(&session_at)
        ))
        .unwrap_or_else(|| panic!("no tsumo_games_started_total:\n{}", prometheus.targets()));
    assert_eq!(started, json_f64(&doc, "games.started"));
    let completed = prometheus
        .number(&format!(
            "max_over_time(tsumo_games_ended_total{{instance=\"{session_at}\",how=\"completed\"}}[10m])"
        ))
        .expect("tsumo_games_ended_total");
    assert_eq!(completed, json_f64(&doc, "games.completed"));
    let players = prometheus.query(&format!(
        "max_over_time(tsumo_players{}[10m])",
        job(&session_at)
    ));
    assert_eq!(
        players.len(),
        3,
        "logged in, connected, playing: {players:?}"
    );

    // Every step the search judged is on /metrics, whatever its verdict: on a busy machine a
    // step may be judged limited by tsumo (or disturbed) and end the search early.
    let doc = read_json(std::path::Path::new(&search_json));
    let steps = doc["steps"].as_array().map_or(0, Vec::len);
    assert!(steps >= 1, "{doc}");
    let judged = prometheus
        .number(&format!(
            "sum(max_over_time(tsumo_capacity_steps_total{}[10m]))",
            job(&search_at)
        ))
        .unwrap_or_else(|| panic!("no tsumo_capacity_steps_total:\n{}", prometheus.targets()));
    assert_eq!(judged, steps as f64, "{doc}");
    let highest = prometheus
        .number(&format!(
            "max_over_time(tsumo_capacity_step_load{}[10m])",
            job(&search_at)
        ))
        .expect("tsumo_capacity_step_load");
    let loads = doc["steps"].as_array().into_iter().flatten();
    let ran = loads
        .filter_map(|s| s["plan"]["rate"].as_f64())
        .fold(0.0, f64::max);
    assert_eq!(highest, ran, "{doc}");
    // A quiet machine's search grows to --to; a busy one's may stop below it, never above.
    assert!((200.0..=400.0).contains(&highest), "{doc}");
}

/// A capacity search's live page is titled as the search, with the load of the step it runs
/// (`Capacity search (live): the step at 200 requests/sec`): not `HTTP run (live)`, which is
/// only what its figures are.
#[test]
fn a_searchs_live_page_is_titled_as_the_search_and_its_step() {
    let nginx = Nginx::start();
    let port = free_port();
    let (at, url) = (format!("127.0.0.1:{port}"), nginx.http_url("/"));
    let mut args = SHORT_SEARCH.to_vec();
    args.extend(["--dashboard", &at, &url]);
    let search = Signalled::spawn(&args);
    wait_for_listener(port);
    let mut titles: Vec<String> = Vec::new();
    common::wait_for("a step on the live page", Duration::from_secs(60), || {
        let title = get(port, "/live").and_then(|(_, body)| {
            let h1 = body.split("<h1>").nth(1)?.split("</h1>").next()?;
            Some(h1.to_string())
        });
        titles.extend(title);
        std::thread::sleep(Duration::from_millis(100));
        // A step's page seen, under either title (today's main named it "HTTP run (live)").
        titles
            .iter()
            .any(|t| t.contains("the step at") || t.contains("HTTP run"))
    });
    let run = search.finish(LIMIT);
    assert!(run.status.code().is_some(), "{}", run.stderr);
    assert!(
        titles
            .iter()
            .any(|t| t.starts_with("Capacity search (live): the step at 200 requests/sec")),
        "{titles:#?}"
    );
    assert!(
        titles.iter().all(|t| !t.contains("HTTP run")),
        "{titles:#?}"
    );
}
