//! Tokens: refresh (before a request and on a 401), rotation, the store
//! shared between clients, requests refused together, logout.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_auth::{Error, FileTokenStore, MemoryTokenStore, OAuthConfig, StoreKey, TokenStore};
use serde_json::json;

use crate::common::{
    AS, AsOpts, MCP, Net, RS, TokenHook, bearer, client, clocked_client, config, first_401,
    install_as, install_mcp_prm, prm_challenge, refreshing_as, rotating,
};

#[tokio::test]
async fn proactive_refresh_rotates_and_stores() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let (c, clock, store) = clocked_client(&net);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    // Well before expiry: no refresh.
    clock.advance(Duration::from_secs(30));
    assert_eq!(bearer(&c.prepare().await), "Bearer test-token-r1");
    // Within the 60 s skew: refreshed before the request goes out.
    clock.advance(Duration::from_secs(20));
    let req = c.prepare().await;
    assert_eq!(bearer(&req), "Bearer test-token-r2");
    let l = log.lock().unwrap();
    let (_, refresh) = l.token.last().unwrap();
    assert_eq!(refresh["grant_type"], "refresh_token");
    assert_eq!(refresh["refresh_token"], "rt-1");
    assert_eq!(refresh["resource"], MCP);
    let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
    assert_eq!(stored.tokens.unwrap().refresh_token.unwrap().secret(), "rt-2");
    assert_eq!(stored.client.unwrap().client_id, "test-client-id");
}

/// A refresh answered without a new refresh token keeps the one it used
/// (RFC 6749 §6: the server may not rotate).
#[tokio::test]
async fn a_refresh_without_rotation_keeps_the_refresh_token() {
    let net = Arc::new(Net::default());
    let n = Arc::new(Mutex::new(0));
    let hook: TokenHook = Arc::new(move |_, _| {
        let mut n = n.lock().unwrap();
        *n += 1;
        let mut body = json!({
            "access_token": format!("test-token-n{}", *n),
            "token_type": "Bearer",
            "expires_in": 100,
        });
        if *n == 1 {
            body["refresh_token"] = json!("rt-only");
        }
        Some((200, body))
    });
    let log = refreshing_as(&net, hook);
    let (c, clock, store) = clocked_client(&net);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    for expected in ["Bearer test-token-n2", "Bearer test-token-n3"] {
        clock.advance(Duration::from_secs(50));
        assert_eq!(bearer(&c.prepare().await), expected);
    }
    let l = log.lock().unwrap();
    let (_, refresh) = l.token.last().unwrap();
    assert_eq!(refresh["refresh_token"], "rt-only");
    let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
    assert_eq!(stored.tokens.unwrap().refresh_token.unwrap().secret(), "rt-only");
}

#[tokio::test]
async fn refresh_and_retry_once_on_401_then_reauthorize() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let c = client(&net, config());
    let first = first_401(&c, Some(&prm_challenge())).await.unwrap();
    assert_eq!(first.authorizations(), 1);
    assert_eq!(c.authorization_header().as_ref(), first.header());
    // A Bearer token: no proof goes with it.
    assert!(!first.is_dpop());
    assert_eq!(c.dpop_proof(&first, "POST", MCP).unwrap(), None);
    let debug = format!("{c:?}");
    assert!(
        debug.starts_with("OAuthClient {") && debug.contains(r#"server: "http://localhost:8000""#),
        "{debug}"
    );
    // The server refuses the token: one refresh.
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-r2");
    assert_eq!(req.authorizations(), 0);
    assert_eq!(log.lock().unwrap().token.last().unwrap().1["grant_type"], "refresh_token");
    // Refused again: a full authorization.
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(log.lock().unwrap().authorize.len(), 2);
    assert_eq!(req.authorizations(), 1);
    // Refused a third time, with a token obtained for this request: stop.
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::Unauthorized));
}

