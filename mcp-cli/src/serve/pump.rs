//! The notifications pump: what the upstream servers say without being
//! asked (list changes, resource updates, log messages), read from the
//! registry's one stream and passed to the host: as notifications to a
//! handshake-era host, and to the `subscriptions/listen` streams a
//! stateless-era host opened; list changes to every host session, a log
//! message only to the session whose call it belongs to ([`Hosts::asked`]).
//! Progress is not here: each call relays its own. A server that comes back (restarted, reconnected, or up for the
//! first time after the bridge started) may list other things: the host
//! is told its lists changed.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use mcp_host_registry::{HealthEvent, NotificationEvent, Registry};
use mcp_proto::client::ServerNotification;
use mcp_proto::methods;
use mcp_proto::types::ResourceUpdatedNotificationParams;
use mcp_server_io::logging::level_index;
use mcp_server_io::stateless::Change;
use mcp_server_io::{Handler as _, Session};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

use super::handler::Bridge;
use super::host::{HostLink, Hosts};

/// Starts passing the notifications of the servers `served` to the hosts;
/// ends when the registry's stream does (or when aborted).
pub(crate) fn start(registry: &Registry, hosts: Arc<Hosts>, served: &[String]) -> JoinHandle<()> {
    let mut events = registry.notifications();
    let mut health = registry.health_events();
    let served: HashSet<String> = served.iter().cloned().collect();
    // Whether each server is connected, as last heard.
    let mut connected: HashMap<String, bool> = served
        .iter()
        .map(|s| (s.clone(), registry.health(s).is_ok_and(|h| h.is_connected())))
        .collect();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Ok(event) if served.contains(&event.server) => relay(&hosts, event),
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
                            lists_changed(&hosts);
                        }
                        *was = now;
                    }
                    // Missed changes: the lists may have changed.
                    Err(RecvError::Lagged(_)) => lists_changed(&hosts),
                    Err(RecvError::Closed) => break,
                },
            }
        }
    })
}

/// The hosts' sessions connected now.
fn sessions(hosts: &Hosts) -> impl Iterator<Item = Session<Bridge>> {
    hosts.links().into_iter().filter_map(|link| link.session())
}

/// Tells the hosts that every list they were given may have changed
/// (search mode's two tools never change).
fn lists_changed(hosts: &Hosts) {
    for session in sessions(hosts) {
        let declared = session.handler().capabilities(None);
        let tools_fixed = session.handler().tools_fixed();
        for (capability, change) in [
            ("tools", Change::Tools),
            ("prompts", Change::Prompts),
            ("resources", Change::Resources),
        ] {
            if declared.get(capability).is_some() && !(tools_fixed && change == Change::Tools) {
                changed(&session, &change);
            }
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

/// What one notification becomes for the hosts.
fn relay(hosts: &Hosts, event: NotificationEvent) {
    let change = match event.notification {
        ServerNotification::LogMessage(m) => {
            // Only to the host session whose call it belongs to.
            match hosts.log_target() {
                Ok(link) => log(&link, serde_json::to_value(&m).unwrap_or(Value::Null)),
                Err(why) => tracing::debug!("a log message is not passed on: {why}"),
            }
            return;
        }
        ServerNotification::ToolListChanged => Change::Tools,
        ServerNotification::PromptListChanged => Change::Prompts,
        ServerNotification::ResourceListChanged => Change::Resources,
        ServerNotification::ResourceUpdated(p) => {
            for session in sessions(hosts) {
                updated(&session, &p);
            }
            return;
        }
        ServerNotification::ElicitationComplete(p) => {
            // The elicitation was asked of one host session: the one the
            // server's requests go to.
            let session = hosts.asked().ok().and_then(|link| link.session());
            if let Some(session) = session.filter(|s| s.negotiated_version().is_some()) {
                let params = serde_json::to_value(&p).ok();
                session.notify(methods::NOTIFICATION_ELICITATION_COMPLETE, params, None);
            }
            return;
        }
        _ => return,
    };
    for session in sessions(hosts) {
        // Search mode's two tools never change.
        if !(change == Change::Tools && session.handler().tools_fixed()) {
            changed(&session, &change);
        }
    }
}

/// A log message, to the host of `link` in its era.
fn log(link: &HostLink, params: Value) {
    let Some(session) = link.session() else { return };
    let level = params.get("level").and_then(Value::as_str).and_then(level_index);
    if session.negotiated_version().is_some() {
        if level.is_some_and(|l| session.log_level_enabled(l)) {
            // With the call running, when one is (over HTTP: on its
            // stream); else outside any request.
            session.notify(methods::NOTIFICATION_MESSAGE, Some(params), link.related().as_ref());
        }
    } else {
        // A stateless-era host gets them with the call that asked for
        // them (the one running: a message says no call).
        if let (Some((key, min)), Some(level)) = (link.rounds.logging_call(), level)
            && level >= min
        {
            session.notify(methods::NOTIFICATION_MESSAGE, Some(params), Some(&key));
        }
    }
}

/// A resource update, to one host session.
fn updated(session: &Session<Bridge>, params: &ResourceUpdatedNotificationParams) {
    // Only a handshake-era host takes notifications outside a request;
    // a stateless-era one gets changes on the streams it opened.
    if session.negotiated_version().is_some() {
        let value = serde_json::to_value(params).ok();
        session.notify(methods::NOTIFICATION_RESOURCES_UPDATED, value, None);
    }
    session.broadcast(&Change::Updated(params.uri.clone()));
}
