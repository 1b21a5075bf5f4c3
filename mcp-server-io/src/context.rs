//! The handler's view of one request: [`Context`].

use mcp_proto::jsonrpc::ErrorObject;
use mcp_proto::methods;
use serde_json::{Value, json};

use crate::handler::Handler;
use crate::session::{RequestKey, RequestTimeout, Session};
use crate::stateless::RequestMeta;

/// The handler's view of one request: which it is, its era, and the means
/// to send what belongs to it.
pub struct Context<H> {
    session: Session<H>,
    key: RequestKey,
    meta: Option<RequestMeta>,
}

impl<H> std::fmt::Debug for Context<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("key", &self.key).field("meta", &self.meta).finish()
    }
}

impl<H: Handler> Context<H> {
    pub(crate) fn new(session: Session<H>, key: RequestKey, meta: Option<RequestMeta>) -> Self {
        Context { session, key, meta }
    }

    /// The session.
    pub fn session(&self) -> &Session<H> {
        &self.session
    }

    /// The request's key (origin and id).
    pub fn key(&self) -> &RequestKey {
        &self.key
    }

    /// The stateless era's `_meta` of the request; `None` in the
    /// handshake era.
    pub fn meta(&self) -> Option<&RequestMeta> {
        self.meta.as_ref()
    }

    /// Takes the context apart: the session, the key and the `_meta`.
    pub fn into_parts(self) -> (Session<H>, RequestKey, Option<RequestMeta>) {
        (self.session, self.key, self.meta)
    }

    /// Sends a notification that belongs to the request (progress, a log
    /// message): on its response stream over HTTP.
    pub fn notify(&self, method: &str, params: Option<Value>) {
        self.session.notify(method, params, Some(&self.key));
    }

    /// Sends `notifications/progress` for the request's `progressToken`.
    pub fn progress(&self, token: &Value, progress: f64, total: Option<f64>) {
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        self.notify(methods::NOTIFICATION_PROGRESS, Some(params));
    }

    /// Whether a log message at `level` (an index into
    /// [`LOG_LEVELS`](crate::logging::LOG_LEVELS)) is wanted: per the `_meta` `logLevel` in
    /// the stateless era (none: no messages), per `logging/setLevel` in the
    /// handshake era.
    pub fn log_enabled(&self, level: usize) -> bool {
        match &self.meta {
            Some(meta) => meta.log_level.is_some_and(|min| level >= min),
            None => self.session.log_level_enabled(level),
        }
    }

    /// Sends the client a request related to this one and waits for its
    /// answer (handshake era only: the stateless era has `input_required`
    /// instead).
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Result<Value, ErrorObject>, RequestTimeout> {
        self.session.request(method, params, Some(&self.key)).await
    }

    /// Answers the request (after [`Reply::Silent`](crate::Reply::Silent)).
    pub fn reply(self, result: Result<Value, ErrorObject>) {
        let result = if self.meta.is_some() { self.session.decorate(result) } else { result };
        self.session.reply(self.key, result);
    }
}
