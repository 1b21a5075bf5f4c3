//! What a connection's server says without being asked: each connection's
//! notifications relayed to the registry's one stream
//! ([`Registry::notifications`](crate::Registry::notifications)), tagged
//! with the server, and in the stateless era the `subscriptions/listen`
//! stream that carries the resources subscribed through the registry.
//! Both end with the connection (the [`Relay`] is cached beside it).

use std::sync::Mutex;
use std::time::Duration;

use mcp_peer::{Notifications, Subscription};
use mcp_proto::client::ServerNotification;
use tokio::sync::{broadcast, oneshot};
use tokio::task::{AbortHandle, JoinHandle};

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
    listen: Mutex<Option<Listen>>,
}

/// The task that keeps a listen stream read, and the switch that makes it
/// end the stream.
#[derive(Debug)]
pub(crate) struct Listen {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

/// How long ending a replaced listen stream is waited for.
const LISTEN_END: Duration = Duration::from_secs(5);

impl Listen {
    /// Ends the stream and waits (within a bound) until the server has
    /// been told.
    pub(crate) async fn end(self) {
        let _ = self.stop.send(());
        let task = self.task;
        let abort = task.abort_handle();
        if tokio::time::timeout(LISTEN_END, task).await.is_err() {
            abort.abort();
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
        if let Some(listen) = self.listen.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            listen.task.abort();
        }
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
    /// place of the one kept before, which is returned for the caller to
    /// [`end`](Listen::end); `None` keeps none.
    #[must_use = "the replaced stream must be ended"]
    pub(crate) fn set_listen(
        &self,
        subscription: Option<(String, Subscription)>,
    ) -> Option<Listen> {
        let listen = subscription.and_then(|(server, mut subscription)| {
            let runtime = tokio::runtime::Handle::try_current().ok()?;
            let (stop, mut stopped) = oneshot::channel::<()>();
            let task = runtime.spawn(async move {
                loop {
                    tokio::select! {
                        biased;
                        _ = &mut stopped => {
                            subscription.end().await;
                            return;
                        }
                        // Read so that its buffer never fills; what it
                        // carries is also on the client's notification
                        // stream.
                        next = subscription.recv() => if next.is_none() { break },
                    }
                }
                if let Some(reason) = subscription.end_reason() {
                    tracing::warn!(%server, "the subscriptions/listen stream ended: {reason}");
                }
            });
            Some(Listen { stop, task })
        });
        std::mem::replace(&mut *self.listen.lock().unwrap_or_else(|e| e.into_inner()), listen)
    }
}
