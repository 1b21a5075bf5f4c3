//! The endpoint URL: validation, redaction, query-parameter auth.

use http::Uri;
use http::uri::{PathAndQuery, Scheme};

/// What an endpoint shows in errors and logs when it cannot be shown safely.
pub const REDACTED: &str = "<redacted>";

/// The endpoint as errors and logs may show it: scheme and `host[:port]`
/// only, never the path, the query or credentials.
///
/// Anything that does not parse as an absolute `http`/`https` URL, and any
/// URL with userinfo, becomes `<redacted>`.
///
/// ```
/// use mcp_http::redact_endpoint;
/// assert_eq!(redact_endpoint("https://api.example.com:8443/mcp?key=s3cret"), "https://api.example.com:8443");
/// assert_eq!(redact_endpoint("https://user:pw@example.com/mcp"), "<redacted>");
/// assert_eq!(redact_endpoint("ftp://example.com/"), "<redacted>");
/// assert_eq!(redact_endpoint("unix:/run/mcp.sock#/mcp"), "unix:/run/mcp.sock");
/// ```
pub fn redact_endpoint(url: &str) -> String {
    if let Some(unix) = unix_endpoint(url) {
        return match unix {
            Ok((socket, _)) => redact_socket(&socket),
            Err(_) => REDACTED.to_owned(),
        };
    }
    match url.parse::<Uri>() {
        Ok(uri) => redact_uri(&uri),
        Err(_) => REDACTED.to_owned(),
    }
}

/// How a socket endpoint shows: `unix:` and its path (no secret is
/// written in a socket's path; a path that is not valid UTF-8 shows lossily).
pub(crate) fn redact_socket(socket: &std::path::Path) -> String {
    format!("{UNIX_SCHEME}{}", socket.display())
}

/// [`redact_endpoint`] for a parsed URI.
pub(crate) fn redact_uri(uri: &Uri) -> String {
    let scheme = match uri.scheme_str() {
        Some(s) if s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https") => s,
        _ => return REDACTED.to_owned(),
    };
    match uri.authority() {
        Some(a) if !a.as_str().contains('@') && !a.as_str().is_empty() => {
            let mut redacted = String::with_capacity(scheme.len() + 3 + a.as_str().len());
            redacted.push_str(scheme);
            redacted.make_ascii_lowercase();
            redacted.push_str("://");
            redacted.push_str(a.as_str());
            redacted
        }
        _ => REDACTED.to_owned(),
    }
}

/// The scheme of an endpoint on a Unix domain socket.
pub(crate) const UNIX_SCHEME: &str = "unix:";

/// The request path of a `unix:` endpoint that names none.
const UNIX_DEFAULT_PATH: &str = "/mcp";

/// A `unix:/path/to/socket[#/request/path]` endpoint as the socket's path
/// and the URL its requests name (`http://localhost` and the request path,
/// `/mcp` when none is given); `None` when `url` is not of that form.
/// An error says what is wrong without repeating the text.
pub fn unix_endpoint(url: &str) -> Option<Result<(std::path::PathBuf, String), String>> {
    let rest = url.strip_prefix(UNIX_SCHEME)?;
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let (socket, path) = match rest.split_once('#') {
        Some((socket, path)) => (socket, path),
        None => (rest, UNIX_DEFAULT_PATH),
    };
    Some(if socket.is_empty() {
        Err("a unix: endpoint names no socket (unix:/path/to/socket)".into())
    } else if !path.starts_with('/') || path.contains(char::is_whitespace) {
        Err("the request path after # must start with / and hold no spaces".into())
    } else {
        Ok((std::path::PathBuf::from(socket), format!("http://localhost{path}")))
    })
}

/// A validated endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// The URL requests go to (the configured one, plus an auth query
    /// parameter when configured).
    pub(crate) uri: Uri,
    /// What errors and logs show.
    pub(crate) redacted: String,
}

impl Endpoint {
    /// Parses and checks an endpoint URL: absolute, `http` or `https`, a
    /// host, no userinfo. The reason never repeats the URL.
    pub(crate) fn parse(url: &str) -> Result<Endpoint, String> {
        let uri: Uri = url.parse().map_err(|e| format!("not a valid URL ({e})"))?;
        let scheme = uri.scheme().ok_or("not an absolute URL (no scheme)")?;
        if *scheme != Scheme::HTTP && *scheme != Scheme::HTTPS {
            return Err("the scheme must be http or https".into());
        }
        let authority = uri.authority().ok_or("the URL has no host")?;
        if authority.as_str().contains('@') {
            return Err(
                "credentials in the URL are not supported (use StaticAuth::Basic instead)".into()
            );
        }
        if host_and_port(authority.as_str()).0.is_empty() {
            return Err("the URL has no host".into());
        }
        let redacted = redact_uri(&uri);
        Ok(Endpoint { uri, redacted })
    }

