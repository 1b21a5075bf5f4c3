//! The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`): a
//! server may answer `tools/call` with a task handle (`resultType:
//! "task"`) instead of the result; the client follows the task (`tasks/get`
//! at the interval the server suggests), answers its input requests
//! (`tasks/update`), and gives the caller the result the call would have
//! given. Only when the client declared the extension
//! ([`ClientOptions::with_extension`](crate::ClientOptions::with_extension)
//! with [`TASKS_EXTENSION`](mcp_proto::types::TASKS_EXTENSION)); a handle
//! to a client that did not is an invalid result.

use std::collections::HashSet;

use mcp_proto::client::decide::InputRounds;
use mcp_proto::client::decide::result::poll_interval;
use mcp_proto::client::{BoxFuture, ClientError, RequestOptions, ops};
use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_proto::types::{
    CallToolResult, DetailedTask, TaskRequestParams, TaskStatus, UpdateTaskRequestParams,
};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::client::Client;
use crate::input::answer_inputs;
use crate::request::Answer;
use crate::send::Params;
use crate::transport::Transport;

pub use mcp_proto::client::decide::result::{
    DEFAULT_POLL_INTERVAL, MAX_POLL_INTERVAL, MIN_POLL_INTERVAL,
};

/// What [`Client::follow_tool_task`] calls with each state of the task.
pub type TaskObserver = dyn Fn(&DetailedTask) + Send + Sync;

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

/// The `taskId` of a task's JSON text, read without decoding the rest.
fn task_id_of(raw: &RawValue) -> Result<String, serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(rename = "taskId")]
        task_id: String,
    }
    serde_json::from_str::<Peek>(raw.get()).map(|p| p.task_id)
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
    /// Follows a task handle to its end and gives the result the request
    /// would have given (boxed: it makes requests of its own). Each status
    /// that asks for new input is a round, bounded as the rounds of
    /// `input_required` are; a status holding more input requests than
    /// one round may is refused before it is decoded. `observe` sees each
    /// state read (the handle first).
    pub(crate) fn follow_task<'a>(
        &'a self,
        method: &'a str,
        raw: Box<RawValue>,
        observe: Option<&'a TaskObserver>,
    ) -> BoxFuture<'a, Result<Box<RawValue>, T::Error>> {
        Box::pin(async move {
            let invalid = |reason: String| {
                self.error(ClientError::InvalidResult { method: method.into(), reason })
            };
            let mut rounds = InputRounds::new(self.inner.options.input_limits());
            let started = tokio::time::Instant::now();
            let limit = self.inner.options.task_timeout;
            // Armed before anything else is read: a status refused below
            // still cancels the task.
            let task_id = task_id_of(&raw).map_err(|e| invalid(e.to_string()))?;
            let mut guard = CancelOnDrop { client: self.clone(), task_id: Some(task_id) };
            let mut answered: HashSet<String> = HashSet::new();
            let mut raw = raw;
            loop {
                rounds.check_task_status(method, raw.get()).map_err(|e| self.error(e))?;
                let mut task: DetailedTask =
                    serde_json::from_str(raw.get()).map_err(|e| invalid(e.to_string()))?;
                if let Some(observe) = observe {
                    observe(&task);
                }
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
                        return Err(self.error(ClientError::from_rpc(method, error)));
                    }
                    TaskStatus::Cancelled => {
                        guard.task_id = None;
                        return Err(self.error(ClientError::Cancelled { method: method.into() }));
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
                            rounds.task_round(method).map_err(|e| self.error(e))?;
                            let mut budget = rounds.answer_budget(method);
                            let requests = fresh.iter().map(|(k, r)| (*k, *r));
                            let responses =
                                answer_inputs(&self.inner, method, requests, &mut budget)
                                    .await
                                    .map_err(|e| self.error(e))?;
                            answered.extend(responses.keys().cloned());
                            self.task_update(&task.task_id, responses).await?;
                        }
                    }
                    _ => {}
                }
                let elapsed = started.elapsed();
                let Some(interval) = poll_interval(task.poll_interval_ms, elapsed, limit) else {
                    // The guard cancels the task.
                    let e = ClientError::Timeout { method: method.into(), after: elapsed };
                    return Err(self.error(e));
                };
                tokio::time::sleep(interval).await;
                raw = self
                    .task_request(methods::TASKS_GET, &TaskRequestParams::new(&task.task_id))
                    .await?;
            }
        })
    }

    /// Follows a task a tool call made ([`ToolCallStart::Task`], from
    /// [`call_tool_start`](Self::call_tool_start)) to its end, as
    /// [`call_tool`](Self::call_tool) does by itself: `tasks/get` at the
    /// interval the server suggests, its input requests answered by the
    /// host's handlers (`tasks/update`), within
    /// [`ClientOptions::task_timeout`](crate::ClientOptions::task_timeout)
    /// (then the task is cancelled, as it is when this future is dropped).
    /// `observe` sees each state read, this handle first. The tool's
    /// result; a failed task is its error, a cancelled one
    /// [`ClientError::Cancelled`].
    pub async fn follow_tool_task(
        &self,
        task: &DetailedTask,
        observe: &TaskObserver,
    ) -> Result<CallToolResult, T::Error> {
        let method = methods::TOOLS_CALL;
        let invalid = |e: serde_json::Error| {
            self.error(ClientError::InvalidResult { method: method.into(), reason: e.to_string() })
        };
        let raw = serde_json::value::to_raw_value(task).map_err(invalid)?;
        let result = self.follow_task(method, raw, Some(observe)).await?;
        serde_json::from_str(result.get()).map_err(invalid)
    }

    /// A request of the tasks extension, its result as JSON text.
    async fn task_request<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<Box<RawValue>, T::Error> {
        let mut options = RequestOptions::default();
        let answer =
            self.request_inner(method, Params::Typed(params), None, &mut options, false, false);
        answer.await.map(Answer::into_raw)
    }

    /// `tasks/get` (tasks extension, 2026-07-28): the task's state, and by
    /// status its input requests, result or error.
    pub async fn task_status(&self, task_id: &str) -> Result<DetailedTask, T::Error> {
        let raw = self.task_request(methods::TASKS_GET, &TaskRequestParams::new(task_id)).await?;
        ops::parse_result(methods::TASKS_GET, &raw).map_err(|e| self.error(e))
    }

    /// `tasks/update` (tasks extension, 2026-07-28): answers to the task's
    /// input requests, by their keys.
    pub async fn task_update(
        &self,
        task_id: &str,
        input_responses: serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), T::Error> {
        let params = UpdateTaskRequestParams { task_id: task_id.into(), input_responses };
        self.task_request(methods::TASKS_UPDATE, &params).await.map(drop)
    }

    /// `tasks/cancel` (tasks extension, 2026-07-28): asks the server to stop
    /// the task (cooperative: it may still end otherwise).
    pub async fn task_cancel(&self, task_id: &str) -> Result<(), T::Error> {
        let params = TaskRequestParams::new(task_id);
        self.task_request(methods::TASKS_CANCEL, &params).await.map(drop)
    }
}
