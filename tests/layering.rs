//! The module layering of docs/architecture.md and the `lib.rs` map, checked on the sources: each
//! module imports only modules below it, so the code reads top-down and a mode never reaches into
//! another mode or into the engine's callers; and in every directory of src/, at every depth,
//! modules side by side never import each other in a cycle, directly or through others of them
//! (a cycle means a type lives in the wrong file).

use std::collections::BTreeSet;
use std::path::Path;

/// Top to bottom; modules on one row may import each other's row-mates only where listed below.
const LAYERS: &[&[&str]] = &[
    &["cli"],
    &["run"],
    &["dashboard"],
    &["report"],
    &["mahjong", "web", "wsload"],
    &["engine"],
    &["script"],
    &["ws"],
    &["net"],
    &["timing"],
    &["capacity"],
    &["stats"],
    &["plan", "sys", "error", "slo"],
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
    files.extend(rust_files(&dir.join(module)));
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
fn every_module_of_lib_rs_is_in_a_layer_and_described() {
    let lib =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    let architecture =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    for line in lib.lines() {
        if let Some(name) = line.strip_prefix("pub mod ") {
            let name = name.trim_end_matches(';');
            assert!(
                layer_of(name).is_some(),
                "{name} is in no layer of this test"
            );
            assert!(
                architecture.contains(&format!("`{name}`")),
                "{name} is not described in docs/architecture.md"
            );
        }
    }
}

#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
    PathSep,
    Punct(char),
}

/// Rust source as tokens, without comments, characters and numbers (enough to follow `mod`
/// declarations, `#[path]` and paths).
fn tokens(text: &str) -> Vec<Token> {
    located_tokens(text).into_iter().map(|(t, _)| t).collect()
}

/// The tokens of `tokens`, each with the line (from 1) it starts on.
fn located_tokens(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut line_of = Vec::with_capacity(chars.len());
    let mut line = 1;
    for &c in &chars {
        line_of.push(line);
        if c == '\n' {
            line += 1;
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let line = line_of[i];
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && {
            let mut j = i + 1;
            while chars.get(j) == Some(&'#') {
                j += 1;
            }
            chars.get(j) == Some(&'"')
        } {
            let mut hashes = 0;
            i += 1;
            while chars[i] == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            let start = i;
            loop {
                if i >= chars.len() {
                    break;
                }
                if chars[i] == '"' && (1..=hashes).all(|h| chars.get(i + h) == Some(&'#')) {
                    break;
                }
                i += 1;
            }
            out.push((
                Token::Str(chars[start..i.min(chars.len())].iter().collect()),
                line,
            ));
            i += 1 + hashes;
        } else if c == '"' {
            i += 1;
            let mut s = String::new();
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if let Some(&ch) = chars.get(i) {
                    s.push(ch);
                }
                i += 1;
            }
            out.push((Token::Str(s), line));
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push((Token::Ident(chars[start..i].iter().collect()), line));
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else if c == ':' && next == Some(':') {
            out.push((Token::PathSep, line));
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push((Token::Punct(c), line));
            }
            i += 1;
        }
    }
    out
}

fn ident(token: Option<&Token>) -> Option<&str> {
    match token {
        Some(Token::Ident(name)) => Some(name),
        _ => None,
    }
}

/// The paths written from `tokens[i]` on (`a::b::{c, d::*}` gives `a::b::c` and `a::b::d::*`),
/// and the index after them.
fn path_tree(tokens: &[Token], mut i: usize, prefix: &[String]) -> (Vec<Vec<String>>, usize) {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(i) {
            Some(Token::Ident(name)) => path.push(name.clone()),
            Some(Token::Punct('*')) => {
                path.push("*".into());
                return (vec![path], i + 1);
            }
            Some(Token::Punct('{')) => {
                let mut all = Vec::new();
                i += 1;
                while i < tokens.len() && tokens[i] != Token::Punct('}') {
                    if tokens[i] == Token::Punct(',') {
                        i += 1;
                        continue;
                    }
                    let (paths, after) = path_tree(tokens, i, &path);
                    all.extend(paths);
                    i = after.max(i + 1);
                    // Skip `as name` and anything else up to the next item of the group.
                    while i < tokens.len()
                        && tokens[i] != Token::Punct(',')
                        && tokens[i] != Token::Punct('}')
                    {
                        i += 1;
                    }
                }
                return (all, i + 1);
            }
            _ => return (vec![path], i),
        }
        if tokens.get(i + 1) == Some(&Token::PathSep) {
            i += 2;
        } else {
            return (vec![path], i + 1);
        }
    }
}

