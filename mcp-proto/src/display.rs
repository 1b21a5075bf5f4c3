//! Showing what a server sends to a person, safely.
//!
//! Everything a server controls (its name and version, instructions, tool
//! names and descriptions, error messages, elicitation prompts, log
//! messages, tool results) is untrusted text. Written to a terminal as it
//! came, it can clear the screen, move the cursor and rewrite earlier
//! lines, set the window title, hide text, or reorder what is shown with
//! bidirectional overrides. [`terminal_safe`] makes such text inert: every
//! character that is not shown as itself comes out as a visible escape
//! (`\x1b`, `\u{9b}`, `\u{202e}`), and nothing else changes.
//!
//! A server may also ask its user to visit a URL (URL-mode elicitation).
//! [`openable_url`] decides whether such a URL may be handed to a system
//! opener: only `https`, or `http` to a loopback host, with no credentials
//! in it, nothing a command line could take as an option, and only visible
//! ASCII, so the URL a person reads is the URL that is opened.
//!
//! Both are pure functions: no I/O, no allocation when the text is clean.
//!
//! ```
//! use mcp_proto::display::{Lines, openable_url, terminal_safe};
//!
//! let name = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J";
//! assert_eq!(terminal_safe(name, Lines::Escape), r"evil\x1b]0;pwned\x07\x1b[2J");
//! assert_eq!(terminal_safe("two\nlines", Lines::Keep), "two\nlines");
//! assert_eq!(terminal_safe("two\nlines", Lines::Escape), r"two\nlines");
//!
//! let url = openable_url("https://auth.example.com/consent?x=1").unwrap();
//! assert_eq!(url.host(), "auth.example.com");
//! assert!(openable_url("file:///etc/passwd").is_err());
//! assert!(openable_url("https://bank.example@evil.example/").is_err());
//! ```

use std::borrow::Cow;
use std::fmt;
use std::fmt::Write as _;

/// What [`terminal_safe`] does with line breaks (`\n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// Kept: the text is shown on as many lines as it has (a tool's
    /// result, instructions).
    Keep,
    /// Shown as `\n`: the text belongs on one line (a name, a table cell,
    /// a log line), where a line break could pass for output of its own.
    Escape,
}

/// Whether a character is shown as an escape rather than as itself: C0
/// controls (ESC, BEL, CR, backspace, ...; not tab, and not line feed,
/// which [`Lines`] decides), DEL, C1 controls (CSI, OSC, ...),
/// bidirectional embeddings, overrides, isolates and marks, the line and
/// paragraph separators, invisible characters that can hide text between
/// visible ones (zero-width space, word joiner and the invisible
/// operators, the byte-order mark), and the tag characters, invisible in
/// terminals and used to smuggle text past a reader.
pub fn needs_escape(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{61c}' | '\u{180e}' | '\u{200b}' | '\u{200e}' | '\u{200f}'
        | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}'
        | '\u{feff}' | '\u{e0000}'..='\u{e007f}')
}

/// `text` made safe to write to a terminal: each character for which
/// [`needs_escape`] holds is written as a visible escape (`\xNN` below
/// U+0080, `\u{...}` above; `\r` for a carriage return), and line feeds
/// are kept or escaped as `lines` says. Text with nothing to escape is
/// returned as it is, without a copy.
///
/// The escapes are for people, not for parsing back: a backslash already
/// in the text is left alone.
pub fn terminal_safe(text: &str, lines: Lines) -> Cow<'_, str> {
    let escape = |c: char| needs_escape(c) || (c == '\n' && lines == Lines::Escape);
    let Some(first) = text.find(escape) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        if !escape(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// The longest URL [`openable_url`] accepts (bytes).
pub const MAX_OPENABLE_URL: usize = 8 * 1024;

/// A URL that may be handed to a system opener, with the host it names
/// (as [`openable_url`] found them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenableUrl<'a> {
    url: &'a str,
    host: &'a str,
}

impl<'a> OpenableUrl<'a> {
    /// The URL, exactly as given (and as it is to be shown and opened).
    pub fn as_str(&self) -> &'a str {
        self.url
    }

    /// The host the URL names (a name, an IPv4 address, or an IPv6
    /// address in brackets), as written in it.
    pub fn host(&self) -> &'a str {
        self.host
    }
}

