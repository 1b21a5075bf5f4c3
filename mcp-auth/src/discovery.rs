//! Discovery: protected resource metadata (RFC 9728), authorization server
//! metadata (RFC 8414, OpenID Connect Discovery), and the 2025-03-26
//! fallbacks.

use bytes::Bytes;
use http::Response;
use mcp_sse::www_authenticate::BearerChallenge;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::fetch::{HttpFetch, metadata_get, parse_json, send};
use crate::url::{
    authorization_server_metadata_urls, canonical_server_uri, issuer_eq, origin, parse_url,
    protected_resource_metadata_urls, redact, require_secure, resource_matches, same_origin,
};

/// At most this many `authorization_servers` entries are tried.
const MAX_AUTHORIZATION_SERVERS: usize = 4;

/// An OAuth 2.0 Protected Resource Metadata document (RFC 9728 §2), the
/// members this client reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProtectedResourceMetadata {
    /// The resource identifier; sent as `resource` exactly as given.
    pub resource: String,
    /// Issuer identifiers of the authorization servers.
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    /// Scopes the resource uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// The resource accepts DPoP-bound tokens only (RFC 9728 §2).
    #[serde(default)]
    pub dpop_bound_access_tokens_required: bool,
}

/// An OAuth 2.0 Authorization Server Metadata document (RFC 8414 §2) or
/// OpenID Provider Metadata, the members this client reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier; must equal the issuer the document was
    /// fetched for.
    pub issuer: String,
    /// Where the user agent is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Where codes and refresh tokens are exchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Dynamic Client Registration endpoint (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// Scopes the server knows (`offline_access` here means refresh tokens
    /// may be asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Grant types the server supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// PKCE methods; absent means no PKCE (the client refuses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Token endpoint client authentication methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Algorithms for `private_key_jwt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// Client ID Metadata Documents are accepted as `client_id`.
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    /// RFC 9207: the authorization response carries `iss`.
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    /// RFC 7009 token revocation endpoint (RFC 8414 §2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    /// RFC 9449 §5.1: the algorithms the server accepts DPoP proofs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

impl AuthorizationServerMetadata {
    /// The default endpoints of a 2025-03-26 server without metadata:
    /// `/authorize`, `/token`, `/register` at the MCP server's origin.
    pub fn legacy_defaults(origin: &str) -> Self {
        let o = origin.trim_end_matches('/');
        AuthorizationServerMetadata {
            issuer: o.to_owned(),
            authorization_endpoint: Some(format!("{o}/authorize")),
            token_endpoint: Some(format!("{o}/token")),
            registration_endpoint: Some(format!("{o}/register")),
            scopes_supported: None,
            grant_types_supported: None,
            // The 2025-03-26 revision mandates PKCE S256 for these servers.
            code_challenge_methods_supported: Some(vec!["S256".to_owned()]),
            token_endpoint_auth_methods_supported: None,
            token_endpoint_auth_signing_alg_values_supported: None,
            client_id_metadata_document_supported: false,
            authorization_response_iss_parameter_supported: false,
            dpop_signing_alg_values_supported: None,
            revocation_endpoint: None,
        }
    }

    /// Whether `scopes_supported` lists `offline_access`.
    pub fn offers_offline_access(&self) -> bool {
        self.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|x| x == "offline_access"))
    }

    /// Whether refresh tokens may be asked for: `grant_types_supported`
    /// absent or listing `refresh_token`.
    pub fn allows_refresh_grant(&self) -> bool {
        self.grant_types_supported.as_ref().is_none_or(|g| g.iter().any(|x| x == "refresh_token"))
    }

    pub(crate) fn token_endpoint(&self) -> Result<&str, Error> {
        self.token_endpoint.as_deref().ok_or_else(|| {
            Error::document("authorization server metadata", &self.issuer, "no token_endpoint")
        })
    }

    pub(crate) fn authorization_endpoint(&self) -> Result<&str, Error> {
        self.authorization_endpoint.as_deref().ok_or_else(|| {
            Error::document(
                "authorization server metadata",
                &self.issuer,
                "no authorization_endpoint",
            )
        })
    }
}

/// How the authorization server was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoveryMode {
    /// Protected resource metadata, then authorization server metadata
    /// (2025-06-18 and later).
    ProtectedResource,
    /// 2025-03-26: no protected resource metadata; authorization server
    /// metadata at the MCP server's origin root.
    LegacyMetadata,
    /// 2025-03-26: no metadata at all; default endpoints at the MCP
    /// server's origin.
    LegacyDefaults,
}

