//! The testkit's side of the HTTP service: its fault switches as the
//! service's hooks, its authorization checks (a JWT from a real
//! authorization server, a fixed bearer token, a forced 403), and the
//! recording of what clients send.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::header::LOCATION;
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode};
use mcp_proto::jsonrpc::{Message, Received, RequestId};
use mcp_proto::methods;
use mcp_server_io::http::auth::{AuthFuture, Authorize, BearerToken, WWW_AUTHENTICATE};
use mcp_server_io::http::body::ResponseBody;
use mcp_server_io::http::hooks::{HookFuture, HttpHooks};
use mcp_server_io::http::reply::{Reply, json_body, text};
use mcp_server_io::{ServeEra, Session};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::{Stats, lock};
use crate::config::{HttpConfig, Redirect};
use crate::server::{Server, Testkit};

/// The hooks of one server.
pub(super) struct Hooks {
    config: HttpConfig,
    /// `http://127.0.0.1:PORT`.
    base: String,
    stats: Arc<Mutex<Stats>>,
}

impl Hooks {
    pub(super) fn new(config: HttpConfig, base: String, stats: Arc<Mutex<Stats>>) -> Self {
        Hooks { config, base, stats }
    }
}

impl HttpHooks<Testkit> for Hooks {
    fn request(&self, request: &Parts) {
        let target = request.uri.path_and_query().map_or("/", |p| p.as_str());
        lock(&self.stats).record_request(
            &request.method,
            target,
            &request.headers,
            request.version,
        );
    }

    fn intercept<'a>(&'a self, request: &'a Parts) -> HookFuture<'a, Option<Reply>> {
        Box::pin(std::future::ready(self.before_auth(request)))
    }

    fn intercept_authorized(&self, request: &Parts) -> Option<Reply> {
        let code = self.config.status.filter(|_| request.method == Method::POST)?;
        let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        Some(text(status, &format!("status {code} on purpose")))
    }

    fn message(&self, message: &Received) {
        let method: &str = match message {
            Received::Request(r) => &r.method,
            Received::Message(Message::Request(r)) => &r.method,
            Received::Message(Message::Notification(n)) => &n.method,
            Received::Message(_) => "(response)",
        };
        lock(&self.stats).record_rpc_method(method);
    }

    fn response_delay(&self) -> Option<Duration> {
        self.config.slow_headers
    }

    fn expire_session(&self, posts: u64) -> bool {
        self.config.expire_session_after.is_some_and(|n| posts > n)
    }

    fn never_answer(&self, message: &Received) -> bool {
        // A legacy server that never answers what it does not know.
        self.config.server.era == ServeEra::Legacy
            && self.config.server.silent_discover
            && match message {
                Received::Request(r) => r.method == methods::SERVER_DISCOVER,
                Received::Message(Message::Request(r)) => r.method == methods::SERVER_DISCOVER,
                Received::Message(_) => false,
            }
    }

    fn id_only_events(&self) -> bool {
        self.config.id_only_events
    }

    fn reply_stream_budget(&self) -> Option<usize> {
        self.config.close_after_events
    }

    fn close_after_priming(&self) -> bool {
        self.config.close_after_priming
    }

    fn encode_reply(&self, reply: &Message) -> Option<Bytes> {
        let size = self.config.oversized_body?;
        Some(pad(serde_json::to_value(reply).ok()?, size))
    }

    fn encode_raw_reply(&self, id: &RequestId, result: &RawValue) -> Option<Bytes> {
        let size = self.config.oversized_body?;
        let result: Value = serde_json::from_str(result.get()).ok()?;
        Some(pad(json!({"jsonrpc": "2.0", "id": id, "result": result}), size))
    }

    fn exit(&self, code: i32) -> HookFuture<'static, ()> {
        if !self.config.exit_process {
            return Box::pin(std::future::ready(()));
        }
        Box::pin(async move {
            // Let the connections write what was queued before.
            tokio::time::sleep(Duration::from_millis(200)).await;
            std::process::exit(code);
        })
    }

    fn session_closed(&self, session: &Session<Testkit>) {
        Server::from_session(session.clone()).abort_tasks();
    }
}

