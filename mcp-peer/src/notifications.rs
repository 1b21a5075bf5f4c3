//! Notifications as a stream, and calls with a cancel handle.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;
use mcp_proto::client::ServerNotification;
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::DropReport;

/// One line for the notifications a slow subscriber skipped.
fn report_skipped(n: u64) {
    tracing::warn!(
        skipped = n,
        "a notification subscriber fell behind; the oldest notifications were skipped"
    );
}

/// The server's notifications, typed, from the moment
/// [`Client::notifications`](crate::Client::notifications) was called:
/// progress (also given to the request's callback), log messages (also
/// forwarded to `tracing`), resource updates, list changes (caches are
/// already dropped), cancellations of the server's own requests, task
/// status, URL elicitation completion, and any other notification as it
/// came.
///
/// Use [`recv`](Self::recv), or the [`Stream`] impl. It ends when the
/// client is gone.
pub struct Notifications {
    stream: Pin<Box<dyn Stream<Item = ServerNotification> + Send>>,
}

impl fmt::Debug for Notifications {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Notifications").finish_non_exhaustive()
    }
}

impl Notifications {
    pub(crate) fn new(rx: broadcast::Receiver<ServerNotification>) -> Notifications {
        // A flood makes many lags: one summary line per interval.
        let skipped = DropReport::default();
        let stream = futures_util::stream::unfold((rx, skipped), |(mut rx, skipped)| async move {
            loop {
                match rx.recv().await {
                    Ok(event) => {
                        if let Some(n) = skipped.dropped(0, crate::sync::now()) {
                            report_skipped(n);
                        }
                        return Some((event, (rx, skipped)));
                    }
                    Err(broadcast::error::RecvError::Lagged(n)) => {
                        if let Some(n) = skipped.dropped(n, crate::sync::now()) {
                            report_skipped(n);
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => {
                        if let Some(n) = skipped.take_pending() {
                            report_skipped(n);
                        }
                        return None;
                    }
                }
            }
        });
        Notifications { stream: Box::pin(stream) }
    }

    /// The next notification; `None` once the client is gone.
    pub async fn recv(&mut self) -> Option<ServerNotification> {
        std::future::poll_fn(|cx| self.stream.as_mut().poll_next(cx)).await
    }
}

impl Stream for Notifications {
    type Item = ServerNotification;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<ServerNotification>> {
        self.stream.as_mut().poll_next(cx)
    }
}

/// A call running as a task of its own
/// ([`Client::spawn_call_tool`](crate::Client::spawn_call_tool)). Await it
/// for the outcome; [`cancel`](Self::cancel) stops it and sends
/// `notifications/cancelled`; dropping it lets the call run on.
pub struct CallHandle<R, E> {
    task: JoinHandle<Result<R, E>>,
}

impl<R, E> fmt::Debug for CallHandle<R, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallHandle").field("finished", &self.task.is_finished()).finish()
    }
}

/// How a [`CallHandle`] ended without an outcome.
#[derive(Debug)]
#[non_exhaustive]
pub enum CallError<E> {
    /// The call failed.
    Failed(E),
    /// The call was cancelled with [`CallHandle::cancel`].
    Cancelled,
    /// The task running the call panicked.
    Panicked,
}

impl<E: fmt::Display> fmt::Display for CallError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Failed(e) => e.fmt(f),
            CallError::Cancelled => f.write_str("the call was cancelled"),
            CallError::Panicked => f.write_str("the task running the call panicked"),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for CallError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::Failed(e) => Some(e),
            _ => None,
        }
    }
}

impl<R: Send + 'static, E: Send + 'static> CallHandle<R, E> {
    pub(crate) fn spawn(future: impl Future<Output = Result<R, E>> + Send + 'static) -> Self {
        CallHandle { task: tokio::spawn(future) }
    }

    /// Stops the call: the server is sent `notifications/cancelled` (when
    /// the request was out), and awaiting the handle gives
    /// [`CallError::Cancelled`].
    pub fn cancel(&self) {
        self.task.abort();
    }

    /// Whether the call has finished (or was cancelled).
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl<R, E> Future for CallHandle<R, E> {
    type Output = Result<R, CallError<E>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.task).poll(cx).map(|joined| match joined {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(e)) => Err(CallError::Failed(e)),
            Err(e) if e.is_cancelled() => Err(CallError::Cancelled),
            Err(_) => Err(CallError::Panicked),
        })
    }
}
