//! `-H "Name: value"`: validated here so that a typo is an error, not a silently missing
//! header (wrk drops `-H "X-A:nospace"` without a word, wg/wrk#404) or a broken request.

/// Parses one `-H` argument into `(name, value)`. The space after the colon is optional; the
/// value loses its leading whitespace. The error is the reason only.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once(':') else {
        return Err("expected 'Name: value'".to_string());
    };
    if name.is_empty() {
        return Err("the header name is empty (expected 'Name: value')".to_string());
    }
    if let Some(bad) = name.chars().find(|&c| !is_token_char(c)) {
        return Err(format!(
            "the header name '{name}' contains {bad:?} (expected 'Name: value')"
        ));
    }
    let value = value.trim_start_matches([' ', '\t']);
    if let Some(bad) = value.chars().find(|&c| c.is_control() && c != '\t') {
        return Err(format!("the header value contains {bad:?}"));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Adds a header; a later duplicate name (case-insensitive) replaces the earlier value in the
/// earlier position, as wrk's `wrk.headers` table keeps only the last value.
pub fn add_header(headers: &mut Vec<(String, String)>, name: String, value: String) {
    match headers
        .iter_mut()
        .find(|(existing, _)| existing.eq_ignore_ascii_case(&name))
    {
        Some(slot) => *slot = (name, value),
        None => headers.push((name, value)),
    }
}

/// RFC 9110 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(name: &str, value: &str) -> Result<(String, String), String> {
        Ok((name.to_string(), value.to_string()))
    }

    #[test]
    fn with_and_without_space() {
        assert_eq!(parse_header("X-A: 1"), pair("X-A", "1"));
        assert_eq!(parse_header("X-A:nospace"), pair("X-A", "nospace"));
        assert_eq!(parse_header("X-A:   \tpadded "), pair("X-A", "padded "));
        assert_eq!(parse_header("X-Empty:"), pair("X-Empty", ""));
        assert_eq!(parse_header("Host: a:8080"), pair("Host", "a:8080"));
        assert_eq!(
            parse_header("Authorization: Basic a2V5:c2VjcmV0"),
            pair("Authorization", "Basic a2V5:c2VjcmV0")
        );
    }

    #[test]
    fn rejects_bad_headers() {
        for bad in [
            "NoColon",
            "",
            ": value",
            ":",
            " X: y",
            "X Y: z",
            "X : y",
            "X: a\r\nY: b",
        ] {
            assert!(parse_header(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn later_duplicates_replace_in_place() {
        let mut headers = Vec::new();
        for (name, value) in [("X-B", "b"), ("Accept", "*/*"), ("x-b", "c"), ("X-C", "d")] {
            add_header(&mut headers, name.to_string(), value.to_string());
        }
        let expected = [("x-b", "c"), ("Accept", "*/*"), ("X-C", "d")];
        assert_eq!(headers.len(), expected.len());
        for ((name, value), (want_name, want_value)) in headers.iter().zip(expected) {
            assert_eq!((name.as_str(), value.as_str()), (want_name, want_value));
        }
    }
}