/// One module's use of another: where it is written, and the absolute path it names.
struct Reference {
    from: Vec<String>,
    to: Vec<String>,
    file: String,
}

/// The absolute module path of `path` (`crate::`, `super::` or `self::` first) written in
/// module `current`.
fn absolute(current: &[String], path: &[String]) -> Vec<String> {
    let mut to = current.to_vec();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            to.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        _ => {}
    }
    while rest.first().is_some_and(|s| s == "super") {
        to.pop();
        rest = &rest[1..];
    }
    to.extend(rest.iter().filter(|s| *s != "self").cloned());
    to
}

/// Walks the module tree from `src/lib.rs`, following `mod name;` (and `#[path]`), and collects
/// every module's path and every `crate::`, `super::` and `self::` path written in it.
fn module_tree(src: &Path) -> (BTreeSet<Vec<String>>, Vec<Reference>) {
    let mut modules = BTreeSet::new();
    let mut references = Vec::new();
    // (module, path, the name it binds there) of every `use`.
    let mut uses: Vec<(Vec<String>, Vec<String>, String)> = Vec::new();
    // Paths that start with a name, not `crate`/`super`/`self`: a reference if a `use` bound it.
    let mut through_uses: Vec<Reference> = Vec::new();
    let mut files = vec![(src.join("lib.rs"), Vec::<String>::new(), src.to_path_buf())];
    while let Some((file, module, child_dir)) = files.pop() {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(src).unwrap().display().to_string();
        let tokens = tokens(&text);
        modules.insert(module.clone());
        // Inline modules (`mod tests { .. }`): their names and the brace depth they close at.
        let mut inline: Vec<(String, usize)> = Vec::new();
        let mut depth = 0;
        let mut path_attribute: Option<String> = None;
        let mut i = 0;
        while i < tokens.len() {
            let current: Vec<String> = module
                .iter()
                .cloned()
                .chain(inline.iter().map(|(name, _)| name.clone()))
                .collect();
            match &tokens[i] {
                Token::Punct('{') => depth += 1,
                Token::Punct('}') => {
                    depth -= 1;
                    if inline.last().is_some_and(|(_, d)| *d == depth) {
                        inline.pop();
                    }
                }
                Token::Punct('#')
                    if tokens.get(i + 1) == Some(&Token::Punct('['))
                        && ident(tokens.get(i + 2)) == Some("path") =>
                {
                    if let Some(Token::Str(path)) = tokens.get(i + 4) {
                        path_attribute = Some(path.clone());
                    }
                }
                Token::Ident(word) if word == "mod" => {
                    if let Some(name) = ident(tokens.get(i + 1)) {
                        let mut child = current.clone();
                        child.push(name.to_string());
                        match tokens.get(i + 2) {
                            Some(Token::Punct(';')) => {
                                let dir: std::path::PathBuf = child_dir
                                    .iter()
                                    .chain(inline.iter().map(|(n, _)| std::ffi::OsStr::new(n)))
                                    .collect();
                                let (path, grandchildren) = match path_attribute.take() {
                                    Some(p) => {
                                        let path = file.parent().unwrap().join(p);
                                        let stem = path.with_extension("");
                                        (path, stem)
                                    }
                                    None if dir.join(format!("{name}.rs")).exists() => {
                                        (dir.join(format!("{name}.rs")), dir.join(name))
                                    }
                                    None => (dir.join(name).join("mod.rs"), dir.join(name)),
                                };
                                files.push((path, child, grandchildren));
                            }
                            Some(Token::Punct('{')) => {
                                modules.insert(child);
                                inline.push((name.to_string(), depth));
                                depth += 1;
                                i += 2;
                            }
                            _ => {}
                        }
                    }
                }
                // What a `use` binds, for the re-exports below; its path is read next round.
                Token::Ident(word) if word == "use" => {
                    let (paths, after) = path_tree(&tokens, i + 1, &[]);
                    let renamed = match tokens.get(after) {
                        Some(Token::Ident(word)) if word == "as" && paths.len() == 1 => {
                            ident(tokens.get(after + 1))
                        }
                        _ => None,
                    };
                    for mut path in paths {
                        if path.last().is_some_and(|s| s == "self") {
                            path.pop();
                        }
                        let name = match (renamed, path.last()) {
                            (Some(name), _) => name.to_string(),
                            (None, Some(last)) if last != "*" => last.clone(),
                            _ => continue,
                        };
                        uses.push((current.clone(), path, name));
                    }
                }
                // A path: from `crate`, `super` or `self`, a reference now; through a name a
                // `use` bound (`report::http::X` after `use crate::report;`) or a child module,
                // resolved below, once every `use` is read.
                Token::Ident(word)
                    if tokens.get(i + 1) == Some(&Token::PathSep)
                        && (i == 0 || tokens[i - 1] != Token::PathSep) =>
                {
                    let rooted = matches!(word.as_str(), "crate" | "super" | "self");
                    let (paths, after) = path_tree(&tokens, i, &[]);
                    for path in paths {
                        let (to, into) = if rooted {
                            (absolute(&current, &path), &mut references)
                        } else {
                            (path, &mut through_uses)
                        };
                        into.push(Reference {
                            from: current.clone(),
                            to,
                            file: shown.clone(),
                        });
                    }
                    i = after;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
    // A name a module imports (or re-exports) stands for what it names: a sibling's type used
    // through its parent's `pub use` is a use of that sibling.
    let mut aliases = std::collections::BTreeMap::new();
    for (current, path, name) in uses {
        let target = match path.first().map(String::as_str) {
            Some("crate" | "super" | "self") => absolute(&current, &path),
            Some(child)
                if modules.contains(&[current.clone(), vec![child.to_string()]].concat()) =>
            {
                [current.clone(), path].concat()
            }
            // Another crate's.
            _ => continue,
        };
        let alias = [current, vec![name]].concat();
        if alias != target {
            aliases.insert(alias, target);
        }
    }
    for mut reference in through_uses {
        let bound = [reference.from.clone(), reference.to[..1].to_vec()].concat();
        if let Some(target) = aliases.get(&bound) {
            reference.to = [target.clone(), reference.to[1..].to_vec()].concat();
            references.push(reference);
        } else if modules.contains(&bound) {
            // A child module's path (`http::run` in `run`).
            reference.to = [reference.from.clone(), reference.to].concat();
            references.push(reference);
        }
    }
    for reference in &mut references {
        // Bounded: a re-export of a re-export, not a loop.
        for _ in 0..8 {
            let Some(len) = (1..=reference.to.len())
                .rev()
                .find(|&n| aliases.contains_key(&reference.to[..n]))
            else {
                break;
            };
            reference.to = [
                aliases[&reference.to[..len]].clone(),
                reference.to[len..].to_vec(),
            ]
            .concat();
        }
    }
    (modules, references)
}

/// Every directory's sibling modules that reach each other (a cycle, direct or longer), with
/// the uses that close it.
fn sibling_cycles(src: &Path) -> Vec<(String, BTreeSet<String>, Vec<String>)> {
    use std::collections::BTreeMap;
    let (modules, references) = module_tree(src);
    // parent → (sibling → siblings it uses, with one example each).
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> =
        BTreeMap::new();
    for reference in &references {
        let common = reference
            .from
            .iter()
            .zip(&reference.to)
            .take_while(|(a, b)| a == b)
            .count();
        let (Some(user), Some(used)) = (reference.from.get(common), reference.to.get(common))
        else {
            continue;
        };
        let mut sibling = reference.to[..common].to_vec();
        sibling.push(used.clone());
        if !modules.contains(&sibling) {
            continue;
        }
        edges
            .entry(reference.to[..common].to_vec())
            .or_default()
            .entry(user.clone())
            .or_default()
            .entry(used.clone())
            .or_insert_with(|| format!("{} uses {}", reference.file, reference.to.join("::")));
    }
    let mut cycles = Vec::new();
    for (parent, graph) in &edges {
        let reach = |from: &String| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from.clone()];
            while let Some(m) = stack.pop() {
                for next in graph.get(&m).into_iter().flat_map(|e| e.keys()) {
                    if seen.insert(next.clone()) {
                        stack.push(next.clone());
                    }
                }
            }
            seen
        };
        let mut placed = BTreeSet::new();
        for module in graph.keys() {
            if placed.contains(module) {
                continue;
            }
            let from_here = reach(module);
            if !from_here.contains(module) {
                continue;
            }
            let group: BTreeSet<String> = from_here
                .into_iter()
                .filter(|other| reach(other).contains(module))
                .collect();
            let closing = group
                .iter()
                .flat_map(|m| graph.get(m).into_iter().flatten())
                .filter(|(used, _)| group.contains(*used))
                .map(|(_, example)| example.clone())
                .collect();
            placed.extend(group.iter().cloned());
            cycles.push((parent.join("::"), group, closing));
        }
    }
    cycles
}

#[test]
fn no_sibling_modules_import_each_other_in_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let cycles = sibling_cycles(&src);
    let violations: Vec<String> = cycles
        .iter()
        .map(|(parent, group, closing)| {
            let names: Vec<&str> = group.iter().map(String::as_str).collect();
            format!(
                "in {}: {} ({})",
                if parent.is_empty() { "src" } else { parent },
                names.join(" ↔ "),
                closing.join("; ")
            )
        })
        .collect();
    assert!(
        violations.is_empty(),
        "sibling modules in a cycle:\n{}",
        violations.join("\n")
    );
}

/// The check itself sees a cycle through `super::`, one through a `use` group, one only inside
/// an inline module, and one through the parent's re-export; and it does not take an item of
/// the parent for a sibling, nor a path in a comment or a string for a use.
#[test]
fn the_sibling_check_sees_cycles_written_in_every_way() {
    let dir = std::env::temp_dir().join(format!("tsumo-layering-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    let write = |path: &str, text: &str| std::fs::write(dir.join(path), text).unwrap();
    std::fs::create_dir_all(dir.join("d")).unwrap();
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n");
    write("d/mod.rs", "mod p;\nmod q;\npub use p::P as Renamed;\n");
    write("d/p.rs", "pub struct P(super::q::Q);\n");
    write("d/q.rs", "pub struct Q;\nfn f(_: super::Renamed) {}\n");
    write("a/mod.rs", "mod x;\nmod y;\npub fn shared() {}\n");
    write("a/x.rs", "use super::{shared, y::Y};\n");
    write(
        "a/y.rs",
        "pub struct Y;\n#[cfg(test)]\nmod tests { use crate::a::x; }\n",
    );
    write(
        "b.rs",
        "// crate::c in a comment is no use\nuse crate::c;\n",
    );
    write("c.rs", "fn f() -> &'static str { \"crate::b\" }\n");
    let cycles = sibling_cycles(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let found: Vec<(String, Vec<String>)> = cycles
        .into_iter()
        .map(|(parent, group, _)| (parent, group.into_iter().collect()))
        .collect();
    let pair = |dir: &str, x: &str, y: &str| (dir.to_string(), vec![x.to_string(), y.to_string()]);
    assert_eq!(found, vec![pair("a", "x", "y"), pair("d", "p", "q")]);
}

/// Every `.rs` file under `dir`, at every depth (none when there is no such directory).
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
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
    files.sort();
    files
}

/// The files that are test modules of their own: declared `#[cfg(test)] mod name;`.
fn test_files(src: &Path) -> BTreeSet<std::path::PathBuf> {
    let mut found = BTreeSet::new();
    for file in rust_files(src) {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let stem = file.file_stem().unwrap().to_string_lossy();
        let children = if stem == "mod" || stem == "lib" {
            file.parent().unwrap().to_path_buf()
        } else {
            file.with_extension("")
        };
        for pair in lines.windows(2) {
            let name = pair[1]
                .strip_prefix("mod ")
                .or_else(|| pair[1].strip_prefix("pub(crate) mod "))
                .and_then(|rest| rest.strip_suffix(';'));
            if let (true, Some(name)) = (pair[0] == "#[cfg(test)]", name) {
                found.insert(children.join(format!("{name}.rs")));
                found.insert(children.join(name).join("mod.rs"));
            }
        }
    }
    found
}

/// A file's code: its lines that are not blank, not only a comment, and not in a
/// `#[cfg(test)]` module (`mod tests { … }`, or a `mod tests;` declaration).
fn code_lines(text: &str) -> Vec<&str> {
    // Braces in strings and comments are counted too: they come in pairs in this code.
    let braces = |line: &str| line.matches('{').count() as i64 - line.matches('}').count() as i64;
    let mut code = Vec::new();
    let mut in_test: Option<i64> = None;
    let mut attribute: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(depth) = in_test.as_mut() {
            *depth += braces(line);
            if *depth <= 0 {
                in_test = None;
            }
            continue;
        }
        if trimmed == "#[cfg(test)]" {
            attribute = Some(line);
            continue;
        }
        if let Some(held) = attribute.take() {
            let module = trimmed.starts_with("mod ") || trimmed.starts_with("pub(crate) mod ");
            if module && trimmed.ends_with(';') {
                continue;
            }
            if module && braces(line) > 0 {
                in_test = Some(braces(line));
                continue;
            }
            code.push(held);
        }
        if !trimmed.is_empty() && !trimmed.starts_with("//") {
            code.push(line);
        }
    }
    code
}

/// Every file of src/ that is not a test module: its path under src/ and its text.
fn production_files() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let tests = test_files(&src);
    rust_files(&src)
        .into_iter()
        .filter(|file| !tests.contains(file))
        .map(|file| {
            let shown = file.strip_prefix(&src).unwrap().display().to_string();
            (shown, std::fs::read_to_string(&file).unwrap())
        })
        .collect()
}

/// The project's rule: a file of more than this many code lines holds more than one subject.
const MOST_CODE_LINES: usize = 500;

#[test]
fn no_file_in_src_is_over_500_code_lines() {
    let mut over = Vec::new();
    for (shown, text) in production_files() {
        let count = code_lines(&text).len();
        if count > MOST_CODE_LINES {
            over.push(format!("{shown}: {count} code lines"));
        }
    }
    assert!(
        over.is_empty(),
        "over {MOST_CODE_LINES} code lines (tests aside):\n{}",
        over.join("\n")
    );
}

/// Each kind of result's folder in `src/report/`.
const KINDS: [&str; 4] = ["http", "mahjong", "capacity", "ws"];

/// The dispatcher: the one file of `src/report/` that reads a document into its kind.
const DISPATCHER: &str = "kinds.rs";

/// Each kind's saved types are its own: in `src/report/`, only its folder and the dispatcher
/// name them (tests aside), so the tools and the base ask a result through the trait, and a
/// new kind is its folder and an arm in the dispatcher. (Each kind's runner in `src/run/`
/// makes its result, so it names it.)
#[test]
fn no_file_outside_a_kinds_folder_names_its_saved_types() {
    let report = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report");
    let src = report.parent().unwrap().to_path_buf();
    let tests = test_files(&src);
    let code_of = |file: &Path| {
        let text = std::fs::read_to_string(file).unwrap();
        code_lines(&text).join("\n")
    };
    let mut violations = Vec::new();
    for kind in KINDS {
        let folder = report.join(kind);
        assert!(folder.is_dir(), "no folder {}", folder.display());
        let mut saved = BTreeSet::new();
        for file in rust_files(&folder) {
            let tokens = tokens(&code_of(&file));
            for pair in tokens.windows(2) {
                if let (Some("struct" | "enum"), Some(name)) =
                    (ident(Some(&pair[0])), ident(Some(&pair[1])))
                {
                    if name.starts_with("Saved") {
                        saved.insert(name.to_string());
                    }
                }
            }
        }
        assert!(!saved.is_empty(), "{kind}: no saved type found");
        for file in rust_files(&report) {
            if file.starts_with(&folder) || file == report.join(DISPATCHER) || tests.contains(&file)
            {
                continue;
            }
            let named: BTreeSet<String> = tokens(&code_of(&file))
                .iter()
                .filter_map(|t| ident(Some(t)))
                .filter(|name| saved.contains(*name))
                .map(str::to_string)
                .collect();
            for name in named {
                violations.push(format!(
                    "{} names {kind}'s {name}",
                    file.strip_prefix(&report).unwrap().display()
                ));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "outside its kind's folder and {DISPATCHER}:\n{}",
        violations.join("\n")
    );
}

/// The project's rule: a function longer than this does more than one thing.
const MOST_FUNCTION_LINES: usize = 100;

/// Every function with a body in `text`, outside `#[cfg(test)]` items: its name, the line of
/// its `fn`, and its length in lines, counted from the `fn` line to the line of its closing
/// brace, both included (blank and comment lines inside count too; attributes and doc comments
/// above do not). Braces in strings, characters and comments are not counted.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let tokens = located_tokens(text);
    let punct = |i: usize, c: char| tokens.get(i).is_some_and(|(t, _)| *t == Token::Punct(c));
    // The index of the `}` that closes the `{` at `open`.
    let closing = |open: usize| {
        let mut depth = 0;
        for (j, (token, _)) in tokens.iter().enumerate().skip(open) {
            match token {
                Token::Punct('{') => depth += 1,
                Token::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        return j;
                    }
                }
                _ => {}
            }
        }
        tokens.len() - 1
    };
    // From `from`, the first `{` (a body) or `;` (none) outside parentheses and brackets.
    let body = |from: usize| {
        let mut nesting = 0;
        for (j, (token, _)) in tokens.iter().enumerate().skip(from) {
            match token {
                Token::Punct('(' | '[') => nesting += 1,
                Token::Punct(')' | ']') => nesting -= 1,
                Token::Punct('{') if nesting == 0 => return Some(j),
                Token::Punct(';') if nesting == 0 => return None,
                _ => {}
            }
        }
        None
    };
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let cfg_test = punct(i, '#')
            && punct(i + 1, '[')
            && ident(tokens.get(i + 2).map(|(t, _)| t)) == Some("cfg")
            && punct(i + 3, '(')
            && ident(tokens.get(i + 4).map(|(t, _)| t)) == Some("test")
            && punct(i + 5, ')');
        if cfg_test {
            // Skip the item: up to its `;`, or its block's closing brace.
            i = match body(i + 7) {
                Some(open) => closing(open) + 1,
                None => i + 7,
            };
            continue;
        }
        if let (Some("fn"), Some(name)) = (
            ident(tokens.get(i).map(|(t, _)| t)),
            ident(tokens.get(i + 1).map(|(t, _)| t)),
        ) {
            if let Some(open) = body(i + 2) {
                let first = tokens[i].1;
                let last = tokens[closing(open)].1;
                found.push((name.to_string(), first, last - first + 1));
            }
        }
        i += 1;
    }
    found
}

