//! An MCP server that moves to another authorization server (SEP-2352):
//! registered again there, the old tokens dropped, pre-registered
//! credentials not taken along.

use std::sync::Arc;

use http::Method;
use mcp_auth::{
    ClientRegistration, Error, MemoryTokenStore, StoreKey, TokenEndpointAuthMethod, TokenStore,
};
use serde_json::json;

use crate::common::{
    AS, AS2, AsOpts, MCP, Net, RS, bearer, client, config, first_401, install_as, prm_challenge,
    refreshing_as, rotating,
};

/// Points the protected resource metadata at `issuer`.
fn point_prm_at(net: &Net, issuer: &str) {
    net.json(
        &format!("{RS}/.well-known/oauth-protected-resource/mcp"),
        json!({"resource": MCP, "authorization_servers": [issuer]}),
    );
}

#[tokio::test]
async fn authorization_server_migration_registers_with_the_new_one() {
    let net = Arc::new(Net::default());
    point_prm_at(&net, AS);
    let log1 = install_as(
        &net,
        AsOpts {
            registration: ("as1-client".into(), Some("as1-secret".into()), None),
            token_hook: Some(rotating(Arc::default())),
            ..Default::default()
        },
    );
    let log2 = install_as(
        &net,
        AsOpts {
            base: AS2.into(),
            registration: ("as2-client".into(), None, None),
            ..Default::default()
        },
    );
    let store = Arc::new(MemoryTokenStore::new());
    let c = client(&net, config()).with_store(store.clone());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    assert!(store.load(&StoreKey::new(MCP, AS)).unwrap().is_some());

    // The server moves to AS2 and refuses the AS1 token (to two requests).
    point_prm_at(&net, AS2);
    let mut req = c.prepare().await;
    let mut other = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-1");
    // The other request finds the new token: no second authorization.
    c.on_unauthorized(&mut other, Some(&prm_challenge())).await.unwrap();
    assert_eq!(bearer(&other), "Bearer test-token-1");
    assert_eq!(log2.lock().unwrap().authorize.len(), 1);
    let (l1, l2) = (log1.lock().unwrap(), log2.lock().unwrap());
    // No refresh at AS1 (its refresh token is not used for the new server),
    // a registration at AS2, and nothing of AS1's sent there.
    assert_eq!(l1.token.len(), 1);
    assert_eq!(l2.register.len(), 1);
    assert_eq!(l2.authorize[0]["client_id"], "as2-client");
    assert_eq!(l2.token[0].1["client_id"], "as2-client");
    for s in net.seen().iter().filter(|s| s.url.starts_with(AS2)) {
        let text = format!("{} {:?} {}", s.url, s.authorization, String::from_utf8_lossy(&s.body));
        assert!(!text.contains("as1-") && !text.contains("rt-1"), "{text}");
    }
    // The store keeps credentials per issuer: AS1's are gone.
    assert!(store.load(&StoreKey::new(MCP, AS)).unwrap().is_none());
    let stored = store.load(&StoreKey::new(MCP, AS2)).unwrap().unwrap();
    assert_eq!(stored.client.unwrap().client_id, "as2-client");
}

/// The server moves to an authorization server where no client can be
/// registered: the old token is dropped before the flow fails, so another
/// request that carried it starts over without reading the metadata again.
#[tokio::test]
async fn a_failed_move_drops_the_old_token_for_every_request() {
    let net = Arc::new(Net::default());
    point_prm_at(&net, AS);
    install_as(&net, AsOpts::default());
    install_as(
        &net,
        AsOpts {
            base: AS2.into(),
            extra: json!({"registration_endpoint": null}),
            ..Default::default()
        },
    );
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    point_prm_at(&net, AS2);
    let (mut req, mut other) = (c.prepare().await, c.prepare().await);
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::NoRegistrationMethod), "{err:?}");
    assert!(c.authorization_header().is_none());
    let prm = format!("{RS}/.well-known/oauth-protected-resource/mcp");
    let before = net.count("GET", &prm);
    let err = c.on_unauthorized(&mut other, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::NoRegistrationMethod), "{err:?}");
    assert_eq!(net.count("GET", &prm), before);
}

#[tokio::test]
async fn a_refused_token_reads_the_metadata_again_and_keeps_an_unchanged_server() {
    let net = Arc::new(Net::default());
    let log = refreshing_as(&net, rotating(Arc::default()));
    let c = client(&net, config());
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    let prm = format!("{RS}/.well-known/oauth-protected-resource/mcp");
    assert_eq!(net.count("GET", &prm), 1);
    let mut req = c.prepare().await;
    c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap();
    // Read again, same issuer: the refresh token is used, no new client.
    assert_eq!(net.count("GET", &prm), 2);
    let l = log.lock().unwrap();
    assert_eq!(l.token.last().unwrap().1["grant_type"], "refresh_token");
    assert_eq!(l.register.len(), 1);
}

#[tokio::test]
async fn pre_registered_credentials_are_not_taken_to_a_new_server() {
    let net = Arc::new(Net::default());
    point_prm_at(&net, AS);
    install_as(&net, AsOpts::default());
    let log2 = install_as(&net, AsOpts { base: AS2.into(), ..Default::default() });
    let cfg = config().with_pre_registered(ClientRegistration::confidential(
        "pre-client",
        "pre-secret",
        TokenEndpointAuthMethod::ClientSecretBasic,
    ));
    let c = client(&net, cfg);
    first_401(&c, Some(&prm_challenge())).await.unwrap();
    point_prm_at(&net, AS2);
    let mut req = c.prepare().await;
    let err = c.on_unauthorized(&mut req, Some(&prm_challenge())).await.unwrap_err();
    assert!(matches!(err, Error::AuthorizationServerChanged { .. }), "{err:?}");
    assert!(!err.to_string().contains("pre-secret"));
    let l2 = log2.lock().unwrap();
    assert!(l2.authorize.is_empty() && l2.token.is_empty() && l2.register.is_empty());
    assert!(net.seen().iter().filter(|s| s.url.starts_with(AS2)).all(|s| s.method == Method::GET));
}
