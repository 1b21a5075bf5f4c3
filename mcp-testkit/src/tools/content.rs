//! The tools that answer with content at once (`echo`, `add`), and the
//! results every tool builds.

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::Args;

/// `echo`'s answer to its `message` argument.
pub(super) fn echo_message(message: Option<Value>) -> Result<String, String> {
    Args::string_of("message", message)?.ok_or_else(|| Args::missing("message"))
}

pub(super) fn add(args: &Args) -> Result<Value, String> {
    let sum = args.number("a")? + args.number("b")?;
    Ok(json!({
        "content": [{ "type": "text", "text": sum.to_string() }],
        "structuredContent": { "sum": sum },
    }))
}

/// A tool result of one text block.
pub(crate) fn text(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }] })
}

/// A result given as JSON text, as a value.
pub(crate) fn value_of(json: &RawValue) -> Result<Value, ErrorObject> {
    serde_json::from_str(json.get()).map_err(|e| {
        ErrorObject::new(error_code::INTERNAL_ERROR, format!("the result is not JSON: {e}"))
    })
}

/// [`text`]'s result written as JSON text.
pub(super) fn text_json(message: &str) -> Option<Box<RawValue>> {
    crate::server::text_result_json(message)
}

/// A tool result with `isError: true` and the message as text.
pub(crate) fn tool_error(message: String) -> Value {
    json!({ "content": [{ "type": "text", "text": message }], "isError": true })
}
