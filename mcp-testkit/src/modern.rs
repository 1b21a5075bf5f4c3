//! The testkit's side of the stateless era (2026-07-28): what it serves,
//! its identity and capabilities, the record of what each request carried,
//! and the multi round-trip tools (`ask`, `ask_twice`, `retry_once`), which
//! answer `input_required` instead of sending the client requests. The
//! era's rules (the `_meta`, decoration, the listen filter) are
//! `mcp_server_io::stateless`.

use mcp_proto::jsonrpc::{ErrorObject, RequestId};
use mcp_proto::methods;
use mcp_server_io::Params;
use mcp_server_io::ServeEra;
use mcp_server_io::logging::LOG_LEVELS;
use mcp_server_io::stateless;
pub(crate) use mcp_server_io::stateless::{
    Change, RequestMeta, cacheable, input_required, missing_capabilities,
};
use serde_json::{Value, json};

use crate::server::invalid_params;
use crate::tools::{text, tool_error};

/// Whether the testkit serves the method to a stateless-era request
/// (anything else gets `-32601`; over HTTP, 404).
pub(crate) fn serves(method: &str) -> bool {
    matches!(
        method,
        methods::SERVER_DISCOVER
            | methods::SUBSCRIPTIONS_LISTEN
            | methods::TOOLS_LIST
            | methods::TOOLS_CALL
            | methods::RESOURCES_LIST
            | methods::RESOURCES_TEMPLATES_LIST
            | methods::RESOURCES_READ
            | methods::PROMPTS_LIST
            | methods::PROMPTS_GET
            | methods::COMPLETION_COMPLETE
            | methods::TASKS_GET
            | methods::TASKS_UPDATE
            | methods::TASKS_CANCEL
    )
}

/// The server's identity, as `_meta["io.modelcontextprotocol/serverInfo"]`
/// and the initialize result's `serverInfo` carry it.
pub(crate) fn server_info() -> Value {
    json!({
        "name": "mcp-testkit",
        "title": "MCP testkit",
        "version": env!("CARGO_PKG_VERSION"),
    })
}

/// The record of one stateless-era request: what it carried, kept as it
/// came (the JSON record `received_log` shows is built when asked for, so a
/// request pays for its copy, not for a JSON object it may never show).
#[derive(Debug, Clone)]
pub(crate) struct Received {
    id: RequestId,
    method: String,
    kept: Kept,
}

/// What a record keeps of the request's parameters.
#[derive(Debug, Clone)]
enum Kept {
    /// Their text, as the client wrote it (one copy, nothing decoded): the
    /// `_meta` and the name are read from it when the log is asked for.
    Text(Option<Box<serde_json::value::RawValue>>),
    /// Parameters given as a value: what the record shows, taken now.
    Read(Box<(RequestMeta, Option<Value>)>),
}

impl Received {
    /// What the request `id` of `method` carried.
    pub(crate) fn new(
        id: &RequestId,
        method: &str,
        meta: &RequestMeta,
        params: &Params,
    ) -> Received {
        let kept = match params.value() {
            Some(value) => Kept::Read(Box::new((meta.clone(), value.get("name").cloned()))),
            None => Kept::Text(params.text().map(std::borrow::Cow::into_owned)),
        };
        Received { id: id.clone(), method: method.to_owned(), kept }
    }

    /// The record as `received_log` shows it.
    pub(crate) fn to_value(&self) -> Value {
        let mut record = json!({ "id": self.id, "method": self.method });
        let (meta, name) = match &self.kept {
            Kept::Read(read) => (Some(read.0.clone()), read.1.clone()),
            Kept::Text(text) => {
                let params = Params::from_text(text.clone());
                // Read as the session read it when the request came (so it
                // reads again); a name only where the text decodes so.
                let meta = stateless::request_meta_in(&params, ServeEra::Both).ok();
                (meta, name_in(text.as_deref()))
            }
        };
        if let Some(meta) = meta {
            record["protocolVersion"] = json!(meta.version);
            record["clientCapabilities"] = Value::Object(meta.capabilities);
            if let Some(info) = meta.client_info {
                record["clientInfo"] = info;
            }
            if let Some(level) = meta.log_level {
                record["logLevel"] = json!(LOG_LEVELS[level]);
            }
            if let Some(state) = meta.request_state {
                record["requestState"] = json!(state);
            }
            if let Some(responses) = meta.input_responses {
                record["inputResponses"] = Value::Object(responses);
            }
        }
        if let Some(name) = name {
            record["name"] = name;
        }
        record
    }
}