#[tokio::test]
async fn invalid_grant_drops_tokens_and_restarts_once() {
    let net = Arc::new(Net::default());
    let revoked = Arc::new(Mutex::new(vec!["rt-1".to_owned()]));
    let log = refreshing_as(&net, rotating(revoked));
    let store = Arc::new(MemoryTokenStore::new());
    let c = client(&net, config()).with_store(store.clone());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    let l = log.lock().unwrap();
    // authorize, code exchange, refused refresh, authorize, code exchange.
    assert_eq!(l.authorize.len(), 2);
    let grants: Vec<&str> = l.token.iter().map(|(_, f)| f["grant_type"].as_str()).collect();
    assert_eq!(grants, ["authorization_code", "refresh_token", "authorization_code"]);
    assert_eq!(bearer(&req), "Bearer test-token-r3");
    // The client registration survives; the revoked refresh token does not.
    let stored = store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap();
    assert_eq!(stored.tokens.unwrap().refresh_token.unwrap().secret(), "rt-3");
    assert_eq!(l.register.len(), 1);
}

#[tokio::test]
async fn stored_tokens_are_reused_across_clients() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(&net, AsOpts::default());
    let dir = std::env::temp_dir().join(format!("mcp-auth-flow-{}", std::process::id()));
    let store = Arc::new(FileTokenStore::new(&dir));
    let a = client(&net, config()).with_store(store.clone());
    first_401(&a, Some(&prm_challenge())).await.unwrap();
    let b = client(&net, config()).with_store(store.clone());
    let req = first_401(&b, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-1");
    assert_eq!(log.lock().unwrap().authorize.len(), 1);
    b.logout().unwrap();
    assert!(b.authorization_header().is_none());
    assert!(store.load(&StoreKey::new(MCP, AS)).unwrap().unwrap().tokens.is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn concurrent_401s_share_one_flow() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({}));
    let log = install_as(&net, AsOpts::default());
    let c = client(&net, config());
    let ch = prm_challenge();
    let mut r1 = c.prepare().await;
    let mut r2 = c.prepare().await;
    let (a, b) =
        tokio::join!(c.on_unauthorized(&mut r1, Some(&ch)), c.on_unauthorized(&mut r2, Some(&ch)));
    a.unwrap();
    b.unwrap();
    assert_eq!(log.lock().unwrap().authorize.len(), 1);
    assert_eq!(bearer(&r1), bearer(&r2));
}

/// Requests that carried the same refused token share one refresh: the
/// second finds the token renewed and retries with it.
#[tokio::test]
async fn requests_refused_together_share_one_refresh() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let (mut a, mut b) = (c.prepare().await, c.prepare().await);
    c.on_unauthorized(&mut a, Some(&prm_challenge())).await.unwrap();
    c.on_unauthorized(&mut b, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&a), "Bearer test-token-r2");
    assert_eq!(bearer(&b), "Bearer test-token-r2");
    let grants: Vec<String> =
        log.lock().unwrap().token.iter().map(|(_, f)| f["grant_type"].clone()).collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
}

/// A request refused again and again while other requests keep renewing
/// the token retries with each new one, three times, then gives up.
#[tokio::test]
async fn a_request_refused_while_others_renew_gives_up_after_three_401s() {
    let net = Arc::new(Net::default());
    refreshing_as(&net, rotating(Arc::default()));
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let mut stuck = c.prepare().await;
    for _ in 0..3 {
        let mut other = c.prepare().await;
        c.on_unauthorized(&mut other, Some(&prm_challenge())).await.unwrap();
        c.on_unauthorized(&mut stuck, Some(&prm_challenge())).await.unwrap();
        assert_eq!(bearer(&stuck), bearer(&other));
        assert_eq!(stuck.authorizations(), 0);
    }
    let err = c.on_unauthorized(&mut stuck, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::Unauthorized), "{err:?}");
}

