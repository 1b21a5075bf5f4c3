//! Request handling: routing, status codes, sessions, streams and faults.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{AUTHORIZATION, LOCATION};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode};
use hyper::body::Incoming;
use mcp_proto::jsonrpc::{DecodeError, Incoming as Decoded, Message, decode_slice, error_code};
use mcp_proto::methods;
use mcp_server_io::http::body::ResponseBody;
use mcp_server_io::http::guard::{self, BodyError, accepts, is_json};
use mcp_server_io::http::reply::{
    Reply, accepted, event_stream, json_body, not_allowed, rpc_error, text,
};
use mcp_server_io::http::stream::parse_event_id;
use mcp_server_io::http::{LAST_EVENT_ID, SESSION_ID};
use serde_json::json;
use tokio::sync::oneshot;

use super::Shared;
use super::session::{Route, Session};
use super::stateless;
use crate::config::{Redirect, ReplyMode, ServeEra};

const WWW_AUTHENTICATE: HeaderName = HeaderName::from_static("www-authenticate");
/// How long a client may take to send a request body.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);

/// `Err` drops the connection without a response (a crashed session).
pub(super) type Handled = Result<Reply, io::Error>;

/// Serves one request.
pub(crate) async fn handle(shared: Arc<Shared>, request: Request<Incoming>) -> Handled {
    let target = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    shared.record_request(request.method(), &target, request.headers(), request.version());
    let response = route(&shared, request).await;
    if let Some(delay) = shared.config.slow_headers {
        tokio::time::sleep(delay).await;
    }
    response
}

async fn route(shared: &Arc<Shared>, request: Request<Incoming>) -> Handled {
    let config = &shared.config;
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    // DNS rebinding: the server listens on 127.0.0.1 only.
    if let Err(refusal) = guard::check_loopback(&request, &config.allowed_hosts) {
        return Ok(refusal.reply());
    }
    if let Some(reply) = crate::jwt::guard(config.jwt_auth.as_ref(), &shared.base, &request).await {
        return Ok(reply.map(ResponseBody::full));
    }
    if path.starts_with("/.well-known/oauth-protected-resource") && config.require_auth.is_some() {
        let metadata = json!({
            "resource": format!("{}/mcp", shared.base),
            "authorization_servers": [],
            "scopes_supported": ["mcp"],
            "bearer_methods_supported": ["header"],
        });
        return Ok(json_body(StatusCode::OK, metadata.to_string()));
    }
    if method == Method::POST && path == "/mcp" && !config.legacy {
        let location = match &config.redirect {
            Redirect::None => None,
            Redirect::SameOrigin => Some("/mcp/"),
            Redirect::CrossOrigin(url) => Some(url.as_str()),
        };
        if let Some(location) = location {
            let mut response = text(StatusCode::TEMPORARY_REDIRECT, "moved to another endpoint");
            if let Ok(value) = HeaderValue::from_str(location) {
                response.headers_mut().insert(LOCATION, value);
            }
            return Ok(response);
        }
    }
    if let Some(refusal) = check_auth(shared, request.headers()) {
        return Ok(refusal);
    }
    if method == Method::POST
        && let Some(code) = config.status
    {
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return Ok(text(status, &format!("status {code} on purpose")));
    }
    if config.legacy {
        return legacy(shared, request, &path).await;
    }
    if path != "/mcp" && path != "/mcp/" {
        return Ok(text(StatusCode::NOT_FOUND, "not found: the endpoint is /mcp"));
    }
    // The stateless era has neither the GET stream nor DELETE: 405, unless
    // a legacy session (dual-era) names itself.
    let sessionless = match config.server.era {
        ServeEra::Legacy => false,
        ServeEra::Modern => true,
        _ => !request.headers().contains_key(SESSION_ID),
    };
    match method {
        Method::POST => post(shared, request).await,
        Method::GET | Method::DELETE if sessionless => Ok(not_allowed("POST")),
        Method::GET => Ok(get(shared, request.headers())),
        Method::DELETE => Ok(delete(shared, request.headers())),
        _ => Ok(not_allowed("GET, POST, DELETE")),
    }
}

