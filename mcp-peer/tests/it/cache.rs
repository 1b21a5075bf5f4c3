//! The result cache of the stateless era: fresh results until their ttl
//! or a change, nothing cached without a ttl or when turned off.

use std::time::Duration;

use mcp_peer::{ClientOptions, ServerNotification};
use mcp_testkit::{Config, ServeEra};
use serde_json::{Value, json};

use crate::common::{Pair, modern_config, pair_with, received_log};

fn count(log: &[Value], method: &str) -> usize {
    log.iter().filter(|r| r["method"] == method).count()
}

#[tokio::test(start_paused = true)]
async fn fresh_results_come_from_the_cache_until_their_ttl_or_a_change() {
    use mcp_proto::types::SubscriptionFilter;
    let config = Config { ttl_ms: 1000, ..modern_config(ServeEra::Modern) };
    let Pair { client, .. } = pair_with(ClientOptions::new("testkit"), config);
    let uri = "test://static/text/1";
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    client.read_resource(uri).await.unwrap();
    client.read_resource(uri).await.unwrap();
    let log = received_log(&client).await;
    assert_eq!((count(&log, "tools/list"), count(&log, "resources/read")), (1, 1));
    // Stale after the ttl: asked again.
    tokio::time::sleep(Duration::from_millis(1001)).await;
    client.list_tools().await.unwrap();
    // A change the server announces makes a fresh copy stale at once.
    let filter =
        SubscriptionFilter { resource_subscriptions: Some(vec![uri.into()]), ..Default::default() };
    let mut sub = client.listen(filter).await.unwrap();
    client.call_tool("touch", json!({"uri": uri})).await.unwrap();
    assert!(matches!(sub.recv().await, Some(ServerNotification::ResourceUpdated(_))));
    client.read_resource(uri).await.unwrap();
    let log = received_log(&client).await;
    assert_eq!((count(&log, "tools/list"), count(&log, "resources/read")), (2, 2));
}

#[tokio::test(start_paused = true)]
async fn no_cache_without_a_ttl_or_when_turned_off() {
    let Pair { client, .. } =
        pair_with(ClientOptions::new("testkit"), modern_config(ServeEra::Modern));
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(count(&received_log(&client).await, "tools/list"), 2);
    let mut o = ClientOptions::new("testkit");
    o.cache = None;
    let config = Config { ttl_ms: 60_000, ..modern_config(ServeEra::Modern) };
    let Pair { client, .. } = pair_with(o, config);
    client.list_tools().await.unwrap();
    client.list_tools().await.unwrap();
    assert_eq!(count(&received_log(&client).await, "tools/list"), 2);
}
