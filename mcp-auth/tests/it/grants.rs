//! The grants without a user at a browser: client credentials (a secret
//! or a signed JWT), cross-app access (an identity provider's token
//! exchanged), workload identity (an assertion from the platform).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use http::Method;
use mcp_auth::{
    ClientRegistration, Error, HttpFetch, JwtAlgorithm, OAuthClient, PrivateKeyJwt,
    TokenEndpointAuthMethod,
};
use serde_json::{Value, json};

use crate::common::{
    AS, AsLog, AsOpts, MCP, Net, TokenHook, bearer, config, form, install_as, install_mcp_prm,
    json_response, prm_challenge,
};

// ------------------------------------------------------------ client credentials

#[tokio::test]
async fn client_credentials_basic() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(
        &net,
        AsOpts {
            extra: json!({"grant_types_supported": ["client_credentials"], "token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
            ..Default::default()
        },
    );
    let cfg = config().with_client_credentials(ClientRegistration::confidential(
        "conformance-test-client",
        "conformance-test-secret",
        TokenEndpointAuthMethod::ClientSecretBasic,
    ));
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let c = OAuthClient::new(cfg, fetch).unwrap();
    let token = c.authorize(Some(&prm_challenge())).await.unwrap();
    assert_eq!(token.secret(), "test-token-1");
    let l = log.lock().unwrap();
    assert!(l.authorize.is_empty() && l.register.is_empty());
    let (auth, body) = &l.token[0];
    assert_eq!(body["grant_type"], "client_credentials");
    assert_eq!(body["resource"], MCP);
    let b64 = auth.as_deref().unwrap().strip_prefix("Basic ").unwrap().to_owned();
    assert_eq!(STANDARD.decode(b64).unwrap(), b"conformance-test-client:conformance-test-secret");
}

#[tokio::test]
async fn client_credentials_private_key_jwt_es256() {
    use ring::signature::{
        ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair as _,
        UnparsedPublicKey,
    };
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
    let public = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
        .unwrap()
        .public_key()
        .as_ref()
        .to_vec();
    // The PEM as `MCP_CONFORMANCE_CONTEXT.private_key_pem` carries it (jose's exportPKCS8).
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        STANDARD.encode(pkcs8.as_ref())
    );

    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let verified = Arc::new(Mutex::new(None::<Value>));
    let v2 = verified.clone();
    let hook: TokenHook = Arc::new(move |f, _| {
        assert_eq!(
            f["client_assertion_type"],
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        );
        let jwt = &f["client_assertion"];
        let parts: Vec<&str> = jwt.split('.').collect();
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &public)
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .expect("signature verifies");
        *v2.lock().unwrap() =
            Some(serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap());
        None
    });
    install_as(
        &net,
        AsOpts {
            extra: json!({
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["private_key_jwt"],
                "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
            }),
            token_hook: Some(hook),
            ..Default::default()
        },
    );
    let key = PrivateKeyJwt::from_pem(&pem, JwtAlgorithm::from_name("ES256").unwrap()).unwrap();
    let cfg = config()
        .with_client_credentials(ClientRegistration::private_key_jwt("conformance-test-client"))
        .with_signing_key(key);
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let c = OAuthClient::new(cfg, fetch).unwrap();
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert!(req.header().is_some());
    let claims = verified.lock().unwrap().clone().unwrap();
    assert_eq!(claims["iss"], "conformance-test-client");
    assert_eq!(claims["sub"], "conformance-test-client");
    assert_eq!(claims["aud"], AS);
}

