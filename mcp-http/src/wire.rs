//! Pure pieces of the Streamable HTTP exchange: header names, media types,
//! `Mcp-Name` values, body excerpts, the reconnection backoff.

use std::borrow::Cow;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue, header};
use mcp_proto::backoff::Backoff;
use serde_json::Value;
use serde_json::value::RawValue;

/// `Mcp-Session-Id`.
pub(crate) static SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// `MCP-Protocol-Version`.
pub(crate) static PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Mcp-Method`.
pub(crate) static MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
/// `Mcp-Name`.
pub(crate) static MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
/// `Last-Event-ID`.
pub(crate) static LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The `Accept` of every POST.
pub(crate) const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// What a response body holds, from its `Content-Type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MediaType {
    /// `application/json`.
    Json,
    /// `text/event-stream`.
    EventStream,
    /// Anything else (the type, for the error message).
    Other(String),
    /// No `Content-Type`.
    Missing,
}

/// Classifies a `Content-Type` value: the media type compared ignoring case,
/// parameters ignored.
pub(crate) fn media_type(headers: &HeaderMap) -> MediaType {
    let Some(value) = headers.get(header::CONTENT_TYPE) else { return MediaType::Missing };
    // The two usual values as they are, before any check or split.
    match value.as_bytes() {
        b"application/json" => return MediaType::Json,
        b"text/event-stream" => return MediaType::EventStream,
        _ => {}
    }
    media_type_general(value)
}

/// [`media_type`] of a value: checked, its parameters split off, compared
/// without case.
fn media_type_general(value: &HeaderValue) -> MediaType {
    let Ok(value) = value.to_str() else { return MediaType::Other("<non-ASCII>".into()) };
    // What precedes the first `;` (as `split(';').next()`), found by a
    // plain byte loop: a header value is short, and the loop does not
    // depend on the compiler inlining a general searcher.
    let end = value.bytes().position(|b| b == b';').unwrap_or(value.len());
    let essence = value[..end].trim();
    if essence.eq_ignore_ascii_case("application/json") {
        MediaType::Json
    } else if essence.eq_ignore_ascii_case("text/event-stream") {
        MediaType::EventStream
    } else {
        MediaType::Other(essence.chars().take(100).collect())
    }
}

/// The header value for a name that may hold anything: the string as it is
/// when it is visible ASCII (interior spaces allowed) and does not look
/// encoded, else `=?base64?<base64 of the UTF-8>?=`
/// ([`encode_header_value`](mcp_proto::client::headers::encode_header_value)).
/// An empty name is encoded too, so it is not mistaken for a missing one.
pub(crate) fn encoded_header_value(s: &str) -> HeaderValue {
    if s.is_empty() {
        return HeaderValue::from_static("=?base64??=");
    }
    let text = mcp_proto::client::headers::encode_header_value(s);
    // Both forms are visible ASCII: this cannot fail. The text's buffer
    // becomes the value's (no second copy).
    HeaderValue::from_maybe_shared(bytes::Bytes::from(text))
        .unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The `Mcp-Param-*` headers of a `tools/call` of `tool` with `arguments`,
/// as header names and values.
pub(crate) fn param_headers(
    tool: &mcp_proto::types::Tool,
    arguments: Option<&serde_json::Map<String, Value>>,
) -> Vec<(HeaderName, HeaderValue)> {
    mcp_proto::client::headers::param_header_values(tool, arguments)
        .into_iter()
        .filter_map(|(name, value)| {
            // Names are checked tokens and values visible ASCII: both parse.
            Some((
                HeaderName::from_bytes(name.as_bytes()).ok()?,
                HeaderValue::from_str(&value).ok()?,
            ))
        })
        .collect()
}

/// The `Mcp-Name` of a request: the member of its `params` that
/// [`mcp_proto::methods::name_header_param`] names, as a string. What
/// [`body_headers`] reads from the encoded request; kept as its reference
/// in the tests.
#[cfg(test)]
pub(crate) fn mcp_name(method: &str, params: Option<&Value>) -> Option<HeaderValue> {
    let key = mcp_proto::methods::name_header_param(method)?;
    params?.get(key)?.as_str().map(encoded_header_value)
}

/// The members of a request's `params` its headers are made from, read
/// borrowed from the encoded request (every other member skipped).
#[derive(serde::Deserialize)]
struct HeaderParams<'a> {
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    uri: Option<&'a RawValue>,
    #[serde(borrow, default, rename = "taskId")]
    task_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
}

