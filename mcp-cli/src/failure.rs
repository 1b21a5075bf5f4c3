//! Why a command failed: a kind, an exit code, a message for a person and,
//! with `--output json`, a stable JSON shape on stdout:
//!
//! ```json
//! {"error": {"kind": "connection", "message": "...", "server": "demo", "exit_code": 3}}
//! ```

use std::fmt;

use mcp_host_registry::{Error, Registry, TransportConfig, TransportError};
use serde_json::{Value, json};

/// Exit codes.
pub(crate) const EXIT_TOOL_ERROR: u8 = 1;
pub(crate) const EXIT_USAGE: u8 = 2;
pub(crate) const EXIT_CONNECTION: u8 = 3;
/// Interrupted by Ctrl-C (128 + SIGINT, as shells report it).
pub(crate) const EXIT_INTERRUPTED: u8 = 130;
/// SIGTERM (128 + 15).
pub(crate) const EXIT_TERMINATED: u8 = 143;
/// SIGHUP (128 + 1).
pub(crate) const EXIT_HANGUP: u8 = 129;

/// The `kind` of a JSON error: a stable word a script can match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A bad command line (exit 2).
    Usage,
    /// A bad configuration, or a server URL that cannot be used (exit 2).
    Config,
    /// No server, tool or prompt of that name (exit 2).
    NotFound,
    /// A tool call the approval policy or the user refused (exit 2).
    Denied,
    /// A project's configuration that was not approved: nothing of it ran
    /// (exit 2).
    Untrusted,
    /// The server could not be started or reached, or went away (exit 3).
    Connection,
    /// No answer in time (exit 3).
    Timeout,
    /// Authorization failed or a login is needed (exit 3).
    Auth,
    /// The server answered with an error, or with something invalid (exit 3).
    Protocol,
    /// A signal stopped the command (exit 130, 143, 129).
    Interrupted,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Usage => "usage",
            Kind::Config => "config",
            Kind::NotFound => "not_found",
            Kind::Untrusted => "untrusted",
            Kind::Denied => "denied",
            Kind::Connection => "connection",
            Kind::Timeout => "timeout",
            Kind::Auth => "auth",
            Kind::Protocol => "protocol",
            Kind::Interrupted => "interrupted",
        }
    }

    fn exit_code(self) -> u8 {
        match self {
            Kind::Usage | Kind::Config | Kind::NotFound | Kind::Untrusted | Kind::Denied => {
                EXIT_USAGE
            }
            Kind::Interrupted => EXIT_INTERRUPTED,
            _ => EXIT_CONNECTION,
        }
    }
}

/// A failure: what to print and the exit code.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) kind: Kind,
    pub(crate) code: u8,
    pub(crate) message: String,
    pub(crate) server: Option<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Failure {
    pub(crate) fn new(kind: Kind, message: impl fmt::Display) -> Failure {
        Failure { kind, code: kind.exit_code(), message: message.to_string(), server: None }
    }

    pub(crate) fn usage(message: impl fmt::Display) -> Failure {
        Failure::new(Kind::Usage, message)
    }

    pub(crate) fn with_server(mut self, server: &str) -> Failure {
        self.server = Some(server.to_owned());
        self
    }

    /// A registry error, its message naming the server (and, for an HTTP
    /// server, its redacted URL with the path).
    pub(crate) fn registry(registry: &Registry, e: Error) -> Failure {
        let kind = classify(&e);
        let server = e.server().map(str::to_owned);
        let message = match (&e, server.as_deref().and_then(|s| registry.get(s))) {
            #[allow(unreachable_patterns)]
            (Error::Transport { server, source: TransportError::Http(h) }, Some(config)) => {
                match &config.transport {
                    TransportConfig::Http { endpoint, .. } if has_userinfo(endpoint) => format!(
                        "MCP server {server:?}: its endpoint URL has a user name or password in \
                         it, which is never sent; configure them as auth = {{ kind = \"basic\", \
                         username = ..., password_env = ... }} instead"
                    ),
                    TransportConfig::Http { endpoint, .. } => {
                        format!("MCP server {server:?} ({}): {}", display_url(endpoint), h.detail())
                    }
                    _ => e.to_string(),
                }
            }
            (Error::UnknownServer { server }, _) => unknown_server(registry, server),
            _ => e.to_string(),
        };
        Failure { kind, code: kind.exit_code(), message, server }
    }

    /// The JSON shape of the error.
    pub(crate) fn to_json(&self) -> Value {
        json!({"error": {
            "kind": self.kind.as_str(),
            "message": self.message,
            "server": self.server,
            "exit_code": self.code,
        }})
    }
}

/// `no server is named "x" (servers: a, b)`.
pub(crate) fn unknown_server(registry: &Registry, name: &str) -> String {
    let names: Vec<&str> = registry.list().map(|s| s.name.as_str()).collect();
    let list = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
    format!("no server is named {name:?} (servers: {list})")
}

