//! The stateless era (2026-07-28): per-request `_meta`, `server/discover`,
//! result decoration (`resultType`, `serverInfo`, caching hints), the
//! `subscriptions/listen` filter, and the multi round-trip tools (`ask`,
//! `ask_twice`, `retry_once`), which answer `input_required` instead of
//! sending the client requests.
//!
//! Pure functions of the request; the server keeps the subscriptions and
//! the log of what it received.

use std::collections::BTreeSet;

use mcp_proto::jsonrpc::{ErrorObject, RequestId, error_code};
use mcp_proto::types::{
    CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY, RESULT_TYPE_COMPLETE, RESULT_TYPE_INPUT_REQUIRED,
    SERVER_INFO_META_KEY, SUBSCRIPTION_ID_META_KEY,
};
use mcp_proto::{ProtocolVersion, methods};
use serde_json::{Map, Value, json};

use crate::config::{Config, ServeEra};
use crate::server::LOG_LEVELS;

/// The metadata every stateless-era request carries, with what the
/// request adds for a multi round-trip retry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub(crate) version: String,
    /// `io.modelcontextprotocol/clientInfo`, when sent.
    pub(crate) client_info: Option<Value>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub(crate) capabilities: Map<String, Value>,
    /// `io.modelcontextprotocol/logLevel`, as an index into [`LOG_LEVELS`].
    pub(crate) log_level: Option<usize>,
    /// `params.inputResponses` of a retry.
    pub(crate) input_responses: Option<Map<String, Value>>,
    /// `params.requestState` of a retry.
    pub(crate) request_state: Option<String>,
}

/// Whether the request's `params._meta` carries a stateless-era key (the
/// protocol version or the client capabilities).
pub(crate) fn has_modern_meta(params: Option<&Value>) -> bool {
    params.and_then(|p| p.get("_meta")).and_then(Value::as_object).is_some_and(|m| {
        m.contains_key(PROTOCOL_VERSION_META_KEY) || m.contains_key(CLIENT_CAPABILITIES_META_KEY)
    })
}

/// Whether the method exists only in the stateless era.
pub(crate) fn is_modern_only(method: &str) -> bool {
    matches!(method, methods::SERVER_DISCOVER | methods::SUBSCRIPTIONS_LISTEN)
}

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
    )
}

/// Every version the server speaks, newest first: what `server/discover`
/// and `-32022` list.
pub(crate) fn supported_versions(era: ServeEra) -> Vec<&'static str> {
    ProtocolVersion::SUPPORTED
        .iter()
        .rev()
        .filter(|v| match era {
            ServeEra::Modern => v.is_modern(),
            ServeEra::Legacy => !v.is_modern(),
            _ => true,
        })
        .map(|v| v.as_str())
        .collect()
}

/// The request's metadata: `-32602` when a required key is missing or
/// malformed, `-32022` when the version is not a stateless one the server
/// speaks.
pub(crate) fn request_meta(
    params: Option<&Value>,
    era: ServeEra,
) -> Result<RequestMeta, ErrorObject> {
    let meta = params.and_then(|p| p.get("_meta")).and_then(Value::as_object);
    let Some(version) = meta.and_then(|m| m.get(PROTOCOL_VERSION_META_KEY)).and_then(Value::as_str)
    else {
        return Err(invalid_params(format!(
            "the request's _meta needs a string {PROTOCOL_VERSION_META_KEY}"
        )));
    };
    let Some(capabilities) =
        meta.and_then(|m| m.get(CLIENT_CAPABILITIES_META_KEY)).and_then(Value::as_object)
    else {
        return Err(invalid_params(format!(
            "the request's _meta needs an object {CLIENT_CAPABILITIES_META_KEY}"
        )));
    };
    if !ProtocolVersion::parse(version).is_some_and(ProtocolVersion::is_modern) {
        return Err(unsupported_version(version, era));
    }
    let log_level = match meta.and_then(|m| m.get(LOG_LEVEL_META_KEY)) {
        None | Some(Value::Null) => None,
        Some(level) => match level.as_str().and_then(|l| LOG_LEVELS.iter().position(|x| *x == l)) {
            Some(index) => Some(index),
            None => {
                return Err(invalid_params(format!(
                    "{LOG_LEVEL_META_KEY} must be one of {}",
                    LOG_LEVELS.join(", ")
                )));
            }
        },
    };
    let input_responses = match params.and_then(|p| p.get("inputResponses")) {
        None | Some(Value::Null) => None,
        Some(Value::Object(responses)) => Some(responses.clone()),
        Some(_) => return Err(invalid_params("inputResponses must be an object")),
    };
    let request_state = match params.and_then(|p| p.get("requestState")) {
        None | Some(Value::Null) => None,
        Some(Value::String(state)) => Some(state.clone()),
        Some(_) => return Err(invalid_params("requestState must be a string")),
    };
    Ok(RequestMeta {
        version: version.to_owned(),
        client_info: meta.and_then(|m| m.get(CLIENT_INFO_META_KEY)).cloned(),
        capabilities: capabilities.clone(),
        log_level,
        input_responses,
        request_state,
    })
}

