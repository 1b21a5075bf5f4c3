//! The responses a server sends, each with the [`ResponseBody`] of this
//! crate.

use bytes::Bytes;
use http::header::{ALLOW, CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use mcp_proto::jsonrpc::{ErrorObject, ErrorResponse, Message, RequestId};
use serde_json::json;

use super::body::ResponseBody;

/// A response of this crate.
pub type Reply = Response<ResponseBody>;

/// A `text/plain` response (the text and a newline).
pub fn text(status: StatusCode, body: &str) -> Reply {
    let mut response = Response::new(ResponseBody::full(format!("{body}\n")));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// An `application/json` response.
pub fn json_body(status: StatusCode, body: impl Into<Bytes>) -> Reply {
    let mut response = Response::new(ResponseBody::full(body));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A JSON-RPC error with a `null` id (the request could not be read).
pub fn rpc_error(status: StatusCode, code: i64, message: &str) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    json_body(status, body.to_string())
}

/// A JSON-RPC error answering request `id`.
pub fn error_reply(status: StatusCode, id: &RequestId, error: ErrorObject) -> Reply {
    let message = Message::Error(ErrorResponse::new(Some(id.clone()), error));
    json_body(status, serde_json::to_vec(&message).unwrap_or_default())
}

/// `202 Accepted` with no body (a POST of notifications or responses).
pub fn accepted() -> Reply {
    let mut response = Response::new(ResponseBody::empty());
    *response.status_mut() = StatusCode::ACCEPTED;
    response
}

/// `405 Method Not Allowed` with `Allow`.
pub fn not_allowed(allow: &'static str) -> Reply {
    let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    response.headers_mut().insert(ALLOW, HeaderValue::from_static(allow));
    response
}

/// A `text/event-stream` response (`Cache-Control: no-cache`).
pub fn event_stream(body: ResponseBody) -> Reply {
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// One SSE `message` event without an id (stateless-era streams are not
/// resumable).
pub fn message_event(json: &[u8]) -> Bytes {
    let mut event = Vec::with_capacity(json.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(json);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}
