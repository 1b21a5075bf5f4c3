//! `mcpc serve` and notifications: log messages, list changes and resource
//! updates reaching a handshake-era host, and a stateless-era host's call
//! logs and `subscriptions/listen`.

use std::time::{Duration, Instant};

use mcp_peer::EraChoice;
use mcp_proto::types::{LoggingLevel, SubscriptionFilter};
use mcp_test_support::text_blocks;
use serde_json::json;

use crate::run::Sandbox;
use crate::serve_support::{
    call, host, host_options, host_with, log_data, next_matching, server_spec, tools_changed,
    updated_uri,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_list_changes_and_resource_updates_reach_a_handshake_era_host() {
    let s = Sandbox::new("serve-notify");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    c.initialize().await.unwrap();
    let mut n = c.notifications();
    // The host's level reaches the server.
    c.set_log_level(LoggingLevel::Warning).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = text_blocks(&call(&c, "log", json!({"level": "info", "message": "quiet"})).await);
        if r.contains("below the level") {
            break;
        }
        assert!(Instant::now() < deadline, "the level did not reach the server: {r}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    call(&c, "log", json!({"level": "error", "message": "loud"})).await;
    let data = next_matching(async || n.recv().await, log_data).await;
    assert_eq!(data, json!("loud"));
    call(&c, "change", json!({})).await;
    next_matching(async || n.recv().await, tools_changed).await;
    c.subscribe_resource("test://static/text/1").await.unwrap();
    let r = text_blocks(&call(&c, "touch", json!({"uri": "test://static/text/1"})).await);
    assert_eq!(r, "touched");
    let uri = next_matching(async || n.recv().await, updated_uri).await;
    assert_eq!(uri, "test://static/text/1");
    c.close().await.unwrap();
}

/// A handshake-era host's level reaches an upstream of either era: by
/// `logging/setLevel` in the handshake era, in each call's `_meta` in the
/// stateless era (where the bridge adds it only for an upstream not known
/// to speak the handshake era).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_era_hosts_level_reaches_an_upstream_of_either_era() {
    let s = Sandbox::new("serve-level-eras");
    let cases = [
        (server_spec("--era legacy"), "not sent: below the level set by logging/setLevel"),
        (
            server_spec("--era modern"),
            "not sent: below the request's io.modelcontextprotocol/logLevel",
        ),
    ];
    for (upstream, quiet) in &cases {
        let c = host(&s, &["--server", upstream], EraChoice::Legacy, None).await;
        c.initialize().await.unwrap();
        let mut n = c.notifications();
        c.set_log_level(LoggingLevel::Warning).await.unwrap();
        // A handshake-era upstream gets the level on its own (passed on
        // without waiting): asked until it has it.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let r = text_blocks(&call(&c, "log", json!({"level": "info", "message": "q"})).await);
            if r == *quiet {
                break;
            }
            assert!(Instant::now() < deadline, "through {upstream}: {r}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Calls after the first (the upstream connection open, its era
        // known) alike.
        for _ in 0..3 {
            let r = text_blocks(&call(&c, "log", json!({"level": "info", "message": "q"})).await);
            assert_eq!(r, *quiet, "through {upstream}");
        }
        let r = text_blocks(&call(&c, "log", json!({"level": "error", "message": "loud"})).await);
        assert_eq!(r, "logged", "through {upstream}");
        let data = next_matching(async || n.recv().await, log_data).await;
        assert_eq!(data, json!("loud"), "through {upstream}");
        c.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_era_host_gets_the_log_messages_of_its_call_at_its_level() {
    let s = Sandbox::new("serve-modern-logs");
    let spec = server_spec("");
    let modern = server_spec("--era modern");
    for upstream in [&spec, &modern] {
        let mut o = host_options(EraChoice::Modern);
        o.log_level = Some(LoggingLevel::Warning);
        let c = host_with(&s, &["--server", upstream], o).await;
        let mut n = c.notifications();
        call(&c, "log", json!({"level": "info", "message": "quiet"})).await;
        call(&c, "log", json!({"level": "error", "message": "loud"})).await;
        let data = next_matching(async || n.recv().await, log_data).await;
        assert_eq!(data, json!("loud"), "through {upstream}");
        c.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_era_host_listens_for_list_changes_and_updates() {
    let s = Sandbox::new("serve-listen");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Modern, None).await;
    let uri = "test://static/text/2";
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        resource_subscriptions: Some(vec![uri.to_owned()]),
        ..Default::default()
    };
    let mut listen = c.listen(filter).await.unwrap();
    assert!(listen.refused().is_empty());
    call(&c, "change", json!({})).await;
    next_matching(async || listen.recv().await, tools_changed).await;
    // The bridge subscribed upstream for the host (in the background).
    let deadline = Instant::now() + Duration::from_secs(10);
    while text_blocks(&call(&c, "touch", json!({"uri": uri})).await) != "touched" {
        assert!(Instant::now() < deadline, "the bridge did not subscribe upstream");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let updated = next_matching(async || listen.recv().await, updated_uri).await;
    assert_eq!(updated, uri);
    c.close().await.unwrap();
}
