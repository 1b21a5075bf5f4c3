//! # mcp-http
//!
//! The Model Context Protocol's Streamable HTTP transport, client side: one
//! endpoint URL, every client message its own POST, replies as JSON or as a
//! server-sent event stream.
//!
//! The protocol logic (ids, handshake and version negotiation, timeouts,
//! server requests, notifications) is the shared client core of
//! [`mcp_proto::client`]; event streams are decoded by [`mcp_sse`]. This
//! crate only moves bytes and keeps the session:
//!
//! - **connections**: hyper 1 with hyper-util's pooled client, keep-alive
//!   (connections are reused across calls, never one per call), HTTP/1.1
//!   and HTTP/2 (ALPN), rustls with the `ring` provider and the Mozilla
//!   roots, or the caller's `Arc<rustls::ClientConfig>`; connect timeout
//!   10 s; every request bounded by its timeout; JSON bodies capped
//!   ([`HttpOptions::max_body`]), stream events capped
//!   ([`HttpOptions::max_event_size`]); redirects are not followed unless
//!   [`HttpOptions::follow_redirects`] is set, and then only same-origin 307
//!   and 308, at most 5 in a row, with the same method and body (a redirect
//!   to another origin is [`Error::Redirect`]: credentials stay home);
//! - **Streamable HTTP**: `Content-Type: application/json`, `Accept:
//!   application/json, text/event-stream`, `Mcp-Method` (and `Mcp-Name` for
//!   `tools/call`, `prompts/get`, `resources/read`); for `tools/call`,
//!   `Mcp-Param-<Name>` for each argument whose top-level `inputSchema`
//!   property carries `"x-mcp-header": "<Name>"`, encoded by
//!   [`mcp_proto::client::headers`] (the schema comes from the cached tool
//!   list, listed once when the tool is not in it; tools whose annotations
//!   are invalid are dropped from the list with a warning); the endpoint URL used
//!   verbatim; JSON and event-stream replies (priming events skipped, server
//!   requests and notifications on the stream handled by the core, answers
//!   to server requests POSTed back); `Mcp-Session-Id` from the `initialize`
//!   reply on every later request; `MCP-Protocol-Version` after the
//!   handshake, for the revisions that want it;
//! - **sessions**: a 404 on a request that carried the session id starts a
//!   new session and sends the request again, once (other requests that
//!   were out in the dead session are sent again only when they are reads:
//!   a `tools/call` gets [`Error::SessionLost`] rather than running twice);
//!   [`HttpClient::close`] deletes the session;
//! - **resumption**: a reply stream that ends before its reply is resumed
//!   with GET and `Last-Event-ID`, after the server's `retry` delay or a
//!   jittered backoff, a bounded number of times; the reply is delivered
//!   once;
//! - **errors**: [`Error`] says what happened (timeout, HTTP status with a
//!   body excerpt, 401 with the parsed challenges and `resource_metadata`,
//!   403 `insufficient_scope`, JSON-RPC error, ...). The endpoint is always
//!   redacted to scheme and `host[:port]` ([`redact_endpoint`]); credentials
//!   never appear in an error or a log;
//! - **static credentials** ([`StaticAuth`]): bearer, basic, custom headers,
//!   a query parameter; checked when the client is built (CR/LF refused);
//! - **server-initiated messages**: [`HttpClient::open_event_stream`] opens
//!   the optional standalone GET stream (405 means none, and is not
//!   retried);
//! - **2024-11-05 fallback**: when the `initialize` POST gets 400, 404 or
//!   405, the client GETs the same URL, reads the `endpoint` event, refuses
//!   another origin, POSTs there and reads replies as `message` events;
//! - **proxies** ([`ProxyConfig`]): `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`
//!   by default (never for loopback), or a configured proxy; always a
//!   `CONNECT` tunnel, with `Proxy-Authorization: Basic` from the proxy
//!   URL's credentials.
//!
//! ## What this crate does not do
//!
//! No OAuth flow (that is `mcp-auth`'s job: this crate reports the 401/403
//! challenges it needs). It follows no redirect unless asked, never sends a
//! credential to another origin, and never writes to stdout. It does not
//! speak the 2026-07-28 stateless revision. Proxies are reached over plain
//! TCP only (no `https://` or SOCKS proxies), and plain `http://` endpoints
//! are tunnelled with `CONNECT` as well rather than forwarded.
//!
//! ## Optional features
//!
//! - `http2` (default): HTTP/2, negotiated with ALPN over TLS. Without it
//!   only HTTP/1.1 is offered, and h2 is not built.
//! - `proxy` (default): [`ProxyConfig`] support. Without it no proxy is
//!   ever used (`FromEnv` finds none) and [`ProxyConfig::Url`] is refused
//!   with [`Error::InvalidProxy`].
//!
//! ## Example
//!
//! ```no_run
//! use mcp_http::{HttpClient, HttpOptions, StaticAuth};
//! use mcp_proto::client::RequestOptions;
//!
//! # async fn run() -> Result<(), mcp_http::Error> {
//! let mut options = HttpOptions::new("remote");
//! options.auth = StaticAuth::Bearer(std::env::var("REMOTE_TOKEN").unwrap_or_default());
//! let client = HttpClient::connect("https://example.com/mcp", options)?;
//! for tool in client.list_tools().await?.iter() {
//!     println!("{}", tool.name);
//! }
//! let args = serde_json::json!({"message": "hi"});
//! let result = client.call_tool("echo", args.as_object().cloned(), RequestOptions::default()).await?;
//! println!("{}", mcp_proto::render_tool_result(&result).text);
//! client.close().await?;
//! # Ok(()) }
//! ```

mod auth;
mod client;
mod conn;
mod endpoint;
mod error;
mod options;
mod wire;

pub use auth::StaticAuth;
pub use client::HttpClient;
pub use endpoint::{REDACTED, redact_endpoint};
pub use error::Error;
pub use options::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_BODY, DEFAULT_MAX_EVENT_SIZE, DEFAULT_MAX_RECONNECTS,
    HttpOptions, ProxyConfig,
};
