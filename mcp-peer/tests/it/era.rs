//! The protocol era: the probe and its fallback to `initialize`, a
//! server that refuses versions, the stateless era pinned or found, a
//! server of both eras, and the era memory the options give.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_peer::memory::{self, MemoryError, MemoryTransport};
use mcp_peer::{Client, ClientOptions, EraChoice};
use mcp_proto::ProtocolVersion;
use mcp_proto::client::ClientError;
use mcp_proto::types::Implementation;
use mcp_testkit::{Config, ServeEra, Server};
use serde_json::{Value, json};

use crate::common::{
    Pair, Wrapped, forward, modern_config, options, pair, pair_filtered, pair_with, received_log,
    text,
};

#[tokio::test(start_paused = true)]
async fn the_era_probe_falls_back_to_initialize_on_a_handshake_era_server() {
    let Pair { client, received, .. } = pair(ClientOptions::new("testkit"));
    client.ping().await.unwrap();
    // server/discover (refused), initialize, notifications/initialized, ping.
    assert_eq!(received.load(Ordering::SeqCst), 4);
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
    assert_eq!(client.server_info().unwrap().name, "mcp-testkit");
}

#[tokio::test(start_paused = true)]
async fn a_silent_probe_times_out_into_the_handshake_era() {
    let not_discover = |v: &Value| v["method"] != "server/discover";
    let Pair { client, received, .. } =
        pair_filtered(ClientOptions::new("testkit"), Config::default(), not_discover);
    let started = tokio::time::Instant::now();
    client.ping().await.unwrap();
    // The probe waited its timeout (5 s of virtual time), then initialize.
    assert!(started.elapsed() >= mcp_peer::DEFAULT_PROBE_TIMEOUT);
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
    // No notifications/cancelled for the probe: a handshake-era server
    // must see nothing but initialize first. discover, initialize,
    // initialized, ping.
    assert_eq!(received.load(Ordering::SeqCst), 4);
    let log = client.call_tool("cancelled_log", ()).await.unwrap();
    assert_eq!(text(&log), "[]");
}

/// A server that answers every `server/discover` with `-32022`, listing
/// the versions `lists` gives for each try in turn (the last one again
/// once they run out); returns the client and the number of probes.
fn refusing_versions(lists: Vec<Vec<&'static str>>) -> (Client<MemoryTransport>, Arc<AtomicUsize>) {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, ClientOptions::new("refusing"));
    let probes = Arc::new(AtomicUsize::new(0));
    let counter = probes.clone();
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            let Some(id) = msg.get("id") else { continue };
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let listed = lists.get(n).or(lists.last()).cloned().unwrap_or_default();
            let requested = &msg["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"];
            let reply = json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": listed, "requested": requested}}});
            end.send(reply.to_string().as_bytes());
        }
    });
    (client, probes)
}