/// The `name` member of parameters given as text (none where they do not
/// decode so: a member twice).
fn name_in(text: Option<&serde_json::value::RawValue>) -> Option<Value> {
    /// The one member of the parameters the record shows.
    #[derive(serde::Deserialize)]
    struct Named {
        name: Option<Value>,
    }
    serde_json::from_str::<Named>(text?.get()).ok()?.name
}

/// The input request of each `ask` kind, and the client capability it
/// needs.
pub(crate) fn input_request(what: &str) -> Option<(&'static str, Value)> {
    Some(match what {
        "roots" => ("roots", json!({ "method": methods::ROOTS_LIST })),
        "elicit" => {
            ("elicitation", json!({ "method": methods::ELICITATION_CREATE, "params": name_form() }))
        }
        "sample" => ("sampling", sampling("mcp-testkit asks: say hello")),
        _ => return None,
    })
}

/// The elicitation form asking for a name.
fn name_form() -> Value {
    json!({
        "mode": "form",
        "message": "mcp-testkit asks for your name",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": { "type": "string", "title": "Name", "description": "Your name" },
            },
            "required": ["name"],
        },
    })
}

/// A `sampling/createMessage` input request with one user message.
fn sampling(text: &str) -> Value {
    json!({
        "method": methods::SAMPLING_CREATE_MESSAGE,
        "params": {
            "messages": [{ "role": "user", "content": { "type": "text", "text": text } }],
            "maxTokens": 100,
        },
    })
}

/// `ask` in the stateless era: one round. The first call answers
/// `input_required` with `inputRequests {"ask": ...}` and `requestState`
/// `ask:<what>`; the retry carrying `inputResponses.ask` completes with
/// `{"result": <the response>}` as JSON text.
pub(crate) fn ask(meta: &RequestMeta, what: &str) -> Result<Value, ErrorObject> {
    if input_request(what).is_none() {
        return Ok(tool_error(format!(
            "what must be one of roots, elicit, sample in the stateless era (there is no ping); \
             got {what:?}"
        )));
    }
    Ok(match round(meta, what, &format!("ask:{what}"))? {
        Ok(response) => text(json!({ "result": response }).to_string()),
        Err(asked) => asked,
    })
}

/// One input round asking for `what` under `state`: the response once the
/// retry carries it (`Ok(Ok(_))`), else the `input_required` result.
fn round(meta: &RequestMeta, what: &str, state: &str) -> Result<Result<Value, Value>, ErrorObject> {
    let Some((capability, request)) = input_request(what) else {
        return Err(invalid_params(format!("nothing to ask for {what:?}")));
    };
    let missing = meta.missing(&[capability]);
    if !missing.is_empty() {
        return Err(missing_capabilities(&missing));
    }
    if let Some(given) = &meta.request_state
        && given != state
    {
        return Err(invalid_params(format!("requestState {given:?} was not issued for this call")));
    }
    Ok(match meta.input_responses.as_ref().and_then(|r| r.get("ask")) {
        Some(response) if meta.request_state.is_some() => Ok(response.clone()),
        _ => Err(input_required(Some(json!({ "ask": request })), Some(state.to_owned()))),
    })
}

/// The resource whose stateless-era read asks for a name first (not
/// listed).
pub(crate) const ASK_URI: &str = "test://ask/elicit";
/// The prompt whose stateless-era get asks for a name first (not listed).
pub(crate) const ASK_PROMPT: &str = "ask";

