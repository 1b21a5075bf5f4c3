//! `ServerNotification::from_notification` over notification samples.
//!
//! Each sample is a whole JSON-RPC message as a server would write it; it
//! goes through the decoder, then `from_notification`, and must give the
//! expected variant, the same method back, and its parameters unchanged.

use mcp_proto::client::{InvalidNotification, ServerNotification};
use mcp_proto::jsonrpc::{self, Incoming, Message};
use mcp_proto::types::{LoggingLevel, ProgressToken, TaskStatus};
use mcp_proto::{Notification, RequestId};
use serde_json::{Value, json};

/// Decodes a whole message that must be a notification.
#[track_caller]
fn notification(message: &Value) -> Notification {
    match jsonrpc::decode_slice(message.to_string().as_bytes()) {
        Ok(Incoming::Single(Message::Notification(n))) => n,
        other => panic!("{message} is not a notification: {other:?}"),
    }
}

/// The variant's name and its parameters as JSON (`None` for the unit
/// variants).
fn parts(n: &ServerNotification) -> (&'static str, Option<Value>) {
    fn json<T: serde::Serialize>(params: &T) -> Option<Value> {
        Some(serde_json::to_value(params).unwrap())
    }
    match n {
        ServerNotification::Progress(p) => ("Progress", json(p)),
        ServerNotification::LogMessage(p) => ("LogMessage", json(p)),
        ServerNotification::ResourceUpdated(p) => ("ResourceUpdated", json(p)),
        ServerNotification::ToolListChanged => ("ToolListChanged", None),
        ServerNotification::PromptListChanged => ("PromptListChanged", None),
        ServerNotification::ResourceListChanged => ("ResourceListChanged", None),
        ServerNotification::Cancelled(p) => ("Cancelled", json(p)),
        ServerNotification::TaskStatus(p) => ("TaskStatus", json(p)),
        ServerNotification::ElicitationComplete(p) => ("ElicitationComplete", json(p)),
        ServerNotification::Other(n) => ("Other", n.params.clone()),
        _ => ("unknown variant", None),
    }
}

/// `message` decodes to the variant `expected`, keeps its method, and its
/// parameters re-encode as they came (the unit variants drop them).
#[track_caller]
fn check(message: Value, expected: &str) -> ServerNotification {
    let n = notification(&message);
    let typed = ServerNotification::from_notification(&n)
        .unwrap_or_else(|e| panic!("{message} does not decode: {e}"));
    let (variant, params) = parts(&typed);
    assert_eq!(variant, expected, "{message}");
    assert_eq!(typed.method(), n.method, "{message}");
    if let Some(params) = params {
        assert_eq!(Some(params), n.params, "{message}: parameters changed");
    }
    assert_eq!(ServerNotification::try_from(&n).as_ref(), Ok(&typed));
    typed
}

#[test]
fn known_notifications() {
    let cases = [
        // Progress: string and integer tokens, fractions, totals, messages.
        (
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": "abc", "progress": 1}}),
            "Progress",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": 7, "progress": 0.25, "total": 1,
                              "message": "Reticulating splines", "_meta": {"k": 1}}}),
            "Progress",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": -1, "progress": 50, "total": 100, "x-extra": [1]}}),
            "Progress",
        ),
        // Log messages of every shape of data, and an unknown level.
        (
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "error", "logger": "db", "data": "connection lost"}}),
            "LogMessage",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "debug", "data": {"query": "SELECT 1", "ms": 3}}}),
            "LogMessage",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "trace", "data": [1, 2]}}),
            "LogMessage",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "emergency", "data": null}}),
            "LogMessage",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                   "params": {"uri": "file:///project/src/main.rs"}}),
            "ResourceUpdated",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                   "params": {"uri": "db://t/1", "title": "row", "_meta": {}}}),
            "ResourceUpdated",
        ),
        // list_changed, with and without parameters.
        (
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            "ToolListChanged",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}),
            "ToolListChanged",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                   "params": {"_meta": {"reason": "plugin loaded"}}}),
            "ToolListChanged",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}),
            "PromptListChanged",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}),
            "ResourceListChanged",
        ),
        // Cancellation of a request the server made.
        (
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 3, "reason": "user aborted"}}),
            "Cancelled",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": "s-1"}}),
            "Cancelled",
        ),
        (json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}), "Cancelled"),
        // Task status: the task itself, plus `_meta`.
        (
            json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                   "params": {"taskId": "t-1", "status": "working",
                              "createdAt": "2025-11-25T10:30:00Z",
                              "lastUpdatedAt": "2025-11-25T10:30:00Z",
                              "ttl": 60000, "pollInterval": 5000}}),
            "TaskStatus",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                   "params": {"taskId": "t-2", "status": "completed",
                              "statusMessage": "done",
                              "createdAt": "2025-11-25T10:30:00Z",
                              "lastUpdatedAt": "2025-11-25T10:31:00Z", "ttl": null,
                              "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t-2"}}}}),
            "TaskStatus",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                   "params": {"taskId": "t-3", "status": "paused",
                              "createdAt": "a", "lastUpdatedAt": "b", "ttl": null}}),
            "TaskStatus",
        ),
        (
            json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete",
                   "params": {"elicitationId": "550e8400-e29b-41d4-a716-446655440000"}}),
            "ElicitationComplete",
        ),
    ];
    for (message, expected) in cases {
        check(message, expected);
    }
}

