//! `subscriptions/listen` (2026-07-28): a long-lived stream of the change
//! notifications the client opts in to.

use std::sync::Arc;
use std::time::Duration;

use mcp_proto::backoff::{Backoff, Retries};
use mcp_proto::client::{ClientError, RequestOptions, ServerNotification};
use mcp_proto::jsonrpc::Notification;
use mcp_proto::methods;
use mcp_proto::types::{SubscriptionFilter, SubscriptionsListenRequestParams};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::client::Client;
use crate::listeners::Sender;
use crate::send::{Fail, Params, Start};
use crate::sync::lock;
use crate::transport::{Transport, TransportError};

/// How many notifications a [`Subscription`] holds for a host that does
/// not read them; beyond that the newest are dropped (and logged).
pub const SUBSCRIPTION_BUFFER: usize = 256;

/// How many times a broken stream is opened again before the
/// subscription ends.
pub const MAX_RELISTENS: u32 = 5;

/// The waits before opening a broken stream again: 200 ms doubling (full
/// jitter), at most 10 s.
const RELISTEN_BACKOFF: Backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(10));

/// A listen request waits this long for its end: as long as the stream
/// stays open (ten years: no deadline in practice, and no overflow).
const LISTEN_DEADLINE: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

/// An open `subscriptions/listen` stream ([`Client::listen`]).
///
/// [`recv`](Self::recv) gives the notifications the server sends on it (its
/// acknowledgment is read by `listen` itself), typed. Dropping it, or
/// [`close`](Self::close), ends the subscription: the client closes the
/// stream (Streamable HTTP) and sends `notifications/cancelled`.
///
/// A stream that breaks (a connection lost, a server process restarted) is
/// opened again, up to [`MAX_RELISTENS`] times in a row with a growing,
/// jittered pause ([`mcp_proto::backoff`]); as notifications may have been
/// lost meanwhile, each list the subscription listens to is then reported
/// changed once (the host re-lists). The subscription ends (`recv` gives `None`) when the server
/// ends it, when it cannot be opened again, or when the client closes.
#[derive(Debug)]
pub struct Subscription {
    rx: mpsc::Receiver<ServerNotification>,
    granted: SubscriptionFilter,
    requested: SubscriptionFilter,
    /// Its task (`None` once [`end`](Self::end) took it).
    task: Option<JoinHandle<()>>,
    ended: Arc<std::sync::Mutex<Option<String>>>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl Subscription {
    /// The next notification, or `None` once the subscription ended.
    pub async fn recv(&mut self) -> Option<ServerNotification> {
        self.rx.recv().await
    }

    /// What the server agreed to send (its acknowledgment's filter).
    pub fn granted(&self) -> &SubscriptionFilter {
        &self.granted
    }

    /// What was asked for.
    pub fn requested(&self) -> &SubscriptionFilter {
        &self.requested
    }

    /// The kinds asked for that the server did not grant (empty when it
    /// granted everything): `toolsListChanged`, `promptsListChanged`,
    /// `resourcesListChanged`, and each resource URI.
    pub fn refused(&self) -> Vec<String> {
        refused(&self.requested, &self.granted)
    }

    /// Why the subscription ended, once it did (`None` while it is open or
    /// when the host closed it).
    pub fn end_reason(&self) -> Option<String> {
        lock(&self.ended).clone()
    }

    /// Ends the subscription.
    pub fn close(self) {}

    /// Ends the subscription and waits until it has: when this returns the
    /// stream is closed (Streamable HTTP) or its `notifications/cancelled`
    /// is queued ahead of any later request (stdio), so the server has
    /// been told before anything sent after. Dropping or
    /// [`close`](Self::close) tell it soon after instead.
    pub async fn end(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

fn refused(requested: &SubscriptionFilter, granted: &SubscriptionFilter) -> Vec<String> {
    let mut out = Vec::new();
    for (name, asked, got) in [
        ("toolsListChanged", requested.tools_list_changed, granted.tools_list_changed),
        ("promptsListChanged", requested.prompts_list_changed, granted.prompts_list_changed),
        ("resourcesListChanged", requested.resources_list_changed, granted.resources_list_changed),
    ] {
        if asked == Some(true) && got != Some(true) {
            out.push(name.to_owned());
        }
    }
    let granted_uris = granted.resource_subscriptions.as_deref().unwrap_or_default();
    for uri in requested.resource_subscriptions.iter().flatten() {
        if !granted_uris.contains(uri) {
            out.push(uri.clone());
        }
    }
    out
}

/// How one listen exchange ended.
enum Ended {
    /// The server answered the request: a graceful end.
    Graceful,
    /// The server ended it (stdio: `notifications/cancelled`), or the
    /// client closed: no reopening.
    Final(String),
    /// The stream broke: open it again.
    Broken(String),
}

impl<T: Transport> Client<T> {
    /// Opens a `subscriptions/listen` stream (2026-07-28) for the
    /// notifications `filter` opts in to, and waits for the server's
    /// acknowledgment (under the request timeout). Several may be open at
    /// once; each gets only its own notifications (they are also on
    /// [`notifications`](Self::notifications)).
    ///
    /// In the handshake era this is `ClientError::NotInEra`: use the
    /// standalone stream and `subscribe_resource` there.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, T::Error> {
        let transport = &self.inner.transport;
        self.initialize().await?;
        let method = methods::SUBSCRIPTIONS_LISTEN;
        if let Some(version) = self.protocol_version()
            && !self.inner.rules().is_some_and(|rules| rules.has_request(method))
        {
            let e = ClientError::NotInEra { method: method.into(), version };
            return Err(transport.client_error(e));
        }
        let (tx, mut rx) = mpsc::channel(SUBSCRIPTION_BUFFER);
        let (opened_tx, opened_rx) = oneshot::channel::<Result<(), T::Error>>();
        let ended = Arc::new(std::sync::Mutex::new(None));
        let me = self.clone();
        let requested = filter.clone();
        let end_slot = ended.clone();
        let task = tokio::spawn(async move {
            me.run_listen(filter, Sender::new(tx), opened_tx, end_slot).await;
        });
        let timeout = self.inner.options.request_timeout;
        let acknowledged = async {
            match opened_rx.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    let e = ClientError::Closed { method: methods::SUBSCRIPTIONS_LISTEN.into() };
                    return Err(transport.client_error(e));
                }
            }
            loop {
                match rx.recv().await {
                    Some(ServerNotification::SubscriptionsAcknowledged(ack)) => {
                        return Ok(ack.notifications.unwrap_or_default());
                    }
                    Some(other) => tracing::warn!(
                        server = %self.name(),
                        method = other.method(),
                        "a subscription notification before the acknowledgment; dropped"
                    ),
                    None => {
                        let reason = lock(&ended).clone().unwrap_or_default();
                        let e = ClientError::InvalidResult {
                            method: methods::SUBSCRIPTIONS_LISTEN.into(),
                            reason: format!("the stream ended before its acknowledgment: {reason}"),
                        };
                        return Err(transport.client_error(e));
                    }
                }
            }
        };
        let granted = match tokio::time::timeout(timeout, acknowledged).await {
            Ok(Ok(granted)) => granted,
            Ok(Err(e)) => {
                task.abort();
                return Err(e);
            }
            Err(_) => {
                task.abort();
                let e = ClientError::Timeout {
                    method: methods::SUBSCRIPTIONS_LISTEN.into(),
                    after: timeout,
                };
                return Err(transport.client_error(e));
            }
        };
        let refused = refused(&requested, &granted);
        if !refused.is_empty() {
            tracing::info!(server = %self.name(), ?refused, "the server does not send every notification the subscription asked for");
        }
        Ok(Subscription { rx, granted, requested, task: Some(task), ended })
    }

