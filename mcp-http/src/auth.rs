//! Static credentials applied to every request.

use std::fmt;

use base64::Engine as _;
use http::{HeaderName, HeaderValue};

/// Credentials that do not change during a session, added to every request
/// to the endpoint (and only to it: redirects are not followed).
///
/// Values are checked when the client is built: a header value holding CR,
/// LF or NUL, or an invalid header name, is refused with
/// [`Error::InvalidAuth`](crate::Error::InvalidAuth). Header values are
/// marked sensitive (HTTP/2 never indexes them). `Debug` never shows a
/// secret.
#[derive(Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum StaticAuth {
    /// No credentials.
    #[default]
    None,
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// `Authorization: Basic <base64(username:password)>`.
    Basic {
        /// The user name (must not contain `:`).
        username: String,
        /// The password.
        password: String,
    },
    /// One custom header, e.g. `X-API-Key: ...`.
    Header {
        /// The header name.
        name: String,
        /// The header value.
        value: String,
    },
    /// Several custom headers.
    Headers(Vec<(String, String)>),
    /// A query parameter appended to the endpoint URL (for servers that
    /// want `?api_key=...`; prefer a header when the server allows it).
    Query {
        /// The parameter name.
        name: String,
        /// The parameter value (percent-encoded when appended).
        value: String,
    },
}

impl fmt::Debug for StaticAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StaticAuth::None => f.write_str("None"),
            StaticAuth::Bearer(_) => f.write_str("Bearer(<redacted>)"),
            StaticAuth::Basic { username, .. } => f
                .debug_struct("Basic")
                .field("username", username)
                .field("password", &"<redacted>")
                .finish(),
            StaticAuth::Header { name, .. } => {
                f.debug_struct("Header").field("name", name).field("value", &"<redacted>").finish()
            }
            StaticAuth::Headers(h) => {
                let names: Vec<&str> = h.iter().map(|(n, _)| n.as_str()).collect();
                f.debug_tuple("Headers").field(&names).finish()
            }
            StaticAuth::Query { name, .. } => {
                f.debug_struct("Query").field("name", name).field("value", &"<redacted>").finish()
            }
        }
    }
}

/// Headers the transport itself sets: a static credential may not replace them.
const RESERVED: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "host",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "mcp-session-id",
    "transfer-encoding",
    "connection",
];

/// [`StaticAuth`] checked and turned into what goes on the wire.
#[derive(Debug, Default)]
pub(crate) struct AuthParts {
    /// Headers for every request.
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    /// A query parameter for the URL.
    pub(crate) query: Option<(String, String)>,
    /// Strings that must never appear in an error or a log.
    pub(crate) secrets: Secrets,
}

impl StaticAuth {
    /// Checks the credentials and turns them into headers or a query
    /// parameter. The error names what is wrong, never the secret.
    pub(crate) fn to_parts(&self) -> Result<AuthParts, String> {
        let mut parts = AuthParts::default();
        match self {
            StaticAuth::None => {}
            StaticAuth::Bearer(token) => {
                let token = token.trim();
                if token.is_empty() {
                    return Err("the bearer token is empty".into());
                }
                check_value("Authorization", token)?;
                parts.secrets.add(token);
                parts.push("authorization", &format!("Bearer {token}"))?;
            }
            StaticAuth::Basic { username, password } => {
                if username.contains(':') {
                    return Err("the basic-auth user name contains ':'".into());
                }
                check_value("Authorization", username)?;
                check_value("Authorization", password)?;
                let encoded = base64::engine::general_purpose::STANDARD
                    .encode(format!("{username}:{password}"));
                parts.secrets.add(password);
                parts.secrets.add(&encoded);
                parts.push("authorization", &format!("Basic {encoded}"))?;
            }
            StaticAuth::Header { name, value } => parts.push_custom(name, value)?,
            StaticAuth::Headers(list) => {
                for (name, value) in list {
                    parts.push_custom(name, value)?;
                }
            }
            StaticAuth::Query { name, value } => {
                if name.is_empty() {
                    return Err("the query parameter name is empty".into());
                }
                parts.secrets.add(value);
                parts.query = Some((name.clone(), value.clone()));
            }
        }
        Ok(parts)
    }
}