/// The outcome of discovery: everything the flow needs to start.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Discovery {
    /// The MCP server URL discovery ran for.
    pub server_url: String,
    /// The `resource` parameter to send: the PRM's `resource` as given, or
    /// the server's canonical URI without PRM.
    pub resource: String,
    /// The protected resource metadata, if the server has some.
    pub protected_resource: Option<ProtectedResourceMetadata>,
    /// The issuer the tokens come from.
    pub issuer: String,
    /// The authorization server metadata (synthesised in
    /// [`DiscoveryMode::LegacyDefaults`]).
    pub metadata: AuthorizationServerMetadata,
    /// How it was found.
    pub mode: DiscoveryMode,
}

enum Fetched {
    Found(Response<Bytes>),
    Absent(u16),
}

async fn get(fetch: &dyn HttpFetch, what: &'static str, url: &str) -> Result<Fetched, Error> {
    let resp = send(fetch, what, metadata_get(url)?).await?;
    Ok(if resp.status().is_success() {
        Fetched::Found(resp)
    } else {
        Fetched::Absent(resp.status().as_u16())
    })
}

/// Fetches the protected resource metadata: from the challenge's
/// `resource_metadata` when given (only there), else from the well-known
/// URLs in order. `Ok(None)` when none of the well-known URLs has one.
/// Checks the document's `resource` against `server_url`.
pub async fn fetch_protected_resource_metadata(
    fetch: &dyn HttpFetch,
    server_url: &str,
    challenge: Option<&BearerChallenge>,
) -> Result<Option<ProtectedResourceMetadata>, Error> {
    const WHAT: &str = "protected resource metadata";
    let from_challenge = challenge.and_then(|c| c.resource_metadata.as_deref());
    let candidates = match from_challenge {
        Some(url) => vec![url.to_owned()],
        None => protected_resource_metadata_urls(server_url)?,
    };
    for url in &candidates {
        match get(fetch, WHAT, url).await? {
            Fetched::Found(resp) => {
                let prm: ProtectedResourceMetadata = parse_json(WHAT, url, resp.body())?;
                check_protected_resource(&prm, server_url)?;
                tracing::debug!(endpoint = %redact(url), "found protected resource metadata");
                return Ok(Some(prm));
            }
            Fetched::Absent(status) if from_challenge.is_some() => {
                return Err(Error::status(WHAT, url, status));
            }
            Fetched::Absent(status) => {
                tracing::debug!(endpoint = %redact(url), status, "no protected resource metadata here");
            }
        }
    }
    Ok(None)
}

/// The checks on a protected resource metadata document: its `resource`
/// identifies the MCP server, and it names at least one authorization
/// server.
pub fn check_protected_resource(
    prm: &ProtectedResourceMetadata,
    server_url: &str,
) -> Result<(), Error> {
    if !resource_matches(&prm.resource, server_url) {
        return Err(Error::ResourceMismatch {
            resource: redact(&prm.resource),
            server: redact(server_url),
        });
    }
    if prm.authorization_servers.is_empty() {
        return Err(Error::document(
            "protected resource metadata",
            server_url,
            "authorization_servers is empty",
        ));
    }
    Ok(())
}

/// Fetches the authorization server metadata of `issuer`, trying the
/// RFC 8414 and OpenID Connect URLs in the spec's order, and checks that the
/// document's `issuer` is `issuer`.
pub async fn fetch_authorization_server_metadata(
    fetch: &dyn HttpFetch,
    issuer: &str,
) -> Result<AuthorizationServerMetadata, Error> {
    const WHAT: &str = "authorization server metadata";
    require_secure("authorization server", issuer)?;
    for url in authorization_server_metadata_urls(issuer)? {
        match get(fetch, WHAT, &url).await? {
            Fetched::Found(resp) => {
                let meta: AuthorizationServerMetadata = parse_json(WHAT, &url, resp.body())?;
                if !issuer_eq(&meta.issuer, issuer) {
                    return Err(Error::IssuerMismatch {
                        expected: redact(issuer),
                        found: redact(&meta.issuer),
                    });
                }
                tracing::debug!(endpoint = %redact(&url), "found authorization server metadata");
                return Ok(meta);
            }
            Fetched::Absent(status) => {
                tracing::debug!(endpoint = %redact(&url), status, "no authorization server metadata here");
            }
        }
    }
    Err(Error::AuthorizationServerMetadataNotFound { issuer: redact(issuer) })
}

/// Runs discovery for the MCP server at `server_url`, given the 401's
/// challenge when there was one. Requests carry no credentials.
pub async fn discover(
    fetch: &dyn HttpFetch,
    server_url: &str,
    challenge: Option<&BearerChallenge>,
) -> Result<Discovery, Error> {
    discover_at(fetch, server_url, challenge, None).await
}

