//! Tokens, client credentials and the token endpoint requests
//! (authorization code, refresh, client credentials, JWT bearer).

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::HeaderValue;
use serde::{Deserialize, Serialize};

use crate::discovery::AuthorizationServerMetadata;
use crate::dpop::{DPOP, DPOP_NONCE, DpopKey, USE_DPOP_NONCE};
use crate::error::Error;
use crate::fetch::{FormPost, HttpFetch, endpoint_error, form_post, parse_json, send};
use crate::jwt::{CLIENT_ASSERTION_TYPE, PrivateKeyJwt};
use crate::scope;
use crate::url::form_component;

macro_rules! secret_string {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Wraps a value.
            pub fn new(value: impl Into<String>) -> Self {
                $name(value.into())
            }

            /// The value itself. Never log it.
            pub fn secret(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(concat!(stringify!($name), "(<redacted>)"))
            }
        }
    };
}

secret_string!(
    /// An OAuth access token. `Debug` does not show it.
    AccessToken
);
secret_string!(
    /// An OAuth refresh token. `Debug` does not show it.
    RefreshToken
);
secret_string!(
    /// A client secret. `Debug` does not show it.
    ClientSecret
);

impl AccessToken {
    /// `Bearer <token>` as a header value marked sensitive (HTTP/2 HPACK
    /// does not index it; `Debug` of the header map hides it).
    pub fn header_value(&self) -> Result<HeaderValue, Error> {
        let mut v = HeaderValue::try_from(format!("Bearer {}", self.0)).map_err(|_| {
            Error::document("token response", "", "access_token is not a valid header value")
        })?;
        v.set_sensitive(true);
        Ok(v)
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs()
}

/// How the access token is presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub enum TokenType {
    /// `Authorization: Bearer <token>` (RFC 6750).
    #[default]
    Bearer,
    /// `Authorization: DPoP <token>` with a proof of the key it is bound to
    /// (RFC 9449).
    #[serde(rename = "DPoP")]
    Dpop,
}

impl TokenType {
    fn is_bearer(&self) -> bool {
        *self == TokenType::Bearer
    }

    /// The `Authorization` scheme.
    pub fn scheme(self) -> &'static str {
        match self {
            TokenType::Bearer => "Bearer",
            TokenType::Dpop => "DPoP",
        }
    }
}

/// The tokens held for one server and issuer.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TokenSet {
    /// The access token.
    pub access_token: AccessToken,
    /// How it is presented (Bearer unless it is DPoP-bound).
    #[serde(default, skip_serializing_if = "TokenType::is_bearer")]
    pub token_type: TokenType,
    /// The refresh token, if the server gave one (the latest rotated one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<RefreshToken>,
    /// When the access token expires (Unix seconds), if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The granted scopes (the response's `scope`, else those requested).
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl fmt::Debug for TokenSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSet")
            .field("access_token", &self.access_token)
            .field("token_type", &self.token_type)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "<redacted>"))
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .finish()
    }
}

impl TokenSet {
    /// A token set with only an access token (for tests and hosts that
    /// obtained one elsewhere).
    pub fn new(access_token: AccessToken) -> Self {
        TokenSet {
            access_token,
            token_type: TokenType::Bearer,
            refresh_token: None,
            expires_at: None,
            scopes: Vec::new(),
        }
    }

    /// The `Authorization` header value (`Bearer <token>` or
    /// `DPoP <token>`), marked sensitive.
    pub fn header_value(&self) -> Result<HeaderValue, Error> {
        let mut v = HeaderValue::try_from(format!(
            "{} {}",
            self.token_type.scheme(),
            self.access_token.secret()
        ))
        .map_err(|_| {
            Error::document("token response", "", "access_token is not a valid header value")
        })?;
        v.set_sensitive(true);
        Ok(v)
    }

    /// Whether the access token expires within `skew` of `now` (or has).
    /// A token without expiry never does.
    pub fn expires_within(&self, now: SystemTime, skew: Duration) -> bool {
        self.expires_at.is_some_and(|at| unix(now) + skew.as_secs() >= at)
    }
}

