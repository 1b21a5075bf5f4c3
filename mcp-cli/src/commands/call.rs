//! `mcpc call`: the server and tool from the command line, the arguments
//! coerced by the tool's input schema, the call under a progress bar, and
//! its result. (`call --task` is prepared here and run by `tasks`.)

use std::io::IsTerminal as _;
use std::sync::Arc;

use mcp_proto::types::JsonObject;
use serde_json::Value;

use crate::cli::{CallArgs, ProgressMode};
use crate::ctx::{Ctx, pairs};
use crate::failure::Failure;
use crate::output::{show_progress, stderr_color, tool_result};
use crate::progress::Progress;

/// A call as the command line gives it, allowed by the server's policy,
/// the server connected.
pub(crate) struct ToolCall {
    pub(crate) server: String,
    pub(crate) tool: String,
    /// `--json` with the `key=value` words over it, coerced.
    pub(crate) arguments: JsonObject,
}

/// `call [SERVER] TOOL [key=value ...] [--json ...]` as a [`ToolCall`]:
/// the server and tool named, the tool allowed by the server's policy, the
/// server connected, the arguments coerced by the tool's schema.
pub(crate) async fn prepare(ctx: &Ctx<'_>, args: &CallArgs) -> Result<ToolCall, Failure> {
    let registry = ctx.registry;
    // `call SERVER TOOL ...`, or `call TOOL ...` when there is one server;
    // a first word that is no server, followed by one that is no
    // key=value, is a server's name misspelt.
    let (server, tool, rest) = match args.words.as_slice() {
        [first, rest @ ..] if registry.get(first).is_some() => match rest {
            [tool, rest @ ..] => (first.clone(), tool.clone(), rest),
            [] => {
                return Err(Failure::usage(format!("call {first} needs a TOOL")).with_server(first));
            }
        },
        [first, second, ..] if !second.contains('=') => return Err(ctx.unknown(first)),
        [tool, rest @ ..] => (ctx.pick(None)?, tool.clone(), rest),
        [] => return Err(Failure::usage("call needs a TOOL")),
    };
    let mut arguments = match &args.json {
        None => JsonObject::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(Failure::usage("--json must be a JSON object")),
            Err(e) => return Err(Failure::usage(format!("--json is not valid JSON: {e}"))),
        },
    };
    let raw_pairs = pairs(rest)?;
    let config = registry.get(&server).ok_or_else(|| ctx.unknown(&server))?;
    // Refused by the server's lists or a deny rule: before connecting.
    registry.check_call(&config.name, &tool).map_err(|e| ctx.fail(e))?;
    ctx.connect(&server).await?;
    if !raw_pairs.is_empty() {
        // The tool's schema says which values are strings.
        let tools = registry.list_tools(&server).await.map_err(|e| ctx.fail(e))?;
        let schema =
            tools.iter().find(|t| t.name == tool).and_then(|t| t.input_schema.properties.clone());
        for (key, value) in raw_pairs {
            let property = schema.as_ref().and_then(|p| p.get(&key));
            let value = coerce(&key, &value, property).map_err(Failure::usage)?;
            arguments.insert(key, value);
        }
    }
    Ok(ToolCall { server, tool, arguments })
}

/// Makes the call (under a progress bar on stderr when `--progress` says
/// so) and prints its result; the exit code: 1 when the tool reported an
/// error.
pub(crate) async fn call(ctx: &Ctx<'_>, call: ToolCall) -> Result<u8, Failure> {
    let ToolCall { server, tool, arguments } = call;
    let draw_progress = match ctx.g.progress {
        ProgressMode::Always => true,
        ProgressMode::Never => false,
        ProgressMode::Auto => std::io::stderr().is_terminal(),
    };
    let progress =
        draw_progress.then(|| Progress::start(format!("{server}/{tool}"), stderr_color()));
    let mut options = ctx.request_options();
    if let Some(p) = &progress {
        let p = p.clone();
        options.on_progress = Some(Arc::new(move |params| show_progress(&p, params)));
    }
    // Sized as for a model when `--max-result` or the server's
    // configuration asks for it; whole otherwise.
    let sized = ctx
        .registry
        .get(&server)
        .is_some_and(|c| c.max_result_chars.is_some() || c.max_result_bytes.is_some());
    let result = if sized {
        let result = ctx.registry.call_tool_sized(&server, &tool, Some(arguments), options).await;
        result.map(|sized| sized.result)
    } else {
        ctx.registry.call_tool_with(&server, &tool, Some(arguments), options).await
    };
    if let Some(p) = &progress {
        p.finish();
    }
    let result = result.map_err(|e| ctx.fail(e))?;
    Ok(tool_result(ctx.output(), &result))
}

/// A `key=value` value as the tool's schema wants it: a string property
/// takes the text as is; a number, integer, boolean, array or object
/// property takes JSON; without a schema, JSON when it parses, else text.
fn coerce(key: &str, value: &str, property: Option<&Value>) -> Result<Value, String> {
    let types: Vec<&str> = match property.and_then(|p| p.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"string") {
        return Ok(Value::String(value.to_owned()));
    }
    match serde_json::from_str::<Value>(value) {
        Ok(parsed) if types.is_empty() || types.iter().any(|t| json_type_matches(t, &parsed)) => {
            Ok(parsed)
        }
        _ if types.is_empty() => Ok(Value::String(value.to_owned())),
        _ => Err(format!("argument {key:?} must be {} (got {value:?})", types.join(" or "))),
    }
}

fn json_type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn coercion_follows_the_schema() {
        let s = |t: Value| json!({ "type": t });
        let cases: Vec<(&str, Option<Value>, Result<Value, ()>)> = vec![
            ("hi", Some(s(json!("string"))), Ok(json!("hi"))),
            ("123", Some(s(json!("string"))), Ok(json!("123"))),
            ("2.5", Some(s(json!("number"))), Ok(json!(2.5))),
            ("7", Some(s(json!("integer"))), Ok(json!(7))),
            ("7.5", Some(s(json!("integer"))), Err(())),
            ("x", Some(s(json!("number"))), Err(())),
            ("true", Some(s(json!("boolean"))), Ok(json!(true))),
            ("[1,2]", Some(s(json!("array"))), Ok(json!([1, 2]))),
            ("{\"a\":1}", Some(s(json!("object"))), Ok(json!({"a": 1}))),
            ("5", Some(s(json!(["string", "null"]))), Ok(json!("5"))),
            ("5", None, Ok(json!(5))),
            ("hello", None, Ok(json!("hello"))),
            ("null", None, Ok(Value::Null)),
        ];
        for (input, property, expected) in cases {
            let got = coerce("k", input, property.as_ref()).map_err(|_| ());
            assert_eq!(got, expected, "{input} with {property:?}");
        }
    }
}
