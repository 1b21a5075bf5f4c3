//! The stateless era's POSTs (2026-07-28): no `Mcp-Session-Id`, every
//! request its own origin in the one session that serves them, its
//! metadata headers checked against the body, answered with one JSON body
//! or an SSE stream of its own that cancels the request when it closes.

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use http::{HeaderMap, HeaderValue, StatusCode};
use mcp_proto::jsonrpc::{ErrorObject, Message, RawRequest, Received, Request, error_code};
use mcp_proto::methods;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use super::body::{EventSender, Refused, ResponseBody};
use super::guard;
use super::reply::{
    accepted, error_reply, event_stream, json_body, message_event, rpc_error, text,
};
use super::routes::Route;
use super::service::{Handled, HttpSession, ReplyMode, Shared};
use crate::Handler;
use crate::params::text_has_stateless_meta;
use crate::session::RequestKey;
use crate::stateless::{
    has_stateless_meta, http_status, is_stateless_only, refuse_initialize, request_meta,
};

/// Whether a POST without a session speaks the stateless era: a request
/// with the stateless `_meta` or a stateless-only method, or any message
/// whose `MCP-Protocol-Version` names a stateless revision.
pub(super) fn is_modern(received: &Received, headers: &HeaderMap) -> bool {
    guard::stateless_version_header(headers)
        || match received {
            Received::Request(r) => {
                is_stateless_only(&r.method)
                    || r.params.as_deref().is_some_and(text_has_stateless_meta)
            }
            Received::Message(Message::Request(r)) => {
                is_stateless_only(&r.method) || has_stateless_meta(r.params.as_ref())
            }
            Received::Message(_) => false,
        }
}