async fn post(shared: &Arc<Shared>, request: Request<Incoming>) -> Handled {
    let config = &shared.config;
    let headers = request.headers().clone();
    if !accepts(&headers, "application/json") || !accepts(&headers, "text/event-stream") {
        return Ok(text(
            StatusCode::NOT_ACCEPTABLE,
            "Accept must list both application/json and text/event-stream",
        ));
    }
    if !is_json(&headers) {
        return Ok(text(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be application/json",
        ));
    }
    let body = match read_body(request, config.server.max_line_bytes).await? {
        Ok(body) => body,
        Err(refusal) => return Ok(refusal),
    };
    let era = config.server.era;
    let message = match decode_slice(&body) {
        Ok(Decoded::Batch(_)) if era == ServeEra::Modern => {
            return Ok(rpc_error(
                StatusCode::BAD_REQUEST,
                error_code::INVALID_REQUEST,
                "the stateless era takes one message per POST",
            ));
        }
        Ok(Decoded::Single(message)) => message,
        Ok(Decoded::Batch(items)) => {
            return Ok(match find_session(shared, &headers, false) {
                Some(Ok(session)) => post_batch(shared, &session, items),
                Some(Err(refusal)) => refusal,
                None => text(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required"),
            });
        }
        Err(e) => return Ok(decode_failure(&e)),
    };
    let is_initialize = matches!(&message, Message::Request(r) if r.method == "initialize");
    let modern = match era {
        ServeEra::Legacy => false,
        ServeEra::Modern => true,
        _ => {
            !is_initialize
                && !headers.contains_key(SESSION_ID)
                && stateless::is_modern(&message, &headers)
        }
    };
    if modern {
        return stateless::post(shared, &headers, message).await;
    }
    if era == ServeEra::Legacy
        && config.server.silent_discover
        && matches!(&message, Message::Request(r) if r.method == methods::SERVER_DISCOVER)
    {
        // A legacy server that never answers what it does not know.
        std::future::pending::<()>().await;
    }
    let session = match find_session(shared, &headers, is_initialize) {
        Some(Ok(session)) => session,
        Some(Err(refusal)) => return Ok(refusal),
        None => match shared.new_session(false) {
            Some(session) => session,
            None => return Ok(text(StatusCode::SERVICE_UNAVAILABLE, "too many sessions")),
        },
    };
    if !is_initialize && let Err(refusal) = guard::check_version_header(&headers) {
        return Ok(refusal.reply());
    }
    if config.expire_session_after.is_some_and(|n| session.count_post() > n) {
        shared.end_session(&session, true);
        return Ok(text(StatusCode::NOT_FOUND, "session expired"));
    }
    shared.record_rpc_method(rpc_method(&message));
    let Message::Request(rpc) = &message else {
        session.server.handle(message);
        return Ok(accepted());
    };
    if config.id_only_events && !is_initialize {
        // Never handed to the core: the reply never comes.
        return Ok(id_only_event(shared));
    }
    let id = rpc.id.clone();
    let session_header = session.id.as_deref().filter(|_| is_initialize);
    match config.reply {
        ReplyMode::Json => {
            let (tx, rx) = oneshot::channel();
            if !session.register(0, id, Route::Json(tx)) {
                return Ok(text(StatusCode::NOT_FOUND, "session ended"));
            }
            session.server.handle(message);
            let reply =
                rx.await.map_err(|_| io::Error::other("the session ended before the reply"))?;
            let mut response = json_body(StatusCode::OK, reply);
            add_session_header(&mut response, session_header);
            Ok(response)
        }
        ReplyMode::Sse => {
            let (tx, body) = ResponseBody::events();
            let stream = session.open_reply_stream(shared.stream_name());
            stream.attach(tx, None, config.close_after_events);
            if config.priming {
                stream.push_priming(config.retry_ms);
            }
            if config.close_after_priming {
                stream.disconnect();
            }
            if !session.register(0, id, Route::Sse(stream)) {
                return Ok(text(StatusCode::NOT_FOUND, "session ended"));
            }
            session.server.handle(message);
            let mut response = event_stream(body);
            add_session_header(&mut response, session_header);
            Ok(response)
        }
    }
}

/// A batch (2025-03-26): notifications and responses are handed to the
/// core; requests in a batch are refused, as this server answers each POST
/// with one reply.
fn post_batch(
    shared: &Shared,
    session: &Session,
    items: Vec<Result<Message, DecodeError>>,
) -> Reply {
    let mut messages = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Ok(Message::Request(_)) => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    error_code::INVALID_REQUEST,
                    "this test server does not take requests in a batch",
                );
            }
            Ok(message) => messages.push(message),
            Err(e) => return decode_failure(&e),
        }
    }
    for message in messages {
        shared.record_rpc_method(rpc_method(&message));
        session.server.handle(message);
    }
    accepted()
}

