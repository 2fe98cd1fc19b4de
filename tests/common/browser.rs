//! A page opened in headless Chromium (Debian's `chromium`, installed by `scripts/test`): its
//! DOM after the scripts ran, what it wrote to the console, and a screenshot under
//! `target/browser/` for a person to look at.
//!
//! One plain command line per page, no debugging protocol: `--dump-dom` prints the DOM once
//! the page has loaded, `--screenshot` saves it, and `--enable-logging=stderr --v=0` prints
//! every console message (and every uncaught exception) as a `CONSOLE` line on stderr. Those
//! lines do not say the level, so any console message fails the check: a report page has
//! nothing to log. Every run is bounded; the browser's whole process group is killed after it.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the browser saw of one page.
#[derive(Debug)]
pub struct Page {
    /// The DOM as serialised after the load event (scripts ran).
    pub dom: String,
    /// Every console message, uncaught exceptions among them, as Chromium logged it.
    pub console: Vec<String>,
    /// The screenshot (1280×900 unless opened at another size).
    pub screenshot: PathBuf,
}

/// The `data-value` of the first figure in `dom` whose element holds `needle`
/// (`data-figure="requests"`, say): `None` when there is none, or it has no number.
pub fn figure_value(dom: &str, needle: &str) -> Option<f64> {
    let element = &dom[dom.find(needle)?..];
    let element = &element[..element.find('>').unwrap_or(element.len())];
    element
        .split("data-value=\"")
        .nth(1)
        .and_then(|v| v.split('"').next())
        .and_then(|v| v.parse().ok())
}

impl Page {
    /// Fails the test, naming each message, if the page wrote anything to the console.
    pub fn assert_no_console_messages(&self) {
        assert!(
            self.console.is_empty(),
            "the page wrote to the console:\n{}",
            self.console.join("\n")
        );
    }

    /// The values of attribute `name` of every `<tag …>` in the DOM, in order (`""` for an
    /// element without it).
    pub fn attributes(&self, tag: &str, name: &str) -> Vec<String> {
        let open = format!("<{tag}");
        let wanted = format!(" {name}=\"");
        let mut found = Vec::new();
        let mut rest = self.dom.as_str();
        while let Some(start) = rest.find(&open) {
            rest = &rest[start + open.len()..];
            // `<polylinefoo` is another tag.
            if !rest.starts_with(|c: char| c.is_whitespace() || c == '>' || c == '/') {
                continue;
            }
            let element = &rest[..rest.find('>').unwrap_or(rest.len())];
            let value = element
                .find(&wanted)
                .map(|i| &element[i + wanted.len()..])
                .and_then(|v| v.split('"').next())
                .unwrap_or("");
            found.push(value.to_string());
        }
        found
    }
}

/// Where screenshots go: `target/browser/` of the build under test.
pub fn screenshot_dir() -> PathBuf {
    let exe = Path::new(super::TSUMO);
    exe.parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("target"))
        .join("browser")
}

/// The Chromium binary, or a test failure saying how to install it.
fn chromium() -> PathBuf {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .unwrap_or_else(|| {
            panic!("no chromium: `apt-get install chromium` (scripts/test installs it)")
        })
}

/// Opens `file` in headless Chromium, saves the screenshot as `target/browser/NAME.png` and
/// returns what the page showed. Fails the test if the browser does not finish within
/// `limit` (its process group is killed) or exits non-zero.
pub fn open(file: &Path, name: &str, limit: Duration) -> Page {
    open_sized(file, name, limit, (1280, 900))
}

/// [`open`] in a window of `(width, height)` pixels: the screenshot is what shows without
/// scrolling.
pub fn open_sized(file: &Path, name: &str, limit: Duration, size: (u32, u32)) -> Page {
    let file = std::fs::canonicalize(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    launch(
        &format!("file://{}", file.display()),
        name,
        limit,
        size,
        &[],
    )
}

/// A page served over HTTP (tsumo's dashboard), with more of Chromium's flags (`extra`).
pub fn open_url(url: &str, name: &str, limit: Duration, extra: &[&str]) -> Page {
    launch(url, name, limit, (1280, 900), extra)
}

fn launch(
    target: &str,
    name: &str,
    limit: Duration,
    (width, height): (u32, u32),
    extra: &[&str],
) -> Page {
    let shots = screenshot_dir();
    std::fs::create_dir_all(&shots).expect("create target/browser");
    let screenshot = shots.join(format!("{name}.png"));
    let _ = std::fs::remove_file(&screenshot);
    // A profile of its own: two browsers at once do not share one.
    let profile = super::TempDir::new("tsumo-chromium");

    let mut command = Command::new(chromium());
    command
        .args([
            "--headless",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg("--dump-dom");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Chromium's sandbox refuses to run as root.
        command.arg("--no-sandbox");
    }
    command
        .args(extra)
        .arg(target)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own process group, so that the renderer, GPU and zygote processes die with it.
        .process_group(0);
    let mut child = command.spawn().expect("spawn chromium");
    let group = child.id() as libc::pid_t;
    let out = super::drain(child.stdout.take().expect("stdout piped"));
    let err = super::drain(child.stderr.take().expect("stderr piped"));
    let kill_group = || {
        // SAFETY: kill(2) on the process group this function started; ESRCH when it is gone.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    };

    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break Some(status);
        }
        if started.elapsed() > limit {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Whatever it left behind goes too; then the pipes close.
    kill_group();
    if status.is_none() {
        let _ = child.wait();
    }
    let dom = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let Some(status) = status else {
        panic!("chromium still running after {limit:?} on {target}; killed.\nstderr:\n{stderr}");
    };
    assert!(
        status.success(),
        "chromium failed ({status}) on {target}:\nstderr:\n{stderr}"
    );
    assert!(
        screenshot.exists(),
        "chromium wrote no screenshot {}:\nstderr:\n{stderr}",
        screenshot.display()
    );
    let console = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    Page {
        dom,
        console,
        screenshot,
    }
}

/// A minimal HTML page around `body` (an SVG chart, say), to open in the browser.
pub fn html_page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title></head>\n\
         <body style=\"margin:0\">\n{body}\n</body></html>\n"
    )
}