#[test]
fn no_production_function_is_over_100_lines() {
    let mut over = Vec::new();
    for (shown, text) in production_files() {
        for (name, line, length) in functions(&text) {
            if length > MOST_FUNCTION_LINES {
                over.push((length, format!("{shown}:{line} {name}: {length} lines")));
            }
        }
    }
    over.sort_by_key(|(length, _)| std::cmp::Reverse(*length));
    let over: Vec<String> = over.into_iter().map(|(_, text)| text).collect();
    assert!(
        over.is_empty(),
        "production functions over {MOST_FUNCTION_LINES} lines:\n{}",
        over.join("\n")
    );
}

/// The check counts a body's lines whatever braces its strings hold, sees a function whose
/// signature spans lines, and leaves out a declaration without a body and `#[cfg(test)]` code.
#[test]
fn the_function_check_counts_bodies_only() {
    let text = "trait T { fn declared(&self); }\n\
                fn short(x: [u8; 2]) -> u8 {\n    let s = \"}}{\";\n    '}';\n    x[0]\n}\n\
                pub(crate) fn spread<F>(\n    f: F,\n) where F: Fn() {\n    f()\n}\n\
                #[cfg(test)]\nmod tests {\n    fn hidden() {}\n}\n";
    let found = functions(text);
    let want = [("short", 2, 5), ("spread", 7, 5)].map(|(n, l, c)| (n.to_string(), l, c));
    assert_eq!(found, want);
}

