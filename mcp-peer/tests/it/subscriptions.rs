//! Subscriptions (`subscriptions/listen`, stateless era): acknowledged,
//! demultiplexed, closed, listened to again after a break; floods and
//! slow readers reported once a second.

use std::time::Duration;

use mcp_peer::memory::MemoryError;
use mcp_peer::{ClientOptions, ServerNotification};
use mcp_proto::client::ClientError;
use mcp_testkit::ServeEra;
use serde_json::json;

use crate::common::{Pair, modern_config, options, pair, pair_with, text};

#[tokio::test(start_paused = true)]
async fn subscriptions_are_acknowledged_demultiplexed_and_closed() {
    use mcp_proto::types::SubscriptionFilter;
    let Pair { client, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    let tools = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut on_tools = client.listen(tools).await.unwrap();
    assert_eq!(on_tools.granted().tools_list_changed, Some(true));
    assert!(on_tools.refused().is_empty());
    let uri = "test://static/text/1";
    let resources = SubscriptionFilter {
        resource_subscriptions: Some(vec![uri.into(), "test://nowhere".into()]),
        ..Default::default()
    };
    let mut on_resource = client.listen(resources).await.unwrap();
    assert_eq!(on_resource.refused(), ["test://nowhere"]);
    let mut everything = client.notifications();

    client.call_tool("change", ()).await.unwrap();
    client.call_tool("touch", json!({"uri": uri})).await.unwrap();
    assert_eq!(on_tools.recv().await, Some(ServerNotification::ToolListChanged));
    match on_resource.recv().await {
        Some(ServerNotification::ResourceUpdated(p)) => assert_eq!(p.uri, uri),
        other => panic!("{other:?}"),
    }
    // Each stream got only its own; the client-wide stream got both.
    let quiet = tokio::time::timeout(Duration::from_millis(50), on_tools.recv()).await;
    assert!(quiet.is_err(), "{quiet:?}");
    let mut seen = Vec::new();
    while let Ok(Some(n)) = tokio::time::timeout(Duration::from_millis(50), everything.recv()).await
    {
        seen.push(n.method().to_owned());
    }
    assert!(seen.contains(&"notifications/tools/list_changed".to_owned()), "{seen:?}");
    assert!(seen.contains(&"notifications/resources/updated".to_owned()), "{seen:?}");
    // The tool cache was dropped by the list change.
    assert!(client.list_tools().await.unwrap().iter().any(|t| t.name == "extra"));

    // Closing one sends notifications/cancelled for its request (stdio).
    drop(on_resource);
    tokio::time::sleep(Duration::from_millis(10)).await;
    let log = client.call_tool("cancelled_log", ()).await.unwrap();
    assert_ne!(text(&log), "[]");

    // The server ends the other gracefully.
    client.call_tool("close_subscriptions", ()).await.unwrap();
    assert_eq!(on_tools.recv().await, None);
    assert_eq!(on_tools.end_reason().as_deref(), Some("the server ended the subscription"));
}

#[tokio::test(start_paused = true)]
async fn listening_is_refused_in_the_handshake_era() {
    let Pair { client, .. } = pair(options());
    let err = client.listen(Default::default()).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::NotInEra { .. })), "{err:?}");
}

#[tokio::test(start_paused = true)]
async fn a_broken_subscription_listens_again_and_reports_its_lists_changed() {
    use mcp_proto::types::SubscriptionFilter;
    let Pair { client, restart, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    let tools = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = client.listen(tools).await.unwrap();
    // The server process "restarts": its subscription state is gone.
    restart.now();
    // Whatever changed meanwhile is unknown: reported as a change.
    assert_eq!(sub.recv().await, Some(ServerNotification::ToolListChanged));
    // Listening again, the new server's changes arrive.
    tokio::time::sleep(Duration::from_secs(2)).await;
    client.call_tool("change", ()).await.unwrap();
    assert_eq!(sub.recv().await, Some(ServerNotification::ToolListChanged));
    assert!(sub.end_reason().is_none());
}

#[tokio::test(start_paused = true)]
async fn breaks_with_open_streams_between_them_never_use_up_the_relistens() {
    use mcp_proto::types::SubscriptionFilter;
    let Pair { client, restart, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    let tools = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = client.listen(tools).await.unwrap();
    // More breaks than MAX_RELISTENS, each after the stream was open again:
    // never "in a row", so the subscription lives on.
    for _ in 0..mcp_peer::MAX_RELISTENS + 2 {
        restart.now();
        assert_eq!(sub.recv().await, Some(ServerNotification::ToolListChanged));
        tokio::time::sleep(Duration::from_secs(15)).await;
        client.call_tool("change", ()).await.unwrap();
        assert_eq!(sub.recv().await, Some(ServerNotification::ToolListChanged));
    }
    assert!(sub.end_reason().is_none(), "{:?}", sub.end_reason());
}

#[tokio::test(start_paused = true)]
async fn a_flood_into_an_unread_subscription_is_one_warning_per_second() {
    use mcp_proto::types::SubscriptionFilter;
    let logs = mcp_test_support::LogCapture::start(tracing::Level::WARN);
    let Pair { client, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    let tools = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = client.listen(tools).await.unwrap();
    let flood = mcp_peer::SUBSCRIPTION_BUFFER + 300;
    for _ in 0..flood {
        client.call_tool("change", ()).await.unwrap();
    }
    let full = "buffer is full";
    assert_eq!(logs.lines_with(full).len(), 1, "one line for the first drop");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    client.call_tool("change", ()).await.unwrap();
    let lines = logs.lines_with(full);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[1].contains("dropped=300"), "the rest counted in one line: {lines:?}");
    // What was kept is still there, in order.
    for _ in 0..mcp_peer::SUBSCRIPTION_BUFFER {
        assert_eq!(sub.recv().await, Some(ServerNotification::ToolListChanged));
    }
}

#[tokio::test(start_paused = true)]
async fn a_subscriber_that_keeps_falling_behind_is_one_warning_per_second() {
    let logs = mcp_test_support::LogCapture::start(tracing::Level::WARN);
    let Pair { client, .. } = pair(options());
    let mut notifications = client.notifications();
    // Ten floods, each read from once: ten lags.
    for _ in 0..10 {
        for _ in 0..300 {
            client.call_tool("change", ()).await.unwrap();
        }
        assert_eq!(notifications.recv().await, Some(ServerNotification::ToolListChanged));
    }
    let behind = "fell behind";
    assert_eq!(logs.lines_with(behind).len(), 1, "one line for the first lag");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    client.call_tool("change", ()).await.unwrap();
    assert_eq!(notifications.recv().await, Some(ServerNotification::ToolListChanged));
    let lines = logs.lines_with(behind);
    assert_eq!(lines.len(), 2, "{lines:?}");
}