    /// The subscription's task: opens the stream, and again after breaks.
    async fn run_listen(
        &self,
        filter: SubscriptionFilter,
        sender: Sender,
        opened: oneshot::Sender<Result<(), T::Error>>,
        ended: Arc<std::sync::Mutex<Option<String>>>,
    ) {
        let mut opened = Some(opened);
        let mut retries = Retries::new(RELISTEN_BACKOFF, Some(MAX_RELISTENS));
        let mut pause = None;
        let reason = loop {
            if let Some(pause) = pause.take() {
                tokio::time::sleep(pause).await;
                if let Err(e) = self.initialize().await {
                    break format!("the connection could not be opened again: {e}");
                }
            }
            let acknowledged = sender.acknowledgments();
            let end = self.listen_once(&filter, &sender, &mut opened).await;
            if sender.acknowledgments() > acknowledged {
                // This stream was open (the server acknowledged it): a
                // break after it starts a new count of breaks in a row.
                retries.succeeded();
            }
            match end {
                Ended::Graceful => break "the server ended the subscription".to_owned(),
                Ended::Final(reason) => break reason,
                Ended::Broken(reason) if opened.is_some() => break reason,
                Ended::Broken(reason) => {
                    let Some(wait) = retries.next(None) else {
                        let breaks = retries.failures() + 1;
                        break format!("the stream broke {breaks} times in a row; last: {reason}");
                    };
                    pause = Some(wait);
                    tracing::info!(server = %self.name(), %reason, attempt = retries.attempts(), "a subscription's stream broke; listening again");
                    // Whatever changed meanwhile is unknown: each list
                    // listened to is reported changed.
                    for (wanted, method) in [
                        (filter.tools_list_changed, methods::NOTIFICATION_TOOLS_LIST_CHANGED),
                        (filter.prompts_list_changed, methods::NOTIFICATION_PROMPTS_LIST_CHANGED),
                        (
                            filter.resources_list_changed,
                            methods::NOTIFICATION_RESOURCES_LIST_CHANGED,
                        ),
                    ] {
                        if wanted == Some(true) {
                            sender.deliver(&Notification::new(method, None));
                        }
                    }
                }
            }
        };
        tracing::debug!(server = %self.name(), %reason, "a subscription ended");
        *lock(&ended) = Some(reason);
        if let Some(opened) = opened.take() {
            let e = ClientError::Closed { method: methods::SUBSCRIPTIONS_LISTEN.into() };
            let _ = opened.send(Err(self.inner.transport.client_error(e)));
        }
    }

