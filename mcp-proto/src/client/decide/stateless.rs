//! The stateless era (2026-07-28): no session; every request carries its
//! version, capabilities and identity in `_meta`; results have a kind
//! (`complete`, `input_required`, a task handle) and caching hints.

use super::era::EraRules;
use super::recovery::{Action, Attempt, GiveUp};
use super::result::{self, ResultContext, ResultStep};
use crate::client::ClientError;
use crate::methods;
use crate::types::{ResultKind, decoded_result_kind, result_kind};
use crate::version::{Era, ProtocolVersion};

/// The rules of the stateless era.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stateless;

impl EraRules for Stateless {
    fn era(&self) -> Era {
        Era::Modern
    }

    /// The version every request's `_meta` names.
    fn wire_version(&self, spoken: ProtocolVersion) -> Option<ProtocolVersion> {
        Some(spoken)
    }

    /// In this order, once per request:
    /// - a `-32020` (the headers unlike the body) on a call whose tool
    ///   definition gave headers: list the tools again (and send again
    ///   when the tool changed, [`changed_tool`](super::recovery::changed_tool));
    /// - a broken answer stream: send again with a new id when the method
    ///   is idempotent (the server may have acted on the others);
    /// - a `-32022` (the version refused): discover the server's versions
    ///   again.
    fn recover(&self, attempt: &Attempt<'_>) -> Option<Action> {
        if attempt.already_retried {
            return None;
        }
        let failure = &attempt.failure;
        if matches!(failure.error, Some(ClientError::HeaderMismatch { .. })) && attempt.has_tool {
            return Some(Action::RelistToolsAndResend);
        }
        if failure.transport_facts().is_some_and(|f| f.stream_lost) {
            return Some(if methods::is_idempotent(attempt.method) {
                Action::ResendNewId
            } else {
                Action::GiveUp(GiveUp::AsItCame)
            });
        }
        if matches!(failure.error, Some(ClientError::UnsupportedProtocolVersion { .. })) {
            return Some(Action::Rediscover);
        }
        None
    }

    /// By `resultType` (absent: complete). A complete result of a
    /// cacheable request is kept for its positive `ttlMs`;
    /// `input_required` goes to another round (to the caller, as it came,
    /// when the caller takes the rounds); a task handle is followed,
    /// only for `tools/call` and only when the tasks extension was
    /// declared; an unknown kind is an invalid result.
    fn on_result(&self, method: &str, raw: &str, context: ResultContext) -> ResultStep {
        let invalid = |reason: String| {
            ResultStep::Invalid(ClientError::InvalidResult { method: method.into(), reason })
        };
        match result_kind(raw) {
            Ok(ResultKind::Complete) => {
                let cache = context.cacheable.then(|| result::cache_hint(raw)).and_then(|hint| {
                    let ttl = result::ttl(&hint)?;
                    Some((hint, ttl))
                });
                ResultStep::Deliver { cache }
            }
            Ok(ResultKind::InputRequired) if context.rounds_to_caller => {
                ResultStep::Deliver { cache: None }
            }
            Ok(ResultKind::InputRequired) => ResultStep::InputRequired,
            Ok(ResultKind::Task) if method == methods::TOOLS_CALL && context.tasks_declared => {
                ResultStep::Task
            }
            Ok(ResultKind::Task) => {
                invalid("a task handle, which this request may not be answered with".into())
            }
            Err(e) => invalid(e.to_string()),
        }
    }

    /// A result no cache may keep is delivered as it came when its kind,
    /// read from its decoded `resultType` where that is sure
    /// ([`decoded_result_kind`]), is complete; otherwise the text is read.
    fn delivers_decoded_as_it_came(
        &self,
        method: &str,
        raw: &str,
        result_type: Option<&serde_json::Value>,
        context: ResultContext,
    ) -> bool {
        match decoded_result_kind(raw, result_type) {
            Some(kind) if !context.cacheable => {
                kind == Ok(ResultKind::Complete)
                    || (context.rounds_to_caller && kind == Ok(ResultKind::InputRequired))
            }
            _ => self.delivers_as_it_came(method, raw, context),
        }
    }

    fn caches_results(&self) -> bool {
        true
    }

    fn keeps_tool_list(&self) -> bool {
        false
    }

    fn sends_notification(&self, method: &str) -> bool {
        methods::exists_in_modern_era(method)
    }

    fn has_request(&self, method: &str) -> bool {
        methods::exists_in_modern_era(method)
    }

    /// The broken exchange is the cancellation.
    fn notifies_cancel_after_broken_exchange(&self) -> bool {
        false
    }
}
