//! Scopes: which are asked for, step-up on `insufficient_scope`, and its
//! bound.

use std::sync::Arc;

use mcp_auth::{Error, OAuthClient, OAuthConfig, RequestAuth};
use serde_json::{Value, json};

use crate::common::{
    AS, AsOpts, Net, bearer, challenge, client, config, first_401, install_as, install_mcp_prm,
    resource_metadata,
};

async fn requested_scope(
    prm_extra: Value,
    as_extra: Value,
    header: &str,
    cfg: OAuthConfig,
) -> (Option<String>, Vec<Value>) {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, prm_extra);
    let log = install_as(&net, AsOpts { extra: as_extra, ..Default::default() });
    let c = client(&net, cfg);
    first_401(&c, Some(&challenge(header))).await.unwrap();
    let l = log.lock().unwrap();
    (l.authorize[0].get("scope").cloned(), l.register.clone())
}

#[tokio::test]
async fn scope_selection_scenarios() {
    let rm = resource_metadata();
    // scope-from-www-authenticate
    let (s, _) = requested_scope(
        json!({"scopes_supported": ["mcp:basic", "mcp:read"]}),
        json!({}),
        &format!(r#"Bearer scope="mcp:basic", {rm}"#),
        config(),
    )
    .await;
    assert_eq!(s.as_deref(), Some("mcp:basic"));
    // scope-from-scopes-supported
    let (s, _) = requested_scope(
        json!({"scopes_supported": ["mcp:basic", "mcp:read", "mcp:write"]}),
        json!({}),
        &format!("Bearer {rm}"),
        config(),
    )
    .await;
    assert_eq!(s.as_deref(), Some("mcp:basic mcp:read mcp:write"));
    // scope-omitted-when-undefined
    let (s, _) = requested_scope(json!({}), json!({}), &format!("Bearer {rm}"), config()).await;
    assert_eq!(s, None);
    // offline-access-scope: the AS lists offline_access, the PRM does not.
    let (s, reg) = requested_scope(
        json!({"scopes_supported": ["mcp:basic"]}),
        json!({"scopes_supported": ["mcp:basic", "offline_access"], "client_id_metadata_document_supported": true}),
        &format!("Bearer {rm}"),
        config(),
    )
    .await;
    assert_eq!(s.as_deref(), Some("mcp:basic offline_access"));
    assert_eq!(reg[0]["grant_types"], json!(["authorization_code", "refresh_token"]));
    // ... not when the host opts out.
    let (s, _) = requested_scope(
        json!({"scopes_supported": ["mcp:basic"]}),
        json!({"scopes_supported": ["mcp:basic", "offline_access"]}),
        &format!("Bearer {rm}"),
        config().with_offline_access(false),
    )
    .await;
    assert_eq!(s.as_deref(), Some("mcp:basic"));
    // offline-access-not-supported
    let (s, _) = requested_scope(
        json!({"scopes_supported": ["mcp:basic", "mcp:read"]}),
        json!({"scopes_supported": ["mcp:basic", "mcp:read"]}),
        &format!("Bearer {rm}"),
        config(),
    )
    .await;
    assert_eq!(s.as_deref(), Some("mcp:basic mcp:read"));
}

#[tokio::test]
async fn scope_step_up() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({"scopes_supported": ["mcp:basic"]}));
    let log = install_as(&net, AsOpts::default());
    let c = client(&net, config());
    let rm = resource_metadata();
    // tools/list: 401 asking for mcp:basic.
    first_401(&c, Some(&challenge(&format!(r#"Bearer scope="mcp:basic", {rm}"#)))).await.unwrap();
    assert_eq!(c.granted_scopes(), ["mcp:basic"]);
    // tools/call: 403 asking for mcp:basic mcp:write.
    let mut req = c.prepare().await;
    assert_eq!(bearer(&req), "Bearer test-token-1");
    let ch = challenge(&format!(
        r#"Bearer scope="mcp:basic mcp:write", {rm}, error="insufficient_scope""#
    ));
    c.on_insufficient_scope(&mut req, &ch).await.unwrap();
    assert_eq!(bearer(&req), "Bearer test-token-2");
    assert_eq!(req.authorizations(), 1);
    // A challenge naming only the missing scope: the held ones are kept.
    let ch = challenge(&format!(r#"Bearer scope="mcp:admin", {rm}, error="insufficient_scope""#));
    c.on_insufficient_scope(&mut req, &ch).await.unwrap();
    assert_eq!(req.authorizations(), 2);
    let l = log.lock().unwrap();
    assert_eq!(l.authorize.len(), 3);
    assert_eq!(l.authorize[0]["scope"], "mcp:basic");
    assert_eq!(l.authorize[1]["scope"], "mcp:basic mcp:write");
    assert_eq!(l.authorize[2]["scope"], "mcp:basic mcp:write mcp:admin");
    // Registration and discovery are not repeated for the step-up.
    assert_eq!(l.register.len(), 1);
    assert_eq!(net.count("GET", &format!("{AS}/.well-known/oauth-authorization-server")), 1);
}

#[tokio::test]
async fn scope_retry_limit() {
    let net = Arc::new(Net::default());
    install_mcp_prm(&net, json!({"scopes_supported": ["mcp:admin"]}));
    let log = install_as(&net, AsOpts::default());
    let c = client(&net, config());
    let rm = resource_metadata();
    let mut req = first_401(&c, Some(&challenge(&format!(r#"Bearer scope="mcp:admin", {rm}"#))))
        .await
        .unwrap();
    let deny = challenge(&format!(r#"Bearer error="insufficient_scope", scope="mcp:admin", {rm}"#));
    let mut errors = 0;
    for _ in 0..10 {
        if c.on_insufficient_scope(&mut req, &deny).await.is_err() {
            errors += 1;
            break;
        }
    }
    assert_eq!(errors, 1);
    // The first 401's authorization and one step-up: the second step-up
    // would ask for nothing new.
    assert_eq!(log.lock().unwrap().authorize.len(), 2);

    // A server that keeps asking for new scopes is cut off by the bound.
    let mut req = c.prepare().await;
    assert_eq!(step_ups_until_refused(&c, &mut req, "s", &rm).await, mcp_auth::MAX_STEP_UPS);

    // A request that already ran an authorization (its first 401) has
    // that many fewer: the bound counts authorizations, not only step-ups.
    let mut req = c.prepare().await;
    assert_eq!(req.authorizations(), 0);
    c.on_unauthorized(&mut req, Some(&challenge(&format!("Bearer {rm}")))).await.unwrap();
    assert_eq!(req.authorizations(), 1);
    let n = step_ups_until_refused(&c, &mut req, "t", &rm).await;
    assert_eq!(n, mcp_auth::MAX_AUTHORIZATIONS_PER_REQUEST - 1);
}

/// Answers `req` with 403s that each ask for a new scope (`{prefix}0`,
/// `{prefix}1`, ...) until the client refuses to step up; how many step-ups
/// it made.
async fn step_ups_until_refused(
    c: &OAuthClient,
    req: &mut RequestAuth,
    prefix: &str,
    rm: &str,
) -> u8 {
    for n in 0..10 {
        let ch =
            challenge(&format!(r#"Bearer error="insufficient_scope", scope="{prefix}{n}", {rm}"#));
        if let Err(e) = c.on_insufficient_scope(req, &ch).await {
            assert!(matches!(e, Error::InsufficientScope { .. }), "{e:?}");
            return n;
        }
    }
    panic!("no bound after 10 step-ups");
}
