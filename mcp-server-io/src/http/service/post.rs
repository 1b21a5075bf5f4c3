//! A POST to the MCP endpoint: `Accept` and `Content-Type` checked, the
//! body read under its cap and deadline and decoded, a stateless-era
//! message handed to `http/stateless.rs`, a handshake-era one to its
//! session (made by an `initialize`), and the answer given as the options'
//! [`ReplyMode`] says: one JSON body, an SSE stream, or the first when the
//! reply comes first.

use std::io;
use std::sync::Arc;

use http::request::Parts;
use http::{HeaderValue, StatusCode};
use hyper::body::Body;
use mcp_proto::jsonrpc::{
    DecodeError, Message, Received, ReceivedIncoming, decode_received, error_code,
};
use mcp_proto::methods;
use tokio::sync::oneshot;

use super::super::SESSION_ID;
use super::super::body::ResponseBody;
use super::super::guard::{self, accepts_all, is_json};
use super::super::reply::{Reply, accepted, event_stream, json_body, rpc_error, text};
use super::super::routes::Route;
use super::super::stateless::{is_modern, stateless_post};
use super::super::stream::EventStream;
use super::{
    Handled, HttpSession, ReplyMode, Shared, decode_failure, find_session, id_only_event, read_body,
};
use crate::Handler;
use crate::era::ServeEra;
use crate::session::RequestKey;

