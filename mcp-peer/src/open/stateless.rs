//! The stateless era's opening: the era probe (`server/discover`, driven
//! by [`ProbeState`]) and entering the era with the server's discovery.

use std::sync::Arc;

use mcp_proto::ProtocolVersion;
use mcp_proto::client::ClientError;
use mcp_proto::client::decide::{EraChoice, ProbeState, ProbeStep};
use mcp_proto::methods;
use mcp_proto::types::{DiscoverResult, InitializeResult};

use crate::inner::{Inner, Reply};
use crate::send::Start;
use crate::sync::lock;
use crate::transport::Transport;

/// What the era probe found.
pub(super) enum Probed {
    /// The stateless era, entered.
    Modern(Arc<InitializeResult>),
    /// A handshake-era server: `initialize` comes next.
    Legacy,
}

/// The era probe: `server/discover` (each under the probe timeout), as
/// many times as [`ProbeState`] says, and what it found.
pub(super) async fn probe<T: Transport>(inner: &Inner<T>) -> Result<Probed, T::Error> {
    let options = &inner.options;
    let pinned = options.era == EraChoice::Modern;
    let mut state = ProbeState::new(options.protocol_version, &options.supported_versions, pinned);
    let timeout = options.probe_timeout.min(options.request_timeout);
    loop {
        let version = state.version();
        let start: Start<'_, ()> = Start::Probe { version, timeout };
        let (outcome, _) = inner.send(start, None, |_| {}).await;
        let (step, failure) = match outcome {
            // The usual answer's discovery, decoded once as it was read.
            Ok(Reply::Discovery(discovered)) => (state.handle_discovery(*discovered), None),
            Ok(reply) => (state.handle_answer(reply.into_raw().get()), None),
            Err(fail) => (state.handle_failure(fail.failure()), Some(fail)),
        };
        match step {
            ProbeStep::Enter { version, discovered } => {
                return enter(inner, version, discovered.map(|d| *d));
            }
            ProbeStep::Legacy => return Ok(Probed::Legacy),
            ProbeStep::Retry(_) => continue,
            ProbeStep::Fail(e) => return Err(inner.fatal(e)),
            _ => {
                return Err(match failure {
                    Some(fail) => fail.into_error(&inner.transport),
                    None => inner.transport.client_error(ClientError::InvalidResult {
                        method: methods::SERVER_DISCOVER.into(),
                        reason: "no discovery".into(),
                    }),
                });
            }
        }
    }
}

/// Enters the stateless era speaking `version`.
fn enter<T: Transport>(
    inner: &Inner<T>,
    version: ProtocolVersion,
    discover: Option<DiscoverResult>,
) -> Result<Probed, T::Error> {
    let entered = {
        let mut core = lock(&inner.core);
        core.enter_modern(version, discover).map(|()| core.initialize_result().cloned())
    };
    match entered {
        Ok(Some(result)) => {
            tracing::debug!(server = %inner.options.name, %version, "speaking the stateless era");
            Ok(Probed::Modern(result))
        }
        Ok(None) => Err(inner
            .transport
            .client_error(ClientError::Closed { method: methods::SERVER_DISCOVER.into() })),
        Err(e) => Err(inner.fatal(e)),
    }
}
