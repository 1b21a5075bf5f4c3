//! The one client type the registry holds for every server, whatever
//! carries it: [`ServerClient`], a [`mcp_peer::Client`] over a boxed
//! transport ([`BoxTransport`]). A host with a transport of its own
//! implements [`mcp_peer::Transport`] for it (with an error that converts
//! into [`TransportError`]) and boxes it in its [`Connector`](crate::Connector).

use mcp_peer::Client;

use crate::error::TransportError;

/// Any transport, boxed: what a [`Connector`](crate::Connector) builds.
pub type BoxTransport = Box<dyn mcp_peer::DynTransport<TransportError>>;

/// The client of one server, over any transport.
pub type ServerClient = Client<BoxTransport>;

/// What a server said when asked for authorization (HTTP 401, or 403 for a
/// missing scope): where the OAuth flow starts. Feature `http`.
#[cfg(feature = "http")]
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationInfo {
    /// The HTTP status (401 or 403).
    pub status: u16,
    /// The protected-resource metadata URL of the Bearer challenge.
    pub resource_metadata: Option<String>,
    /// The scopes the challenge names.
    pub scopes: Vec<String>,
    /// The challenge's `error` (`invalid_token`, `insufficient_scope`, ...).
    pub error: Option<String>,
}

/// The authorization request a 401 or 403 carries.
#[cfg(feature = "http")]
pub(crate) fn authorization_info(e: &mcp_http::Error) -> Option<AuthorizationInfo> {
    let status = e.status()?.as_u16();
    if status != http_status::UNAUTHORIZED && status != http_status::FORBIDDEN {
        return None;
    }
    if status == http_status::FORBIDDEN && !matches!(e, mcp_http::Error::InsufficientScope { .. }) {
        return None;
    }
    let bearer = e.bearer_challenge();
    Some(AuthorizationInfo {
        status,
        resource_metadata: bearer.and_then(|b| b.resource_metadata.clone()),
        scopes: bearer.and_then(|b| b.scope.clone()).unwrap_or_default(),
        error: bearer.and_then(|b| b.error.clone()),
    })
}

#[cfg(feature = "http")]
mod http_status {
    pub(super) const UNAUTHORIZED: u16 = 401;
    pub(super) const FORBIDDEN: u16 = 403;
}
