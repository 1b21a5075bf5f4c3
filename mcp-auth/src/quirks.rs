//! What real authorization servers need that the MCP specification does
//! not say: the `resource` parameter left out or replaced, the metadata at
//! a URL of its own, more authorization parameters, fixed scopes.
//!
//! Each is off by default (the specification's behaviour) and set per
//! server by the host, usually from its configuration.

use crate::error::Error;
use crate::url::{parse_url, require_secure};

/// Authorization request parameters the client sets itself, which
/// [`ProviderQuirks::authorization_params`] may not replace.
const RESERVED: [&str; 8] = [
    "response_type",
    "client_id",
    "redirect_uri",
    "code_challenge",
    "code_challenge_method",
    "state",
    "resource",
    "scope",
];

/// What the RFC 8707 `resource` parameter of the authorization and token
/// requests carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceParam {
    /// The protected resource metadata's `resource` (the MCP server's
    /// canonical URI): the specification's rule.
    #[default]
    Metadata,
    /// No `resource` parameter: for authorization servers that refuse one
    /// they do not know (Microsoft Entra ID's AADSTS9010010 for many app
    /// registrations). The token's audience is then the server's choice.
    Omit,
    /// This value instead (an application id URI such as
    /// `api://mcp-server`).
    Value(String),
}

impl ResourceParam {
    /// The value to send, given the metadata's `resource`; `None`: none.
    pub fn resolve<'a>(&'a self, metadata_resource: &'a str) -> Option<&'a str> {
        match self {
            ResourceParam::Metadata => Some(metadata_resource),
            ResourceParam::Omit => None,
            ResourceParam::Value(v) => Some(v),
        }
    }
}

/// Per-server departures from the specification's defaults, for
/// authorization servers as they are.
///
/// ```
/// use mcp_auth::{OAuthConfig, ProviderQuirks, ResourceParam};
///
/// // An Okta/Auth0-style server: no `resource`, an `audience` instead.
/// let quirks = ProviderQuirks::default()
///     .with_resource(ResourceParam::Omit)
///     .with_authorization_param("audience", "https://api.example.com/mcp");
/// let config = OAuthConfig::new("https://mcp.example.com/mcp", "my-host").with_quirks(quirks);
/// # let _ = config;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProviderQuirks {
    /// The `resource` parameter. Default: the metadata's.
    pub resource: ResourceParam,
    /// The authorization server metadata document's URL, fetched instead
    /// of the well-known URLs of the issuer (and of the 2025-03-26
    /// fallbacks when the MCP server publishes no protected resource
    /// metadata). When the protected resource metadata names authorization
    /// servers, the document's `issuer` must be one of them. Must be
    /// `https` (or loopback `http`).
    pub metadata_url: Option<String>,
    /// More parameters of the authorization request (`prompt`,
    /// `audience`, `acr_values`, ...), in order; those the client sets
    /// itself (`state`, `scope`, `resource`, ...) are refused.
    pub authorization_params: Vec<(String, String)>,
    /// Scopes asked for on every authorization, whatever the server's
    /// challenge or metadata name (`offline_access` is still added when
    /// offered); a step-up after `insufficient_scope` still adds what the
    /// server asks for. `None`: the specification's scope selection.
    pub scopes_override: Option<Vec<String>>,
}

impl ProviderQuirks {
    /// Sets [`resource`](Self::resource).
    pub fn with_resource(mut self, resource: ResourceParam) -> Self {
        self.resource = resource;
        self
    }

    /// Sets [`metadata_url`](Self::metadata_url).
    pub fn with_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// Adds one of the [`authorization_params`](Self::authorization_params).
    pub fn with_authorization_param(
        mut self,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        self.authorization_params.push((name.into(), value.into()));
        self
    }

    /// Sets [`scopes_override`](Self::scopes_override).
    pub fn with_scopes_override<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_override = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Refuses a metadata URL that is not `https` (or loopback `http`), an
    /// authorization parameter the client sets itself or with an empty
    /// name, and an empty overriding `resource`.
    pub fn check(&self) -> Result<(), Error> {
        if let Some(url) = &self.metadata_url {
            parse_url("authorization server metadata", url)?;
            require_secure("authorization server metadata", url)?;
        }
        for (name, _) in &self.authorization_params {
            if name.is_empty() || RESERVED.contains(&name.as_str()) {
                return Err(Error::InvalidQuirk(format!(
                    "the authorization parameter {name:?} is the client's own"
                )));
            }
        }
        if matches!(&self.resource, ResourceParam::Value(v) if v.trim().is_empty()) {
            return Err(Error::InvalidQuirk("an empty `resource` value".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_resolves_as_configured() {
        let cases = [
            (ResourceParam::Metadata, Some("https://mcp.example/mcp")),
            (ResourceParam::Omit, None),
            (ResourceParam::Value("api://mcp".into()), Some("api://mcp")),
        ];
        for (param, expected) in cases {
            assert_eq!(param.resolve("https://mcp.example/mcp"), expected, "{param:?}");
        }
    }

    #[test]
    fn check_refuses_what_would_break_the_flow() {
        let ok = ProviderQuirks::default()
            .with_authorization_param("prompt", "consent")
            .with_metadata_url("https://idp.example/.well-known/openid-configuration");
        assert!(ok.check().is_ok());
        let bad = [
            ProviderQuirks::default().with_authorization_param("state", "x"),
            ProviderQuirks::default().with_authorization_param("scope", "x"),
            ProviderQuirks::default().with_authorization_param("", "x"),
            ProviderQuirks::default().with_metadata_url("http://idp.example/meta"),
            ProviderQuirks::default().with_metadata_url("not a url"),
            ProviderQuirks::default().with_resource(ResourceParam::Value(" ".into())),
        ];
        for quirks in bad {
            assert!(quirks.check().is_err(), "{quirks:?}");
        }
    }
}
