//! URL rules of the spec: well-known URL construction, canonical resource
//! comparison, https-or-loopback, redaction and form/query encoding. Pure.

use http::Uri;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

use crate::error::Error;

/// Characters escaped in query strings and form bodies: everything but the
/// RFC 3986 unreserved set.
const QUERY: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// A parsed absolute `http`/`https` URL with an authority and no fragment.
pub(crate) fn parse_url(what: &'static str, s: &str) -> Result<Uri, Error> {
    if s.contains('#') {
        return Err(Error::InvalidUrl { what, reason: "contains a fragment" });
    }
    let uri: Uri =
        s.parse().map_err(|_| Error::InvalidUrl { what, reason: "not an absolute URL" })?;
    match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
        Some("http" | "https") => {}
        Some(_) => return Err(Error::InvalidUrl { what, reason: "scheme is not http or https" }),
        None => return Err(Error::InvalidUrl { what, reason: "not an absolute URL" }),
    }
    let Some(auth) = uri.authority() else {
        return Err(Error::InvalidUrl { what, reason: "has no host" });
    };
    if auth.as_str().contains('@') {
        return Err(Error::InvalidUrl { what, reason: "carries user information" });
    }
    Ok(uri)
}

/// Whether `host` (as `http::Uri::host` gives it) is a loopback host:
/// `localhost`, `127.0.0.0/8` or `::1`.
pub fn is_loopback_host(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    if h.eq_ignore_ascii_case("localhost") || h == "::1" {
        return true;
    }
    match h.parse::<std::net::Ipv4Addr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => false,
    }
}

/// Refuses a URL that is not `https`, unless its host is loopback.
pub(crate) fn require_secure(what: &'static str, url: &str) -> Result<(), Error> {
    let uri = parse_url(what, url)?;
    let https = uri.scheme_str().is_some_and(|s| s.eq_ignore_ascii_case("https"));
    if https || uri.host().is_some_and(is_loopback_host) {
        Ok(())
    } else {
        Err(Error::InsecureUrl { what, endpoint: redact(url) })
    }
}

