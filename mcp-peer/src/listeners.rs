//! Where the notifications of each open `subscriptions/listen` stream go:
//! the driver hands them over by the stream's request id, the
//! [`Subscription`](crate::Subscription) reads them.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use mcp_proto::client::ServerNotification;
use mcp_proto::jsonrpc::{Notification, RequestId};
use mcp_proto::methods;
use tokio::sync::mpsc;

/// The open streams, by the request id of their `subscriptions/listen`.
pub(crate) type Listeners = std::sync::Mutex<HashMap<RequestId, Sender>>;

/// One subscription's end of its notifications.
#[derive(Clone)]
pub(crate) struct Sender {
    tx: mpsc::Sender<ServerNotification>,
    /// How many acknowledgments came: only the first (which `listen`
    /// reads) reaches the host; those of the streams opened again after a
    /// break are checked and dropped.
    acks: Arc<AtomicU32>,
}

impl Sender {
    pub(crate) fn new(tx: mpsc::Sender<ServerNotification>) -> Sender {
        Sender { tx, acks: Arc::default() }
    }

    /// Hands a notification to the subscription; a full buffer drops it
    /// (logged): the host is not reading.
    pub(crate) fn deliver(&self, notification: &Notification) {
        if notification.method == methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED
            && self.acks.fetch_add(1, Ordering::Relaxed) > 0
        {
            tracing::debug!("a subscription's stream was acknowledged again");
            return;
        }
        let typed = match ServerNotification::from_notification(notification) {
            Ok(typed) => typed,
            Err(e) => {
                tracing::warn!(error = %e, "a subscription notification of the wrong shape; passed on as it came");
                ServerNotification::Other(notification.clone())
            }
        };
        if let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send(typed) {
            tracing::warn!(
                method = %notification.method,
                "a subscription's buffer is full (the host is not reading it); dropping a notification"
            );
        }
    }
}
