//! The HTTP transport's error type.

use std::fmt;
use std::time::Duration;

use http::StatusCode;
use mcp_proto::ErrorObject;
use mcp_proto::client::ClientError;
use mcp_sse::{BearerChallenge, Challenge};

/// Why an operation on a Streamable HTTP server failed.
///
/// Every `endpoint` field is already redacted (scheme and `host[:port]`, or
/// `<redacted>`), and no variant ever holds a credential: body excerpts have
/// the configured secrets scrubbed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The endpoint URL is unusable (the reason never repeats the URL).
    InvalidEndpoint {
        /// What is wrong with it.
        reason: String,
    },
    /// The static credentials are unusable (CR/LF in a value, a bad header
    /// name, ...). The reason never repeats the secret.
    InvalidAuth {
        /// What is wrong with them.
        reason: String,
    },
    /// The proxy configuration is unusable (the reason never repeats the
    /// proxy URL).
    InvalidProxy {
        /// What is wrong with it.
        reason: String,
    },
    /// The TLS configuration could not be built.
    Tls {
        /// Why.
        reason: String,
    },
    /// The connection could not be made or broke (DNS, TCP, TLS, HTTP framing).
    Connect {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method (or `DELETE`/`GET` for session and stream requests).
        method: String,
        /// The underlying errors, innermost last.
        reason: String,
        /// The underlying error itself, when there is one (hyper's, or the
        /// connector's: TCP, proxy, TLS), for
        /// [`std::error::Error::source`]; [`Error::tls_error`] finds the
        /// [`rustls::Error`] in it.
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// No answer in time (`notifications/cancelled` was sent).
    Timeout {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
        /// How long the request waited.
        after: Duration,
    },
    /// The server answered with an unexpected HTTP status.
    Status {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
        /// The status.
        status: StatusCode,
        /// The start of the body (at most 512 bytes, secrets scrubbed).
        body: String,
    },
    /// A redirect was not followed: it leads to another origin, has no
    /// usable `Location`, or there were too many in a row (only with
    /// [`HttpOptions::follow_redirects`](crate::HttpOptions::follow_redirects);
    /// otherwise a redirect is [`Error::Status`]). The target is never shown.
    Redirect {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
        /// The redirect's status (307 or 308).
        status: StatusCode,
        /// Why it was not followed.
        reason: String,
    },
    /// 401: the server wants (other) credentials.
    Unauthorized {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
        /// Every well-formed challenge of the `WWW-Authenticate` headers.
        challenges: Vec<Challenge>,
        /// The first Bearer challenge, if any (its `resource_metadata` is
        /// where the OAuth flow starts).
        bearer: Option<Box<BearerChallenge>>,
    },
    /// 403 with `error="insufficient_scope"`: the token lacks a scope.
    InsufficientScope {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
        /// Every well-formed challenge of the `WWW-Authenticate` headers.
        challenges: Vec<Challenge>,
        /// The Bearer challenge (its `scope` is what to ask for).
        bearer: Box<BearerChallenge>,
    },
    /// The OAuth flow that a 401 or a 403 `insufficient_scope` started
    /// failed, or its bounds were reached (only with
    /// [`HttpOptions::oauth`](crate::HttpOptions::oauth)). The source says
    /// why; it never holds a token, a secret or a code.
    Auth {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
        /// The status that started the flow (401 or 403).
        status: StatusCode,
        /// What failed.
        source: Box<mcp_auth::Error>,
    },
    /// The server answered with a JSON-RPC error.
    Rpc {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
        /// The error object.
        error: ErrorObject,
    },
    /// The session expired (404) again right after a fresh `initialize`.
    SessionExpired {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
    },
    /// The session ended (expired, or its 2024-11-05 stream closed) while
    /// the request was out, and the request is not one that may be sent
    /// twice (`tools/call`, ...): the server may have acted on it. The next
    /// request starts a new session.
    SessionLost {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
    },
    /// The server's answer is not a valid Streamable HTTP reply (wrong
    /// content type, invalid JSON, no reply in a JSON body, ...).
    InvalidResponse {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
        /// What was wrong.
        reason: String,
    },
    /// A response body went over the configured limit.
    BodyTooLarge {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// The reply stream ended before the reply arrived and could not be
    /// resumed.
    StreamLost {
        /// The redacted endpoint.
        endpoint: String,
        /// The MCP method.
        method: String,
        /// How many reconnections were tried.
        attempts: u32,
        /// Why it could not go on.
        reason: String,
    },
    /// Any other protocol failure (version negotiation, invalid results, ...).
    Protocol {
        /// The redacted endpoint.
        endpoint: String,
        /// What went wrong.
        source: ClientError,
    },
    /// The client was closed.
    Closed {
        /// The redacted endpoint.
        endpoint: String,
    },
    /// The [`HeaderSource`](crate::HeaderSource) gave no headers (its
    /// error says why, and holds no header value).
    Headers {
        /// The redacted endpoint.
        endpoint: String,
        /// The source's error.
        source: crate::HeaderSourceError,
    },
}

impl Error {
    /// The redacted endpoint the error is about, when there is one.
    pub fn endpoint(&self) -> Option<&str> {
        match self {
            Error::InvalidEndpoint { .. }
            | Error::InvalidAuth { .. }
            | Error::InvalidProxy { .. }
            | Error::Tls { .. } => None,
            Error::Connect { endpoint, .. }
            | Error::Timeout { endpoint, .. }
            | Error::Status { endpoint, .. }
            | Error::Redirect { endpoint, .. }
            | Error::Unauthorized { endpoint, .. }
            | Error::InsufficientScope { endpoint, .. }
            | Error::Auth { endpoint, .. }
            | Error::Rpc { endpoint, .. }
            | Error::SessionExpired { endpoint, .. }
            | Error::SessionLost { endpoint, .. }
            | Error::InvalidResponse { endpoint, .. }
            | Error::BodyTooLarge { endpoint, .. }
            | Error::StreamLost { endpoint, .. }
            | Error::Protocol { endpoint, .. }
            | Error::Closed { endpoint }
            | Error::Headers { endpoint, .. } => Some(endpoint),
        }
    }

    /// The JSON-RPC error object, when the server answered with one.
    pub fn rpc_error(&self) -> Option<&ErrorObject> {
        match self {
            Error::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The HTTP status, for status errors (401 and 403 included).
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Status { status, .. }
            | Error::Redirect { status, .. }
            | Error::Auth { status, .. } => Some(*status),
            Error::Unauthorized { .. } => Some(StatusCode::UNAUTHORIZED),
            Error::InsufficientScope { .. } => Some(StatusCode::FORBIDDEN),
            _ => None,
        }
    }

    /// The Bearer challenge of a 401 or 403.
    pub fn bearer_challenge(&self) -> Option<&BearerChallenge> {
        match self {
            Error::Unauthorized { bearer, .. } => bearer.as_deref(),
            Error::InsufficientScope { bearer, .. } => Some(bearer),
            _ => None,
        }
    }

    /// The protected-resource metadata URL of a 401 or 403 challenge.
    pub fn resource_metadata(&self) -> Option<&str> {
        self.bearer_challenge()?.resource_metadata.as_deref()
    }

    /// The TLS error that stopped the connection (an unknown issuer, an
    /// expired certificate, a name mismatch, ...), for
    /// [`Error::Connect`]: found in the source chain, through the
    /// `std::io::Error`s that carry it.
    pub fn tls_error(&self) -> Option<&rustls::Error> {
        let Error::Connect { source: Some(source), .. } = self else { return None };
        let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(&**source);
        for _ in 0..16 {
            let e = cur?;
            if let Some(tls) = e.downcast_ref::<rustls::Error>() {
                return Some(tls);
            }
            // `io::Error::source` skips the error it wraps: look inside.
            cur = match e.downcast_ref::<std::io::Error>().and_then(|io| io.get_ref()) {
                Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
                None => e.source(),
            };
        }
        None
    }

    /// Whether this is a timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(endpoint) = self.endpoint() {
            write!(f, "MCP server {endpoint}: ")?;
        }
        self.detail().fmt(f)
    }
}