    /// One `subscriptions/listen` exchange, until it ends.
    async fn listen_once(
        &self,
        filter: &SubscriptionFilter,
        sender: &Sender,
        opened: &mut Option<oneshot::Sender<Result<(), T::Error>>>,
    ) -> Ended {
        let inner = &self.inner;
        let params = SubscriptionsListenRequestParams {
            notifications: filter.clone(),
            ..Default::default()
        };
        let params = match serde_json::to_value(&params) {
            Ok(v) => v,
            Err(e) => return Ended::Final(format!("the filter could not be encoded: {e}")),
        };
        let options = RequestOptions::with_timeout(LISTEN_DEADLINE);
        let start: Start<'_, ()> = Start::Request {
            method: methods::SUBSCRIPTIONS_LISTEN,
            params: Params::Value(Some(params)),
            options: &options,
            tool_result: false,
        };
        let mut sent = None;
        // Registered before the request leaves: the acknowledgment cannot
        // arrive before its listener.
        let (outcome, _) = inner
            .send(start, None, |id| {
                lock(&inner.listeners).insert(id.clone(), sender.clone());
                sent = Some(id.clone());
                if let Some(opened) = opened.take() {
                    let _ = opened.send(Ok(()));
                }
            })
            .await;
        let Some(id) = sent else {
            // It never left.
            return match outcome {
                Err(Fail::Client(e)) => self.failed(opened, e),
                Err(Fail::Transport(e)) => {
                    Ended::Final(format!("the request could not be sent: {e}"))
                }
                Ok(_) => Ended::Graceful,
            };
        };
        lock(&inner.listeners).remove(&id);
        match outcome {
            Ok(_) => Ended::Graceful,
            Err(Fail::Client(ClientError::Cancelled { .. })) => {
                Ended::Final("the server cancelled the subscription".into())
            }
            // The connection went: listen again.
            Err(Fail::Client(
                e @ (ClientError::Closed { .. } | ClientError::ConnectionLost { .. }),
            )) => Ended::Broken(e.to_string()),
            // The server refused the request: no point asking again.
            Err(Fail::Client(e)) => Ended::Final(e.to_string()),
            Err(Fail::Transport(e)) if e.is_refusal() || e.protocol_error().is_some() => {
                Ended::Final(e.to_string())
            }
            Err(Fail::Transport(e)) => Ended::Broken(e.to_string()),
        }
    }

    fn failed(
        &self,
        opened: &mut Option<oneshot::Sender<Result<(), T::Error>>>,
        e: ClientError,
    ) -> Ended {
        let reason = e.to_string();
        if let Some(opened) = opened.take() {
            let _ = opened.send(Err(self.inner.transport.client_error(e)));
            return Ended::Final(reason);
        }
        Ended::Broken(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_name_what_was_not_granted() {
        let requested = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            resource_subscriptions: Some(vec!["a://1".into(), "a://2".into()]),
            ..Default::default()
        };
        let granted = SubscriptionFilter {
            tools_list_changed: Some(true),
            resource_subscriptions: Some(vec!["a://2".into()]),
            ..Default::default()
        };
        assert_eq!(refused(&requested, &granted), ["promptsListChanged", "a://1"]);
        assert!(refused(&requested, &requested).is_empty());
    }
}
