//! The tasks extension of the stateless era (2026-07-28,
//! `io.modelcontextprotocol/tasks`) on the server side: whether a request
//! may get a task, the wire shape of a task (`CreateTaskResult`, the
//! `tasks/get` `DetailedTask`), the status a task's outcome ends it with,
//! and what `tasks/update` and `tasks/cancel` do by status.
//!
//! Pure functions of data: the caller keeps the tasks and runs the work.
//! The handshake era's experimental tasks (2025-11-25) are another thing
//! (`ttl`, `tasks/result`, `tasks/list`) and not here.

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_proto::types::{RESULT_TYPE_COMPLETE, RESULT_TYPE_TASK, TASKS_EXTENSION};
use serde_json::{Map, Value, json};

use crate::era::invalid_params;
use crate::stateless::RequestMeta;

/// Whether the method is one of the extension's (`tasks/get`,
/// `tasks/update`, `tasks/cancel`). `tasks/list` and `tasks/result` are
/// not: the stateless era answers them `-32601`.
pub fn is_task_method(method: &str) -> bool {
    matches!(method, methods::TASKS_GET | methods::TASKS_UPDATE | methods::TASKS_CANCEL)
}

/// Whether the request's client capabilities declare the extension
/// (`extensions["io.modelcontextprotocol/tasks"]`): each request says so
/// for itself.
pub fn declared(meta: &RequestMeta) -> bool {
    meta.capabilities
        .get("extensions")
        .and_then(Value::as_object)
        .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
}

/// `-32021` naming the extension in `data.requiredCapabilities.extensions`:
/// the answer to a task method, or to a tool that only runs as a task,
/// from a client that did not declare it.
pub fn missing_extension() -> ErrorObject {
    let mut error = ErrorObject::new(
        error_code::MISSING_CLIENT_CAPABILITY,
        format!("Missing required client capability: extension {TASKS_EXTENSION}"),
    );
    error.data = Some(json!({ "requiredCapabilities": { "extensions": { TASKS_EXTENSION: {} } } }));
    error
}

/// A tool's `execution.taskSupport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Absent or `"forbidden"`: never a task.
    Forbidden,
    /// `"optional"`: a task when the client declared the extension and the
    /// server chooses to.
    Optional,
    /// `"required"`: only as a task.
    Required,
}

impl TaskSupport {
    /// Reads a tool definition's `execution.taskSupport`.
    pub fn of_tool(tool: &Value) -> TaskSupport {
        match tool.pointer("/execution/taskSupport").and_then(Value::as_str) {
            Some("optional") => TaskSupport::Optional,
            Some("required") => TaskSupport::Required,
            _ => TaskSupport::Forbidden,
        }
    }
}

/// How a `tools/call` is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dispatch {
    /// As a plain call: the result is the answer.
    Sync,
    /// The server may answer with a task (it may still answer at once
    /// when the work is done before it would create one, unless the tool
    /// requires a task).
    Task,
    /// `-32021` ([`missing_extension`]): the tool runs only as a task and
    /// the client did not declare the extension.
    MissingExtension,
}

/// How a call of a tool with `support` is served when the request did or
/// did not declare the extension.
pub fn dispatch(support: TaskSupport, declared: bool) -> Dispatch {
    match (support, declared) {
        (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Dispatch::Sync,
        (TaskSupport::Optional | TaskSupport::Required, true) => Dispatch::Task,
        (TaskSupport::Required, false) => Dispatch::MissingExtension,
    }
}

/// A task's state, as the wire shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskView<'a> {
    /// `taskId`.
    pub task_id: &'a str,
    /// `status`: `working`, `input_required`, `completed`, `failed`,
    /// `cancelled`.
    pub status: &'a str,
    /// `statusMessage`, when there is one.
    pub status_message: Option<&'a str>,
    /// `createdAt` (RFC 3339).
    pub created_at: &'a str,
    /// `lastUpdatedAt` (RFC 3339).
    pub last_updated_at: &'a str,
    /// `ttlMs`: how long from creation the task is kept (`None`: `null`,
    /// unlimited).
    pub ttl_ms: Option<u64>,
    /// `pollIntervalMs`.
    pub poll_interval_ms: u64,
}

impl TaskView<'_> {
    /// The members every task shows: no `resultType`, no `requestState`,
    /// never the handshake era's `ttl` or `pollInterval`.
    fn members(&self) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("taskId".into(), json!(self.task_id));
        task.insert("status".into(), json!(self.status));
        if let Some(message) = self.status_message {
            task.insert("statusMessage".into(), json!(message));
        }
        task.insert("createdAt".into(), json!(self.created_at));
        task.insert("lastUpdatedAt".into(), json!(self.last_updated_at));
        task.insert("ttlMs".into(), json!(self.ttl_ms));
        task.insert("pollIntervalMs".into(), json!(self.poll_interval_ms));
        task
    }
}

