//! The tools that send notifications mid-call: progress (`slow`), list
//! changes (`change`) and log messages (`log`).

use std::time::Duration;

use mcp_proto::methods;
use mcp_server_io::logging::LOG_LEVELS;
use serde_json::{Value, json};

use super::{Args, Call, MAX_SLOW_MS, MAX_STEPS, Outcome, text, tool_error};
use crate::modern::Change;

pub(super) fn slow(call: Call, args: &Args) -> Outcome {
    let (ms, steps) = match (args.integer("ms", MAX_SLOW_MS), args.opt_integer("steps", MAX_STEPS))
    {
        (Ok(ms), Ok(steps)) => (ms, steps.unwrap_or(0)),
        (Err(e), _) | (_, Err(e)) => return Outcome::Reply(Ok(tool_error(e))),
    };
    Outcome::Spawn(Box::pin(async move {
        let total = Duration::from_millis(ms);
        if steps == 0 {
            tokio::time::sleep(total).await;
        } else {
            let start = tokio::time::Instant::now();
            for i in 1..=steps {
                // Sleeping to absolute points keeps the total at `ms`
                // however long each wake-up takes.
                let at = start + total.mul_f64(i as f64 / steps as f64);
                tokio::time::sleep_until(at).await;
                if let Some(token) = &call.progress_token {
                    call.notify(
                        methods::NOTIFICATION_PROGRESS,
                        Some(json!({
                            "progressToken": token,
                            "progress": i,
                            "total": steps,
                            "message": format!("step {i} of {steps}"),
                        })),
                    );
                }
            }
        }
        text("done")
    }))
}

pub(super) fn change(call: &Call, args: &mut Args) -> Result<Value, String> {
    let list = args.opt_string("list")?;
    match list.as_deref().unwrap_or("tools") {
        "tools" => {
            let now_listed = call.server.toggle_extra_tool();
            call.changed(methods::NOTIFICATION_TOOLS_LIST_CHANGED, &Change::Tools);
            Ok(text(if now_listed { "extra tool added" } else { "extra tool removed" }))
        }
        "resources" => {
            call.changed(methods::NOTIFICATION_RESOURCES_LIST_CHANGED, &Change::Resources);
            Ok(text("resource list changed"))
        }
        "prompts" => {
            call.changed(methods::NOTIFICATION_PROMPTS_LIST_CHANGED, &Change::Prompts);
            Ok(text("prompt list changed"))
        }
        other => Err(format!("list must be one of tools, resources, prompts; got {other:?}")),
    }
}

pub(super) fn log(call: &Call, args: &mut Args) -> Result<Value, String> {
    let level = args.string("level")?;
    let message = args.string("message")?;
    let Some(index) = LOG_LEVELS.iter().position(|l| *l == level) else {
        return Err(format!("level must be one of {}", LOG_LEVELS.join(", ")));
    };
    match &call.modern {
        Some(meta) => match meta.log_level {
            None => {
                return Ok(text(
                    "not sent: the request's _meta has no io.modelcontextprotocol/logLevel",
                ));
            }
            Some(min) if index < min => {
                return Ok(text("not sent: below the request's io.modelcontextprotocol/logLevel"));
            }
            Some(_) => {}
        },
        None if !call.server.log_level_enabled(index) => {
            return Ok(text("not sent: below the level set by logging/setLevel"));
        }
        None => {}
    }
    call.notify(
        methods::NOTIFICATION_MESSAGE,
        Some(json!({ "level": level, "logger": "mcp-testkit", "data": message })),
    );
    Ok(text("logged"))
}
