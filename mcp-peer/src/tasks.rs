//! The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`): a
//! server may answer `tools/call` with a task handle (`resultType:
//! "task"`) instead of the result; the client follows the task (`tasks/get`
//! at the interval the server suggests), answers its input requests
//! (`tasks/update`), and gives the caller the result the call would have
//! given. Only when the client declared the extension
//! ([`ClientOptions::with_extension`](crate::ClientOptions::with_extension)
//! with [`TASKS_EXTENSION`]); a handle to a client that did not is an
//! invalid result.

use std::collections::HashSet;
use std::time::Duration;

use mcp_proto::client::{BoxFuture, ClientError, RequestOptions};
use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_proto::types::{
    CallToolResult, DetailedTask, TASKS_EXTENSION, TaskRequestParams, TaskStatus,
    UpdateTaskRequestParams,
};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::client::{Client, Params};
use crate::transport::Transport;

/// The polling interval when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The shortest polling interval followed, whatever the server suggests.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest polling interval followed, whatever the server suggests.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(60);

/// What a tool call gave when its task is not followed
/// ([`Client::call_tool_start`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ToolCallStart {
    /// The server answered with the result.
    Complete(CallToolResult),
    /// The server made a task of it: follow it with
    /// [`Client::task_status`], answer it with [`Client::task_update`],
    /// stop it with [`Client::task_cancel`].
    Task(Box<DetailedTask>),
}

/// Cancels a task whose follower stopped before its end (the call's future
/// was dropped, or it timed out).
struct CancelOnDrop<T: Transport> {
    client: Client<T>,
    task_id: Option<String>,
}

impl<T: Transport> Drop for CancelOnDrop<T> {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else { return };
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
        let client = self.client.clone();
        handle.spawn(async move {
            if let Err(e) = client.task_cancel(&task_id).await {
                tracing::debug!(server = %client.name(), error = %e, "cancelling an abandoned task failed");
            }
        });
    }
}

impl<T: Transport> Client<T> {
    /// Whether the client declares the tasks extension.
    pub(crate) fn declares_tasks(&self) -> bool {
        self.inner
            .options
            .declared_capabilities()
            .extensions
            .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
    }

    /// Follows a task handle to its end and gives the result the request
    /// would have given (boxed: it makes requests of its own).
    pub(crate) fn follow_task<'a>(
        &'a self,
        method: &'a str,
        raw: Box<RawValue>,
    ) -> BoxFuture<'a, Result<Box<RawValue>, T::Error>> {
        Box::pin(async move {
            let transport = &self.inner.transport;
            let invalid = |reason: String| {
                transport.client_error(ClientError::InvalidResult { method: method.into(), reason })
            };
            let mut task: DetailedTask =
                serde_json::from_str(raw.get()).map_err(|e| invalid(e.to_string()))?;
            let started = tokio::time::Instant::now();
            let limit = self.inner.options.task_timeout;
            let mut guard =
                CancelOnDrop { client: self.clone(), task_id: Some(task.task_id.clone()) };
            let mut answered: HashSet<String> = HashSet::new();
            loop {
                match &task.status {
                    TaskStatus::Completed => {
                        guard.task_id = None;
                        let result = task
                            .result
                            .take()
                            .ok_or_else(|| invalid("a completed task without its result".into()))?;
                        return serde_json::value::to_raw_value(&result)
                            .map_err(|e| invalid(e.to_string()));
                    }
                    TaskStatus::Failed => {
                        guard.task_id = None;
                        let error = task.error.take().unwrap_or_else(|| {
                            ErrorObject::new(error_code::INTERNAL_ERROR, "the task failed")
                        });
                        return Err(transport.client_error(ClientError::from_rpc(method, error)));
                    }
                    TaskStatus::Cancelled => {
                        guard.task_id = None;
                        let e = ClientError::Cancelled { method: method.into() };
                        return Err(transport.client_error(e));
                    }
                    TaskStatus::InputRequired => {
                        // Each key is answered once over the task's life.
                        let fresh: Vec<_> = task
                            .input_requests
                            .iter()
                            .flatten()
                            .filter(|(key, _)| !answered.contains(*key))
                            .collect();
                        if !fresh.is_empty() {
                            let responses = self
                                .answer_inputs(method, fresh.iter().map(|(k, r)| (*k, *r)))
                                .await
                                .map_err(|e| transport.client_error(e))?;
                            answered.extend(responses.keys().cloned());
                            self.task_update(&task.task_id, responses).await?;
                        }
                    }
                    _ => {}
                }
                let elapsed = started.elapsed();
                if elapsed >= limit {
                    // The guard cancels the task.
                    let e = ClientError::Timeout { method: method.into(), after: elapsed };
                    return Err(transport.client_error(e));
                }
                let interval = task
                    .poll_interval_ms
                    .map(Duration::from_millis)
                    .unwrap_or(DEFAULT_POLL_INTERVAL)
                    .clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
                    .min(limit - elapsed);
                tokio::time::sleep(interval).await;
                task = self.task_status(&task.task_id).await?;
            }
        })
    }

    /// Calls a tool without following a task the server may make of it
    /// (tasks extension, 2026-07-28; declare it first): the result, or the
    /// task handle to follow yourself. `call_tool` follows tasks to their
    /// end by itself.
    pub async fn call_tool_start(
        &self,
        name: &str,
        arguments: impl Serialize,
        options: RequestOptions,
    ) -> Result<ToolCallStart, T::Error> {
        let raw = self.call_raw_with(name, arguments, options, false).await?;
        let transport = &self.inner.transport;
        let parse = |e: serde_json::Error| {
            transport.client_error(ClientError::InvalidResult {
                method: methods::TOOLS_CALL.into(),
                reason: e.to_string(),
            })
        };
        match mcp_proto::types::result_kind(raw.get()) {
            Ok(mcp_proto::types::ResultKind::Task) => serde_json::from_str(raw.get())
                .map(|t| ToolCallStart::Task(Box::new(t)))
                .map_err(parse),
            _ => serde_json::from_str(raw.get()).map(ToolCallStart::Complete).map_err(parse),
        }
    }

    /// `tasks/get` (tasks extension, 2026-07-28): the task's state, and by
    /// status its input requests, result or error.
    pub async fn task_status(&self, task_id: &str) -> Result<DetailedTask, T::Error> {
        let params = TaskRequestParams::new(task_id);
        self.request_typed(methods::TASKS_GET, &params, RequestOptions::default()).await
    }

    /// `tasks/update` (tasks extension, 2026-07-28): answers to the task's
    /// input requests, by their keys.
    pub async fn task_update(
        &self,
        task_id: &str,
        input_responses: serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), T::Error> {
        let params = UpdateTaskRequestParams { task_id: task_id.into(), input_responses };
        let raw = self
            .request_raw(
                methods::TASKS_UPDATE,
                Params::Typed(&params),
                None,
                RequestOptions::default(),
            )
            .await?;
        drop(raw);
        Ok(())
    }

    /// `tasks/cancel` (tasks extension, 2026-07-28): asks the server to stop
    /// the task (cooperative: it may still end otherwise).
    pub async fn task_cancel(&self, task_id: &str) -> Result<(), T::Error> {
        let params = TaskRequestParams::new(task_id);
        self.request_raw(
            methods::TASKS_CANCEL,
            Params::Typed(&params),
            None,
            RequestOptions::default(),
        )
        .await
        .map(drop)
    }
}
