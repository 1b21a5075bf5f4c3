//! The stateless era (2026-07-28) and the era probe over HTTP: stateless
//! POSTs, the fallback to a session and to HTTP+SSE, a dual-era server,
//! and subscriptions on POST streams of their own.

use http::Method;
use mcp_test_support::bounded_by;
use mcp_testkit::HttpConfig;
use serde_json::json;

use crate::client_support::{TEST_TIMEOUT, args, auto, echo, header, options, server};

#[tokio::test]
async fn a_stateless_server_gets_stateless_posts() {
    bounded_by(TEST_TIMEOUT, async {
        let mut config = HttpConfig::default();
        config.server.era = mcp_testkit::ServeEra::Modern;
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), auto()).unwrap();
        assert_eq!(echo(&client, "stateless").await.unwrap(), "stateless");
        assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::V2026_07_28));
        assert!(!client.transport().has_session());
        assert!(!client.transport().open_event_stream().await.unwrap());
        client.close().await.unwrap();
        let methods = server.rpc_methods();
        assert_eq!(methods[0], "server/discover");
        assert!(!methods.iter().any(|m| m == "initialize"), "{methods:?}");
        assert_eq!(server.request_count(&Method::GET), 0);
        assert_eq!(server.deletes(), 0);
        for post in server.requests().iter().filter(|r| r.method == Method::POST) {
            let h = &post.headers;
            assert_eq!(header(h, "mcp-protocol-version"), Some("2026-07-28"));
            assert!(h.get("mcp-session-id").is_none());
            assert!(h.get("mcp-method").is_some());
        }
        let calls = server.received_log();
        let echo_call = calls.iter().find(|r| r["name"] == "echo").unwrap();
        assert_eq!(echo_call["protocolVersion"], "2026-07-28");
    })
    .await;
}

#[tokio::test]
async fn the_probe_falls_back_to_a_session_and_to_the_2024_11_05_transport() {
    bounded_by(TEST_TIMEOUT, async {
        let legacy = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&legacy.url(), auto()).unwrap();
        assert_eq!(echo(&client, "old").await.unwrap(), "old");
        assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
        assert!(client.transport().has_session());
        client.close().await.unwrap();
        // The origin is remembered: the next client sends initialize first.
        let again = mcp_http::connect(&legacy.url(), auto()).unwrap();
        let before = legacy.request_count(&Method::POST);
        again.initialize().await.unwrap();
        let first = &legacy.requests()[before as usize..];
        assert!(first.iter().all(|r| header(&r.headers, "mcp-method") != Some("server/discover")));
        again.close().await.unwrap();

        let config = HttpConfig { legacy: true, ..HttpConfig::default() };
        let sse = server(config).await;
        let client = mcp_http::connect(&sse.url(), auto()).unwrap();
        assert_eq!(echo(&client, "older").await.unwrap(), "older");
        assert!(client.transport().is_legacy());
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_dual_era_server_is_spoken_to_statelessly_unless_pinned() {
    bounded_by(TEST_TIMEOUT, async {
        let mut config = HttpConfig::default();
        config.server.era = mcp_testkit::ServeEra::Both;
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), auto()).unwrap();
        client.list_tools().await.unwrap();
        assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::V2026_07_28));
        let pinned = mcp_http::connect(&server.url(), options()).unwrap();
        pinned.list_tools().await.unwrap();
        assert_eq!(pinned.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
        assert!(pinned.transport().has_session());
    })
    .await;
}

#[tokio::test]
async fn subscriptions_listen_on_a_post_stream_of_their_own() {
    bounded_by(TEST_TIMEOUT, async {
        use mcp_proto::client::ServerNotification;
        use mcp_proto::types::SubscriptionFilter;
        let mut config = HttpConfig::default();
        config.server.era = mcp_testkit::ServeEra::Modern;
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), auto()).unwrap();
        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            ..Default::default()
        };
        let mut first = client.listen(filter.clone()).await.unwrap();
        let mut second = client.listen(filter).await.unwrap();
        client
            .call_tool_with("change", args(json!({"list": "prompts"})), Default::default())
            .await
            .unwrap();
        assert_eq!(first.recv().await, Some(ServerNotification::PromptListChanged));
        assert_eq!(second.recv().await, Some(ServerNotification::PromptListChanged));
        // Closing one closes its stream; the other goes on.
        drop(first);
        client.call_tool_with("change", args(json!({})), Default::default()).await.unwrap();
        assert_eq!(second.recv().await, Some(ServerNotification::ToolListChanged));
        let listens = server
            .requests()
            .into_iter()
            .filter(|r| header(&r.headers, "mcp-method") == Some("subscriptions/listen"))
            .count();
        assert_eq!(listens, 2);
        client
            .call_tool_with("close_subscriptions", args(json!({})), Default::default())
            .await
            .unwrap();
        assert_eq!(second.recv().await, None);
        assert_eq!(second.end_reason().as_deref(), Some("the server ended the subscription"));
    })
    .await;
}
