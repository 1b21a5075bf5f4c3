//! Resource subscriptions made through the registry: remembered, and made
//! again on every new connection (`resources/subscribe` in the handshake
//! era, one `subscriptions/listen` stream in the stateless era).

use mcp_peer::Subscription;
use mcp_proto::ProtocolVersion;
use mcp_proto::types::SubscriptionFilter;

use super::calls;
use super::slot::{Slot, lock};
use crate::config::ServerConfig;
use crate::relay::Relay;
use crate::transport::ServerClient;

/// Whether the connection speaks the stateless revision (2026-07-28).
pub(crate) fn is_modern(conn: &ServerClient) -> bool {
    conn.protocol_version().is_some_and(ProtocolVersion::is_modern)
}

/// A `subscriptions/listen` filter for the resources subscribed through
/// the registry, and the list changes when `list_changes`
/// ([`RegistryOptions::listen_list_changes`](crate::RegistryOptions::listen_list_changes)).
pub(crate) fn listen_filter(slot: &Slot, list_changes: bool) -> SubscriptionFilter {
    let uris = lock(&slot.subscriptions).iter().cloned().collect();
    let changes = list_changes.then_some(true);
    SubscriptionFilter {
        tools_list_changed: changes,
        prompts_list_changed: changes,
        resources_list_changed: changes,
        resource_subscriptions: Some(uris),
        ..SubscriptionFilter::default()
    }
}

/// Keeps `subscription` as the listen stream of connection `generation`
/// (`None`: keeps none), if that is still the slot's connection, and ends
/// the one it replaces before returning (so the server stops sending what
/// is no longer asked for before anything else is sent); otherwise the
/// stream is closed (the newer connection listened to the registry's set
/// when it was made).
pub(crate) async fn keep_listen(slot: &Slot, generation: u64, subscription: Option<Subscription>) {
    let replaced = {
        let cached = slot.conn.lock().await;
        match &*cached {
            Some((g, _, relay)) if *g == generation => {
                relay.set_listen(subscription.map(|s| (slot.name.clone(), s)))
            }
            _ => None,
        }
    };
    if let Some(replaced) = replaced {
        replaced.end().await;
    }
}

/// Subscribes a new connection to the resources subscribed through the
/// registry, within the server's timeout: concurrent `resources/subscribe`
/// requests in the handshake era, one `subscriptions/listen` stream (kept
/// by `relay`) in the stateless era, which also asks for the list changes
/// when `list_changes` (then opened even with no resource subscribed). A
/// refusal is logged (the URI stays remembered).
pub(crate) async fn resubscribe(
    slot: &Slot,
    server: &ServerConfig,
    conn: &ServerClient,
    relay: &Relay,
    list_changes: bool,
) {
    let uris: Vec<String> = lock(&slot.subscriptions).iter().cloned().collect();
    let modern = is_modern(conn);
    if uris.is_empty() && !(modern && list_changes) {
        return;
    }
    if modern {
        let filter = listen_filter(slot, list_changes);
        match tokio::time::timeout(server.timeout, calls::listen(conn, filter)).await {
            Ok(Ok(subscription)) => {
                for uri in subscription.refused() {
                    tracing::warn!(server = %server.name, %uri, "subscribing again was refused");
                }
                // A new connection: no stream to replace.
                let _none = relay.set_listen(Some((server.name.clone(), subscription)));
            }
            Ok(Err(e)) => tracing::warn!(server = %server.name, "subscribing again failed: {e}"),
            Err(_) => tracing::warn!(server = %server.name, "subscribing again timed out"),
        }
        return;
    }
    let all = futures_util::future::join_all(uris.iter().map(|uri| calls::subscribe(conn, uri)));
    match tokio::time::timeout(server.timeout, all).await {
        Ok(results) => {
            for (uri, result) in uris.iter().zip(results) {
                if let Err(e) = result {
                    tracing::warn!(server = %server.name, %uri, "subscribing again failed: {e}");
                }
            }
        }
        Err(_) => tracing::warn!(server = %server.name, "subscribing again timed out"),
    }
}
