//! Pure pieces of the Streamable HTTP exchange: header names, media types,
//! `Mcp-Name` values, body excerpts, the reconnection backoff.

use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue, header};
use mcp_proto::backoff::Backoff;
use serde_json::Value;

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
    let Ok(value) = value.to_str() else { return MediaType::Other("<non-ASCII>".into()) };
    let essence = value.split(';').next().unwrap_or("").trim();
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

/// The `Mcp-Param-*` headers of a `tools/call` of `tool` with the request's
/// `params` (their `arguments`), as header names and values.
pub(crate) fn param_headers(
    tool: &mcp_proto::types::Tool,
    params: Option<&Value>,
) -> Vec<(HeaderName, HeaderValue)> {
    let arguments = params.and_then(|p| p.get("arguments")).and_then(Value::as_object);
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
/// [`mcp_proto::methods::name_header_param`] names.
pub(crate) fn mcp_name(method: &str, params: Option<&Value>) -> Option<HeaderValue> {
    let key = mcp_proto::methods::name_header_param(method)?;
    params?.get(key)?.as_str().map(encoded_header_value)
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
        let got: Vec<(String, String)> = param_headers(&tool, Some(&params))
            .into_iter()
            .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned()))
            .collect();
        let want = [("mcp-param-n", "7"), ("mcp-param-region", "=?base64?w6k=?=")];
        let want: Vec<(String, String)> =
            want.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect();
        assert_eq!(got, want);
        assert!(param_headers(&tool, Some(&serde_json::json!({"name": "t"}))).is_empty());
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
