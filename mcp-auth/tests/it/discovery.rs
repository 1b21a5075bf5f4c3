//! Discovery: where the protected resource and authorization server
//! metadata are looked for (the conformance suite's metadata and
//! back-compat scenarios), and what stops a flow before authorization: a
//! resource or issuer that does not match, no PKCE, plain http, a body
//! over the bound.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Response};
use mcp_auth::{
    DiscoveryMode, Error, FetchError, HeadlessHandler, HttpFetch, OAuthClient, OAuthConfig,
};
use serde_json::{Value, json};

use crate::common::{
    AS, AsOpts, MCP, Net, RS, bearer, challenge, client, config, first_401, install_as,
    install_mcp_prm, install_prm, prm_challenge,
};

#[tokio::test]
async fn metadata_default() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(&net, AsOpts::default());
    let c = client(&net, config());
    let req = first_401(&c, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-1");
    assert_eq!(
        net.trace(),
        [
            format!("GET {RS}/.well-known/oauth-protected-resource/mcp"),
            format!("GET {AS}/.well-known/oauth-authorization-server"),
            format!("POST {AS}/register"),
            format!("GET {AS}/authorize"),
            format!("POST {AS}/token"),
        ]
    );
    // Discovery, registration and authorization carry no credentials.
    assert!(net.seen()[..4].iter().all(|s| s.authorization.is_none()));
    let l = log.lock().unwrap();
    // The headless handler's loopback redirect makes this a native client.
    assert_eq!(l.register[0]["application_type"], "native");
    let q = &l.authorize[0];
    assert_eq!(q["response_type"], "code");
    assert_eq!(q["code_challenge_method"], "S256");
    assert_eq!(q["resource"], MCP);
    assert_eq!(q["client_id"], "test-client-id");
    assert_eq!(q["redirect_uri"], HeadlessHandler::DEFAULT_REDIRECT_URI);
    assert!(!q.contains_key("scope"));
    assert!(q["state"].len() >= 32);
    let (_, t) = &l.token[0];
    assert_eq!(t["resource"], MCP);
    assert_eq!(t["grant_type"], "authorization_code");
    assert_eq!(t["redirect_uri"], HeadlessHandler::DEFAULT_REDIRECT_URI);
    assert_eq!(c.discovery().unwrap().mode, DiscoveryMode::ProtectedResource);
}

