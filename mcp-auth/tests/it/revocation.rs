//! Revocation (RFC 7009) and logout: tokens revoked where they were
//! issued, with or without the MCP server, DPoP-bound ones with a proof.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{Method, Response};
use mcp_auth::{Error, FileTokenStore, MemoryTokenStore, StoreKey, TokenStore};
use serde_json::json;

use crate::common::{
    AS, AS2, AsOpts, MCP, Net, bearer, client, config, dpop_401, dpop_challenge,
    dpop_token_endpoint, first_401, form, install_as, install_mcp_prm, json_response, jwt_part,
    prm_challenge, rotating,
};

#[tokio::test]
async fn revoke_then_logout() {
    for offered in [true, false] {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        let extra = if offered {
            json!({"revocation_endpoint": format!("{AS}/revoke")})
        } else {
            json!({})
        };
        install_as(
            &net,
            AsOpts { extra, token_hook: Some(rotating(Arc::default())), ..Default::default() },
        );
        let revoked = Arc::new(Mutex::new(Vec::new()));
        let r2 = revoked.clone();
        net.route(Method::POST, &format!("{AS}/revoke"), move |req| {
            r2.lock().unwrap().push(form(req));
            json_response(200, &json!({}))
        });
        let store = Arc::new(MemoryTokenStore::new());
        first_401(&client(&net, config()).with_store(store.clone()), Some(&prm_challenge()))
            .await
            .unwrap();
        // A later process: nothing in memory, the tokens in the store.
        let c = client(&net, config()).with_store(store.clone());
        assert_eq!(c.revoke().await.unwrap(), offered);
        c.logout().unwrap();
        let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
        assert!(stored.tokens.is_none());
        assert_eq!(stored.client.unwrap().client_id, "test-client-id");
        let r = revoked.lock().unwrap();
        if offered {
            let got: Vec<(&str, &str, &str)> = r
                .iter()
                .map(|f| {
                    (f["token"].as_str(), f["token_type_hint"].as_str(), f["client_id"].as_str())
                })
                .collect();
            assert_eq!(
                got,
                [
                    ("rt-1", "refresh_token", "test-client-id"),
                    ("test-token-r1", "access_token", "test-client-id")
                ]
            );
        } else {
            assert!(r.is_empty());
        }
        // Bearer tokens: no DPoP proof.
        assert!(net.seen().iter().all(|s| s.dpop.is_none()));
    }
}

/// The authorization server alone (metadata with a revocation endpoint,
/// the rotating token endpoint), and what its revocation endpoint got.
fn revoking_as(net: &Arc<Net>) -> Arc<Mutex<Vec<String>>> {
    let extra = json!({"revocation_endpoint": format!("{AS}/revoke")});
    install_as(
        net,
        AsOpts { extra, token_hook: Some(rotating(Arc::default())), ..Default::default() },
    );
    let revoked = Arc::new(Mutex::new(Vec::new()));
    let r2 = revoked.clone();
    net.route(Method::POST, &format!("{AS}/revoke"), move |req| {
        r2.lock().unwrap().push(form(req)["token"].clone());
        json_response(200, &json!({}))
    });
    revoked
}