fn get(shared: &Arc<Shared>, headers: &HeaderMap) -> Reply {
    if !accepts(headers, "text/event-stream") {
        return text(StatusCode::NOT_ACCEPTABLE, "Accept must list text/event-stream");
    }
    let session = match find_session(shared, headers, false) {
        Some(Ok(session)) => session,
        Some(Err(refusal)) => return refusal,
        None => return text(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required"),
    };
    if let Err(refusal) = guard::check_version_header(headers) {
        return refusal.reply();
    }
    if shared.config.id_only_events {
        return id_only_event(shared);
    }
    let (tx, body) = ResponseBody::events();
    match headers.get(LAST_EVENT_ID).map(|v| v.to_str().ok().and_then(parse_event_id)) {
        Some(Some((name, n))) => {
            let Some(stream) = session.stream(name) else {
                return text(StatusCode::BAD_REQUEST, "unknown Last-Event-ID");
            };
            let standalone = Arc::ptr_eq(&stream, &session.standalone());
            let budget = if standalone { None } else { shared.config.close_after_events };
            stream.attach(tx, Some(n), budget);
        }
        Some(None) => return text(StatusCode::BAD_REQUEST, "malformed Last-Event-ID"),
        None if !shared.config.get_stream => return not_allowed("POST, DELETE"),
        None => session.standalone().attach(tx, None, None),
    }
    event_stream(body)
}

/// `--id-only-events`: an event stream of one event that carries a fresh
/// id and `retry: 0` and no data, then its end.
fn id_only_event(shared: &Shared) -> Reply {
    let event = format!("id: {}-0\nretry: 0\n\n", shared.stream_name());
    event_stream(ResponseBody::full(event))
}

fn delete(shared: &Arc<Shared>, headers: &HeaderMap) -> Reply {
    if !shared.config.delete || !shared.config.sessions {
        return not_allowed("GET, POST");
    }
    match find_session(shared, headers, false) {
        Some(Ok(session)) => {
            shared.end_session(&session, false);
            text(StatusCode::OK, "session ended")
        }
        Some(Err(refusal)) => refusal,
        None => text(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required"),
    }
}

/// The 2024-11-05 HTTP+SSE transport.
async fn legacy(shared: &Arc<Shared>, request: Request<Incoming>, path: &str) -> Handled {
    match (request.method().clone(), path) {
        (Method::GET, "/mcp" | "/sse") => {
            let Some(session) = shared.new_session(true) else {
                return Ok(text(StatusCode::SERVICE_UNAVAILABLE, "too many sessions"));
            };
            let id = session.id.clone().unwrap_or_default();
            let endpoint = match &shared.config.legacy_endpoint {
                Some(url) => url.clone(),
                None => format!("/message?sessionId={id}"),
            };
            let stream = session.standalone();
            stream.push_endpoint(&endpoint);
            let (tx, body) = ResponseBody::events();
            stream.attach(tx, None, None);
            // The session lives as long as its GET stream.
            let weak = Arc::downgrade(shared);
            let body = body.on_drop(move || {
                if let Some(shared) = weak.upgrade()
                    && let Some(session) = shared.session(&id)
                {
                    shared.end_session(&session, false);
                }
            });
            Ok(event_stream(body))
        }
        (Method::POST, "/message") => {
            let id = request.uri().query().and_then(|q| {
                q.split('&').find_map(|pair| pair.strip_prefix("sessionId=")).map(str::to_owned)
            });
            let Some(id) = id else {
                return Ok(text(StatusCode::BAD_REQUEST, "sessionId query parameter required"));
            };
            let Some(session) = shared.session(&id) else {
                return Ok(text(StatusCode::NOT_FOUND, "unknown session"));
            };
            let body = match read_body(request, shared.config.server.max_line_bytes).await? {
                Ok(body) => body,
                Err(refusal) => return Ok(refusal),
            };
            match decode_slice(&body) {
                Ok(Decoded::Single(message)) => {
                    shared.record_rpc_method(rpc_method(&message));
                    session.server.handle(message);
                    Ok(accepted())
                }
                Ok(Decoded::Batch(_)) => Ok(rpc_error(
                    StatusCode::BAD_REQUEST,
                    error_code::INVALID_REQUEST,
                    "the 2024-11-05 transport takes one message per POST",
                )),
                Err(e) => Ok(decode_failure(&e)),
            }
        }
        (_, "/mcp" | "/sse") => Ok(not_allowed("GET")),
        (_, "/message") => Ok(not_allowed("POST")),
        _ => Ok(text(StatusCode::NOT_FOUND, "not found: the SSE endpoint is /mcp or /sse")),
    }
}

/// The request's session: `Some(Ok)` found, `Some(Err)` a refusal (400 with
/// no id, 404 unknown), `None` when a new one should be made (an initialize
/// without an id). With sessions off, always the shared one.
fn find_session(
    shared: &Arc<Shared>,
    headers: &HeaderMap,
    may_create: bool,
) -> Option<Result<Arc<Session>, Reply>> {
    if !shared.config.sessions {
        return Some(Ok(shared.shared_session()));
    }
    match headers.get(SESSION_ID).map(HeaderValue::to_str) {
        Some(Ok(id)) => Some(
            shared
                .session(id.trim())
                .filter(|s| s.id.is_some())
                .ok_or_else(|| text(StatusCode::NOT_FOUND, "unknown or expired session")),
        ),
        Some(Err(_)) => Some(Err(text(StatusCode::BAD_REQUEST, "malformed Mcp-Session-Id"))),
        None if may_create => None,
        None => Some(Err(text(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required"))),
    }
}

fn check_auth(shared: &Shared, headers: &HeaderMap) -> Option<Reply> {
    let config = &shared.config;
    if let Some(token) = &config.require_auth {
        let presented = headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, credentials)| credentials.trim());
        if presented != Some(token.as_str()) {
            let challenge = config.challenge.clone().unwrap_or_else(|| {
                format!(
                    "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\", \
                     scope=\"mcp\"",
                    shared.base
                )
            });
            let mut response = text(StatusCode::UNAUTHORIZED, "unauthorized");
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response.headers_mut().insert(WWW_AUTHENTICATE, value);
            }
            return Some(response);
        }
    }
    if config.forbid_scope {
        let mut response = text(StatusCode::FORBIDDEN, "insufficient scope");
        response.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Bearer error=\"insufficient_scope\", scope=\"mcp admin\""),
        );
        return Some(response);
    }
    None
}