/// Token endpoint client authentication (RFC 6749 §2.3, RFC 7523).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TokenEndpointAuthMethod {
    /// A public client: `client_id` in the body, no secret.
    None,
    /// HTTP Basic with the form-encoded id and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the body.
    ClientSecretPost,
    /// A signed JWT assertion in the body.
    PrivateKeyJwt,
}

impl TokenEndpointAuthMethod {
    /// The RFC 7591 name.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenEndpointAuthMethod::None => "none",
            TokenEndpointAuthMethod::ClientSecretBasic => "client_secret_basic",
            TokenEndpointAuthMethod::ClientSecretPost => "client_secret_post",
            TokenEndpointAuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// Parses an RFC 7591 name.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "none" => TokenEndpointAuthMethod::None,
            "client_secret_basic" => TokenEndpointAuthMethod::ClientSecretBasic,
            "client_secret_post" => TokenEndpointAuthMethod::ClientSecretPost,
            "private_key_jwt" => TokenEndpointAuthMethod::PrivateKeyJwt,
            _ => return None,
        })
    }
}

/// A client as the authorization server knows it: pre-registered,
/// registered dynamically, or a Client ID Metadata Document URL.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ClientRegistration {
    /// The client id.
    pub client_id: String,
    /// The client secret, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<ClientSecret>,
    /// How the client authenticates at the token endpoint.
    pub auth_method: TokenEndpointAuthMethod,
}

impl fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("auth_method", &self.auth_method)
            .finish()
    }
}

impl ClientRegistration {
    /// A public client (`none`).
    pub fn public(client_id: impl Into<String>) -> Self {
        ClientRegistration {
            client_id: client_id.into(),
            client_secret: None,
            auth_method: TokenEndpointAuthMethod::None,
        }
    }

    /// A confidential client with a secret, authenticating with `method`
    /// (`client_secret_basic` or `client_secret_post`).
    pub fn confidential(
        client_id: impl Into<String>,
        secret: impl Into<String>,
        method: TokenEndpointAuthMethod,
    ) -> Self {
        ClientRegistration {
            client_id: client_id.into(),
            client_secret: Some(ClientSecret::new(secret)),
            auth_method: method,
        }
    }

    /// A client authenticating with a signed JWT (`private_key_jwt`).
    pub fn private_key_jwt(client_id: impl Into<String>) -> Self {
        ClientRegistration {
            client_id: client_id.into(),
            client_secret: None,
            auth_method: TokenEndpointAuthMethod::PrivateKeyJwt,
        }
    }
}

