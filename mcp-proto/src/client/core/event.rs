//! What the core hands the driver: [`Event`]s, the host-facing
//! [`ServerEvent`]s and the [`DriverWork`] left after delivery.

use std::fmt;

use serde_json::Value;
use serde_json::value::RawValue;

use super::ProgressCallback;
use crate::client::ClientError;
use crate::jsonrpc::{Notification, RequestId};
use crate::types::{LoggingMessageNotificationParams, ProgressNotificationParams};

/// Which cached list a `list_changed` notification invalidated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListKind {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/list_changed`.
    Resources,
}

/// A request from the server that the host's handlers must answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerRequest {
    /// The server's id for it; pass it back to
    /// [`ClientCore::respond`](super::ClientCore::respond).
    pub id: RequestId,
    /// `roots/list`, `sampling/createMessage` or `elicitation/create`.
    pub method: String,
    /// The request's parameters.
    pub params: Option<Value>,
}

/// Something the driver must act on.
pub enum Event<W> {
    /// A request finished: deliver `outcome` to `waiter`.
    Reply {
        /// The request's id.
        id: RequestId,
        /// What the driver attached to the request.
        waiter: W,
        /// The result as JSON text (decode it with
        /// [`ops::parse_result`](crate::client::ops::parse_result)), or why
        /// there is none.
        outcome: Result<Box<RawValue>, ClientError>,
    },
    /// A progress notification for a request that asked for progress.
    Progress {
        /// The request it belongs to.
        id: RequestId,
        /// The request's callback, if it has one.
        callback: Option<ProgressCallback>,
        /// The notification's parameters.
        params: ProgressNotificationParams,
    },
    /// The server asks the host something (see [`crate::client::Handlers`]).
    ServerRequest(ServerRequest),
    /// The server cancelled one of its requests: stop handling it (its
    /// answer will not be sent).
    ServerRequestCancelled {
        /// The server's id of the cancelled request.
        id: RequestId,
        /// The reason the server gave.
        reason: Option<String>,
    },
    /// A list the server offers has changed; the cached copy was dropped.
    ListChanged(ListKind),
    /// A log message from the server (also forwarded to `tracing`).
    Log(LoggingMessageNotificationParams),
    /// Any other notification (`resources/updated`, `elicitation/complete`, ...).
    Notification(Notification),
    /// A notification that belongs to a `subscriptions/listen` stream
    /// (2026-07-28: its `_meta` names the stream's request id). It is also
    /// delivered as the event its method makes (`ListChanged`, ...).
    Subscription {
        /// The id of the `subscriptions/listen` request.
        id: RequestId,
        /// The notification.
        notification: Notification,
    },
}

impl<W> fmt::Debug for Event<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Reply { id, outcome, .. } => {
                f.debug_struct("Reply").field("id", id).field("outcome", outcome).finish()
            }
            Event::Progress { id, params, .. } => {
                f.debug_struct("Progress").field("id", id).field("params", params).finish()
            }
            Event::ServerRequest(r) => f.debug_tuple("ServerRequest").field(r).finish(),
            Event::ServerRequestCancelled { id, reason } => f
                .debug_struct("ServerRequestCancelled")
                .field("id", id)
                .field("reason", reason)
                .finish(),
            Event::ListChanged(k) => f.debug_tuple("ListChanged").field(k).finish(),
            Event::Log(p) => f.debug_tuple("Log").field(p).finish(),
            Event::Notification(n) => f.debug_tuple("Notification").field(n).finish(),
            Event::Subscription { id, notification } => f
                .debug_struct("Subscription")
                .field("id", id)
                .field("notification", notification)
                .finish(),
        }
    }
}

/// What a host may want to hear of the server besides answers: the
/// notifications the core does not consume itself.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// A list the server offers has changed (caches were already dropped).
    ListChanged(ListKind),
    /// A log message (already forwarded to `tracing`).
    Log(LoggingMessageNotificationParams),
    /// Any other notification.
    Notification(Notification),
}

impl<W> Event<W> {
    /// The host-facing part of this event, for `ListChanged`, `Log` and
    /// `Notification`.
    pub fn server_event(&self) -> Option<ServerEvent> {
        match self {
            Event::ListChanged(k) => Some(ServerEvent::ListChanged(*k)),
            Event::Log(p) => Some(ServerEvent::Log(p.clone())),
            Event::Notification(n) => Some(ServerEvent::Notification(n.clone())),
            _ => None,
        }
    }

    /// Does, in one place for every driver, everything an event asks that
    /// needs no runtime: a reply goes to `reply` with its waiter, progress to
    /// the request's callback, list changes, logs and other notifications to
    /// `on_event`. What is left needs the driver's runtime (starting or
    /// stopping the task that answers a server request) and comes back as
    /// [`DriverWork`].
    ///
    /// Call it outside any lock: the callbacks are the host's code.
    pub fn deliver(
        self,
        on_event: Option<&EventCallback>,
        reply: impl FnOnce(W, Result<Box<RawValue>, ClientError>),
    ) -> Option<DriverWork> {
        if let Some(server_event) = self.server_event() {
            if let Some(cb) = on_event {
                cb(&server_event);
            }
            return None;
        }
        match self {
            Event::Reply { waiter, outcome, .. } => {
                reply(waiter, outcome);
                None
            }
            Event::Progress { callback, params, .. } => {
                if let Some(cb) = callback {
                    cb(&params);
                }
                None
            }
            Event::ServerRequest(request) => Some(DriverWork::AnswerServerRequest(request)),
            Event::ServerRequestCancelled { id, .. } => Some(DriverWork::StopServerRequest(id)),
            Event::Subscription { id, notification } => {
                Some(DriverWork::Subscription { id, notification })
            }
            Event::ListChanged(_) | Event::Log(_) | Event::Notification(_) => None,
        }
    }
}

/// What [`Event::deliver`] leaves to the driver.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum DriverWork {
    /// Run [`Handlers::handle`](crate::client::Handlers::handle) for it (as a
    /// task that can be aborted) and pass the outcome to
    /// [`ClientCore::respond`](super::ClientCore::respond).
    AnswerServerRequest(ServerRequest),
    /// The server cancelled this request: abort its task.
    StopServerRequest(RequestId),
    /// Hand this notification to the `subscriptions/listen` stream `id`.
    Subscription {
        /// The id of the `subscriptions/listen` request.
        id: RequestId,
        /// The notification.
        notification: Notification,
    },
}

/// A callback that hears [`ServerEvent`]s.
pub type EventCallback = std::sync::Arc<dyn Fn(&ServerEvent) + Send + Sync>;
