//! The rules of the stateless era (2026-07-28) on the server side: the
//! per-request `_meta`, `server/discover`, result decoration (`resultType`,
//! `serverInfo`, caching hints), `input_required` rounds and the
//! `subscriptions/listen` filter.
//!
//! Pure functions of the request: the caller keeps the open subscriptions.

use std::collections::BTreeSet;

use mcp_proto::jsonrpc::{ErrorObject, RequestId, error_code};
use mcp_proto::methods;
use mcp_proto::types::{
    CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY, PROTOCOL_VERSION_META_KEY,
    RESULT_TYPE_COMPLETE, RESULT_TYPE_INPUT_REQUIRED, SERVER_INFO_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::era::{ServeEra, invalid_params};
use crate::logging::{LOG_LEVELS, level_index};
use crate::params::{Head, Params};

/// The metadata every stateless-era request carries, with what the request
/// adds for an `input_required` retry.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub version: String,
    /// `io.modelcontextprotocol/clientInfo`, when sent.
    pub client_info: Option<Value>,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub capabilities: Map<String, Value>,
    /// `io.modelcontextprotocol/logLevel`, as an index into [`LOG_LEVELS`].
    pub log_level: Option<usize>,
    /// `params.inputResponses` of a retry.
    pub input_responses: Option<Map<String, Value>>,
    /// `params.requestState` of a retry.
    pub request_state: Option<String>,
}

impl RequestMeta {
    /// The capabilities of `needed` the client did not declare.
    pub fn missing<'a>(&self, needed: &[&'a str]) -> Vec<&'a str> {
        needed.iter().copied().filter(|c| !self.capabilities.contains_key(*c)).collect()
    }
}

/// Whether the request's `params._meta` carries a stateless-era key (the
/// protocol version or the client capabilities).
pub fn has_stateless_meta(params: Option<&Value>) -> bool {
    is_stateless_meta(params.and_then(|p| p.get("_meta")))
}

fn is_stateless_meta(meta: Option<&Value>) -> bool {
    meta.and_then(Value::as_object).is_some_and(|m| {
        m.contains_key(PROTOCOL_VERSION_META_KEY) || m.contains_key(CLIENT_CAPABILITIES_META_KEY)
    })
}

/// Whether the method exists only in the stateless era.
pub fn is_stateless_only(method: &str) -> bool {
    matches!(method, methods::SERVER_DISCOVER | methods::SUBSCRIPTIONS_LISTEN)
}

/// The request's metadata: `-32602` when a required key is missing or
/// malformed, `-32022` when the version is not a stateless one.
pub fn request_meta(params: Option<&Value>, era: ServeEra) -> Result<RequestMeta, ErrorObject> {
    request_meta_of(params.map(Head::of_value).unwrap_or_default(), era)
}

/// [`request_meta`] of parameters as a server gets them ([`Params`]: the
/// client's text is read for the members it needs, not decoded whole).
pub fn request_meta_in(params: &Params, era: ServeEra) -> Result<RequestMeta, ErrorObject> {
    request_meta_of(params.head()?, era)
}

/// [`request_meta`] of the members read from the parameters, taken apart
/// rather than copied.
pub(crate) fn request_meta_of(head: Head, era: ServeEra) -> Result<RequestMeta, ErrorObject> {
    let meta = head.meta.unwrap_or_default();
    let version = match meta.version {
        Some(Value::String(version)) => version,
        _ => {
            return Err(invalid_params(format!(
                "the request's _meta needs a string {PROTOCOL_VERSION_META_KEY}"
            )));
        }
    };
    let capabilities = match meta.capabilities {
        Some(Value::Object(capabilities)) => capabilities,
        _ => {
            return Err(invalid_params(format!(
                "the request's _meta needs an object {CLIENT_CAPABILITIES_META_KEY}"
            )));
        }
    };
    if !mcp_proto::ProtocolVersion::parse(&version).is_some_and(|v| v.is_modern()) {
        return Err(unsupported_version(&version, era));
    }
    let log_level = match meta.log_level.as_ref() {
        None | Some(Value::Null) => None,
        Some(level) => match level.as_str().and_then(level_index) {
            Some(index) => Some(index),
            None => {
                return Err(invalid_params(format!(
                    "{LOG_LEVEL_META_KEY} must be one of {}",
                    LOG_LEVELS.join(", ")
                )));
            }
        },
    };
    let input_responses = match head.input_responses {
        None | Some(Value::Null) => None,
        Some(Value::Object(responses)) => Some(responses),
        Some(_) => return Err(invalid_params("inputResponses must be an object")),
    };
    let request_state = match head.request_state {
        None | Some(Value::Null) => None,
        Some(Value::String(state)) => Some(state),
        Some(_) => return Err(invalid_params("requestState must be a string")),
    };
    Ok(RequestMeta {
        version,
        client_info: meta.client_info,
        capabilities,
        log_level,
        input_responses,
        request_state,
    })
}

