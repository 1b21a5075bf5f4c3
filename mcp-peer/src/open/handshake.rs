//! The handshake era's opening: `initialize`, then
//! `notifications/initialized`, then the transport's hook (Streamable
//! HTTP opens its GET stream).

use std::sync::Arc;

use mcp_proto::client::ClientError;
use mcp_proto::client::decide::handshake::deprecated_features;
use mcp_proto::methods;
use mcp_proto::types::InitializeResult;

use crate::inner::Inner;
use crate::send::{Fail, Start};
use crate::sync::lock;
use crate::transport::Transport;

/// The `initialize` exchange. Called under `init_lock`.
pub(super) async fn open<T: Transport>(
    inner: &Inner<T>,
) -> Result<Arc<InitializeResult>, T::Error> {
    // The answer to `initialize` queues `notifications/initialized`, which
    // is sent here rather than by a task of its own; if this opening is
    // dropped between its answer and that send, the guard hands it to one.
    let mut queued = Queued(Some(inner));
    let (outcome, _) = inner.send::<()>(Start::Initialize, None, |_| {}).await;
    queued.0 = None;
    match outcome {
        Ok(_) => {
            // notifications/initialized goes out before any other request.
            inner.flush_here().await;
            let result = lock(&inner.core).initialize_result().cloned();
            let result = result.ok_or_else(|| {
                let e = ClientError::Closed { method: methods::INITIALIZE.into() };
                inner.transport.client_error(e)
            })?;
            inner.transport.initialized().await;
            // Only for a debug line: not worked out when nobody reads it.
            // The core holds the capabilities `initialize` declared.
            if tracing::enabled!(tracing::Level::DEBUG) {
                let deprecated = deprecated_features(
                    &lock(&inner.core).config().capabilities,
                    &result.capabilities,
                );
                if !deprecated.is_empty() {
                    tracing::debug!(server = %inner.options.name, features = ?deprecated, "negotiated features the protocol deprecates (SEP-2577); they keep working");
                }
            }
            Ok(result)
        }
        Err(Fail::Transport(e)) => Err(e),
        Err(Fail::Client(e)) => Err(inner.fatal(e)),
    }
}

/// Sends what the core queued (`notifications/initialized`) from a task of
/// its own when the opening is dropped while it waits for its answer.
struct Queued<'a, T: Transport>(Option<&'a Inner<T>>);

impl<T: Transport> Drop for Queued<'_, T> {
    fn drop(&mut self) {
        if let Some(inner) = self.0
            && lock(&inner.core).has_transmit()
        {
            inner.spawn_flush();
        }
    }
}