/// `-32022` with `data {supported, requested}`.
pub(crate) fn unsupported_version(requested: &str, era: ServeEra) -> ErrorObject {
    let mut error = ErrorObject::new(
        error_code::UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {requested}"),
    );
    error.data = Some(json!({ "supported": supported_versions(era), "requested": requested }));
    error
}

/// The answer of a server without the handshake to `initialize`: `-32022`
/// naming the versions it speaks, as the spec asks (legacy clients have no
/// other diagnostic).
pub(crate) fn refuse_initialize(params: Option<&Value>, era: ServeEra) -> ErrorObject {
    let offered = params.and_then(|p| p.get("protocolVersion")).and_then(Value::as_str);
    let mut error = unsupported_version(offered.unwrap_or(""), era);
    error.message = format!(
        "This server speaks only {} (no initialize handshake)",
        supported_versions(era).join(", ")
    );
    error
}

/// `-32021` with `data.requiredCapabilities`.
pub(crate) fn missing_capabilities(missing: &[&str]) -> ErrorObject {
    let required: Map<String, Value> =
        missing.iter().map(|c| ((*c).to_owned(), json!({}))).collect();
    let mut error = ErrorObject::new(
        error_code::MISSING_CLIENT_CAPABILITY,
        format!("Missing required client capability: {}", missing.join(", ")),
    );
    error.data = Some(json!({ "requiredCapabilities": required }));
    error
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

/// What the server declares in the stateless era.
fn capabilities() -> Value {
    json!({
        "tools": { "listChanged": true },
        "logging": {},
        "resources": { "subscribe": true, "listChanged": true },
        "prompts": { "listChanged": true },
        "completions": {},
    })
}

/// `server/discover`.
pub(crate) fn discover(config: &Config) -> Value {
    let mut result = json!({
        "supportedVersions": supported_versions(config.era),
        "capabilities": capabilities(),
    });
    if let Some(instructions) = &config.instructions {
        result["instructions"] = json!(instructions);
    }
    cacheable(result, config.ttl_ms, "public")
}

/// Adds the caching hints `ttlMs` and `cacheScope`.
pub(crate) fn cacheable(mut result: Value, ttl_ms: u64, scope: &str) -> Value {
    if let Some(object) = result.as_object_mut() {
        object.insert("ttlMs".into(), json!(ttl_ms));
        object.insert("cacheScope".into(), json!(scope));
    }
    result
}

/// Gives a result its `resultType` (`complete` unless it says otherwise)
/// and `_meta["io.modelcontextprotocol/serverInfo"]`; errors pass as they
/// are.
pub(crate) fn decorate(result: Result<Value, ErrorObject>) -> Result<Value, ErrorObject> {
    result.map(|mut value| {
        if let Some(object) = value.as_object_mut() {
            object.entry("resultType").or_insert_with(|| json!(RESULT_TYPE_COMPLETE));
            let meta = object.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(SERVER_INFO_META_KEY.into(), server_info());
            }
        }
        value
    })
}

/// `_meta` naming the subscription a message belongs to.
pub(crate) fn subscription_meta(id: &RequestId) -> Value {
    json!({ SUBSCRIPTION_ID_META_KEY: id })
}

/// A change the `subscriptions/listen` streams may carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/list_changed`.
    Resources,
    /// `notifications/resources/updated` for this URI.
    Updated(String),
}

