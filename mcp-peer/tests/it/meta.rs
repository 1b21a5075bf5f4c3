//! What rides in a request's `_meta`: the caller's members beside the
//! era's own, the log level in the stateless era (the OpenTelemetry
//! context: `otel.rs`).

use std::sync::Arc;

use mcp_peer::memory::MemoryError;
use mcp_peer::{ClientOptions, RequestOptions, ServerNotification};
use mcp_proto::client::ClientError;
use mcp_testkit::ServeEra;
use serde_json::{Value, json};

use crate::common::{Pair, modern_config, pair_filtered, pair_with, received_log, text};

#[tokio::test(start_paused = true)]
async fn per_call_meta_reaches_the_server_beside_the_era_s_own() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let record = move |v: &Value| {
        sink.lock().unwrap().push(v["params"]["_meta"].clone());
        true
    };
    let Pair { client, .. } =
        pair_filtered(ClientOptions::new("testkit"), modern_config(ServeEra::Modern), record);
    let mut meta = serde_json::Map::new();
    meta.insert(
        "traceparent".into(),
        json!("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"),
    );
    // The caller cannot override the era's own members.
    meta.insert("io.modelcontextprotocol/protocolVersion".into(), json!("1999-01-01"));
    let options = RequestOptions { meta: Some(meta), ..Default::default() };
    let r = client.call_tool_with("echo", json!({"message": "traced"}), options).await.unwrap();
    assert_eq!(text(&r), "traced");
    let log = received_log(&client).await;
    let call =
        log.iter().rev().find(|r| r["method"] == "tools/call" && r["name"] == "echo").unwrap();
    assert_eq!(call["protocolVersion"], "2026-07-28");
    let sent = seen.lock().unwrap();
    let traced: Vec<&Value> = sent.iter().filter(|m| m.get("traceparent").is_some()).collect();
    assert_eq!(traced.len(), 1, "{sent:?}");
    assert_eq!(traced[0]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert!(traced[0]["io.modelcontextprotocol/clientCapabilities"].is_object());
}

#[tokio::test(start_paused = true)]
async fn the_log_level_rides_on_each_request_in_the_stateless_era() {
    use mcp_proto::types::LoggingLevel;
    let Pair { client, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    let quiet = client.call_tool("log", json!({"level": "error", "message": "x"})).await.unwrap();
    assert!(text(&quiet).starts_with("not sent"), "{}", text(&quiet));
    let err = client.set_log_level(LoggingLevel::Debug).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::NotInEra { .. })), "{err:?}");

    let mut o = ClientOptions::new("testkit");
    o.log_level = Some(LoggingLevel::Warning);
    let Pair { client, .. } = pair_with(o, modern_config(ServeEra::Modern));
    let mut stream = client.notifications();
    let below = client.call_tool("log", json!({"level": "info", "message": "x"})).await.unwrap();
    assert!(text(&below).starts_with("not sent"), "{}", text(&below));
    client.call_tool("log", json!({"level": "error", "message": "loud"})).await.unwrap();
    match stream.recv().await {
        Some(ServerNotification::LogMessage(m)) => assert_eq!(m.data, json!("loud")),
        other => panic!("{other:?}"),
    }
    // A call may ask for its own level.
    let mut meta = serde_json::Map::new();
    meta.insert("io.modelcontextprotocol/logLevel".into(), json!("debug"));
    let options = RequestOptions { meta: Some(meta), ..Default::default() };
    let r = client
        .call_tool_with("log", json!({"level": "info", "message": "chatty"}), options)
        .await
        .unwrap();
    assert!(!text(&r).starts_with("not sent"), "{}", text(&r));
}
