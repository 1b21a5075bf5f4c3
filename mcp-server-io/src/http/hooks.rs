//! [`HttpHooks`]: what a test server changes in the HTTP service, every
//! method a no-op by default. A product server passes [`NoHooks`].
//!
//! These are hooks for test servers (a scriptable server that records what
//! clients send and injects faults to test them), like the few
//! [`Handler`](crate::Handler) methods that say so: a product server has no
//! reason to implement any of them.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use http::request::Parts;
use mcp_proto::jsonrpc::{Message, Received, RequestId};
use serde_json::value::RawValue;

use super::reply::Reply;
use crate::Session;

/// A hook's future.
pub type HookFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Hooks into the HTTP service for test servers: observing each request
/// and message, answering requests in place of the service, and the faults
/// a client is tested against. Each default does nothing.
pub trait HttpHooks<H>: Send + Sync + 'static {
    /// Every request, first of all (before the DNS rebinding guard): to
    /// record what clients send.
    fn request(&self, request: &Parts) {
        let _ = request;
    }

    /// Before authorization: `Some` is sent instead of serving the request
    /// (a redirect, metadata a test serves, ...).
    fn intercept<'a>(&'a self, request: &'a Parts) -> HookFuture<'a, Option<Reply>> {
        let _ = request;
        Box::pin(std::future::ready(None))
    }

    /// After authorization: `Some` is sent instead of serving the request
    /// (a status forced on every POST).
    fn intercept_authorized(&self, request: &Parts) -> Option<Reply> {
        let _ = request;
        None
    }

    /// Every JSON-RPC message a POST hands to a session, before it does
    /// (a request's parameters as the client wrote them).
    fn message(&self, message: &Received) {
        let _ = message;
    }

    /// How long to wait before sending each response's head.
    fn response_delay(&self) -> Option<Duration> {
        None
    }

    /// Whether a handshake-era session that has now seen `posts` POSTs
    /// ends here (the POST gets 404, as if it had expired).
    fn expire_session(&self, posts: u64) -> bool {
        let _ = posts;
        false
    }

    /// Whether a handshake-era POST is never answered: its response never
    /// comes (a server that ignores what it does not know).
    fn never_answer(&self, message: &Received) -> bool {
        let _ = message;
        false
    }

    /// Whether every handshake-era request but `initialize`, and every GET,
    /// is answered with an event stream of one event holding only a fresh
    /// id and `retry: 0`, never reaching the session.
    fn id_only_events(&self) -> bool {
        false
    }

    /// Cut a POST's SSE connection (and a resumed one) after this many
    /// events, without a clean end of the body.
    fn reply_stream_budget(&self) -> Option<usize> {
        None
    }

    /// Whether a POST's SSE reply ends cleanly right after its priming
    /// event (the client must resume with `Last-Event-ID`).
    fn close_after_priming(&self) -> bool {
        false
    }

    /// The bytes of a reply instead of its plain encoding (padding it, for
    /// a client's body cap).
    fn encode_reply(&self, reply: &Message) -> Option<Bytes> {
        let _ = reply;
        None
    }

    /// [`encode_reply`](Self::encode_reply) of a reply whose result is
    /// JSON text ([`Outgoing::RawReply`](crate::Outgoing::RawReply)).
    fn encode_raw_reply(&self, id: &RequestId, result: &RawValue) -> Option<Bytes> {
        let _ = (id, result);
        None
    }

    /// A session queued [`Outgoing::Exit`](crate::Outgoing::Exit): awaited
    /// before the session ends (its connections cut). The service never
    /// ends the process; a test binary's hook may.
    fn exit(&self, code: i32) -> HookFuture<'static, ()> {
        let _ = code;
        Box::pin(std::future::ready(()))
    }

    /// A session ended (deleted, expired, evicted, or the server shut
    /// down), after its running requests were aborted.
    fn session_closed(&self, session: &Session<H>) {
        let _ = session;
    }
}

/// The hooks of a product server: none.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl<H> HttpHooks<H> for NoHooks {}
