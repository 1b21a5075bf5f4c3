//! The conformance suite's fixture tools of the tasks extension
//! (`--conformance-fixtures`, stateless era only): the tools its `tasks-*`
//! server scenarios call by name.
//!
//! | tool | task support | does |
//! |---|---|---|
//! | `greet` | none | `name`: `Hello, <name>!` |
//! | `slow_compute` | optional | `seconds` (at most 600), `label`: sleeps, then `Computed <label> in <seconds>s`; a task from a client with the extension |
//! | `failing_job` | required | after 1 s, a tool error (`isError: true`: the task completes) |
//! | `protocol_error_job` | required | after 100 ms, a JSON-RPC error (the task fails) |
//! | `confirm_delete` | required | `filename`: asks `elicitation/create` (key `confirm`), then `Deleted <filename>` or `Kept <filename>` |
//! | `multi_input` | required | asks two `elicitation/create` at once (keys `first`, `second`), then both answers as text |
//! | `test_tool_with_task` | required | an `input_required` round asking `user_name`, then a task ending in `Hello, <name>!` |

use std::time::Duration;

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_server_io::stateless::input_required;
use serde_json::{Map, Value, json};

use crate::modern::RequestMeta;
use crate::stateless_tasks::{Start, ask};
use crate::tools::{Outcome, text, tool_error};

/// The longest `slow_compute`: ten minutes.
const MAX_SECONDS: f64 = 600.0;

/// The fixture tools' definitions.
pub(crate) fn definitions() -> Vec<Value> {
    let object = |properties: Value| json!({ "type": "object", "properties": properties });
    let string = json!({ "type": "string" });
    [
        ("greet", "Greets by name (never a task)", object(json!({ "name": string })), None),
        (
            "slow_compute",
            "Sleeps `seconds`, then answers (a task when the client declares the extension)",
            object(json!({ "seconds": { "type": "number" }, "label": string })),
            Some("optional"),
        ),
        (
            "failing_job",
            "Fails as a tool after a second (a task)",
            object(json!({})),
            Some("required"),
        ),
        (
            "protocol_error_job",
            "Fails with a protocol error (a task)",
            object(json!({})),
            Some("required"),
        ),
        (
            "confirm_delete",
            "Asks to confirm a deletion, then answers (a task)",
            object(json!({ "filename": string })),
            Some("required"),
        ),
        ("multi_input", "Asks two questions at once (a task)", object(json!({})), Some("required")),
        (
            "test_tool_with_task",
            "Asks the user's name, then greets in a task",
            object(json!({})),
            Some("required"),
        ),
    ]
    .into_iter()
    .map(|(name, description, schema, support)| {
        let mut tool = json!({ "name": name, "description": description, "inputSchema": schema });
        if let Some(support) = support {
            tool["execution"] = json!({ "taskSupport": support });
        }
        tool
    })
    .collect()
}

/// A fixture called as a plain call (`greet`, and `slow_compute` from a
/// client without the extension); `None` when `name` is none of them.
pub(crate) fn run(name: &str, arguments: &Map<String, Value>) -> Option<Outcome> {
    match name {
        "greet" => {
            let name = arguments.get("name").and_then(Value::as_str).unwrap_or("World");
            Some(Outcome::Reply(Ok(text(format!("Hello, {name}!")))))
        }
        "slow_compute" => Some(match slow_compute(arguments) {
            Ok((seconds, done)) => Outcome::Spawn(Box::pin(async move {
                tokio::time::sleep(seconds).await;
                done
            })),
            Err(e) => Outcome::Reply(Ok(tool_error(e))),
        }),
        _ => None,
    }
}

/// `slow_compute`'s sleep and result.
fn slow_compute(arguments: &Map<String, Value>) -> Result<(Duration, Value), String> {
    let seconds = match arguments.get("seconds") {
        None | Some(Value::Null) => 0.0,
        Some(n) => n
            .as_f64()
            .filter(|s| (0.0..=MAX_SECONDS).contains(s))
            .ok_or_else(|| format!("seconds must be a number from 0 to {MAX_SECONDS}, got {n}"))?,
    };
    let label = arguments.get("label").and_then(Value::as_str).unwrap_or("slow_compute");
    Ok((Duration::from_secs_f64(seconds), text(format!("Computed {label} in {seconds}s"))))
}

