//! Authorization servers as they are, against the real provider of
//! `idp.rs` set up to demand each quirk, and the client's
//! [`ProviderQuirks`] that meet it: a `resource` it refuses (Entra-style:
//! left out, or replaced by an application id URI), an `audience`
//! parameter (Okta/Auth0-style), refresh tokens only with
//! `prompt=consent`, metadata the MCP server does not point to, a
//! pre-registered client with one exact redirect URI, fixed scopes. Each
//! is shown failing without the setting and working with it.

use std::sync::Arc;
use std::time::Duration;

use mcp_http::mcp_auth::loopback::LoopbackHandler;
use mcp_http::mcp_auth::url::query_params;
use mcp_http::mcp_auth::{
    ClientRegistration, MemoryTokenStore, OAuthConfig, ProviderQuirks, ResourceParam,
};
use mcp_test_support::idp::{Browser, Provider};
use mcp_testkit::{HttpConfig, HttpServerHandle, JwtAuth, serve_http};
use serde_json::json;

use crate::idp::{
    Logins, as_browser, assert_secret_free, browser_handler, call_echo, captured, mcp_server,
    options, stored,
};

/// An MCP server that takes the provider's tokens for `audience`.
async fn server_for(idp: &Provider, audience: &str) -> HttpServerHandle {
    let auth = JwtAuth::new(idp.issuer(), idp.jwks_uri()).with_audience(audience);
    serve_http(HttpConfig { jwt_auth: Some(auth), ..HttpConfig::default() })
        .await
        .expect("the MCP server starts")
}

/// Logs in through the browser with `quirks` and calls `echo`; the
/// access token on success.
async fn login(
    server: &HttpServerHandle,
    config: OAuthConfig,
    handler: Option<Arc<LoopbackHandler>>,
) -> Result<String, String> {
    let store = Arc::new(MemoryTokenStore::new());
    let logins = Logins::default();
    let handler = match handler {
        Some(h) => h,
        None => browser_handler(&logins).await,
    };
    call_echo(server, options(config, Some(handler), &store)).await?;
    let (_, entry) = stored(&store);
    Ok(entry.tokens.expect("tokens").access_token.secret().to_owned())
}

fn with(quirks: ProviderQuirks) -> OAuthConfig {
    OAuthConfig::new("", "idp-quirks").with_quirks(quirks)
}

#[test]
fn entra_style_resource_left_out_or_replaced() {
    const APP: &str = "api://mcp-server";
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({"resources": [APP], "default_resource": APP}));
        let server = server_for(&idp, APP).await;
        // The specification's `resource` (the MCP URL) is refused.
        let refused = login(&server, with(ProviderQuirks::default()), None).await.unwrap_err();
        assert!(refused.contains("invalid_target"), "{refused}");
        // Left out: the provider's default audience.
        let omitted = ProviderQuirks::default().with_resource(ResourceParam::Omit);
        let first = login(&server, with(omitted), None).await.expect("without resource");
        // Replaced by the application id URI.
        let replaced = ProviderQuirks::default().with_resource(ResourceParam::Value(APP.into()));
        let second = login(&server, with(replaced), None).await.expect("with the app's URI");
        vec![first, second]
    });
    assert_secret_free(&logs, &secrets);
}

#[test]
fn auth0_style_audience_parameter() {
    const AUDIENCE: &str = "https://api.example.com/mcp";
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({"require_audience": AUDIENCE}));
        let server = server_for(&idp, AUDIENCE).await;
        let no_resource = ProviderQuirks::default().with_resource(ResourceParam::Omit);
        let refused = login(&server, with(no_resource.clone()), None).await.unwrap_err();
        assert!(refused.contains("invalid_request"), "{refused}");
        let quirks = no_resource.with_authorization_param("audience", AUDIENCE);
        let token = login(&server, with(quirks), None).await.expect("with the audience");
        vec![token]
    });
    assert_secret_free(&logs, &secrets);
}