/// The body, or a refusal (413 too large, 408 too slow); `Err` when the
/// connection failed.
async fn read_body(request: Request<Incoming>, limit: usize) -> io::Result<Result<Bytes, Reply>> {
    match guard::read_body(request.into_body(), limit, BODY_TIMEOUT).await {
        Ok(body) => Ok(Ok(body)),
        Err(BodyError::Refused(refusal)) => Ok(Err(refusal.reply())),
        Err(BodyError::Io(e)) => Err(e),
        Err(_) => Err(io::Error::other("the body could not be read")),
    }
}

fn decode_failure(error: &DecodeError) -> Reply {
    match error {
        DecodeError::Json(e) => rpc_error(
            StatusCode::BAD_REQUEST,
            error_code::PARSE_ERROR,
            &format!("Parse error: {e}"),
        ),
        e => rpc_error(
            StatusCode::BAD_REQUEST,
            error_code::INVALID_REQUEST,
            &format!("Invalid Request: {e}"),
        ),
    }
}

pub(super) fn rpc_method(message: &Message) -> &str {
    match message {
        Message::Request(r) => &r.method,
        Message::Notification(n) => &n.method,
        Message::Response(_) | Message::Error(_) => "(response)",
    }
}

fn add_session_header(response: &mut Reply, id: Option<&str>) {
    if let Some(value) = id.and_then(|id| HeaderValue::from_str(id).ok()) {
        response.headers_mut().insert(SESSION_ID, value);
    }
}