/// The answer to a `tools/call` that made a task (`CreateTaskResult`): the
/// task's members flat at the top, `resultType: "task"`; no result, error
/// or input requests (those are for `tasks/get`).
pub fn created(view: &TaskView<'_>) -> Value {
    let mut task = view.members();
    task.insert("resultType".into(), json!(RESULT_TYPE_TASK));
    Value::Object(task)
}

/// The answer to `tasks/get` (`DetailedTask`): the task, and by status its
/// outstanding `inputRequests` (`input_required`), its `result`
/// (`completed`) or its `error` (`failed`).
pub fn detailed(
    view: &TaskView<'_>,
    input_requests: &Map<String, Value>,
    outcome: Option<&Result<Value, ErrorObject>>,
) -> Value {
    let mut task = view.members();
    match (view.status, outcome) {
        ("input_required", _) => {
            task.insert("inputRequests".into(), Value::Object(input_requests.clone()));
        }
        ("completed", Some(Ok(result))) => {
            task.insert("result".into(), result.clone());
        }
        ("failed", Some(Err(error))) => {
            task.insert("error".into(), json!(error));
        }
        _ => {}
    }
    Value::Object(task)
}

/// The status a task's outcome ends it with: `completed` for any result
/// (a tool's own error, `isError: true`, included: the tool ran), `failed`
/// for a protocol error.
pub fn outcome_status(outcome: &Result<Value, ErrorObject>) -> &'static str {
    match outcome {
        Ok(_) => "completed",
        Err(_) => "failed",
    }
}

/// Whether a task of this status is over (`completed`, `failed`,
/// `cancelled`).
pub fn is_terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// Whether `tasks/cancel` changes a task of this status: a working or
/// waiting task is cancelled; a finished one keeps its status and the
/// request is acknowledged all the same (cancelling is idempotent).
pub fn cancel_applies(status: &str) -> bool {
    !is_terminal(status)
}

/// Whether `tasks/update` delivers its responses to a task of this status:
/// only a task waiting for input takes them; to any other the request is
/// acknowledged and changes nothing (as a response under a key the task
/// did not ask for is ignored).
pub fn update_applies(status: &str) -> bool {
    status == "input_required"
}

/// The answer to `tasks/update` and `tasks/cancel`: `{resultType:
/// "complete"}` and nothing of the task (its new state is for the next
/// `tasks/get`).
pub fn ack() -> Value {
    json!({ "resultType": RESULT_TYPE_COMPLETE })
}

/// The `taskId` of a task method's parameters (`-32602` without one).
pub fn task_id(params: Option<&Value>) -> Result<&str, ErrorObject> {
    params
        .and_then(|p| p.get("taskId"))
        .and_then(Value::as_str)
        .ok_or_else(|| invalid_params("the request needs a string taskId"))
}

/// The `inputResponses` of `tasks/update` (`-32602` unless an object).
pub fn update_responses(params: Option<&Value>) -> Result<&Map<String, Value>, ErrorObject> {
    params
        .and_then(|p| p.get("inputResponses"))
        .and_then(Value::as_object)
        .ok_or_else(|| invalid_params("tasks/update needs an inputResponses object"))
}