/// `-32022` with `data {supported, requested}`.
pub fn unsupported_version(requested: &str, era: ServeEra) -> ErrorObject {
    let mut error = ErrorObject::new(
        error_code::UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {requested}"),
    );
    error.data = Some(json!({ "supported": era.supported_versions(), "requested": requested }));
    error
}

/// The answer of a server without the handshake to `initialize`: `-32022`
/// naming the versions it speaks (a handshake-era client has no other
/// diagnostic).
pub fn refuse_initialize(params: Option<&Value>, era: ServeEra) -> ErrorObject {
    let offered = params.and_then(|p| p.get("protocolVersion")).and_then(Value::as_str);
    let mut error = unsupported_version(offered.unwrap_or(""), era);
    error.message = format!(
        "This server speaks only {} (no initialize handshake)",
        era.supported_versions().join(", ")
    );
    error
}

/// `-32021` with `data.requiredCapabilities`.
pub fn missing_capabilities(missing: &[&str]) -> ErrorObject {
    let required: Map<String, Value> =
        missing.iter().map(|c| ((*c).to_owned(), json!({}))).collect();
    let mut error = ErrorObject::new(
        error_code::MISSING_CLIENT_CAPABILITY,
        format!("Missing required client capability: {}", missing.join(", ")),
    );
    error.data = Some(json!({ "requiredCapabilities": required }));
    error
}

/// The result of `server/discover`: `supportedVersions`, `capabilities`,
/// `instructions` when given, and the caching hints (`cacheScope`
/// `public`).
pub fn discover(
    era: ServeEra,
    capabilities: Value,
    instructions: Option<&str>,
    ttl_ms: u64,
) -> Value {
    let mut result = json!({
        "supportedVersions": era.supported_versions(),
        "capabilities": capabilities,
    });
    if let Some(instructions) = instructions {
        result["instructions"] = json!(instructions);
    }
    cacheable(result, ttl_ms, "public")
}

/// Adds the caching hints `ttlMs` and `cacheScope`.
pub fn cacheable(mut result: Value, ttl_ms: u64, scope: &str) -> Value {
    if let Some(object) = result.as_object_mut() {
        object.insert("ttlMs".into(), json!(ttl_ms));
        object.insert("cacheScope".into(), json!(scope));
    }
    result
}

/// Gives a result its `resultType` (`complete` unless it says otherwise)
/// and `_meta["io.modelcontextprotocol/serverInfo"]`; errors pass as they
/// are.
pub fn decorate(
    result: Result<Value, ErrorObject>,
    server_info: &Value,
) -> Result<Value, ErrorObject> {
    result.map(|mut value| {
        if let Some(object) = value.as_object_mut() {
            object.entry("resultType").or_insert_with(|| json!(RESULT_TYPE_COMPLETE));
            let meta = object.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(SERVER_INFO_META_KEY.into(), server_info.clone());
            }
        }
        value
    })
}

/// [`decorate`] on a result's JSON text: `resultType` and `_meta` with
/// `serverInfo` (JSON text too) added at the end of the object, its own
/// members copied as written, when it has neither member; `None`
/// otherwise (not an object, or a member to merge with), for the caller to
/// decode it and [`decorate`] the value.
pub fn decorate_text(result: &RawValue, server_info: &RawValue) -> Option<Box<RawValue>> {
    let Members(members) = serde_json::from_str(result.get()).ok()?;
    if members.iter().any(|(name, _)| matches!(name.as_ref(), "resultType" | "_meta")) {
        return None;
    }
    // Written by the serialiser: the members' values are copied as they
    // are, so nothing is parsed again.
    serde_json::value::to_raw_value(&Decorated { members: &members, server_info }).ok()
}