/// Adds the client's authentication to a token request: form members, and
/// the Basic header when the method is `client_secret_basic`.
pub(crate) fn client_auth(
    client: &ClientRegistration,
    signer: Option<&PrivateKeyJwt>,
    audience: &str,
    now: SystemTime,
    params: &mut Vec<(&'static str, String)>,
) -> Result<Option<HeaderValue>, Error> {
    let secret = || {
        client
            .client_secret
            .as_ref()
            .ok_or(Error::InvalidCredentials("the auth method needs a client secret"))
    };
    match client.auth_method {
        TokenEndpointAuthMethod::None => {
            params.push(("client_id", client.client_id.clone()));
            Ok(None)
        }
        TokenEndpointAuthMethod::ClientSecretPost => {
            params.push(("client_id", client.client_id.clone()));
            params.push(("client_secret", secret()?.secret().to_owned()));
            Ok(None)
        }
        TokenEndpointAuthMethod::ClientSecretBasic => {
            // RFC 6749 §2.3.1: both parts form-encoded before base64.
            let raw = format!(
                "{}:{}",
                form_component(&client.client_id),
                form_component(secret()?.secret())
            );
            let mut v = HeaderValue::try_from(format!("Basic {}", STANDARD.encode(raw)))
                .map_err(|_| Error::InvalidCredentials("client credentials do not fit a header"))?;
            v.set_sensitive(true);
            Ok(Some(v))
        }
        TokenEndpointAuthMethod::PrivateKeyJwt => {
            let signer =
                signer.ok_or(Error::InvalidCredentials("private_key_jwt needs a signing key"))?;
            params.push(("client_id", client.client_id.clone()));
            params.push(("client_assertion_type", CLIENT_ASSERTION_TYPE.to_owned()));
            params.push((
                "client_assertion",
                signer.assertion(&client.client_id, audience, unix(now))?,
            ));
            Ok(None)
        }
    }
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<serde_json::Value>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
}

/// Parses a successful token response body (RFC 6749 §5.1). `requested`
/// is what was asked for (the grant when the response omits `scope`);
/// `previous_refresh` is kept when a refresh response rotates nothing.
pub fn parse_token_response(
    body: &[u8],
    now: SystemTime,
    requested: &[String],
    previous_refresh: Option<&RefreshToken>,
) -> Result<TokenSet, Error> {
    const WHAT: &str = "token response";
    let r: TokenResponse = parse_json(WHAT, "", body)?;
    if r.access_token.is_empty() {
        return Err(Error::document(WHAT, "", "empty access_token"));
    }
    let token_type = match r.token_type.as_deref() {
        Some(t) if t.eq_ignore_ascii_case("bearer") => TokenType::Bearer,
        Some(t) if t.eq_ignore_ascii_case("dpop") => TokenType::Dpop,
        // Some servers omit it; OAuth 2.1 requires it.
        None => TokenType::Bearer,
        Some(other) => return Err(Error::UnsupportedTokenType(other.chars().take(40).collect())),
    };
    let expires_in = match &r.expires_in {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Number(n)) => n.as_f64().filter(|s| *s >= 0.0).map(|s| s as u64),
        Some(serde_json::Value::String(s)) => s.trim().parse::<u64>().ok(),
        Some(_) => return Err(Error::document(WHAT, "", "expires_in is not a number")),
    };
    Ok(TokenSet {
        access_token: AccessToken::new(r.access_token),
        token_type,
        refresh_token: r
            .refresh_token
            .filter(|t| !t.is_empty())
            .map(RefreshToken::new)
            .or_else(|| previous_refresh.cloned()),
        expires_at: expires_in.map(|s| unix(now).saturating_add(s)),
        scopes: match r.scope {
            Some(s) => scope::split(&s),
            None => requested.to_vec(),
        },
    })
}

/// A grant to exchange at the token endpoint.
#[derive(Debug)]
#[non_exhaustive]
pub(crate) enum Grant<'a> {
    /// `authorization_code` with PKCE.
    AuthorizationCode {
        /// The code from the callback.
        code: &'a str,
        /// The redirect URI of the authorization request.
        redirect_uri: &'a str,
        /// The PKCE verifier.
        code_verifier: &'a str,
    },
    /// `refresh_token`.
    RefreshToken(&'a RefreshToken),
    /// `client_credentials`.
    ClientCredentials,
    /// RFC 7523 JWT bearer, with this assertion (an ID-JAG, a workload
    /// identity token).
    JwtBearer(&'a ClientSecret),
}

/// Everything a token request needs besides the grant.
#[derive(Debug)]
pub(crate) struct TokenCall<'a> {
    pub(crate) metadata: &'a AuthorizationServerMetadata,
    pub(crate) client: &'a ClientRegistration,
    pub(crate) signer: Option<&'a PrivateKeyJwt>,
    /// `None`: no `resource` parameter.
    pub(crate) resource: Option<&'a str>,
    pub(crate) scopes: &'a [String],
    pub(crate) now: SystemTime,
    /// The DPoP key and the authorization server's last nonce, when the
    /// token is to be DPoP-bound.
    pub(crate) dpop: Option<DpopCall<'a>>,
}

/// DPoP on a token request: the key, and where the authorization server's
/// nonce is kept between requests.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DpopCall<'a> {
    pub(crate) key: &'a DpopKey,
    pub(crate) nonce: &'a Mutex<Option<String>>,
}

impl DpopCall<'_> {
    fn nonce(&self) -> Option<String> {
        self.nonce.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Keeps the nonce a response hands out; `true` when it is new.
    fn keep_nonce(&self, resp: &http::Response<bytes::Bytes>) -> bool {
        let Some(n) = resp.headers().get(DPOP_NONCE).and_then(|v| v.to_str().ok()) else {
            return false;
        };
        let mut held = self.nonce.lock().unwrap_or_else(|p| p.into_inner());
        let new = held.as_deref() != Some(n);
        *held = Some(n.chars().take(MAX_NONCE).collect());
        new
    }
}

