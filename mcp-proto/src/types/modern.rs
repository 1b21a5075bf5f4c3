//! Types of the stateless era (2026-07-28): the per-request `_meta` keys,
//! `server/discover`, `input_required` results (multi round-trip
//! requests), `subscriptions/listen`, and the result type every result
//! carries.

use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::jsonrpc::scan::{plain_string, skip_space, value_end};
use crate::types::{Implementation, JsonObject, Meta, ServerCapabilities};

/// `_meta` key of a request's protocol version (required in the stateless
/// era; over HTTP it equals the `MCP-Protocol-Version` header).
pub const PROTOCOL_VERSION_META_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's identity on a request.
pub const CLIENT_INFO_META_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the client's capabilities on a request (required in the
/// stateless era).
pub const CLIENT_CAPABILITIES_META_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key of the least log level the server may send for a request
/// (without it, no `notifications/message` for that request).
pub const LOG_LEVEL_META_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key that ties a notification to the `subscriptions/listen`
/// request whose stream carries it.
pub const SUBSCRIPTION_ID_META_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key of the server's identity on a result.
pub const SERVER_INFO_META_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// The W3C trace-context keys a request's `_meta` may carry
/// (`traceparent`, `tracestate`, `baggage`).
pub const TRACE_CONTEXT_META_KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];
/// The identifier of the official tasks extension (2026-07-28).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `resultType` of a complete result (also what an absent `resultType`
/// means).
pub const RESULT_TYPE_COMPLETE: &str = "complete";
/// `resultType` of an [`InputRequiredResult`].
pub const RESULT_TYPE_INPUT_REQUIRED: &str = "input_required";
/// `resultType` of a task handle (the tasks extension's `CreateTaskResult`:
/// a [`DetailedTask`]).
pub const RESULT_TYPE_TASK: &str = "task";

/// What a result's `resultType` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    /// `"complete"`, or no `resultType` at all (an earlier revision's
    /// server): the result is final.
    Complete,
    /// `"input_required"`: an [`InputRequiredResult`].
    InputRequired,
    /// `"task"` (the tasks extension): a task handle, a [`DetailedTask`].
    Task,
}

/// A `resultType` this client does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownResultType(pub String);

impl std::fmt::Display for UnknownResultType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unrecognised resultType {:?}", self.0)
    }
}

impl std::error::Error for UnknownResultType {}

/// Reads the top-level `resultType` of a result's JSON text without
/// decoding the rest (members are skipped, nothing is allocated for them).
///
/// An absent `resultType` is [`ResultKind::Complete`]; a value other than
/// `"complete"`, `"input_required"` and `"task"` is an error, as is a
/// result that is not a JSON object. The text is taken to be JSON (a
/// result as the JSON-RPC decoding kept it): it is not validated.
pub fn result_kind(result_json: &str) -> Result<ResultKind, UnknownResultType> {
    #[derive(Deserialize)]
    struct Peek<'a> {
        #[serde(rename = "resultType", borrow, default)]
        result_type: Option<std::borrow::Cow<'a, str>>,
    }
    // Fast path for results without `resultType` (earlier revisions).
    if !result_json.contains("\"resultType\"") {
        return if result_json.trim_start().starts_with('{') {
            Ok(ResultKind::Complete)
        } else {
            Err(UnknownResultType("<not an object>".into()))
        };
    }
    // The common case, read by a byte scan of the top level (no decoding);
    // anything it is not sure of is decoded.
    let found = match scan_result_type(result_json.as_bytes()) {
        Some(found) => found.map(std::borrow::Cow::Borrowed),
        None => {
            let peek: Peek<'_> = serde_json::from_str(result_json)
                .map_err(|_| UnknownResultType("<not an object>".into()))?;
            peek.result_type
        }
    };
    match found.as_deref() {
        None | Some(RESULT_TYPE_COMPLETE) => Ok(ResultKind::Complete),
        Some(RESULT_TYPE_INPUT_REQUIRED) => Ok(ResultKind::InputRequired),
        Some(RESULT_TYPE_TASK) => Ok(ResultKind::Task),
        Some(other) => Err(UnknownResultType(other.to_owned())),
    }
}