/// The kinds of load, each by the modules that are its own: the mode, and its room in each
/// layer that keeps one per kind (`stats`, `report`, `dashboard::metrics`, `run`, `cli`).
const LOAD_KINDS: &[(&str, &[&[&str]])] = &[
    (
        "http",
        &[
            &["web"],
            &["stats", "http"],
            &["report", "http"],
            &["dashboard", "metrics", "http"],
            &["run", "http"],
            &["run", "capacity"],
        ],
    ),
    (
        "mahjong",
        &[
            &["mahjong"],
            &["stats", "mahjong"],
            &["report", "mahjong"],
            &["dashboard", "metrics", "mahjong"],
            &["run", "mahjong"],
            &["run", "mahjong_capacity"],
            &["cli", "mahjong"],
            &["cli", "mahjong_capacity"],
        ],
    ),
    (
        "ws",
        &[
            &["wsload"],
            &["stats", "ws"],
            &["report", "ws"],
            &["run", "ws"],
            &["cli", "ws"],
        ],
    ),
];

/// The files that name every kind on purpose, one arm each: the dispatchers.
const KIND_DISPATCHERS: &[&str] = &[
    // A saved document into its kind; results of one kind merged.
    "report/kinds.rs",
    // A run as it goes: `LiveData`, one arm per kind.
    "stats/live.rs",
    // `/metrics`: each kind's encoder.
    "dashboard/metrics/mod.rs",
    // The live page: each kind's page so far.
    "dashboard/view.rs",
    // The command line: each command's parser, one arm each; and every command's table, for
    // the shell completions and the man page.
    "cli/mod.rs",
    "cli/completions.rs",
];

