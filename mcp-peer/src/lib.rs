//! # mcp-peer
//!
//! One Model Context Protocol client over any transport. [`Client<T>`] owns
//! the sans-IO protocol core of [`mcp_proto::client`] and everything that
//! drives it, written once for every transport:
//!
//! - both protocol eras: the handshake era (`initialize`, 2024-11-05 to
//!   2025-11-25) and the stateless era (2026-07-28: per-request `_meta`, no
//!   session), found by probing with `server/discover` ([`EraChoice::Auto`])
//!   or pinned; the era opens once, before the first request (concurrent
//!   callers share it), and again when a connection is lost;
//! - the stateless era's `input_required` rounds fulfilled through the host's
//!   [`Handlers`], its result cache ([`cache`]), `subscriptions/listen`
//!   ([`Client::listen`]) and the tasks extension ([`tasks`]);
//! - every request waits under its deadline (progress may restart it, up to
//!   a maximum), and `notifications/cancelled` goes out when it expires or
//!   when the caller drops the future ([`CallHandle::cancel`] for a call
//!   running on its own);
//! - the server's requests (`roots/list`, `sampling/createMessage`,
//!   `elicitation/create`) go to the host's [`Handlers`]
//!   as tasks; anything undeclared is answered -32601 by the core;
//! - notifications reach [`ClientOptions::on_event`] and every
//!   [`Notifications`] stream;
//! - the typed operations: tools (with the cached list), resources and
//!   templates, subscriptions, prompts, completion, logging, tasks, each
//!   paginated list whole or by page;
//! - request [`middleware`]: an ordered chain around each request (add
//!   `_meta` or HTTP headers, refuse, answer it, measure it).
//!
//! The client performs what [`mcp_proto::client::decide`] decides (which
//! era to open, the probe, what a failed attempt leads to, the bounds of
//! input rounds, what a result asks for): every request kind goes out
//! through one private send path. State that belongs to the caller is
//! passed in the [`ClientOptions`]: the result cache ([`cache`]) and the
//! memory of handshake-era servers ([`era`]), each with a default.
//!
//! A [`Transport`] only moves messages: it sends a request
//! ([`Transport::send_request`], or at once with no future when it can,
//! [`Transport::send_request_now`]) and what the core queued
//! ([`Transport::flush`]), and hands what the server sends to its
//! [`Link`]. `mcp-stdio` implements it for a child's pipes, `mcp-http` for
//! Streamable HTTP and HTTP+SSE, [`memory`] in memory; a host can bring its
//! own. [`DynTransport`] boxes transports of different kinds behind one
//! client type (`Client<Box<dyn DynTransport<E>>>`).
//!
//! ## Optional features
//!
//! - `blocking`: `blocking::Client`, every waiting method as a blocking
//!   one, on a runtime the client owns (for synchronous hosts).
//! - `schema`: [`Client::call_tool_as`] checks `structuredContent` against
//!   the tool's `outputSchema` first (`mcp-proto`'s `schema` feature).
//! - `otel`: every request carries the current OpenTelemetry context
//!   (`traceparent`, `tracestate`, `baggage` in `_meta`) through the globally
//!   installed propagator (module `otel`).
//!
//! ## What this crate does not do
//!
//! No sockets, no processes, no HTTP: those are the transports'. It needs a
//! Tokio runtime (tasks for the server's requests and one keeping request
//! deadlines, tokio's clock for them, so tests run on a paused clock). It
//! never writes to stdout.
//!
//! ## Example
//!
//! ```
//! use mcp_peer::{Client, ClientOptions, memory};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (transport, mut server) = memory::pair();
//! let client = Client::new(transport, ClientOptions::new("demo"));
//! // A handshake-era server that answers `initialize` and `ping` (its `{}`
//! // to the era probe, `server/discover`, is no discovery, so the client
//! // falls back to `initialize`).
//! tokio::spawn(async move {
//!     while let Some(bytes) = server.recv().await {
//!         let msg: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
//!         let Some(id) = msg.get("id") else { continue };
//!         let result = match msg["method"].as_str() {
//!             Some("initialize") => serde_json::json!({
//!                 "protocolVersion": "2025-11-25",
//!                 "capabilities": {},
//!                 "serverInfo": {"name": "demo", "version": "1"},
//!             }),
//!             _ => serde_json::json!({}),
//!         };
//!         let reply = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
//!         server.send(reply.to_string().as_bytes());
//!     }
//! });
//! client.ping().await.unwrap();
//! assert_eq!(client.server_info().unwrap().name, "demo");
//! client.close().await.unwrap();
//! # }
//! ```

mod api;
#[cfg(feature = "blocking")]
pub mod blocking;
pub mod cache;
mod client;
pub mod era;
mod forward;
mod inner;
mod input;
mod listeners;
pub mod memory;
pub mod middleware;
mod notifications;
mod open;
mod options;
#[cfg(feature = "otel")]
pub mod otel;
mod request;
mod send;
mod shape;
mod subscription;
mod sync;
pub mod tasks;
mod throttle;
mod timer;
mod tools;
mod transport;

pub use client::Client;
pub use notifications::{CallError, CallHandle, Notifications};
pub use options::{
    ClientOptions, DEFAULT_MAX_INPUT_ANSWER_BYTES, DEFAULT_MAX_INPUT_REQUESTS,
    DEFAULT_MAX_INPUT_ROUNDS, DEFAULT_PROBE_TIMEOUT, DEFAULT_TASK_TIMEOUT, EraChoice,
};
pub use subscription::{MAX_RELISTENS, SUBSCRIPTION_BUFFER, Subscription};
pub use throttle::DropReport;
pub use transport::{DynTransport, Link, OutgoingRequest, Transport, TransportError};

pub use mcp_proto;
pub use mcp_proto::client::{Handlers, RequestOptions, ServerEvent, ServerNotification};

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
