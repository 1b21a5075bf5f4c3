//! Streamable HTTP of the stateless era (2026-07-28): no sessions, the
//! request metadata headers checked against the body, each request answered
//! with one JSON body or an SSE stream of its own, and closing that stream
//! cancels the request (it ends a `subscriptions/listen`).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use mcp_proto::jsonrpc::{ErrorObject, ErrorResponse, Message, RequestId, error_code};
use mcp_proto::methods;
use mcp_proto::types::PROTOCOL_VERSION_META_KEY;
use serde_json::Value;
use tokio::sync::mpsc;

use super::Shared;
use super::body::{BodyItem, ResponseBody};
use super::service::{Handled, Reply, accepted, event_stream, json_body, rpc_error};
use super::session::{Route, Session};
use crate::config::ReplyMode;
use crate::{modern, tools};

const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// Each stateless-era POST's origin (see `Server::handle_from`): clients
/// choose their ids, so the same id from two clients (or reused by one)
/// names two requests.
static NEXT_ORIGIN: AtomicU64 = AtomicU64::new(1);

/// Whether a POST without a session speaks the stateless era: a request
/// with the stateless `_meta` or a stateless-only method, or any message
/// whose `MCP-Protocol-Version` names a stateless revision.
pub(super) fn is_modern(message: &Message, headers: &HeaderMap) -> bool {
    let header_modern = headers
        .get(PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| mcp_proto::ProtocolVersion::parse(v.trim()))
        .is_some_and(mcp_proto::ProtocolVersion::is_modern);
    header_modern
        || matches!(message, Message::Request(r)
            if modern::is_modern_only(&r.method) || modern::has_modern_meta(r.params.as_ref()))
}

