//! `mcpc tasks` and `call --task`, for the tasks of each era: the tasks
//! extension of 2026-07-28 (`io.modelcontextprotocol/tasks`: get, update,
//! cancel; the server decides which call is a task) and the experimental
//! tasks of 2025-11-25 (list, get, cancel, result; the client asks for a
//! task).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_peer::tasks::ToolCallStart;
use mcp_proto::types::{CallToolResult, DetailedTask, JsonObject, Task, TaskStatus};
use serde_json::{Value, json};

use crate::cli::{Output, TasksCommand};
use crate::ctx::Ctx;
use crate::failure::{Failure, Kind};
use crate::output::{emit, emit_keyed, listing, note, one_line, table, tool_result};

/// `mcpc tasks ...`.
pub(crate) async fn tasks(ctx: &Ctx<'_>, command: &TasksCommand) -> Result<u8, Failure> {
    let (words, what) = match command {
        TasksCommand::List { server } => {
            let server = ctx.pick(server.as_deref())?;
            if stateless(ctx, &server).await? {
                return Err(extension_has_none(&server, "list", "tasks/list"));
            }
            let list = ctx.with_client(&server, |c| async move { c.list_tasks().await }).await?;
            listing(ctx.output(), &server, ("tasks", "task"), &list, task_row);
            return Ok(0);
        }
        TasksCommand::Get { words } => (words, "get"),
        TasksCommand::Cancel { words } => (words, "cancel"),
        TasksCommand::Result { words } => (words, "result"),
        TasksCommand::Update { words, json } => {
            let (server, rest) = ctx.split(words, 1)?;
            return update(ctx, &server, rest[0].clone(), json).await;
        }
    };
    let (server, rest) = ctx.split(words, 1)?;
    let id = rest[0].clone();
    if stateless(ctx, &server).await? {
        return match what {
            "result" => Err(extension_has_none(&server, "result", "tasks/result")),
            "cancel" => {
                let task = ctx
                    .with_client(&server, |c| async move {
                        c.task_cancel(&id).await?;
                        c.task_status(&id).await
                    })
                    .await?;
                Ok(print_detailed(ctx.output(), &server, &task))
            }
            _ => {
                let task =
                    ctx.with_client(&server, |c| async move { c.task_status(&id).await }).await?;
                Ok(print_detailed(ctx.output(), &server, &task))
            }
        };
    }
    match what {
        "result" => task_result(ctx, &server, id).await,
        _ => {
            let cancel = what == "cancel";
            let task = ctx
                .with_client(&server, |c| async move {
                    if cancel { c.cancel_task(&id).await } else { c.get_task(&id).await }
                })
                .await?;
            print_task(ctx.output(), &server, &task);
            Ok(0)
        }
    }
}

/// Whether the server speaks the stateless era, whose tasks are the
/// extension's (connecting first, which settles the era).
async fn stateless(ctx: &Ctx<'_>, server: &str) -> Result<bool, Failure> {
    ctx.with_client(
        server,
        |c| async move { Ok(c.protocol_version().is_some_and(|v| v.is_modern())) },
    )
    .await
}

/// A `tasks` subcommand the extension has no method for.
fn extension_has_none(server: &str, command: &str, method: &str) -> Failure {
    Failure::usage(format!(
        "mcpc tasks {command}: the tasks extension (2026-07-28) that MCP server {server:?} \
         speaks has no {method}; `mcpc tasks get {server} TASK_ID` shows a task, and its result \
         once done"
    ))
    .with_server(server)
}

/// `tasks update`: the responses to a waiting task's input requests (the
/// extension's `tasks/update`), then the task's state.
async fn update(ctx: &Ctx<'_>, server: &str, id: String, json: &str) -> Result<u8, Failure> {
    let responses = match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return Err(Failure::usage("--json must be a JSON object of responses by key")),
        Err(e) => return Err(Failure::usage(format!("--json is not valid JSON: {e}"))),
    };
    if !stateless(ctx, server).await? {
        return Err(Failure::usage(format!(
            "mcpc tasks update is of the tasks extension (2026-07-28); MCP server {server:?} \
             speaks an earlier revision, whose tasks take no input this way"
        ))
        .with_server(server));
    }
    let task = ctx
        .with_client(server, |c| async move {
            c.task_update(&id, responses).await?;
            c.task_status(&id).await
        })
        .await?;
    Ok(print_detailed(ctx.output(), server, &task))
}

fn task_row(t: &Task) -> Vec<String> {
    vec![
        format!("  {}", t.task_id),
        t.status.to_string(),
        t.last_updated_at.clone(),
        t.status_message.clone().unwrap_or_default(),
    ]
}

fn print_task(output: Output, server: &str, task: &Task) {
    match output {
        Output::Json => emit_keyed(server, "task", json!(task)),
        Output::Text => {
            for line in table(&[task_row(task)]) {
                emit(line.trim_start());
            }
        }
    }
}