/// A result object's members, each value as its JSON text.
struct Members<'a>(Vec<(std::borrow::Cow<'a, str>, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;
        impl<'de> serde::de::Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a result object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(MemberName(name)) = map.next_key()? {
                    members.push((name, map.next_value()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

/// A member name, borrowed from the text unless it has escapes.
struct MemberName<'a>(std::borrow::Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for MemberName<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> serde::de::Visitor<'de> for NameVisitor {
            type Value = MemberName<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a member name")
            }

            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                name: &'de str,
            ) -> Result<Self::Value, E> {
                Ok(MemberName(std::borrow::Cow::Borrowed(name)))
            }

            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Self::Value, E> {
                Ok(MemberName(std::borrow::Cow::Owned(name.to_owned())))
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}

/// A result's members, then `resultType` and `_meta` with `serverInfo`.
struct Decorated<'a> {
    members: &'a [(std::borrow::Cow<'a, str>, &'a RawValue)],
    server_info: &'a RawValue,
}

impl serde::Serialize for Decorated<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.members.len() + 2))?;
        for (name, value) in self.members {
            map.serialize_entry(name.as_ref(), value)?;
        }
        map.serialize_entry("resultType", RESULT_TYPE_COMPLETE)?;
        map.serialize_entry("_meta", &ServerInfoMeta(self.server_info))?;
        map.end()
    }
}

/// `{"io.modelcontextprotocol/serverInfo": ...}`.
struct ServerInfoMeta<'a>(&'a RawValue);

impl serde::Serialize for ServerInfoMeta<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(SERVER_INFO_META_KEY, self.0)?;
        map.end()
    }
}

/// An `input_required` result: the requests the client must answer (by
/// key) and the state it must echo on the retry.
pub fn input_required(requests: Option<Value>, state: Option<String>) -> Value {
    let mut result = json!({ "resultType": RESULT_TYPE_INPUT_REQUIRED });
    if let Some(requests) = requests {
        result["inputRequests"] = requests;
    }
    if let Some(state) = state {
        result["requestState"] = json!(state);
    }
    result
}

/// `_meta` naming the subscription a message belongs to.
pub fn subscription_meta(id: &RequestId) -> Value {
    json!({ SUBSCRIPTION_ID_META_KEY: id })
}

/// The HTTP status of a stateless-era error answer: 404 for `-32601`, 400
/// for the era's own errors (`-32020`, `-32021`, `-32022`), else 200.
pub fn http_status(code: i64) -> u16 {
    match code {
        error_code::METHOD_NOT_FOUND => 404,
        error_code::HEADER_MISMATCH
        | error_code::MISSING_CLIENT_CAPABILITY
        | error_code::UNSUPPORTED_PROTOCOL_VERSION => 400,
        _ => 200,
    }
}

/// A change the `subscriptions/listen` streams may carry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
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
    pub fn notification(&self) -> (&'static str, Value) {
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
pub struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: BTreeSet<String>,
}

