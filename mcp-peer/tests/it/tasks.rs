//! Tasks: created, polled, listed and cancelled on the testkit; and a
//! scripted stateless-era server's tasks followed to their result through
//! their input requests, failed, abandoned, or given to a client that did
//! not declare them.

use std::sync::Arc;
use std::time::Duration;

use mcp_peer::memory::{self, MemoryError, MemoryTransport};
use mcp_peer::{Client, ClientOptions, RequestOptions, ServerNotification};
use mcp_proto::client::ClientError;
use mcp_proto::types::CallToolResult;
use serde_json::{Value, json};

use crate::common::{Ada, Pair, Seen, options, pair, text};

#[tokio::test(start_paused = true)]
async fn tasks_are_created_polled_listed_cancelled_and_their_results_awaited() {
    use mcp_proto::types::TaskStatus;
    let Pair { client, .. } = pair(options());
    let mut stream = client.notifications();
    let created =
        client.call_tool_as_task("echo", json!({"message": "later"}), None).await.unwrap();
    let id = created.task.task_id.clone();
    let result: CallToolResult = client.task_result(&id, RequestOptions::default()).await.unwrap();
    assert_eq!(text(&result), "later");
    let done = client.get_task(&id).await.unwrap();
    assert_eq!(done.status, TaskStatus::Completed);
    // Its status changes came as notifications.
    let mut statuses = Vec::new();
    while statuses.last() != Some(&TaskStatus::Completed) {
        match stream.recv().await {
            Some(ServerNotification::TaskStatus(t)) if t.task_id == id => {
                statuses.push(t.status.clone())
            }
            Some(_) => {}
            None => panic!("the stream ended"),
        }
    }

    let hanging =
        client.call_tool_as_task("hang", (), Some(Duration::from_secs(60))).await.unwrap();
    let hanging_id = hanging.task.task_id;
    assert_eq!(hanging.task.ttl, Some(60_000));
    let listed = client.list_tasks().await.unwrap();
    assert!(listed.iter().any(|t| t.task_id == hanging_id && t.status == TaskStatus::Working));
    let cancelled = client.cancel_task(&hanging_id).await.unwrap();
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    // A terminal task cannot be cancelled again.
    assert!(client.cancel_task(&hanging_id).await.is_err());
}

/// A stateless-era server, scripted, that makes a task of every tool call:
/// working, then input_required (an elicitation), then completed with the
/// name it was given; what it received is recorded.
fn task_server(fail: bool) -> (Client<MemoryTransport>, Seen) {
    task_server_with(fail, mcp_peer::DEFAULT_TASK_TIMEOUT)
}

fn task_server_with(fail: bool, task_timeout: Duration) -> (Client<MemoryTransport>, Seen) {
    let mut o =
        ClientOptions::new("tasks").with_extension(mcp_proto::types::TASKS_EXTENSION, json!({}));
    o.handlers.elicitation = Some(Arc::new(Ada));
    o.task_timeout = task_timeout;
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, o);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        let mut polls = 0;
        let mut name = None::<String>;
        while let Some(bytes) = end.recv().await {
            let m: Value = serde_json::from_slice(&bytes).unwrap();
            log.lock().unwrap().push(m.clone());
            let Some(id) = m.get("id").cloned() else { continue };
            let task = |status: &str| {
                json!({"resultType": "complete", "taskId": "t-1",
                "status": status, "createdAt": "2026-12-01T00:00:00Z",
                "lastUpdatedAt": "2026-12-01T00:00:00Z", "ttlMs": 60000, "pollIntervalMs": 200})
            };
            let result = match m["method"].as_str().unwrap() {
                "server/discover" => {
                    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}})
                }
                "tools/call" => {
                    let mut t = task("working");
                    t["resultType"] = json!("task");
                    t
                }
                "tasks/get" => {
                    polls += 1;
                    match (polls, &name) {
                        (1, _) => task("working"),
                        (_, None) => {
                            let mut t = task("input_required");
                            t["inputRequests"] = json!({"who": {"method": "elicitation/create",
                                "params": {"message": "Your name?", "requestedSchema": {"type": "object",
                                "properties": {"name": {"type": "string"}}}}}});
                            t
                        }
                        (_, Some(_)) if fail => {
                            let mut t = task("failed");
                            t["error"] = json!({"code": -32603, "message": "the job broke"});
                            t
                        }
                        (_, Some(n)) => {
                            let mut t = task("completed");
                            t["result"] = json!({"content": [{"type": "text", "text": format!("hello {n}")}]});
                            t
                        }
                    }
                }
                "tasks/update" => {
                    name = m["params"]["inputResponses"]["who"]["content"]["name"]
                        .as_str()
                        .map(str::to_owned);
                    json!({"resultType": "complete"})
                }
                _ => json!({"resultType": "complete"}),
            };
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
            end.send(reply.to_string().as_bytes());
        }
    });
    (client, seen)
}