/// The kind [`result_kind`] gives for `text`, read from what decoding the
/// text found instead of by a scan: `member` is the object's top-level
/// `resultType` as its decoding kept it (the last one, when there are
/// several; `None` when it has none). `text` must be one JSON object (its
/// decoding succeeded). `None` where only [`result_kind`] can tell: the
/// member perhaps there twice (`"resultType"` more than once in the text,
/// or a `\u` escape, which can spell a member's name), or not a string.
pub fn decoded_result_kind(
    text: &str,
    member: Option<&Value>,
) -> Option<Result<ResultKind, UnknownResultType>> {
    let Some(member) = member else { return Some(Ok(ResultKind::Complete)) };
    // Made once: a searcher costs more to make than to run over a result.
    static MEMBER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br#""resultType""#));
    static ESCAPE: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(br"\u"));
    let Value::String(kind) = member else { return None };
    let mut found = MEMBER.find_iter(text.as_bytes());
    if found.next().is_none() || found.next().is_some() || ESCAPE.find(text.as_bytes()).is_some() {
        return None;
    }
    Some(match kind.as_str() {
        RESULT_TYPE_COMPLETE => Ok(ResultKind::Complete),
        RESULT_TYPE_INPUT_REQUIRED => Ok(ResultKind::InputRequired),
        RESULT_TYPE_TASK => Ok(ResultKind::Task),
        other => Err(UnknownResultType(other.to_owned())),
    })
}

/// The top-level `resultType` of a JSON object's text, by a scan that
/// skips every other member without decoding it: `Some(None)` when the
/// object has no such member, `Some(Some(text))` when it has one string
/// value without escapes. `None` (decode the text instead) for anything
/// else: not one well-formed object as far as the scan sees, a key or
/// that value with escapes, a value that is not a string, the member twice.
fn scan_result_type(text: &[u8]) -> Option<Option<&str>> {
    const KEY: &[u8] = b"resultType";
    let mut at = skip_space(text, 0);
    if text.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_space(text, at + 1);
    let mut found = None;
    if text.get(at) == Some(&b'}') {
        return (skip_space(text, at + 1) == text.len()).then_some(None);
    }
    loop {
        // A key: a string without escapes.
        let (key, end) = plain_string(text, at)?;
        at = skip_space(text, end);
        if text.get(at) != Some(&b':') {
            return None;
        }
        at = skip_space(text, at + 1);
        if key == KEY {
            if found.is_some() {
                return None;
            }
            let (value, end) = plain_string(text, at)?;
            found = Some(std::str::from_utf8(value).ok()?);
            at = end;
        } else {
            at = value_end(text, at)?;
        }
        at = skip_space(text, at);
        match text.get(at) {
            Some(b',') => at = skip_space(text, at + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    (skip_space(text, at + 1) == text.len()).then_some(found)
}

/// The answer to `server/discover`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// The protocol versions the server speaks.
    pub supported_versions: Vec<String>,
    /// What the server supports.
    #[serde(default)]
    pub capabilities: ServerCapabilities,
    /// How to use the server: a hint a host may add to a system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Metadata (`io.modelcontextprotocol/serverInfo`, ...).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know (`resultType`, `ttlMs`,
    /// `cacheScope`, ...), kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

lossless_deserialize!(DiscoverResult {
    supported_versions: "supportedVersions" required,
    capabilities: "capabilities",
    instructions: "instructions",
    meta: "_meta",
});

impl DiscoverResult {
    /// The server's self-reported identity (`_meta`
    /// `io.modelcontextprotocol/serverInfo`), if it sent a valid one.
    pub fn server_info(&self) -> Option<Implementation> {
        server_info_of(self.meta.as_ref())
    }
}

/// The server identity a result's `_meta` carries, if any.
pub fn server_info_of(meta: Option<&Meta>) -> Option<Implementation> {
    // Read from the value where it is, not from a copy of it.
    Implementation::deserialize(meta?.get(SERVER_INFO_META_KEY)?).ok()
}

/// One request of an [`InputRequiredResult`]: `elicitation/create`,
/// `sampling/createMessage` or `roots/list`, with its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// The request's method.
    pub method: String,
    /// Its parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A result saying the server needs input before it can answer: the
/// client fulfils `inputRequests` and sends the original request again
/// with `inputResponses` and the exact `requestState`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// The requests to fulfil, by the server's keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<std::collections::BTreeMap<String, InputRequest>>,
    /// Opaque state to echo back exactly (never inspected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Which change notifications a `subscriptions/listen` stream carries.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these resource URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Parameters of `subscriptions/listen`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenRequestParams {
    /// What to listen to.
    pub notifications: SubscriptionFilter,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Parameters of `notifications/subscriptions/acknowledged`: what the
/// server agreed to send.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// The notifications the server will send on the stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<SubscriptionFilter>,
    /// Metadata (`io.modelcontextprotocol/subscriptionId`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know, kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A task of the 2026-07-28 tasks extension, as `tools/call` (with
/// `resultType: "task"`), `tasks/get` and `notifications/tasks` give it:
/// its state, and by status the input it needs, its result or its error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// The task's id.
    pub task_id: String,
    /// The current status.
    pub status: crate::types::TaskStatus,
    /// A human-readable message about the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When the task was created (ISO 8601).
    #[serde(default)]
    pub created_at: String,
    /// When the task was last updated (ISO 8601).
    #[serde(default)]
    pub last_updated_at: String,
    /// How long from creation the server keeps the task, in milliseconds
    /// (`None`: unlimited).
    #[serde(default)]
    pub ttl_ms: Option<u64>,
    /// The suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// `input_required`: the requests to fulfil with `tasks/update`, by the
    /// server's keys (unique over the task's life).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<std::collections::BTreeMap<String, InputRequest>>,
    /// `completed`: the result the original request would have given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// `failed`: the JSON-RPC error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::jsonrpc::ErrorObject>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know (`resultType`, ...), kept as sent.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Parameters of `tasks/update` (the 2026-07-28 tasks extension).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateTaskRequestParams {
    /// The task.
    pub task_id: String,
    /// Answers to the task's outstanding input requests, by their keys.
    pub input_responses: JsonObject,
}

/// `data` of an `UnsupportedProtocolVersion` error (`-32022`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionData {
    /// The versions the server speaks.
    #[serde(default)]
    pub supported: Vec<String>,
    /// The version the request asked for.
    #[serde(default)]
    pub requested: String,
}

/// How a list result or `resources/read` may be cached (`ttlMs`,
/// `cacheScope`), read from a result's members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheHint {
    /// How long the result stays fresh, in milliseconds; `None` when the
    /// server gave no freshness (do not cache).
    pub ttl_ms: Option<u64>,
    /// `true` for `cacheScope: "private"` (only this user may reuse it);
    /// `public` results may be shared.
    pub private: bool,
}