/// The longest server nonce kept.
const MAX_NONCE: usize = 1024;

/// Sends a POST to an authorization server endpoint (`names`: the endpoint
/// for [`send`], and for [`endpoint_error`]), built afresh by `build` for
/// each attempt; with `dpop`, each attempt carries a new proof for `POST`
/// and `url` with the server's last nonce, and a `use_dpop_nonce` refusal
/// that hands out a new nonce is answered by one retry. The successful
/// response, or the endpoint's error.
pub(crate) async fn post_with_dpop(
    fetch: &dyn HttpFetch,
    names: (&'static str, &'static str),
    url: &str,
    dpop: Option<&DpopCall<'_>>,
    now: SystemTime,
    build: impl Fn() -> Result<http::Request<bytes::Bytes>, Error>,
) -> Result<http::Response<bytes::Bytes>, Error> {
    let (what, endpoint) = names;
    let mut retried = false;
    loop {
        let mut req = build()?;
        if let Some(d) = dpop {
            let proof = d.key.proof("POST", url, None, d.nonce().as_deref(), now)?;
            let mut v = HeaderValue::try_from(proof)
                .map_err(|_| Error::InvalidCredentials("a DPoP proof does not fit a header"))?;
            v.set_sensitive(true);
            req.headers_mut().insert(DPOP, v);
        }
        let resp = send(fetch, what, req).await?;
        let fresh_nonce = dpop.is_some_and(|d| d.keep_nonce(&resp));
        if resp.status().is_success() {
            return Ok(resp);
        }
        let err = endpoint_error(endpoint, url, &resp);
        let wants_nonce = matches!(&err, Error::OAuth { error, .. } if error == USE_DPOP_NONCE);
        if wants_nonce && fresh_nonce && !retried {
            tracing::debug!(
                "the {endpoint} endpoint asked for a DPoP nonce; sending the request again"
            );
            retried = true;
            continue;
        }
        return Err(err);
    }
}