/// A request as far as its headers need it.
#[derive(serde::Deserialize)]
struct HeaderRequest<'a> {
    #[serde(borrow, default)]
    params: Option<HeaderParams<'a>>,
}

/// The string `params.<key>` of an encoded request when it is the first
/// member of `params` and `params` the first object-valued member of the
/// request, compact, as this client's encoder writes a call (`jsonrpc`,
/// `id`, `method`, then `params` starting with the name): found without
/// reading the rest. `None` when the request is not laid out that way (it
/// is then read whole). A `"params":{` outside a string is structure (a
/// string's quotes are escaped), and the members before it are scalars.
fn leading_param<'a>(body: &'a [u8], key: &str) -> Option<Cow<'a, str>> {
    const PARAMS: &[u8] = b"\"params\":{";
    let at = body.windows(PARAMS.len()).position(|w| w == PARAMS)?;
    if at == 0 || !matches!(body[at - 1], b',' | b'{') {
        return None;
    }
    let rest = body[at + PARAMS.len()..].strip_prefix(b"\"")?;
    let rest = rest.strip_prefix(key.as_bytes())?.strip_prefix(b"\":")?;
    let mut value = serde_json::Deserializer::from_slice(rest);
    // Borrowed unless it has escapes.
    match <&str as serde::Deserialize>::deserialize(&mut value) {
        Ok(text) => Some(Cow::Borrowed(text)),
        Err(_) => {
            let mut value = serde_json::Deserializer::from_slice(rest);
            <String as serde::Deserialize>::deserialize(&mut value).ok().map(Cow::Owned)
        }
    }
}

/// The `Mcp-Name` and `Mcp-Param-*` headers of a request, read from its
/// encoded JSON-RPC `body` (the same headers [`mcp_name`] and
/// [`param_headers`] make from the parameters as a value): the named
/// member when it is a string, and, for a `tool` that declares header
/// parameters, its arguments (decoded only then).
pub(crate) fn body_headers(
    method: &str,
    tool: Option<&mcp_proto::types::Tool>,
    body: &[u8],
) -> Vec<(HeaderName, HeaderValue)> {
    let key = mcp_proto::methods::name_header_param(method);
    let declares = |t: &mcp_proto::types::Tool| {
        mcp_proto::client::headers::param_headers(&t.input_schema).is_ok_and(|p| !p.is_empty())
    };
    let tool = tool.filter(|t| declares(t));
    if key.is_none() && tool.is_none() {
        return Vec::new();
    }
    if tool.is_none()
        && let Some(text) = key.and_then(|key| leading_param(body, key))
    {
        return vec![(MCP_NAME.clone(), encoded_header_value(&text))];
    }
    let Ok(HeaderRequest { params: Some(params) }) = serde_json::from_slice(body) else {
        return Vec::new();
    };
    let mut headers = Vec::new();
    let named = match key {
        Some("name") => params.name,
        Some("uri") => params.uri,
        Some("taskId") => params.task_id,
        _ => None,
    };
    // A string (escapes decoded), as `mcp_name` takes it; anything else
    // gives no header.
    if let Some(text) = named.and_then(|raw| serde_json::from_str::<Cow<'_, str>>(raw.get()).ok()) {
        headers.push((MCP_NAME.clone(), encoded_header_value(&text)));
    }
    if let Some(tool) = tool {
        let arguments = params
            .arguments
            .and_then(|raw| serde_json::from_str::<serde_json::Map<String, Value>>(raw.get()).ok());
        headers.extend(param_headers(tool, arguments.as_ref()));
    }
    headers
}

/// The header value of a method name (method names are ASCII in practice;
/// anything else is encoded). The methods a client sends are values made
/// once, from their names (nothing allocated per request).
pub(crate) fn method_value(method: &str) -> HeaderValue {
    use mcp_proto::methods as m;
    macro_rules! known {
        ($($name:path),* $(,)?) => {
            match method {
                $($name => HeaderValue::from_static($name),)*
                _ => encoded_header_value(method),
            }
        };
    }
    known!(
        m::TOOLS_CALL,
        m::TOOLS_LIST,
        m::RESOURCES_READ,
        m::RESOURCES_LIST,
        m::RESOURCES_TEMPLATES_LIST,
        m::PROMPTS_GET,
        m::PROMPTS_LIST,
        m::PING,
        m::COMPLETION_COMPLETE,
        m::INITIALIZE,
        m::SERVER_DISCOVER,
        m::NOTIFICATION_INITIALIZED,
        m::NOTIFICATION_CANCELLED,
        m::NOTIFICATION_PROGRESS,
        m::TASKS_GET,
        m::TASKS_RESULT,
    )
}

