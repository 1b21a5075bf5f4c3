//! `mcpc tasks` (the tasks of the 2025-11-25 revision): list, get,
//! cancel, result; and `call --task`.

use std::time::Duration;

use mcp_proto::types::{CallToolResult, JsonObject, Task};
use serde_json::json;

use crate::cli::{Output, TasksCommand};
use crate::ctx::Ctx;
use crate::failure::Failure;
use crate::output::{emit, emit_keyed, listing, note, one_line, table, tool_result};

/// `mcpc tasks ...` (the tasks of the 2025-11-25 revision).
pub(crate) async fn tasks(ctx: &Ctx<'_>, command: &TasksCommand) -> Result<u8, Failure> {
    let (words, what) = match command {
        TasksCommand::List { server } => {
            let server = ctx.pick(server.as_deref())?;
            let list = ctx.with_client(&server, |c| async move { c.list_tasks().await }).await?;
            listing(ctx.output(), &server, ("tasks", "task"), &list, task_row);
            return Ok(0);
        }
        TasksCommand::Get { words } => (words, "get"),
        TasksCommand::Cancel { words } => (words, "cancel"),
        TasksCommand::Result { words } => (words, "result"),
    };
    let (server, rest) = ctx.split(words, 1)?;
    let id = rest[0].clone();
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

/// `call --task`: starts the call as a task; prints it and, unless
/// detached, waits for its result.
pub(crate) async fn start(
    ctx: &Ctx<'_>,
    server: &str,
    tool: &str,
    arguments: JsonObject,
    detach: bool,
) -> Result<u8, Failure> {
    let tool = tool.to_owned();
    let created = ctx
        .with_client(server, |c| async move { c.call_tool_as_task(&tool, arguments, None).await })
        .await?;
    let task = created.task;
    if detach {
        print_task(ctx.output(), server, &task);
        return Ok(0);
    }
    note(&format!("mcpc: task {} {}", one_line(&task.task_id), one_line(task.status.as_str())));
    task_result(ctx, server, task.task_id).await
}

/// Waits for a task's result (`tasks/result`, up to `--max-time`) and
/// prints it as a tool's result.
async fn task_result(ctx: &Ctx<'_>, server: &str, id: String) -> Result<u8, Failure> {
    let mut options = ctx.request_options();
    options.timeout = Some(Duration::from_secs_f64(ctx.g.max_time));
    let result: CallToolResult = ctx
        .with_client(server, |c| async move { c.task_result::<CallToolResult>(&id, options).await })
        .await?;
    Ok(tool_result(ctx.output(), &result))
}