/// One stateless-era POST.
pub(super) async fn post(shared: &Arc<Shared>, headers: &HeaderMap, message: Message) -> Handled {
    let session = shared.modern_session();
    shared.record_rpc_method(super::service::rpc_method(&message));
    let request = match message {
        Message::Request(request) => request,
        message @ Message::Notification(_) => {
            session.server.handle_from(NEXT_ORIGIN.fetch_add(1, Ordering::Relaxed), message);
            return Ok(accepted());
        }
        Message::Response(_) | Message::Error(_) => {
            return Ok(rpc_error(
                StatusCode::BAD_REQUEST,
                error_code::INVALID_REQUEST,
                "the server sends no requests in the stateless era, so nothing is answered",
            ));
        }
    };
    let id = request.id.clone();
    if let Err((status, error)) = check(shared, headers, &request) {
        return Ok(error_reply(status, &id, error));
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let origin = NEXT_ORIGIN.fetch_add(1, Ordering::Relaxed);
    if !session.register(origin, id.clone(), Route::Stream(tx)) {
        return Ok(super::service::text(StatusCode::NOT_FOUND, "the server is shutting down"));
    }
    // Dropped with this future (the client went away before the answer) or
    // with the SSE body: either way the request is cancelled if unanswered.
    let guard = CancelOnDrop { session: session.clone(), id, origin };
    session.server.handle_from(origin, Message::Request(request));
    let Some((first, is_reply)) = rx.recv().await else {
        return Err(io::Error::other("the server ended before the reply"));
    };
    if is_reply {
        let status = status_of(&first);
        if shared.config.reply == ReplyMode::Json || status != StatusCode::OK {
            return Ok(json_body(status, first));
        }
    }
    let (events, body) = ResponseBody::events();
    let _ = events.send(BodyItem::Data(event(&first)));
    if !is_reply {
        tokio::spawn(async move {
            while let Some((json, is_reply)) = rx.recv().await {
                if events.send(BodyItem::Data(event(&json))).is_err() || is_reply {
                    break;
                }
            }
        });
    }
    let mut response = event_stream(body.on_drop(move || drop(guard)));
    response.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

/// Cancels the request when dropped, unless it was answered.
struct CancelOnDrop {
    session: Arc<Session>,
    id: RequestId,
    origin: u64,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.session.take_stream_route(self.origin, self.id.clone()) {
            self.session.server.cancel(self.origin, self.id.clone());
        }
    }
}

/// The checks made before the core sees a request, each a 4xx with a
/// JSON-RPC error: the `_meta` (`-32602`), the `MCP-Protocol-Version`
/// header against it (`-32020`), the version (`-32022`), `Mcp-Method`,
/// `Mcp-Name` and the `Mcp-Param-*` headers (`-32020`), the method (404,
/// `-32601`).
fn check(
    shared: &Shared,
    headers: &HeaderMap,
    request: &mcp_proto::jsonrpc::Request,
) -> Result<(), (StatusCode, ErrorObject)> {
    let params = request.params.as_ref();
    let bad = |error| Err((StatusCode::BAD_REQUEST, error));
    if request.method == methods::INITIALIZE {
        return bad(modern::refuse_initialize(params, shared.config.server.era));
    }
    let meta = modern::request_meta(params, shared.config.server.era);
    if let Err(error) = &meta
        && error.code == error_code::INVALID_PARAMS
    {
        return bad(error.clone());
    }
    let version =
        params.and_then(|p| p.pointer(&format!("/_meta/{}", escape(PROTOCOL_VERSION_META_KEY))));
    let header = headers.get(PROTOCOL_VERSION).and_then(|v| v.to_str().ok()).map(str::trim);
    match header {
        None => return bad(mismatch("the MCP-Protocol-Version header is missing".into())),
        Some(h) if Some(h) != version.and_then(Value::as_str) => {
            return bad(mismatch(format!(
                "MCP-Protocol-Version header {h:?} does not match the body's {}",
                version.map_or("(none)".into(), Value::to_string)
            )));
        }
        Some(_) => {}
    }
    if let Err(error) = meta {
        return bad(error);
    }
    let method = headers.get(MCP_METHOD).and_then(|v| v.to_str().ok());
    if method != Some(request.method.as_str()) {
        return bad(mismatch(format!(
            "Mcp-Method header {method:?} does not match the body's method {:?}",
            request.method
        )));
    }
    let name_field = match request.method.as_str() {
        methods::TOOLS_CALL | methods::PROMPTS_GET => Some("name"),
        methods::RESOURCES_READ => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        let body = params.and_then(|p| p.get(field)).and_then(Value::as_str);
        let header = headers.get(MCP_NAME).and_then(|v| v.to_str().ok()).map(decode_header);
        if body.is_some() && header.as_ref().map(|h| h.as_deref()) != Some(body) {
            return bad(mismatch(format!(
                "Mcp-Name header {header:?} does not match the body's {field} {body:?}"
            )));
        }
    }
    if request.method == methods::TOOLS_CALL {
        check_param_headers(headers, params).map_err(|e| (StatusCode::BAD_REQUEST, e))?;
    }
    if !modern::serves(&request.method) {
        return Err((StatusCode::NOT_FOUND, ErrorObject::method_not_found(&request.method)));
    }
    Ok(())
}

/// The `Mcp-Param-*` headers of a `tools/call`: each argument whose schema
/// property carries `x-mcp-header` and has a value must come as that
/// header, equal after decoding (integers compared as numbers).
/// The `x-mcp-header` annotations of the tools, by tool name: (property,
/// header name) pairs, read once from the tool definitions.
fn annotated_params(name: &str) -> &'static [(String, String)] {
    static TABLE: std::sync::OnceLock<std::collections::HashMap<String, Vec<(String, String)>>> =
        std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = std::collections::HashMap::new();
        for tool in tools::definitions(true, true) {
            let Some(name) = tool["name"].as_str() else { continue };
            let Some(properties) = tool["inputSchema"]["properties"].as_object() else { continue };
            let pairs: Vec<(String, String)> = properties
                .iter()
                .filter_map(|(property, schema)| {
                    let header = schema.get("x-mcp-header")?.as_str()?;
                    Some((property.clone(), header.to_owned()))
                })
                .collect();
            if !pairs.is_empty() {
                table.insert(name.to_owned(), pairs);
            }
        }
        table
    });
    table.get(name).map_or(&[], Vec::as_slice)
}