/// What a fixture starts when the server may make a task of it; `None`
/// when `name` is not one.
pub(crate) fn start(
    name: &str,
    arguments: &Map<String, Value>,
    meta: &RequestMeta,
) -> Option<Start> {
    let string = |key: &str| arguments.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    Some(match name {
        "slow_compute" => match slow_compute(arguments) {
            Ok((seconds, done)) => Start::Task(Box::new(move |_, _| {
                Box::pin(async move {
                    tokio::time::sleep(seconds).await;
                    Ok(done)
                })
            })),
            Err(e) => Start::Now(Ok(tool_error(e))),
        },
        "failing_job" => Start::Task(Box::new(|_, _| {
            Box::pin(async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Ok(tool_error("failing_job failed on purpose".to_owned()))
            })
        })),
        "protocol_error_job" => Start::Task(Box::new(|_, _| {
            Box::pin(async {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Err(ErrorObject::new(
                    error_code::INTERNAL_ERROR,
                    "protocol_error_job failed with a protocol error on purpose",
                ))
            })
        })),
        "confirm_delete" => {
            let filename = string("filename");
            Start::Task(Box::new(move |server, task| {
                Box::pin(async move {
                    let message = format!("Delete {filename}?");
                    let requests = one("confirm", elicit(&message, "confirm", "boolean"));
                    let answers = ask(&server, &task, requests).await?;
                    let confirmed = accepted(answers.get("confirm").unwrap_or(&Value::Null))
                        .and_then(|c| c.get("confirm"))
                        .and_then(Value::as_bool)
                        == Some(true);
                    let verb = if confirmed { "Deleted" } else { "Kept" };
                    Ok(text(format!("{verb} {filename}")))
                })
            }))
        }
        "multi_input" => Start::Task(Box::new(|server, task| {
            Box::pin(async move {
                let mut requests = one("first", elicit("Your name?", "name", "string"));
                requests.extend(one("second", elicit("Proceed?", "confirm", "boolean")));
                let answers = ask(&server, &task, requests).await?;
                let answer = |key: &str| {
                    let answer = answers.get(key).unwrap_or(&Value::Null);
                    accepted(answer).map(|content| Value::Object(content.clone()).to_string())
                };
                let (first, second) = (answer("first"), answer("second"));
                Ok(text(format!(
                    "first: {}, second: {}",
                    first.as_deref().unwrap_or("declined"),
                    second.as_deref().unwrap_or("declined")
                )))
            })
        })),
        "test_tool_with_task" => {
            let answer = meta.input_responses.as_ref().and_then(|r| r.get("user_name"));
            let Some(answer) = answer else {
                let request = elicit("What is your name?", "name", "string");
                let state = Some("test_tool_with_task:user_name".to_owned());
                return Some(Start::Now(Ok(input_required(
                    Some(json!({ "user_name": request })),
                    state,
                ))));
            };
            let name = accepted(answer)
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("anonymous")
                .to_owned();
            Start::Task(Box::new(move |_, _| {
                Box::pin(async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Ok(text(format!("Hello, {name}!")))
                })
            }))
        }
        _ => return None,
    })
}

/// `{key: request}`.
fn one(key: &str, request: Value) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert(key.to_owned(), request);
    map
}

/// An `elicitation/create` input request of one field.
fn elicit(message: &str, field: &str, kind: &str) -> Value {
    json!({
        "method": methods::ELICITATION_CREATE,
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": { field: { "type": kind } },
                "required": [field],
            },
        },
    })
}

/// The content of an accepted elicitation answer.
fn accepted(answer: &Value) -> Option<&Map<String, Value>> {
    (answer.get("action").and_then(Value::as_str) == Some("accept"))
        .then(|| answer.get("content").and_then(Value::as_object))
        .flatten()
}
