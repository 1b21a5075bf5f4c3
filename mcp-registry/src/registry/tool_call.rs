//! Tool calls: the check without I/O, the call (policy, approval, pins,
//! then `tools/call`), and its line in the audit log.

use std::future::Future;
use std::time::{Duration, Instant};

use mcp_peer::tasks::ToolCallStart;
use mcp_proto::client::RequestOptions;
use mcp_proto::types::{CallToolResult, CreateTaskResult, JsonObject, LOG_LEVEL_META_KEY};
use serde_json::value::RawValue;

use super::subscriptions::is_modern;
use super::{MIN_CALL_TIME, Registry, calls};
use crate::error::Error;
use crate::error::TransportError;
use crate::transport::ServerClient;
use crate::trust::approval::Decision;
use crate::trust::audit::{Audited, AuditedCall};
use crate::trust::gate::CallGate;

impl Registry {
    /// Calls a tool with the server's timeout. See
    /// [`call_tool_with`](Self::call_tool_with).
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, Error> {
        self.call_tool_with(server, tool, arguments, RequestOptions::default()).await
    }

    /// A tool call without the audit log: the checks of
    /// [`call_tool_with`](Self::call_tool_with) (policy, listing, pins,
    /// app-only tools, approval), then `send` on the connection;
    /// `decision` is set once the call policy has decided.
    pub(crate) async fn call_unaudited<A, R, F, Fut>(
        &self,
        server: &str,
        tool: &str,
        arguments: A,
        mut options: RequestOptions,
        decision: &mut Option<Decision>,
        send: F,
    ) -> Result<R, Error>
    where
        A: Arguments,
        F: FnOnce(ServerClient, String, A, RequestOptions) -> Fut,
        Fut: Future<Output = Result<R, TransportError>>,
    {
        let slot = self.slot(server)?;
        let tool = tool.trim();
        let config = slot.config();
        let parts = self.shared.options.trust.parts();
        let before = CallGate::before_io(parts, &config, tool)?;
        let (generation, conn, waited) = self.shared.connection(&slot, options.timeout).await?;
        fit_options(&mut options, waited, is_modern(&conn));
        let tools = match calls::cached_tools(&conn) {
            Some(tools) => tools,
            None => match calls::list_tools(&conn).await {
                Ok(tools) => tools,
                Err(e) => return Err(self.failed(&slot, generation, e).await),
            },
        };
        let Some(index) = tools.iter().position(|t| t.name == tool) else {
            return Err(Error::UnknownTool { server: server.to_owned(), tool: tool.to_owned() });
        };
        let definition = &tools[index];
        if !self.shared.options.app_only_tools && !definition.is_visible_to_model() {
            return Err(Error::AppOnlyTool { server: server.to_owned(), tool: tool.to_owned() });
        }
        self.shared.pins.check_listed(&config, &tools, index)?;
        let ask_within = options.timeout.unwrap_or(config.timeout);
        let asked = || arguments.to_object();
        *decision = Some(
            self.shared.gate.check(parts, &config, definition, before, asked, ask_within).await?,
        );
        match send(conn, tool.to_owned(), arguments, options).await {
            Ok(result) => Ok(result),
            Err(e) => Err(self.failed(&slot, generation, e).await),
        }
    }