#[tokio::test(start_paused = true)]
async fn a_task_handle_is_followed_to_its_result_through_its_input_requests() {
    let (client, seen) = task_server(false);
    let r = client.call_tool("job", ()).await.unwrap();
    assert_eq!(text(&r), "hello Ada");
    let log = seen.lock().unwrap().clone();
    let methods: Vec<&str> = log.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        ["server/discover", "tools/call", "tasks/get", "tasks/get", "tasks/update", "tasks/get"]
    );
    // The extension is declared on every request; the update answers the key once.
    for m in &log {
        let caps = &m["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
        assert!(caps["extensions"].get("io.modelcontextprotocol/tasks").is_some(), "{m}");
    }
    assert_eq!(log[4]["params"]["taskId"], "t-1");
}

#[tokio::test(start_paused = true)]
async fn a_call_for_its_json_follows_a_task_to_its_result_too() {
    let (client, _) = task_server(false);
    let raw = client.call_tool_json("job", (), RequestOptions::default()).await.unwrap();
    let result: serde_json::Value = serde_json::from_str(raw.get()).unwrap();
    assert_eq!(result["content"][0]["text"], "hello Ada", "{result}");
    assert!(result.get("taskId").is_none(), "{result}");
}

#[tokio::test(start_paused = true)]
async fn a_failed_task_is_the_call_s_error_and_a_started_call_gives_the_handle() {
    let (client, _) = task_server(true);
    let err = client.call_tool("job", ()).await.unwrap_err();
    match err {
        MemoryError::Protocol(ClientError::Rpc { error, .. }) => {
            assert_eq!(error.message, "the job broke")
        }
        other => panic!("{other:?}"),
    }
    match client.call_tool_start("job", (), RequestOptions::default()).await.unwrap() {
        mcp_peer::tasks::ToolCallStart::Task(t) => {
            assert_eq!(t.task_id, "t-1");
            assert_eq!(t.poll_interval_ms, Some(200));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_started_task_is_followed_with_each_state_observed() {
    let (client, seen) = task_server(false);
    let started = client.call_tool_start("job", (), RequestOptions::default()).await.unwrap();
    let mcp_peer::tasks::ToolCallStart::Task(task) = started else { panic!("{started:?}") };
    let states = Arc::new(std::sync::Mutex::new(Vec::new()));
    let observed = states.clone();
    let observe = move |t: &mcp_proto::types::DetailedTask| {
        observed.lock().unwrap().push(t.status.as_str().to_owned());
    };
    let r = client.follow_tool_task(&task, &observe).await.unwrap();
    assert_eq!(text(&r), "hello Ada");
    // The handle first, then each tasks/get; the input asked and answered.
    let states = states.lock().unwrap().clone();
    assert_eq!(states, ["working", "working", "input_required", "completed"]);
    let log = seen.lock().unwrap().clone();
    let methods: Vec<&str> = log.iter().map(|m| m["method"].as_str().unwrap()).collect();
    assert_eq!(
        methods,
        ["server/discover", "tools/call", "tasks/get", "tasks/get", "tasks/update", "tasks/get"]
    );
    // A failed task is the follower's error.
    let (client, _) = task_server(true);
    let started = client.call_tool_start("job", (), RequestOptions::default()).await.unwrap();
    let mcp_peer::tasks::ToolCallStart::Task(task) = started else { panic!("{started:?}") };
    let err = client.follow_tool_task(&task, &|_| {}).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::Rpc { .. })), "{err:?}");
}

#[tokio::test(start_paused = true)]
async fn a_task_followed_too_long_or_abandoned_is_cancelled() {
    let cancelled = |seen: &Seen| {
        let log = seen.lock().unwrap();
        log.iter()
            .filter(|m| m["method"] == "tasks/cancel" && m["params"]["taskId"] == "t-1")
            .count()
    };
    let (client, seen) = task_server_with(false, Duration::from_millis(100));
    let err = client.call_tool("job", ()).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::Timeout { .. })), "{err:?}");
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(cancelled(&seen), 1);
    // Dropping the call while it follows the task cancels the task.
    let (client, seen) = task_server(false);
    let _ = tokio::time::timeout(Duration::from_millis(300), client.call_tool("job", ())).await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(cancelled(&seen), 1);
}

#[tokio::test(start_paused = true)]
async fn a_task_handle_to_a_client_that_did_not_declare_tasks_is_invalid() {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, ClientOptions::new("no-tasks"));
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let m: Value = serde_json::from_slice(&bytes).unwrap();
            let result = match m["method"].as_str().unwrap() {
                "server/discover" => {
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {}})
                }
                _ => json!({"resultType": "task", "taskId": "x", "status": "working"}),
            };
            end.send(
                json!({"jsonrpc": "2.0", "id": m["id"], "result": result}).to_string().as_bytes(),
            );
        }
    });
    let err = client.call_tool("job", ()).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::InvalidResult { .. })), "{err:?}");
}
