//! The crate's error type.

use std::fmt;

use crate::fetch::FetchError;
use crate::url::redact;

/// Everything that can stop an authorization.
///
/// Messages never carry a token, a client secret, an authorization code or a
/// PKCE verifier; endpoints appear as scheme and authority only.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A URL that is not absolute, has a fragment, or is otherwise unusable.
    InvalidUrl {
        /// What the URL was for (`"MCP server"`, `"resource_metadata"`, ...).
        what: &'static str,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A URL that must be `https` (discovery, authorization server endpoints)
    /// was plain `http` to a host that is not loopback.
    InsecureUrl {
        /// What the URL was for.
        what: &'static str,
        /// The redacted endpoint.
        endpoint: String,
    },
    /// The fetcher failed (connection, timeout, body cap).
    Fetch {
        /// The redacted endpoint.
        endpoint: String,
        /// What the fetcher reported.
        source: FetchError,
    },
    /// An endpoint answered with an unexpected status.
    HttpStatus {
        /// What was asked (`"protected resource metadata"`, ...).
        what: &'static str,
        /// The redacted endpoint.
        endpoint: String,
        /// The status code.
        status: u16,
    },
    /// A metadata document or endpoint answer that is not what the spec
    /// says it must be (bad JSON, missing member).
    InvalidDocument {
        /// What was read.
        what: &'static str,
        /// The redacted endpoint.
        endpoint: String,
        /// What was wrong.
        reason: String,
    },
    /// No protected resource metadata was found and the 2025-03-26 fallback
    /// was not possible either.
    ProtectedResourceMetadataNotFound,
    /// The protected resource metadata names another resource than the MCP
    /// server: no authorization request is made.
    ResourceMismatch {
        /// The redacted resource the metadata names.
        resource: String,
        /// The redacted MCP server URL.
        server: String,
    },
    /// None of the authorization servers of the metadata could be used.
    AuthorizationServerMetadataNotFound {
        /// The redacted issuer that was tried last.
        issuer: String,
    },
    /// An authorization server metadata document whose `issuer` is not the
    /// issuer it was fetched for.
    IssuerMismatch {
        /// The redacted expected issuer.
        expected: String,
        /// The redacted issuer the document names.
        found: String,
    },
    /// The authorization server does not list `S256` in
    /// `code_challenge_methods_supported`: PKCE cannot be used, so the
    /// client refuses to proceed.
    PkceNotSupported,
    /// No way to obtain a client id: no pre-registered client, no Client ID
    /// Metadata Document support (or no metadata URL configured) and no
    /// registration endpoint.
    NoRegistrationMethod,
    /// The authorization server refused a request with an OAuth error
    /// (`invalid_grant`, `invalid_client`, `access_denied`, ...).
    OAuth {
        /// Which endpoint (`"token"`, `"registration"`, `"authorization"`).
        endpoint: &'static str,
        /// The OAuth `error` code.
        error: String,
        /// `error_description`, if any (the server's words, not ours).
        description: Option<String>,
    },
    /// The callback's `state` is missing or not the one sent.
    StateMismatch,
    /// The callback's `iss` is missing (when the server advertises RFC 9207)
    /// or not the issuer.
    IssMismatch,
    /// The callback carries no `code`.
    MissingCode,
    /// The authorization handler could not complete (user closed the tab,
    /// listener timed out, no redirect, ...).
    Handler(String),
    /// The token endpoint answered with a token type other than `Bearer`.
    UnsupportedTokenType(String),
    /// The server still answers 401 after the bounded retries.
    Unauthorized,
    /// The server still answers 403 `insufficient_scope` after the bounded
    /// step-up attempts, or a step-up would request nothing new.
    InsufficientScope {
        /// The scopes the server asked for last.
        scope: Vec<String>,
    },
    /// A client credential (private key, secret) is unusable.
    InvalidCredentials(&'static str),
    /// A [`ProviderQuirks`](crate::ProviderQuirks) setting is unusable
    /// (what, in the host's words; never a secret).
    InvalidQuirk(String),
    /// The protected resource metadata now names another authorization
    /// server than the one the configured (pre-registered) client belongs
    /// to: those credentials are not sent there (SEP-2352).
    AuthorizationServerChanged {
        /// The redacted issuer the credentials were used with.
        from: String,
        /// The redacted issuer the metadata names now.
        to: String,
    },
    /// The workload's assertion (SEP-1933) could not be had: the file,
    /// environment variable or provider named, never the assertion.
    Assertion(String),
    /// The token store failed.
    Store(String),
    /// A token file other users of the machine can read or write was found
    /// (and not used): its permissions must be `0600`.
    InsecureTokenFile {
        /// The file.
        path: std::path::PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The OS keychain could not be used: locked, absent, denied, timed
    /// out, or another failure (which one, and the service name).
    Keychain(crate::keychain::KeychainError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidUrl { what, reason } => write!(f, "invalid {what} URL: {reason}"),
            Error::InsecureUrl { what, endpoint } => {
                write!(f, "{what} URL {endpoint} must use https (plain http only for loopback hosts)")
            }
            Error::Fetch { endpoint, source } => write!(f, "request to {endpoint} failed: {source}"),
            Error::HttpStatus { what, endpoint, status } => {
                write!(f, "{what} at {endpoint} answered HTTP {status}")
            }
            Error::InvalidDocument { what, endpoint, reason } => {
                write!(f, "invalid {what} from {endpoint}: {reason}")
            }
            Error::ProtectedResourceMetadataNotFound => {
                f.write_str("no protected resource metadata found for the MCP server")
            }
            Error::ResourceMismatch { resource, server } => write!(
                f,
                "protected resource metadata names resource {resource}, which is not the MCP server {server}; authorization stopped"
            ),
            Error::AuthorizationServerMetadataNotFound { issuer } => {
                write!(f, "no authorization server metadata found for issuer {issuer}")
            }
            Error::IssuerMismatch { expected, found } => write!(
                f,
                "authorization server metadata names issuer {found}, expected {expected}"
            ),
            Error::PkceNotSupported => f.write_str(
                "the authorization server does not support PKCE with S256; refusing to authorize",
            ),
            Error::NoRegistrationMethod => f.write_str(
                "no client registration available: configure a pre-registered client id (the server offers neither client id metadata documents nor dynamic registration)",
            ),
            Error::OAuth { endpoint, error, description } => {
                write!(f, "{endpoint} endpoint error `{error}`")?;
                if let Some(d) = description {
                    write!(f, ": {d}")?;
                }
                Ok(())
            }
            Error::StateMismatch => {
                f.write_str("authorization callback state does not match the request; result discarded")
            }
            Error::IssMismatch => {
                f.write_str("authorization callback `iss` does not match the authorization server; result discarded")
            }
            Error::MissingCode => f.write_str("authorization callback carries no code"),
            Error::Handler(m) => write!(f, "authorization handler failed: {m}"),
            Error::UnsupportedTokenType(t) => write!(f, "unsupported token type `{t}`"),
            Error::Unauthorized => f.write_str("the server still refuses the credentials after re-authorization"),
            Error::InsufficientScope { scope } => write!(
                f,
                "the server still requires more scope ({}) after the allowed step-up attempts",
                scope.join(" ")
            ),
            Error::InvalidCredentials(what) => write!(f, "invalid client credentials: {what}"),
            Error::InvalidQuirk(what) => write!(f, "invalid provider setting: {what}"),
            Error::AuthorizationServerChanged { from, to } => write!(
                f,
                "the MCP server's authorization server changed from {from} to {to}; \
                 the pre-registered client belongs to the previous one and is not sent to the new one"
            ),
            Error::Assertion(m) => write!(f, "workload assertion: {m}"),
            Error::Store(m) => write!(f, "token store: {m}"),
            Error::InsecureTokenFile { path, mode } => write!(
                f,
                "token store: {} is open to other users (mode {mode:04o}); it was not used: \
                 make it private (chmod 600) or remove it",
                path.display()
            ),
            Error::Keychain(e) => write!(f, "token store: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    pub(crate) fn fetch(endpoint: &str, source: FetchError) -> Self {
        Error::Fetch { endpoint: redact(endpoint), source }
    }

    pub(crate) fn status(what: &'static str, endpoint: &str, status: u16) -> Self {
        Error::HttpStatus { what, endpoint: redact(endpoint), status }
    }

    pub(crate) fn document(what: &'static str, endpoint: &str, reason: impl Into<String>) -> Self {
        Error::InvalidDocument { what, endpoint: redact(endpoint), reason: reason.into() }
    }

    /// Whether this is the token endpoint's `invalid_grant` (an expired or
    /// revoked refresh token or code).
    pub fn is_invalid_grant(&self) -> bool {
        matches!(self, Error::OAuth { error, .. } if error == "invalid_grant")
    }
}