    /// [`call_unaudited`](Self::call_unaudited), then the call's line in
    /// the audit log when there is one (`outcome` says what came back).
    async fn call_audited<A, R, F, Fut>(
        &self,
        server: &str,
        tool: &str,
        arguments: A,
        options: RequestOptions,
        outcome: for<'r> fn(&'r R) -> Audited<'r>,
        send: F,
    ) -> Result<R, Error>
    where
        A: Arguments,
        F: FnOnce(ServerClient, String, A, RequestOptions) -> Fut,
        Fut: Future<Output = Result<R, TransportError>>,
    {
        let mut decision = None;
        let Some(audit) = self.shared.options.trust.audit.clone() else {
            return self
                .call_unaudited(server, tool, arguments, options, &mut decision, send)
                .await;
        };
        let started = Instant::now();
        let logged = arguments.to_object();
        let result =
            self.call_unaudited(server, tool, arguments, options, &mut decision, send).await;
        let config = self.get(server);
        audit.record(&AuditedCall {
            server,
            config,
            tool: tool.trim(),
            arguments: logged.as_ref(),
            duration: started.elapsed(),
            result: result.as_ref().map(outcome),
            decision: decision.as_ref(),
        });
        result
    }

    /// Refuses, without any I/O, a call that no answer could allow: the
    /// server's exact lists ([`Error::ToolNotAllowed`]), a `deny` rule of
    /// the call policy or the managed policy ([`Error::CallDenied`]). A
    /// host checks this before work of its own that would connect; a
    /// refusal is logged in the audit log as a refused call (without
    /// arguments: none were given).
    pub fn check_call(&self, server: &str, tool: &str) -> Result<(), Error> {
        let slot = self.slot(server)?;
        let tool = tool.trim();
        let config = slot.config();
        let checked =
            CallGate::before_io(self.shared.options.trust.parts(), &config, tool).map(drop);
        if let (Err(e), Some(audit)) = (&checked, &self.shared.options.trust.audit) {
            audit.record(&AuditedCall {
                server,
                config: Some(&config),
                tool,
                arguments: None,
                duration: std::time::Duration::ZERO,
                result: Err(e),
                decision: None,
            });
        }
        checked
    }

    /// Calls a tool. A tool the policy refuses is refused before anything is
    /// spawned or sent ([`Error::ToolNotAllowed`], [`Error::CallDenied`]);
    /// one it marks `ask` goes to the host's
    /// [`Approver`](crate::Approver), waited for within the call's timeout
    /// (the server's unless `options` sets one); a tool the server does
    /// not list is refused before the `tools/call` is sent
    /// ([`Error::UnknownTool`]), and so are a tool withheld by pinning
    /// ([`Error::ToolChanged`]) and one meant only for the server's MCP App
    /// view ([`Error::AppOnlyTool`], unless
    /// [`RegistryOptions::app_only_tools`](crate::RegistryOptions::app_only_tools)).
    /// `options` may carry a timeout, a
    /// progress callback and `_meta` members (a per-request log level among
    /// them goes to a stateless-era server only). A tool that fails reports `is_error` in the
    /// result, not an `Err`. A supervised server that is backing off is
    /// waited for within the call's timeout, when it has one
    /// ([`WhileDown::Wait`](crate::WhileDown::Wait)): what the wait took is taken off the time the
    /// server has to answer. With an audit log
    /// ([`TrustOptions::audit`](crate::TrustOptions::audit)), every call,
    /// refused ones included, is logged once it ends.
    pub async fn call_tool_with(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<CallToolResult, Error> {
        self.call_audited(
            server,
            tool,
            arguments,
            options,
            result_outcome,
            |c, tool, a, o| async move { calls::call_tool(&c, &tool, a, o).await },
        )
        .await
    }

    /// A tool call as [`call_tool_with`](Self::call_tool_with) makes it
    /// (every check, the audit log), its result given as the JSON text the
    /// server sent instead of a [`CallToolResult`]: for a host that passes
    /// results on unchanged (a bridge), which would only decode and encode
    /// it again. The text is a JSON object (else the call fails, as
    /// [`mcp_peer::Client::call_tool_json`] says); it is not checked against
    /// the result's schema.
    pub async fn call_tool_json(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.call_audited(
            server,
            tool,
            arguments,
            options,
            json_outcome,
            |c, tool, a, o| async move { calls::call_tool_json(&c, &tool, a, o).await },
        )
        .await
    }

    /// [`call_tool_json`](Self::call_tool_json) with the arguments as JSON
    /// text (an object), sent exactly as written: for a bridge passing on
    /// what its host wrote, whose numbers a map of values could change
    /// (integers past 64 bits, decimals past a double's precision). They
    /// are decoded only to be shown to an approver or written to the audit
    /// log.
    pub async fn call_tool_text(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<Box<RawValue>, Error> {
        self.call_audited(
            server,
            tool,
            arguments,
            options,
            json_outcome,
            |c, tool, a, o| async move { calls::call_tool_json(&c, &tool, a, o).await },
        )
        .await
    }

    /// [`call_tool_start`](Self::call_tool_start) with the arguments as
    /// JSON text (an object), sent exactly as written (see
    /// [`call_tool_text`](Self::call_tool_text)).
    pub async fn call_tool_start_text(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Box<RawValue>>,
        options: RequestOptions,
    ) -> Result<ToolCallStart, Error> {
        self.call_audited(
            server,
            tool,
            arguments,
            options,
            start_outcome,
            |c, tool, a, o| async move { calls::call_tool_start(&c, &tool, a, o).await },
        )
        .await
    }

    /// Starts a tool call that a 2026-07-28 server may turn into a task
    /// (the tasks extension, declared with
    /// [`DefaultConnector::tasks`](crate::DefaultConnector::tasks)): the
    /// result when the server answers at once, else the task to follow
    /// ([`mcp_peer::Client::follow_tool_task`]) or hand to the user. The
    /// call passes every check of [`call_tool_with`](Self::call_tool_with)
    /// (policy, pins, approval) before it is sent, and is audited (a task
    /// as `outcome: "task"` with its id).
    pub async fn call_tool_start(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        options: RequestOptions,
    ) -> Result<ToolCallStart, Error> {
        self.call_audited(
            server,
            tool,
            arguments,
            options,
            start_outcome,
            |c, tool, a, o| async move {
                calls::call_tool_start(&c, &tool, a.unwrap_or_default(), o).await
            },
        )
        .await
    }

    /// Asks for a tool call as a task (the experimental tasks of
    /// 2025-11-25), `ttl` the time the server should keep it. The call
    /// passes every check of [`call_tool_with`](Self::call_tool_with)
    /// before it is sent, and is audited as `outcome: "task"`.
    pub async fn call_tool_as_task(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        ttl: Option<Duration>,
    ) -> Result<CreateTaskResult, Error> {
        let options = RequestOptions::default();
        self.call_audited(
            server,
            tool,
            arguments,
            options,
            task_outcome,
            move |c, tool, a, _| async move {
                c.call_tool_as_task(&tool, a.unwrap_or_default(), ttl).await
            },
        )
        .await
    }
}

/// A per-request log level (`_meta`, [`LOG_LEVEL_META_KEY`]) is the
/// stateless era's: it is kept for a server of that era (`modern`) and
/// taken out for a handshake-era one, whose session has its level
/// (`logging/setLevel`); a `_meta` left empty goes too.
/// A call's options once its connection is there, `waited` for: the wait
/// taken off its timeout (never below [`MIN_CALL_TIME`]), a per-request
/// log level only for a stateless-era connection.
pub(crate) fn fit_options(options: &mut RequestOptions, waited: Duration, modern: bool) {
    if let Some(timeout) = &mut options.timeout {
        *timeout = timeout.saturating_sub(waited).max(MIN_CALL_TIME);
    }
    per_request_log_level(options, modern);
}

pub(crate) fn per_request_log_level(options: &mut RequestOptions, modern: bool) {
    if modern {
        return;
    }
    if let Some(meta) = &mut options.meta
        && meta.remove(LOG_LEVEL_META_KEY).is_some()
        && meta.is_empty()
    {
        options.meta = None;
    }
}

/// A call's arguments as the registry takes them: a map, or the JSON
/// text a host wrote, sent on as it is. Made a map only for an approver
/// or the audit log.
pub(crate) trait Arguments: Send + 'static {
    /// The arguments as a map (`None` when there are none, or the text is
    /// not an object).
    fn to_object(&self) -> Option<JsonObject>;
}

