//! The one evaluation in front of every `tools/call`: the call policy's
//! decision, the user's remembered answers, the host's approver within the
//! call's timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_proto::types::{JsonObject, Tool};

use crate::config::ServerConfig;
use crate::error::Error;
use crate::trust::approval::{
    ApprovalRequest, ApprovalStore, Approver, CallPolicy, Decision, Reason, Remember, Tier,
    TierRules,
};

/// What the gate needs from the registry's options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GateParts<'a> {
    pub(crate) policy: &'a CallPolicy,
    pub(crate) managed: &'a TierRules,
    pub(crate) approver: Option<&'a Arc<dyn Approver>>,
    pub(crate) store: &'a Arc<dyn ApprovalStore>,
}

/// The answers remembered for this registry's life.
#[derive(Debug, Default)]
pub(crate) struct CallGate {
    session: Mutex<HashMap<(String, String), bool>>,
}

fn denied(server: &ServerConfig, tool: &str, reason: Reason) -> Error {
    if reason == Reason::ServerLists {
        return Error::ToolNotAllowed { server: server.name.clone(), tool: tool.to_owned() };
    }
    Error::CallDenied { server: server.name.clone(), tool: tool.to_owned(), reason }
}

impl CallGate {
    /// Refuses, before any I/O, a call that no answer could allow; else
    /// what was decided so far, for [`check`](Self::check) of the same
    /// server configuration and tool.
    pub(crate) fn before_io(
        parts: GateParts<'_>,
        server: &ServerConfig,
        tool: &str,
    ) -> Result<Option<Decision>, Error> {
        match parts.policy.before_io(server, tool, parts.managed) {
            Some(Decision { tier: Tier::Deny, reason }) => Err(denied(server, tool, reason)),
            before => Ok(before),
        }
    }

    /// Whether a listed tool is shown at all (not denied).
    pub(crate) fn visible(parts: GateParts<'_>, server: &ServerConfig, tool: &Tool) -> bool {
        let decision =
            parts.policy.decide(server, &tool.name, tool.annotations.as_ref(), parts.managed);
        decision.tier != Tier::Deny
    }

    /// The decision for one call, asking the approver when the tier is
    /// `ask` and no answer is remembered; a refusal is an error. The
    /// approver is waited for at most `timeout`. `before` is what
    /// [`before_io`](Self::before_io) gave for the same `server` and tool.
    pub(crate) async fn check(
        &self,
        parts: GateParts<'_>,
        server: &ServerConfig,
        tool: &Tool,
        before: Option<Decision>,
        arguments: impl FnOnce() -> Option<JsonObject>,
        timeout: Duration,
    ) -> Result<Decision, Error> {
        let (name, annotations) = (&tool.name, tool.annotations.as_ref());
        let decision = parts.policy.decide_after(before, server, name, annotations, parts.managed);
        match decision.tier {
            Tier::Allow => return Ok(decision),
            Tier::Deny => return Err(denied(server, &tool.name, decision.reason)),
            Tier::Ask => {}
        }
        // A tier the administrator pins is asked about every time.
        let may_remember = !matches!(decision.reason, Reason::Managed(_));
        let key = (server.name.clone(), tool.name.clone());
        if may_remember {
            let session = self.session.lock().unwrap_or_else(|e| e.into_inner()).get(&key).copied();
            let kept = match session {
                Some(answer) => Some(answer),
                None => parts
                    .store
                    .get(&server.name, &tool.name)
                    .map_err(|source| Error::Trust { server: server.name.clone(), source })?,
            };
            match kept {
                Some(true) => {
                    return Ok(Decision { tier: Tier::Allow, reason: Reason::Remembered });
                }
                Some(false) => return Err(denied(server, &tool.name, Reason::Remembered)),
                None => {}
            }
        }
        let Some(approver) = parts.approver else {
            return Err(denied(server, &tool.name, Reason::NoApprover));
        };
        let request = ApprovalRequest {
            server: server.name.clone(),
            tool: tool.name.clone(),
            arguments: arguments(),
            annotations: tool.annotations.clone(),
            annotations_trusted: parts.policy.trusts_annotations_of(&server.name),
            reason: decision.reason,
            may_remember,
        };
        let Ok(answer) = tokio::time::timeout(timeout, approver.approve(&request)).await else {
            return Err(denied(server, &tool.name, Reason::ApproverTimedOut));
        };
        match answer.remember {
            Remember::Session => {
                self.session.lock().unwrap_or_else(|e| e.into_inner()).insert(key, answer.allow);
            }
            Remember::Always if may_remember => parts
                .store
                .set(&server.name, &tool.name, answer.allow)
                .map_err(|source| Error::Trust { server: server.name.clone(), source })?,
            _ => {}
        }
        if answer.allow {
            Ok(Decision { tier: Tier::Allow, reason: Reason::Approver })
        } else {
            Err(denied(server, &tool.name, Reason::Approver))
        }
    }
}
