//! A small YAML reader for the Kubernetes manifests in `deploy/kubernetes/`, into
//! `serde_json::Value`. No YAML crate is among the project's verified dependencies, so this
//! reads the subset that manifests are written in — documents split by `---`, block mappings and
//! sequences (`- key: value` items included), `|` literal blocks, plain, quoted and number
//! scalars, one-line flow sequences of scalars, comments — and refuses anything else with the
//! line number (tabs, bad indentation, anchors, tags, a key without `:`), so a manifest that
//! reads here is valid YAML and means what the test sees. Where Python's PyYAML is installed,
//! tests/deploy.rs also checks that both readers agree.

use serde_json::{Map, Value};

/// One line: its indentation and the text after it (comments still in).
#[derive(Debug, Clone)]
struct Line {
    number: usize,
    indent: usize,
    text: String,
}

/// Every document of `text`.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, String> {
    let mut docs = Vec::new();
    let mut current = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.contains('\t') {
            return Err(format!("line {}: a tab (YAML indents with spaces)", i + 1));
        }
        if raw.trim_end() == "---" {
            docs.push(std::mem::take(&mut current));
            continue;
        }
        let text = raw.trim_start();
        current.push(Line {
            number: i + 1,
            indent: raw.len() - text.len(),
            text: text.trim_end().to_string(),
        });
    }
    docs.push(current);
    docs.into_iter()
        .filter(|lines| lines.iter().any(|l| !is_blank(&l.text)))
        .map(|mut lines| {
            let mut at = 0;
            let value = block(&mut lines, &mut at)?;
            skip_blank(&lines, &mut at);
            match lines.get(at) {
                Some(l) => Err(format!("line {}: unexpected indentation", l.number)),
                None => Ok(value),
            }
        })
        .collect()
}

fn is_blank(text: &str) -> bool {
    text.is_empty() || text.starts_with('#')
}

fn skip_blank(lines: &[Line], at: &mut usize) {
    while lines.get(*at).is_some_and(|l| is_blank(&l.text)) {
        *at += 1;
    }
}

/// The block starting at the next non-blank line: a sequence or a mapping at its indentation.
fn block(lines: &mut [Line], at: &mut usize) -> Result<Value, String> {
    skip_blank(lines, at);
    let Some(first) = lines.get(*at).cloned() else {
        return Ok(Value::Null);
    };
    if first.text == "-" || first.text.starts_with("- ") {
        sequence(lines, at, first.indent)
    } else {
        mapping(lines, at, first.indent)
    }
}

fn sequence(lines: &mut [Line], at: &mut usize, indent: usize) -> Result<Value, String> {
    let mut items = Vec::new();
    loop {
        skip_blank(lines, at);
        let Some(line) = lines.get(*at).cloned() else {
            break;
        };
        if line.indent < indent || !(line.text == "-" || line.text.starts_with("- ")) {
            break;
        }
        if line.indent > indent {
            return Err(format!("line {}: unexpected indentation", line.number));
        }
        let rest = line.text[1..].trim_start();
        if rest.is_empty() || rest.starts_with('#') {
            *at += 1;
            items.push(nested(lines, at, indent)?);
        } else if key_value(rest).is_some() {
            // `- key: value`: a mapping whose first entry sits on the dash's line.
            let column = line.indent + (line.text.len() - rest.len());
            lines[*at] = Line {
                number: line.number,
                indent: column,
                text: rest.to_string(),
            };
            items.push(mapping(lines, at, column)?);
        } else {
            *at += 1;
            items.push(scalar(rest, line.number)?);
        }
    }
    Ok(Value::Array(items))
}