/// A URL as scheme and `host[:port]` only; `<redacted>` for anything with
/// user information, another scheme, or unparsable.
pub fn redact(url: &str) -> String {
    match url.parse::<Uri>() {
        Ok(uri) => match (uri.scheme_str(), uri.authority()) {
            (Some(s), Some(a))
                if (s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"))
                    && !a.as_str().contains('@') =>
            {
                format!("{}://{}", s.to_ascii_lowercase(), a.as_str().to_ascii_lowercase())
            }
            _ => "<redacted>".to_owned(),
        },
        Err(_) => "<redacted>".to_owned(),
    }
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

/// `scheme://host[:port]`, lowercased, default port dropped.
pub(crate) fn origin(uri: &Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("https").to_ascii_lowercase();
    let host = uri.host().unwrap_or("").to_ascii_lowercase();
    match uri.port_u16() {
        Some(p) if p != default_port(&scheme) => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    }
}

/// Whether two URLs have the same origin (scheme, host, effective port;
/// scheme and host compared without case).
pub fn same_origin(a: &str, b: &str) -> bool {
    match (a.parse::<Uri>(), b.parse::<Uri>()) {
        (Ok(a), Ok(b)) => a.authority().is_some() && origin(&a) == origin(&b),
        _ => false,
    }
}

fn path_of(uri: &Uri) -> &str {
    uri.path()
}

/// Whether the protected resource metadata's `resource` identifies the MCP
/// server at `server` (RFC 8707 §2, RFC 9728 §3.3, as the MCP spec applies
/// them): same origin (scheme and host without case, default ports equal),
/// no query or fragment in `resource`, and the resource's path equal to the
/// server's path or a whole-segment prefix of it (a trailing slash ignored).
/// So `https://h` and `https://h/mcp` both identify `https://h/mcp`;
/// `https://h/m` does not.
pub fn resource_matches(resource: &str, server: &str) -> bool {
    let (Ok(r), Ok(s)) = (parse_url("resource", resource), parse_url("MCP server", server)) else {
        return false;
    };
    if r.query().is_some() || origin(&r) != origin(&s) {
        return false;
    }
    let rp = path_of(&r).trim_end_matches('/');
    let sp = path_of(&s).trim_end_matches('/');
    sp == rp || (sp.starts_with(rp) && sp.as_bytes().get(rp.len()) == Some(&b'/'))
}

/// The canonical URI of an MCP server, used as `resource` when no protected
/// resource metadata exists (2025-03-26 servers): lowercase scheme and host,
/// the path kept (no trailing slash for an empty path), query kept, fragment
/// refused.
pub(crate) fn canonical_server_uri(server: &Uri) -> String {
    let mut s = origin(server);
    let path = server.path();
    if path != "/" {
        s.push_str(path);
    }
    if let Some(q) = server.query() {
        s.push('?');
        s.push_str(q);
    }
    s
}

/// The protected resource metadata URLs to try when the challenge gave none,
/// in the spec's order: path-specific, then root (just root when the server
/// is at the root).
pub fn protected_resource_metadata_urls(server_url: &str) -> Result<Vec<String>, Error> {
    let uri = parse_url("MCP server", server_url)?;
    let origin = origin(&uri);
    let path = uri.path().trim_end_matches('/');
    let mut urls = Vec::with_capacity(2);
    if !path.is_empty() {
        urls.push(format!("{origin}/.well-known/oauth-protected-resource{path}"));
    }
    urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
    Ok(urls)
}

/// The authorization server metadata URLs for an issuer, in the spec's
/// order (RFC 8414 §3.1 and OpenID Connect Discovery, RFC 8414 §5):
///
/// - issuer with a path `/tenant1`: `/.well-known/oauth-authorization-server/tenant1`,
///   `/.well-known/openid-configuration/tenant1`, `/tenant1/.well-known/openid-configuration`;
/// - issuer without a path: `/.well-known/oauth-authorization-server`,
///   `/.well-known/openid-configuration`.
pub fn authorization_server_metadata_urls(issuer: &str) -> Result<Vec<String>, Error> {
    let uri = parse_url("authorization server", issuer)?;
    if uri.query().is_some() {
        return Err(Error::InvalidUrl {
            what: "authorization server",
            reason: "issuer has a query",
        });
    }
    let origin = origin(&uri);
    let path = uri.path().trim_end_matches('/');
    Ok(if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

/// Whether a metadata document's `issuer` names the issuer it was fetched
/// for (RFC 8414 §3.3: identical; a single trailing slash is tolerated, as
/// many servers differ there and the well-known URL is the same).
pub(crate) fn issuer_eq(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Whether an authorization response's `iss` is the recorded issuer
/// (RFC 9207 §2.4): simple string comparison, with no normalization of
/// case, default port, trailing slash or percent-encoding.
pub(crate) fn iss_matches(iss: &str, issuer: &str) -> bool {
    iss == issuer
}

/// `k=v&k=v` with RFC 3986 unreserved characters kept and everything else
/// percent-encoded (valid as a query and as `application/x-www-form-urlencoded`).
pub(crate) fn form_encode<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (k, v) in pairs {
        if !out.is_empty() {
            out.push('&');
        }
        out.extend(utf8_percent_encode(k, QUERY));
        out.push('=');
        out.extend(utf8_percent_encode(v, QUERY));
    }
    out
}

/// Percent-encodes one component for `application/x-www-form-urlencoded`
/// (used for the client id and secret of HTTP Basic, RFC 6749 §2.3.1).
pub(crate) fn form_component(s: &str) -> String {
    utf8_percent_encode(s, QUERY).to_string()
}

/// Appends query parameters to a URL that may already have a query.
pub(crate) fn append_query<'a>(
    url: &str,
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let q = form_encode(pairs);
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{q}")
}

/// The decoded query parameters of a URL (or of a bare query string):
/// `+` is a space, percent escapes are decoded (lossily for bad UTF-8).
pub fn query_params(url: &str) -> Vec<(String, String)> {
    let without_fragment = url.split('#').next().unwrap_or("");
    let query = match without_fragment.split_once('?') {
        Some((_, q)) => q,
        None if !without_fragment.contains("://") => without_fragment,
        None => "",
    };
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            let dec =
                |s: &str| percent_decode_str(&s.replace('+', " ")).decode_utf8_lossy().into_owned();
            (dec(k), dec(v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A URL without a query has no parameters (its text is not read as a
    /// bare query); a bare query string is read.
    #[test]
    fn query_params_of_urls_and_bare_queries() {
        assert!(query_params("https://as.example/cb").is_empty());
        assert!(query_params("http://127.0.0.1:3000/callback#x=1").is_empty());
        let pair = |k: &str, v: &str| (k.to_owned(), v.to_owned());
        assert_eq!(query_params("code=a+b&state=%41"), [pair("code", "a b"), pair("state", "A")]);
        assert_eq!(query_params("https://h/cb?code=1#state=2"), [pair("code", "1")]);
    }

    #[test]
    fn prm_url_order() {
        fn check(server: &str, expected: &[&str]) {
            assert_eq!(protected_resource_metadata_urls(server).unwrap(), expected, "{server}");
        }
        check(
            "https://example.com/public/mcp",
            &[
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ],
        );
        check("https://example.com", &["https://example.com/.well-known/oauth-protected-resource"]);
        check(
            "https://example.com/",
            &["https://example.com/.well-known/oauth-protected-resource"],
        );
        check(
            "HTTP://LOCALHOST:3000/mcp/",
            &[
                "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
                "http://localhost:3000/.well-known/oauth-protected-resource",
            ],
        );
        check(
            "https://example.com:443/mcp?x=1",
            &[
                "https://example.com/.well-known/oauth-protected-resource/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ],
        );
    }

    #[test]
    fn as_metadata_url_order() {
        fn check(issuer: &str, expected: &[&str]) {
            assert_eq!(authorization_server_metadata_urls(issuer).unwrap(), expected, "{issuer}");
        }
        check(
            "https://auth.example.com/tenant1",
            &[
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ],
        );
        check(
            "https://auth.example.com",
            &[
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ],
        );
        check(
            "https://auth.example.com/",
            &[
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ],
        );
        check(
            "http://127.0.0.1:9/a/b/",
            &[
                "http://127.0.0.1:9/.well-known/oauth-authorization-server/a/b",
                "http://127.0.0.1:9/.well-known/openid-configuration/a/b",
                "http://127.0.0.1:9/a/b/.well-known/openid-configuration",
            ],
        );
        assert!(authorization_server_metadata_urls("https://a.example/?x=1").is_err());
        assert!(authorization_server_metadata_urls("auth.example.com").is_err());
    }

    #[test]
    fn resource_matching() {
        let cases: &[(&str, &str, bool)] = &[
            ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true),
            ("https://mcp.example.com", "https://mcp.example.com/mcp", true),
            ("https://mcp.example.com/", "https://mcp.example.com/mcp", true),
            ("HTTPS://MCP.Example.com/mcp", "https://mcp.example.com/mcp", true),
            ("https://mcp.example.com:443/mcp", "https://mcp.example.com/mcp", true),
            ("https://mcp.example.com/mcp/", "https://mcp.example.com/mcp", true),
            ("https://mcp.example.com/server", "https://mcp.example.com/server/mcp", true),
            ("https://mcp.example.com/m", "https://mcp.example.com/mcp", false),
            ("https://mcp.example.com/mcp/x", "https://mcp.example.com/mcp", false),
            ("https://evil.example.com/mcp", "http://localhost:3000/mcp", false),
            ("http://mcp.example.com/mcp", "https://mcp.example.com/mcp", false),
            ("https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", false),
            ("https://mcp.example.com/mcp#frag", "https://mcp.example.com/mcp", false),
            ("https://mcp.example.com/mcp?x=1", "https://mcp.example.com/mcp", false),
            ("mcp.example.com", "https://mcp.example.com/mcp", false),
            ("http://localhost:3000", "http://localhost:3000/mcp", true),
        ];
        for (resource, server, expected) in cases {
            assert_eq!(resource_matches(resource, server), *expected, "{resource} vs {server}");
        }
    }

    #[test]
    fn secure_urls() {
        let cases: &[(&str, bool)] = &[
            ("https://a.example/x", true),
            ("http://a.example/x", false),
            ("http://localhost:1/x", true),
            ("http://LOCALHOST/x", true),
            ("http://127.0.0.1:8080/", true),
            ("http://127.9.9.9/", true),
            ("http://[::1]:80/", true),
            ("http://128.0.0.1/", false),
            ("ftp://a.example/", false),
            ("https://user:pw@a.example/", false),
        ];
        for (url, ok) in cases {
            assert_eq!(require_secure("test", url).is_ok(), *ok, "{url}");
        }
    }

    #[test]
    fn iss_comparison() {
        let issuer = "https://as.example/tenant";
        let cases: &[(&str, bool)] = &[
            ("https://as.example/tenant", true),
            ("https://as.example/tenant/", false),
            ("https://AS.example/tenant", false),
            ("HTTPS://as.example/tenant", false),
            ("https://as.example:443/tenant", false),
            ("https://as.example/%74enant", false),
            ("https://as.example", false),
        ];
        for (iss, same) in cases {
            assert_eq!(iss_matches(iss, issuer), *same, "{iss}");
        }
        // The metadata issuer check keeps its trailing-slash tolerance.
        assert!(issuer_eq("https://as.example/tenant/", issuer));
    }

    #[test]
    fn redaction() {
        let cases: &[(&str, &str)] = &[
            ("https://a.example/x?token=secret", "https://a.example"),
            ("HTTP://A.example:8080/p", "http://a.example:8080"),
            ("https://user:pw@a.example/", "<redacted>"),
            ("file:///etc/passwd", "<redacted>"),
            ("not a url", "<redacted>"),
        ];
        for (url, expected) in cases {
            assert_eq!(redact(url), *expected);
        }
    }

    #[test]
    fn encoding_round_trip() {
        let q = form_encode([("a b", "c&d=e"), ("u", "https://x.example/p?q=1"), ("t", "~-._")]);
        assert_eq!(q, "a%20b=c%26d%3De&u=https%3A%2F%2Fx.example%2Fp%3Fq%3D1&t=~-._");
        let back = query_params(&format!("http://h/cb?{q}"));
        assert_eq!(
            back,
            vec![
                ("a b".to_owned(), "c&d=e".to_owned()),
                ("u".to_owned(), "https://x.example/p?q=1".to_owned()),
                ("t".to_owned(), "~-._".to_owned()),
            ]
        );
        assert_eq!(
            query_params("code=a+b&state=x#frag"),
            vec![("code".to_owned(), "a b".to_owned()), ("state".to_owned(), "x".to_owned())]
        );
        assert_eq!(
            append_query("https://a/authorize?x=1", [("y", "2")]),
            "https://a/authorize?x=1&y=2"
        );
        assert_eq!(append_query("https://a/authorize", [("y", "2")]), "https://a/authorize?y=2");
    }

    #[test]
    fn canonical_uri() {
        let cases: &[(&str, &str)] = &[
            ("HTTPS://MCP.example.com/mcp", "https://mcp.example.com/mcp"),
            ("https://mcp.example.com/", "https://mcp.example.com"),
            ("https://mcp.example.com:443", "https://mcp.example.com"),
            ("http://localhost:3000/mcp", "http://localhost:3000/mcp"),
        ];
        for (input, expected) in cases {
            assert_eq!(canonical_server_uri(&input.parse().unwrap()), *expected);
        }
    }
}