#[test]
fn prompt_consent_gets_a_refresh_token_from_a_strict_provider() {
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({"strict_offline": true}));
        let server = mcp_server(&idp).await;
        let mut secrets = Vec::new();
        for (quirks, refreshable) in [
            (ProviderQuirks::default(), false),
            (ProviderQuirks::default().with_authorization_param("prompt", "consent"), true),
        ] {
            let store = Arc::new(MemoryTokenStore::new());
            let handler = browser_handler(&Logins::default()).await;
            call_echo(&server, options(with(quirks), Some(handler), &store)).await.expect("call");
            let tokens = stored(&store).1.tokens.expect("tokens");
            assert_eq!(tokens.refresh_token.is_some(), refreshable);
            secrets.push(tokens.access_token.secret().to_owned());
            secrets.extend(tokens.refresh_token.map(|r| r.secret().to_owned()));
        }
        secrets
    });
    assert_secret_free(&logs, &secrets);
}

#[test]
fn metadata_url_for_a_server_that_does_not_point_to_it() {
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({}));
        let auth = JwtAuth::new(idp.issuer(), idp.jwks_uri()).without_metadata();
        let server = serve_http(HttpConfig { jwt_auth: Some(auth), ..HttpConfig::default() })
            .await
            .expect("the MCP server starts");
        // Discovery finds no authorization server of its own.
        login(&server, with(ProviderQuirks::default()), None).await.unwrap_err();
        let url = format!("{}/.well-known/openid-configuration", idp.issuer());
        let token = login(&server, with(ProviderQuirks::default().with_metadata_url(url)), None)
            .await
            .expect("with the metadata URL");
        vec![token]
    });
    assert_secret_free(&logs, &secrets);
}

#[test]
fn a_pre_registered_client_with_one_exact_redirect_uri() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let redirect_uri = format!("http://127.0.0.1:{port}/oauth/done");
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({"clients": [{
            "client_id": "desktop-app",
            "application_type": "native",
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
        }]}));
        let server = mcp_server(&idp).await;
        let config = OAuthConfig::new("", "idp-quirks")
            .with_pre_registered(ClientRegistration::public("desktop-app"));
        // The default `/callback` is not the registered URI: the provider
        // stops at its error page and the login times out.
        let logins = Logins::default();
        let quick = LoopbackHandler::bind(Duration::from_secs(3)).await.expect("bind");
        let handler = as_browser(quick, &logins);
        login(&server, config.clone(), Some(handler)).await.unwrap_err();
        let seen = logins.lock().unwrap().clone();
        assert!(seen.iter().all(Result::is_err), "{seen:?}");
        // The registered URI, port and path.
        let exact = LoopbackHandler::bind_redirect_uri(&redirect_uri, Duration::from_secs(30))
            .await
            .expect("the port is free");
        let token = login(&server, config, Some(as_browser(exact, &Logins::default())))
            .await
            .expect("with the registered redirect URI");
        vec![token]
    });
    assert_secret_free(&logs, &secrets);
}

#[test]
fn scopes_override_replaces_what_the_server_asks_for() {
    let (logs, secrets) = captured(async {
        let idp = Provider::start(&json!({}));
        let server = mcp_server(&idp).await;
        let store = Arc::new(MemoryTokenStore::new());
        let quirks = ProviderQuirks::default().with_scopes_override(["openid", "mcp"]);
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let handler = {
            let asked = asked.clone();
            let bound = LoopbackHandler::bind(Duration::from_secs(30)).await.expect("bind");
            Arc::new(bound.on_url(move |url| {
                asked.lock().unwrap().push(query_params(url));
                let url = url.to_owned();
                tokio::spawn(async move { Browser::new().authorize(&url).await });
            }))
        };
        call_echo(&server, options(with(quirks), Some(handler), &store)).await.expect("call");
        // The server's challenge asked for `mcp`; the override was sent.
        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1);
        let scope = asked[0].iter().find(|(k, _)| k == "scope").map(|(_, v)| v.as_str());
        assert_eq!(scope, Some("openid mcp offline_access"));
        let tokens = stored(&store).1.tokens.expect("tokens");
        vec![tokens.access_token.secret().to_owned()]
    });
    assert_secret_free(&logs, &secrets);
}
