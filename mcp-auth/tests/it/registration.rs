//! Client registration: a client ID metadata document, dynamic
//! registration and its token endpoint authentication methods,
//! pre-registered credentials.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use mcp_auth::{ClientRegistration, Error, TokenEndpointAuthMethod};
use serde_json::json;

use crate::common::{
    AsOpts, MCP, Net, RS, client, config, first_401, install_as, install_mcp_prm, prm_challenge,
};

#[tokio::test]
async fn basic_cimd_uses_the_metadata_url_as_client_id() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(
        &net,
        AsOpts {
            extra: json!({"client_id_metadata_document_supported": true}),
            ..Default::default()
        },
    );
    let cfg = config()
        .with_client_metadata_url("https://conformance-test.local/client-metadata.json")
        .unwrap();
    let c = client(&net, cfg);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let l = log.lock().unwrap();
    assert!(l.register.is_empty());
    assert_eq!(l.authorize[0]["client_id"], "https://conformance-test.local/client-metadata.json");
    assert_eq!(l.token[0].1["client_id"], "https://conformance-test.local/client-metadata.json");
}

#[tokio::test]
async fn cimd_without_a_configured_url_falls_back_to_dcr() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(
        &net,
        AsOpts {
            extra: json!({"client_id_metadata_document_supported": true}),
            ..Default::default()
        },
    );
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    assert_eq!(log.lock().unwrap().register.len(), 1);
}

#[tokio::test]
async fn token_endpoint_auth_methods_are_honoured() {
    let cases = [
        ("client_secret_basic", Some("test-secret-1")),
        ("client_secret_post", Some("test-secret-1")),
        ("none", None),
    ];
    for (method, secret) in cases {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        let log = install_as(
            &net,
            AsOpts {
                extra: json!({"token_endpoint_auth_methods_supported": [method]}),
                registration: (
                    "test-client-1".into(),
                    secret.map(str::to_owned),
                    Some(method.to_owned()),
                ),
                ..Default::default()
            },
        );
        let c = client(&net, config());
        first_401(&c, Some(&prm_challenge())).await.unwrap();
        let l = log.lock().unwrap();
        assert_eq!(l.register[0]["token_endpoint_auth_method"], method);
        let (auth, body) = &l.token[0];
        match method {
            "client_secret_basic" => {
                let b64 = auth.as_deref().unwrap().strip_prefix("Basic ").unwrap();
                assert_eq!(STANDARD.decode(b64).unwrap(), b"test-client-1:test-secret-1");
                assert!(!body.contains_key("client_secret"));
            }
            "client_secret_post" => {
                assert!(auth.is_none());
                assert_eq!(body["client_id"], "test-client-1");
                assert_eq!(body["client_secret"], "test-secret-1");
            }
            _ => {
                assert!(auth.is_none());
                assert_eq!(body["client_id"], "test-client-1");
                assert!(!body.contains_key("client_secret"));
            }
        }
        // RFC 8707 on both requests, the same value, a valid URI.
        assert_eq!(l.authorize[0]["resource"], MCP);
        assert_eq!(body["resource"], MCP);
    }
}

#[tokio::test]
async fn pre_registration_without_dcr() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(
        &net,
        AsOpts {
            extra: json!({"registration_endpoint": null, "token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
            ..Default::default()
        },
    );
    let cfg = config().with_pre_registered(ClientRegistration::confidential(
        "pre-registered-client",
        "pre-registered-secret",
        TokenEndpointAuthMethod::ClientSecretBasic,
    ));
    let c = client(&net, cfg);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let l = log.lock().unwrap();
    assert!(l.register.is_empty());
    let b64 = l.token[0].0.as_deref().unwrap().strip_prefix("Basic ").unwrap().to_owned();
    assert_eq!(STANDARD.decode(b64).unwrap(), b"pre-registered-client:pre-registered-secret");
}

#[tokio::test]
async fn no_registration_method_is_an_error() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    install_as(
        &net,
        AsOpts { extra: json!({"registration_endpoint": null}), ..Default::default() },
    );
    let c = client(&net, config());
    let err = first_401(&c, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::NoRegistrationMethod), "{err:?}");
}

#[tokio::test]
async fn legacy_registration_without_method_follows_server_support() {
    // The 2025-03-26 fake lists only `none` and returns a secret without a
    // method: the client stays public.
    let net = Arc::new(Net::default());
    let log =
        install_as(&net, AsOpts { base: RS.into(), prefix: "/oauth".into(), ..Default::default() });
    let c = client(&net, config());
    first_401(&c, None).await.unwrap();
    let l = log.lock().unwrap();
    let (auth, body) = &l.token[0];
    assert!(auth.is_none());
    assert_eq!(body["client_id"], "test-client-id");
    assert!(!body.contains_key("client_secret"));
}