    /// The same URL with the scheme's default port written out (a CONNECT
    /// tunnel needs the port; `http://h/` would otherwise tunnel to 443).
    pub(crate) fn with_explicit_port(mut self) -> Endpoint {
        self.uri = with_explicit_port(&self.uri);
        self
    }

    /// Appends `name=value` (percent-encoded) to the query, keeping the rest
    /// of the URL verbatim.
    pub(crate) fn with_query_param(mut self, name: &str, value: &str) -> Result<Endpoint, String> {
        let mut parts = self.uri.into_parts();
        let (path, query) = match &parts.path_and_query {
            Some(pq) => (pq.path().to_owned(), pq.query().map(str::to_owned)),
            None => ("/".to_owned(), None),
        };
        let pair = format!("{}={}", percent_encode(name), percent_encode(value));
        let pq = match query {
            Some(q) if !q.is_empty() => format!("{path}?{q}&{pair}"),
            _ => format!("{path}?{pair}"),
        };
        parts.path_and_query =
            Some(pq.parse::<PathAndQuery>().map_err(|_| "the query parameter cannot be encoded")?);
        self.uri = Uri::from_parts(parts).map_err(|_| "the query parameter cannot be encoded")?;
        Ok(self)
    }
}

/// Resolves a URI reference (a 2024-11-05 `endpoint` event, a redirect's
/// `Location`) against the URL it came from, refusing another origin
/// (scheme, host and port must be the base URL's, no userinfo). Dot
/// segments are not normalised. The error never repeats the URI.
pub(crate) fn resolve_same_origin(base: &Uri, reference: &str) -> Result<Uri, String> {
    let reference = reference.trim();
    let scheme = base.scheme_str().ok_or("the base URL has no scheme")?;
    let authority = base.authority().ok_or("the base URL has no host")?.as_str();
    let text = if reference.starts_with("//") {
        format!("{scheme}:{reference}")
    } else if reference.starts_with('/') {
        format!("{scheme}://{authority}{reference}")
    } else if reference.contains("://") {
        reference.to_owned()
    } else {
        let path = base.path();
        let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
        let dir = if dir.is_empty() { "/" } else { dir };
        format!("{scheme}://{authority}{dir}{reference}")
    };
    let uri: Uri = text.parse().map_err(|_| "it is not a valid URI")?;
    let same_scheme = uri.scheme_str().is_some_and(|s| s.eq_ignore_ascii_case(scheme));
    let same_authority =
        uri.authority().is_some_and(|a| a.as_str().eq_ignore_ascii_case(authority));
    if !same_scheme || !same_authority {
        return Err("it names another origin; refused".into());
    }
    Ok(uri)
}