#[tokio::test]
async fn cross_app_access_complete_flow() {
    const IDP: &str = "http://127.0.0.1:9100";
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let exchange = Arc::new(Mutex::new(None::<HashMap<String, String>>));
    let ex2 = exchange.clone();
    net.route(Method::POST, &format!("{IDP}/token"), move |req| {
        *ex2.lock().unwrap() = Some(form(req));
        json_response(
            200,
            &json!({"access_token": "the-id-jag", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}),
        )
    });
    let hook: TokenHook = Arc::new(|f, auth| {
        assert_eq!(f["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
        assert_eq!(f["assertion"], "the-id-jag");
        assert_eq!(f["resource"], MCP);
        let b64 = auth.unwrap().strip_prefix("Basic ").unwrap();
        assert_eq!(
            STANDARD.decode(b64).unwrap(),
            b"conformance-test-xaa-client:conformance-test-xaa-secret"
        );
        None
    });
    let log = install_as(
        &net,
        AsOpts {
            extra: json!({"grant_types_supported": ["urn:ietf:params:oauth:grant-type:jwt-bearer"], "token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
            token_hook: Some(hook),
            ..Default::default()
        },
    );
    let cfg = config().with_cross_app_access(
        ClientRegistration::confidential(
            "conformance-test-xaa-client",
            "conformance-test-xaa-secret",
            TokenEndpointAuthMethod::ClientSecretBasic,
        ),
        mcp_auth::IdentityProvider::new(
            format!("{IDP}/token"),
            "the-id-token",
            "conformance-test-idp-client",
        ),
    );
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let c = OAuthClient::new(cfg, fetch).unwrap();
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-1");
    let ex = exchange.lock().unwrap().clone().unwrap();
    assert_eq!(ex["grant_type"], "urn:ietf:params:oauth:grant-type:token-exchange");
    assert_eq!(ex["subject_token"], "the-id-token");
    assert_eq!(ex["subject_token_type"], "urn:ietf:params:oauth:token-type:id_token");
    assert_eq!(ex["requested_token_type"], "urn:ietf:params:oauth:token-type:id-jag");
    assert_eq!(ex["audience"], AS);
    assert_eq!(ex["resource"], MCP);
    assert_eq!(ex["client_id"], "conformance-test-idp-client");
    let l = log.lock().unwrap();
    assert!(l.authorize.is_empty() && l.register.is_empty());
    assert!(!format!("{c:?}").contains("the-id-token"));
}

// ------------------------------------------------------------ workload identity

fn wif_as(net: &Net, hook: TokenHook) -> Arc<Mutex<AsLog>> {
    install_mcp_prm(net, json!({}));
    install_as(
        net,
        AsOpts {
            extra: json!({
                "grant_types_supported": ["urn:ietf:params:oauth:grant-type:jwt-bearer"],
                "registration_endpoint": null,
            }),
            token_hook: Some(hook),
            ..Default::default()
        },
    )
}

#[tokio::test]
async fn workload_identity_presents_the_current_assertion() {
    let logs = mcp_test_support::LogCapture::start(tracing::Level::TRACE);
    let net = Arc::new(Net::default());
    let log = wif_as(&net, Arc::new(|_, _| None));
    let dir = std::env::temp_dir().join(format!("mcp-auth-wif-flow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("token");
    std::fs::write(&path, "eyJwl.first-assertion.sig\n").unwrap();
    let cfg = config().with_workload_identity(
        ClientRegistration::public("wif-client"),
        mcp_auth::AssertionSource::File(path.clone()),
    );
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let c = OAuthClient::new(cfg, fetch).unwrap();
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-1");
    // The platform rotates the file; the server refuses the token.
    std::fs::write(&path, "eyJwl.second-assertion.sig").unwrap();
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    let l = log.lock().unwrap();
    assert!(l.authorize.is_empty() && l.register.is_empty());
    let assertions: Vec<&str> = l.token.iter().map(|(_, f)| f["assertion"].as_str()).collect();
    assert_eq!(assertions, ["eyJwl.first-assertion.sig", "eyJwl.second-assertion.sig"]);
    let (auth, f) = &l.token[0];
    assert!(auth.is_none());
    assert_eq!(f["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
    assert_eq!(f["client_id"], "wif-client");
    assert_eq!(f["resource"], MCP);
    assert!(!logs.text().contains("eyJwl"), "{}", logs.text());
    assert!(!format!("{c:?}").contains("eyJwl"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_refused_workload_assertion_is_reported_not_retried() {
    let logs = mcp_test_support::LogCapture::start(tracing::Level::TRACE);
    for error in ["invalid_grant", "invalid_scope", "unauthorized_client"] {
        let net = Arc::new(Net::default());
        let log = wif_as(
            &net,
            Arc::new(move |_, _| Some((400, json!({"error": error, "error_description": "no"})))),
        );
        let cfg = config().with_workload_identity(
            ClientRegistration::public("wif-client"),
            mcp_auth::AssertionSource::from_fn(|| Ok("eyJwl.refused.sig".into())),
        );
        let fetch: Arc<dyn HttpFetch> = net.clone();
        let c = OAuthClient::new(cfg, fetch).unwrap();
        let mut req = c.prepare().await;
        let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
        assert!(matches!(&err, Error::OAuth { error: e, .. } if e == error), "{err:?}");
        assert!(!err.to_string().contains("eyJwl"));
        assert_eq!(log.lock().unwrap().token.len(), 1, "{error}: one token request");
    }
    assert!(!logs.text().contains("eyJwl"));
    // A source that cannot produce one names itself, not a value.
    let net = Arc::new(Net::default());
    let log = wif_as(&net, Arc::new(|_, _| None));
    let cfg = config().with_workload_identity(
        ClientRegistration::public("wif-client"),
        mcp_auth::AssertionSource::Env("MCP_AUTH_FLOW_TEST_NO_SUCH_VARIABLE".into()),
    );
    let fetch: Arc<dyn HttpFetch> = net.clone();
    let c = OAuthClient::new(cfg, fetch).unwrap();
    let mut req = c.prepare().await;
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
    assert!(
        matches!(&err, Error::Assertion(m) if m.contains("MCP_AUTH_FLOW_TEST_NO_SUCH_VARIABLE"))
    );
    assert!(log.lock().unwrap().token.is_empty());
}
