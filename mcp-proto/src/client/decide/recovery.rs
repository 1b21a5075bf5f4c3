//! What to do after a failed attempt at a request.
//!
//! The driver describes the attempt ([`Attempt`]: the method, the era the
//! connection speaks, how it failed, whether the request was already sent
//! again, ...) and performs the [`Action`] that [`decide`] gives. Every
//! action but giving up is taken at most once per request
//! ([`Attempt::already_retried`]), so a request is sent at most twice.

use super::Failure;
use super::era::rules;
use crate::client::ClientError;
use crate::methods;
use crate::types::Tool;
use crate::version::Era;

/// A failed attempt at a request, as [`decide`] needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Attempt<'a> {
    /// The request's method.
    pub method: &'a str,
    /// The era the connection speaks now (`None` while it is being
    /// opened again).
    pub era: Option<Era>,
    /// How it failed.
    pub failure: Failure<'a>,
    /// Whether the request was already sent again once.
    pub already_retried: bool,
    /// Whether the request is a `tools/call` whose tool definition gave
    /// it headers (`Mcp-Param-*`, over HTTP).
    pub has_tool: bool,
    /// Whether the connection the request went out in was lost since (and
    /// the client is not closed).
    pub lost_connection: bool,
    /// Whether the transport sends a request out when the connection was
    /// lost again, when safe (Streamable HTTP; not stdio, where a new
    /// process is a new server).
    pub transport_resends_after_loss: bool,
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// List the tools again; send again (with the new definition's
    /// headers) only when the called tool changed
    /// ([`changed_tool`]), else give up as it came.
    RelistToolsAndResend,
    /// Send the request again with a new id.
    ResendNewId,
    /// Open the connection again, discovering the server's versions, and
    /// send again.
    Rediscover,
    /// Start a new session and send again.
    NewSession,
    /// Open a new connection (the old one was lost) and send again.
    RenewConnection,
    /// The connection was renewed between the check and the send: open it
    /// (if still needed) and send again.
    Reinitialize,
    /// Fail the request.
    GiveUp(GiveUp),
}

/// The error a request that is given up fails with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GiveUp {
    /// The failure itself (the transport's error keeps its context).
    AsItCame,
    /// [`ClientError::ConnectionLost`]: the request was out when the
    /// connection was lost, and sending it again is not safe (or was
    /// done).
    ConnectionLost,
}

/// What to do after `attempt` failed: the era's own rules first
/// ([`EraRules::recover`](super::EraRules::recover)), then those every era
/// shares:
/// - a request that was out when the connection was lost (it failed
///   [`ClientError::Closed`]) is sent again once in a new connection when
///   the transport allows it and the method is idempotent, else it fails
///   with [`GiveUp::ConnectionLost`];
/// - a request refused because the connection was being opened again
///   ([`ClientError::NotInitialized`]) waits for it and is sent again once;
/// - anything else fails as it came.
pub fn decide(attempt: &Attempt<'_>) -> Action {
    if let Some(action) = attempt.era.and_then(|era| rules(era).recover(attempt)) {
        return action;
    }
    let from_core = attempt.failure.transport_facts().is_none();
    match attempt.failure.error {
        Some(ClientError::Closed { .. })
            if from_core && attempt.lost_connection && attempt.transport_resends_after_loss =>
        {
            if attempt.already_retried || !methods::is_idempotent(attempt.method) {
                Action::GiveUp(GiveUp::ConnectionLost)
            } else {
                Action::RenewConnection
            }
        }
        Some(ClientError::NotInitialized { .. }) if from_core && !attempt.already_retried => {
            Action::Reinitialize
        }
        _ => Action::GiveUp(GiveUp::AsItCame),
    }
}

/// After [`Action::RelistToolsAndResend`]: the position of the called tool
/// in the fresh list when its definition changed (send again with it);
/// `None` when it is gone or unchanged (give up: the refusal stands).
pub fn changed_tool(called: &Tool, fresh: &[Tool]) -> Option<usize> {
    let i = fresh.iter().position(|t| t.name == called.name)?;
    (fresh[i] != *called).then_some(i)
}