/// Prints an extension task: its state; what it waits for (the keys of
/// its input requests and their methods); its result once completed (as a
/// tool's result) or its error once failed. The exit code: 1 when the
/// result is the tool's error, else 0.
fn print_detailed(output: Output, server: &str, task: &DetailedTask) -> u8 {
    let result =
        task.result.as_ref().and_then(|r| serde_json::from_value::<CallToolResult>(r.clone()).ok());
    let is_error = result.as_ref().is_some_and(|r| r.is_error == Some(true));
    match output {
        Output::Json => emit_keyed(server, "task", json!(task)),
        Output::Text => {
            let row = vec![
                task.task_id.clone(),
                task.status.to_string(),
                task.last_updated_at.clone(),
                task.status_message.clone().unwrap_or_default(),
            ];
            for line in table(&[row]) {
                emit(&line);
            }
            for (key, request) in task.input_requests.iter().flatten() {
                let method = serde_json::to_value(request)
                    .ok()
                    .and_then(|r| r.get("method").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_default();
                emit(&format!("  needs input: {} ({})", one_line(key), one_line(&method)));
            }
            if let Some(error) = &task.error {
                emit(&format!("error {}: {}", error.code, one_line(&error.message)));
            }
            if let Some(result) = &result {
                tool_result(Output::Text, result);
            }
        }
    }
    u8::from(is_error)
}

/// `call --task`: by the server's era, the extension's task (the server
/// decides; followed here, or printed with `--detach`) or a task of
/// 2025-11-25 (asked for; its result waited for, or printed with
/// `--detach`).
pub(crate) async fn start(
    ctx: &Ctx<'_>,
    server: &str,
    tool: &str,
    arguments: JsonObject,
    detach: bool,
) -> Result<u8, Failure> {
    if stateless(ctx, server).await? {
        return start_extension(ctx, server, tool, arguments, detach).await;
    }
    // The call's checks (policy, pins, approval) and its audit line, as
    // for any call.
    let created = ctx
        .registry
        .call_tool_as_task(server, tool, Some(arguments), None)
        .await
        .map_err(|e| ctx.fail(e))?;
    let task = created.task;
    if detach {
        print_task(ctx.output(), server, &task);
        return Ok(0);
    }
    status_note(&task.task_id, task.status.as_str());
    task_result(ctx, server, task.task_id).await
}

/// How long `call --task` waits for `tasks/cancel` of a task it stopped
/// following at `--max-time`.
const CANCEL_WITHIN: Duration = Duration::from_secs(5);

/// A task's status on stderr: `mcpc: task ID STATUS`.
fn status_note(id: &str, status: &str) {
    note(&format!("mcpc: task {} {}", one_line(id), one_line(status)));
}

/// `call --task` against a stateless-era server: the call, then the task
/// the server made of it followed to its end (each new status on stderr,
/// input requests answered as a call's are, up to `--max-time`), or
/// printed with `--detach`. A server that answers at once (no task) has
/// its result printed.
async fn start_extension(
    ctx: &Ctx<'_>,
    server: &str,
    tool: &str,
    arguments: JsonObject,
    detach: bool,
) -> Result<u8, Failure> {
    let options = ctx.request_options();
    let started = ctx
        .registry
        .call_tool_start(server, tool, Some(arguments), options)
        .await
        .map_err(|e| ctx.fail(e))?;
    let task = match started {
        ToolCallStart::Task(task) => task,
        ToolCallStart::Complete(result) => {
            note(&format!("mcpc: MCP server {server:?} answered at once, with no task"));
            return Ok(tool_result(ctx.output(), &result));
        }
        _ => return Err(Failure::new(Kind::Protocol, "an answer of a kind mcpc does not know")),
    };
    if detach {
        return Ok(print_detailed(ctx.output(), server, &task));
    }
    // Each status once, as it changes (the handle's first).
    let last: Arc<Mutex<Option<TaskStatus>>> = Arc::new(Mutex::new(None));
    let observe = move |t: &DetailedTask| {
        let mut last = last.lock().unwrap_or_else(PoisonError::into_inner);
        if last.as_ref() != Some(&t.status) {
            status_note(&t.task_id, t.status.as_str());
            *last = Some(t.status.clone());
        }
    };
    let limit = Duration::from_secs_f64(ctx.g.max_time);
    let id = task.task_id.clone();
    let follow =
        ctx.with_client(server, |c| async move { c.follow_tool_task(&task, &observe).await });
    if let Ok(result) = tokio::time::timeout(limit, follow).await {
        return Ok(tool_result(ctx.output(), &result?));
    }
    // The caller wanted a result, not a task left running: it is cancelled
    // (within a bound) before mcpc exits, and the message says whether.
    let cancel = ctx.with_client(server, |c| async move { c.task_cancel(&id).await });
    let cancelled = match tokio::time::timeout(CANCEL_WITHIN, cancel).await {
        Ok(Ok(())) => "it was cancelled".to_owned(),
        Ok(Err(e)) => format!("cancelling it failed: {}", e.message),
        Err(_) => format!("cancelling it did not end within {CANCEL_WITHIN:?}"),
    };
    Err(Failure::new(
        Kind::Timeout,
        format!("the task did not end within --max-time ({limit:?}); {cancelled}"),
    )
    .with_server(server))
}

/// Waits for a task's result (`tasks/result`, up to `--max-time`) and
/// prints it as a tool's result (2025-11-25).
async fn task_result(ctx: &Ctx<'_>, server: &str, id: String) -> Result<u8, Failure> {
    let mut options = ctx.request_options();
    options.timeout = Some(Duration::from_secs_f64(ctx.g.max_time));
    let result: CallToolResult = ctx
        .with_client(server, |c| async move { c.task_result::<CallToolResult>(&id, options).await })
        .await?;
    Ok(tool_result(ctx.output(), &result))
}
