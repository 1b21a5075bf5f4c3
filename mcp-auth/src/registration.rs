//! Client registration: Client ID Metadata Documents and Dynamic Client
//! Registration (RFC 7591).

use serde::Deserialize;

use crate::discovery::AuthorizationServerMetadata;
use crate::error::Error;
use crate::fetch::{HttpFetch, endpoint_error, json_post, parse_json, send};
use crate::token::{ClientRegistration, ClientSecret, TokenEndpointAuthMethod};
use crate::url::{is_loopback_host, parse_url};

/// What the client says about itself, in registrations and in its Client
/// ID Metadata Document.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientMetadata {
    /// `client_name`, shown to the user on the consent page.
    pub client_name: String,
    /// `client_uri`, if any.
    pub client_uri: Option<String>,
    /// The https URL where the host serves its Client ID Metadata Document,
    /// if it has one; used as the `client_id` when the server supports
    /// such documents. Must be `https` with a path.
    pub metadata_url: Option<String>,
}

impl ClientMetadata {
    /// Metadata with a name only.
    pub fn new(client_name: impl Into<String>) -> Self {
        ClientMetadata { client_name: client_name.into(), client_uri: None, metadata_url: None }
    }

    /// Sets the Client ID Metadata Document URL (checked: https, with a path).
    pub fn with_metadata_url(mut self, url: impl Into<String>) -> Result<Self, Error> {
        let url = url.into();
        check_metadata_url(&url)?;
        self.metadata_url = Some(url);
        Ok(self)
    }

    /// Sets `client_uri`.
    pub fn with_client_uri(mut self, url: impl Into<String>) -> Self {
        self.client_uri = Some(url.into());
        self
    }
}

/// A Client ID Metadata Document URL must use `https` and have a path.
pub fn check_metadata_url(url: &str) -> Result<(), Error> {
    const WHAT: &str = "client id metadata document";
    let uri = parse_url(WHAT, url)?;
    if !uri.scheme_str().is_some_and(|s| s.eq_ignore_ascii_case("https")) {
        return Err(Error::InvalidUrl { what: WHAT, reason: "must use https" });
    }
    if uri.path().trim_matches('/').is_empty() {
        return Err(Error::InvalidUrl { what: WHAT, reason: "must have a path" });
    }
    Ok(())
}

fn grant_types(refresh: bool) -> Vec<&'static str> {
    if refresh { vec!["authorization_code", "refresh_token"] } else { vec!["authorization_code"] }
}

/// The Client ID Metadata Document the host serves at its metadata URL
/// (draft-ietf-oauth-client-id-metadata-document): `client_id` equal to the
/// URL, `client_name`, `redirect_uris`, grant and response types, and
/// `token_endpoint_auth_method` `none`.
pub fn client_id_metadata_document(
    meta: &ClientMetadata,
    redirect_uris: &[String],
) -> Result<serde_json::Value, Error> {
    let url = meta.metadata_url.as_deref().ok_or(Error::InvalidUrl {
        what: "client id metadata document",
        reason: "not configured",
    })?;
    let mut doc = serde_json::json!({
        "client_id": url,
        "client_name": meta.client_name,
        "redirect_uris": redirect_uris,
        "grant_types": grant_types(true),
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    });
    if let Some(u) = &meta.client_uri {
        doc["client_uri"] = serde_json::Value::String(u.clone());
    }
    Ok(doc)
}

/// The `token_endpoint_auth_method` to ask for in a registration: `none`
/// when the server lists it (or lists nothing: a native client is public),
/// else `client_secret_basic`, else `client_secret_post`.
pub fn preferred_auth_method(supported: Option<&[String]>) -> TokenEndpointAuthMethod {
    let Some(list) = supported else { return TokenEndpointAuthMethod::None };
    let has = |m: &str| list.iter().any(|x| x == m);
    if has("none") || list.is_empty() {
        TokenEndpointAuthMethod::None
    } else if has("client_secret_basic") {
        TokenEndpointAuthMethod::ClientSecretBasic
    } else if has("client_secret_post") {
        TokenEndpointAuthMethod::ClientSecretPost
    } else {
        TokenEndpointAuthMethod::None
    }
}

