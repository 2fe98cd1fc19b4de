//! An output lost after the run, in every mode alike: the `--json` path checked before the run
//! becomes a directory while the run runs, so writing it fails at the end. Every other output
//! (`--html`, and for HTTP `--hgrm` and `--hlog`) is still written, the text report printed, the
//! loss is one `tsumo: --json …` line on stderr, and the exit status is 1 ("output lost").
//!
//! Outputs appear whole or not at all: on a disk that fills up at the end (a tiny tmpfs), the
//! good files already at `--json` and `--html` are left as they were and nothing truncated or
//! temporary is left beside them. The check before the run leaves nothing behind: an `--html`
//! that is a dangling symbolic link stays one, and nothing appears where it points.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::majiang::Majiang;
use common::nginx::Nginx;
use common::{run_tsumo, wait_for, Run, Signalled, TempDir};

/// The run's one `tsumo: ` line is the lost `--json`'s, and it exited 1.
fn assert_json_lost(run: &Run, json: &Path) {
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("tsumo: "))
        .collect();
    let want = format!("tsumo: --json {}: ", json.display());
    assert!(
        lines.len() == 1 && lines[0].starts_with(&want),
        "{:?}",
        run.stderr
    );
    assert!(json.is_dir(), "{run:?}");
}

/// `--html FILE` was written: a whole page.
fn assert_page(html: &Path, run: &Run) {
    let page = std::fs::read_to_string(html).unwrap_or_else(|e| panic!("no page ({e}): {run:?}"));
    assert!(page.starts_with("<!DOCTYPE html>"), "{run:?}");
    assert!(page.trim_end().ends_with("</html>"), "{run:?}");
}

#[test]
fn an_http_run_whose_json_is_lost_writes_every_other_output_and_exits_1() {
    let nginx = Nginx::start();
    let dir = TempDir::new("outputs-http");
    let file = |name: &str| dir.path().join(name);
    let (json, html, hgrm, hlog) = (
        file("run.json"),
        file("run.html"),
        file("run.hgrm"),
        file("run.hlog"),
    );
    let arg = |path: &Path| path.to_str().expect("temp path").to_string();
    let (json_arg, html_arg, hgrm_arg, hlog_arg) = (arg(&json), arg(&html), arg(&hgrm), arg(&hlog));
    let url = nginx.http_url("/index.html");
    let tsumo = Signalled::spawn(&[
        "-t1", "-c1", "-d3s", "-R20", "--json", &json_arg, "--html", &html_arg, "--hgrm",
        &hgrm_arg, "--hlog", &hlog_arg, &url,
    ]);
    // A request answered: the outputs were checked; now --json cannot be written.
    wait_for("a request answered", Duration::from_secs(10), || {
        !nginx.access_log().is_empty()
    });
    std::fs::create_dir(&json).expect("a directory where --json goes");
    let run = tsumo.finish(Duration::from_secs(30));
    assert_json_lost(&run, &json);
    assert!(run.stdout.contains("requests in"), "{run:?}");
    assert_page(&html, &run);
    let hgrm = std::fs::read_to_string(&hgrm).unwrap_or_default();
    assert!(hgrm.contains("#[Mean"), "{run:?}");
    let hlog = std::fs::read_to_string(&hlog).unwrap_or_default();
    assert!(hlog.contains("#[StartTime"), "{run:?}");
}

#[test]
fn a_mahjong_session_whose_json_is_lost_still_writes_its_page_and_exits_1() {
    let server = Majiang::start();
    let dir = TempDir::new("outputs-mahjong");
    let json = dir.path().join("session.json");
    let html = dir.path().join("session.html");
    let url = server.url();
    let tsumo = Signalled::spawn(&[
        "mahjong",
        "-c4",
        "-t1",
        "--think",
        "0",
        "--ramp",
        "1ms",
        "-d3s",
        "--json",
        json.to_str().expect("temp path"),
        "--html",
        html.to_str().expect("temp path"),
        &url,
    ]);
    // The players logged in: the outputs were checked; now --json cannot be written.
    assert_eq!(
        server.wait_session_files(4, Duration::from_secs(10)),
        4,
        "players did not log in"
    );
    std::fs::create_dir(&json).expect("a directory where --json goes");
    let run = tsumo.finish(Duration::from_secs(60));
    assert_json_lost(&run, &json);
    assert!(run.stdout.contains("Games: "), "{run:?}");
    assert_page(&html, &run);
    assert_eq!(server.wait_session_files(0, Duration::from_secs(5)), 0);
}

