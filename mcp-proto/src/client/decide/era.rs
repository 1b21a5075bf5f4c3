//! What differs between the protocol eras, behind one interface.
//!
//! Each era is a module with a type implementing [`EraRules`]
//! ([`Handshake`](super::handshake::Handshake) for 2024-11-05 to
//! 2025-11-25, [`Stateless`](super::stateless::Stateless) for 2026-07-28);
//! [`rules`] is the one place that maps an [`Era`] to its rules. The
//! driver asks these rules instead of testing the era in shared paths: a
//! next revision is a new module and one arm here.
//!
//! What the eras differ in beyond these rules lives where it is done: how
//! a conversation opens (`initialize`, or the `server/discover` probe of
//! [`probe`](super::probe)) in the session layer's module of each era, and
//! the `_meta` every stateless-era request carries in the
//! [`ClientCore`](crate::client::ClientCore) (`enter_modern`).

use std::fmt;

use super::recovery::{Action, Attempt};
use super::result::{ResultContext, ResultStep};
use crate::version::{Era, ProtocolVersion};

/// The rules of one protocol era, as the session layer asks them.
pub trait EraRules: Send + Sync + fmt::Debug {
    /// The era these rules are for.
    fn era(&self) -> Era;

    /// The version a request names outside its body (Streamable HTTP: the
    /// `MCP-Protocol-Version` header) when the connection speaks
    /// `spoken`; `None` when the transport uses the negotiated version of
    /// its session.
    fn wire_version(&self, spoken: ProtocolVersion) -> Option<ProtocolVersion>;

    /// The era's own recovery from a failed attempt, decided before the
    /// rules every era shares ([`recovery::decide`](super::recovery::decide));
    /// `None` leaves it to those.
    fn recover(&self, attempt: &Attempt<'_>) -> Option<Action>;

    /// What a result (its JSON text) asks for.
    fn on_result(&self, method: &str, raw: &str, context: ResultContext) -> ResultStep;

    /// Whether [`on_result`](Self::on_result) reads the result's text (its
    /// kind, its caching hint). When it does not, every result is
    /// delivered as it came, and a driver may decode one straight into
    /// the type its caller waits for, never holding it as JSON text. By
    /// default, it does.
    fn reads_results(&self) -> bool {
        true
    }

    /// Whether a result of `method` whose text is `raw` goes to its caller
    /// as it came, kept in no cache ([`on_result`](Self::on_result) says
    /// [`ResultStep::Deliver`] with no cache): then a driver may decode it
    /// straight into the type its caller waits for, with the outcome the
    /// general path has. `raw` may be text not yet checked to be JSON (the
    /// result of [`jsonrpc::usual_answer`](crate::jsonrpc::usual_answer)):
    /// where this says `true` of such text, the caller's decoding still
    /// decides whether it is one JSON value, and where it is, the general
    /// path reads the same kind from it. Rules that read no result
    /// ([`reads_results`](Self::reads_results)) deliver every result as it
    /// came.
    fn delivers_as_it_came(&self, method: &str, raw: &str, context: ResultContext) -> bool {
        !self.reads_results()
            || matches!(self.on_result(method, raw, context), ResultStep::Deliver { cache: None })
    }

    /// [`delivers_as_it_came`](Self::delivers_as_it_came) for a result
    /// already decoded from `raw` (so one JSON object): `result_type` is
    /// its top-level `resultType` member as the decoding kept it, which
    /// rules that read the kind may take instead of reading the text again,
    /// where that gives the same answer. By default the text is read.
    fn delivers_decoded_as_it_came(
        &self,
        method: &str,
        raw: &str,
        result_type: Option<&serde_json::Value>,
        context: ResultContext,
    ) -> bool {
        let _ = result_type;
        self.delivers_as_it_came(method, raw, context)
    }

    /// Whether results may be answered from (and kept in) the result cache.
    fn caches_results(&self) -> bool;

    /// Whether the client keeps the assembled tool list (the stateless era
    /// keeps only the cached pages, for as long as their `ttlMs` says).
    fn keeps_tool_list(&self) -> bool;

    /// Whether the client sends notification `method` in this era (the
    /// stateless era has no `notifications/initialized` and no
    /// `notifications/roots/list_changed`).
    fn sends_notification(&self, method: &str) -> bool;

    /// Whether request `method` exists in this era.
    fn has_request(&self, method: &str) -> bool;

    /// Whether a request whose transport failed to carry it (the exchange
    /// broke: a refused connection, a reset stream) is cancelled with
    /// `notifications/cancelled`, or abandoned without a word. A session
    /// may still hold the request, so the handshake era tells it; in the
    /// stateless era the broken exchange is the cancellation, and a notice
    /// would be one more exchange with a server that may be gone.
    fn notifies_cancel_after_broken_exchange(&self) -> bool;
}

/// The rules of `era`.
pub fn rules(era: Era) -> &'static dyn EraRules {
    match era {
        Era::Legacy => &super::handshake::Handshake,
        Era::Modern => &super::stateless::Stateless,
    }
}
