//! Typed server notifications.
//!
//! [`ServerNotification::from_notification`] turns a JSON-RPC
//! [`Notification`] from a server into one variant per method the client
//! understands. A method it does not know stays a
//! [`ServerNotification::Other`], so a newer server never causes an error;
//! a known method whose parameters do not have the method's shape is an
//! [`InvalidNotification`] naming the method.

use std::fmt;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::jsonrpc::Notification;
use crate::methods;
use crate::types::{
    CancelledNotificationParams, ElicitationCompleteNotificationParams,
    LoggingMessageNotificationParams, NotificationParams, ProgressNotificationParams,
    ResourceUpdatedNotificationParams, SubscriptionsAcknowledgedNotificationParams,
    TaskStatusNotificationParams,
};

/// A notification a server sends to a client, decoded by method.
///
/// ```
/// use mcp_proto::Notification;
/// use mcp_proto::client::ServerNotification;
/// use serde_json::json;
///
/// let n = Notification::new(
///     "notifications/progress",
///     Some(json!({"progressToken": "call-1", "progress": 50, "total": 100})),
/// );
/// match ServerNotification::from_notification(&n).unwrap() {
///     ServerNotification::Progress(p) => assert_eq!((p.progress, p.total), (50.0, Some(100.0))),
///     other => panic!("{other:?}"),
/// }
///
/// let n = Notification::new("notifications/something_new", None);
/// let typed = ServerNotification::from_notification(&n).unwrap();
/// assert!(matches!(typed, ServerNotification::Other(_)));
/// assert_eq!(typed.method(), "notifications/something_new");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/progress`: a request made by the client progressed.
    Progress(ProgressNotificationParams),
    /// `notifications/message`: a log message.
    LogMessage(LoggingMessageNotificationParams),
    /// `notifications/resources/updated`: a subscribed resource changed.
    ResourceUpdated(ResourceUpdatedNotificationParams),
    /// `notifications/tools/list_changed`.
    ToolListChanged,
    /// `notifications/prompts/list_changed`.
    PromptListChanged,
    /// `notifications/resources/list_changed`.
    ResourceListChanged,
    /// `notifications/cancelled`: the server cancels a request it made.
    Cancelled(CancelledNotificationParams),
    /// `notifications/tasks/status` (experimental): a task's status changed.
    /// The parameters are the task, with the notification's `_meta`.
    TaskStatus(TaskStatusNotificationParams),
    /// `notifications/elicitation/complete`: a URL-mode elicitation
    /// finished.
    ElicitationComplete(ElicitationCompleteNotificationParams),
    /// `notifications/subscriptions/acknowledged` (2026-07-28): the server
    /// opened a `subscriptions/listen` stream and says what it will send.
    SubscriptionsAcknowledged(SubscriptionsAcknowledgedNotificationParams),
    /// A method this crate does not know, kept as it came.
    Other(Notification),
}

impl ServerNotification {
    /// Decodes `notification` by its method.
    ///
    /// Absent parameters read as `{}`: a `list_changed` notification needs
    /// none, and a method with required members reports the first one
    /// missing. The `_meta` of a `list_changed` notification is not kept.
    pub fn from_notification(
        notification: &Notification,
    ) -> Result<ServerNotification, InvalidNotification> {
        let method = notification.method.as_str();
        let params = notification.params.as_ref();
        Ok(match method {
            methods::NOTIFICATION_PROGRESS => ServerNotification::Progress(decode(method, params)?),
            methods::NOTIFICATION_MESSAGE => {
                ServerNotification::LogMessage(decode(method, params)?)
            }
            methods::NOTIFICATION_RESOURCES_UPDATED => {
                ServerNotification::ResourceUpdated(decode(method, params)?)
            }
            methods::NOTIFICATION_TOOLS_LIST_CHANGED => {
                decode::<NotificationParams>(method, params)?;
                ServerNotification::ToolListChanged
            }
            methods::NOTIFICATION_PROMPTS_LIST_CHANGED => {
                decode::<NotificationParams>(method, params)?;
                ServerNotification::PromptListChanged
            }
            methods::NOTIFICATION_RESOURCES_LIST_CHANGED => {
                decode::<NotificationParams>(method, params)?;
                ServerNotification::ResourceListChanged
            }
            methods::NOTIFICATION_CANCELLED => {
                ServerNotification::Cancelled(decode(method, params)?)
            }
            methods::NOTIFICATION_TASKS_STATUS => {
                ServerNotification::TaskStatus(decode(method, params)?)
            }
            methods::NOTIFICATION_ELICITATION_COMPLETE => {
                ServerNotification::ElicitationComplete(decode(method, params)?)
            }
            methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED => {
                ServerNotification::SubscriptionsAcknowledged(decode(method, params)?)
            }
            _ => ServerNotification::Other(notification.clone()),
        })
    }

    /// The notification's method name.
    pub fn method(&self) -> &str {
        match self {
            ServerNotification::Progress(_) => methods::NOTIFICATION_PROGRESS,
            ServerNotification::LogMessage(_) => methods::NOTIFICATION_MESSAGE,
            ServerNotification::ResourceUpdated(_) => methods::NOTIFICATION_RESOURCES_UPDATED,
            ServerNotification::ToolListChanged => methods::NOTIFICATION_TOOLS_LIST_CHANGED,
            ServerNotification::PromptListChanged => methods::NOTIFICATION_PROMPTS_LIST_CHANGED,
            ServerNotification::ResourceListChanged => methods::NOTIFICATION_RESOURCES_LIST_CHANGED,
            ServerNotification::Cancelled(_) => methods::NOTIFICATION_CANCELLED,
            ServerNotification::TaskStatus(_) => methods::NOTIFICATION_TASKS_STATUS,
            ServerNotification::SubscriptionsAcknowledged(_) => {
                methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED
            }
            ServerNotification::ElicitationComplete(_) => {
                methods::NOTIFICATION_ELICITATION_COMPLETE
            }
            ServerNotification::Other(notification) => &notification.method,
        }
    }
}

impl TryFrom<&Notification> for ServerNotification {
    type Error = InvalidNotification;

    fn try_from(notification: &Notification) -> Result<Self, Self::Error> {
        ServerNotification::from_notification(notification)
    }
}

/// Decodes `params` (`{}` when absent) as the parameters of `method`.
fn decode<T: DeserializeOwned>(
    method: &str,
    params: Option<&Value>,
) -> Result<T, InvalidNotification> {
    let result = match params {
        Some(params) => T::deserialize(params),
        None => T::deserialize(&Value::Object(Default::default())),
    };
    result.map_err(|e| InvalidNotification { method: method.to_owned(), reason: e.to_string() })
}

/// A notification of a known method whose parameters do not have the
/// method's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct InvalidNotification {
    /// The method, such as `notifications/progress`.
    pub method: String,
    /// What was wrong with the parameters.
    pub reason: String,
}

impl fmt::Display for InvalidNotification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} has invalid parameters: {}", self.method, self.reason)
    }
}

impl std::error::Error for InvalidNotification {}
