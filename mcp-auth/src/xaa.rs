//! Cross-app access (SEP-990, "Enterprise-Managed Authorization"): the
//! user's identity provider exchanges their ID token for an identity
//! assertion authorization grant (ID-JAG, RFC 8693 token exchange), which
//! the MCP server's authorization server accepts as a JWT bearer grant
//! (RFC 7523 §2.1; the token request is `token`'s `Grant::JwtBearer`).

use std::fmt;

use serde::Deserialize;

use crate::discovery::Discovery;
use crate::error::Error;
use crate::fetch::{FormPost, HttpFetch, endpoint_error, form_post, parse_json, send};
use crate::scope;
use crate::token::ClientSecret;

/// RFC 8693 token exchange grant type.
pub const TOKEN_EXCHANGE_GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// RFC 7523 JWT bearer grant type.
pub const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// The OpenID Connect ID token type (RFC 8693 §3).
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The identity assertion authorization grant token type.
pub const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// What the host holds from the user's enterprise identity provider.
/// `Debug` hides the ID token and the secret.
#[derive(Clone)]
#[non_exhaustive]
pub struct IdentityProvider {
    /// The identity provider's token endpoint (RFC 8693 token exchange).
    pub token_endpoint: String,
    /// The user's ID token, issued by the identity provider to the host.
    pub id_token: ClientSecret,
    /// The host's client id at the identity provider.
    pub client_id: String,
    /// The host's client secret at the identity provider, if it has one
    /// (sent with `client_secret_post`).
    pub client_secret: Option<ClientSecret>,
}

impl fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("token_endpoint", &crate::url::redact(&self.token_endpoint))
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl IdentityProvider {
    /// An identity provider reached at `token_endpoint`, with the user's
    /// `id_token` and the host's `client_id` there.
    pub fn new(
        token_endpoint: impl Into<String>,
        id_token: impl Into<String>,
        client_id: impl Into<String>,
    ) -> Self {
        IdentityProvider {
            token_endpoint: token_endpoint.into(),
            id_token: ClientSecret::new(id_token),
            client_id: client_id.into(),
            client_secret: None,
        }
    }

    /// Sets the host's client secret at the identity provider.
    pub fn with_client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(ClientSecret::new(secret));
        self
    }
}

#[derive(Deserialize)]
struct ExchangeResponse {
    access_token: String,
    #[serde(default)]
    issued_token_type: Option<String>,
}

/// Step 1: the ID token for an ID-JAG at the identity provider, for the
/// authorization server (`audience`: its issuer) and the MCP server
/// (`resource`).
pub(crate) async fn request_id_jag(
    fetch: &dyn HttpFetch,
    idp: &IdentityProvider,
    disc: &Discovery,
    scopes: &[String],
) -> Result<ClientSecret, Error> {
    const WHAT: &str = "token exchange response";
    let mut params: Vec<(&'static str, String)> = vec![
        ("grant_type", TOKEN_EXCHANGE_GRANT.into()),
        ("requested_token_type", ID_JAG_TYPE.into()),
        ("subject_token", idp.id_token.secret().to_owned()),
        ("subject_token_type", ID_TOKEN_TYPE.into()),
        ("audience", disc.metadata.issuer.clone()),
        ("resource", disc.resource.clone()),
        ("client_id", idp.client_id.clone()),
    ];
    if let Some(s) = &idp.client_secret {
        params.push(("client_secret", s.secret().to_owned()));
    }
    if let Some(s) = scope::join(scopes) {
        params.push(("scope", s));
    }
    let url = idp.token_endpoint.as_str();
    let req = form_post(FormPost { url, params, basic: None })?;
    let resp = send(fetch, "identity provider token endpoint", req).await?;
    if !resp.status().is_success() {
        return Err(endpoint_error("identity provider token", url, &resp));
    }
    let r: ExchangeResponse = parse_json(WHAT, url, resp.body())?;
    if r.issued_token_type.as_deref().is_some_and(|t| t != ID_JAG_TYPE) {
        return Err(Error::document(WHAT, url, "issued_token_type is not an ID-JAG"));
    }
    if r.access_token.is_empty() {
        return Err(Error::document(WHAT, url, "empty access_token"));
    }
    Ok(ClientSecret::new(r.access_token))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Debug` shows the endpoint (redacted) and the client id, never the
    /// ID token or the secret.
    #[test]
    fn debug_hides_the_token_and_the_secret() {
        let idp = IdentityProvider::new("https://idp.example/token?k=v", "eyJ.id.token", "host")
            .with_client_secret("s3cret");
        let debug = format!("{idp:?}");
        assert!(debug.starts_with("IdentityProvider"), "{debug}");
        assert!(debug.contains("idp.example") && debug.contains("\"host\""), "{debug}");
        for secret in ["eyJ", "s3cret", "k=v"] {
            assert!(!debug.contains(secret), "{debug}");
        }
    }
}