/// `resources/read` of [`ASK_URI`]: one elicitation round (`requestState
/// "ask:read"`), then a text resource `{"result": <the response>}`.
pub(crate) fn ask_read(meta: &RequestMeta, ttl_ms: u64) -> Result<Value, ErrorObject> {
    Ok(match round(meta, "elicit", "ask:read")? {
        Ok(response) => {
            let text = json!({ "result": response }).to_string();
            let contents =
                json!([{ "uri": ASK_URI, "mimeType": "application/json", "text": text }]);
            cacheable(json!({ "contents": contents }), ttl_ms, "private")
        }
        Err(asked) => asked,
    })
}

/// `prompts/get` of [`ASK_PROMPT`]: one elicitation round (`requestState
/// "ask:prompt"`), then one user message `{"result": <the response>}`.
pub(crate) fn ask_prompt(meta: &RequestMeta) -> Result<Value, ErrorObject> {
    Ok(match round(meta, "elicit", "ask:prompt")? {
        Ok(response) => {
            let text = json!({ "result": response }).to_string();
            json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": text } }] })
        }
        Err(asked) => asked,
    })
}

/// `ask_twice`: two rounds. Round one asks `elicitation/create` (key
/// `name`), round two `sampling/createMessage` (key `greeting`) with the
/// name; then the result is `"<name>: <greeting text>"` with
/// `structuredContent {name, greeting}`.
pub(crate) fn ask_twice(meta: &RequestMeta) -> Result<Value, ErrorObject> {
    let missing = meta.missing(&["elicitation", "sampling"]);
    if !missing.is_empty() {
        return Err(missing_capabilities(&missing));
    }
    let responses = meta.input_responses.as_ref();
    let round_one = || {
        Ok(input_required(
            Some(
                json!({ "name": { "method": methods::ELICITATION_CREATE, "params": name_form() } }),
            ),
            Some("ask_twice:1".to_owned()),
        ))
    };
    let round_two = |name: &str| {
        Ok(input_required(
            Some(json!({ "greeting": sampling(&format!("Say hello to {name}")) })),
            Some(format!("ask_twice:2:{name}")),
        ))
    };
    match meta.request_state.as_deref() {
        None => round_one(),
        Some("ask_twice:1") => {
            let Some(answer) = responses.and_then(|r| r.get("name")) else {
                return round_one();
            };
            if answer.get("action").and_then(Value::as_str) != Some("accept") {
                return Ok(tool_error(format!("the user did not give a name: {answer}")));
            }
            match answer.pointer("/content/name").and_then(Value::as_str) {
                Some(name) => round_two(name),
                None => Err(invalid_params("inputResponses.name needs content.name")),
            }
        }
        Some(state) => {
            let Some(name) = state.strip_prefix("ask_twice:2:") else {
                return Err(invalid_params(format!(
                    "requestState {state:?} was not issued for this call"
                )));
            };
            let Some(answer) = responses.and_then(|r| r.get("greeting")) else {
                return round_two(name);
            };
            let greeting = answer
                .pointer("/content/text")
                .and_then(Value::as_str)
                .ok_or_else(|| invalid_params("inputResponses.greeting needs a text content"))?;
            Ok(json!({
                "content": [{ "type": "text", "text": format!("{name}: {greeting}") }],
                "structuredContent": { "name": name, "greeting": greeting },
            }))
        }
    }
}

/// `retry_once`: the first call answers `input_required` with only a
/// `requestState` (`retry_once:<n>`, no `inputRequests`); the retry echoing
/// it completes with `retried with <state>`.
pub(crate) fn retry_once(meta: &RequestMeta, n: u64) -> Result<Value, ErrorObject> {
    match meta.request_state.as_deref() {
        None => Ok(input_required(None, Some(format!("retry_once:{n}")))),
        Some(state)
            if state.strip_prefix("retry_once:").is_some_and(|n| n.parse::<u64>().is_ok()) =>
        {
            Ok(text(format!("retried with {state}")))
        }
        Some(state) => {
            Err(invalid_params(format!("requestState {state:?} was not issued for this call")))
        }
    }
}
