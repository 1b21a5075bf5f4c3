//! Opening the conversation, in the era the options and the era memory
//! choose ([`mcp_proto::client::decide::open`]): one module per era
//! ([`handshake`]: `initialize`; [`stateless`]: the `server/discover`
//! probe and entering the stateless era), and opening again after the
//! connection was lost.

mod handshake;
mod stateless;

use std::sync::Arc;

use mcp_proto::client::decide::OpenStep;
use mcp_proto::client::decide::open::{first_step, probe_after_failed_handshake};
use mcp_proto::types::InitializeResult;

use crate::inner::Inner;
use crate::send::failure_of;
use crate::sync::lock;
use crate::transport::Transport;
use stateless::Probed;

/// Opens the conversation if it is not open (concurrent callers share
/// one opening), and returns the server's answer.
pub(crate) async fn initialize<T: Transport>(
    inner: &Inner<T>,
) -> Result<Arc<InitializeResult>, T::Error> {
    if let Some(r) = opened(inner) {
        return Ok(r);
    }
    let _guard = inner.init_lock.lock().await;
    if let Some(r) = opened(inner) {
        return Ok(r);
    }
    inner.check_open()?;
    // Boxed: the opening runs once a connection, and its future (the
    // probe, the handshake, the transport's exchanges) would otherwise be
    // part of every request's.
    Box::pin(open(inner)).await
}

/// Starts a new connection after the server dropped the one `epoch`
/// counted (unless another caller already did), and opens it.
pub(crate) async fn renew<T: Transport>(inner: &Inner<T>, epoch: u64) -> Result<(), T::Error> {
    let _guard = inner.init_lock.lock().await;
    inner.check_open()?;
    let reset = {
        let mut state = lock(&inner.state);
        let reset = state.epoch == epoch;
        if reset {
            state.epoch += 1;
        }
        reset
    };
    if reset {
        inner.reset_core();
    }
    if opened(inner).is_none() {
        Box::pin(open(inner)).await?;
    }
    Ok(())
}

fn opened<T: Transport>(inner: &Inner<T>) -> Option<Arc<InitializeResult>> {
    lock(&inner.core).initialize_result().cloned()
}

/// Opens the connection unless it is open: [`initialize`] without a
/// reference to the server's answer taken and dropped (the check before
/// each request).
pub(crate) async fn ensure<T: Transport>(inner: &Inner<T>) -> Result<(), T::Error> {
    if lock(&inner.core).initialize_result().is_none() {
        initialize(inner).await?;
    }
    Ok(())
}

/// Opens the conversation in the era the options choose (probing when
/// they leave it open). Called under `init_lock`.
async fn open<T: Transport>(inner: &Inner<T>) -> Result<Arc<InitializeResult>, T::Error> {
    let options = &inner.options;
    let memory = options.era_memory.as_deref();
    let key = memory.and_then(|_| inner.transport.era_cache_key());
    let remembered = match (memory, &key) {
        (Some(memory), Some(key)) => memory.known_legacy(key),
        _ => false,
    };
    let step = first_step(options.era, &options.supported_versions, remembered);
    if let OpenStep::Handshake { .. } = step {
        let outcome = handshake::open(inner).await;
        match &outcome {
            Err(e) if probe_after_failed_handshake(step, failure_of(e)) => {
                // A remembered era that no longer holds is probed again.
                if let (Some(memory), Some(key)) = (memory, &key) {
                    memory.forget(key);
                }
                tracing::info!(server = %options.name, "the server no longer answers initialize; probing its era again");
            }
            _ => return outcome,
        }
    }
    match stateless::probe(inner).await? {
        Probed::Modern(result) => Ok(result),
        Probed::Legacy => {
            if let (Some(memory), Some(key)) = (memory, &key) {
                memory.remember_legacy(key);
            }
            handshake::open(inner).await
        }
    }
}