fn mapping(lines: &mut [Line], at: &mut usize, indent: usize) -> Result<Value, String> {
    let mut map = Map::new();
    loop {
        skip_blank(lines, at);
        let Some(line) = lines.get(*at).cloned() else {
            break;
        };
        if line.indent < indent || line.text.starts_with("- ") {
            break;
        }
        if line.indent > indent {
            return Err(format!("line {}: unexpected indentation", line.number));
        }
        let (key, rest) = key_value(&line.text)
            .ok_or_else(|| format!("line {}: expected `key: value`", line.number))?;
        let key = match scalar(key, line.number)? {
            Value::String(s) => s,
            other => other.to_string(),
        };
        *at += 1;
        let value = match strip_comment(rest) {
            "" => {
                // A nested block, or a sequence at the key's own indentation.
                skip_blank(lines, at);
                match lines.get(*at) {
                    Some(next)
                        if next.indent > indent
                            || (next.indent == indent && next.text.starts_with("- ")) =>
                    {
                        block(lines, at)?
                    }
                    _ => Value::Null,
                }
            }
            "|" | "|-" => literal(lines, at, indent, rest.trim() == "|"),
            other => scalar(other, line.number)?,
        };
        if map.insert(key.clone(), value).is_some() {
            return Err(format!("line {}: key `{key}` given twice", line.number));
        }
    }
    Ok(Value::Object(map))
}

/// The block under a `-` alone on its line.
fn nested(lines: &mut [Line], at: &mut usize, indent: usize) -> Result<Value, String> {
    skip_blank(lines, at);
    match lines.get(*at) {
        Some(next) if next.indent > indent => block(lines, at),
        _ => Ok(Value::Null),
    }
}

/// A `|` block: the lines indented deeper than the key, their common indentation removed.
fn literal(lines: &[Line], at: &mut usize, indent: usize, keep_newline: bool) -> Value {
    let start = *at;
    while lines
        .get(*at)
        .is_some_and(|l| l.text.is_empty() || l.indent > indent)
    {
        *at += 1;
    }
    // Trailing blank lines belong to what follows.
    while *at > start && lines[*at - 1].text.is_empty() {
        *at -= 1;
    }
    let body = &lines[start..*at];
    let common = body
        .iter()
        .filter(|l| !l.text.is_empty())
        .map(|l| l.indent)
        .min()
        .unwrap_or(0);
    let mut text: String = body
        .iter()
        .map(|l| {
            if l.text.is_empty() {
                String::new()
            } else {
                format!("{}{}", " ".repeat(l.indent - common), l.text)
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    if keep_newline {
        text.push('\n');
    }
    Value::String(text)
}

/// `key: rest` (the key plain or quoted), or `None`.
fn key_value(text: &str) -> Option<(&str, &str)> {
    let end = match text.chars().next()? {
        q @ ('"' | '\'') => text[1..].find(q)? + 2,
        _ => 0,
    };
    let colon = end + text[end..].find(':')?;
    let rest = &text[colon + 1..];
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((text[..colon].trim(), rest.trim()))
}

/// The text before a ` #` comment outside quotes.
fn strip_comment(text: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if previous == ' ' => return text[..i].trim_end(),
            _ => {}
        }
        previous = c;
    }
    text.trim_end()
}

fn scalar(text: &str, number: usize) -> Result<Value, String> {
    let text = strip_comment(text);
    let refuse = |what: &str| Err(format!("line {number}: {what} is not read here: {text}"));
    if let Some(inner) = text.strip_prefix('"') {
        let Some(inner) = inner.strip_suffix('"') else {
            return refuse("a multi-line or unterminated string");
        };
        if inner.contains('\\') {
            return refuse("an escape sequence");
        }
        return Ok(Value::String(inner.to_string()));
    }
    if let Some(inner) = text.strip_prefix('\'') {
        let Some(inner) = inner.strip_suffix('\'') else {
            return refuse("a multi-line or unterminated string");
        };
        return Ok(Value::String(inner.replace("''", "'")));
    }
    if let Some(inner) = text.strip_prefix('[') {
        let Some(inner) = inner.strip_suffix(']') else {
            return refuse("a multi-line flow sequence");
        };
        if inner.trim().is_empty() {
            return Ok(Value::Array(Vec::new()));
        }
        return inner
            .split(',')
            .map(|item| scalar(item.trim(), number))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array);
    }
    if text == "{}" {
        return Ok(Value::Object(Map::new()));
    }
    if text.starts_with(['&', '*', '!', '{', '>', '|', '%', '@', '`']) {
        return refuse("this kind of node");
    }
    Ok(match text {
        "" | "~" | "null" => Value::Null,
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => match text.parse::<i64>() {
            Ok(n) => Value::from(n),
            Err(_) => Value::String(text.to_string()),
        },
    })
}