/// Whether a redirect URI is a native application's: `http`/`https` on a
/// loopback host (`localhost`, `127.0.0.0/8`, `::1`), or a private-use
/// (custom) scheme such as `com.example.app:/callback`.
fn is_native_redirect(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else { return false };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return true;
    }
    uri.parse::<http::Uri>().ok().and_then(|u| u.host().map(is_loopback_host)).unwrap_or(false)
}

/// The OpenID Connect `application_type` to register with (required by MCP
/// 2026-07-28, SEP-837): `native` when every redirect URI is a loopback or
/// custom-scheme one (desktop, mobile, CLI, a web app served on
/// `localhost`), `web` otherwise.
pub fn application_type(redirect_uris: &[String]) -> &'static str {
    if !redirect_uris.is_empty() && redirect_uris.iter().all(|u| is_native_redirect(u)) {
        "native"
    } else {
        "web"
    }
}

/// The RFC 7591 registration request body, with `application_type`
/// (see [`application_type`]).
pub fn registration_body(
    meta: &ClientMetadata,
    redirect_uris: &[String],
    as_meta: &AuthorizationServerMetadata,
    scopes: &[String],
) -> serde_json::Value {
    let mut body = serde_json::json!({
        "client_name": meta.client_name,
        "redirect_uris": redirect_uris,
        "grant_types": grant_types(as_meta.allows_refresh_grant()),
        "response_types": ["code"],
        "token_endpoint_auth_method":
            preferred_auth_method(as_meta.token_endpoint_auth_methods_supported.as_deref()).as_str(),
        "application_type": application_type(redirect_uris),
    });
    if let Some(u) = &meta.client_uri {
        body["client_uri"] = serde_json::Value::String(u.clone());
    }
    if !scopes.is_empty() {
        body["scope"] = serde_json::Value::String(scopes.join(" "));
    }
    body
}

#[derive(Deserialize)]
struct RegistrationResponse {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    token_endpoint_auth_method: Option<String>,
}

/// Parses a registration response (RFC 7591 §3.2.1). The method the server
/// returns is honoured. When it says nothing: a client without a secret uses
/// `none`; one with a secret uses `client_secret_basic` (the RFC 7591
/// default) when the server's `token_endpoint_auth_methods_supported`
/// (`supported`) is absent or lists it, else `client_secret_post` when
/// listed, else `none`.
pub fn parse_registration_response(
    body: &[u8],
    endpoint: &str,
    supported: Option<&[String]>,
) -> Result<ClientRegistration, Error> {
    const WHAT: &str = "registration response";
    let r: RegistrationResponse = parse_json(WHAT, endpoint, body)?;
    if r.client_id.is_empty() {
        return Err(Error::document(WHAT, endpoint, "empty client_id"));
    }
    let secret = r.client_secret.filter(|s| !s.is_empty()).map(ClientSecret::new);
    let method = match r.token_endpoint_auth_method.as_deref() {
        Some(name) => TokenEndpointAuthMethod::from_name(name).ok_or_else(|| {
            Error::document(WHAT, endpoint, "unsupported token_endpoint_auth_method")
        })?,
        None if secret.is_none() => TokenEndpointAuthMethod::None,
        None => {
            let has = |m: &str| supported.is_none_or(|l| l.iter().any(|x| x == m));
            if has("client_secret_basic") {
                TokenEndpointAuthMethod::ClientSecretBasic
            } else if supported.is_some_and(|l| l.iter().any(|x| x == "client_secret_post")) {
                TokenEndpointAuthMethod::ClientSecretPost
            } else {
                TokenEndpointAuthMethod::None
            }
        }
    };
    if matches!(
        method,
        TokenEndpointAuthMethod::ClientSecretBasic | TokenEndpointAuthMethod::ClientSecretPost
    ) && secret.is_none()
    {
        return Err(Error::document(
            WHAT,
            endpoint,
            "a client_secret method without a client_secret",
        ));
    }
    Ok(ClientRegistration { client_id: r.client_id, client_secret: secret, auth_method: method })
}

