//! Tasks (experimental in 2025-11-25): durable, pollable request
//! execution.
//!
//! A request is made a task by its `task` parameter ([`TaskMetadata`]); the
//! reply is then a [`CreateTaskResult`], and the real result comes from
//! `tasks/result`. Whether a tool supports this is
//! [`ToolExecution::task_support`](crate::types::ToolExecution::task_support).

use serde::{Deserialize, Serialize};

use crate::types::{Cursor, JsonObject, Meta};

/// The `_meta` key that associates a message with a task
/// ([`RelatedTaskMetadata`]).
pub const RELATED_TASK_META_KEY: &str = "io.modelcontextprotocol/related-task";

open_string_enum! {
    /// The status of a task.
    pub enum TaskStatus {
        /// The request is being processed.
        Working => "working",
        /// The task waits for input (elicitation or sampling).
        InputRequired => "input_required",
        /// The request completed; its result is available.
        Completed => "completed",
        /// The request failed (for a tool call, also a result with
        /// `isError: true`).
        Failed => "failed",
        /// The request was cancelled.
        Cancelled => "cancelled",
    }
}

impl TaskStatus {
    /// Whether the status is final (`completed`, `failed` or `cancelled`).
    pub fn is_terminal(&self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// The `task` parameter that asks for task-augmented execution.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskMetadata {
    /// The requested retention, in milliseconds from creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Associates a message with a task, under [`RELATED_TASK_META_KEY`] in
/// `_meta`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RelatedTaskMetadata {
    /// The task's id.
    pub task_id: String,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The state of a task. Also the result of `tasks/get` and `tasks/cancel`
/// and the parameters of `notifications/tasks/status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task's id.
    pub task_id: String,
    /// The current status.
    pub status: TaskStatus,
    /// A human-readable message about the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created (ISO 8601).
    pub created_at: String,
    /// When the task was last updated (ISO 8601).
    pub last_updated_at: String,
    /// The retention from creation in milliseconds; `None` (encoded `null`)
    /// for unlimited.
    #[serde(default)]
    pub ttl: Option<u64>,
    /// The suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// Metadata (of the result or notification that carries the task).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The result of `tasks/get`: the task.
pub type GetTaskResult = Task;
/// The result of `tasks/cancel`: the task.
pub type CancelTaskResult = Task;
/// The parameters of `notifications/tasks/status`: the task.
pub type TaskStatusNotificationParams = Task;

/// The reply to a task-augmented request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// The task that was created.
    pub task: Task,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Parameters naming one task (`tasks/get`, `tasks/result`, `tasks/cancel`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskRequestParams {
    /// The task's id.
    pub task_id: String,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl TaskRequestParams {
    /// Parameters for the task `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskRequestParams { task_id: task_id.into(), ..Default::default() }
    }
}

/// Parameters of `tasks/get`.
pub type GetTaskRequestParams = TaskRequestParams;
/// Parameters of `tasks/result`.
pub type GetTaskPayloadRequestParams = TaskRequestParams;
/// Parameters of `tasks/cancel`.
pub type CancelTaskRequestParams = TaskRequestParams;

/// The result of `tasks/result`: the original request's result type (a
/// `CallToolResult` for a `tools/call` task), as an object to decode further.
pub type GetTaskPayloadResult = JsonObject;

/// The result of `tasks/list`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// The tasks of this page.
    pub tasks: Vec<Task>,
    /// The position after this page; more results may follow if present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}
