//! The module layering of DESIGN.md and the `lib.rs` layout, checked on the sources: each
//! module imports only modules below it, so the code reads top-down and a mode never reaches into
//! another mode or into the engine's callers.

use std::collections::BTreeSet;
use std::path::Path;

/// Top to bottom; modules on one row may import each other's row-mates only where listed below.
const LAYERS: &[&[&str]] = &[
    &["cli"],
    &["report"],
    &["mahjong", "http"],
    &["engine"],
    &["script"],
    &["ws"],
    &["net"],
    &["timing"],
    &["stats"],
    &["plan", "sys", "error"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|row| row.contains(&module))
}

/// Every `crate::NAME` a module's files mention.
fn imports(dir: &Path, module: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut files = Vec::new();
    let single = dir.join(format!("{module}.rs"));
    if single.exists() {
        files.push(single);
    }
    let mut stack = vec![dir.join(module)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, _) in text.match_indices("crate::") {
            let name: String = text[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != module {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn no_module_imports_one_above_it_or_a_sibling_mode() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for row in LAYERS {
        for &module in *row {
            let own = layer_of(module).unwrap();
            for import in imports(&src, module) {
                let Some(layer) = layer_of(&import) else {
                    violations.push(format!("{module} imports {import}, which is in no layer"));
                    continue;
                };
                // The bottom row is one row of leaves (plan, sys, error use each other).
                let bottom = own == LAYERS.len() - 1;
                if layer < own || (layer == own && !bottom) {
                    violations.push(format!("{module} imports {import}"));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layering broken:\n{}",
        violations.join("\n")
    );
}

#[test]
fn every_module_of_lib_rs_is_in_a_layer() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(name) = line.strip_prefix("pub mod ") {
            let name = name.trim_end_matches(';');
            assert!(
                layer_of(name).is_some(),
                "{name} is in no layer of this test"
            );
        }
    }
}
