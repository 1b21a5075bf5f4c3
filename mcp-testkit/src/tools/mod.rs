//! The tools: their definitions (what `tools/list` shows) and what each does.
//!
//! Results are `CallToolResult` JSON built with `serde_json::json!`. Invalid
//! arguments give a tool execution error (`isError: true`), as the
//! 2025-11-25 tools page asks; an unknown tool is a protocol error (`-32602`).
//!
//! This module holds the call, the outcome and the dispatch by name; the
//! definitions are in `definitions.rs`, the tools themselves in one file per
//! family (`content.rs`, `faults.rs`, `notifications.rs`, `ask.rs`), and the
//! arguments' reader in `args.rs`.

mod args;
mod ask;
mod content;
mod definitions;
mod faults;
mod notifications;

use std::borrow::Cow;

use mcp_proto::jsonrpc::{ErrorObject, error_code, text_result_json};
use mcp_proto::methods;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::modern::{self, Change, RequestMeta};
use crate::server::{Addr, BoxFuture, Server};
use crate::tasks::with_related_task;

use args::Args;
pub(crate) use args::StrOrValue;
#[cfg(test)]
pub(crate) use args::tests::MEMBER_TEXTS;
use ask::{ask, modern_tool};
use content::{add, echo_message};
pub(crate) use content::{text, tool_error, value_of};
pub(crate) use definitions::{definitions, param_headers};
use faults::{ascii_text, crash, noisy, spawn_child};
use notifications::{change, log, slow};

/// The longest `slow` sleep: ten minutes.
const MAX_SLOW_MS: u64 = 600_000;
/// The most progress steps `slow` sends.
const MAX_STEPS: u64 = 10_000;
/// The largest `big` text and `noisy` long line: 64 MiB.
const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The most stderr lines `noisy` writes.
const MAX_NOISY_LINES: u64 = 10_000;

/// One `tools/call` in progress.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) server: Server,
    pub(crate) id: Addr,
    pub(crate) progress_token: Option<Value>,
    /// The task running the call, for a task-augmented call.
    pub(crate) task: Option<String>,
    /// The request's metadata, for a stateless-era call.
    pub(crate) modern: Option<RequestMeta>,
}

impl Call {
    /// The request the call's messages belong to: the `tools/call`, or none
    /// for a task (its request was answered when the task was created).
    fn related(&self) -> Option<Addr> {
        match self.task {
            Some(_) => None,
            None => Some(self.id.clone()),
        }
    }

    /// Sends a notification that belongs to the call; a task's carry the
    /// related-task `_meta`.
    pub(crate) fn notify(&self, method: &str, params: Option<Value>) {
        let params = match &self.task {
            Some(task) => Some(with_related_task(params.unwrap_or_else(|| json!({})), task)),
            None => params,
        };
        self.server.notify(method, params, self.related());
    }

    /// Announces a list change: to a legacy call as a notification related
    /// to it (a stateless-era request gets none: list changes are not
    /// request-scoped there), and to every `subscriptions/listen` stream
    /// that asked for it.
    fn changed(&self, legacy_method: &str, change: &Change) {
        if self.modern.is_none() {
            self.notify(legacy_method, None);
        }
        self.server.broadcast(change);
    }
}

/// What running a tool gives.
pub(crate) enum Outcome {
    /// The reply, ready now.
    Reply(Result<Value, ErrorObject>),
    /// A result ready now, as JSON text written as it is (`echo`'s: no
    /// value built on the way; in the stateless era the session adds
    /// `resultType` and `serverInfo` to the text).
    Text(Box<RawValue>),
    /// A result that needs waiting for: run it as its own task.
    Spawn(BoxFuture),
    /// No reply at all (the process is on its way out).
    NoReply,
}

/// Runs the tool `name` with its arguments as the client wrote them (an
/// object, or none): `echo`, the benchmark's hot path, decodes only its
/// message; `annotated` answers their text; every other tool takes them
/// as a map.
pub(crate) fn run_text(call: Call, name: &str, arguments: Option<&str>) -> Outcome {
    if name == "echo" {
        // In the stateless era the session adds its members to the text.
        return match echo_argument(arguments) {
            Ok(Ok(message)) => Outcome::Text(text_result_json(&message)),
            Ok(Err(message)) => Outcome::Reply(Ok(tool_error(message))),
            Err(error) => Outcome::Reply(Err(error)),
        };
    }
    if name == "annotated" {
        // The arguments exactly as the client wrote them.
        return Outcome::Reply(Ok(text(arguments.unwrap_or("{}"))));
    }
    match arguments_map(arguments) {
        Ok(map) => run(call, name, map),
        Err(error) => Outcome::Reply(Err(error)),
    }
}

/// `echo`'s message read from its arguments' text (one JSON value),
/// borrowed from it when it has no escapes: `Err` when the text is not the arguments (`-32602`),
/// `Ok(Err)` the tool's error (no message, or not a string).
fn echo_argument(arguments: Option<&str>) -> Result<Result<Cow<'_, str>, String>, ErrorObject> {
    #[derive(serde::Deserialize)]
    struct Echo<'a> {
        #[serde(borrow)]
        message: Option<StrOrValue<'a>>,
    }
    // The usual `{"message":"..."}`, found without decoding it.
    let plain = arguments.and_then(|a| mcp_proto::jsonrpc::plain_members(a, ["message"]));
    if let Some([Some(message)]) = plain
        && let Some(message) = mcp_proto::jsonrpc::plain_str(message)
    {
        return Ok(Ok(Cow::Borrowed(message)));
    }
    let message = match arguments.map(serde_json::from_str::<Echo<'_>>) {
        None => None,
        Some(Ok(echo)) => echo.message,
        Some(Err(e)) => return Err(not_arguments(&e)),
    };
    Ok(echo_message(message))
}