#[tokio::test]
async fn metadata_var1_openid_at_root_without_challenge_url() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    install_as(
        &net,
        AsOpts {
            metadata_path: Some("/.well-known/openid-configuration".into()),
            ..Default::default()
        },
    );
    let c = client(&net, config());
    first_401(&c, Some(&challenge(r#"Bearer error="invalid_token""#))).await.unwrap();
    assert_eq!(
        net.trace()[..3],
        [
            format!("GET {RS}/.well-known/oauth-protected-resource/mcp"),
            format!("GET {AS}/.well-known/oauth-authorization-server"),
            format!("GET {AS}/.well-known/openid-configuration"),
        ]
    );
}

#[tokio::test]
async fn metadata_var2_root_prm_and_issuer_with_path() {
    let net = Arc::new(Net::default());
    // PRM only at the root, naming the origin as the resource.
    net.json(
        &format!("{RS}/.well-known/oauth-protected-resource"),
        json!({"resource": RS, "authorization_servers": [format!("{AS}/tenant1")]}),
    );
    let log = install_as(
        &net,
        AsOpts {
            prefix: "/tenant1".into(),
            metadata_path: Some("/.well-known/oauth-authorization-server/tenant1".into()),
            ..Default::default()
        },
    );
    let c = client(&net, config());
    first_401(&c, None).await.unwrap();
    let trace = net.trace();
    assert_eq!(
        trace[..3],
        [
            format!("GET {RS}/.well-known/oauth-protected-resource/mcp"),
            format!("GET {RS}/.well-known/oauth-protected-resource"),
            format!("GET {AS}/.well-known/oauth-authorization-server/tenant1"),
        ]
    );
    // Never the root metadata of a path issuer.
    assert_eq!(net.count("GET", &format!("{AS}/.well-known/oauth-authorization-server")), 0);
    // `resource` exactly as the PRM gives it: no trailing slash added.
    assert_eq!(log.lock().unwrap().authorize[0]["resource"], RS);
    assert_eq!(log.lock().unwrap().token[0].1["resource"], RS);
}

#[tokio::test]
async fn metadata_var3_custom_prm_and_path_appended_openid() {
    let net = Arc::new(Net::default());
    net.json(
        &format!("{RS}/custom/metadata/location.json"),
        json!({"resource": MCP, "authorization_servers": [format!("{AS}/tenant1")]}),
    );
    install_as(
        &net,
        AsOpts {
            prefix: "/tenant1".into(),
            metadata_path: Some("/tenant1/.well-known/openid-configuration".into()),
            ..Default::default()
        },
    );
    let c = client(&net, config());
    let ch =
        challenge(&format!(r#"Bearer resource_metadata="{RS}/custom/metadata/location.json""#));
    first_401(&c, Some(&ch)).await.unwrap();
    assert_eq!(
        net.trace()[..4],
        [
            format!("GET {RS}/custom/metadata/location.json"),
            format!("GET {AS}/.well-known/oauth-authorization-server/tenant1"),
            format!("GET {AS}/.well-known/openid-configuration/tenant1"),
            format!("GET {AS}/tenant1/.well-known/openid-configuration"),
        ]
    );
}

#[tokio::test]
async fn backcompat_2025_03_26_metadata_at_origin_root() {
    let net = Arc::new(Net::default());
    // No PRM anywhere; the AS lives on the MCP server under /oauth.
    let log =
        install_as(&net, AsOpts { base: RS.into(), prefix: "/oauth".into(), ..Default::default() });
    let c = client(&net, config());
    first_401(&c, Some(&challenge(r#"Bearer error="invalid_token""#))).await.unwrap();
    assert_eq!(
        net.trace(),
        [
            format!("GET {RS}/.well-known/oauth-protected-resource/mcp"),
            format!("GET {RS}/.well-known/oauth-protected-resource"),
            format!("GET {RS}/.well-known/oauth-authorization-server"),
            format!("POST {RS}/oauth/register"),
            format!("GET {RS}/oauth/authorize"),
            format!("POST {RS}/oauth/token"),
        ]
    );
    assert_eq!(c.discovery().unwrap().mode, DiscoveryMode::LegacyMetadata);
    assert_eq!(log.lock().unwrap().authorize[0]["resource"], MCP);
}

#[tokio::test]
async fn backcompat_2025_03_26_default_endpoints() {
    let net = Arc::new(Net::default());
    install_as(&net, AsOpts { base: RS.into(), metadata_path: None, ..Default::default() });
    let c = client(&net, config());
    let req = first_401(&c, None).await.unwrap();
    assert!(req.header().is_some());
    assert_eq!(
        net.trace()[3..],
        [format!("POST {RS}/register"), format!("GET {RS}/authorize"), format!("POST {RS}/token")]
    );
    assert_eq!(c.discovery().unwrap().mode, DiscoveryMode::LegacyDefaults);
}

#[tokio::test]
async fn resource_mismatch_stops_before_authorization() {
    let net = Arc::new(Net::default());
    install_prm(
        &net,
        "/.well-known/oauth-protected-resource/mcp",
        "https://evil.example.com/mcp",
        json!({}),
    );
    let log = install_as(&net, AsOpts::default());
    let c = client(&net, config());
    let err = first_401(&c, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::ResourceMismatch { .. }), "{err:?}");
    assert!(err.to_string().contains("https://evil.example.com"));
    let l = log.lock().unwrap();
    assert!(l.authorize.is_empty() && l.token.is_empty() && l.register.is_empty());
    assert_eq!(net.seen().len(), 1);
}

#[tokio::test]
async fn issuer_mismatch_and_missing_pkce_are_refused() {
    type Check = fn(&Error) -> bool;
    let cases: Vec<(Value, Check)> = vec![
        (json!({"issuer": "http://127.0.0.1:9000/other"}), |e| {
            matches!(e, Error::IssuerMismatch { .. })
        }),
        (json!({"code_challenge_methods_supported": null}), |e| {
            matches!(e, Error::PkceNotSupported)
        }),
        (json!({"code_challenge_methods_supported": ["plain"]}), |e| {
            matches!(e, Error::PkceNotSupported)
        }),
    ];
    for (extra, expected) in cases {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        let log = install_as(&net, AsOpts { extra: extra.clone(), ..Default::default() });
        let c = client(&net, config());
        let err = first_401(&c, Some(&prm_challenge())).await.unwrap_err();
        assert!(expected(&err), "{extra}: {err:?}");
        assert!(log.lock().unwrap().authorize.is_empty(), "{extra}");
    }
}

#[tokio::test]
async fn insecure_urls_are_refused() {
    let net = Arc::new(Net::default());
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let err =
        OAuthClient::new(OAuthConfig::new("http://mcp.example.com/mcp", "t"), fetch).unwrap_err();
    assert!(matches!(err, Error::InsecureUrl { .. }));
    // An authorization server on plain http that is not loopback.
    net.json(
        &format!("{RS}/.well-known/oauth-protected-resource/mcp"),
        json!({"resource": MCP, "authorization_servers": ["http://as.example.com"]}),
    );
    let c = client(&net, config());
    let err = first_401(&c, None).await.unwrap_err();
    assert!(matches!(err, Error::InsecureUrl { .. }), "{err:?}");
    assert_eq!(net.seen().len(), 1);
}

#[tokio::test]
async fn oversized_bodies_and_missing_challenge_metadata_are_errors() {
    let net = Arc::new(Net::default());
    let big = "x".repeat(mcp_auth::MAX_BODY + 1);
    net.route(Method::GET, &format!("{RS}/.well-known/oauth-protected-resource/mcp"), move |_| {
        Response::builder().status(200).body(Bytes::from(big.clone())).unwrap()
    });
    let c = client(&net, config());
    let err = first_401(&c, None).await.unwrap_err();
    assert!(matches!(err, Error::Fetch { source: FetchError::BodyTooLarge, .. }), "{err:?}");

    let net = Arc::new(Net::default());
    let c = client(&net, config());
    let err = first_401(&c, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::HttpStatus { status: 404, .. }), "{err:?}");
    // Only the challenge's URL was tried.
    assert_eq!(net.seen().len(), 1);
}