#[tokio::test(start_paused = true)]
async fn a_server_that_keeps_refusing_a_version_it_lists_is_named_correctly() {
    let (client, probes) = refusing_versions(vec![vec!["2026-07-28"]]);
    let err = client.ping().await.unwrap_err();
    // Asked again once with the version it lists, then given up.
    assert_eq!(probes.load(Ordering::SeqCst), 2);
    assert_eq!(
        err.to_string(),
        "server/discover failed: the server refused protocol version \"2026-07-28\" \
         (the server lists: 2026-07-28; this client speaks: 2024-11-05, 2025-03-26, \
         2025-06-18, 2025-11-25, 2026-07-28; in common: 2026-07-28)"
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_that_alternates_its_versions_is_named_correctly() {
    let (client, probes) =
        refusing_versions(vec![vec!["2026-07-28"], vec!["2027-01-01"], vec!["2026-07-28"]]);
    let err = client.ping().await.unwrap_err();
    assert_eq!(probes.load(Ordering::SeqCst), 2);
    assert_eq!(
        err.to_string(),
        "server/discover failed: the server refused protocol version \"2026-07-28\" \
         (the server lists: 2027-01-01; this client speaks: 2024-11-05, 2025-03-26, \
         2025-06-18, 2025-11-25, 2026-07-28; in common: none)"
    );
    // Remembered: a later request fails the same way without probing.
    assert_eq!(client.ping().await.unwrap_err().to_string(), err.to_string());
    assert_eq!(probes.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn the_stateless_era_pinned_refuses_a_handshake_era_server_s_methods() {
    let mut o = ClientOptions::new("testkit");
    o.era = EraChoice::Modern;
    let Pair { client, .. } = pair(o);
    // The handshake-era testkit does not answer server/discover with a
    // discovery: pinned to the stateless era, the client speaks it anyway.
    let err = client.ping().await.unwrap_err();
    assert!(
        matches!(err, MemoryError::Protocol(ClientError::NotInEra { ref method, .. }) if method == "ping"),
        "{err:?}"
    );
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::V2026_07_28));
}

#[tokio::test(start_paused = true)]
async fn the_probe_finds_a_stateless_server_and_every_request_carries_its_meta() {
    for era in [ServeEra::Modern, ServeEra::Both] {
        let mut o = ClientOptions::new("testkit");
        o.client_info = Implementation::new("probe-test", "1.2.3");
        let Pair { client, .. } = pair_with(o, modern_config(era));
        let tools = client.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));
        assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2026_07_28));
        assert_eq!(client.server_info().unwrap().name, "mcp-testkit");
        assert!(client.server_capabilities().unwrap().tools.is_some());
        let echoed = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
        assert_eq!(text(&echoed), "hi");
        // The era has no ping: refused before anything is sent.
        let err = client.ping().await.unwrap_err();
        assert!(matches!(err, MemoryError::Protocol(ClientError::NotInEra { .. })), "{err:?}");
        let log = received_log(&client).await;
        let methods: Vec<&str> = log.iter().map(|r| r["method"].as_str().unwrap()).collect();
        assert_eq!(methods, ["server/discover", "tools/list", "tools/call", "tools/call"]);
        for record in &log {
            assert_eq!(record["protocolVersion"], "2026-07-28", "{record}");
            assert!(record["clientCapabilities"].is_object(), "{record}");
            assert_eq!(record["clientInfo"]["name"], "probe-test", "{record}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_dual_era_server_is_spoken_to_in_the_era_the_client_pins() {
    let Pair { client, .. } = pair_with(options(), modern_config(ServeEra::Both));
    client.ping().await.unwrap();
    assert_eq!(client.protocol_version(), Some(ProtocolVersion::LATEST_LEGACY));
    let mut o = ClientOptions::new("testkit");
    o.era = EraChoice::Modern;
    let Pair { client, .. } = pair_with(o, modern_config(ServeEra::Both));
    client.list_tools().await.unwrap();
    assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2026_07_28));
}

// The era memory is the caller's: passed in the options, the process's
// shared table by default.

/// A handshake-era testkit server behind `key`; the methods it received
/// once the client pinged.
async fn methods_of_a_ping(key: &'static str, options: ClientOptions) -> Vec<String> {
    let (transport, mut end) = memory::pair();
    let client = Client::new(Wrapped { key: Some(key), ..Wrapped::new(transport) }, options);
    let sender = end.sender();
    let (server, queue) = Server::new(Config::default());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let m: Value = serde_json::from_slice(&bytes).unwrap();
            log.lock().unwrap().push(m["method"].as_str().unwrap_or("").to_owned());
            server.handle_json(&bytes);
        }
    });
    forward(queue, sender);
    client.ping().await.unwrap();
    client.close().await.unwrap();
    seen.lock().unwrap().clone()
}

#[tokio::test(start_paused = true)]
async fn the_era_memory_is_the_one_the_options_give() {
    let key = "test://era-memory-passed-in";
    let table = Arc::new(mcp_peer::era::EraTable::default());
    let mut own = ClientOptions::new("own");
    own.era_memory = Some(table.clone());
    // The first client probes and remembers, in its own table only.
    let first = methods_of_a_ping(key, own.clone()).await;
    assert_eq!(first[..2], ["server/discover", "initialize"]);
    assert!(mcp_peer::era::EraMemory::known_legacy(&*table, key));
    assert!(!mcp_peer::era::EraMemory::known_legacy(&*mcp_peer::era::shared(), key));
    // A second client sharing that table sends initialize at once.
    let second = methods_of_a_ping(key, own).await;
    assert_eq!(second[0], "initialize");
    // One with the shared default, or with no memory, probes.
    let shared = methods_of_a_ping(key, ClientOptions::new("shared")).await;
    assert_eq!(shared[0], "server/discover");
    let mut none = ClientOptions::new("none");
    none.era_memory = None;
    let forgetful = methods_of_a_ping(key, none.clone()).await;
    assert_eq!(forgetful[0], "server/discover");
    assert_eq!(methods_of_a_ping(key, none).await[0], "server/discover");
}