/// A refresh that fails for another reason than `invalid_grant` (the
/// authorization server is down): before a request, the token is sent
/// while it is valid and dropped once expired; on a 401, the error is
/// the answer (no new authorization behind the user's back).
#[tokio::test]
async fn a_refresh_that_fails_keeps_a_valid_token_and_reports_the_error() {
    let net = Arc::new(Net::default());
    let rotate = rotating(Arc::default());
    let hook: TokenHook = Arc::new(move |f, auth| {
        if f.get("grant_type").map(String::as_str) == Some("refresh_token") {
            return Some((503, json!({"error": "temporarily_unavailable"})));
        }
        rotate(f, auth)
    });
    let log = refreshing_as(&net, hook);
    let (c, clock, _store) = clocked_client(&net);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    // Within the skew, still valid: the refresh fails, the token goes out.
    clock.advance(Duration::from_secs(50));
    assert_eq!(bearer(&c.prepare().await), "Bearer test-token-r1");
    let mut req = c.prepare().await;
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
    assert!(err.to_string().contains("temporarily_unavailable"), "{err}");
    assert_eq!(log.lock().unwrap().authorize.len(), 1);
    // Expired: nothing is sent, so the server's 401 starts the flow.
    clock.advance(Duration::from_secs(60));
    assert!(c.prepare().await.header().is_none());
    let refreshes = log
        .lock()
        .unwrap()
        .token
        .iter()
        .filter(|(_, f)| f["grant_type"] == "refresh_token")
        .count();
    assert_eq!(refreshes, 4);
}

/// `authorize` (a CLI `login`) refreshes a token that expires within the
/// skew rather than handing it out.
#[tokio::test]
async fn authorize_refreshes_a_token_about_to_expire() {
    let net = Arc::new(Net::default());
    refreshing_as(&net, rotating(Arc::default()));
    let (c, clock, _store) = clocked_client(&net);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    assert_eq!(c.authorize(None).await.unwrap().secret(), "test-token-r1");
    clock.advance(Duration::from_secs(50));
    assert_eq!(c.authorize(None).await.unwrap().secret(), "test-token-r2");
}

/// After a logout, a request that carried the forgotten token authorizes
/// again without reading the metadata again (the token was not refused
/// by a server that may have moved: it was dropped here).
#[tokio::test]
async fn a_request_holding_a_token_forgotten_by_logout_authorizes_again() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let mut req = c.prepare().await;
    c.logout().unwrap();
    let prm = format!("{RS}/.well-known/oauth-protected-resource/mcp");
    let before = net.count("GET", &prm);
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(net.count("GET", &prm), before);
    assert_eq!(log.lock().unwrap().authorize.len(), 2);
    assert_eq!(bearer(&req), "Bearer test-token-r2");
}

/// Tokens another client saved to the shared store after this one logged
/// out are used, not a new authorization (the registration is still held
/// in memory, the tokens are not).
#[tokio::test]
async fn tokens_stored_by_another_client_after_a_logout_are_used() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let store = Arc::new(MemoryTokenStore::new());
    let a = client(&net, config()).with_store(store.clone());
    first_401(&a, Some(&prm_challenge())).await.unwrap();
    a.logout().unwrap();
    let b = client(&net, config()).with_store(store.clone());
    let from_b = first_401(&b, Some(&prm_challenge())).await.unwrap();
    assert_eq!(log.lock().unwrap().authorize.len(), 2);
    let req = first_401(&a, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), bearer(&from_b));
    assert_eq!(log.lock().unwrap().authorize.len(), 2);
}

/// A server URL with a query has no protected resource metadata to match
/// it: its tokens are stored under the URL itself, and a logout forgets
/// them too.
#[tokio::test]
async fn logout_forgets_tokens_stored_under_a_server_url_with_a_query() {
    let net = Arc::new(Net::default());
    install_as(&net, AsOpts { base: RS.into(), metadata_path: None, ..Default::default() });
    let store = Arc::new(MemoryTokenStore::new());
    let url = format!("{MCP}?tenant=1");
    let c =
        client(&net, OAuthConfig::new(url.as_str(), "mcp-auth tests")).with_store(store.clone());
    first_401(&c, None).await.unwrap();
    let keys = store.keys().unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].resource, url);
    assert!(store.load(&keys[0]).unwrap().unwrap().tokens.is_some());
    c.logout().unwrap();
    let stored = store.load(&keys[0]).unwrap().unwrap();
    assert!(stored.tokens.is_none());
    assert!(stored.client.is_some());
}