fn kind_of(path: &[String]) -> Option<&'static str> {
    LOAD_KINDS.iter().find_map(|(kind, roots)| {
        roots
            .iter()
            .any(|root| path.len() >= root.len() && path[..root.len()] == **root)
            .then_some(*kind)
    })
}

/// A new kind of load is a folder in each room and an arm in each dispatcher: no other file
/// names two kinds' modules, and no kind's folder names another kind's (tests aside).
#[test]
fn no_file_outside_the_dispatchers_names_two_kinds() {
    use std::collections::BTreeMap;
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (_, references) = module_tree(&src);
    let mut named: BTreeMap<String, BTreeMap<&str, String>> = BTreeMap::new();
    for reference in &references {
        if reference
            .from
            .iter()
            .any(|s| s == "tests" || s.ends_with("_tests"))
        {
            continue;
        }
        if let Some(kind) = kind_of(&reference.to) {
            named
                .entry(reference.file.clone())
                .or_default()
                .entry(kind)
                .or_insert_with(|| reference.to.join("::"));
        }
    }
    let mut violations = Vec::new();
    for reference in &references {
        let Some(own) = kind_of(&reference.from) else {
            continue;
        };
        if let Some(kind) = kind_of(&reference.to).filter(|k| *k != own) {
            violations.push(format!(
                "{} ({own}) names {kind}'s {}",
                reference.file,
                reference.to.join("::")
            ));
        }
    }
    for (file, kinds) in &named {
        if kinds.len() > 1 && !KIND_DISPATCHERS.contains(&file.as_str()) {
            let own = references.iter().find(|r| &r.file == file).map(|r| &r.from);
            if own.and_then(|m| kind_of(m)).is_none() {
                let list: Vec<String> = kinds.values().cloned().collect();
                violations.push(format!("{file} names {}", list.join(" and ")));
            }
        }
    }
    violations.sort();
    violations.dedup();
    assert!(
        violations.is_empty(),
        "outside the dispatchers ({KIND_DISPATCHERS:?}), a file names two kinds:\n{}",
        violations.join("\n")
    );
}

