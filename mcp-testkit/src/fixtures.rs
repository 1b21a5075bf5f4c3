//! The conformance suite's fixture tools (`--conformance-fixtures`,
//! `Config::conformance_fixtures`): the tools its server scenarios call by
//! name, each doing what the scenario's description asks.
//!
//! | tool | does |
//! |---|---|
//! | `test_simple_text` | one text block |
//! | `test_image_content` | one PNG image block (a 1x1 pixel) |
//! | `test_audio_content` | one WAV audio block |
//! | `test_embedded_resource` | one embedded text resource |
//! | `test_multiple_content_types` | text, image and embedded resource |
//! | `test_tool_with_logging` | three `info` log messages 50 ms apart (when the level allows), then text |
//! | `test_error_handling` | a result with `isError: true` |
//! | `test_tool_with_progress` | progress 0, 50, 100 of 100 for the request's token, 50 ms apart, then text |
//! | `test_sampling` | `prompt`: asks the client `sampling/createMessage`, returns `LLM response: <text>` |
//! | `test_elicitation` | `message`: asks the client `elicitation/create` (username, email), returns the answer |
//! | `test_input_required_result_elicitation`, `_sampling`, `_list_roots` | stateless era: `input_required` with the request under `user_name`, `capital_question`, `client_roots`; the retry's answer as text |
//!
//! And its resources (`test://static-text`, `test://static-binary`,
//! `test://watched-resource`, the template `test://template/{id}/data`) and
//! prompts (`test_simple_prompt`, `test_prompt_with_arguments`,
//! `test_prompt_with_embedded_resource`, `test_prompt_with_image`).

use std::time::Duration;

use mcp_proto::jsonrpc::{ErrorObject, error_code};
use mcp_proto::methods;
use mcp_server_io::logging::level_index;
use serde_json::{Map, Value, json};

use crate::tools::{Call, Outcome, text, tool_error};

/// A 1x1 transparent PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
/// A WAV header with no samples (44 bytes).
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

/// The fixture tools' definitions.
pub(crate) fn definitions() -> Vec<Value> {
    let none = json!({ "type": "object", "properties": {} });
    let string = |name: &str| json!({ "type": "object", "properties": { name: { "type": "string" } }, "required": [name] });
    [
        ("test_simple_text", "Returns one text block", none.clone()),
        ("test_image_content", "Returns one PNG image", none.clone()),
        ("test_audio_content", "Returns one WAV audio clip", none.clone()),
        ("test_embedded_resource", "Returns one embedded text resource", none.clone()),
        ("test_multiple_content_types", "Returns text, an image and a resource", none.clone()),
        ("test_tool_with_logging", "Sends three log messages, then answers", none.clone()),
        ("test_error_handling", "Returns a tool error", none.clone()),
        ("test_tool_with_progress", "Sends progress 0, 50, 100, then answers", none.clone()),
        ("test_sampling", "Asks the client to sample from a prompt", string("prompt")),
        ("test_elicitation", "Asks the user for a username and an email", string("message")),
        ("test_input_required_result_elicitation", "Asks the user's name (stateless era)", none.clone()),
        ("test_input_required_result_sampling", "Asks for a sample (stateless era)", none.clone()),
        ("test_input_required_result_list_roots", "Asks for the roots (stateless era)", none.clone()),
    ]
    .into_iter()
    .map(|(name, description, schema)| {
        json!({ "name": name, "description": description, "inputSchema": schema })
    })
    .collect()
}

