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
    let (outcome, _) = inner.send::<()>(Start::Initialize, None, |_| {}).await;
    match outcome {
        Ok(_) => {
            // notifications/initialized goes out before any other request.
            if let Err(e) = inner.transport.flush().await {
                tracing::debug!(server = %inner.options.name, error = %e, "sending notifications/initialized failed");
            }
            let result = lock(&inner.core).initialize_result().cloned();
            let result = result.ok_or_else(|| {
                let e = ClientError::Closed { method: methods::INITIALIZE.into() };
                inner.transport.client_error(e)
            })?;
            inner.transport.initialized().await;
            let client = inner.options.declared_capabilities();
            let deprecated = deprecated_features(&client, &result.capabilities);
            if !deprecated.is_empty() {
                tracing::debug!(server = %inner.options.name, features = ?deprecated, "negotiated features the protocol deprecates (SEP-2577); they keep working");
            }
            Ok(result)
        }
        Err(Fail::Transport(e)) => Err(e),
        Err(Fail::Client(e)) => Err(inner.fatal(e)),
    }
}