/// At most this many `Result<_, String>` in production code: the small parsers whose message
/// is the whole point (wrk's units, a URL, a header, a `--bind` list); an error that crosses a
/// module has a type.
const MOST_STRING_ERRORS: usize = 15;

/// `text` with the lines [`code_lines`] leaves out blanked, so that line numbers still hold.
fn code_only(text: &str) -> String {
    let code: BTreeSet<usize> = code_lines(text)
        .iter()
        .map(|line| line.as_ptr() as usize)
        .collect();
    text.lines()
        .map(|line| match code.contains(&(line.as_ptr() as usize)) {
            true => line,
            false => "",
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines of `text` that hold a `Result<…, String>`: a `Result` whose last type argument
/// is `String` (`Result<(u64, &str), String>`, `Result<u8, std::string::String>`).
fn string_errors(text: &str) -> Vec<usize> {
    let tokens = located_tokens(text);
    let mut found = Vec::new();
    for (i, (token, line)) in tokens.iter().enumerate() {
        let opens = matches!(tokens.get(i + 1), Some((Token::Punct('<'), _)));
        if *token != Token::Ident("Result".to_string()) || !opens {
            continue;
        }
        // To the `>` that closes it; `last` starts after its last comma at the top level.
        let (mut depth, mut last) = (0i32, i + 2);
        for (j, (t, _)) in tokens.iter().enumerate().skip(i + 1) {
            let arrow = j > 0 && tokens[j - 1].0 == Token::Punct('-');
            match t {
                Token::Punct('<' | '(' | '[') => depth += 1,
                Token::Punct('>') if arrow => {}
                Token::Punct('>' | ')' | ']') => depth -= 1,
                Token::Punct(',') if depth == 1 => last = j + 1,
                _ => {}
            }
            if depth == 0 {
                let path = &tokens[last..j];
                let string = path.last().map(|(t, _)| t) == Some(&Token::Ident("String".into()))
                    && path
                        .iter()
                        .all(|(t, _)| matches!(t, Token::Ident(_) | Token::PathSep));
                if string {
                    found.push(*line);
                }
                break;
            }
        }
    }
    found
}

#[test]
fn string_errors_are_few() {
    let mut found = Vec::new();
    for (shown, text) in production_files() {
        for line in string_errors(&code_only(&text)) {
            found.push(format!("{shown}:{line}"));
        }
    }
    assert!(
        found.len() <= MOST_STRING_ERRORS,
        "{} `Result<_, String>` in production code, at most {MOST_STRING_ERRORS}: give an error \
         that crosses a module a type (a thiserror enum of its module)\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The count sees a `String` error however the `Result` is written, not one as an argument
/// or in the `Ok` type, nor in a `#[cfg(test)]` module.
#[test]
fn the_string_error_check_sees_the_last_argument_only() {
    let text = "fn a() -> Result<(u64, &str), String> {}\n\
                fn b() -> Result<String, Error> {}\n\
                fn c(f: impl Fn() -> Result<u8, String>) {}\n\
                fn d() -> Result<Vec<Result<u8, String>>, Error> {}\n\
                fn e() -> std::result::Result<u8, std::string::String> {}\n\
                #[cfg(test)]\nmod tests {\n    fn f() -> Result<u8, String> {}\n}\n";
    assert_eq!(string_errors(&code_only(text)), [1, 3, 4, 5]);
}