#[test]
fn unknown_methods_are_kept() {
    let cases = [
        json!({"jsonrpc": "2.0", "method": "notifications/something_new"}),
        json!({"jsonrpc": "2.0", "method": "notifications/something_new", "params": {"a": 1}}),
        json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "x-vendor/event", "params": [1, "two"]}),
        json!({"jsonrpc": "2.0", "method": "Notifications/Progress", "params": {"progress": 1}}),
        json!({"jsonrpc": "2.0", "method": ""}),
    ];
    for message in cases {
        let n = notification(&message);
        match check(message, "Other") {
            ServerNotification::Other(kept) => assert_eq!(kept, n),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn decoded_fields() {
    let typed = check(
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": "abc", "progress": 2.5, "total": 10}}),
        "Progress",
    );
    let ServerNotification::Progress(p) = typed else { unreachable!() };
    assert_eq!(
        (p.progress_token, p.progress, p.total),
        (ProgressToken::from("abc"), 2.5, Some(10.0))
    );

    let typed = check(
        json!({"jsonrpc": "2.0", "method": "notifications/message",
               "params": {"level": "warning", "data": "disk"}}),
        "LogMessage",
    );
    let ServerNotification::LogMessage(m) = typed else { unreachable!() };
    assert_eq!((m.level, m.data), (LoggingLevel::Warning, json!("disk")));

    let typed = check(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}),
        "Cancelled",
    );
    let ServerNotification::Cancelled(c) = typed else { unreachable!() };
    assert_eq!(c.request_id, Some(RequestId::from(9)));

    let typed = check(
        json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
               "params": {"taskId": "t", "status": "input_required", "createdAt": "a",
                          "lastUpdatedAt": "b", "ttl": null}}),
        "TaskStatus",
    );
    let ServerNotification::TaskStatus(task) = typed else { unreachable!() };
    assert_eq!((task.task_id.as_str(), task.status), ("t", TaskStatus::InputRequired));
}

#[test]
fn malformed_parameters_name_the_method() {
    let cases: [(Value, &str, &str); 14] = [
        (json!({"method": "notifications/progress"}), "notifications/progress", "progressToken"),
        (
            json!({"method": "notifications/progress", "params": {"progressToken": "a"}}),
            "notifications/progress",
            "progress",
        ),
        (
            json!({"method": "notifications/progress",
                   "params": {"progressToken": true, "progress": 1}}),
            "notifications/progress",
            "a progress token must be a string or an integer",
        ),
        (
            json!({"method": "notifications/progress",
                   "params": {"progressToken": 1, "progress": "half"}}),
            "notifications/progress",
            "invalid type",
        ),
        (
            json!({"method": "notifications/message", "params": {"data": 1}}),
            "notifications/message",
            "level",
        ),
        (
            json!({"method": "notifications/message", "params": {"level": 3}}),
            "notifications/message",
            "invalid type",
        ),
        (
            json!({"method": "notifications/resources/updated"}),
            "notifications/resources/updated",
            "uri",
        ),
        (
            json!({"method": "notifications/resources/updated", "params": {"uri": 1}}),
            "notifications/resources/updated",
            "invalid type",
        ),
        (
            json!({"method": "notifications/cancelled", "params": {"requestId": [1]}}),
            "notifications/cancelled",
            "",
        ),
        (
            json!({"method": "notifications/tasks/status", "params": {"taskId": "t"}}),
            "notifications/tasks/status",
            "status",
        ),
        (
            json!({"method": "notifications/elicitation/complete", "params": {}}),
            "notifications/elicitation/complete",
            "elicitationId",
        ),
        (
            json!({"method": "notifications/tools/list_changed", "params": [1]}),
            "notifications/tools/list_changed",
            "",
        ),
        (
            json!({"method": "notifications/prompts/list_changed", "params": {"_meta": 1}}),
            "notifications/prompts/list_changed",
            "invalid type",
        ),
        (
            json!({"method": "notifications/resources/list_changed", "params": [null]}),
            "notifications/resources/list_changed",
            "",
        ),
    ];
    for (mut message, method, needle) in cases {
        message["jsonrpc"] = json!("2.0");
        let n = notification(&message);
        let error: InvalidNotification =
            ServerNotification::from_notification(&n).expect_err(&format!("{message} decoded"));
        assert_eq!(error.method, method);
        assert!(error.reason.contains(needle), "{message}: {:?} lacks {needle:?}", error.reason);
        assert_eq!(error.to_string(), format!("{method} has invalid parameters: {}", error.reason));
    }
}