impl Change {
    /// The notification's method and its parameters, less `_meta`.
    pub(crate) fn notification(&self) -> (&'static str, Value) {
        match self {
            Change::Tools => (methods::NOTIFICATION_TOOLS_LIST_CHANGED, json!({})),
            Change::Prompts => (methods::NOTIFICATION_PROMPTS_LIST_CHANGED, json!({})),
            Change::Resources => (methods::NOTIFICATION_RESOURCES_LIST_CHANGED, json!({})),
            Change::Updated(uri) => {
                (methods::NOTIFICATION_RESOURCES_UPDATED, json!({ "uri": uri }))
            }
        }
    }
}

/// What one `subscriptions/listen` asked for (and was granted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: BTreeSet<String>,
}

impl Filter {
    /// Reads `params.notifications`; `-32602` when it is missing or
    /// malformed. URIs that name no resource are not granted.
    pub(crate) fn parse(params: Option<&Value>) -> Result<Filter, ErrorObject> {
        let Some(notifications) =
            params.and_then(|p| p.get("notifications")).and_then(Value::as_object)
        else {
            return Err(invalid_params("subscriptions/listen needs a notifications object"));
        };
        let flag = |key: &str| match notifications.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(invalid_params(format!("notifications.{key} must be a boolean"))),
        };
        let uris = match notifications.get("resourceSubscriptions") {
            None | Some(Value::Null) => BTreeSet::new(),
            Some(Value::Array(uris)) => {
                let mut set = BTreeSet::new();
                for uri in uris {
                    let Some(uri) = uri.as_str() else {
                        return Err(invalid_params(
                            "notifications.resourceSubscriptions must hold strings",
                        ));
                    };
                    if crate::features::exists(uri) {
                        set.insert(uri.to_owned());
                    }
                }
                set
            }
            Some(_) => {
                return Err(invalid_params("notifications.resourceSubscriptions must be an array"));
            }
        };
        Ok(Filter {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            uris,
        })
    }

    /// The granted filter, as `notifications/subscriptions/acknowledged`
    /// reports it: only what is on.
    pub(crate) fn granted(&self) -> Value {
        let mut granted = Map::new();
        for (key, on) in [
            ("toolsListChanged", self.tools),
            ("promptsListChanged", self.prompts),
            ("resourcesListChanged", self.resources),
        ] {
            if on {
                granted.insert(key.into(), json!(true));
            }
        }
        if !self.uris.is_empty() {
            granted.insert("resourceSubscriptions".into(), json!(self.uris));
        }
        Value::Object(granted)
    }

    /// Whether the stream carries this change.
    pub(crate) fn wants(&self, change: &Change) -> bool {
        match change {
            Change::Tools => self.tools,
            Change::Prompts => self.prompts,
            Change::Resources => self.resources,
            Change::Updated(uri) => self.uris.contains(uri),
        }
    }
}

/// The record of one stateless-era request, as `received_log` shows it.
pub(crate) fn record(
    id: &RequestId,
    method: &str,
    meta: &RequestMeta,
    params: Option<&Value>,
) -> Value {
    let mut record = json!({
        "id": id,
        "method": method,
        "protocolVersion": meta.version,
        "clientCapabilities": meta.capabilities,
    });
    if let Some(info) = &meta.client_info {
        record["clientInfo"] = info.clone();
    }
    if let Some(level) = meta.log_level {
        record["logLevel"] = json!(LOG_LEVELS[level]);
    }
    if let Some(name) = params.and_then(|p| p.get("name")) {
        record["name"] = name.clone();
    }
    if let Some(state) = &meta.request_state {
        record["requestState"] = json!(state);
    }
    if let Some(responses) = &meta.input_responses {
        record["inputResponses"] = Value::Object(responses.clone());
    }
    record
}

/// An `input_required` result.
pub(crate) fn input_required(requests: Option<Value>, state: Option<String>) -> Value {
    let mut result = json!({ "resultType": RESULT_TYPE_INPUT_REQUIRED });
    if let Some(requests) = requests {
        result["inputRequests"] = requests;
    }
    if let Some(state) = state {
        result["requestState"] = json!(state);
    }
    result
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

/// The capabilities of `needed` the client did not declare.
pub(crate) fn missing<'a>(meta: &RequestMeta, needed: &[&'a str]) -> Vec<&'a str> {
    needed.iter().copied().filter(|c| !meta.capabilities.contains_key(*c)).collect()
}

