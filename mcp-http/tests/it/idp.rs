//! OAuth against a real OpenID provider: `oidc-provider` from npm (pinned,
//! certified, written by nobody here) on a free loopback port, with
//! dynamic client registration, PKCE, refresh-token rotation, resource
//! indicators, DPoP and client credentials on. The testkit's MCP server
//! accepts only the provider's JWT access tokens (signature against its
//! key set, `iss`, `aud` = the MCP endpoint, `exp`; the proof of a
//! DPoP-bound one). The login goes through the real loopback listener with
//! this test as the browser (the provider's interaction approves at once).
//! What the provider says about tokens the client no longer holds (a
//! rotated refresh token, a revoked one) is asked at its token endpoint.
//! Every `tracing` event is captured and searched for the tokens.
//!
//! `cargo xtask idp` installs the provider and runs this module with
//! `MCP_IDP_NODE` and `MCP_IDP_JS` set.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_http::mcp_auth::loopback::LoopbackHandler;
use mcp_http::mcp_auth::{
    AssertionSource, ClientRegistration, ClientSecret, DpopMode, MemoryTokenStore, OAuthConfig,
    ProviderQuirks, StoreKey, StoredAuth, TokenEndpointAuthMethod, TokenStore, TokenType,
};
use mcp_http::{HttpOptions, OAuthOptions};
use mcp_test_support::idp::{Browser, Provider, post_form};
use mcp_test_support::{LogCapture, bounded_by, text};
use mcp_testkit::{HttpConfig, HttpServerHandle, JwtAuth, serve_http};
use serde_json::{Value, json};

/// The results of the browser's logins.
pub(crate) type Logins = Arc<Mutex<Vec<Result<(String, u16), String>>>>;

/// An MCP server that takes the provider's tokens for its endpoint.
pub(crate) async fn mcp_server(idp: &Provider) -> HttpServerHandle {
    let config = HttpConfig {
        jwt_auth: Some(JwtAuth::new(idp.issuer(), idp.jwks_uri())),
        ..HttpConfig::default()
    };
    serve_http(config).await.expect("the MCP server starts")
}

/// A loopback handler whose URL this test opens as the browser would.
pub(crate) async fn browser_handler(logins: &Logins) -> Arc<LoopbackHandler> {
    let handler = LoopbackHandler::bind(Duration::from_secs(30)).await.expect("bind");
    as_browser(handler, logins)
}

/// `handler`, with this test opening its URL as the browser would.
pub(crate) fn as_browser(handler: LoopbackHandler, logins: &Logins) -> Arc<LoopbackHandler> {
    let logins = logins.clone();
    Arc::new(handler.on_url(move |url| {
        let (url, logins) = (url.to_owned(), logins.clone());
        tokio::spawn(async move {
            let outcome = Browser::new().authorize(&url).await;
            logins.lock().unwrap().push(outcome);
        });
    }))
}

/// Options with the browser's handler and `store`.
pub(crate) fn options(
    config: OAuthConfig,
    handler: Option<Arc<LoopbackHandler>>,
    store: &Arc<MemoryTokenStore>,
) -> HttpOptions {
    let mut oauth = OAuthOptions::from_config(config).with_store(store.clone());
    if let Some(handler) = handler {
        oauth = oauth.with_handler(handler);
    }
    let mut options = HttpOptions::new("idp-test").with_oauth(oauth);
    options.request_timeout = Duration::from_secs(20);
    options
}

/// Connects, calls `echo` and closes; the error's text when a step fails.
pub(crate) async fn call_echo(
    server: &HttpServerHandle,
    options: HttpOptions,
) -> Result<(), String> {
    let client = mcp_http::connect(&server.url(), options).map_err(|e| e.to_string())?;
    client.initialize().await.map_err(|e| e.to_string())?;
    let result = client
        .call_tool("echo", json!({"message": "through the provider"}))
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(text(&result), "through the provider");
    client.close().await.map_err(|e| e.to_string())
}

/// The one entry of the store, with its key.
pub(crate) fn stored(store: &MemoryTokenStore) -> (StoreKey, StoredAuth) {
    let keys = store.keys().expect("keys");
    assert_eq!(keys.len(), 1, "{keys:?}");
    let value = store.load(&keys[0]).expect("load").expect("an entry");
    (keys[0].clone(), value)
}

/// What the provider answers a refresh with `refresh_token` by `client_id`.
async fn refresh_at_provider(idp: &Provider, client_id: &str, refresh_token: &str) -> (u16, Value) {
    post_form(
        &idp.token_endpoint(),
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client_id),
        ],
    )
    .await
    .expect("the provider answers")
}

