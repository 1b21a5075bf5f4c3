//! Streamable HTTP of the stateless era (2026-07-28): no sessions, the
//! request metadata headers checked against the body, each request answered
//! with one JSON body or an SSE stream of its own, and closing that stream
//! cancels the request (it ends a `subscriptions/listen`).

use std::io;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use http::{HeaderMap, HeaderValue, StatusCode};
use mcp_proto::jsonrpc::{ErrorObject, Message, RequestId, error_code};
use mcp_proto::methods;
use mcp_server_io::http::body::{BodyItem, ResponseBody};
use mcp_server_io::http::guard;
use mcp_server_io::http::reply::{
    accepted, error_reply, event_stream, json_body, message_event, rpc_error,
};
use mcp_server_io::stateless::{
    has_stateless_meta, http_status, is_stateless_only, refuse_initialize, request_meta,
};
use serde_json::Value;
use tokio::sync::mpsc;

use super::Shared;
use super::service::Handled;
use super::session::{Route, Session};
use crate::config::ReplyMode;
use crate::{modern, tools};

/// Each stateless-era POST's origin (see `Server::handle_from`): clients
/// choose their ids, so the same id from two clients (or reused by one)
/// names two requests.
static NEXT_ORIGIN: AtomicU64 = AtomicU64::new(1);

/// Whether a POST without a session speaks the stateless era: a request
/// with the stateless `_meta` or a stateless-only method, or any message
/// whose `MCP-Protocol-Version` names a stateless revision.
pub(super) fn is_modern(message: &Message, headers: &HeaderMap) -> bool {
    guard::stateless_version_header(headers)
        || matches!(message, Message::Request(r)
            if is_stateless_only(&r.method) || has_stateless_meta(r.params.as_ref()))
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
        return Ok(mcp_server_io::http::reply::text(
            StatusCode::NOT_FOUND,
            "the server is shutting down",
        ));
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
    let _ = events.send(BodyItem::Data(message_event(&first)));
    if !is_reply {
        tokio::spawn(async move {
            while let Some((json, is_reply)) = rx.recv().await {
                if events.send(BodyItem::Data(message_event(&json))).is_err() || is_reply {
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
        return bad(refuse_initialize(params, shared.config.server.era));
    }
    let meta = request_meta(params, shared.config.server.era);
    if let Err(error) = &meta
        && error.code == error_code::INVALID_PARAMS
    {
        return bad(error.clone());
    }
    if let Err(error) = guard::check_stateless_version(headers, request) {
        return bad(error);
    }
    if let Err(error) = meta {
        return bad(error);
    }
    let name = params.and_then(|p| p.get("name")).and_then(Value::as_str).unwrap_or_default();
    if let Err(error) = guard::check_stateless_names(headers, request, annotated_params(name)) {
        return bad(error);
    }
    if !modern::serves(&request.method) {
        return Err((StatusCode::NOT_FOUND, ErrorObject::method_not_found(&request.method)));
    }
    Ok(())
}

/// The `x-mcp-header` annotations of the tools, by tool name: (property,
/// header name) pairs, read once from the tool definitions.
fn annotated_params(name: &str) -> &'static [(String, String)] {
    static TABLE: OnceLock<std::collections::HashMap<String, Vec<(String, String)>>> =
        OnceLock::new();
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

/// The HTTP status of a stateless-era reply: that of its error code.
fn status_of(reply: &[u8]) -> StatusCode {
    let code = serde_json::from_slice::<Value>(reply)
        .ok()
        .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64));
    code.and_then(|c| StatusCode::from_u16(http_status(c)).ok()).unwrap_or(StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_follow_the_error_code() {
        assert_eq!(status_of(br#"{"id":1,"result":{}}"#), StatusCode::OK);
        assert_eq!(status_of(br#"{"id":1,"error":{"code":-32601}}"#), StatusCode::NOT_FOUND);
        assert_eq!(status_of(br#"{"id":1,"error":{"code":-32021}}"#), StatusCode::BAD_REQUEST);
        assert_eq!(status_of(br#"{"id":1,"error":{"code":-32602}}"#), StatusCode::OK);
    }
}
