//! What an application implements to serve MCP: the [`Handler`] trait, the
//! [`Reply`] it gives, and the [`Context`] of the request it serves.
//!
//! The session ([`Session`](crate::session::Session)) answers what every
//! server answers alike (`initialize`, `ping`, `logging/setLevel`,
//! `server/discover`, `subscriptions/listen`, requests before
//! `initialize`, `notifications/cancelled`, answers to its own requests)
//! and hands every other request to the handler.

use std::future::Future;
use std::pin::Pin;

use mcp_proto::jsonrpc::{ErrorObject, RequestId};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::era;
use crate::params::Params;
use crate::session::Context;
use crate::stateless::RequestMeta;

/// A result to come: its value or its JSON-RPC error.
pub type ReplyFuture = Pin<Box<dyn Future<Output = Result<Value, ErrorObject>> + Send + 'static>>;

/// A result to come as JSON text, sent as it is, or its JSON-RPC error.
pub type RawReplyFuture =
    Pin<Box<dyn Future<Output = Result<Box<RawValue>, ErrorObject>> + Send + 'static>>;

/// How a handler answers a request.
#[non_exhaustive]
pub enum Reply {
    /// The answer, ready now (the hot path: no task is spawned).
    Now(Result<Value, ErrorObject>),
    /// An answer that needs waiting for: run as a task of its own (or in
    /// the driver's task, beside it:
    /// [`Session::run_requests_beside`](crate::Session::run_requests_beside)),
    /// aborted (dropped at its next `.await`, never answered) when the
    /// client cancels the request or the session ends.
    Later(ReplyFuture),
    /// As [`Reply::Later`], the result being JSON text that goes out as it
    /// is, neither decoded nor encoded again (a bridge passing on what an
    /// upstream server answered). It should be an object, as MCP results
    /// are: the session does not look inside. In the stateless era the
    /// session adds `resultType` and `serverInfo` to the text when it has
    /// neither member (else it decodes it to add them).
    LaterRaw(RawReplyFuture),
    /// No answer: the handler answers later through its own means
    /// ([`Context::reply`], a request it forwarded with
    /// [`Session::forward`](crate::Session::forward)), or never (a test
    /// server that ignores what it does not know).
    Silent,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reply::Now(result) => f.debug_tuple("Now").field(result).finish(),
            Reply::Later(_) => f.write_str("Later(..)"),
            Reply::LaterRaw(_) => f.write_str("LaterRaw(..)"),
            Reply::Silent => f.write_str("Silent"),
        }
    }
}

impl From<Result<Value, ErrorObject>> for Reply {
    fn from(result: Result<Value, ErrorObject>) -> Self {
        Reply::Now(result)
    }
}

/// What the server says about itself.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerInfo {
    /// `serverInfo` (`name`, `version`, ...), also the stateless era's
    /// `_meta["io.modelcontextprotocol/serverInfo"]` on every result.
    pub implementation: Value,
    /// `instructions` of `initialize` and `server/discover`.
    pub instructions: Option<String>,
    /// `ttlMs` of `server/discover`.
    pub discover_ttl_ms: u64,
}

impl ServerInfo {
    /// A server named `name` at `version`, with no instructions.
    pub fn new(name: &str, version: &str) -> Self {
        ServerInfo {
            implementation: serde_json::json!({ "name": name, "version": version }),
            instructions: None,
            discover_ttl_ms: 0,
        }
    }
}

/// An application's side of a server: requests in, results or JSON-RPC
/// errors out. One handler serves one session (`Session::new` takes it).
///
/// Only [`Handler::capabilities`] and [`Handler::request`] are required;
/// the other methods are hooks with defaults. A few exist for test servers
/// and say so.
pub trait Handler: Send + Sync + Sized + 'static {
    /// The capabilities declared: to `initialize` under the negotiated
    /// `version`, or in `server/discover` (`version` `None`). `logging`
    /// among them makes the session answer `logging/setLevel`.
    fn capabilities(&self, version: Option<&str>) -> Value;

    /// A request the session does not answer itself. The context says which
    /// era it came in ([`Context::meta`] is the stateless era's `_meta`);
    /// in the stateless era the session adds `resultType` and `serverInfo`
    /// to the result. An unknown method should get
    /// [`ErrorObject::method_not_found`].
    ///
    /// The parameters are the client's JSON text where the driver had it
    /// (stdio): decoded once into what the method takes
    /// ([`Params::decode`]), passed on byte for byte
    /// ([`Params::into_text`]), or taken as a value
    /// ([`Params::into_value`]).
    fn request(&self, cx: Context<Self>, method: &str, params: Params) -> Reply;

    /// The server's identity and instructions.
    fn info(&self) -> &ServerInfo;

    /// A notification from the client, `notifications/cancelled` included
    /// (the session has acted on it by the time this is called, except
    /// for `notifications/initialized`, which it only records).
    fn notification(
        &self,
        session: &crate::session::Session<Self>,
        method: &str,
        params: Option<&Value>,
    ) {
        let _ = (session, method, params);
    }

    /// Called after the session took a `logging/setLevel` (handshake era)
    /// with the lowest level wanted (an index into
    /// [`LOG_LEVELS`](crate::logging::LOG_LEVELS)), for a server that
    /// passes the level on (a bridge to its upstream servers).
    fn log_level_set(&self, session: &crate::session::Session<Self>, level: usize) {
        let _ = (session, level);
    }

    /// The revision answered to an `initialize` offering `offered`
    /// (default [`era::handshake_version`]). A test server may answer
    /// something else to test a client's negotiation.
    fn negotiate(&self, offered: &str) -> String {
        era::handshake_version(offered).as_str().to_owned()
    }

    /// Called with the `initialize` request before it is answered (to send
    /// something related to it first, as some servers do).
    fn initializing(&self, cx: &Context<Self>) {
        let _ = cx;
    }

    /// Every stateless-era request whose `_meta` was read, before it is
    /// served (to record what clients send).
    fn stateless_request(&self, id: &RequestId, method: &str, meta: &RequestMeta, params: &Params) {
        let _ = (id, method, meta, params);
    }

    /// Whether a resource exists, for the URIs a `subscriptions/listen`
    /// may subscribe to (default: every URI).
    fn resource_exists(&self, uri: &str) -> bool {
        let _ = uri;
        true
    }

    /// The `Mcp-Param-*` headers a stateless-era `tools/call` of `tool`
    /// must carry, as `(argument, header name)` pairs: the `x-mcp-header`
    /// annotations of the tool's input schema (default: none). The HTTP
    /// service checks them against the arguments before the call is served.
    fn param_headers(&self, tool: &str) -> Vec<(String, String)> {
        let _ = tool;
        Vec::new()
    }

    /// A handshake-era method the server never answers, not even with an
    /// error (default: none). A hook for test servers that behave like a
    /// legacy server ignoring what it does not know.
    fn ignores(&self, method: &str) -> bool {
        let _ = method;
        false
    }

    /// Called after each reply with the number of replies so far; `Some`
    /// queues [`Outgoing::Exit`](crate::Outgoing::Exit) with that code
    /// right after it. A hook for test servers that exit after N answers.
    fn exit_after_reply(&self, answered: u64) -> Option<i32> {
        let _ = answered;
        None
    }

    /// Something the client sent that matches nothing (an answer to an
    /// unknown request, an error without id), in words, for the
    /// application's log.
    fn stray(&self, what: &str) {
        let _ = what;
    }
}
