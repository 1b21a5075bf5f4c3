//! DPoP (RFC 9449): when tokens are bound, the proofs and their nonces,
//! refresh with the same key, the modes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Response};
use mcp_auth::{Error, StoreKey, TokenStore};
use serde_json::{Value, json};

use crate::common::{
    AS, AsOpts, MCP, Net, RS, bearer, client, clocked_client, config, dpop_401, dpop_challenge,
    dpop_token_endpoint, install_as, install_mcp_prm, jwt_part, prm_challenge,
};

/// The protected resource and an authorization server that supports
/// DPoP with ES256 (its token endpoint is the test's to route).
fn dpop_net() -> Arc<Net> {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    install_as(
        &net,
        AsOpts {
            extra: json!({"dpop_signing_alg_values_supported": ["ES256"]}),
            ..Default::default()
        },
    );
    net
}

/// A token endpoint error other than `use_dpop_nonce` is not sent again,
/// even when the answer carries a new nonce: one request, the error.
#[tokio::test]
async fn a_dpop_token_error_with_a_nonce_is_not_retried() {
    let net = dpop_net();
    let calls = Arc::new(Mutex::new(0u32));
    let seen = calls.clone();
    net.route(Method::POST, &format!("{AS}/token"), move |_| {
        *seen.lock().unwrap() += 1;
        Response::builder()
            .status(400)
            .header("dpop-nonce", "as-nonce-9")
            .body(Bytes::from(r#"{"error":"invalid_grant"}"#))
            .unwrap()
    });
    let c = client(&net, config());
    let mut req = c.prepare().await;
    c.observe_response(401, &dpop_401(None, ""));
    let err = c.on_unauthorized(&mut req, Some(&dpop_challenge(""))).await.unwrap_err();
    assert!(err.to_string().contains("invalid_grant"), "{err}");
    assert_eq!(*calls.lock().unwrap(), 1);
}

#[tokio::test]
async fn dpop_bound_tokens_proofs_and_nonces() {
    let logs = mcp_test_support::LogCapture::start(tracing::Level::TRACE);
    let net = dpop_net();
    dpop_token_endpoint(&net, Arc::default());
    let (c, clock, store) = clocked_client(&net);

    // The server challenges with the DPoP scheme only: DPoP is required.
    let mut req = c.prepare().await;
    c.observe_response(401, &dpop_401(None, ""));
    c.on_unauthorized(&mut req, Some(&dpop_challenge(""))).await.unwrap();
    let header = bearer(&req);
    assert!(header.starts_with("DPoP dpop-token-1-"), "{header}");
    assert!(req.is_dpop());
    // The token request was sent twice: once without, once with the nonce.
    let proofs: Vec<String> = net
        .seen()
        .iter()
        .filter(|s| s.url == format!("{AS}/token"))
        .map(|s| s.dpop.clone().unwrap())
        .collect();
    assert_eq!(proofs.len(), 2);
    assert_eq!(jwt_part(&proofs[1], 1)["nonce"], "as-nonce-1");
    let key_x = jwt_part(&proofs[0], 0)["jwk"]["x"].as_str().unwrap().to_owned();

    // Each request gets its own proof, bound to the token.
    let token = header.strip_prefix("DPoP ").unwrap();
    let p1 = c.dpop_proof(&req, "POST", MCP).unwrap().unwrap();
    let p2 = c.dpop_proof(&req, "POST", &format!("{MCP}?q=1")).unwrap().unwrap();
    assert!(p1.is_sensitive());
    let (c1, c2) = (jwt_part(p1.to_str().unwrap(), 1), jwt_part(p2.to_str().unwrap(), 1));
    assert_ne!(c1["jti"], c2["jti"]);
    assert_eq!(c1["ath"], mcp_auth::access_token_hash(token));
    assert_eq!(c2["htu"], MCP);
    assert!(c1.get("nonce").is_none());
    // An empty or oversized nonce is not kept.
    for nonce in [String::new(), "n".repeat(1025)] {
        let mut h = http::HeaderMap::new();
        h.insert("dpop-nonce", nonce.parse().unwrap());
        c.observe_response(200, &h);
        let p = c.dpop_proof(&req, "POST", MCP).unwrap().unwrap();
        assert!(jwt_part(p.to_str().unwrap(), 1).get("nonce").is_none(), "{nonce:?} kept");
    }

    // The MCP server asks for its nonce: one retry with it, not two.
    c.observe_response(401, &dpop_401(Some("rs-nonce-1"), r#"error="use_dpop_nonce", "#));
    let ch = dpop_challenge(r#"error="use_dpop_nonce", "#);
    c.on_unauthorized(&mut req, Some(&ch)).await.unwrap();
    assert_eq!(bearer(&req), header, "the same token");
    let p3 = c.dpop_proof(&req, "POST", MCP).unwrap().unwrap();
    assert_eq!(jwt_part(p3.to_str().unwrap(), 1)["nonce"], "rs-nonce-1");
    // A second one is a refused token (here: one obtained for this request).
    let err = c.on_unauthorized(&mut req, Some(&ch)).await.unwrap_err();
    assert!(matches!(err, Error::Unauthorized), "{err:?}");

    // The bound refresh token is refreshed with the same key, kept in the store.
    let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
    let stored_key = stored.dpop_key.clone().unwrap();
    clock.advance(Duration::from_secs(90));
    let req = c.prepare().await;
    let last = net.seen().iter().rev().find(|s| s.url == format!("{AS}/token")).unwrap().clone();
    assert!(String::from_utf8_lossy(&last.body).contains("grant_type=refresh_token"));
    assert_eq!(jwt_part(last.dpop.as_deref().unwrap(), 0)["jwk"]["x"], key_x.as_str());
    assert!(bearer(&req).starts_with("DPoP "));
    let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
    assert_eq!(stored.dpop_key.unwrap(), stored_key);

    // A second client on the same store uses the stored token and key.
    let c2 = client(&net, config()).with_store(store.clone());
    let mut r2 = c2.prepare().await;
    c2.on_unauthorized(&mut r2, Some(&dpop_challenge(""))).await.unwrap();
    let p = c2.dpop_proof(&r2, "POST", MCP).unwrap().unwrap();
    assert_eq!(jwt_part(p.to_str().unwrap(), 0)["jwk"]["x"], key_x.as_str());

    // No token, proof or key in the logs, the Debug output or an error.
    let text = logs.text();
    let key_doc = serde_json::to_string(&stored_key).unwrap();
    for secret in
        [token, "dpop-rt-", p1.to_str().unwrap(), proofs[1].as_str(), key_doc.trim_matches('"')]
    {
        assert!(!text.contains(secret), "{secret} in logs");
        assert!(!format!("{c:?} {req:?} {stored_key:?}").contains(secret), "{secret} in Debug");
    }
}

/// Only a 401 whose challenges are all `DPoP` says the server requires
/// DPoP: a nonce on another answer, or a `DPoP` challenge beside a
/// `Bearer` one, leaves the next token a Bearer token.
#[tokio::test]
async fn a_nonce_or_a_dpop_challenge_beside_bearer_does_not_require_dpop() {
    let net = dpop_net();
    let c = client(&net, config());
    let mut nonce = http::HeaderMap::new();
    nonce.insert("dpop-nonce", "rs-nonce-0".parse().unwrap());
    c.observe_response(200, &nonce);
    c.observe_response(403, &dpop_401(Some("rs-nonce-0"), ""));
    let mut both = dpop_401(None, "");
    both.append(
        "www-authenticate",
        format!(r#"Bearer resource_metadata="{RS}/.well-known/oauth-protected-resource/mcp""#)
            .parse()
            .unwrap(),
    );
    c.observe_response(401, &both);
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert!(bearer(&req).starts_with("Bearer "), "{}", bearer(&req));
    assert!(!req.is_dpop());
    assert!(net.seen().iter().all(|s| s.dpop.is_none()));
}

/// A refused DPoP-bound token is refreshed after the metadata is read
/// again; the authorization server is unchanged, so the nonce it gave is
/// still used (one token request, not a `use_dpop_nonce` round first).
#[tokio::test]
async fn a_refused_dpop_token_is_refreshed_with_the_nonce_held() {
    let net = dpop_net();
    dpop_token_endpoint(&net, Arc::default());
    let c = client(&net, config());
    let mut req = c.prepare().await;
    c.observe_response(401, &dpop_401(None, ""));
    c.on_unauthorized(&mut req, Some(&dpop_challenge(""))).await.unwrap();
    let first = bearer(&req);
    assert_eq!(net.count("POST", &format!("{AS}/token")), 2);
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&dpop_challenge(""))).await.unwrap();
    assert_ne!(bearer(&req), first);
    assert!(bearer(&req).starts_with("DPoP dpop-token-2-"), "{}", bearer(&req));
    assert_eq!(net.count("POST", &format!("{AS}/token")), 3);
    assert_eq!(net.count("GET", &format!("{RS}/.well-known/oauth-protected-resource/mcp")), 2);
}

#[tokio::test]
async fn dpop_modes() {
    // (mode, AS algorithms, DPoP-only challenge) => DPoP-bound?
    let cases: &[(mcp_auth::DpopMode, Value, bool, Option<bool>)] = &[
        (mcp_auth::DpopMode::WhenRequired, json!(["ES256"]), false, Some(false)),
        (mcp_auth::DpopMode::WhenRequired, json!(null), true, Some(true)),
        (mcp_auth::DpopMode::WhenRequired, json!(["RS256"]), true, None),
        (mcp_auth::DpopMode::Always, json!(["ES256"]), false, Some(true)),
        (mcp_auth::DpopMode::Always, json!(["RS256"]), false, Some(false)),
        (mcp_auth::DpopMode::Never, json!(["ES256"]), true, Some(false)),
    ];
    for (mode, algs, dpop_only, expected) in cases {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        install_as(
            &net,
            AsOpts {
                extra: json!({"dpop_signing_alg_values_supported": algs}),
                ..Default::default()
            },
        );
        let c = client(&net, config().with_dpop(*mode));
        let mut req = c.prepare().await;
        if *dpop_only {
            c.observe_response(401, &dpop_401(None, ""));
        }
        let r = c.on_unauthorized(&mut req, Some(&prm_challenge())).await;
        let sent_proof =
            net.seen().iter().any(|s| s.url == format!("{AS}/token") && s.dpop.is_some());
        match expected {
            None => assert!(r.is_err() && !sent_proof, "{mode:?} {algs}"),
            Some(dpop) => {
                assert_eq!(sent_proof, *dpop, "{mode:?} {algs} {dpop_only}");
                assert!(r.is_ok());
            }
        }
    }
}
