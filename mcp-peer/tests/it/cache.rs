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

#[tokio::test(start_paused = true)]
async fn clients_sharing_a_cache_share_its_entries_under_their_name_only() {
    use std::sync::Arc;

    use mcp_peer::cache::{MemoryCache, ResultCache};
    let cache: Arc<dyn ResultCache> = Arc::new(MemoryCache::default());
    let options = |name: &str| {
        let mut o = ClientOptions::new(name);
        o.cache = Some(Arc::clone(&cache));
        o
    };
    let config = || Config { ttl_ms: 60_000, ..modern_config(ServeEra::Modern) };
    let Pair { client: first, .. } = pair_with(options("one"), config());
    first.list_tools().await.unwrap();
    assert_eq!(count(&received_log(&first).await, "tools/list"), 1);
    // The same name (and, over memory, the same origin): the entry is its.
    let Pair { client: same, .. } = pair_with(options("one"), config());
    same.list_tools().await.unwrap();
    assert_eq!(count(&received_log(&same).await, "tools/list"), 0);
    // Another name: asked again.
    let Pair { client: other, .. } = pair_with(options("two"), config());
    other.list_tools().await.unwrap();
    assert_eq!(count(&received_log(&other).await, "tools/list"), 1);
}
