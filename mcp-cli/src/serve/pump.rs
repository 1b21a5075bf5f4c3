//! The notifications pump: what the upstream servers say without being
//! asked (list changes, resource updates, log messages), read from the
//! registry's one stream and passed to the host: as notifications to a
//! handshake-era host, and to the `subscriptions/listen` streams a
//! stateless-era host opened. Progress is not here: each call relays its
//! own. A server that comes back (restarted, reconnected, or up for the
//! first time after the bridge started) may list other things: the host
//! is told its lists changed.

use std::collections::{HashMap, HashSet};

use mcp_host_registry::{HealthEvent, NotificationEvent, Registry};
use mcp_proto::client::ServerNotification;
use mcp_proto::methods;
use mcp_server_io::logging::level_index;
use mcp_server_io::stateless::Change;
use mcp_server_io::{Handler as _, Session};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

use super::handler::Bridge;

/// Starts passing the served servers' notifications to the host; ends
/// when the registry's stream does (or when aborted).
pub(crate) fn start(registry: &Registry, session: Session<Bridge>) -> JoinHandle<()> {
    let mut events = registry.notifications();
    let mut health = registry.health_events();
    let served: HashSet<String> = session.handler().servers().iter().cloned().collect();
    // Whether each server is connected, as last heard.
    let mut connected: HashMap<String, bool> = served
        .iter()
        .map(|s| (s.clone(), registry.health(s).is_ok_and(|h| h.is_connected())))
        .collect();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Ok(event) if served.contains(&event.server) => relay(&session, event),
                    Ok(_) => {}
                    Err(RecvError::Lagged(n)) => {
                        tracing::warn!("{n} notifications of the servers were skipped (too many)");
                    }
                    Err(RecvError::Closed) => break,
                },
                event = health.recv() => match event {
                    Ok(HealthEvent { server, health, .. }) => {
                        let Some(was) = connected.get_mut(&server) else { continue };
                        let now = health.is_connected();
                        if now && !*was {
                            tracing::info!(%server, "connected: its lists may have changed");
                            lists_changed(&session);
                        }
                        *was = now;
                    }
                    // Missed changes: the lists may have changed.
                    Err(RecvError::Lagged(_)) => lists_changed(&session),
                    Err(RecvError::Closed) => break,
                },
            }
        }
    })
}

/// Tells the host that every list it was given may have changed.
fn lists_changed(session: &Session<Bridge>) {
    let declared = session.handler().capabilities(None);
    let tools_fixed = session.handler().tools_fixed();
    for (capability, change) in
        [("tools", Change::Tools), ("prompts", Change::Prompts), ("resources", Change::Resources)]
    {
        if declared.get(capability).is_some() && !(tools_fixed && change == Change::Tools) {
            changed(session, &change);
        }
    }
}

/// A list change, to the host in its era.
fn changed(session: &Session<Bridge>, change: &Change) {
    if session.negotiated_version().is_some() {
        session.notify(change.notification().0, None, None);
    }
    session.broadcast(change);
}

/// What one notification becomes for the host.
fn relay(session: &Session<Bridge>, event: NotificationEvent) {
    // Only a handshake-era host takes notifications outside a request;
    // a stateless-era one gets changes on the streams it opened.
    let handshake = session.negotiated_version().is_some();
    let change = match event.notification {
        // Search mode's two tools never change.
        ServerNotification::ToolListChanged if session.handler().tools_fixed() => return,
        ServerNotification::ToolListChanged => Change::Tools,
        ServerNotification::PromptListChanged => Change::Prompts,
        ServerNotification::ResourceListChanged => Change::Resources,
        ServerNotification::ResourceUpdated(p) => {
            if handshake {
                let params = serde_json::to_value(&p).ok();
                session.notify(methods::NOTIFICATION_RESOURCES_UPDATED, params, None);
            }
            session.broadcast(&Change::Updated(p.uri));
            return;
        }
        ServerNotification::LogMessage(m) => {
            let params = serde_json::to_value(&m).unwrap_or(Value::Null);
            let level = params.get("level").and_then(Value::as_str).and_then(level_index);
            if handshake && level.is_some_and(|l| session.log_level_enabled(l)) {
                session.notify(methods::NOTIFICATION_MESSAGE, Some(params), None);
            } else if !handshake {
                // A stateless-era host gets them with the call that asked
                // for them (the one running: a message says no call).
                let call = session.handler().link().rounds.logging_call();
                if let (Some((key, min)), Some(level)) = (call, level)
                    && level >= min
                {
                    session.notify(methods::NOTIFICATION_MESSAGE, Some(params), Some(&key));
                }
            }
            return;
        }
        ServerNotification::ElicitationComplete(p) => {
            if handshake {
                let params = serde_json::to_value(&p).ok();
                session.notify(methods::NOTIFICATION_ELICITATION_COMPLETE, params, None);
            }
            return;
        }
        _ => return,
    };
    changed(session, &change);
}