/// Runs `f` on a multi-thread runtime with every event captured at TRACE;
/// returns the log text.
pub(crate) fn captured<F: std::future::Future<Output = Vec<String>>>(
    f: F,
) -> (String, Vec<String>) {
    let logs = LogCapture::start(tracing::Level::TRACE);
    let runtime = logs.multi_thread_runtime(2);
    let secrets = runtime.block_on(bounded_by(Duration::from_secs(120), f));
    drop(runtime);
    (logs.text(), secrets)
}

pub(crate) fn assert_secret_free(logs: &str, secrets: &[String]) {
    assert!(!logs.is_empty(), "events were captured");
    for secret in secrets.iter().filter(|s| s.len() > 8) {
        assert!(!logs.contains(secret.as_str()), "a secret reached the log");
    }
}

#[test]
fn login_call_refresh_rotation_revocation_and_logout() {
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({}));
        let server = mcp_server(&idp).await;
        let store = Arc::new(MemoryTokenStore::new());
        let logins = Logins::default();
        let config = OAuthConfig::new("", "idp-test");

        // Login: registration, the browser through the provider's
        // interaction, code, token; the call goes through with it.
        let handler = browser_handler(&logins).await;
        call_echo(&server, options(config.clone(), Some(handler), &store)).await.expect("the call");
        let outcomes = logins.lock().unwrap().clone();
        assert_eq!(outcomes.len(), 1, "one login");
        let (callback, status) = outcomes[0].clone().expect("the browser reached the callback");
        assert!(callback.contains("/callback?code="), "{callback}");
        assert_eq!(status, 200);
        let (key, first) = stored(&store);
        assert_eq!(key.issuer, idp.issuer());
        assert_eq!(key.resource, server.url());
        let client = first.client.clone().expect("a registration");
        let first_tokens = first.tokens.clone().expect("tokens");
        let first_refresh = first_tokens.refresh_token.clone().expect("a refresh token");

        // Refresh: a client that refreshes long before expiry, on the same
        // store, with no way to log in. The provider rotates the refresh
        // token; the new access token is good at the MCP server.
        let mut eager = config.clone();
        eager.refresh_skew = Duration::from_secs(24 * 3600);
        call_echo(&server, options(eager, None, &store)).await.expect("the call after a refresh");
        let (_, second) = stored(&store);
        let second_tokens = second.tokens.clone().expect("tokens");
        let second_refresh = second_tokens.refresh_token.clone().expect("a rotated refresh token");
        assert_ne!(second_tokens.access_token.secret(), first_tokens.access_token.secret());
        assert_ne!(second_refresh.secret(), first_refresh.secret(), "rotated");
        assert_eq!(logins.lock().unwrap().len(), 1, "no second login");

        // Revocation, then logout.
        let oauth_client =
            mcp_http::connect(&server.url(), options(config.clone(), None, &store)).unwrap();
        let oauth = oauth_client.transport().oauth().expect("OAuth is configured");
        // The refresh token is revoked; the provider's self-contained JWT
        // access token cannot be (`unsupported_token_type`), so not every
        // token was.
        assert!(!oauth.revoke().await.expect("revoke"));
        let (status, body) =
            refresh_at_provider(&idp, &client.client_id, second_refresh.secret()).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("invalid_grant")),
            "revoked: {body}"
        );
        // The rotated-out token was spent at the provider too.
        let (status, _) =
            refresh_at_provider(&idp, &client.client_id, first_refresh.secret()).await;
        assert_eq!(status, 400);
        oauth.logout().expect("logout");
        let (_, after) = stored(&store);
        assert!(after.tokens.is_none(), "the tokens are forgotten");
        assert_eq!(
            after.client.map(|c| c.client_id),
            Some(client.client_id.clone()),
            "the registration is kept"
        );
        // Without tokens and without a way to log in, the server refuses.
        let refused =
            call_echo(&server, options(config, None, &store)).await.expect_err("no token");
        assert!(!refused.is_empty());

        vec![
            first_tokens.access_token.secret().to_owned(),
            first_refresh.secret().to_owned(),
            second_tokens.access_token.secret().to_owned(),
            second_refresh.secret().to_owned(),
            callback
                .split("code=")
                .nth(1)
                .unwrap_or_default()
                .split('&')
                .next()
                .unwrap_or_default()
                .to_owned(),
        ]
    });
    assert_secret_free(&logs, &secrets);
}