impl Arguments for Option<JsonObject> {
    fn to_object(&self) -> Option<JsonObject> {
        self.clone()
    }
}

impl Arguments for Option<Box<RawValue>> {
    fn to_object(&self) -> Option<JsonObject> {
        self.as_ref().and_then(|text| serde_json::from_str(text.get()).ok())
    }
}

/// A result, for its audit line.
fn result_outcome(result: &CallToolResult) -> Audited<'_> {
    Audited::Result(result)
}

/// A result as JSON text, for its audit line.
#[allow(clippy::borrowed_box)] // the type the call gives, as `outcome` takes it
fn json_outcome(result: &Box<RawValue>) -> Audited<'_> {
    Audited::Json(result)
}

/// What a started call is, for its audit line.
fn start_outcome(start: &ToolCallStart) -> Audited<'_> {
    match start {
        ToolCallStart::Task(task) => Audited::Task(&task.task_id),
        ToolCallStart::Complete(result) => Audited::Result(result),
        _ => Audited::Other,
    }
}

/// A task asked for, for its audit line.
fn task_outcome(created: &CreateTaskResult) -> Audited<'_> {
    Audited::Task(&created.task.task_id)
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::*;

    #[test]
    fn a_log_level_goes_only_to_a_stateless_era_server() {
        let meta = |v: Value| match v {
            Value::Object(m) => Some(m),
            _ => None::<Map<String, Value>>,
        };
        let level = json!({LOG_LEVEL_META_KEY: "debug"});
        let both = json!({LOG_LEVEL_META_KEY: "debug", "traceparent": "00-a-b-01"});
        let trace = json!({"traceparent": "00-a-b-01"});
        let other = json!({"io.modelcontextprotocol/other": 1});
        // (meta given, modern, meta sent)
        let table = [
            (Value::Null, false, Value::Null),
            (Value::Null, true, Value::Null),
            (level.clone(), true, level.clone()),
            (level.clone(), false, Value::Null),
            (both.clone(), true, both.clone()),
            (both.clone(), false, trace.clone()),
            (trace.clone(), false, trace.clone()),
            (other.clone(), false, other.clone()),
            (json!({}), false, json!({})),
        ];
        for (given, modern, sent) in table {
            let mut options = RequestOptions { meta: meta(given.clone()), ..Default::default() };
            per_request_log_level(&mut options, modern);
            assert_eq!(options.meta, meta(sent), "{given} to a modern ({modern}) server");
        }
    }
}