/// Builds the token request: grant members, `resource` (RFC 8707),
/// `scope` for client credentials, and the client authentication.
pub(crate) fn token_request(
    call: &TokenCall<'_>,
    grant: &Grant<'_>,
) -> Result<http::Request<bytes::Bytes>, Error> {
    let url = call.metadata.token_endpoint()?;
    let mut params: Vec<(&'static str, String)> = Vec::with_capacity(8);
    match grant {
        Grant::AuthorizationCode { code, redirect_uri, code_verifier } => {
            params.push(("grant_type", "authorization_code".into()));
            params.push(("code", (*code).to_owned()));
            params.push(("redirect_uri", (*redirect_uri).to_owned()));
            params.push(("code_verifier", (*code_verifier).to_owned()));
        }
        Grant::RefreshToken(rt) => {
            params.push(("grant_type", "refresh_token".into()));
            params.push(("refresh_token", rt.secret().to_owned()));
        }
        Grant::ClientCredentials => {
            params.push(("grant_type", "client_credentials".into()));
            if let Some(s) = scope::join(call.scopes) {
                params.push(("scope", s));
            }
        }
        Grant::JwtBearer(assertion) => {
            params.push(("grant_type", crate::xaa::JWT_BEARER_GRANT.into()));
            params.push(("assertion", assertion.secret().to_owned()));
            if let Some(s) = scope::join(call.scopes) {
                params.push(("scope", s));
            }
        }
    }
    if let Some(resource) = call.resource {
        params.push(("resource", resource.to_owned()));
    }
    let basic =
        client_auth(call.client, call.signer, &call.metadata.issuer, call.now, &mut params)?;
    form_post(FormPost { url, params, basic })
}

/// Performs a token request and parses the answer.
pub(crate) async fn exchange(
    fetch: &dyn HttpFetch,
    call: &TokenCall<'_>,
    grant: &Grant<'_>,
) -> Result<TokenSet, Error> {
    let url = call.metadata.token_endpoint()?;
    let resp = post_with_dpop(
        fetch,
        ("token endpoint", "token"),
        url,
        call.dpop.as_ref(),
        call.now,
        || token_request(call, grant),
    )
    .await?;
    let previous = match grant {
        Grant::RefreshToken(rt) => Some(*rt),
        _ => None,
    };
    let tokens = parse_token_response(resp.body(), call.now, call.scopes, previous)?;
    if tokens.token_type == TokenType::Dpop && call.dpop.is_none() {
        // A DPoP token without a key to prove it with is of no use.
        return Err(Error::UnsupportedTokenType("DPoP".into()));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn token_responses() {
        let now = at(1000);
        let req = vec!["a".to_owned()];
        let t = parse_token_response(
            br#"{"access_token":"AT","token_type":"bearer","expires_in":3600,"refresh_token":"RT","scope":"x y"}"#,
            now,
            &req,
            None,
        )
        .unwrap();
        assert_eq!(t.access_token.secret(), "AT");
        assert_eq!(t.refresh_token.as_ref().unwrap().secret(), "RT");
        assert_eq!(t.expires_at, Some(4600));
        assert_eq!(t.scopes, vec!["x", "y"]);
        assert!(!format!("{t:?}").contains("AT\""));
        assert!(!format!("{t:?}").contains("RT"));

        let old = RefreshToken::new("OLD");
        let t = parse_token_response(
            br#"{"access_token":"AT2","token_type":"Bearer"}"#,
            now,
            &req,
            Some(&old),
        )
        .unwrap();
        assert_eq!(t.refresh_token.unwrap().secret(), "OLD");
        assert_eq!(t.expires_at, None);
        assert_eq!(t.scopes, req);

        let t = parse_token_response(
            br#"{"access_token":"A","expires_in":"60","refresh_token":"NEW"}"#,
            now,
            &[],
            Some(&old),
        )
        .unwrap();
        assert_eq!(t.refresh_token.unwrap().secret(), "NEW");
        assert_eq!(t.expires_at, Some(1060));

        let bad: &[&[u8]] = &[
            br#"{"token_type":"Bearer"}"#,
            br#"{"access_token":"","token_type":"Bearer"}"#,
            br#"{"access_token":"A","token_type":"mac"}"#,
            br#"{"access_token":"A","expires_in":[1]}"#,
            b"not json",
        ];
        for body in bad {
            let err = parse_token_response(body, now, &[], None).unwrap_err();
            assert!(!err.to_string().contains("\"A\""), "{err}");
        }
    }

    /// A Bearer token set is stored without `token_type` (the default), a
    /// DPoP one with it; `Debug` of a token set and of a registration
    /// shows no secret; every method name reads back.
    #[test]
    fn storage_form_debug_and_names() {
        let mut t = TokenSet::new(AccessToken::new("AT-secret"));
        t.refresh_token = Some(RefreshToken::new("RT-secret"));
        let json = serde_json::to_value(&t).unwrap();
        assert!(json.get("token_type").is_none(), "{json}");
        t.token_type = TokenType::Dpop;
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["token_type"], "DPoP");
        let back: TokenSet = serde_json::from_value(json).unwrap();
        assert_eq!(back, t);
        let debug = format!("{t:?}");
        assert!(debug.starts_with("TokenSet") && debug.contains("Dpop"), "{debug}");
        assert!(!debug.contains("AT-secret") && !debug.contains("RT-secret"), "{debug}");

        let reg = ClientRegistration {
            client_id: "cid".into(),
            client_secret: Some(ClientSecret::new("CS-secret")),
            auth_method: TokenEndpointAuthMethod::ClientSecretBasic,
        };
        let debug = format!("{reg:?}");
        assert!(debug.contains("\"cid\"") && debug.contains("ClientSecretBasic"), "{debug}");
        assert!(!debug.contains("CS-secret"), "{debug}");

        for m in [
            TokenEndpointAuthMethod::None,
            TokenEndpointAuthMethod::ClientSecretBasic,
            TokenEndpointAuthMethod::ClientSecretPost,
            TokenEndpointAuthMethod::PrivateKeyJwt,
        ] {
            assert_eq!(TokenEndpointAuthMethod::from_name(m.as_str()), Some(m));
        }
    }

    #[test]
    fn expiry() {
        let mut t = TokenSet::new(AccessToken::new("x"));
        assert!(!t.expires_within(at(10), Duration::from_secs(60)));
        t.expires_at = Some(100);
        assert!(!t.expires_within(at(39), Duration::from_secs(60)));
        assert!(t.expires_within(at(40), Duration::from_secs(60)));
        assert!(t.expires_within(at(200), Duration::ZERO));
    }

    fn meta() -> AuthorizationServerMetadata {
        AuthorizationServerMetadata::legacy_defaults("https://as.example")
    }

    fn form(req: &http::Request<bytes::Bytes>) -> Vec<(String, String)> {
        crate::url::query_params(std::str::from_utf8(req.body()).unwrap())
    }

    #[test]
    fn client_authentication_methods() {
        let m = meta();
        let cases = [
            (
                ClientRegistration::public("pub"),
                None,
                vec![("client_id", "pub")],
                vec!["client_secret"],
            ),
            (
                ClientRegistration::confidential(
                    "id",
                    "s3cr3t",
                    TokenEndpointAuthMethod::ClientSecretPost,
                ),
                None,
                vec![("client_id", "id"), ("client_secret", "s3cr3t")],
                vec![],
            ),
            (
                ClientRegistration::confidential(
                    "id:1",
                    "p@ss word",
                    TokenEndpointAuthMethod::ClientSecretBasic,
                ),
                // form-encoded then base64 of "id%3A1:p%40ss%20word"
                Some(format!("Basic {}", STANDARD.encode("id%3A1:p%40ss%20word"))),
                vec![],
                vec!["client_secret", "client_id"],
            ),
        ];
        for (client, header, present, absent) in cases {
            let call = TokenCall {
                metadata: &m,
                client: &client,
                signer: None,
                resource: Some("https://mcp.example/mcp"),
                scopes: &[],
                now: at(5),
                dpop: None,
            };
            let req = token_request(
                &call,
                &Grant::AuthorizationCode {
                    code: "c",
                    redirect_uri: "http://127.0.0.1/cb",
                    code_verifier: "v",
                },
            )
            .unwrap();
            let body = form(&req);
            let get = |k: &str| body.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
            assert_eq!(get("grant_type"), Some("authorization_code"));
            assert_eq!(get("resource"), Some("https://mcp.example/mcp"));
            assert_eq!(get("code_verifier"), Some("v"));
            for (k, v) in present {
                assert_eq!(get(k), Some(v), "{k}");
            }
            for k in absent {
                assert_eq!(get(k), None, "{k}");
            }
            let auth = req.headers().get(http::header::AUTHORIZATION);
            assert_eq!(auth.map(|v| v.to_str().unwrap().to_owned()), header);
            if let Some(a) = auth {
                assert!(a.is_sensitive());
            }
            assert_eq!(req.uri(), "https://as.example/token");
            assert_eq!(req.method(), http::Method::POST);
        }
        let no_secret = ClientRegistration {
            client_id: "x".into(),
            client_secret: None,
            auth_method: TokenEndpointAuthMethod::ClientSecretBasic,
        };
        let call = TokenCall {
            metadata: &m,
            client: &no_secret,
            signer: None,
            resource: Some("r"),
            scopes: &[],
            now: at(0),
            dpop: None,
        };
        assert!(matches!(
            token_request(&call, &Grant::ClientCredentials),
            Err(Error::InvalidCredentials(_))
        ));
    }

    #[test]
    fn grants() {
        let m = meta();
        let client = ClientRegistration::public("pub");
        let scopes = vec!["a".to_owned(), "b".to_owned()];
        let call = TokenCall {
            metadata: &m,
            client: &client,
            signer: None,
            resource: Some("https://r"),
            scopes: &scopes,
            now: at(0),
            dpop: None,
        };
        let rt = RefreshToken::new("R1");
        let body = form(&token_request(&call, &Grant::RefreshToken(&rt)).unwrap());
        assert!(body.contains(&("grant_type".into(), "refresh_token".into())));
        assert!(body.contains(&("refresh_token".into(), "R1".into())));
        assert!(body.contains(&("resource".into(), "https://r".into())));
        assert!(!body.iter().any(|(k, _)| k == "scope"));
        let body = form(&token_request(&call, &Grant::ClientCredentials).unwrap());
        assert!(body.contains(&("grant_type".into(), "client_credentials".into())));
        assert!(body.contains(&("scope".into(), "a b".into())));
    }
}
