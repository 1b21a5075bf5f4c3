//! What a connection's server says without being asked: each connection's
//! notifications relayed to the registry's one stream
//! ([`Registry::notifications`](crate::Registry::notifications)), tagged
//! with the server, and in the stateless era the `subscriptions/listen`
//! stream that carries the resources subscribed through the registry.
//! Both end with the connection (the [`Relay`] is cached beside it).

use std::sync::Mutex;

use mcp_peer::{Notifications, Subscription};
use mcp_proto::client::ServerNotification;
use tokio::sync::broadcast;
use tokio::task::AbortHandle;

/// How many notifications a slow
/// [`Registry::notifications`](crate::Registry::notifications) subscriber
/// may fall behind before it skips the oldest.
pub(crate) const NOTIFICATION_EVENTS: usize = 256;

/// One notification of one server, as
/// [`Registry::notifications`](crate::Registry::notifications) delivers it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct NotificationEvent {
    /// The server's name.
    pub server: String,
    /// What it sent.
    pub notification: ServerNotification,
}

/// The tasks of one connection: the relay of its notifications and, in
/// the stateless era, the open `subscriptions/listen` stream. Dropped with
/// the connection's cache entry, it stops both (and so closes the stream).
#[derive(Debug)]
pub(crate) struct Relay {
    task: Option<AbortHandle>,
    listen: Mutex<Option<AbortHandle>>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
        self.set_listen(None);
    }
}

impl Relay {
    /// Relays `notifications` of `server` to `out` (when anyone listens
    /// there). Must run inside a Tokio runtime to relay; outside one,
    /// nothing is relayed.
    pub(crate) fn start(
        server: &str,
        mut notifications: Notifications,
        out: broadcast::Sender<NotificationEvent>,
    ) -> Relay {
        let server = server.to_owned();
        let task = tokio::runtime::Handle::try_current().ok().map(|runtime| {
            runtime
                .spawn(async move {
                    while let Some(notification) = notifications.recv().await {
                        if out.receiver_count() > 0 {
                            let event = NotificationEvent { server: server.clone(), notification };
                            let _ = out.send(event);
                        }
                    }
                })
                .abort_handle()
        });
        Relay { task, listen: Mutex::new(None) }
    }

    /// Keeps `subscription` open for as long as the connection lives (its
    /// notifications reach the relay through the client's own stream), in
    /// place of the one kept before; `None` closes the one kept.
    pub(crate) fn set_listen(&self, subscription: Option<(String, Subscription)>) {
        let task = subscription.and_then(|(server, mut subscription)| {
            let runtime = tokio::runtime::Handle::try_current().ok()?;
            let task = runtime.spawn(async move {
                // Read so that its buffer never fills; what it carries is
                // also on the client's notification stream.
                while subscription.recv().await.is_some() {}
                if let Some(reason) = subscription.end_reason() {
                    tracing::warn!(%server, "the subscriptions/listen stream ended: {reason}");
                }
            });
            Some(task.abort_handle())
        });
        let old =
            std::mem::replace(&mut *self.listen.lock().unwrap_or_else(|e| e.into_inner()), task);
        if let Some(old) = old {
            old.abort();
        }
    }
}
