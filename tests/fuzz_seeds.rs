//! The fuzz targets' checks (fuzz/checks/, the very code each target runs) on every committed
//! seed (fuzz/seeds/TARGET/) and on every input a fuzz run has left in fuzz/artifacts/TARGET/
//! (a crash not yet fixed fails here as well): the targets' code paths and assertions checked on
//! the stable toolchain, in a second, with the rest of the suite.
//!
//! This replays known inputs; it does not look for new ones. `scripts/fuzz` does (nightly,
//! libFuzzer with AddressSanitizer), and `TSUMO_FUZZ=1 scripts/test` runs it after the tests.

#[path = "../fuzz/checks/response_split.rs"]
mod response_split;
#[path = "../fuzz/checks/saved_run.rs"]
mod saved_run;
#[path = "../fuzz/checks/socketio_frame.rs"]
mod socketio_frame;
#[path = "../fuzz/checks/units.rs"]
mod units;

use std::path::{Path, PathBuf};

/// A fuzz target's check: returns, or panics on a bug.
type Check = fn(&[u8]);

/// Every fuzz target, by name, with its check.
const TARGETS: [(&str, Check); 4] = [
    ("response_split", response_split::check),
    ("saved_run", saved_run::check),
    ("socketio_frame", socketio_frame::check),
    ("units", units::check),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The files in `dir`, sorted; none when `dir` does not exist (fuzz/artifacts/ is not committed).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("read a directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

/// A target added to fuzz/fuzz_targets/ must be replayed here too.
#[test]
fn every_fuzz_target_is_replayed() {
    let on_disk: Vec<String> = files_in(&fuzz_dir().join("fuzz_targets"))
        .iter()
        .filter_map(|path| Some(path.file_stem()?.to_str()?.to_string()))
        .collect();
    let replayed: Vec<&str> = TARGETS.iter().map(|(name, _)| *name).collect();
    assert_eq!(on_disk, replayed, "fuzz/fuzz_targets/ against TARGETS");
}

#[test]
fn every_seed_and_artifact_passes_its_targets_check() {
    let mut failed = Vec::new();
    for (target, check) in TARGETS {
        let seeds = files_in(&fuzz_dir().join("seeds").join(target));
        assert!(!seeds.is_empty(), "no seeds in fuzz/seeds/{target}/");
        let artifacts = files_in(&fuzz_dir().join("artifacts").join(target));
        for input in seeds.iter().chain(&artifacts) {
            let data =
                std::fs::read(input).unwrap_or_else(|e| panic!("read {}: {e}", input.display()));
            // Each failure's panic message is printed as it happens; all are named at the end.
            if std::panic::catch_unwind(|| check(&data)).is_err() {
                failed.push(format!("{target}: {}", input.display()));
            }
        }
    }
    assert!(failed.is_empty(), "failed:\n{}", failed.join("\n"));
}