/// A call's arguments (an object, or none) as a map: `-32602` when their
/// text holds what a map of values cannot (a number beyond a double's
/// range).
pub(crate) fn arguments_map(arguments: Option<&str>) -> Result<Map<String, Value>, ErrorObject> {
    match arguments {
        None => Ok(Map::new()),
        Some(text) => serde_json::from_str(text).map_err(|e| not_arguments(&e)),
    }
}

fn not_arguments(e: &serde_json::Error) -> ErrorObject {
    ErrorObject::new(error_code::INVALID_PARAMS, format!("invalid tool arguments: {e}"))
}

pub(crate) fn run(call: Call, name: &str, arguments: Map<String, Value>) -> Outcome {
    let mut args = Args(arguments);
    let result = match name {
        "echo" => echo_message(args.0.remove("message").map(StrOrValue::Other))
            .map(|message| text(message.into_owned())),
        "add" => add(&args),
        "slow" => return slow(call, &args),
        "hang" => return Outcome::Spawn(Box::pin(std::future::pending())),
        "fail" => args
            .opt_string("message")
            .map(|m| tool_error(m.unwrap_or_else(|| "failed on purpose".to_owned()))),
        "crash" => match crash(&call, &mut args) {
            Ok(()) => return Outcome::NoReply,
            Err(e) => Err(e),
        },
        "big" => args.integer("bytes", MAX_BYTES).map(|n| text(ascii_text(n as usize))),
        "noisy" => noisy(&call, &args),
        "ask" if call.modern.is_some() => {
            return Outcome::Reply(match (args.string("what"), &call.modern) {
                (Ok(what), Some(meta)) => modern::ask(meta, &what),
                (Err(e), _) => Ok(tool_error(e)),
                (Ok(_), None) => Ok(tool_error("no request metadata".to_owned())),
            });
        }
        "ask" => return ask(call, &mut args),
        "ask_twice" | "retry_once" | "received_log" | "close_subscriptions"
            if call.modern.is_some() =>
        {
            return Outcome::Reply(modern_tool(&call, name));
        }
        "change" => change(&call, &mut args),
        "cancelled_log" => Ok(text(Value::Array(call.server.cancelled_ids()).to_string())),
        "spawn_child" => spawn_child(&args),
        "env" => args.string("name").map(|name| {
            let value = std::env::var_os(&name).map(|v| v.to_string_lossy().into_owned());
            text(json!(value).to_string())
        }),
        "log" => log(&call, &mut args),
        "annotated" => Ok(text(Value::Object(std::mem::take(&mut args.0)).to_string())),
        "touch" => args.string("uri").map(|uri| {
            let mut touched = false;
            if call.modern.is_none() && call.server.is_subscribed(&uri) {
                call.server.notify(
                    methods::NOTIFICATION_RESOURCES_UPDATED,
                    Some(json!({ "uri": uri })),
                    None,
                );
                touched = true;
            }
            touched |= call.server.broadcast(&Change::Updated(uri)) > 0;
            text(if touched { "touched" } else { "not subscribed" })
        }),
        "extra" if call.server.extra_tool() => Ok(text("extra")),
        _ => {
            return Outcome::Reply(Err(ErrorObject::new(
                error_code::INVALID_PARAMS,
                format!("Unknown tool: {name}"),
            )));
        }
    };
    Outcome::Reply(Ok(result.unwrap_or_else(tool_error)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `echo` read from its arguments before they were borrowed: a
    /// value decoded, then taken as a string.
    fn echo_as_a_value(arguments: &RawValue) -> Result<Result<String, String>, ErrorObject> {
        #[derive(serde::Deserialize)]
        struct Echo {
            message: Option<Value>,
        }
        let echo = serde_json::from_str::<Echo>(arguments.get()).map_err(|e| not_arguments(&e))?;
        Ok(Args::string_of("message", echo.message)
            .and_then(|message| message.ok_or_else(|| Args::missing("message"))))
    }

    #[test]
    fn echo_reads_its_message_as_a_value_would_be_read() {
        let shapes = [
            r#"{"message":@@}"#,
            r#"{ "message" : @@ }"#,
            r#"{"x":[1,{"y":2}],"message":@@,"z":null}"#,
            r#"{"message":@@,"message":"again"}"#,
            r#"{"message":"first","message":@@}"#,
            r#"{"Message":@@}"#,
            r#"{"mess\u0061ge":@@}"#,
            r#"{"message":@@,"x":1e400}"#,
        ];
        let mut cases = vec!["{}".to_owned(), r#"{"x":1}"#.to_owned()];
        for shape in shapes {
            cases.extend(args::tests::MEMBER_TEXTS.iter().map(|m| shape.replace("@@", m)));
        }
        let mut checked = 0;
        for case in cases {
            // Only JSON text reaches a tool.
            let Ok(arguments) = RawValue::from_string(case.clone()) else { continue };
            let ours = echo_argument(Some(arguments.get())).map(|r| r.map(Cow::into_owned));
            assert_eq!(ours, echo_as_a_value(&arguments), "{case}");
            checked += 1;
        }
        assert!(checked > 100, "{checked}");
        assert_eq!(echo_argument(None), Ok(Err(Args::missing("message"))));
    }
}