fn check_param_headers(headers: &HeaderMap, params: Option<&Value>) -> Result<(), ErrorObject> {
    let name = params.and_then(|p| p.get("name")).and_then(Value::as_str).unwrap_or_default();
    for (property, header_name) in annotated_params(name) {
        let value = params.and_then(|p| p.get("arguments")).and_then(|a| a.get(property));
        let Some(value) = value.filter(|v| !v.is_null()) else { continue };
        let header = format!("mcp-param-{}", header_name.to_ascii_lowercase());
        let given = headers.get(header.as_str()).and_then(|v| v.to_str().ok()).map(decode_header);
        let Some(Some(given)) = given else {
            return Err(mismatch(format!("the {header} header is missing or malformed")));
        };
        let equal = match value {
            Value::String(s) => given == *s,
            Value::Bool(b) => given == b.to_string(),
            Value::Number(n) => given.parse::<f64>().ok() == n.as_f64(),
            _ => false,
        };
        if !equal {
            return Err(mismatch(format!(
                "the {header} header {given:?} does not match the argument {property} = {value}"
            )));
        }
    }
    Ok(())
}

fn mismatch(message: String) -> ErrorObject {
    ErrorObject::new(error_code::HEADER_MISMATCH, format!("Header mismatch: {message}"))
}

/// The HTTP status of a stateless-era reply: 404 for `-32601`, 400 for the
/// stateless era's own errors, else 200.
fn status_of(reply: &[u8]) -> StatusCode {
    let code = serde_json::from_slice::<Value>(reply)
        .ok()
        .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64));
    match code {
        Some(error_code::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(
            error_code::HEADER_MISMATCH
            | error_code::MISSING_CLIENT_CAPABILITY
            | error_code::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn error_reply(status: StatusCode, id: &RequestId, error: ErrorObject) -> Reply {
    let message = Message::Error(ErrorResponse::new(Some(id.clone()), error));
    let body = serde_json::to_vec(&message).unwrap_or_default();
    let mut reply = json_body(status, body);
    reply.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    reply
}

/// One SSE event without an id (stateless-era streams are not resumable).
fn event(json: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(json.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(json);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// A header value, decoded from the `=?base64?...?=` form when it has it;
/// `None` when that form does not decode to UTF-8.
fn decode_header(value: &str) -> Option<String> {
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        Some(encoded) => String::from_utf8(base64_decode(encoded)?).ok(),
        None => Some(value.to_owned()),
    }
}

/// Standard base64 (RFC 4648) with optional padding.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.trim_end_matches('=').bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        buffer = (buffer << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    Some(out)
}

/// A JSON pointer token for a key (`~` and `/` escaped).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_decode() {
        assert_eq!(decode_header("us-west1").as_deref(), Some("us-west1"));
        assert_eq!(
            decode_header("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(decode_header("=?base64?IHBhZGRlZCA=?=").as_deref(), Some(" padded "));
        assert_eq!(decode_header("=?base64?!!?="), None);
    }

    #[test]
    fn statuses_follow_the_error_code() {
        assert_eq!(status_of(br#"{"id":1,"result":{}}"#), StatusCode::OK);
        assert_eq!(status_of(br#"{"id":1,"error":{"code":-32601}}"#), StatusCode::NOT_FOUND);
        assert_eq!(status_of(br#"{"id":1,"error":{"code":-32021}}"#), StatusCode::BAD_REQUEST);
        assert_eq!(status_of(br#"{"id":1,"error":{"code":-32602}}"#), StatusCode::OK);
    }
}
