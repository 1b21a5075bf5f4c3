//! # mcp-server-io
//!
//! The server half of the Model Context Protocol transports: what a server
//! (a test server, a bridge that serves other servers to a host) needs to
//! speak MCP to a client over stdio or HTTP, in both protocol eras, built
//! on the same `mcp-proto` types and rules as the toolkit's client.
//!
//! ## What this crate does not do
//!
//! It has no tools, resources or prompts of its own and decides nothing an
//! application should: it never ends the process, never prints, never
//! reads files or the environment, and never binds anything but what it
//! is given. Authentication is the application's: the HTTP service asks
//! an `http::Authorize` hook (a ready one, `http::BearerToken`, checks
//! one configured token) and serves no OAuth authorization server or
//! protected resource metadata of its own. It is not a framework with
//! macros: a server's features are plain JSON in and out, and it has no
//! CORS, no proxy headers, no rate limits.
//!
//! ## What it holds
//!
//! ```text
//!  stdin ─lines─▶ stdio::serve ──▶ Session::handle_json ──▶ Handler::request
//!                                   │ initialize, ping, setLevel,   (the application:
//!                                   │ cancelled, discover, listen,   Reply::Now / Later)
//!                                   │ `_meta`, resultType
//!                                   ▼
//!                          Outgoing queue ──(one writer)──▶ stdout, or an HTTP stream
//! ```
//!
//! - [`Handler`] (what an application implements: requests in, their
//!   [`Params`] as the client's JSON text, decoded once into what each
//!   method takes or passed on byte for byte; results or JSON-RPC errors
//!   out, as a [`Reply`] now or later; later also as JSON text sent as it
//!   is, for a result passed on; the usual `tools/call` parameters found
//!   by a scan, [`Params::plain_call`], on `mcp-proto`'s
//!   [`plain_call`](mcp_proto::jsonrpc::plain_call), or where the
//!   decoding found them, a `_meta` too with
//!   [`Params::plain_call_and_meta`]) and [`Context`]
//!   (the request's key and era, notifications and progress related to
//!   it, requests to the client, log levels). A cancelled request's future
//!   is dropped at its next `.await` and never answered. A request
//!   answered later runs as a task of its own, or in the driver's task
//!   beside it ([`Session::run_requests_beside`]: no task started per
//!   request, its reply written in the wake-up that ends it), or is
//!   forwarded with no future at all ([`Session::forward`]: admitted under
//!   the same rules, answered by [`Session::reply_forwarded`] from
//!   wherever its answer comes, cancelled by its [`CancelHook`]).
//! - [`Session`]: the session core for both eras. Handshake era:
//!   `initialize` (checked, negotiated), `ping`, `-32600` before
//!   `initialize`, `logging/setLevel`, `notifications/cancelled`, the
//!   client's answers to [`Context::request`] (with a deadline). Stateless
//!   era: the per-request `_meta`, `server/discover`,
//!   `subscriptions/listen`, `resultType` and `serverInfo` on results.
//!   At most [`SessionOptions::max_in_flight`] requests run at once; one
//!   more is answered at once with [`inflight::SERVER_BUSY`] ([`inflight`]:
//!   the decision, on data).
//! - [`era`], [`stateless`], [`logging`]: the rules it applies, as pure
//!   functions ([`ServeEra`], `initialize` checks, the stateless `_meta`
//!   ([`stateless::RequestMeta`]), `input_required`, the listen filter,
//!   the HTTP status of each error), for drivers too; [`tasks`]: the
//!   stateless era's tasks extension (which call gets a task, a task's
//!   wire shape, what each status allows).
//! - [`outgoing`]: the one queue from a session to its driver
//!   ([`Outgoing`]), each message tagged with the client request it
//!   belongs to, so a Streamable HTTP driver can put it on that request's
//!   stream.
//! - [`stdio`]: newline-delimited framing with a line cap; the driver,
//!   which reads no further line while [`backlog::DEFAULT_MAX_BACKLOG`]
//!   messages wait unwritten ([`backlog`]: the decision, on data) and
//!   writes a reply queued while it reads a line in the same turn of its
//!   task, without the queue waking the task again; with
//!   [`stdio::serve_direct`] a forwarded call's reply is written by the
//!   task that has the answer when nothing waits before it
//!   ([`outgoing::OutgoingSender::send_now`]), with no hop to the writer;
//!   this process's stdin/stdout for it without a thread hop per line;
//!   [`stdio::serve_direct_threaded`] reads the input (this process's
//!   stdin from [`stdio::stdin_blocking`]) on a thread of its
//!   own that blocks in `read` and runs the core there (a line forwarded
//!   at once then costs the runtime nothing; a line answered here costs
//!   a wake-up from that thread, so it suits a process in front of other
//!   stdio servers).
//! - `http` (feature `http`): the Streamable HTTP service over any
//!   [`Handler`] (`http::serve`, `http::HttpService`, a hyper `Service`):
//!   POST with JSON or SSE answers, the GET stream, sessions with
//!   `Mcp-Session-Id` (capped, idle timeout), resumption with
//!   `Last-Event-ID` (at most `HttpOptions::max_unsent_events` events wait
//!   unsent on a connection: at the cap a stream's connection ends and the
//!   client resumes), DELETE, the stateless era's POSTs and header checks,
//!   the legacy HTTP+SSE endpoint pair as an option, the DNS rebinding
//!   guard (`Origin` and `Host`), body caps and deadlines, authorization as
//!   a hook, HTTPS with HTTP/2 by ALPN; and the pieces it is built from
//!   (bodies, resumable SSE streams, guards, routes, the session table, the
//!   accept loop with header and handshake deadlines).
//!
//! Hooks that exist for test servers (documented as such): the
//! [`Outgoing::RawLine`] and [`Outgoing::Exit`] items, a few
//! [`Handler`] methods, `http::HttpHooks` (recording requests, injected
//! faults), and cutting an SSE connection without a clean end.
//!
//! ## Example
//!
//! A stdio server with one method, `echo`:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! use mcp_proto::jsonrpc::ErrorObject;
//! use mcp_server_io::stdio::{self, Input};
//! use mcp_server_io::{Context, Handler, Params, Reply, ServeEra, ServerInfo, Session, SessionOptions};
//! use serde_json::{Value, json};
//!
//! struct Echo(ServerInfo);
//!
//! impl Handler for Echo {
//!     fn capabilities(&self, _version: Option<&str>) -> Value {
//!         json!({})
//!     }
//!     fn info(&self) -> &ServerInfo {
//!         &self.0
//!     }
//!     fn request(&self, _cx: Context<Self>, method: &str, params: Params) -> Reply {
//!         match method {
//!             // Decoded into what the method takes (here any value).
//!             "echo" => Reply::Now(params.decode::<Value>().map(Option::unwrap_or_default)),
//!             _ => Reply::Now(Err(ErrorObject::method_not_found(method))),
//!         }
//!     }
//! }
//!
//! let handler = Echo(ServerInfo::new("echo", "1.0"));
//! let (session, queue) = Session::new(handler, SessionOptions::new(ServeEra::Legacy));
//! let stdin = concat!(
//!     r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","#,
//!     r#""capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#, "\n",
//!     r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"x":1}}"#, "\n",
//! );
//! let mut stdout = Vec::new();
//! stdio::serve(stdin.as_bytes(), &mut stdout, 1 << 20, queue, |input| match input {
//!     Input::Line(line) => session.handle_json(line),
//!     Input::Oversized { max_line_bytes } => session.reject_oversized(max_line_bytes),
//!     _ => {}
//! })
//! .await?;
//! let stdout = String::from_utf8(stdout).unwrap();
//! assert!(stdout.contains(r#""protocolVersion":"2025-06-18""#));
//! assert!(stdout.ends_with("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"x\":1}}\n"));
//! # Ok(())
//! # }
//! ```
//!
//! The same handler over Streamable HTTP, in both eras, behind a bearer
//! token, spoken to by the toolkit's own client (`mcp-http`):
//!
//! ```
//! # #[cfg(not(feature = "http"))]
//! # fn main() {}
//! # #[cfg(feature = "http")]
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use mcp_proto::jsonrpc::ErrorObject;
//! # use mcp_server_io::{Context, Handler, Params, Reply, ServerInfo};
//! # use serde_json::{Value, json};
//! # struct Echo(ServerInfo);
//! # impl Handler for Echo {
//! #     fn capabilities(&self, _version: Option<&str>) -> Value {
//! #         json!({})
//! #     }
//! #     fn info(&self) -> &ServerInfo {
//! #         &self.0
//! #     }
//! #     fn request(&self, _cx: Context<Self>, method: &str, params: Params) -> Reply {
//! #         match method {
//! #             "echo" => Reply::Now(params.decode::<Value>().map(Option::unwrap_or_default)),
//! #             _ => Reply::Now(Err(ErrorObject::method_not_found(method))),
//! #         }
//! #     }
//! # }
//! use std::sync::Arc;
//!
//! use mcp_server_io::ServeEra;
//! use mcp_server_io::http::{self, BearerToken, HttpOptions};
//! use tokio::net::TcpListener;
//!
//! let mut options = HttpOptions::new(ServeEra::Both);
//! options.authorize = Some(Arc::new(BearerToken::new("let-me-in")));
//! let listener = TcpListener::bind("127.0.0.1:0").await?;
//! // One handler per session (and one for every stateless-era POST).
//! let server = http::serve(listener, options, || Echo(ServerInfo::new("echo", "1.0"))).await?;
//!
//! let mut client_options = mcp_http::HttpOptions::new("example");
//! client_options.auth = mcp_http::StaticAuth::Bearer("let-me-in".into());
//! let client = mcp_http::connect(server.url(), client_options)?;
//! let answer = client.request("echo", Some(json!({"x": 1})), Default::default()).await?;
//! assert_eq!(answer["x"], 1);
//! server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! ## Optional features
//!
//! - **`http`** (default): the `http` module, with hyper's server,
//!   hyper-util, http, http-body-util, bytes, rustls and tokio-rustls.
//!   Without it the crate is the era rules and the stdio driver, which is
//!   all a stdio server needs.

#![deny(missing_docs)]

pub mod backlog;
mod context;
pub mod era;
mod error;
pub mod handler;
#[cfg(feature = "http")]
pub mod http;
pub mod inflight;
pub mod logging;
pub mod outgoing;
mod params;
mod running;
pub mod session;
pub mod stateless;
pub mod stdio;
pub mod tasks;

pub use era::ServeEra;

/// The README's examples, compiled as doc tests (its first serves HTTP).
#[cfg(all(doctest, feature = "http"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
pub use error::Error;
pub use handler::{Handler, Reply, ServerInfo};
pub use outgoing::{Outgoing, OutgoingQueue};
pub use params::Params;
pub use session::{CancelHook, Context, RequestKey, Session, SessionOptions};