impl Filter {
    /// Reads `params.notifications`; `-32602` when it is missing or
    /// malformed. URIs for which `exists` is false are not granted.
    pub fn parse(
        params: Option<&Value>,
        exists: impl Fn(&str) -> bool,
    ) -> Result<Filter, ErrorObject> {
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
                    if exists(uri) {
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
    pub fn granted(&self) -> Value {
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
    pub fn wants(&self, change: &Change) -> bool {
        match change {
            Change::Tools => self.tools,
            Change::Prompts => self.prompts,
            Change::Resources => self.resources,
            Change::Updated(uri) => self.uris.contains(uri),
        }
    }
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
        assert_eq!(ok.missing(&["sampling", "elicitation"]), ["elicitation"]);
        for bad in [
            json!({}),
            json!({"_meta": {PROTOCOL_VERSION_META_KEY: "2026-07-28"}}),
            json!({"_meta": {CLIENT_CAPABILITIES_META_KEY: {}}}),
            json!({"_meta": {PROTOCOL_VERSION_META_KEY: 1, CLIENT_CAPABILITIES_META_KEY: {}}}),
            json!({"_meta": {PROTOCOL_VERSION_META_KEY: "2026-07-28",
                             CLIENT_CAPABILITIES_META_KEY: {}}, "requestState": 1}),
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
    }

    #[test]
    fn filters_grant_what_exists() {
        let params = json!({"notifications": {
            "toolsListChanged": true,
            "promptsListChanged": false,
            "resourceSubscriptions": ["test://a", "test://nope"],
        }});
        let filter = Filter::parse(Some(&params), |uri| uri == "test://a").unwrap();
        assert_eq!(
            filter.granted(),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["test://a"]})
        );
        assert!(filter.wants(&Change::Tools) && !filter.wants(&Change::Prompts));
        assert!(filter.wants(&Change::Updated("test://a".into())));
        assert!(!filter.wants(&Change::Updated("test://b".into())));
        assert!(Filter::parse(Some(&json!({})), |_| true).is_err());
    }

    /// A result's text gets what its decoded value would get, or is left
    /// to the value path when it has a member to merge with.
    #[test]
    fn result_text_is_decorated_as_its_value_would_be() {
        let info = json!({"name": "s", "version": "1"});
        let info_text = serde_json::value::to_raw_value(&info).unwrap();
        for (text, spliced) in [
            (r#"{"content":[{"type":"text","text":"}"}]}"#, true),
            (" {}\n", true),
            (r#"{"n":123456789012345678901234567890}"#, true),
            (r#"{"_meta":{"k":1},"content":[]}"#, false),
            (r#"{"resultType":"incomplete"}"#, false),
            (r#"{"_met\u0061":{}}"#, false),
            ("[1]", false),
        ] {
            let raw = RawValue::from_string(text.to_owned()).unwrap();
            let decorated = decorate_text(&raw, &info_text);
            assert_eq!(decorated.is_some(), spliced, "{text}");
            let Some(decorated) = decorated else { continue };
            let value: Value = serde_json::from_str(text).unwrap();
            let expected = decorate(Ok(value), &info).unwrap();
            let got: Value = serde_json::from_str(decorated.get()).unwrap();
            assert_eq!(got, expected, "{text}");
        }
        // Values are kept as written where a value would change them.
        let raw = RawValue::from_string(r#"{"n":1.10, "s":"\u00e9"}"#.to_owned()).unwrap();
        let decorated = decorate_text(&raw, &info_text).unwrap();
        assert!(decorated.get().starts_with(r#"{"n":1.10,"s":"\u00e9","#), "{decorated}");
    }

    #[test]
    fn results_are_decorated_and_errors_mapped_to_statuses() {
        let info = json!({"name": "s", "version": "1"});
        let done = decorate(Ok(json!({"tools": []})), &info).unwrap();
        assert_eq!(done["resultType"], "complete");
        assert_eq!(done["_meta"][SERVER_INFO_META_KEY], info);
        let asked = decorate(Ok(input_required(None, Some("s1".into()))), &info).unwrap();
        assert_eq!(asked["resultType"], "input_required");
        assert_eq!(asked["requestState"], "s1");
        let found = discover(ServeEra::Both, json!({"tools": {}}), Some("hi"), 5);
        assert_eq!(found["supportedVersions"][0], "2026-07-28");
        assert_eq!(
            (found["ttlMs"].clone(), found["cacheScope"].clone()),
            (json!(5), json!("public"))
        );
        assert_eq!(http_status(error_code::METHOD_NOT_FOUND), 404);
        assert_eq!(http_status(error_code::MISSING_CLIENT_CAPABILITY), 400);
        assert_eq!(http_status(error_code::INVALID_PARAMS), 200);
        let refused =
            refuse_initialize(Some(&json!({"protocolVersion": "2025-06-18"})), ServeEra::Modern);
        assert_eq!(refused.code, error_code::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            missing_capabilities(&["sampling"]).data.unwrap()["requiredCapabilities"],
            json!({"sampling": {}})
        );
    }
}