impl Hooks {
    /// What is answered before authorization: the protected resource
    /// metadata of `--require-auth`, and the redirects.
    fn before_auth(&self, request: &Parts) -> Option<Reply> {
        let config = &self.config;
        let path = request.uri.path();
        if path.starts_with("/.well-known/oauth-protected-resource")
            && config.require_auth.is_some()
            && config.jwt_auth.is_none()
        {
            let metadata = json!({
                "resource": format!("{}/mcp", self.base),
                "authorization_servers": [],
                "scopes_supported": ["mcp"],
                "bearer_methods_supported": ["header"],
            });
            return Some(json_body(StatusCode::OK, metadata.to_string()));
        }
        if request.method != Method::POST || path != "/mcp" || config.legacy {
            return None;
        }
        let location = match &config.redirect {
            Redirect::SameOrigin => "/mcp/",
            Redirect::CrossOrigin(url) => url.as_str(),
            _ => return None,
        };
        let mut response = text(StatusCode::TEMPORARY_REDIRECT, "moved to another endpoint");
        if let Ok(value) = HeaderValue::from_str(location) {
            response.headers_mut().insert(LOCATION, value);
        }
        Some(response)
    }
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks").field("base", &self.base).finish_non_exhaustive()
    }
}

/// The authorization a configuration asks for, if any.
pub(super) fn authorize(
    config: &HttpConfig,
    base: &str,
    waived: Arc<AtomicBool>,
) -> Option<Arc<dyn Authorize>> {
    if config.jwt_auth.is_none() && config.require_auth.is_none() && !config.forbid_scope {
        return None;
    }
    let bearer = config.require_auth.as_ref().map(|token| {
        let challenge = config.challenge.clone().unwrap_or_else(|| {
            format!(
                "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource\", \
                 scope=\"mcp\""
            )
        });
        BearerToken::new(token.clone()).with_challenge(challenge)
    });
    Some(Arc::new(Auth {
        jwt: config.jwt_auth.clone().map(crate::jwt::Verifier::new),
        base: base.to_owned(),
        bearer,
        forbid_scope: config.forbid_scope,
        waived,
    }))
}

/// The testkit's checks, in order: a JWT an authorization server signed,
/// the fixed bearer token, then a forced 403 `insufficient_scope`.
struct Auth {
    jwt: Option<crate::jwt::Verifier>,
    base: String,
    bearer: Option<BearerToken>,
    forbid_scope: bool,
    /// Every check skipped while set (`HttpServerHandle::waive_auth`).
    waived: Arc<AtomicBool>,
}

impl Authorize for Auth {
    fn authorize<'a>(&'a self, request: &'a Parts) -> AuthFuture<'a> {
        Box::pin(async move {
            if self.waived.load(Ordering::Relaxed) {
                return Ok(());
            }
            if let Some(reply) = crate::jwt::guard(self.jwt.as_ref(), &self.base, request).await {
                return Err(reply.map(ResponseBody::full));
            }
            if let Some(refusal) = self.bearer.as_ref().and_then(|b| b.refusal(&request.headers)) {
                return Err(refusal);
            }
            if self.forbid_scope {
                let mut response = text(StatusCode::FORBIDDEN, "insufficient scope");
                response.headers_mut().insert(
                    WWW_AUTHENTICATE,
                    HeaderValue::from_static(
                        "Bearer error=\"insufficient_scope\", scope=\"mcp admin\"",
                    ),
                );
                return Err(response);
            }
            Ok(())
        })
    }
}

/// Serializes a reply padded to `size` bytes with a `_meta.padding` string
/// in a result (`data.padding` in an error).
fn pad(mut value: Value, size: usize) -> Bytes {
    let (outer, inner) = if value.get("result").is_some_and(Value::is_object) {
        ("result", "_meta")
    } else if value.get("error").is_some_and(Value::is_object) {
        ("error", "data")
    } else {
        return Bytes::from(value.to_string());
    };
    let set = |value: &mut Value, padding: String| {
        let slot = value[outer]
            .as_object_mut()
            .map(|o| o.entry(inner).or_insert_with(|| Value::Object(Default::default())));
        if let Some(Value::Object(slot)) = slot {
            slot.insert("padding".into(), Value::String(padding));
        }
    };
    set(&mut value, String::new());
    let base = value.to_string().len();
    set(&mut value, "x".repeat(size.saturating_sub(base)));
    Bytes::from(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_reaches_the_exact_size() {
        let reply = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        let bytes = pad(reply.clone(), 5000);
        assert_eq!(bytes.len(), 5000);
        let back: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back["result"]["content"], json!([]));
        let error = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "m"}});
        assert_eq!(pad(error, 300).len(), 300);
    }
}