/// Registers the client dynamically (RFC 7591).
pub async fn register(
    fetch: &dyn HttpFetch,
    as_meta: &AuthorizationServerMetadata,
    meta: &ClientMetadata,
    redirect_uris: &[String],
    scopes: &[String],
) -> Result<ClientRegistration, Error> {
    let url = as_meta.registration_endpoint.as_deref().ok_or(Error::NoRegistrationMethod)?;
    let req = json_post(url, &registration_body(meta, redirect_uris, as_meta, scopes))?;
    let resp = send(fetch, "registration endpoint", req).await?;
    if !resp.status().is_success() {
        return Err(endpoint_error("registration", url, &resp));
    }
    let reg = parse_registration_response(
        resp.body(),
        url,
        as_meta.token_endpoint_auth_methods_supported.as_deref(),
    )?;
    tracing::debug!(method = reg.auth_method.as_str(), "registered client dynamically");
    Ok(reg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn auth_method_preference() {
        let cases: &[(Option<&[&str]>, TokenEndpointAuthMethod)] = &[
            (None, TokenEndpointAuthMethod::None),
            (Some(&["none"]), TokenEndpointAuthMethod::None),
            (Some(&["client_secret_basic"]), TokenEndpointAuthMethod::ClientSecretBasic),
            (Some(&["client_secret_post"]), TokenEndpointAuthMethod::ClientSecretPost),
            (
                Some(&["client_secret_post", "client_secret_basic"]),
                TokenEndpointAuthMethod::ClientSecretBasic,
            ),
            (Some(&["private_key_jwt"]), TokenEndpointAuthMethod::None),
            // `none` wins wherever it is listed.
            (Some(&["client_secret_basic", "none"]), TokenEndpointAuthMethod::None),
            (Some(&[]), TokenEndpointAuthMethod::None),
        ];
        for (supported, expected) in cases {
            let s = supported.map(v);
            assert_eq!(preferred_auth_method(s.as_deref()), *expected, "{supported:?}");
        }
    }

    #[test]
    fn registration_responses() {
        type Case<'a> = (&'a str, Option<(&'a str, bool, TokenEndpointAuthMethod)>);
        let cases: &[Case<'_>] = &[
            (
                r#"{"client_id":"c","client_secret":"s","token_endpoint_auth_method":"client_secret_post"}"#,
                Some(("c", true, TokenEndpointAuthMethod::ClientSecretPost)),
            ),
            (
                r#"{"client_id":"c","client_secret":"s","token_endpoint_auth_method":"client_secret_basic"}"#,
                Some(("c", true, TokenEndpointAuthMethod::ClientSecretBasic)),
            ),
            (
                r#"{"client_id":"c","token_endpoint_auth_method":"none"}"#,
                Some(("c", false, TokenEndpointAuthMethod::None)),
            ),
            // RFC 7591 default with a secret
            (
                r#"{"client_id":"c","client_secret":"s"}"#,
                Some(("c", true, TokenEndpointAuthMethod::ClientSecretBasic)),
            ),
            (r#"{"client_id":"c"}"#, Some(("c", false, TokenEndpointAuthMethod::None))),
            (r#"{"client_id":"c","token_endpoint_auth_method":"client_secret_basic"}"#, None),
            (r#"{"client_id":"c","token_endpoint_auth_method":"tls_client_auth"}"#, None),
            (r#"{"client_id":""}"#, None),
            (r#"{}"#, None),
        ];
        for (body, expected) in cases {
            let got =
                parse_registration_response(body.as_bytes(), "https://as.example/register", None);
            match expected {
                Some((id, secret, method)) => {
                    let r = got.unwrap();
                    assert_eq!(r.client_id, *id);
                    assert_eq!(r.client_secret.is_some(), *secret);
                    assert_eq!(r.auth_method, *method);
                }
                None => assert!(got.is_err(), "{body}"),
            }
        }
    }

    #[test]
    fn omitted_method_follows_server_support() {
        let body = br#"{"client_id":"c","client_secret":"s"}"#;
        let cases: &[(Option<&[&str]>, TokenEndpointAuthMethod)] = &[
            (None, TokenEndpointAuthMethod::ClientSecretBasic),
            (Some(&["client_secret_basic", "none"]), TokenEndpointAuthMethod::ClientSecretBasic),
            (Some(&["client_secret_post"]), TokenEndpointAuthMethod::ClientSecretPost),
            (Some(&["none"]), TokenEndpointAuthMethod::None),
        ];
        for (supported, expected) in cases {
            let s = supported.map(v);
            let r = parse_registration_response(body, "https://as.example/register", s.as_deref())
                .unwrap();
            assert_eq!(r.auth_method, *expected, "{supported:?}");
        }
    }

    #[test]
    fn metadata_documents() {
        assert!(check_metadata_url("https://app.example.com/oauth/client.json").is_ok());
        assert!(check_metadata_url("http://app.example.com/client.json").is_err());
        assert!(check_metadata_url("https://app.example.com/").is_err());
        assert!(check_metadata_url("https://app.example.com").is_err());
        let meta = ClientMetadata::new("Host")
            .with_metadata_url("https://conformance-test.local/client-metadata.json")
            .unwrap();
        let doc =
            client_id_metadata_document(&meta, &v(&["http://127.0.0.1:3000/callback"])).unwrap();
        assert_eq!(doc["client_id"], "https://conformance-test.local/client-metadata.json");
        assert_eq!(doc["client_name"], "Host");
        assert_eq!(doc["redirect_uris"][0], "http://127.0.0.1:3000/callback");
        assert_eq!(doc["grant_types"][1], "refresh_token");
    }

    #[test]
    fn registration_body_members() {
        let mut as_meta = AuthorizationServerMetadata::legacy_defaults("https://as.example");
        let meta = ClientMetadata::new("Host");
        let body = registration_body(&meta, &v(&["http://127.0.0.1/cb"]), &as_meta, &v(&["a"]));
        assert_eq!(body["grant_types"], serde_json::json!(["authorization_code", "refresh_token"]));
        assert_eq!(body["token_endpoint_auth_method"], "none");
        assert_eq!(body["application_type"], "native");
        assert_eq!(body["scope"], "a");
        as_meta.grant_types_supported = Some(v(&["authorization_code"]));
        as_meta.token_endpoint_auth_methods_supported = Some(v(&["client_secret_post"]));
        let body = registration_body(&meta, &v(&["http://127.0.0.1/cb"]), &as_meta, &[]);
        assert_eq!(body["grant_types"], serde_json::json!(["authorization_code"]));
        assert_eq!(body["token_endpoint_auth_method"], "client_secret_post");
        assert!(body.get("scope").is_none());
        let body = registration_body(&meta, &v(&["https://app.example/cb"]), &as_meta, &[]);
        assert_eq!(body["application_type"], "web");
    }

    #[test]
    fn application_types() {
        let cases: &[(&[&str], &str)] = &[
            (&["http://127.0.0.1:3000/callback"], "native"),
            (&["http://localhost/callback"], "native"),
            (&["http://LOCALHOST:8080/cb"], "native"),
            (&["http://[::1]:8080/cb"], "native"),
            (&["http://127.1.2.3/cb"], "native"),
            (&["com.example.app:/oauth2redirect"], "native"),
            (&["myapp://callback"], "native"),
            (&["http://127.0.0.1/cb", "myapp://cb"], "native"),
            (&["https://app.example.com/callback"], "web"),
            (&["http://localhost.example.com/cb"], "web"),
            (&["http://127.0.0.1/cb", "https://app.example.com/cb"], "web"),
            (&["not a uri"], "web"),
            (&[], "web"),
        ];
        for (uris, expected) in cases {
            assert_eq!(application_type(&v(uris)), *expected, "{uris:?}");
        }
    }
}