fn classify(e: &Error) -> Kind {
    match e {
        Error::Config(_) | Error::TransportUnavailable { .. } => Kind::Config,
        Error::UnknownServer { .. } | Error::UnknownTool { .. } => Kind::NotFound,
        // Refused by the host's own rules: the tool policy, or a tool
        // definition that changed since it was pinned (`block`).
        Error::ToolNotAllowed { .. } | Error::ToolChanged { .. } | Error::NotOAuth { .. } => {
            Kind::Usage
        }
        Error::ServerUnusable { .. } | Error::Pins { .. } | Error::Trust { .. } => Kind::Config,
        // The call policy, the managed policy or the user said no.
        Error::CallDenied { .. } => Kind::Denied,
        Error::Unavailable { .. } | Error::Reloaded { .. } => Kind::Connection,
        Error::ConnectTimeout { .. } => Kind::Timeout,
        Error::Transport { source, .. } => classify_transport(source),
        Error::Closed { .. } => Kind::Connection,
        // The server's acknowledgment left the resource out.
        Error::SubscriptionRefused { .. } => Kind::Protocol,
        // Login, logout, OAuth unavailable, login required or timed out.
        _ => Kind::Auth,
    }
}

fn classify_transport(e: &TransportError) -> Kind {
    use mcp_peer::TransportError as _;
    if e.is_login_required() || e.is_unauthorized() {
        return Kind::Auth;
    }
    match e {
        TransportError::Http(h) => match &**h {
            mcp_http::Error::InvalidEndpoint { .. }
            | mcp_http::Error::InvalidAuth { .. }
            | mcp_http::Error::InvalidProxy { .. } => Kind::Config,
            mcp_http::Error::Timeout { .. } => Kind::Timeout,
            mcp_http::Error::Auth { .. } => Kind::Auth,
            mcp_http::Error::Connect { .. }
            | mcp_http::Error::Closed { .. }
            | mcp_http::Error::StreamLost { .. }
            | mcp_http::Error::Tls { .. } => Kind::Connection,
            mcp_http::Error::Protocol { source, .. } => client_error_kind(source),
            _ => Kind::Protocol,
        },
        TransportError::Stdio(s) => match &**s {
            mcp_client_stdio::Error::Timeout { .. } => Kind::Timeout,
            mcp_client_stdio::Error::Rpc { .. } => Kind::Protocol,
            mcp_client_stdio::Error::Protocol { source, .. } => client_error_kind(source),
            _ => Kind::Connection,
        },
        _ => match e.protocol_error() {
            Some(c) => client_error_kind(c),
            None => Kind::Connection,
        },
    }
}

fn client_error_kind(e: &mcp_proto::client::ClientError) -> Kind {
    use mcp_proto::client::ClientError;
    match e {
        ClientError::Timeout { .. } => Kind::Timeout,
        ClientError::Closed { .. } | ClientError::ConnectionLost { .. } => Kind::Connection,
        _ => Kind::Protocol,
    }
}

/// An endpoint as messages show it: scheme, host, port and path; no user
/// name or password, no query (it may hold a key), no fragment. A URL that
/// cannot be read is `<redacted>`.
pub(crate) fn display_url(endpoint: &str) -> String {
    let origin = mcp_http::redact_endpoint(endpoint);
    if origin.starts_with('<') {
        return origin;
    }
    // After `scheme://authority`: the path up to `?` or `#`.
    let rest = endpoint.split_once("://").map_or("", |(_, r)| r);
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    let path = path.split(['?', '#']).next().unwrap_or("");
    format!("{origin}{path}")
}

/// Whether `url` carries a user name or password (`user:pw@host`).
pub(crate) fn has_userinfo(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_their_path_and_lose_their_secrets() {
        let cases = [
            ("http://127.0.0.1:1/mcp", "http://127.0.0.1:1/mcp"),
            ("HTTPS://Example.com/a/b?key=secret#x", "https://Example.com/a/b"),
            ("https://example.com", "https://example.com"),
            ("https://user:pw@example.com/mcp", "<redacted>"),
            ("ftp://example.com/x", "<redacted>"),
        ];
        for (input, expected) in cases {
            assert_eq!(display_url(input), expected, "{input}");
        }
        assert!(has_userinfo("https://user:pw@example.com/mcp"));
        assert!(has_userinfo("http://token@h"));
        assert!(!has_userinfo("https://example.com/a@b"));
        assert!(!has_userinfo("https://example.com/?u=a@b"));
    }

    #[test]
    fn the_json_shape_is_stable() {
        let f = Failure::new(Kind::NotFound, "no server is named \"x\"").with_server("x");
        assert_eq!(
            f.to_json(),
            json!({"error": {"kind": "not_found", "message": "no server is named \"x\"", "server": "x", "exit_code": 2}})
        );
        assert_eq!(Failure::new(Kind::Timeout, "t").code, EXIT_CONNECTION);
        assert_eq!(Failure::new(Kind::Config, "c").code, EXIT_USAGE);
    }
}
