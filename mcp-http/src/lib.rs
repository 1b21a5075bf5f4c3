//! # mcp-http
//!
//! The Model Context Protocol's Streamable HTTP transport, client side: one
//! endpoint URL, every client message its own POST, replies as JSON or as a
//! server-sent event stream.
//!
//! [`connect`] gives an [`HttpClient`], the one [`mcp_peer::Client`] over this crate's
//! [`HttpTransport`]: the protocol logic (ids, handshake and version
//! negotiation, timeouts, server requests, notifications) and every typed
//! method come from [`mcp_peer`] and [`mcp_proto::client`]; event streams
//! are decoded by [`mcp_sse`]. A Tokio runtime is required (or the
//! `blocking` feature, `blocking::connect`). This crate only moves bytes
//! and keeps the session:
//!
//! - **connections**: hyper 1's connection API with a pool of this crate's
//!   own (keep-alive: connections are reused across calls, never one per
//!   call; one that the server closed is replaced, a request it closed
//!   before sending is sent again on a new one, and so is an idempotent
//!   request (`ping`, the lists, `resources/read`, ...) that it closed or
//!   reset before replying: never `tools/call`), hyper-util's TCP connector
//!   and CONNECT tunnel, HTTP/1.1 and HTTP/2 (ALPN, the `http2` feature), rustls with the `ring` provider and the
//!   operating system's roots ([`Roots`]), or the caller's `Arc<rustls::ClientConfig>`; connect timeout
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
//!   [`close`](mcp_peer::Client::close) deletes the session;
//! - **resumption**: a reply stream that ends before its reply is resumed
//!   with GET and `Last-Event-ID`, after the server's `retry` delay (at
//!   least 100 ms) or a jittered backoff ([`mcp_proto::backoff`]), at most
//!   [`HttpOptions::max_reconnects`] times in a row without a message (an
//!   event with no data, such as a new id and `retry: 0`, is no progress),
//!   then [`Error::StreamLost`]; the reply is delivered once;
//! - **errors**: [`Error`] says what happened (timeout, HTTP status with a
//!   body excerpt, 401 with the parsed challenges and `resource_metadata`,
//!   403 `insufficient_scope`, JSON-RPC error, ...). The endpoint is always
//!   redacted to scheme and `host[:port]` ([`redact_endpoint`]); credentials
//!   never appear in an error or a log;
//! - **static credentials** ([`StaticAuth`]): bearer, basic, custom headers,
//!   a query parameter; checked when the client is built (CR/LF refused);
//! - **OAuth** ([`HttpOptions::oauth`], [`OAuthOptions`]): the MCP
//!   authorization spec through [`mcp_auth`] (see below);
//! - **headers made at run time** ([`HttpOptions::header_source`],
//!   [`HeaderSource`]): a short-lived token a company tool mints, asked
//!   for at the first request, kept as long as the source says, asked
//!   again once after a 401 or 403 before the request fails;
//! - **server-initiated messages**: the standalone GET stream opens by
//!   itself after the handshake, in the background: the handshake does not
//!   wait for the GET's answer unless asked to
//!   ([`HttpOptions::event_stream`], [`HttpOptions::wait_for_event_stream`];
//!   also [`HttpTransport::open_event_stream`], and
//!   [`HttpTransport::watch_event_stream`] to learn when it is open); 405
//!   means none, and is not asked again; requests from the server on it are
//!   answered by POST;
//! - **Unix domain sockets**: an endpoint written
//!   `unix:/path/to/socket[#/request/path]` ([`unix_endpoint`]; the path
//!   defaults to `/mcp`) sends every request over that socket
//!   ([`HttpOptions::unix_socket`]), HTTP/1.1 without TLS or proxy, with
//!   `Host: localhost`; errors show the socket, not a URL;
//! - **2024-11-05 fallback**: when the `initialize` POST gets 400, 404 or
//!   405, the client GETs the same URL, reads the `endpoint` event, refuses
//!   another origin, POSTs there and reads replies as `message` events;
//! - **proxies** ([`ProxyConfig`]): `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`
//!   and `NO_PROXY` (either case) by default (never for loopback), or a
//!   configured proxy: `http://` and `https://` (TLS to the proxy) through a
//!   `CONNECT` tunnel with `Proxy-Authorization: Basic` from the proxy
//!   URL's credentials, `socks5h://` and `socks5://` with username/password;
//! - **trust**: the operating system's CA store by default
//!   ([`Roots::Platform`], loaded once per process; the Mozilla roots
//!   compiled in when it has none, or with [`Roots::Mozilla`]), plus the CA
//!   certificates of a PEM file ([`HttpOptions::ca_file`]), or the
//!   caller's TLS configuration;
//!   [`Error::tls_error`] gives the `rustls::Error` a handshake failed with.
//!
//! ## OAuth
//!
//! With [`HttpOptions::oauth`] set, the client builds an
//! [`mcp_auth::OAuthClient`] for its endpoint that talks through the
//! client's own connection pool (no redirects followed, bodies capped at
//! [`mcp_auth::MAX_BODY`], each exchange bounded by [`OAUTH_FETCH_TIMEOUT`],
//! nothing added to discovery, registration or token requests). Before each
//! request it asks for the token (refreshed when about to expire) and sends
//! `Authorization: Bearer` to the endpoint's origin only (`Authorization:
//! DPoP` with a fresh `DPoP` proof for the request's method and URL when
//! the token is DPoP-bound, RFC 9449; a server's `DPoP-Nonce` is used in the
//! next proofs, and its `use_dpop_nonce` refusal answered by one retry); a 401 runs
//! discovery, registration, authorization and the token exchange (or a
//! refresh), a 403 `insufficient_scope` re-authorizes with the union of
//! scopes, and the request is sent again, within `mcp-auth`'s per-request
//! bounds; a flow that fails is [`Error::Auth`]. Static credentials and
//! OAuth are exclusive. The authorization code grant needs a handler
//! ([`OAuthOptions::with_handler`], e.g. `mcp_auth`'s loopback listener;
//! [`OAuthOptions::headless`] for servers that approve at once); the
//! request timeout bounds a flow run inside a request, so an interactive
//! login is best run first with `client.transport().`[`oauth`](HttpTransport::oauth)`().authorize(None)`.
//!
//! The URLs a server or its metadata names are guarded against
//! server-side request forgery ([`OAuthOptions::address_policy`],
//! [`AddressPolicy`]): they may not lead to loopback, private or
//! link-local (cloud metadata) addresses unless the MCP server itself is
//! on such a network; checked on the resolved address the connection then
//! goes to.
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcp_http::mcp_auth::{AuthorizationHandler, FileTokenStore};
//! use mcp_http::{HttpOptions, OAuthOptions};
//!
//! # async fn run(handler: Arc<dyn AuthorizationHandler>) -> Result<(), Box<dyn std::error::Error>> {
//! let oauth = OAuthOptions::new("my-host")
//!     .with_handler(handler) // opens the browser, receives the callback
//!     .with_store(Arc::new(FileTokenStore::new("/home/me/.config/my-host/tokens")));
//! let client = mcp_http::connect("https://mcp.example.com/mcp", HttpOptions::new("remote").with_oauth(oauth))?;
//! if let Some(oauth) = client.transport().oauth() {
//!     oauth.authorize(None).await?; // log in now (a stored token is reused)
//! }
//! let tools = client.list_tools().await?; // sent with Authorization: Bearer
//! # drop(tools);
//! # Ok(()) }
//! ```
//!
//! ## What this crate does not do
//!
//! No OAuth logic of its own (that is `mcp-auth`'s: this crate moves its
//! requests and the token). It follows no redirect unless asked, never sends a
//! credential to another origin, and never writes to stdout. Plain
//! `http://` endpoints are tunnelled with `CONNECT` as well rather than
//! forwarded to an HTTP proxy; SOCKS4 is not spoken.
//!
//! ## Optional features
//!
//! - `http2` (off by default): HTTP/2, negotiated with ALPN over TLS.
//!   Without it only HTTP/1.1 is offered, and h2 is not built. MCP's
//!   requests are small and a pooled HTTP/1.1 client already runs them
//!   concurrently, so the default build leaves h2 and its 5 crates out.
//! - `proxy` (default): [`ProxyConfig`] support: HTTP and HTTPS proxies
//!   through `CONNECT`, SOCKS5 (`socks5://`, `socks5h://`), all through
//!   hyper-util (adds ipnet and percent-encoding). Without it no proxy is
//!   ever used (`FromEnv` finds none) and [`ProxyConfig::Url`] is refused
//!   with [`Error::InvalidProxy`].
//!
//! ## Example
//!
//! ```no_run
//! use mcp_http::{HttpOptions, StaticAuth};
//!
//! # async fn run() -> Result<(), mcp_http::Error> {
//! let mut options = HttpOptions::new("remote");
//! options.auth = StaticAuth::Bearer(std::env::var("REMOTE_TOKEN").unwrap_or_default());
//! let client = mcp_http::connect("https://example.com/mcp", options)?;
//! for tool in client.list_tools().await?.iter() {
//!     println!("{}", tool.name);
//! }
//! let args = serde_json::json!({"message": "hi"});
//! let result = client.call_tool("echo", &args).await?;
//! println!("{}", mcp_proto::render_tool_result(&result).text);
//! client.close().await?;
//! # Ok(()) }
//! ```

mod auth;
#[cfg(feature = "blocking")]
pub mod blocking;
mod client;
mod conn;
mod endpoint;
mod error;
mod guard;
mod header_source;
mod legacy;
mod oauth;
mod options;
mod pool;
mod request;
mod streamable;
mod transport;
mod wire;

pub use auth::StaticAuth;
pub use client::{HttpClient, connect};
pub use pool::HttpPool;
pub use streamable::EventStreamState;
pub use transport::HttpTransport;

pub use endpoint::{REDACTED, redact_endpoint, unix_endpoint};
pub use error::Error;
pub use guard::AddressPolicy;
pub use header_source::{HeaderFuture, HeaderSource, HeaderSourceError, SourcedHeaders};
pub use mcp_auth;
pub use mcp_peer::{self, Client, ClientOptions, Notifications, RequestOptions};
pub use mcp_proto;
pub use oauth::{OAUTH_FETCH_TIMEOUT, OAuthHandler, OAuthOptions};
pub use options::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_BODY, DEFAULT_MAX_EVENT_SIZE, DEFAULT_MAX_RECONNECTS,
    HttpOptions, ProxyConfig, Roots,
};
pub use serde_json;

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