/// A tmpfs of `size` mounted on a folder of its own, unmounted on drop; `None` (and a line
/// saying why) where mounting is not allowed.
struct SmallDisk {
    mount: PathBuf,
    _dir: TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = TempDir::new("outputs-small-disk");
        let mount = dir.path().join("disk");
        std::fs::create_dir(&mount).expect("a mount point");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&mount)
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(SmallDisk { mount, _dir: dir }),
            Ok(out) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs here ({})",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot mount a tmpfs here ({e})");
                None
            }
        }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mount).status();
    }
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_disk_full_at_the_end_leaves_the_good_files_already_there_as_they_were() {
    let Some(disk) = SmallDisk::mount("64k") else {
        return;
    };
    let nginx = Nginx::start();
    let json = disk.mount.join("run.json");
    let html = disk.mount.join("run.html");
    let old_json = "{\"kind\": \"an earlier run, kept\"}\n";
    let old_html = "<!DOCTYPE html><html>an earlier page, kept</html>\n";
    std::fs::write(&json, old_json).expect("the earlier JSON");
    std::fs::write(&html, old_html).expect("the earlier page");
    // Room for the check before the run (one page of the tmpfs), not for a run's JSON or page.
    let filler = disk.mount.join("filler");
    std::fs::write(&filler, vec![0u8; 52 * 1024]).expect("the filler");
    let url = nginx.http_url("/index.html");
    let (json_arg, html_arg) = (json.display().to_string(), html.display().to_string());
    let run = run_tsumo(
        &[
            "-t1", "-c1", "-d1s", "-R20", "--json", &json_arg, "--html", &html_arg, &url,
        ],
        Duration::from_secs(60),
    );
    assert_eq!(run.status.code(), Some(1), "{run:?}");
    assert!(run.stderr.contains("No space left on device"), "{run:?}");
    assert!(run.stdout.contains("requests in"), "{run:?}");
    assert_eq!(
        std::fs::read_to_string(&json).ok().as_deref(),
        Some(old_json)
    );
    assert_eq!(
        std::fs::read_to_string(&html).ok().as_deref(),
        Some(old_html)
    );
    assert_eq!(
        names_in(&disk.mount),
        ["filler", "run.html", "run.json"],
        "something half-written was left"
    );
    // With room, the same outputs replace them whole.
    std::fs::remove_file(&filler).expect("the filler removed");
    let run = run_tsumo(
        &[
            "-t1", "-c1", "-d1s", "-R20", "--json", &json_arg, "--html", &html_arg, &url,
        ],
        Duration::from_secs(60),
    );
    run.assert_success();
    assert!(
        common::read_json(&json).get("requests_per_sec").is_some(),
        "{run:?}"
    );
    assert_page(&html, &run);
    assert_eq!(names_in(&disk.mount), ["run.html", "run.json"]);
}

#[test]
fn an_html_through_a_dangling_link_is_written_where_it_points_and_the_link_kept() {
    let nginx = Nginx::start();
    let dir = TempDir::new("outputs-dangling");
    let link = dir.path().join("page.html");
    let target = dir.path().join("elsewhere.html");
    std::os::unix::fs::symlink("elsewhere.html", &link).expect("a dangling link");
    let link_arg = link.display().to_string();
    let url = nginx.http_url("/index.html");
    let run = run_tsumo(
        &["-t1", "-c1", "-d1s", "-R10", "--html", &link_arg, &url],
        Duration::from_secs(30),
    );
    run.assert_success();
    let is_link = std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink());
    assert!(is_link, "the link is gone: {run:?}");
    assert_page(&target, &run);
    assert_eq!(
        names_in(dir.path()),
        ["elsewhere.html", "page.html"],
        "something else was left"
    );
}