/// `ask` in the stateless era: one round. The first call answers
/// `input_required` with `inputRequests {"ask": ...}` and `requestState`
/// `ask:<what>`; the retry carrying `inputResponses.ask` completes with
/// `{"result": <the response>}` as JSON text.
pub(crate) fn ask(meta: &RequestMeta, what: &str) -> Result<Value, ErrorObject> {
    let Some((capability, request)) = input_request(what) else {
        return Ok(tool_error(format!(
            "what must be one of roots, elicit, sample in the stateless era (there is no ping); \
             got {what:?}"
        )));
    };
    let missing = missing(meta, &[capability]);
    if !missing.is_empty() {
        return Err(missing_capabilities(&missing));
    }
    let state = format!("ask:{what}");
    if let Some(given) = &meta.request_state
        && *given != state
    {
        return Err(invalid_params(format!("requestState {given:?} was not issued for this call")));
    }
    match meta.input_responses.as_ref().and_then(|r| r.get("ask")) {
        Some(response) if meta.request_state.is_some() => {
            Ok(text(json!({ "result": response }).to_string()))
        }
        _ => Ok(input_required(Some(json!({ "ask": request })), Some(state))),
    }
}

/// `ask_twice`: two rounds. Round one asks `elicitation/create` (key
/// `name`), round two `sampling/createMessage` (key `greeting`) with the
/// name; then the result is `"<name>: <greeting text>"` with
/// `structuredContent {name, greeting}`.
pub(crate) fn ask_twice(meta: &RequestMeta) -> Result<Value, ErrorObject> {
    let missing = missing(meta, &["elicitation", "sampling"]);
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

fn text(text: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": text.into() }] })
}

fn tool_error(message: String) -> Value {
    json!({ "content": [{ "type": "text", "text": message }], "isError": true })
}

fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(error_code::INVALID_PARAMS, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(params: Value) -> Result<RequestMeta, ErrorObject> {
        request_meta(Some(&params), ServeEra::Modern)
    }

    #[test]
    fn request_meta_requires_version_and_capabilities() {
        let ok = meta(json!({"_meta": {
            PROTOCOL_VERSION_META_KEY: "2026-07-28",
            CLIENT_CAPABILITIES_META_KEY: {"sampling": {}},
            LOG_LEVEL_META_KEY: "warning",
        }, "requestState": "s"}))
        .unwrap();
        assert_eq!(ok.log_level, Some(3));
        assert_eq!(ok.request_state.as_deref(), Some("s"));
        for bad in [
            json!({}),
            json!({"_meta": {PROTOCOL_VERSION_META_KEY: "2026-07-28"}}),
            json!({"_meta": {CLIENT_CAPABILITIES_META_KEY: {}}}),
            json!({"_meta": {PROTOCOL_VERSION_META_KEY: 1, CLIENT_CAPABILITIES_META_KEY: {}}}),
        ] {
            assert_eq!(meta(bad.clone()).unwrap_err().code, error_code::INVALID_PARAMS, "{bad}");
        }
        let old = meta(json!({"_meta": {
            PROTOCOL_VERSION_META_KEY: "2025-11-25", CLIENT_CAPABILITIES_META_KEY: {},
        }}))
        .unwrap_err();
        assert_eq!(old.code, error_code::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            old.data.unwrap(),
            json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
        );
        assert_eq!(
            supported_versions(ServeEra::Both),
            ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
        );
    }

    #[test]
    fn filters_grant_what_exists() {
        let params = json!({"notifications": {
            "toolsListChanged": true,
            "promptsListChanged": false,
            "resourceSubscriptions": ["test://static/text/1", "test://nope"],
        }});
        let filter = Filter::parse(Some(&params)).unwrap();
        assert_eq!(
            filter.granted(),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["test://static/text/1"]})
        );
        assert!(filter.wants(&Change::Tools) && !filter.wants(&Change::Prompts));
        assert!(filter.wants(&Change::Updated("test://static/text/1".into())));
        assert!(!filter.wants(&Change::Updated("test://static/text/2".into())));
        assert!(Filter::parse(Some(&json!({}))).is_err());
    }
}
