//! The HTTP side (feature `http`): the pieces a Streamable HTTP (and a
//! legacy HTTP+SSE) server is built from, on hyper 1.
//!
//! - [`body`]: the response body, a fixed buffer or an event stream fed
//!   through a channel, which can end cleanly or be cut and holds at most
//!   a cap of events unsent ([`EventSender`](body::EventSender)); a stream whole
//!   before its response goes out is sent as a fixed body
//!   ([`ResponseBody::settle`](body::ResponseBody::settle)).
//! - [`stream`]: one resumable SSE stream with a bounded event log and
//!   event ids `<stream>-<n>` for `Last-Event-ID`; a connection at its cap
//!   of events unsent is let go, the rest kept for the resumption.
//! - [`guard`]: the checks made before anything is parsed: `Origin` and
//!   `Host` against DNS rebinding, `Accept`, `Content-Type`, the body cap
//!   and its deadline, `MCP-Protocol-Version`, and the stateless era's
//!   `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` headers against the body.
//! - [`reply`]: the responses (text, JSON, JSON-RPC errors, 202, 405, an
//!   event stream).
//! - [`routes`]: where each message of a session goes (the POST that
//!   carried its request, that POST's SSE stream, or the GET stream).
//!   A session's outgoing queue is drained by the POST waiting for its
//!   reply when there is one (so the reply reaches it without a hop
//!   through another task), or answered over SSE (what the handler
//!   answers at once is on the POST's stream before its response goes
//!   out), else by the session's routing task.
//! - [`sessions`]: the live sessions by `Mcp-Session-Id`, bounded in
//!   number and ended after an idle time (by the service's timer).
//! - [`listen`]: the accept loop (HTTP/1.1, or HTTPS with HTTP/2 by ALPN),
//!   with a header deadline and a TLS handshake deadline.
//! - [`service`]: the Streamable HTTP service built from them over any
//!   [`Handler`](crate::Handler) ([`HttpService`], a hyper `Service`), and
//!   [`serve`], which runs it on a listener ([`HttpServer`]); `stateless`:
//!   its stateless-era POSTs (each its own request, no session); [`auth`]:
//!   the authorization hook ([`Authorize`], [`BearerToken`]); [`hooks`]:
//!   the hooks for test servers ([`HttpHooks`]).

pub mod auth;
pub mod body;
pub mod guard;
pub mod hooks;
pub mod listen;
mod pump;
pub mod reply;
pub mod routes;
mod server;
pub mod service;
pub mod sessions;
mod stateless;
pub mod stream;

pub use auth::{Authorize, BearerToken};
pub use hooks::{HttpHooks, NoHooks};
pub use server::{HttpServer, serve, serve_service, serve_with_hooks};
pub use service::{HttpOptions, HttpService, ReplyMode, TlsOptions};

use http::HeaderName;

/// `Mcp-Session-Id`.
pub const SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
/// `MCP-Protocol-Version`.
pub const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Last-Event-ID`.
pub const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
/// `Mcp-Method` (stateless era).
pub const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
/// `Mcp-Name` (stateless era).
pub const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// 32 hex digits from the standard library's randomly keyed hasher, the
/// time and a counter: a session id (visible ASCII, as the transport asks)
/// that another client cannot guess from its own.
pub fn new_session_id() -> String {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut id = String::with_capacity(32);
    for _ in 0..2 {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        hasher.write_u128(nanos);
        id.push_str(&format!("{:016x}", hasher.finish()));
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_distinct_visible_ascii() {
        let a = new_session_id();
        let b = new_session_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
    }
}