#[tokio::test]
async fn logout_without_the_server_uses_the_issuer_kept_with_the_tokens() {
    let dir = std::env::temp_dir().join(format!("mcp-auth-logout-flow-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Arc::new(FileTokenStore::new(&dir));
    let key = StoreKey::new(MCP, AS);
    let login = |store: Arc<FileTokenStore>| async move {
        let net = Arc::new(Net::default());
        install_mcp_prm(&net, json!({}));
        revoking_as(&net);
        let c = client(&net, config()).with_store(store);
        let req = first_401(&c, Some(&prm_challenge())).await.unwrap();
        bearer(&req).strip_prefix("Bearer ").unwrap().to_owned()
    };
    let token = login(store.clone()).await;

    // Later the MCP server is gone: nothing on its origin, so discovery
    // falls back to the 2025-03-26 defaults, which name its origin as the
    // issuer. The tokens are found under the issuer kept with them and
    // revoked there.
    let later = Arc::new(Net::default());
    let revoked = revoking_as(&later);
    let c = client(&later, config()).with_store(store.clone());
    assert!(c.revoke().await.unwrap());
    assert_eq!(*revoked.lock().unwrap(), ["rt-1".to_owned(), token]);
    c.logout().unwrap();
    let stored = store.load(&key).unwrap().unwrap();
    assert!(stored.tokens.is_none());
    assert_eq!(stored.client.unwrap().client_id, "test-client-id");
    // Nothing was sent to the MCP server's origin but metadata requests.
    assert!(later.seen().iter().all(|s| s.url.starts_with(AS) || s.authorization.is_none()));

    // Nothing reachable at all: the revocation fails, the logout still
    // forgets the tokens.
    login(store.clone()).await;
    assert!(store.load(&key).unwrap().unwrap().tokens.is_some());
    let nowhere = Arc::new(Net::default());
    let c = client(&nowhere, config()).with_store(store.clone());
    let err = c.revoke().await.unwrap_err();
    assert!(matches!(err, Error::AuthorizationServerMetadataNotFound { .. }), "{err:?}");
    c.logout().unwrap();
    assert!(store.load(&key).unwrap().unwrap().tokens.is_none());

    // Another server's tokens in the same store are not touched.
    let other = StoreKey::new("http://localhost:8001/mcp", AS);
    let mut kept = store.load(&key).unwrap().unwrap();
    kept.tokens = Some(mcp_auth::TokenSet::new(mcp_auth::AccessToken::new("other-token")));
    store.save(&other, &kept).unwrap();
    client(&nowhere, config()).with_store(store.clone()).logout().unwrap();
    assert!(store.load(&other).unwrap().unwrap().tokens.is_some());

    // Tokens kept under two issuers, one of them without a revocation
    // endpoint: both are tried, and the answer is that not every token
    // was revoked.
    login(store.clone()).await;
    let mut at_as2 = store.load(&key).unwrap().unwrap();
    at_as2.tokens = Some(mcp_auth::TokenSet::new(mcp_auth::AccessToken::new("as2-token")));
    store.save(&StoreKey::new(MCP, AS2), &at_as2).unwrap();
    let later = Arc::new(Net::default());
    let revoked = revoking_as(&later);
    install_as(&later, AsOpts { base: AS2.into(), ..Default::default() });
    let c = client(&later, config()).with_store(store.clone());
    assert!(!c.revoke().await.unwrap());
    assert_eq!(revoked.lock().unwrap().len(), 2, "both of AS's tokens");
    assert_eq!(later.count("GET", &format!("{AS2}/.well-known/oauth-authorization-server")), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn dpop_bound_tokens_are_revoked_with_a_proof_of_their_key() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    install_as(
        &net,
        AsOpts {
            extra: json!({
                "dpop_signing_alg_values_supported": ["ES256"],
                "revocation_endpoint": format!("{AS}/revoke"),
            }),
            ..Default::default()
        },
    );
    dpop_token_endpoint(&net, Arc::default());
    // (hint, the proof key's x) of each revocation; a nonce of its own.
    let revoked = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let r2 = revoked.clone();
    net.route(Method::POST, &format!("{AS}/revoke"), move |req| {
        let Some(proof) = req.headers().get("dpop").map(|v| v.to_str().unwrap().to_owned()) else {
            return json_response(400, &json!({"error": "invalid_dpop_proof"}));
        };
        let claims = jwt_part(&proof, 1);
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], format!("{AS}/revoke"));
        assert!(claims.get("ath").is_none(), "the token is in the body, not a header");
        if claims["nonce"] != "as-nonce-2" {
            return Response::builder()
                .status(400)
                .header("dpop-nonce", "as-nonce-2")
                .body(Bytes::from(r#"{"error":"use_dpop_nonce"}"#))
                .unwrap();
        }
        let x = jwt_part(&proof, 0)["jwk"]["x"].as_str().unwrap().to_owned();
        r2.lock().unwrap().push((form(req)["token_type_hint"].clone(), x));
        json_response(200, &json!({}))
    });
    let store = Arc::new(MemoryTokenStore::new());
    let c = client(&net, config()).with_store(store.clone());
    let mut req = c.prepare().await;
    c.observe_response(401, &dpop_401(None, ""));
    c.on_unauthorized(&mut req, Some(&dpop_challenge(""))).await.unwrap();
    assert!(req.is_dpop());
    let token_proof = net.seen().iter().find_map(|s| s.dpop.clone()).unwrap();
    let key_x = jwt_part(&token_proof, 0)["jwk"]["x"].as_str().unwrap().to_owned();

    // A later process: the tokens and their key come from the store.
    let c2 = client(&net, config()).with_store(store.clone());
    assert!(c2.revoke().await.unwrap());
    let expected =
        [("refresh_token".to_owned(), key_x.clone()), ("access_token".to_owned(), key_x)];
    assert_eq!(*revoked.lock().unwrap(), expected);
    // One nonce refusal (answered once), then each token once.
    assert_eq!(net.count("POST", &format!("{AS}/revoke")), 3);
}