/// The message of an [`Error`] without the endpoint in front.
#[derive(Debug, Clone, Copy)]
struct Detail<'a>(&'a Error);

impl Error {
    /// The message without its leading `MCP server <endpoint>: `, for a
    /// caller that names the server its own way (by its configured name,
    /// with the URL's path): `Display` is `MCP server <endpoint>: ` and
    /// this.
    pub fn detail(&self) -> impl fmt::Display + '_ {
        Detail(self)
    }
}

impl fmt::Display for Detail<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Error::InvalidEndpoint { reason, .. } => {
                write!(f, "invalid MCP endpoint URL: {reason}")
            }
            Error::InvalidAuth { reason, .. } => {
                write!(f, "invalid MCP server credentials: {reason}")
            }
            Error::InvalidProxy { reason, .. } => {
                write!(f, "invalid proxy configuration: {reason}")
            }
            Error::Tls { reason, .. } => write!(f, "TLS configuration failed: {reason}"),
            Error::Connect { method, reason, .. } => {
                write!(f, "{method} failed to connect: {reason}")
            }
            Error::Timeout { method, after, .. } => {
                write!(f, "{method} timed out after {:.1}s", after.as_secs_f64())
            }
            Error::Status { method, status, body, .. } => {
                write!(f, "{method} failed with HTTP {status}")?;
                if !body.is_empty() {
                    write!(f, ": {body}")?;
                }
                Ok(())
            }
            Error::Redirect { method, status, reason, .. } => {
                write!(f, "{method} got HTTP {status}, a redirect that was not followed: {reason}")
            }
            Error::Unauthorized { method, bearer, .. } => {
                write!(f, "{method} is unauthorized (HTTP 401)")?;
                if let Some(b) = bearer {
                    if let Some(e) = &b.error {
                        write!(f, "; error {e:?}")?;
                    }
                    if let Some(url) = &b.resource_metadata {
                        write!(f, "; resource metadata at {url}")?;
                    }
                }
                Ok(())
            }
            Error::InsufficientScope { method, bearer, .. } => {
                write!(f, "{method} needs more scope (HTTP 403)")?;
                if let Some(scope) = &bearer.scope {
                    write!(f, "; required: {}", scope.join(" "))?;
                }
                Ok(())
            }
            Error::Auth { method, status, source, .. } => {
                write!(f, "{method} got HTTP {status} and authorization failed: {source}")
            }
            Error::Rpc { method, error, .. } => {
                write!(f, "{method} failed with error {}: {}", error.code, error.message)
            }
            Error::SessionExpired { method, .. } => write!(
                f,
                "{method} failed: the session expired again right after a new one was started"
            ),
            Error::SessionLost { method, .. } => write!(
                f,
                "{method} failed: the session ended while it was in flight (not retried: the server may have acted on it)"
            ),
            Error::InvalidResponse { method, reason, .. } => {
                write!(f, "{method} got an invalid response: {reason}")
            }
            Error::BodyTooLarge { method, limit, .. } => {
                write!(f, "{method} response is larger than the {limit}-byte limit")
            }
            Error::StreamLost { method, attempts, reason, .. } => write!(
                f,
                "{method} lost its reply stream after {attempts} reconnection attempts: {reason}"
            ),
            Error::Protocol { source, .. } => write!(f, "{source}"),
            Error::Closed { .. } => write!(f, "the client is closed"),
            Error::Headers { source, .. } => write!(f, "no run-time headers: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Protocol { source, .. } => Some(source),
            Error::Auth { source, .. } => Some(&**source),
            Error::Rpc { error, .. } => Some(error),
            Error::Connect { source: Some(source), .. } => Some(&**source),
            Error::Headers { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

/// An error and its sources as one line, for messages that must not carry a
/// type the caller cannot inspect.
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    let mut depth = 0;
    while let Some(s) = cur {
        let text = s.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cur = s.source();
        depth += 1;
        if depth > 8 {
            break;
        }
    }
    out
}

impl mcp_peer::TransportError for Error {
    fn is_session_expired(&self) -> bool {
        matches!(self, Error::SessionExpired { .. })
    }

    fn protocol_error(&self) -> Option<&ClientError> {
        match self {
            Error::Protocol { source, .. } => Some(source),
            _ => None,
        }
    }

    /// 400, 404 and 405, and a JSON-RPC error in place of an answer.
    fn is_refusal(&self) -> bool {
        match self {
            Error::Status { status, .. } => matches!(status.as_u16(), 400 | 404 | 405),
            Error::Rpc { .. } => true,
            _ => false,
        }
    }

    fn is_stream_lost(&self) -> bool {
        matches!(self, Error::StreamLost { .. })
    }
}