/// Runs a fixture tool; `None` when `name` is not one.
pub(crate) fn run(call: Call, name: &str, arguments: &Map<String, Value>) -> Option<Outcome> {
    let string = |key: &str| arguments.get(key).and_then(Value::as_str).unwrap_or("").to_owned();
    let reply = |value: Value| Some(Outcome::Reply(Ok(value)));
    match name {
        "test_simple_text" => reply(text("This is a simple text response for testing.")),
        "test_image_content" => reply(json!({ "content": [image()] })),
        "test_audio_content" => {
            reply(json!({ "content": [{ "type": "audio", "data": WAV, "mimeType": "audio/wav" }] }))
        }
        "test_embedded_resource" => reply(json!({ "content": [resource()] })),
        "test_multiple_content_types" => reply(json!({ "content": [
            { "type": "text", "text": "Multiple content types test:" },
            image(),
            resource(),
        ] })),
        "test_error_handling" => reply(json!({
            "content": [{ "type": "text", "text": "This tool intentionally returns an error for testing" }],
            "isError": true,
        })),
        "test_tool_with_logging" => Some(Outcome::Spawn(Box::pin(async move {
            let info = level_index("info").unwrap_or(1);
            let wanted = match &call.modern {
                Some(meta) => meta.log_level.is_some_and(|min| info >= min),
                None => call.server.log_level_enabled(info),
            };
            for (i, message) in
                ["Tool execution started", "Tool processing data", "Tool execution completed"]
                    .into_iter()
                    .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                if wanted {
                    let params =
                        json!({ "level": "info", "logger": "mcp-testkit", "data": message });
                    call.notify(methods::NOTIFICATION_MESSAGE, Some(params));
                }
            }
            text("Tool with logging executed successfully")
        }))),
        "test_tool_with_progress" => Some(Outcome::Spawn(Box::pin(async move {
            for (i, progress) in [0, 50, 100].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                if let Some(token) = &call.progress_token {
                    let params =
                        json!({ "progressToken": token, "progress": progress, "total": 100 });
                    call.notify(methods::NOTIFICATION_PROGRESS, Some(params));
                }
            }
            text(format!("Progress tool completed ({})", call.progress_token.is_some()))
        }))),
        "test_sampling" => {
            let prompt = string("prompt");
            Some(Outcome::Spawn(Box::pin(async move {
                let params = json!({
                    "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
                    "maxTokens": 100,
                });
                let related = Some(call.id.clone());
                match call
                    .server
                    .request(methods::SAMPLING_CREATE_MESSAGE, Some(params), related)
                    .await
                {
                    Ok(Ok(answer)) => {
                        let said = answer.pointer("/content/text").and_then(Value::as_str);
                        text(format!("LLM response: {}", said.unwrap_or("")))
                    }
                    Ok(Err(error)) => tool_error(format!("sampling failed: {}", error.message)),
                    Err(timeout) => tool_error(timeout.to_string()),
                }
            })))
        }
        "test_elicitation" => {
            let message = string("message");
            Some(Outcome::Spawn(Box::pin(async move {
                let params = json!({
                    "mode": "form",
                    "message": message,
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "username": { "type": "string", "description": "User's response" },
                            "email": { "type": "string", "description": "User's email address" },
                        },
                        "required": ["username", "email"],
                    },
                });
                let related = Some(call.id.clone());
                match call.server.request(methods::ELICITATION_CREATE, Some(params), related).await
                {
                    Ok(Ok(answer)) => text(format!("User response: {answer}")),
                    Ok(Err(error)) => tool_error(format!("elicitation failed: {}", error.message)),
                    Err(timeout) => tool_error(timeout.to_string()),
                }
            })))
        }
        "test_input_required_result_elicitation"
        | "test_input_required_result_sampling"
        | "test_input_required_result_list_roots" => Some(Outcome::Reply(input_round(&call, name))),
        _ => None,
    }
}

/// One `input_required` round of the three basic input-round fixtures:
/// the request under its key, then, once the retry carries the answer
/// under that key, a text result made of it.
fn input_round(call: &Call, name: &str) -> Result<Value, ErrorObject> {
    let Some(meta) = &call.modern else {
        return Ok(tool_error(format!("{name} answers only stateless-era requests")));
    };
    let (key, request) = match name {
        "test_input_required_result_elicitation" => (
            "user_name",
            json!({
                "method": methods::ELICITATION_CREATE,
                "params": {
                    "message": "What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": { "name": { "type": "string" } },
                        "required": ["name"],
                    },
                },
            }),
        ),
        "test_input_required_result_sampling" => (
            "capital_question",
            json!({
                "method": methods::SAMPLING_CREATE_MESSAGE,
                "params": {
                    "messages": [{
                        "role": "user",
                        "content": { "type": "text", "text": "What is the capital of France?" },
                    }],
                    "maxTokens": 100,
                },
            }),
        ),
        _ => ("client_roots", json!({ "method": methods::ROOTS_LIST, "params": {} })),
    };
    let Some(answer) = meta.input_responses.as_ref().and_then(|r| r.get(key)) else {
        return Ok(mcp_server_io::stateless::input_required(Some(json!({ key: request })), None));
    };
    if !answer.is_object() {
        let message = format!("inputResponses.{key} must be an object");
        return Err(ErrorObject::new(error_code::INVALID_PARAMS, message));
    }
    Ok(match key {
        "user_name" => {
            let name = answer.pointer("/content/name").and_then(Value::as_str).unwrap_or("");
            text(format!("Hello, {name}!"))
        }
        "capital_question" => {
            let said = answer.pointer("/content/text").and_then(Value::as_str).unwrap_or("");
            text(format!("Sampling response: {said}"))
        }
        _ => {
            let uris: Vec<&str> = answer["roots"]
                .as_array()
                .map(|roots| roots.iter().filter_map(|r| r["uri"].as_str()).collect())
                .unwrap_or_default();
            text(format!("Client roots: {}", uris.join(", ")))
        }
    })
}

