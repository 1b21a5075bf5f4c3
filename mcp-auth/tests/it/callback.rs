//! The authorization callback: `state` and `iss` checked, the redirect
//! URI's scheme, and the headless handler's redirects.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Response};
use mcp_auth::{Error, HeadlessHandler, HttpFetch, OAuthClient, RequestAuth};
use serde_json::json;

use crate::common::{
    AS, AsOpts, Net, client, config, first_401, install_as, install_mcp_prm, json_response,
    prm_challenge,
};

#[tokio::test]
async fn callback_checks() {
    type Check = fn(&Result<RequestAuth, Error>) -> bool;
    let cases: Vec<(AsOpts, Check)> = vec![
        (AsOpts { state_override: Some("forged".into()), ..Default::default() }, |r| {
            matches!(r, Err(Error::StateMismatch))
        }),
        (
            AsOpts {
                extra: json!({"authorization_response_iss_parameter_supported": true}),
                ..Default::default()
            },
            |r| matches!(r, Err(Error::IssMismatch)),
        ),
        (
            AsOpts { iss_param: Some("https%3A%2F%2Fevil.example".into()), ..Default::default() },
            |r| matches!(r, Err(Error::IssMismatch)),
        ),
        (
            AsOpts {
                extra: json!({"authorization_response_iss_parameter_supported": true}),
                iss_param: Some("http%3A%2F%2F127.0.0.1%3A9000".into()),
                ..Default::default()
            },
            |r| r.is_ok(),
        ),
        // RFC 9207: simple string comparison, so the issuer with a trailing
        // slash is another issuer.
        (
            AsOpts {
                extra: json!({"authorization_response_iss_parameter_supported": true}),
                iss_param: Some("http%3A%2F%2F127.0.0.1%3A9000%2F".into()),
                ..Default::default()
            },
            |r| matches!(r, Err(Error::IssMismatch)),
        ),
    ];
    for (opts, check) in cases {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        let log = install_as(&net, opts);
        let c = client(&net, config());
        let r = first_401(&c, Some(&prm_challenge())).await;
        assert!(check(&r), "{r:?}");
        if r.is_err() {
            assert!(log.lock().unwrap().token.is_empty(), "no code exchange after a failed check");
        }
    }
}

/// The handler's redirect URI must be `https`, or `http` on a loopback
/// host: anything else is refused before the user is sent anywhere.
#[tokio::test]
async fn a_redirect_uri_off_loopback_without_tls_is_refused() {
    for (uri, ok) in [
        ("http://example.com/callback", false),
        ("http://127.0.0.1:4567/callback", true),
        ("http://[::1]:4567/callback", true),
        ("https://example.com/callback", true),
    ] {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        let log = install_as(&net, AsOpts::default());
        let fetch: Arc<dyn HttpFetch> = net.clone();
        let handler = HeadlessHandler::with_redirect_uri(fetch.clone(), uri);
        let c = OAuthClient::new(config(), fetch).unwrap().with_handler(Arc::new(handler));
        let r = first_401(&c, Some(&prm_challenge())).await;
        if ok {
            assert!(r.is_ok(), "{uri}: {r:?}");
        } else {
            assert!(matches!(r, Err(Error::InsecureUrl { what: "redirect", .. })), "{uri}: {r:?}");
            let l = log.lock().unwrap();
            assert!(l.authorize.is_empty() && l.register.is_empty(), "{uri}");
        }
    }
}

#[tokio::test]
async fn headless_handler_refuses_foreign_redirects_and_non_redirects() {
    let net = Arc::new(Net::default());
    net.route(Method::GET, &format!("{AS}/authorize"), |_| {
        Response::builder()
            .status(302)
            .header("location", "https://evil.example/cb?code=x&state=y")
            .body(Bytes::new())
            .unwrap()
    });
    net.route(Method::GET, &format!("{AS}/page"), |_| json_response(200, &json!({})));
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let h = HeadlessHandler::new(fetch);
    use mcp_auth::AuthorizationHandler as _;
    for path in ["/authorize", "/page"] {
        let req = mcp_auth_request(&format!("{AS}{path}?a=1"));
        let err = h.authorize(&req).await.unwrap_err();
        assert!(matches!(err, Error::Handler(_)), "{err:?}");
    }
}

fn mcp_auth_request(url: &str) -> mcp_auth::AuthorizationRequest {
    mcp_auth::AuthorizationRequest::new(url, HeadlessHandler::DEFAULT_REDIRECT_URI)
}
