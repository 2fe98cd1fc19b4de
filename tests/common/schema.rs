//! Saved files checked against the JSON Schemas in `docs/schema/` by a real validator: Python's
//! `jsonschema` (draft 2020-12), not a check written here. `scripts/test` installs it (Debian's
//! `python3-jsonschema`) where no `python3` on the machine has it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The schema of each kind of saved file (`docs/schema/KIND.schema.json`).
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// An HTTP run, merged or not.
    Run,
    /// A mahjong session, merged or not.
    Session,
    /// A capacity search (requests or players), merged or not.
    Capacity,
    /// A `--vs` comparison.
    Vs,
    /// A WebSocket run (`tsumo ws`), merged or not.
    Ws,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Session => "session",
            Kind::Capacity => "capacity",
            Kind::Vs => "vs",
            Kind::Ws => "ws",
        }
    }
}

fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schema")
}

/// Validates against every schema under `dir`, resolving `$ref`s among them; works with the
/// `referencing` registry of jsonschema 4.18+ and with `RefResolver` before it (Debian 12: 4.10).
const VALIDATE: &str = r#"
import json, pathlib, sys
import jsonschema
schema_dir, kind, files = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
schemas = {p.name: json.loads(p.read_text()) for p in schema_dir.glob("*.schema.json")}
base = schemas[kind + ".schema.json"]["$id"].rsplit("/", 1)[0] + "/"
cls = jsonschema.Draft202012Validator
for s in schemas.values():
    cls.check_schema(s)
try:
    from referencing import Registry, Resource
    registry = Registry().with_resources(
        (base + name, Resource.from_contents(s)) for name, s in schemas.items())
    validator = cls(schemas[kind + ".schema.json"], registry=registry)
except ImportError:
    store = {base + name: s for name, s in schemas.items()}
    resolver = jsonschema.RefResolver(base, schemas[kind + ".schema.json"], store=store)
    validator = cls(schemas[kind + ".schema.json"], resolver=resolver)
bad = 0
for f in files:
    for e in sorted(validator.iter_errors(json.load(open(f))), key=lambda e: list(e.path))[:5]:
        bad += 1
        print(f"{f}: /{'/'.join(map(str, e.path))}: {e.message[:300]}")
sys.exit(1 if bad else 0)
"#;

/// A `python3` that imports `jsonschema`: the one on PATH, else Debian's.
fn python() -> String {
    for candidate in ["python3", "/usr/bin/python3"] {
        let ok = Command::new(candidate)
            .args(["-c", "import jsonschema"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return candidate.to_string();
        }
    }
    panic!("no python3 with jsonschema (scripts/test installs python3-jsonschema)");
}

/// Asserts that every file is valid against the schema of `kind`.
pub fn assert_valid(kind: Kind, files: &[&Path]) {
    let out = Command::new(python())
        .arg("-c")
        .arg(VALIDATE)
        .arg(schema_dir())
        .arg(kind.name())
        .args(files)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "not valid against docs/schema/{}.schema.json:\n{}{}",
        kind.name(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Asserts that a document (as read back from `--json -`) is valid against `kind`'s schema.
pub fn assert_valid_doc(kind: Kind, doc: &serde_json::Value) {
    let dir = super::TempDir::new("schema");
    let path = dir.path().join("doc.json");
    std::fs::write(&path, doc.to_string()).expect("write the document");
    assert_valid(kind, &[&path]);
}