#[test]
fn rs256_tokens_are_verified_too() {
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({"access_token_alg": "RS256"}));
        let server = mcp_server(&idp).await;
        let store = Arc::new(MemoryTokenStore::new());
        let logins = Logins::default();
        let handler = browser_handler(&logins).await;
        call_echo(&server, options(OAuthConfig::new("", "idp-test"), Some(handler), &store))
            .await
            .expect("the call");
        let (_, entry) = stored(&store);
        let token = entry.tokens.expect("tokens").access_token.secret().to_owned();
        let header = token.split('.').next().unwrap_or_default().to_owned();
        assert!(header.starts_with("eyJ"), "a JWT");
        vec![token]
    });
    assert_secret_free(&logs, &secrets);
}

#[test]
fn dpop_bound_tokens_with_the_providers_nonces() {
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({"dpop_nonce": true}));
        let server = mcp_server(&idp).await;
        let store = Arc::new(MemoryTokenStore::new());
        let logins = Logins::default();
        let config = OAuthConfig::new("", "idp-test").with_dpop(DpopMode::Always);
        let handler = browser_handler(&logins).await;
        call_echo(&server, options(config.clone(), Some(handler), &store)).await.expect("the call");
        let (_, entry) = stored(&store);
        let tokens = entry.tokens.clone().expect("tokens");
        assert_eq!(tokens.token_type, TokenType::Dpop, "DPoP-bound");
        assert!(entry.dpop_key.is_some());
        // Every request to the MCP server carried the DPoP scheme and a proof.
        let with_token: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.headers.contains_key("authorization"))
            .collect();
        assert!(!with_token.is_empty());
        for request in &with_token {
            let scheme = request.headers["authorization"]
                .to_str()
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_owned();
            assert_eq!(scheme, "DPoP");
            assert!(request.headers.contains_key("dpop"));
        }
        // A refresh with a proof and the provider's nonce, then revocation
        // with a proof of the key.
        let mut eager = config.clone();
        eager.refresh_skew = Duration::from_secs(24 * 3600);
        call_echo(&server, options(eager, None, &store)).await.expect("the call after a refresh");
        let (_, refreshed) = stored(&store);
        let refreshed = refreshed.tokens.expect("tokens");
        let refreshed_rt =
            refreshed.refresh_token.as_ref().map(|r| r.secret().to_owned()).unwrap_or_default();
        assert_ne!(refreshed.access_token.secret(), tokens.access_token.secret());
        let client = mcp_http::connect(&server.url(), options(config, None, &store)).unwrap();
        // With a proof of the key: the refresh token is revoked (the JWT
        // access token cannot be).
        assert!(!client.transport().oauth().expect("OAuth").revoke().await.expect("revoke"));

        vec![
            tokens.access_token.secret().to_owned(),
            refreshed.access_token.secret().to_owned(),
            refreshed_rt,
        ]
    });
    assert_secret_free(&logs, &secrets);
}

#[test]
fn client_credentials_with_a_pre_registered_secret() {
    const SECRET: &str = "machine-client-secret-31";
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({"clients": [{
            "client_id": "machine",
            "client_secret": SECRET,
            "grant_types": ["client_credentials"],
            "redirect_uris": [],
            "response_types": [],
            "token_endpoint_auth_method": "client_secret_basic",
        }]}));
        let server = mcp_server(&idp).await;
        let store = Arc::new(MemoryTokenStore::new());
        let config = OAuthConfig::new("", "machine").with_client_credentials(
            ClientRegistration::confidential(
                "machine",
                SECRET,
                TokenEndpointAuthMethod::ClientSecretBasic,
            ),
        );
        call_echo(&server, options(config, None, &store)).await.expect("the call");
        let (_, entry) = stored(&store);
        let token = entry.tokens.expect("tokens").access_token.secret().to_owned();
        vec![token, SECRET.to_owned()]
    });
    assert_secret_free(&logs, &secrets);
}

#[test]
fn a_token_for_another_audience_is_refused_by_the_mcp_server() {
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({}));
        let config = HttpConfig {
            jwt_auth: Some(
                JwtAuth::new(idp.issuer(), idp.jwks_uri())
                    .with_audience("https://elsewhere.example/mcp"),
            ),
            ..HttpConfig::default()
        };
        let server = serve_http(config).await.expect("the MCP server starts");
        let store = Arc::new(MemoryTokenStore::new());
        let logins = Logins::default();
        let handler = browser_handler(&logins).await;
        let error =
            call_echo(&server, options(OAuthConfig::new("", "idp-test"), Some(handler), &store))
                .await
                .expect_err("the token names the wrong audience");
        assert!(!error.is_empty());
        let refusals: Vec<String> = server
            .requests()
            .iter()
            .filter(|r| r.headers.contains_key("authorization"))
            .map(|r| r.target.clone())
            .collect();
        assert!(!refusals.is_empty(), "a token was presented and refused");
        let (_, entry) = stored(&store);
        entry.tokens.map(|t| vec![t.access_token.secret().to_owned()]).unwrap_or_default()
    });
    assert_secret_free(&logs, &secrets);
}

