//! The one client: its public face (construction, the connection's
//! state, notifications, closing). Requests are in `request` and `api`,
//! the opening of the conversation in `open`, the machinery in `driver`.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::ProtocolVersion;
use mcp_proto::client::ClientError;
use mcp_proto::jsonrpc::Notification;
use mcp_proto::types::InitializeResult;
use tokio::sync::broadcast;

use crate::inner::Inner;
use crate::options::ClientOptions;
use crate::sync::lock;
use crate::transport::Transport;

/// How many notifications a slow [`notifications`](Client::notifications)
/// subscriber may fall behind before it skips the oldest.
const NOTIFICATION_BUFFER: usize = 256;

/// How long [`Client::close`] waits for what the core queued to be sent.
const CLOSE_FLUSH_WAIT: Duration = Duration::from_secs(2);

/// A client of one MCP server, over any [`Transport`].
///
/// It owns the protocol core (ids, the handshake, deadlines, routing) and
/// everything that drives it: the handshake runs once before the first
/// request (concurrent callers share it), every request waits under its
/// deadline and sends `notifications/cancelled` when it expires or when its
/// future is dropped, the server's requests (roots, sampling, elicitation)
/// go to the host's handlers as tasks, and notifications reach the
/// [`on_event`](ClientOptions::on_event) callback and the
/// [`notifications`](Self::notifications) streams.
///
/// Cheap to clone: clones share the connection. Dropping the last clone
/// drops the transport (which ends its connection); [`close`](Self::close)
/// ends it gracefully.
///
/// Must be used within a Tokio runtime.
pub struct Client<T: Transport> {
    pub(crate) inner: Arc<Inner<T>>,
}

impl<T: Transport> Clone for Client<T> {
    fn clone(&self) -> Self {
        Client { inner: self.inner.clone() }
    }
}

impl<T: Transport + fmt::Debug> fmt::Debug for Client<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.inner.options.name)
            .field("transport", &self.inner.transport)
            .field("protocol_version", &self.protocol_version())
            .finish_non_exhaustive()
    }
}

impl<T: Transport> Client<T> {
    /// A client over `transport`. Nothing is sent yet: the handshake runs
    /// before the first request, or with [`initialize`](Self::initialize).
    pub fn new(transport: T, options: ClientOptions) -> Client<T> {
        Client { inner: Inner::new(transport, options) }
    }

    /// The transport (to reach what only its kind offers).
    pub fn transport(&self) -> &T {
        &self.inner.transport
    }

    /// The server's name (from the options), as logs and errors show it.
    pub fn name(&self) -> &str {
        &self.inner.options.name
    }

    /// The options the client was made with.
    pub fn options(&self) -> &ClientOptions {
        &self.inner.options
    }

    /// The negotiated protocol version, once initialized.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        lock(&self.inner.core).protocol_version()
    }

    /// The server's answer to `initialize`, once initialized.
    pub fn initialize_result(&self) -> Option<Arc<InitializeResult>> {
        lock(&self.inner.core).initialize_result().cloned()
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        lock(&self.inner.state).closed
    }

    /// Runs the handshake if it has not run yet (concurrent callers share
    /// one), and returns the server's answer.
    pub async fn initialize(&self) -> Result<Arc<InitializeResult>, T::Error> {
        crate::open::initialize(&self.inner).await
    }

    /// A stream of the server's notifications, typed
    /// ([`ServerNotification`](crate::ServerNotification)): progress, log
    /// messages, resource updates, list changes, cancellations, task
    /// status, elicitation completion and any other, from now on. Each
    /// call gives a new, independent subscriber; one that falls more than
    /// 256 notifications behind skips the oldest (logged).
    pub fn notifications(&self) -> crate::Notifications {
        let sender =
            self.inner.notifications.get_or_init(|| broadcast::channel(NOTIFICATION_BUFFER).0);
        crate::Notifications::new(sender.subscribe())
    }

    /// Sends a notification (initializing first if needed).
    pub async fn notify(
        &self,
        method: &str,
        params: Option<serde_json::Value>,
    ) -> Result<(), T::Error> {
        self.initialize().await?;
        self.inner.notify(Notification::new(method, params)).await
    }

    /// Ends the connection: what the core queued (the
    /// `notifications/cancelled` of requests given up on just before) is
    /// sent first, waiting requests fail, the server's requests in
    /// progress are abandoned, and the transport closes (a child process is
    /// shut down, an HTTP session deleted). Idempotent.
    pub async fn close(&self) -> Result<(), T::Error> {
        {
            let mut state = lock(&self.inner.state);
            if state.closed {
                return Ok(());
            }
            state.closed = true;
        }
        // A timeout or a dropped call queues its cancellation for a flush
        // of its own, which may not have run yet: the server is told before
        // the connection ends (bounded: a server that stopped reading does
        // not hold the close).
        match tokio::time::timeout(CLOSE_FLUSH_WAIT, self.inner.transport.flush()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::debug!(server = %self.name(), error = %e, "sending the messages queued before closing failed");
            }
            Err(_) => {
                tracing::debug!(server = %self.name(), "the messages queued before closing were not sent in time");
            }
        }
        self.inner.close_core();
        self.inner.transport.close().await
    }

    /// A protocol error as the transport's error.
    pub(crate) fn error(&self, e: ClientError) -> T::Error {
        self.inner.transport.client_error(e)
    }
}