impl AuthParts {
    fn push(&mut self, name: &str, value: &str) -> Result<(), String> {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("{name:?} is not a valid header name"))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header {name:?} is not a valid header value"))?;
        value.set_sensitive(true);
        self.headers.push((header, value));
        Ok(())
    }

    fn push_custom(&mut self, name: &str, value: &str) -> Result<(), String> {
        if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(name)) {
            return Err(format!(
                "header {name:?} is set by the transport and cannot be configured"
            ));
        }
        check_value(name, value)?;
        self.secrets.add_header_value(value);
        self.push(name, value)
    }
}

fn check_value(name: &str, value: &str) -> Result<(), String> {
    if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(format!("the value of header {name:?} contains CR, LF or NUL"));
    }
    Ok(())
}

/// `%XX` escapes (and `+` as a space) decoded, lossily.
fn percent_decode(s: &str) -> String {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).map(|d| d as u8)
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%' && i + 2 < bytes.len())
            .then(|| Some(hex(bytes[i + 1])? * 16 + hex(bytes[i + 2])?))
            .flatten();
        match (escaped, bytes[i]) {
            (Some(b), _) => {
                out.push(b);
                i += 3;
                continue;
            }
            (None, b'+') => out.push(b' '),
            (None, b) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Strings scrubbed from anything shown to a user (error body excerpts,
/// connection errors, JSON-RPC error messages from the server).
#[derive(Debug, Default, Clone)]
pub(crate) struct Secrets(Vec<String>);

impl Secrets {
    fn add(&mut self, s: &str) {
        // Very short values would scrub ordinary words; they are not
        // credentials worth the name anyway.
        if s.len() >= 4 && !self.0.iter().any(|x| x == s) {
            self.0.push(s.to_owned());
            // Longest first: a secret that contains another is scrubbed
            // whole.
            self.0.sort_by_key(|x| std::cmp::Reverse(x.len()));
        }
    }

    /// A header value and the credentials inside it: `Bearer X` also
    /// gives `X` (a server may echo the bare token), `Basic B` also `B`
    /// and the password it encodes.
    pub(crate) fn add_header_value(&mut self, value: &str) {
        self.add(value);
        let mut words = value.split_ascii_whitespace();
        let (Some(scheme), Some(credential), None) = (words.next(), words.next(), words.next())
        else {
            return;
        };
        self.add(credential);
        if scheme.eq_ignore_ascii_case("basic")
            && let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(credential)
            && let Ok(text) = String::from_utf8(decoded)
            && let Some((_, password)) = text.split_once(':')
        {
            self.add(password);
        }
    }

    /// The secrets a URL carries: its query values (as written and
    /// percent-decoded) and its userinfo.
    pub(crate) fn add_url(&mut self, url: &str) {
        // Neither userinfo nor a query: nothing to keep (the usual URL).
        // Looked for byte by byte: a search for either of two `char`s
        // costs every new client a few hundred instructions.
        if !url.bytes().any(|b| b == b'@' || b == b'?') {
            return;
        }
        let rest = url.split_once("://").map_or(url, |(_, r)| r);
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        if let Some((userinfo, _)) = rest[..authority_end].rsplit_once('@') {
            self.add(userinfo);
            for part in userinfo.split(':') {
                self.add(part);
                self.add(&percent_decode(part));
            }
        }
        let Some((_, query)) = url.split_once('?') else { return };
        let query = query.split('#').next().unwrap_or_default();
        for pair in query.split('&') {
            if let Some((_, value)) = pair.split_once('=') {
                self.add(value);
                self.add(&percent_decode(value));
            }
        }
    }

    /// Whether there is nothing to scrub.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with every secret replaced by `<redacted>`.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for s in &self.0 {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "<redacted>");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_pairs(auth: &StaticAuth) -> Vec<(String, String)> {
        let parts = auth.to_parts().unwrap();
        parts
            .headers
            .iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
            .collect()
    }

    #[test]
    fn secrets_inside_header_values_and_urls() {
        let mut s = Secrets::default();
        s.add_header_value("Bearer tok-123456");
        s.add_header_value("Basic YWxpY2U6cGFzc3dvcmQtOTk=");
        s.add_url("https://u-name:p%40ss-word@example.com/mcp?api_key=k%2B9-secret&x=1#frag");
        let text = "tok-123456 YWxpY2U6cGFzc3dvcmQtOTk= password-99 p@ss-word k+9-secret k%2B9-secret u-name";
        let scrubbed = s.scrub(text);
        for secret in ["tok-123456", "password-99", "p@ss-word", "k+9-secret", "k%2B9", "u-name"] {
            assert!(!scrubbed.contains(secret), "{secret} in {scrubbed}");
        }
        // Short values (under 4 bytes) are not secrets worth scrubbing.
        assert!(s.scrub("x=1").contains('1'));
        assert_eq!(percent_decode("a%2Fb+c%zz%4"), "a/b c%zz%4");
    }

    #[test]
    fn a_url_without_userinfo_or_query_keeps_nothing() {
        let none = [
            "http://127.0.0.1:3000/mcp",
            "https://mcp.example.com",
            "https://[::1]:8443/a/b#frag",
            "https://mcp.example.com/caf\u{e9}/\u{1F600}",
            "unix:/run/mcp.sock#/mcp",
        ];
        let keeps = |url: &str| {
            let mut s = Secrets::default();
            s.add_url(url);
            !s.is_empty()
        };
        for url in none {
            assert!(!keeps(url), "{url}");
        }
        let some = [
            "https://user-name@example.com/mcp",
            "https://example.com/mcp?key=value-1234",
            "https://example.com/caf\u{e9}?k=\u{e9}t\u{e9}-secret",
            "https://example.com/?a=1&token=abcd1234",
        ];
        for url in some {
            assert!(keeps(url), "{url}");
        }
    }

    #[test]
    fn valid_credentials_become_headers() {
        let s = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        let cases = [
            (StaticAuth::None, vec![]),
            (StaticAuth::Bearer("tok-123".into()), vec![s("authorization", "Bearer tok-123")]),
            (
                StaticAuth::Basic { username: "aladdin".into(), password: "opensesame".into() },
                vec![s("authorization", "Basic YWxhZGRpbjpvcGVuc2VzYW1l")],
            ),
            (
                StaticAuth::Header { name: "X-API-Key".into(), value: "k1k1".into() },
                vec![s("x-api-key", "k1k1")],
            ),
            (
                StaticAuth::Headers(vec![s("X-A", "1"), s("X-B", "two")]),
                vec![s("x-a", "1"), s("x-b", "two")],
            ),
        ];
        for (auth, expected) in cases {
            assert_eq!(header_pairs(&auth), expected, "{auth:?}");
        }
        let parts = StaticAuth::Bearer("tok-123".into()).to_parts().unwrap();
        assert!(parts.headers[0].1.is_sensitive());
    }

    #[test]
    fn invalid_credentials_are_refused_without_the_secret() {
        let cases = [
            StaticAuth::Bearer("abc\r\nX-Evil: 1".into()),
            StaticAuth::Bearer("  ".into()),
            StaticAuth::Basic { username: "a:b".into(), password: "pw".into() },
            StaticAuth::Basic { username: "a".into(), password: "pw\nx".into() },
            StaticAuth::Header { name: "X-Key".into(), value: "v\r1".into() },
            StaticAuth::Header { name: "Bad Name".into(), value: "v".into() },
            StaticAuth::Header { name: "Mcp-Session-Id".into(), value: "v".into() },
            StaticAuth::Headers(vec![("X-A".into(), "ok".into()), ("X-B".into(), "\n".into())]),
            StaticAuth::Query { name: String::new(), value: "v".into() },
        ];
        for auth in cases {
            let err = auth.to_parts().unwrap_err();
            assert!(!err.contains("X-Evil") && !err.contains("pw"), "{err}");
        }
    }

    #[test]
    fn debug_hides_secrets() {
        let auth = StaticAuth::Headers(vec![("X-Key".into(), "hunter22".into())]);
        let text = format!(
            "{auth:?} {:?} {:?}",
            StaticAuth::Bearer("hunter22".into()),
            StaticAuth::Basic { username: "u".into(), password: "hunter22".into() }
        );
        assert!(!text.contains("hunter22"), "{text}");
        assert!(text.contains("X-Key"));
    }

    #[test]
    fn scrub_replaces_every_secret() {
        let parts = StaticAuth::Basic { username: "user".into(), password: "p4ssw0rd".into() }
            .to_parts()
            .unwrap();
        let text = parts.secrets.scrub("bad password p4ssw0rd in dXNlcjpwNHNzdzByZA==");
        assert_eq!(text, "bad password <redacted> in <redacted>");
    }
}