/// [`discover`], with the authorization server metadata read from
/// `metadata_url` when one is given (a server that publishes it elsewhere
/// than its well-known URLs; [`ProviderQuirks::metadata_url`](crate::ProviderQuirks::metadata_url)).
/// The protected resource metadata is still read when there is one, and
/// the document's `issuer` must then be one of its authorization servers;
/// without it, the resource is the server's canonical URI and the issuer
/// the document's.
pub async fn discover_at(
    fetch: &dyn HttpFetch,
    server_url: &str,
    challenge: Option<&BearerChallenge>,
    metadata_url: Option<&str>,
) -> Result<Discovery, Error> {
    let server = parse_url("MCP server", server_url)?;
    require_secure("MCP server", server_url)?;
    let prm = fetch_protected_resource_metadata(fetch, server_url, challenge).await?;
    if let Some(url) = metadata_url {
        return discover_configured(fetch, server_url, &server, prm, url).await;
    }
    if let Some(prm) = prm {
        let mut last = Error::AuthorizationServerMetadataNotFound { issuer: String::new() };
        for issuer in prm.authorization_servers.iter().take(MAX_AUTHORIZATION_SERVERS) {
            match fetch_authorization_server_metadata(fetch, issuer).await {
                Ok(metadata) => {
                    return Ok(Discovery {
                        server_url: server_url.to_owned(),
                        resource: prm.resource.clone(),
                        issuer: issuer.clone(),
                        protected_resource: Some(prm),
                        metadata,
                        mode: DiscoveryMode::ProtectedResource,
                    });
                }
                Err(
                    e @ (Error::AuthorizationServerMetadataNotFound { .. } | Error::Fetch { .. }),
                ) => {
                    tracing::debug!(error = %e, "authorization server unusable, trying the next");
                    last = e;
                }
                Err(e) => return Err(e),
            }
        }
        return Err(last);
    }
    // 2025-03-26: the authorization server is the MCP server's origin.
    let origin = origin(&server);
    let resource = canonical_server_uri(&server);
    let url = format!("{origin}/.well-known/oauth-authorization-server");
    const WHAT: &str = "authorization server metadata";
    if let Fetched::Found(resp) = get(fetch, WHAT, &url).await? {
        let metadata: AuthorizationServerMetadata = parse_json(WHAT, &url, resp.body())?;
        // 2025-03-26 servers often publish an issuer with a path (their
        // OAuth routes' prefix) at the origin root; the document is trusted
        // because it comes from the MCP server's own origin, so its issuer
        // must share that origin.
        if !same_origin(&metadata.issuer, &origin) {
            return Err(Error::IssuerMismatch {
                expected: redact(&origin),
                found: redact(&metadata.issuer),
            });
        }
        return Ok(Discovery {
            server_url: server_url.to_owned(),
            resource,
            protected_resource: None,
            issuer: metadata.issuer.clone(),
            metadata,
            mode: DiscoveryMode::LegacyMetadata,
        });
    }
    Ok(Discovery {
        server_url: server_url.to_owned(),
        resource,
        protected_resource: None,
        issuer: origin.clone(),
        metadata: AuthorizationServerMetadata::legacy_defaults(&origin),
        mode: DiscoveryMode::LegacyDefaults,
    })
}

/// Discovery with the metadata at a configured URL.
async fn discover_configured(
    fetch: &dyn HttpFetch,
    server_url: &str,
    server: &http::Uri,
    prm: Option<ProtectedResourceMetadata>,
    url: &str,
) -> Result<Discovery, Error> {
    const WHAT: &str = "authorization server metadata";
    require_secure("authorization server metadata", url)?;
    let metadata: AuthorizationServerMetadata = match get(fetch, WHAT, url).await? {
        Fetched::Found(resp) => parse_json(WHAT, url, resp.body())?,
        Fetched::Absent(_) => {
            return Err(Error::AuthorizationServerMetadataNotFound { issuer: redact(url) });
        }
    };
    require_secure("authorization server", &metadata.issuer)?;
    if let Some(prm) = &prm
        && !prm.authorization_servers.iter().any(|a| issuer_eq(a, &metadata.issuer))
    {
        return Err(Error::IssuerMismatch {
            expected: prm.authorization_servers.first().map(|a| redact(a)).unwrap_or_default(),
            found: redact(&metadata.issuer),
        });
    }
    tracing::debug!(endpoint = %redact(url), "read the configured authorization server metadata");
    let resource =
        prm.as_ref().map_or_else(|| canonical_server_uri(server), |p| p.resource.clone());
    let mode = if prm.is_some() {
        DiscoveryMode::ProtectedResource
    } else {
        DiscoveryMode::LegacyMetadata
    };
    Ok(Discovery {
        server_url: server_url.to_owned(),
        resource,
        issuer: metadata.issuer.clone(),
        protected_resource: prm,
        metadata,
        mode,
    })
}
