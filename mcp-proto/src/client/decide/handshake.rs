//! The handshake era (2024-11-05 to 2025-11-25): `initialize` opens a
//! session; results are final as they come; a session the server ended
//! is started again.

use super::era::EraRules;
use super::recovery::{Action, Attempt};
use super::result::{ResultContext, ResultStep};
use crate::methods;
use crate::version::{Era, ProtocolVersion};

/// The rules of the handshake era.
#[derive(Debug, Clone, Copy, Default)]
pub struct Handshake;

impl EraRules for Handshake {
    fn era(&self) -> Era {
        Era::Legacy
    }

    /// The session's negotiated version (the transport knows it).
    fn wire_version(&self, _: ProtocolVersion) -> Option<ProtocolVersion> {
        None
    }

    /// A request the server refused because its session is gone (and did
    /// not act on) is sent again once in a new session.
    fn recover(&self, attempt: &Attempt<'_>) -> Option<Action> {
        let expired = attempt.failure.transport_facts().is_some_and(|f| f.session_expired);
        (expired && !attempt.already_retried).then_some(Action::NewSession)
    }

    /// Results have no kind: each is final.
    fn on_result(&self, _: &str, _: &str, _: ResultContext) -> ResultStep {
        ResultStep::Deliver { cache: None }
    }

    /// Nothing of a result is read: see [`on_result`](Self::on_result).
    fn reads_results(&self) -> bool {
        false
    }

    fn caches_results(&self) -> bool {
        false
    }

    fn keeps_tool_list(&self) -> bool {
        true
    }

    fn sends_notification(&self, _: &str) -> bool {
        true
    }

    fn has_request(&self, method: &str) -> bool {
        !matches!(method, methods::SERVER_DISCOVER | methods::SUBSCRIPTIONS_LISTEN)
    }

    /// The session may still run the request: tell it.
    fn notifies_cancel_after_broken_exchange(&self) -> bool {
        true
    }
}

/// The features SEP-2577 deprecates (from 2026-07-28) that a handshake
/// negotiated: `"roots"` and `"sampling"` when the client declared them,
/// `"logging"` when the server did. They keep working; the protocol asks
/// implementations to say so (the session layer logs it at debug level).
pub fn deprecated_features(
    client: &crate::types::ClientCapabilities,
    server: &crate::types::ServerCapabilities,
) -> Vec<&'static str> {
    [
        ("roots", client.roots.is_some()),
        ("sampling", client.sampling.is_some()),
        ("logging", server.logging.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, negotiated)| negotiated.then_some(name))
    .collect()
}