/// `-32602` for a task the server does not know (or no longer keeps).
pub fn unknown_task(task_id: &str) -> ErrorObject {
    invalid_params(format!("Unknown task: {task_id:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ServeEra;
    use crate::stateless::request_meta;
    use mcp_proto::types::{CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY};

    fn meta(capabilities: Value) -> RequestMeta {
        let params = json!({"_meta": {
            PROTOCOL_VERSION_META_KEY: "2026-07-28",
            CLIENT_CAPABILITIES_META_KEY: capabilities,
        }});
        request_meta(Some(&params), ServeEra::Modern).unwrap()
    }

    const VIEW: TaskView<'static> = TaskView {
        task_id: "t-1",
        status: "working",
        status_message: None,
        created_at: "2026-07-28T10:00:00.000Z",
        last_updated_at: "2026-07-28T10:00:01.000Z",
        ttl_ms: Some(60_000),
        poll_interval_ms: 100,
    };

    #[test]
    fn the_extension_is_declared_per_request() {
        assert!(declared(&meta(json!({"extensions": {TASKS_EXTENSION: {}}}))));
        for capabilities in [
            json!({}),
            json!({"tasks": {}}),
            json!({"extensions": {}}),
            json!({"extensions": {"io.modelcontextprotocol/ui": {}}}),
            json!({"extensions": [TASKS_EXTENSION]}),
        ] {
            assert!(!declared(&meta(capabilities.clone())), "{capabilities}");
        }
        let error = missing_extension();
        assert_eq!(error.code, error_code::MISSING_CLIENT_CAPABILITY);
        assert_eq!(
            error.data.unwrap()["requiredCapabilities"]["extensions"][TASKS_EXTENSION],
            json!({})
        );
        for (method, is) in [
            ("tasks/get", true),
            ("tasks/update", true),
            ("tasks/cancel", true),
            ("tasks/list", false),
            ("tasks/result", false),
            ("tools/call", false),
        ] {
            assert_eq!(is_task_method(method), is, "{method}");
        }
    }

    #[test]
    fn dispatch_follows_the_tool_and_the_declaration() {
        let tool = |support: Value| json!({"name": "t", "execution": {"taskSupport": support}});
        let cases = [
            (json!({"name": "t"}), false, Dispatch::Sync),
            (json!({"name": "t"}), true, Dispatch::Sync),
            (tool(json!("forbidden")), true, Dispatch::Sync),
            (tool(json!("optional")), false, Dispatch::Sync),
            (tool(json!("optional")), true, Dispatch::Task),
            (tool(json!("required")), true, Dispatch::Task),
            (tool(json!("required")), false, Dispatch::MissingExtension),
            (tool(json!(7)), true, Dispatch::Sync),
        ];
        for (definition, declared, expected) in cases {
            let support = TaskSupport::of_tool(&definition);
            assert_eq!(dispatch(support, declared), expected, "{definition} {declared}");
        }
    }

    #[test]
    fn the_wire_shapes_are_flat_and_by_status() {
        let handle = created(&VIEW);
        assert_eq!(
            handle,
            json!({
                "resultType": "task", "taskId": "t-1", "status": "working",
                "createdAt": "2026-07-28T10:00:00.000Z",
                "lastUpdatedAt": "2026-07-28T10:00:01.000Z",
                "ttlMs": 60_000, "pollIntervalMs": 100,
            })
        );
        let unlimited = TaskView { ttl_ms: None, ..VIEW };
        assert_eq!(created(&unlimited)["ttlMs"], Value::Null);

        let mut inputs = Map::new();
        inputs.insert("confirm".into(), json!({"method": "elicitation/create"}));
        let result = Ok(json!({"content": [{"type": "text", "text": "done"}]}));
        let error = Err(ErrorObject::new(error_code::INTERNAL_ERROR, "boom"));
        let cases = [
            ("working", None, &[][..]),
            ("input_required", None, &["inputRequests"][..]),
            ("completed", Some(&result), &["result"][..]),
            ("failed", Some(&error), &["error"][..]),
            ("cancelled", None, &[][..]),
            // A status and an outcome that do not belong together show
            // neither.
            ("completed", Some(&error), &[][..]),
            ("working", Some(&result), &[][..]),
        ];
        for (status, outcome, extra) in cases {
            let view = TaskView { status, ..VIEW };
            let task = detailed(&view, &inputs, outcome);
            let object = task.as_object().unwrap();
            for key in ["inputRequests", "result", "error", "resultType", "requestState", "ttl"] {
                assert_eq!(object.contains_key(key), extra.contains(&key), "{status}: {key}");
            }
            assert_eq!(task["status"], status);
        }
        let failed = detailed(&TaskView { status: "failed", ..VIEW }, &inputs, Some(&error));
        assert_eq!(
            (failed["error"]["code"].clone(), failed["error"]["message"].clone()),
            (json!(error_code::INTERNAL_ERROR), json!("boom"))
        );
        assert_eq!(ack(), json!({"resultType": "complete"}));
    }

    #[test]
    fn statuses_decide_what_cancel_and_update_do() {
        assert_eq!(outcome_status(&Ok(json!({"content": [], "isError": true}))), "completed");
        assert_eq!(outcome_status(&Err(ErrorObject::new(-32603, "x"))), "failed");
        let table = [
            ("working", false, true, false),
            ("input_required", false, true, true),
            ("completed", true, false, false),
            ("failed", true, false, false),
            ("cancelled", true, false, false),
        ];
        for (status, terminal, cancels, updates) in table {
            assert_eq!(is_terminal(status), terminal, "{status}");
            assert_eq!(cancel_applies(status), cancels, "{status}");
            assert_eq!(update_applies(status), updates, "{status}");
        }
    }

    #[test]
    fn parameters_are_checked() {
        let good = json!({"taskId": "t-1", "inputResponses": {"k": {"action": "accept"}}});
        assert_eq!(task_id(Some(&good)).unwrap(), "t-1");
        assert!(update_responses(Some(&good)).unwrap().contains_key("k"));
        for bad in [json!({}), json!({"taskId": 1}), json!({"taskId": "t", "inputResponses": []})] {
            let failed = task_id(Some(&bad)).err().or_else(|| update_responses(Some(&bad)).err());
            assert_eq!(failed.unwrap().code, error_code::INVALID_PARAMS, "{bad}");
        }
        assert_eq!(unknown_task("nope").code, error_code::INVALID_PARAMS);
    }
}