/// The most bytes of an error body kept for the error message.
pub(crate) const EXCERPT_BYTES: usize = 512;

/// The headers the transport sets itself, which a caller's or a
/// middleware's extra headers may not replace.
const OWN_HEADERS: &[&str] = &[
    "accept",
    "authorization",
    "connection",
    "content-length",
    "content-type",
    "cookie",
    "dpop",
    "host",
    "last-event-id",
    "transfer-encoding",
];

/// A request's extra headers ([`RequestOptions::headers`]) as HTTP
/// headers, marked sensitive; the transport's own (and every `Mcp-*`) are
/// refused, as are names and values HTTP does not allow. The reason never
/// repeats a value.
///
/// [`RequestOptions::headers`]: mcp_proto::client::RequestOptions::headers
pub(crate) fn extra_headers(
    headers: &[(String, String)],
) -> Result<Vec<(http::HeaderName, HeaderValue)>, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = http::HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|_| format!("{:?} is not an HTTP header name", name.trim()))?;
            if OWN_HEADERS.contains(&name.as_str()) || name.as_str().starts_with("mcp-") {
                return Err(format!("the transport sets {name} itself"));
            }
            let mut value = HeaderValue::from_str(value.trim())
                .map_err(|_| format!("the value of {name} is not a valid header value"))?;
            value.set_sensitive(true);
            Ok((name, value))
        })
        .collect()
}

/// A printable excerpt of an error body: at most [`EXCERPT_BYTES`] bytes,
/// lossily decoded, control characters replaced, white space collapsed.
pub(crate) fn excerpt(body: &[u8]) -> String {
    let cut = &body[..body.len().min(EXCERPT_BYTES)];
    let text = String::from_utf8_lossy(cut);
    let mut out = String::with_capacity(text.len());
    let mut last_space = false;
    for c in text.chars() {
        let c = if c.is_whitespace() {
            ' '
        } else if c.is_control() {
            '\u{fffd}'
        } else {
            c
        };
        if c == ' ' && last_space {
            continue;
        }
        last_space = c == ' ';
        out.push(c);
    }
    let mut out = out.trim().to_owned();
    if body.len() > EXCERPT_BYTES {
        out.push('…');
    }
    out
}

/// How event streams are reopened: 200 ms doubling to 10 s, full jitter;
/// a server's `retry` is honoured, never below 100 ms (a `retry: 0` must not
/// make a storm of GETs).
pub(crate) const RECONNECT_BACKOFF: Backoff =
    Backoff::new(Duration::from_millis(200), Duration::from_secs(10));