/// Why [`openable_url`] refused a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlRefusal {
    /// Empty.
    Empty,
    /// Longer than [`MAX_OPENABLE_URL`].
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// It starts with `-`, which an opener could take as an option.
    LeadingDash,
    /// It holds a character that is not visible ASCII: white space, a
    /// control, or any non-ASCII character (a URL carries those
    /// percent-encoded, and a host in punycode).
    Character {
        /// Where (byte offset).
        at: usize,
    },
    /// Not of the form `scheme://authority...`.
    NotAbsolute,
    /// A scheme other than `https` (and `http` to a loopback host).
    Scheme {
        /// The scheme (visible ASCII, at most 32 characters).
        scheme: String,
    },
    /// `http` to a host that is not loopback.
    PlainHttp,
    /// A user name or password before the host (`https://bank@evil/`),
    /// which makes one host read as another.
    UserInfo,
    /// No host, or a host or port that is not well formed.
    Host,
}

impl fmt::Display for UrlRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlRefusal::Empty => f.write_str("the URL is empty"),
            UrlRefusal::TooLong { len } => {
                write!(f, "the URL is {len} bytes long (at most {MAX_OPENABLE_URL})")
            }
            UrlRefusal::LeadingDash => f.write_str("the URL starts with '-'"),
            UrlRefusal::Character { at } => write!(
                f,
                "the URL holds a space, a control or a non-ASCII character (at byte {at})"
            ),
            UrlRefusal::NotAbsolute => f.write_str("the URL is not an absolute URL"),
            UrlRefusal::Scheme { scheme } => {
                write!(f, "the URL's scheme {scheme:?} is not https")
            }
            UrlRefusal::PlainHttp => {
                f.write_str("the URL is plain http to a host that is not this machine")
            }
            UrlRefusal::UserInfo => f.write_str("the URL has a user name or password in it"),
            UrlRefusal::Host => f.write_str("the URL's host or port is not well formed"),
        }
    }
}

impl std::error::Error for UrlRefusal {}

/// Whether `url` may be handed to a system opener (a browser): an
/// absolute `https` URL, or `http` to a loopback host (`localhost`,
/// `127.0.0.0/8`, `[::1]`); only visible ASCII, nothing before the host
/// (no user name or password), a well-formed host and port, not starting
/// with `-`, at most [`MAX_OPENABLE_URL`] bytes. The scheme and host
/// compare without regard to case.
///
/// The URL is not rewritten: what passes is shown and opened as it is.
pub fn openable_url(url: &str) -> Result<OpenableUrl<'_>, UrlRefusal> {
    if url.is_empty() {
        return Err(UrlRefusal::Empty);
    }
    if url.len() > MAX_OPENABLE_URL {
        return Err(UrlRefusal::TooLong { len: url.len() });
    }
    if url.starts_with('-') {
        return Err(UrlRefusal::LeadingDash);
    }
    if let Some(at) = url.bytes().position(|b| !(0x21..=0x7e).contains(&b)) {
        return Err(UrlRefusal::Character { at });
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(UrlRefusal::NotAbsolute);
    };
    let scheme_ok = scheme.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    if !scheme_ok {
        return Err(UrlRefusal::NotAbsolute);
    }
    let https = scheme.eq_ignore_ascii_case("https");
    if !https && !scheme.eq_ignore_ascii_case("http") {
        let scheme: String = scheme.chars().take(32).collect();
        return Err(UrlRefusal::Scheme { scheme });
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    if authority.contains('@') {
        return Err(UrlRefusal::UserInfo);
    }
    let (host, port) = split_authority(authority).ok_or(UrlRefusal::Host)?;
    if !port.is_empty() && (port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit())) {
        return Err(UrlRefusal::Host);
    }
    if !https && !is_loopback(host) {
        return Err(UrlRefusal::PlainHttp);
    }
    Ok(OpenableUrl { url, host })
}

/// The host and the port (empty when there is none) of an authority with
/// no user information; `None` when the host is not well formed.
fn split_authority(authority: &str) -> Option<(&str, &str)> {
    if let Some(inner) = authority.strip_prefix('[') {
        let close = inner.find(']')?;
        let address = &inner[..close];
        let after = &inner[close + 1..];
        let ipv6 = !address.is_empty()
            && address.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
        let port = match after {
            "" => "",
            _ => after.strip_prefix(':')?,
        };
        return ipv6.then_some((&authority[..close + 2], port));
    }
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, port),
        None => (authority, ""),
    };
    let labels_ok = host.trim_end_matches('.').split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    (!host.is_empty() && host.len() <= 253 && labels_ok).then_some((host, port))
}

