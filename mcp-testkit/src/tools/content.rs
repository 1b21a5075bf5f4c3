//! The tools that answer with content at once (`echo`, `add`), and the
//! results every tool builds.

use std::borrow::Cow;

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::{Args, StrOrValue};

/// `echo`'s answer to its `message` argument: a string, borrowed as it
/// was read.
pub(super) fn echo_message(message: Option<StrOrValue<'_>>) -> Result<Cow<'_, str>, String> {
    match message {
        Some(StrOrValue::Str(message)) => Ok(message),
        other => Args::string_of("message", other.map(StrOrValue::into_value))?
            .map(Cow::Owned)
            .ok_or_else(|| Args::missing("message")),
    }
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

/// A tool result with `isError: true` and the message as text.
pub(crate) fn tool_error(message: String) -> Value {
    json!({ "content": [{ "type": "text", "text": message }], "isError": true })
}
