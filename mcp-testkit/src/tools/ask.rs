//! The tools that ask the client: `ask` (a server request mid-call) and
//! the stateless era's own tools (input rounds, logs, subscriptions).

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::{ProtocolVersion, methods};
use serde_json::{Value, json};

use super::{Args, Call, Outcome, text, tool_error};
use crate::modern;

/// The tools only stateless-era requests have.
pub(super) fn modern_tool(call: &Call, name: &str) -> Result<Value, ErrorObject> {
    let Some(meta) = &call.modern else {
        return Err(ErrorObject::new(error_code::INVALID_PARAMS, format!("Unknown tool: {name}")));
    };
    match name {
        "ask_twice" => modern::ask_twice(meta),
        "retry_once" => modern::retry_once(meta, call.server.next_retry()),
        "received_log" => Ok(text(Value::Array(call.server.received_log()).to_string())),
        _ => Ok(text(call.server.close_subscriptions().to_string())),
    }
}

pub(super) fn ask(call: Call, args: &mut Args) -> Outcome {
    let what = match args.string("what") {
        Ok(w) => w,
        Err(e) => return Outcome::Reply(Ok(tool_error(e))),
    };
    let (method, params) = match what.as_str() {
        "ping" => (methods::PING, None),
        "roots" => (methods::ROOTS_LIST, None),
        "elicit" => {
            let mut params = json!({
                "message": "mcp-testkit asks for your name",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "name": { "type": "string", "title": "Name", "description": "Your name" },
                    },
                    "required": ["name"],
                },
            });
            // `mode` exists from 2025-11-25 on; older clients get the
            // request as their revision wrote it.
            let version = call.server.negotiated_version();
            let old = version
                .as_deref()
                .and_then(ProtocolVersion::parse)
                .is_some_and(|v| v < ProtocolVersion::V2025_11_25);
            if !old {
                params["mode"] = json!("form");
            }
            (methods::ELICITATION_CREATE, Some(params))
        }
        "sample" => (
            methods::SAMPLING_CREATE_MESSAGE,
            Some(json!({
                "messages": [{
                    "role": "user",
                    "content": { "type": "text", "text": "mcp-testkit asks: say hello" },
                }],
                "maxTokens": 100,
            })),
        ),
        other => {
            return Outcome::Reply(Ok(tool_error(format!(
                "what must be one of ping, roots, elicit, sample; got {other:?}"
            ))));
        }
    };
    Outcome::Spawn(Box::pin(async move {
        match call.server.request(method, params, call.related()).await {
            Ok(Ok(result)) => text(json!({ "result": result }).to_string()),
            Ok(Err(error)) => text(json!({ "error": error }).to_string()),
            Err(timeout) => tool_error(format!(
                "the client did not answer {method} within {} ms",
                timeout.0.as_millis()
            )),
        }
    }))
}