impl CacheHint {
    /// Reads `ttlMs` and `cacheScope` from a result's members (unknown
    /// members are where wire types keep them). A negative or non-integer
    /// `ttlMs` counts as none; a scope other than `"public"` counts as
    /// private.
    pub fn from_members(members: &JsonObject) -> CacheHint {
        CacheHint {
            ttl_ms: members.get("ttlMs").and_then(Value::as_u64),
            private: members.get("cacheScope").and_then(Value::as_str) != Some("public"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_kinds() {
        let cases: &[(&str, Result<ResultKind, ()>)] = &[
            (r#"{}"#, Ok(ResultKind::Complete)),
            (r#"{"content":[]}"#, Ok(ResultKind::Complete)),
            (r#"{"resultType":"complete","x":1}"#, Ok(ResultKind::Complete)),
            (
                r#"{"x":{"resultType":"odd"},"resultType":"input_required"}"#,
                Ok(ResultKind::InputRequired),
            ),
            (r#"{"x":{"resultType":"odd"}}"#, Ok(ResultKind::Complete)),
            (r#"{"resultType":"task","taskId":"t"}"#, Ok(ResultKind::Task)),
            (r#"{"resultType":"partial"}"#, Err(())),
            (r#"{"resultType":7}"#, Err(())),
            (r#"[]"#, Err(())),
        ];
        for (text, expected) in cases {
            assert_eq!(result_kind(text).map_err(|_| ()), *expected, "{text}");
        }
    }

    /// Where the kind read from a decoded result's member answers, it is
    /// the scan's (or decoding's) answer; it answers for every result with
    /// no `resultType` and for the usual one with it.
    #[test]
    fn the_kind_from_the_decoded_member_is_the_scans() {
        // (text, whether the decoded member answers)
        let cases: &[(&str, bool)] = &[
            (r#"{}"#, true),
            (r#"{"content":[{"type":"text","text":"\"resultType\":\"task\""}]}"#, true),
            (r#"{"x":{"resultType":"task"},"content":[]}"#, true),
            (r#"{"resultType":"complete","content":[]}"#, true),
            (r#"{"_meta":{"k":"v"},"content":[],"resultType":"complete"}"#, true),
            (r#"{"resultType":"input_required","requestState":"s"}"#, true),
            (r#"{"resultType":"task","taskId":"t"}"#, true),
            (r#"{"resultType":"later"}"#, true),
            (r#"{"resultType":"compl\nete"}"#, true),
            (r#"{"resultType":"compl\u0065te"}"#, false),
            (r#"{"result\u0054ype":"task","resultType":"complete"}"#, false),
            (r#"{"resultType":"task","result\u0054ype":"complete"}"#, false),
            (r#"{"resultType":"complete","resultType":"complete"}"#, false),
            (r#"{"x":{"resultType":"task"},"resultType":"complete"}"#, false),
            (r#"{"resultType":null}"#, false),
            (r#"{"resultType":7}"#, false),
            (r#"{"a":"\u00e9","resultType":"complete"}"#, false),
        ];
        for (text, answers) in cases {
            let object: serde_json::Map<String, Value> = serde_json::from_str(text).unwrap();
            let decoded = decoded_result_kind(text, object.get("resultType"));
            assert_eq!(decoded.is_some(), *answers, "{text}");
            if let Some(decoded) = decoded {
                assert_eq!(decoded, result_kind(text), "{text}");
            }
        }
    }

    /// The scan answers only where it is sure, and then as decoding would.
    #[test]
    fn the_scan_agrees_with_decoding() {
        #[derive(Deserialize)]
        struct Peek {
            #[serde(rename = "resultType", default)]
            result_type: Option<String>,
        }
        let cases: &[(&str, Option<Option<&str>>)] = &[
            (r#"{}"#, Some(None)),
            (" { } \n", Some(None)),
            (r#"{"content":[{"type":"text","text":"a \"}\" ]"}],"isError":false}"#, Some(None)),
            (
                r#"{"_meta":{"resultType":"odd","x":[1,{"y":"}"}]},"resultType":"complete"}"#,
                Some(Some("complete")),
            ),
            (
                r#"{ "n" : -1.5e3 , "resultType" : "input_required" , "b" : null }"#,
                Some(Some("input_required")),
            ),
            (r#"{"resultType":"task","taskId":"t"}"#, Some(Some("task"))),
            (r#"{"a":[{"b":"]}\\"},[]],"c":{"d":["{"]},"resultType":"task"}"#, Some(Some("task"))),
            (
                r#"{"a":"x\\\"y","b":true,"resultType":"complete","c":[1,2]}"#,
                Some(Some("complete")),
            ),
            (r#"{"resultType":"p\u0061rtial"}"#, None),
            (r#"{"result\u0054ype":"task"}"#, None),
            (r#"{"resultType":7}"#, None),
            (r#"{"resultType":"a","resultType":"b"}"#, None),
            (r#"{"resultType":"complete"} x"#, None),
            (r#"{"a":}"#, None),
            (r#"{"a":1"#, None),
            (r#"["resultType"]"#, None),
        ];
        for (text, expected) in cases {
            let scanned = scan_result_type(text.as_bytes());
            assert_eq!(scanned, *expected, "{text}");
            if let Some(found) = scanned {
                let peek: Peek = serde_json::from_str(text).unwrap();
                assert_eq!(peek.result_type.as_deref(), found, "{text}");
            }
        }
    }

    #[test]
    fn input_required_round_trips() {
        let text = r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"s=1"}"#;
        let r: InputRequiredResult = serde_json::from_str(text).unwrap();
        assert_eq!(r.request_state.as_deref(), Some("s=1"));
        assert_eq!(r.input_requests.as_ref().unwrap()["a"].method, "roots/list");
        let back = serde_json::to_value(&r).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn cache_hints() {
        let m = |v: Value| v.as_object().unwrap().clone();
        let h =
            CacheHint::from_members(&m(serde_json::json!({"ttlMs": 500, "cacheScope": "public"})));
        assert_eq!(h, CacheHint { ttl_ms: Some(500), private: false });
        let h = CacheHint::from_members(&m(serde_json::json!({"ttlMs": -1})));
        assert_eq!(h, CacheHint { ttl_ms: None, private: true });
    }
}
