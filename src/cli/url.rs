//! The target URL, split into the parts the engine connects to and the Lua API exposes.
//!
//! A load generator needs only scheme, host, port and request target, so a small strict parser
//! is enough and its errors can say exactly what is wrong. It follows wrk (scheme and host
//! required, IPv6 literals in brackets, `/` when there is no path) with two differences: the
//! `#fragment` is dropped, as browsers and curl do, instead of being sent; and characters that
//! would corrupt the request line (spaces, control characters) are rejected up front.

use std::net::Ipv6Addr;

use crate::plan::{Scheme, Target};

/// Parses `url` (as typed). The error is the reason only; the caller adds the URL.
pub fn parse_url(url: &str) -> Result<Target, String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err("expected http://host[:port][/path] or https://...".to_string());
    };
    let scheme = if scheme.eq_ignore_ascii_case("http") {
        Scheme::Http
    } else if scheme.eq_ignore_ascii_case("https") {
        Scheme::Https
    } else {
        return Err("scheme must be http or https".to_string());
    };

    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let (host, explicit_port) = parse_authority(authority)?;
    let path = request_target(path)?;

    Ok(Target {
        url: url.to_string(),
        scheme,
        host,
        explicit_port,
        path,
    })
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn parse_authority(authority: &str) -> Result<(String, Option<u16>), String> {
    if authority.contains('@') {
        return Err(
            "credentials in the URL are not supported; send them with -H 'Authorization: ...'"
                .to_string(),
        );
    }
    let (host, port) = if let Some(bracketed) = authority.strip_prefix('[') {
        let Some((literal, after)) = bracketed.split_once(']') else {
            return Err("missing ']' after the IPv6 address".to_string());
        };
        // A zone (`fe80::1%eth0`) is allowed; the address before it must be valid.
        let address = literal.split('%').next().unwrap_or_default();
        if address.parse::<Ipv6Addr>().is_err() {
            return Err(format!("'{literal}' is not an IPv6 address"));
        }
        let port = match after {
            "" => None,
            _ => match after.strip_prefix(':') {
                Some(port) => Some(port),
                None => return Err(format!("unexpected '{after}' after the IPv6 address")),
            },
        };
        (literal, port)
    } else {
        match authority.split_once(':') {
            Some((_, port)) if port.contains(':') => {
                return Err(
                    "an IPv6 address must be in brackets, e.g. http://[::1]:8080/".to_string(),
                )
            }
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };

    if host.is_empty() {
        return Err("missing host".to_string());
    }
    if let Some(bad) = host.chars().find(|&c| !is_host_char(c)) {
        return Err(format!("host contains the character {bad:?}"));
    }
    let port = port.map(parse_port).transpose()?;
    Ok((host.to_string(), port))
}

/// Reg-name characters (RFC 3986) plus what an IPv6 literal with a zone needs.
fn is_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~%!$&'()*+,;=:".contains(c)
}

fn parse_port(port: &str) -> Result<u16, String> {
    match port.parse::<u16>() {
        Ok(p) if p >= 1 && port.bytes().all(|b| b.is_ascii_digit()) => Ok(p),
        _ if port.is_empty() => Err("missing port number after ':'".to_string()),
        _ => Err(format!("port '{port}' must be a number from 1 to 65535")),
    }
}

/// Path and query as sent on the request line; `/` when empty; fragment dropped.
fn request_target(path: &str) -> Result<String, String> {
    let path = path.split('#').next().unwrap_or_default();
    if let Some(bad) = path.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the path contains {bad:?}; percent-encode it (a space is %20)"
        ));
    }
    Ok(match path {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: &str) -> Target {
        match parse_url(url) {
            Ok(t) => t,
            Err(e) => panic!("{url}: {e}"),
        }
    }

    #[test]
    fn plain_http_without_path() {
        let t = target("http://localhost");
        assert_eq!(t.url, "http://localhost");
        assert_eq!(t.scheme, Scheme::Http);
        assert_eq!(t.host, "localhost");
        assert_eq!(t.explicit_port, None);
        assert_eq!(t.port(), 80);
        assert_eq!(t.path, "/");
        assert_eq!(t.host_header(), "localhost");
    }

    #[test]
    fn https_with_port_path_and_query() {
        let t = target("HTTPS://Example.com:8443/a/b?x=1&y=2");
        assert_eq!(t.url, "HTTPS://Example.com:8443/a/b?x=1&y=2");
        assert_eq!(t.scheme, Scheme::Https);
        assert_eq!(t.host, "Example.com");
        assert_eq!(t.explicit_port, Some(8443));
        assert_eq!(t.path, "/a/b?x=1&y=2");
        assert_eq!(t.host_header(), "Example.com:8443");
        assert_eq!(target("https://h").port(), 443);
    }

    #[test]
    fn query_without_path() {
        assert_eq!(target("http://h?q=1").path, "/?q=1");
        assert_eq!(target("http://h:81?q=1").explicit_port, Some(81));
    }

    #[test]
    fn fragment_is_dropped() {
        assert_eq!(target("http://h/p/a?q=1#frag").path, "/p/a?q=1");
        assert_eq!(target("http://h#frag").path, "/");
        assert_eq!(target("http://h/#frag").path, "/");
        assert_eq!(target("http://h/p#frag").url, "http://h/p#frag");
    }

    #[test]
    fn ipv6_literals() {
        let t = target("http://[::1]:8080/x");
        assert_eq!(t.host, "::1");
        assert_eq!(t.explicit_port, Some(8080));
        assert_eq!(t.path, "/x");
        assert_eq!(t.host_header(), "[::1]:8080");

        let t = target("https://[2001:db8::5]");
        assert_eq!(t.host, "2001:db8::5");
        assert_eq!(t.explicit_port, None);
        assert_eq!(t.path, "/");
        assert_eq!(t.host_header(), "[2001:db8::5]");

        assert_eq!(target("http://[fe80::1%25eth0]/").host, "fe80::1%25eth0");
    }

    #[test]
    fn ports() {
        assert_eq!(target("http://h:1/").explicit_port, Some(1));
        assert_eq!(target("http://h:65535/").explicit_port, Some(65535));
        assert_eq!(target("http://h:080/").explicit_port, Some(80));
        for bad in [
            "http://h:0/",
            "http://h:65536/",
            "http://h:-1/",
            "http://h:+80/",
            "http://h:http/",
            "http://h:/",
            "http://[::1]:/",
            "http://[::1]:99999/",
        ] {
            assert!(parse_url(bad).unwrap_err().contains("port"), "{bad}");
        }
    }

    #[test]
    fn bad_urls() {
        let cases = [
            ("ftp://x", "scheme must be http or https"),
            ("ws://x/", "scheme must be http or https"),
            ("localhost:8080", "expected http://"),
            ("http:/x", "expected http://"),
            ("", "expected http://"),
            ("http://", "missing host"),
            ("http:///path", "missing host"),
            ("http://:80/", "missing host"),
            ("http://[]/", "not an IPv6 address"),
            ("http://[::1/", "missing ']'"),
            ("http://[::1]x/", "unexpected 'x'"),
            ("http://[zz]/", "not an IPv6 address"),
            ("http://::1/", "in brackets"),
            ("http://u:p@h/", "credentials"),
            ("http://exa mple/", "host contains"),
            ("http://h/a b", "percent-encode"),
            ("http://h/a\r\nX: y", "percent-encode"),
        ];
        for (url, reason) in cases {
            match parse_url(url) {
                Ok(t) => panic!("{url:?} parsed as {t:?}"),
                Err(e) => assert!(e.contains(reason), "{url:?}: {e}"),
            }
        }
    }
}