/// The fixture resources, as `resources/list` shows them.
pub(crate) fn resources() -> Vec<Value> {
    [
        ("test://static-text", "static-text", "text/plain"),
        ("test://static-binary", "static-binary", "image/png"),
        ("test://watched-resource", "watched-resource", "text/plain"),
    ]
    .into_iter()
    .map(|(uri, name, mime)| json!({ "uri": uri, "name": name, "mimeType": mime }))
    .collect()
}

/// The fixture resource template.
pub(crate) fn resource_templates() -> Vec<Value> {
    vec![json!({
        "uriTemplate": "test://template/{id}/data",
        "name": "template",
        "mimeType": "application/json",
    })]
}

/// The contents of a fixture resource (one item of `contents`).
pub(crate) fn read(uri: &str) -> Option<Value> {
    match uri {
        "test://static-text" | "test://watched-resource" => Some(json!({
            "uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource.",
        })),
        "test://static-binary" => Some(json!({ "uri": uri, "mimeType": "image/png", "blob": PNG })),
        _ => {
            let id = uri.strip_prefix("test://template/")?.strip_suffix("/data")?;
            let valid = !id.is_empty() && !id.contains('/');
            valid.then(|| json!({
                "uri": uri,
                "mimeType": "application/json",
                "text": json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") }).to_string(),
            }))
        }
    }
}

/// The fixture prompts, as `prompts/list` shows them.
pub(crate) fn prompts() -> Vec<Value> {
    let argument = |name: &str, description: &str| json!({ "name": name, "description": description, "required": true });
    vec![
        json!({ "name": "test_simple_prompt", "description": "A simple prompt without arguments" }),
        json!({ "name": "test_prompt_with_arguments", "description": "A prompt with arguments",
                "arguments": [argument("arg1", "First argument"), argument("arg2", "Second argument")] }),
        json!({ "name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource",
                "arguments": [argument("resourceUri", "URI of the resource to embed")] }),
        json!({ "name": "test_prompt_with_image", "description": "A prompt with an image" }),
    ]
}

/// A fixture prompt's messages; `None` when `name` is not one.
pub(crate) fn get_prompt(
    name: &str,
    arguments: Option<&Value>,
) -> Option<Result<Value, ErrorObject>> {
    let argument = |key: &str| {
        arguments.and_then(|a| a.get(key)).and_then(Value::as_str).map(str::to_owned).ok_or_else(
            || ErrorObject::new(error_code::INVALID_PARAMS, format!("argument {key} is required")),
        )
    };
    let user = |content: Value| json!({ "role": "user", "content": content });
    let result = match name {
        "test_simple_prompt" => Ok(vec![user(json!({ "type": "text", "text": "This is a simple prompt for testing." }))]),
        "test_prompt_with_arguments" => argument("arg1").and_then(|one| {
            let two = argument("arg2")?;
            let text = format!("Prompt with arguments: arg1='{one}', arg2='{two}'");
            Ok(vec![user(json!({ "type": "text", "text": text }))])
        }),
        "test_prompt_with_embedded_resource" => argument("resourceUri").map(|uri| {
            vec![
                user(json!({ "type": "resource", "resource": {
                    "uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing.",
                } })),
                user(json!({ "type": "text", "text": "Please process the embedded resource above." })),
            ]
        }),
        "test_prompt_with_image" => Ok(vec![
            user(image()),
            user(json!({ "type": "text", "text": "Please analyze the image above." })),
        ]),
        _ => return None,
    };
    Some(result.map(|messages| json!({ "messages": messages })))
}

fn image() -> Value {
    json!({ "type": "image", "data": PNG, "mimeType": "image/png" })
}

fn resource() -> Value {
    json!({ "type": "resource", "resource": {
        "uri": "test://embedded-resource",
        "mimeType": "text/plain",
        "text": "This is an embedded resource content.",
    } })
}