/// An authority's host and its port (the text and the number), as
/// [`Authority::host`](http::uri::Authority::host) and
/// [`Authority::port`](http::uri::Authority::port) give them: the host
/// after any userinfo, with an IPv6 literal's brackets; the port after
/// the last `:`, when that text is a `u16`.
///
/// Found in one pass over the bytes from the end (those methods search
/// the text for `char`s, each on its own, a few hundred instructions a
/// call, and a client asks for its endpoint's host four or five times in
/// its start).
pub(crate) fn host_and_port(authority: &str) -> (&str, Option<(&str, u16)>) {
    let bytes = authority.as_bytes();
    // After the userinfo: the first `:` (the host's end, unless the host
    // is bracketed) and the last (the port's start).
    let (mut start, mut first_colon, mut last_colon) = (0, None, None);
    for (i, &b) in bytes.iter().enumerate().rev() {
        if b == b':' {
            last_colon.get_or_insert(i);
            first_colon = Some(i);
        } else if b == b'@' {
            start = i + 1;
            break;
        }
    }
    let host_end = if bytes.get(start) == Some(&b'[') {
        bytes[start..].iter().position(|&b| b == b']').map_or(bytes.len(), |i| start + i + 1)
    } else {
        first_colon.unwrap_or(bytes.len())
    };
    let port = last_colon.and_then(|i| {
        let text = &authority[i + 1..];
        text.parse::<u16>().ok().map(|n| (text, n))
    });
    (&authority[start..host_end], port)
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub(crate) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        }
    }
    out
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// `uri` with the scheme's default port written out when it has none
/// (80 for `http`, 443 otherwise).
pub(crate) fn with_explicit_port(uri: &Uri) -> Uri {
    let (Some(authority), Some(scheme)) = (uri.authority(), uri.scheme_str()) else {
        return uri.clone();
    };
    if authority.port().is_some() {
        return uri.clone();
    }
    let port = if scheme.eq_ignore_ascii_case("http") { 80 } else { 443 };
    let mut parts = uri.clone().into_parts();
    match format!("{}:{port}", authority.as_str()).parse() {
        Ok(a) => parts.authority = Some(a),
        Err(_) => return uri.clone(),
    }
    Uri::from_parts(parts).unwrap_or_else(|_| uri.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction() {
        let cases = [
            ("https://example.com/mcp", "https://example.com"),
            ("http://127.0.0.1:8080/a/b?token=abc", "http://127.0.0.1:8080"),
            ("HTTPS://Example.com:443/", "https://Example.com:443"),
            ("https://[::1]:9/mcp", "https://[::1]:9"),
            ("https://user@example.com/", REDACTED),
            ("https://user:secret@example.com/", REDACTED),
            ("ftp://example.com/", REDACTED),
            ("file:///etc/passwd", REDACTED),
            ("/relative/path", REDACTED),
            ("not a url at all", REDACTED),
            ("", REDACTED),
        ];
        for (input, expected) in cases {
            assert_eq!(redact_endpoint(input), expected, "{input}");
        }
    }

    #[test]
    fn parse_accepts_and_refuses() {
        let ok = Endpoint::parse("http://127.0.0.1:1/mcp?x=1").unwrap();
        assert_eq!(ok.uri.to_string(), "http://127.0.0.1:1/mcp?x=1");
        assert_eq!(ok.redacted, "http://127.0.0.1:1");
        for bad in ["ftp://h/", "/mcp", "https://u:p@h/", "http://", "::"] {
            let err = Endpoint::parse(bad).unwrap_err();
            assert!(!err.contains("u:p"), "{err}");
        }
    }

    #[test]
    fn legacy_endpoints_resolve_within_the_origin() {
        let base: Uri = "http://127.0.0.1:8080/mcp/sse?x=1".parse().unwrap();
        let ok = [
            ("/message?sessionId=abc", "http://127.0.0.1:8080/message?sessionId=abc"),
            ("message?s=1", "http://127.0.0.1:8080/mcp/message?s=1"),
            (" http://127.0.0.1:8080/m ", "http://127.0.0.1:8080/m"),
            ("//127.0.0.1:8080/m", "http://127.0.0.1:8080/m"),
        ];
        for (reference, expected) in ok {
            assert_eq!(resolve_same_origin(&base, reference).unwrap().to_string(), expected);
        }
        let refused = [
            "http://evil.example/m?token=secret",
            "https://127.0.0.1:8080/m",
            "http://127.0.0.1:8081/m",
            "//evil.example/m",
            "http://user@127.0.0.1:8080/m",
        ];
        for reference in refused {
            let err = resolve_same_origin(&base, reference).unwrap_err();
            assert!(!err.contains("evil") && !err.contains("secret"), "{err}");
        }
        let root: Uri = "http://h".parse().unwrap();
        assert_eq!(resolve_same_origin(&root, "m").unwrap().to_string(), "http://h/m");
    }

    #[test]
    fn host_and_port_are_the_authority_methods() {
        // Authorities as endpoints, redirects, the 2024-11-05 endpoint
        // event and OAuth's URLs give them, and near misses: userinfo
        // (with `:` and `@` in it), IPv6 literals with and without a
        // port or a zone, ports with leading zeros, out of range, empty,
        // signed, and names with odd characters.
        let authorities = [
            "127.0.0.1:3000",
            "127.0.0.1",
            "localhost:80",
            "example.com",
            "Example.COM:443",
            "[::1]",
            "[::1]:8080",
            "[fe80::1%25eth0]:9",
            "[::ffff:127.0.0.1]:0",
            "h:0080",
            "h:080",
            "h:0",
            "h:65535",
            "h:65536",
            "h:",
            "h:+80",
            "u@h",
            "u@h:1",
            "u:p@h:2",
            "u:p@[::1]:3",
            "a@b@c:4",
            "u%40x:p%3A@h.example:5",
            "xn--bcher-kva.example:6",
            "sub-delims!$&'()*+,;=.example",
            "h.example.:7",
            "1.2.3.4:99999",
        ];
        for text in authorities {
            let authority: http::uri::Authority = text.parse().unwrap();
            let (host, port) = host_and_port(authority.as_str());
            assert_eq!(host, authority.host(), "{text}");
            let expected = authority.port().map(|p| (p.as_str().to_owned(), p.as_u16()));
            assert_eq!(port.map(|(t, n)| (t.to_owned(), n)), expected, "{text}");
        }
        // What no parsed authority holds still gives an answer.
        assert_eq!(host_and_port(""), ("", None));
        assert_eq!(host_and_port("u@"), ("", None));
        assert_eq!(host_and_port("[::1"), ("[::1", Some(("1", 1))));
    }

    #[test]
    fn query_param_is_appended_verbatim() {
        let cases = [
            ("http://h/mcp", "k", "v", "http://h/mcp?k=v"),
            (
                "http://h/mcp?a=1",
                "api key",
                "a&b=c/ü",
                "http://h/mcp?a=1&api%20key=a%26b%3Dc%2F%C3%BC",
            ),
            ("http://h", "k", "v", "http://h/?k=v"),
            ("http://h/mcp?", "k", "v", "http://h/mcp?k=v"),
        ];
        for (url, name, value, expected) in cases {
            let e = Endpoint::parse(url).unwrap().with_query_param(name, value).unwrap();
            assert_eq!(e.uri.to_string(), expected);
            assert!(!e.redacted.contains(value));
        }
    }
}