/// The `sub` of a JWT access token.
fn subject(token: &str) -> String {
    use base64::Engine as _;
    let claims = token.split('.').nth(1).unwrap_or_default();
    let claims =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(claims).unwrap_or_default();
    let claims: Value = serde_json::from_slice(&claims).unwrap_or_default();
    claims["sub"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn two_accounts_on_one_server_keep_their_own_tokens() {
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({}));
        let server = mcp_server(&idp).await;
        let store = Arc::new(MemoryTokenStore::new());
        let account = |label: &str, user: &str| {
            OAuthConfig::new("", "idp-test")
                .with_account(label)
                .with_quirks(ProviderQuirks::default().with_authorization_param("login_hint", user))
        };
        for (label, user) in [("work", "alice"), ("home", "bob")] {
            let handler = browser_handler(&Logins::default()).await;
            call_echo(&server, options(account(label, user), Some(handler), &store))
                .await
                .expect("the call");
        }
        let mut keys = store.keys().expect("keys");
        keys.sort_by(|a, b| a.account.cmp(&b.account));
        let accounts: Vec<_> = keys.iter().map(|k| k.account.as_deref()).collect();
        assert_eq!(accounts, [Some("home"), Some("work")]);
        let token = |key: &StoreKey| {
            store.load(key).unwrap().unwrap().tokens.unwrap().access_token.secret().to_owned()
        };
        let (home, work) = (token(&keys[0]), token(&keys[1]));
        assert_eq!((subject(&home), subject(&work)), ("bob".to_owned(), "alice".to_owned()));

        // Logging out of one account leaves the other's tokens; each
        // account's next call uses its own, without a login.
        let client =
            mcp_http::connect(&server.url(), options(account("work", "alice"), None, &store))
                .unwrap();
        client.transport().oauth().expect("OAuth").logout().expect("logout");
        assert!(store.load(&keys[1]).unwrap().unwrap().tokens.is_none());
        assert!(store.load(&keys[0]).unwrap().unwrap().tokens.is_some());
        call_echo(&server, options(account("home", "bob"), None, &store))
            .await
            .expect("home still in");
        call_echo(&server, options(account("work", "alice"), None, &store))
            .await
            .expect_err("work is logged out");
        vec![home, work]
    });
    assert_secret_free(&logs, &secrets);
}

/// `oauth2-mock-server` (another authorization server nobody here wrote)
/// for the two machine grants: client credentials, and a workload's
/// assertion presented as an RFC 7523 JWT-bearer grant. Its RS256 tokens
/// are checked by the MCP server against its key set and audience.
#[test]
fn client_credentials_and_jwt_bearer_against_oauth2_mock_server() {
    use base64::Engine as _;
    let (logs, secrets) = captured(async {
        let mock = Provider::start_mock();
        let server = mcp_server(&mock).await;
        let store = Arc::new(MemoryTokenStore::new());
        let machine = OAuthConfig::new("", "mock-machine").with_client_credentials(
            ClientRegistration::confidential(
                "machine",
                "mock-secret-77",
                TokenEndpointAuthMethod::ClientSecretBasic,
            ),
        );
        call_echo(&server, options(machine, None, &store)).await.expect("client credentials");
        let first = stored(&store).1.tokens.expect("tokens").access_token.secret().to_owned();

        let b64 = |v: Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
        let assertion = format!(
            "{}.{}.c2lnbmF0dXJl",
            b64(json!({"alg": "RS256", "typ": "JWT"})),
            b64(
                json!({"sub": "workload-7", "iss": "https://platform.example", "aud": mock.issuer()})
            )
        );
        let store = Arc::new(MemoryTokenStore::new());
        let workload = OAuthConfig::new("", "mock-workload").with_workload_identity(
            ClientRegistration::public("workload-7"),
            AssertionSource::Value(ClientSecret::new(assertion.clone())),
        );
        call_echo(&server, options(workload, None, &store)).await.expect("JWT bearer");
        let second = stored(&store).1.tokens.expect("tokens").access_token.secret().to_owned();
        assert_eq!(subject(&second), "workload-7");
        vec![first, second, assertion, "mock-secret-77".to_owned()]
    });
    assert_secret_free(&logs, &secrets);
}
