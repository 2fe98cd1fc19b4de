//! DuckDB (from the pinned scripts/requirements-readers.txt, in scripts/.venv as `scripts/test`
//! makes it) reading a `--requests` log back: its rows, errors, columns and the p99 of the
//! corrected latency, for tests/requests_log.rs and tests/ws_requests.rs.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The venv's python with DuckDB; `None` (and a line saying so) when scripts/test has not made
/// it (as tests/ci_reports.rs finds it).
pub fn readers() -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/.venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    eprintln!(
        "skipped: no {} (scripts/test makes it: duckdb from scripts/requirements-readers.txt)",
        python.display()
    );
    None
}

/// What DuckDB reads of a log: its rows, its errored rows, the p99 of the corrected latency
/// (ns) as `quantile_disc` gives it, and the sample at HdrHistogram's rank for it (the
/// `trunc(0.99 n + 0.5)`th), with the one below: the two rules pick neighbouring samples.
pub const READ: &str = r#"
import duckdb, json, sys
con = duckdb.connect()
con.execute(f"create view log as select * from read_csv('{sys.argv[1]}', header=true, skip=1)")
rows, errors, disc = con.execute(
    "select count(*), count(*) filter (where error is not null and error <> ''), "
    "quantile_disc(corrected_ns, 0.99) from log").fetchone()
timed = con.execute("select count(corrected_ns) from log").fetchone()[0]
rank = max(int(0.99 * timed + 0.5), 1)
at = lambda r: con.execute(
    "select corrected_ns from log where corrected_ns is not null "
    f"order by corrected_ns limit 1 offset {max(r - 1, 0)}").fetchone()[0]
columns = [d[0] for d in con.execute("select * from log limit 0").description]
print(json.dumps({"rows": rows, "errors": errors, "disc_ns": disc, "hdr_rank_ns": at(rank),
                  "below_ns": at(rank - 1), "above_ns": at(rank + 1), "columns": columns}))
"#;

pub fn duckdb(python: &Path, log: &Path) -> Value {
    let out = Command::new(python)
        .arg("-c")
        .arg(READ)
        .arg(log)
        .output()
        .expect("run the venv's python");
    assert!(
        out.status.success(),
        "duckdb failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("duckdb's answer is JSON")
}

fn ns(read: &Value, key: &str) -> u64 {
    read.pointer(key)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no {key} in {read}"))
}

/// The sample at the histogram's rank is the JSON's p99 (`saved_us`) to its precision (3
/// significant figures), and DuckDB's quantile_disc is that sample or a neighbour.
pub fn assert_p99(read: &Value, saved_us: u64) {
    let saved = saved_us as f64;
    let at_rank = ns(read, "/hdr_rank_ns") as f64 / 1000.0;
    assert!(
        (at_rank - saved).abs() <= saved * 0.001 + 1.0,
        "the log's p99 {at_rank} µs, the JSON's {saved} µs ({read})"
    );
    let disc = ns(read, "/disc_ns");
    assert!(
        (ns(read, "/below_ns")..=ns(read, "/above_ns")).contains(&disc),
        "{read}"
    );
}
