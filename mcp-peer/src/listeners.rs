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

use crate::DropReport;

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
    /// Notifications dropped on a full buffer, and notifications of the
    /// wrong shape: reported once per interval, not one line each.
    full: Arc<DropReport>,
    misshapen: Arc<DropReport>,
}

impl Sender {
    pub(crate) fn new(tx: mpsc::Sender<ServerNotification>) -> Sender {
        Sender { tx, acks: Arc::default(), full: Arc::default(), misshapen: Arc::default() }
    }

    /// How many acknowledgments came, on the first stream and those opened
    /// again after breaks.
    pub(crate) fn acknowledgments(&self) -> u32 {
        self.acks.load(Ordering::Relaxed)
    }

    /// Hands a notification to the subscription; a full buffer drops it
    /// (the host is not reading), counted in one warning per second.
    pub(crate) fn deliver(&self, notification: &Notification) {
        if notification.method == methods::NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED
            && self.acks.fetch_add(1, Ordering::Relaxed) > 0
        {
            tracing::debug!("a subscription's stream was acknowledged again");
            return;
        }
        let now = crate::sync::now();
        let typed = match ServerNotification::from_notification(notification) {
            Ok(typed) => typed,
            Err(e) => {
                if let Some(count) = self.misshapen.dropped(1, now) {
                    tracing::warn!(error = %e, count, "subscription notifications of the wrong shape; passed on as they came");
                }
                ServerNotification::Other(notification.clone())
            }
        };
        let full = matches!(self.tx.try_send(typed), Err(mpsc::error::TrySendError::Full(_)));
        if let Some(dropped) = self.full.dropped(u64::from(full), now) {
            tracing::warn!(
                method = %notification.method,
                dropped,
                "a subscription's buffer is full (the host is not reading it); notifications dropped"
            );
        }
    }
}