pub(super) async fn post<H: Handler, B>(shared: &Arc<Shared<H>>, parts: Parts, body: B) -> Handled
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let options = &shared.options;
    let headers = &parts.headers;
    if !accepts_all(headers, &["application/json", "text/event-stream"]) {
        return Ok(text(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must list both application/json and text/event-stream",
        ));
    }
    if !is_json(headers) {
        return Ok(text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        ));
    }
    let body = match read_body(body, options).await? {
        Ok(body) => body,
        Err(refusal) => return Ok(refusal),
    };
    let era = options.session.era;
    // Read once: whether the request is of the stateless era, and its
    // session.
    let session_id = headers.get(SESSION_ID);
    // A request's parameters stay the text the client wrote, for the
    // handler to decode once (as over stdio).
    let message = match decode_received(&body) {
        Ok(ReceivedIncoming::Batch(_)) if era == ServeEra::Modern => {
            return Ok(rpc_error(
                StatusCode::BAD_REQUEST,
                error_code::INVALID_REQUEST,
                "the stateless era takes one message per POST",
            ));
        }
        Ok(ReceivedIncoming::Single(message)) => message,
        Ok(ReceivedIncoming::Batch(items)) => {
            return Ok(match find_session(shared, session_id, false) {
                Some(Ok(session)) => post_batch(shared, &session, items),
                Some(Err(refusal)) => refusal,
                None => text(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required"),
            });
        }
        Err(e) => return Ok(decode_failure(&e)),
    };
    let is_initialize = match &message {
        Received::Request(r) => r.method == methods::INITIALIZE,
        Received::Message(Message::Request(r)) => r.method == methods::INITIALIZE,
        Received::Message(_) => false,
    };
    let modern = match era {
        ServeEra::Legacy => false,
        ServeEra::Modern => true,
        _ => !is_initialize && session_id.is_none() && is_modern(&message, headers),
    };
    if modern {
        return stateless_post(shared, headers, message).await;
    }
    if shared.hooks.never_answer(&message) {
        std::future::pending::<()>().await;
    }
    let session = match find_session(shared, session_id, is_initialize) {
        Some(Ok(session)) => session,
        Some(Err(refusal)) => return Ok(refusal),
        None => match shared.new_session(false) {
            Some(session) => session,
            None => return Ok(text(StatusCode::SERVICE_UNAVAILABLE, "too many sessions")),
        },
    };
    if !is_initialize && let Err(refusal) = guard::check_version_header(headers) {
        return Ok(refusal.reply());
    }
    if shared.hooks.expire_session(session.count_post()) {
        shared.end_session(&session, true);
        return Ok(text(StatusCode::NOT_FOUND, "session expired"));
    }
    shared.hooks.message(&message);
    let id = match &message {
        Received::Request(rpc) => rpc.id.clone(),
        Received::Message(Message::Request(rpc)) => rpc.id.clone(),
        Received::Message(_) => {
            session.session.handle_received(0, message);
            return Ok(accepted());
        }
    };
    if shared.hooks.id_only_events() && !is_initialize {
        // Never handed to the session: the reply never comes.
        return Ok(id_only_event(shared));
    }
    let key = RequestKey { origin: 0, id };
    let session_header = session.id.as_deref().filter(|_| is_initialize);
    let mut response = match options.reply {
        ReplyMode::Json => {
            let (tx, rx) = oneshot::channel();
            if !session.routes.register(key, Route::Json(tx)) {
                return Ok(text(StatusCode::NOT_FOUND, "session ended"));
            }
            session.session.handle_received(0, message);
            let reply = session
                .wait(shared, rx)
                .await
                .map_err(|_| io::Error::other("the session ended before the reply"))?;
            json_body(StatusCode::OK, reply)
        }
        ReplyMode::Sse => {
            let (tx, body) = ResponseBody::events(shared.options.max_unsent_events);
            let stream = open_reply_stream(shared, &session, tx);
            if shared.hooks.close_after_priming() {
                stream.disconnect();
            }
            if !session.routes.register(key, Route::Sse(stream)) {
                return Ok(text(StatusCode::NOT_FOUND, "session ended"));
            }
            // A reply the handler gives at once is on the stream before the
            // response goes out: head and events leave in one write.
            if session.handle_and_route(shared, message) > 1 {
                // Messages for other streams were routed too: their
                // connections' tasks write first, as when the routing task
                // woke them.
                tokio::task::yield_now().await;
            }
            event_stream(body.settle())
        }
        ReplyMode::Auto => {
            let (tx, rx) = oneshot::channel();
            if !session.routes.register(key.clone(), Route::First(tx)) {
                return Ok(text(StatusCode::NOT_FOUND, "session ended"));
            }
            session.session.handle_received(0, message);
            let Ok((first, is_reply)) = session.wait(shared, rx).await else {
                return Err(io::Error::other("the session ended before the reply"));
            };
            if is_reply {
                json_body(StatusCode::OK, first)
            } else {
                let (tx, body) = ResponseBody::events(shared.options.max_unsent_events);
                let stream = open_reply_stream(shared, &session, tx);
                stream.push_message(&first);
                if !session.routes.upgrade_held(&key, stream.clone()) {
                    // The reply was already there, or the session ended.
                    stream.disconnect();
                }
                event_stream(body.settle())
            }
        }
    };
    if let Some(value) = session_header.and_then(|id| HeaderValue::from_str(id).ok()) {
        response.headers_mut().insert(SESSION_ID, value);
    }
    Ok(response)
}

/// A new reply stream of the session, attached to `tx`, with its priming
/// event when the options ask for one.
fn open_reply_stream<H: Handler>(
    shared: &Shared<H>,
    session: &HttpSession<H>,
    tx: super::super::body::EventSender,
) -> Arc<EventStream> {
    let stream = session.routes.open_reply_stream(shared.stream_name());
    stream.attach(tx, None, shared.hooks.reply_stream_budget());
    if shared.options.priming || shared.hooks.close_after_priming() {
        stream.push_priming(shared.options.retry_ms);
    }
    stream
}

/// A batch (2025-03-26): notifications and responses are handed to the
/// session; requests in a batch are refused, as this service answers each
/// POST with one reply.
fn post_batch<H: Handler>(
    shared: &Shared<H>,
    session: &HttpSession<H>,
    items: Vec<Result<Received, DecodeError>>,
) -> Reply {
    let mut messages = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Ok(Received::Request(_) | Received::Message(Message::Request(_))) => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    error_code::INVALID_REQUEST,
                    "this server does not take requests in a batch",
                );
            }
            Ok(Received::Message(message)) => messages.push(message),
            Err(e) => return decode_failure(&e),
        }
    }
    for message in messages {
        let message = Received::Message(message);
        shared.hooks.message(&message);
        session.session.handle_received(0, message);
    }
    accepted()
}