/// Whether a host (as [`split_authority`] gives it) is this machine:
/// `localhost` (or a name under it), an address of `127.0.0.0/8`, or
/// `[::1]`.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_end_matches('.');
    if host.eq_ignore_ascii_case("localhost")
        || host.len() > 10 && host[host.len() - 10..].eq_ignore_ascii_case(".localhost")
    {
        return true;
    }
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return v6.parse::<std::net::Ipv6Addr>().is_ok_and(|a| a.is_loopback());
    }
    host.parse::<std::net::Ipv4Addr>().is_ok_and(|a| a.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_of_sequence_is_escaped() {
        let cases: &[(&str, &str, &str)] = &[
            ("plain text, é, 漢字, emoji 👩‍💻", "plain text, é, 漢字, emoji 👩‍💻", "unchanged"),
            ("tab\tstays", "tab\tstays", "tab"),
            ("\u{1b}[2J\u{1b}[H", r"\x1b[2J\x1b[H", "clear screen, cursor home"),
            ("\u{1b}[1A\u{1b}[2K", r"\x1b[1A\x1b[2K", "rewrite the line above"),
            ("\u{1b}]0;title\u{7}", r"\x1b]0;title\x07", "window title (OSC, BEL)"),
            (
                "\u{1b}]8;;http://x\u{1b}\\link",
                r"\x1b]8;;http://x\x1b\link",
                "hyperlink (OSC 8, ST)",
            ),
            ("\u{1b}[8mhidden\u{1b}[0m", r"\x1b[8mhidden\x1b[0m", "concealed text"),
            ("\u{9b}2J\u{9d}0;t\u{9c}", r"\u{9b}2J\u{9d}0;t\u{9c}", "C1 CSI, OSC, ST"),
            ("\u{80}\u{9f}", r"\u{80}\u{9f}", "the first and last C1 controls"),
            ("ok\rEVIL", r"ok\rEVIL", "carriage return"),
            ("a\u{8}\u{8}b", r"a\x08\x08b", "backspace"),
            ("nul\u{0}del\u{7f}", r"nul\x00del\x7f", "NUL and DEL"),
            ("\u{202e}txt.exe", r"\u{202e}txt.exe", "right-to-left override"),
            ("\u{2066}a\u{2069}\u{200f}", r"\u{2066}a\u{2069}\u{200f}", "isolates and marks"),
            ("a\u{200b}b\u{feff}", r"a\u{200b}b\u{feff}", "zero-width characters"),
            ("\u{e0049}\u{e0047}", r"\u{e0049}\u{e0047}", "tag characters"),
            ("line\u{2028}sep", r"line\u{2028}sep", "line separator"),
        ];
        for (input, expected, what) in cases {
            assert_eq!(terminal_safe(input, Lines::Keep), *expected, "{what}");
            assert_eq!(terminal_safe(input, Lines::Escape), *expected, "{what}");
        }
        assert_eq!(terminal_safe("a\nb", Lines::Keep), "a\nb");
        assert_eq!(terminal_safe("a\nb\n", Lines::Escape), r"a\nb\n");
        assert_eq!(terminal_safe("x\r\ny", Lines::Keep), "x\\r\ny");
        assert!(matches!(terminal_safe("clean", Lines::Escape), Cow::Borrowed("clean")));
        // Nothing escapable survives, whatever came in.
        let all: String =
            (0..0x3000u32).chain(0xe0000..0xe0080).filter_map(char::from_u32).collect();
        let safe = terminal_safe(&all, Lines::Escape);
        assert!(!safe.chars().any(|c| needs_escape(c) || c == '\n'));
        let kept = terminal_safe(&all, Lines::Keep);
        assert!(!kept.chars().any(needs_escape));
        assert_eq!(kept.matches('\n').count(), 1);
    }

    #[test]
    fn openable_urls() {
        let ok: &[(&str, &str)] = &[
            ("https://example.com", "example.com"),
            ("https://auth.example.com/consent?state=a%20b#frag", "auth.example.com"),
            ("HTTPS://Example.COM:8443/x", "Example.COM"),
            ("https://192.0.2.1/", "192.0.2.1"),
            ("https://[2001:db8::1]:443/p", "[2001:db8::1]"),
            ("http://localhost:3000/callback", "localhost"),
            ("http://app.localhost/", "app.localhost"),
            ("http://127.0.0.1:8080/", "127.0.0.1"),
            ("http://127.1.2.3/", "127.1.2.3"),
            ("http://[::1]:9/", "[::1]"),
            ("https://example.com.", "example.com."),
            ("https://example.com:65535/", "example.com"),
            ("https://auth-server.example/", "auth-server.example"),
            ("https://my_host.example/", "my_host.example"),
        ];
        for (url, host) in ok {
            let got = openable_url(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!((got.as_str(), got.host()), (*url, *host));
        }
        let refused: &[(&str, UrlRefusal)] = &[
            ("", UrlRefusal::Empty),
            ("-a https://x.example", UrlRefusal::LeadingDash),
            ("--help", UrlRefusal::LeadingDash),
            ("file:///etc/passwd", UrlRefusal::Scheme { scheme: "file".into() }),
            ("javascript:alert(1)", UrlRefusal::NotAbsolute),
            ("ssh://host.example/", UrlRefusal::Scheme { scheme: "ssh".into() }),
            ("vscode://ext/install", UrlRefusal::Scheme { scheme: "vscode".into() }),
            ("x-custom://open", UrlRefusal::Scheme { scheme: "x-custom".into() }),
            ("data://text/html,x", UrlRefusal::Scheme { scheme: "data".into() }),
            ("http://example.com/", UrlRefusal::PlainHttp),
            ("http://127.0.0.1.evil.example/", UrlRefusal::PlainHttp),
            ("http://localhost.evil.example/", UrlRefusal::PlainHttp),
            ("http://[::2]/", UrlRefusal::PlainHttp),
            ("https://bank.example@evil.example/", UrlRefusal::UserInfo),
            ("https://u:p@example.com/", UrlRefusal::UserInfo),
            ("https:///path", UrlRefusal::Host),
            ("https://exa mple.com/", UrlRefusal::Character { at: 11 }),
            ("https://example.com/\u{1b}[2J", UrlRefusal::Character { at: 20 }),
            ("https://exаmple.com/", UrlRefusal::Character { at: 10 }),
            ("https://example.com/\u{202e}", UrlRefusal::Character { at: 20 }),
            (" https://example.com", UrlRefusal::Character { at: 0 }),
            ("https://example.com:99999999/", UrlRefusal::Host),
            ("https://example.com:443443/", UrlRefusal::Host),
            ("https://example.com:80a/", UrlRefusal::Host),
            ("https://[zz::1]/", UrlRefusal::Host),
            ("https://[::1]x/", UrlRefusal::Host),
            ("https://a..b/", UrlRefusal::Host),
            ("https://a%2eb/", UrlRefusal::Host),
            ("1https://x/", UrlRefusal::NotAbsolute),
            ("example.com/path", UrlRefusal::NotAbsolute),
        ];
        for (url, why) in refused {
            assert_eq!(openable_url(url), Err(why.clone()), "{url:?}");
            assert!(!why.to_string().is_empty());
        }
        // At most 8 KiB.
        let base = "https://example.com/";
        let longest = format!("{base}{}", "a".repeat(8192 - base.len()));
        assert_eq!(openable_url(&longest).map(|u| u.host()), Ok("example.com"));
        let long = format!("{longest}a");
        assert_eq!(openable_url(&long), Err(UrlRefusal::TooLong { len: 8193 }));
        let refusal = openable_url(&format!("{}://x", "z".repeat(100))).unwrap_err();
        assert_eq!(refusal, UrlRefusal::Scheme { scheme: "z".repeat(32) });
    }

    #[test]
    fn loopback_hosts() {
        // (host as split from the authority, loopback)
        let cases: &[(&str, bool)] = &[
            ("localhost", true),
            ("LocalHost.", true),
            ("app.localhost", true),
            ("a.b.LOCALHOST", true),
            (".localhost", false),
            ("xlocalhost", false),
            ("localhost.example", false),
            ("127.0.0.1", true),
            ("127.255.0.9", true),
            ("128.0.0.1", false),
            ("[::1]", true),
            ("[::2]", false),
            ("::1", false),
            ("example.com", false),
        ];
        for (host, loopback) in cases {
            assert_eq!(is_loopback(host), *loopback, "{host}");
        }
    }
}