/// One stateless-era POST: no session, the request metadata headers
/// checked against the body, answered with one JSON body or an SSE stream
/// of its own; closing that stream cancels the request (it ends a
/// `subscriptions/listen`).
pub(super) async fn stateless_post<H: Handler>(
    shared: &Arc<Shared<H>>,
    headers: &HeaderMap,
    received: Received,
) -> Handled {
    let session = shared.modern_session();
    shared.hooks.message(&received);
    let request = match received {
        Received::Request(request) => request,
        Received::Message(Message::Request(request)) => raw_request(request),
        Received::Message(message @ Message::Notification(_)) => {
            let origin = shared.next_origin.fetch_add(1, Ordering::Relaxed);
            session.session.handle_from(origin, message);
            return Ok(accepted());
        }
        Received::Message(Message::Response(_) | Message::Error(_)) => {
            return Ok(rpc_error(
                StatusCode::BAD_REQUEST,
                error_code::INVALID_REQUEST,
                "the server sends no requests in the stateless era, so nothing is answered",
            ));
        }
    };
    let id = request.id.clone();
    if let Err((status, error)) = check_stateless(shared, &session, headers, &request) {
        return Ok(error_reply(status, &id, error));
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let origin = shared.next_origin.fetch_add(1, Ordering::Relaxed);
    let key = RequestKey { origin, id };
    if !session.routes.register(key.clone(), Route::Stream(tx)) {
        return Ok(text(StatusCode::NOT_FOUND, "the server is shutting down"));
    }
    // Dropped with this future (the client went away before the answer) or
    // with the SSE body: either way the request is cancelled if unanswered.
    let guard = CancelOnDrop { session: session.clone(), key };
    // The parameters reach the handler as the client wrote them.
    session.session.handle_received(origin, Received::Request(request));
    let Some((first, is_reply)) = session.wait(shared, rx.recv()).await else {
        return Err(io::Error::other("the server ended before the reply"));
    };
    if is_reply {
        let status = status_of(&first);
        if shared.options.reply != ReplyMode::Sse || status != StatusCode::OK {
            return Ok(json_body(status, first));
        }
    }
    let (events, body) = ResponseBody::events(shared.options.max_unsent_events);
    let _ = events.send_past_cap(message_event(&first));
    if is_reply {
        // The stream is whole: it goes out as one fixed body.
        drop(events);
    } else {
        let (session, key) = (session.clone(), guard.key.clone());
        tokio::spawn(async move {
            while let Some((json, is_reply)) = rx.recv().await {
                let event = message_event(&json);
                // The reply is always queued: the stream ends with it.
                let room = is_reply || events.has_room() || room_within(&events, STALL_GRACE).await;
                let sent = match room {
                    true if is_reply => events.send_past_cap(event),
                    true => events.send(event),
                    false => Err(Refused::Full),
                };
                match sent {
                    Ok(()) if !is_reply => {}
                    Ok(()) | Err(Refused::Closed) => break,
                    Err(_) => {
                        // The client took nothing for a while with the cap
                        // of events waiting: the stream is cut after what
                        // waits, and the request (a stream of this era
                        // cannot be resumed) cancelled.
                        tracing::debug!(
                            unsent = events.unsent(),
                            "a stateless-era stream's client does not read: the stream is cut and its request cancelled"
                        );
                        events.cut();
                        cancel_unanswered(&session, &key);
                        break;
                    }
                }
            }
        });
    }
    let mut response = event_stream(body.settle().on_drop(move || drop(guard)));
    response.headers_mut().insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

/// How long a stateless-era stream at its cap of events waiting unsent
/// waits for its client to take one before it is cut: a burst of events
/// faster than a reading client takes them is not a client that stopped
/// reading. Meanwhile the request's further messages wait in its route.
const STALL_GRACE: Duration = Duration::from_secs(1);

/// Whether the stream has room for an event within `grace` (looked at
/// every 10 ms: only a stream at its cap waits here).
async fn room_within(events: &EventSender, grace: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + grace;
    loop {
        tokio::time::sleep(Duration::from_millis(10)).await;
        if events.has_room() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
    }
}

/// Cancels the request when dropped, unless it was answered.
struct CancelOnDrop<H: Handler> {
    session: Arc<HttpSession<H>>,
    key: RequestKey,
}

impl<H: Handler> Drop for CancelOnDrop<H> {
    fn drop(&mut self) {
        cancel_unanswered(&self.session, &self.key);
    }
}

/// Cancels a stateless-era request unless it was answered (its route
/// taken by the reply).
fn cancel_unanswered<H: Handler>(session: &HttpSession<H>, key: &RequestKey) {
    if session.routes.take_stream_route(key) {
        session.session.cancel(key.origin, key.id.clone());
    }
}

/// The checks made before the session sees a stateless-era request, each a
/// 4xx with a JSON-RPC error: the `_meta` (`-32602`), the
/// `MCP-Protocol-Version` header against it (`-32020`), the version
/// (`-32022`), `Mcp-Method`, `Mcp-Name` and the `Mcp-Param-*` headers the
/// handler's [`Handler::param_headers`] names (`-32020`).
fn check_stateless<H: Handler>(
    shared: &Shared<H>,
    session: &HttpSession<H>,
    headers: &HeaderMap,
    raw: &RawRequest,
) -> Result<(), (StatusCode, ErrorObject)> {
    let era = shared.options.session.era;
    let request = &Request {
        id: raw.id.clone(),
        method: raw.method.to_string(),
        params: raw.params.as_deref().map(readable),
    };
    let params = request.params.as_ref();
    let bad = |error| Err((StatusCode::BAD_REQUEST, error));
    if request.method == methods::INITIALIZE {
        return bad(refuse_initialize(params, era));
    }
    let meta = request_meta(params, era);
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
    let param_headers = if request.method == methods::TOOLS_CALL {
        session.session.handler().param_headers(name)
    } else {
        Vec::new()
    };
    if let Err(error) = guard::check_stateless_names(headers, request, &param_headers) {
        return bad(error);
    }
    Ok(())
}

/// A request whose parameters are a value, as text.
fn raw_request(request: Request) -> RawRequest {
    let Request { id, method, params } = request;
    let params = params.and_then(|p| serde_json::value::to_raw_value(&p).ok());
    RawRequest { id, method: method.into(), params, call: None }
}

/// What a [`Value`] can show of parameters' text, for the checks that read
/// it: the text itself when a value holds it, else each member or element
/// on its own, a number no double holds (`1e400`) shown as `null`. The
/// handler gets the text.
fn readable(text: &RawValue) -> Value {
    if let Ok(value) = serde_json::from_str(text.get()) {
        return value;
    }
    if let Ok(members) = serde_json::from_str::<BTreeMap<String, &RawValue>>(text.get()) {
        return Value::Object(members.into_iter().map(|(k, v)| (k, readable(v))).collect());
    }
    match serde_json::from_str::<Vec<&RawValue>>(text.get()) {
        Ok(items) => Value::Array(items.into_iter().map(readable).collect()),
        Err(_) => Value::Null,
    }
}

/// The HTTP status of a stateless-era reply: that of its error code (read
/// without building a `Value` of the reply).
fn status_of(reply: &[u8]) -> StatusCode {
    use serde_json::value::RawValue;
    let members = serde_json::from_slice::<std::collections::HashMap<String, &RawValue>>(reply);
    let error =
        members.ok().and_then(|m| Some(serde_json::from_str::<Value>(m.get("error")?.get())));
    let code = error.and_then(|e| e.ok()?.get("code")?.as_i64());
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