/// Whether a session id is acceptable: visible ASCII only (0x21 to 0x7E),
/// not empty, at most 1 KiB.
pub(crate) fn valid_session_id(v: &HeaderValue) -> bool {
    let b = v.as_bytes();
    !b.is_empty() && b.len() <= 1024 && b.iter().all(|c| (0x21..=0x7e).contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_media_types_essence_is_what_precedes_its_first_semicolon() {
        // The general reading of the essence against `media_type`'s, on
        // values with no `;`, one, several, at either end, and spaces.
        for value in [
            "",
            ";",
            ";;",
            "application/json",
            "application/json;",
            ";application/json",
            " application/json ; charset=utf-8 ; x=y",
            "text/event-stream;charset=UTF-8",
            "a;b;c",
            "  ",
            "text/html ;",
        ] {
            let general = value.split(';').next().unwrap_or("").trim();
            let expected = if general.eq_ignore_ascii_case("application/json") {
                MediaType::Json
            } else if general.eq_ignore_ascii_case("text/event-stream") {
                MediaType::EventStream
            } else {
                MediaType::Other(general.into())
            };
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_str(value).unwrap());
            assert_eq!(media_type(&h), expected, "{value:?}");
        }
    }

    #[test]
    fn media_types() {
        let cases = [
            (Some("application/json"), MediaType::Json),
            (Some("Application/JSON; charset=utf-8"), MediaType::Json),
            (Some(" application/json ;x=y"), MediaType::Json),
            (Some("text/event-stream"), MediaType::EventStream),
            (Some("TEXT/Event-Stream;charset=UTF-8"), MediaType::EventStream),
            (Some("text/html"), MediaType::Other("text/html".into())),
            (Some("application/jsonx"), MediaType::Other("application/jsonx".into())),
            (None, MediaType::Missing),
        ];
        for (value, expected) in cases {
            let mut h = HeaderMap::new();
            if let Some(v) = value {
                h.insert(header::CONTENT_TYPE, HeaderValue::from_str(v).unwrap());
            }
            assert_eq!(media_type(&h), expected, "{value:?}");
        }
    }

    /// `media_type`'s shortcut for the two usual values against the
    /// general reading, on them and their near misses.
    #[test]
    fn media_type_shortcut_agrees_with_the_general_reading() {
        for value in [
            "application/json",
            "text/event-stream",
            "application/json;",
            "application/json ",
            " application/json",
            "Application/json",
            "application/jsonx",
            "application/jso",
            "text/event-stream;charset=utf-8",
            "text/event-streams",
            "text/event-strea",
            "TEXT/EVENT-STREAM",
            "application/json, text/event-stream",
            "",
        ] {
            let v = HeaderValue::from_str(value).unwrap();
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, v.clone());
            assert_eq!(media_type(&h), media_type_general(&v), "{value:?}");
        }
    }

    #[test]
    fn header_value_encoding() {
        let cases = [
            ("echo", "echo"),
            ("get weather", "get weather"),
            (" lead", "=?base64?IGxlYWQ=?="),
            ("tail ", "=?base64?dGFpbCA=?="),
            ("héllo", "=?base64?aMOpbGxv?="),
            ("a\nb", "=?base64?YQpi?="),
            ("=?base64?eA==?=", "=?base64?PT9iYXNlNjQ/ZUE9PT89?="),
            ("", "=?base64??="),
        ];
        for (input, expected) in cases {
            assert_eq!(encoded_header_value(input).to_str().unwrap(), expected, "{input:?}");
        }
    }

    #[test]
    fn method_values_made_once_equal_the_encoded_form() {
        let methods = [
            "tools/call",
            "tools/list",
            "resources/read",
            "resources/templates/list",
            "prompts/get",
            "ping",
            "initialize",
            "server/discover",
            "notifications/initialized",
            "notifications/cancelled",
            "tasks/result",
            // Not among them: encoded as any name is.
            "x/custom",
            "weird method ",
        ];
        for method in methods {
            assert_eq!(method_value(method), encoded_header_value(method), "{method}");
        }
        assert_eq!(
            method_value("weird method ").to_str().unwrap(),
            "=?base64?d2VpcmQgbWV0aG9kIA==?="
        );
    }

    #[test]
    fn param_headers_from_the_tool_schema() {
        let tool: mcp_proto::types::Tool = serde_json::from_value(serde_json::json!({
            "name": "t",
            "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
            }}
        }))
        .unwrap();
        let params = serde_json::json!({"name": "t", "arguments": {"region": "é", "n": 7}});
        let strings = |h: Vec<(HeaderName, HeaderValue)>| -> Vec<(String, String)> {
            h.into_iter()
                .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
                .collect()
        };
        let got = strings(param_headers(&tool, params["arguments"].as_object()));
        let want = [("mcp-param-n", "7"), ("mcp-param-region", "=?base64?w6k=?=")];
        let want: Vec<(String, String)> =
            want.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
        assert_eq!(got, want);
        assert!(param_headers(&tool, None).is_empty());

        // Read from the encoded request: the same headers, `Mcp-Name` first.
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
        let got = strings(body_headers("tools/call", Some(&tool), body.to_string().as_bytes()));
        let mut with_name = vec![("mcp-name".to_owned(), "t".to_owned())];
        with_name.extend(want);
        assert_eq!(got, with_name);
    }

    #[test]
    fn headers_from_the_encoded_request_match_those_from_the_value() {
        let plain: mcp_proto::types::Tool = serde_json::from_value(serde_json::json!({
            "name": "echo", "inputSchema": {"type": "object", "properties": {"m": {"type": "string"}}}
        }))
        .unwrap();
        let cases = [
            (
                "tools/call",
                serde_json::json!({"name": "echo", "arguments": {"m": "x"}, "_meta": {"a": 1}}),
            ),
            (
                "tools/call",
                serde_json::json!({"arguments": {"name": "not this"}, "name": "get \"w\" é"}),
            ),
            ("tools/call", serde_json::json!({"name": 7})),
            ("tools/call", serde_json::json!({})),
            ("prompts/get", serde_json::json!({"name": " padded "})),
            ("resources/read", serde_json::json!({"uri": "file:///a b", "name": "x"})),
            ("tasks/get", serde_json::json!({"taskId": "t-7", "name": "not this"})),
            ("tasks/list", serde_json::json!({"name": "x"})),
            ("tools/list", serde_json::json!({"cursor": "c"})),
        ];
        for (method, params) in cases {
            let body =
                serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params});
            let from_body = body_headers(method, Some(&plain), body.to_string().as_bytes());
            let from_value: Vec<_> = mcp_name(method, Some(&params))
                .map(|v| (MCP_NAME.clone(), v))
                .into_iter()
                .collect();
            assert_eq!(from_body, from_value, "{method} {params}");
        }
        // Laid out as this client writes a call: found at the start of
        // `params`, escapes decoded; a look-alike inside a string is not it.
        let laid_out = [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"name":"no"}}}"#,
                "echo",
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a\"b\u00e9","arguments":{}}}"#,
                "=?base64?YSJiw6k=?=",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"\"params\":{\"name\":\"no\"","method":"tools/call","params":{"name":"yes"}}"#,
                "yes",
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{"name":"no"},"name":"late"}}"#,
                "late",
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":7,"x":{"name":"no"}}}"#,
                "",
            ),
        ];
        for (body, want) in laid_out {
            let got = body_headers("tools/call", Some(&plain), body.as_bytes());
            let got: Vec<&str> = got.iter().map(|(_, v)| v.to_str().unwrap()).collect();
            let want: Vec<&str> = [want].into_iter().filter(|w| !w.is_empty()).collect();
            assert_eq!(got, want, "{body}");
        }
        // No parameters at all, or a body that is not JSON: no headers.
        let bare = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#;
        assert!(body_headers("tools/call", Some(&plain), bare).is_empty());
        assert!(body_headers("tools/call", None, b"not json").is_empty());
    }

    #[test]
    fn mcp_name_per_method() {
        let p = serde_json::json!({"name": "echo", "uri": "file:///a"});
        let name = |m| mcp_name(m, Some(&p)).map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(name("tools/call").as_deref(), Some("echo"));
        assert_eq!(name("prompts/get").as_deref(), Some("echo"));
        assert_eq!(name("resources/read").as_deref(), Some("file:///a"));
        assert_eq!(name("tools/list"), None);
        assert_eq!(mcp_name("tools/call", None), None);
        // The tasks extension routes by the task's id.
        let t = serde_json::json!({"taskId": "t-7", "name": "not this"});
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let value = mcp_name(method, Some(&t)).map(|v| v.to_str().unwrap().to_owned());
            assert_eq!(value.as_deref(), Some("t-7"), "{method}");
        }
        assert_eq!(mcp_name("tasks/list", Some(&t)), None);
    }

    #[test]
    fn excerpts_are_bounded_and_printable() {
        assert_eq!(excerpt(b"  bad\r\n\r\n request\x01 "), "bad request\u{fffd}");
        let long = vec![b'x'; 5000];
        let e = excerpt(&long);
        assert_eq!(e.chars().count(), EXCERPT_BYTES + 1);
        assert!(e.ends_with('…'));
        // Exactly the limit: whole, no ellipsis; one byte more: cut.
        let exact = vec![b'y'; EXCERPT_BYTES];
        assert_eq!(excerpt(&exact), "y".repeat(EXCERPT_BYTES));
        let over = vec![b'y'; EXCERPT_BYTES + 1];
        assert_eq!(excerpt(&over), format!("{}…", "y".repeat(EXCERPT_BYTES)));
        assert_eq!(excerpt(&[0xff, b'a']), "\u{fffd}a");
    }

    #[test]
    fn session_ids() {
        assert!(valid_session_id(&HeaderValue::from_static("abc-123_~")));
        assert!(!valid_session_id(&HeaderValue::from_static("a b")));
        assert!(!valid_session_id(&HeaderValue::from_static("")));
    }
}
