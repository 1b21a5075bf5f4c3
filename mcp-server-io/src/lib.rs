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
//! is given. Authentication (which bearer token is valid) is the
//! application's. It is not a framework with macros: a server's features
//! are plain JSON in and out.
//!
//! ## What it holds
//!
//! ```text
//!  stdin ─lines─▶ stdio::serve ──Input──▶ (the server's core) ──Outgoing──▶ queue ─▶ stdout
//!                 (one writer: no interleaving; line cap)
//!
//!  TCP ─▶ http::listen::accept_loop ─▶ (the server's service) ─▶ http::guard checks
//!                                        ├─ JSON body / http::stream (resumable SSE)
//!                                        └─ http::reply
//! ```
//!
//! - [`era`]: which eras a server speaks ([`ServeEra`]), how a request is
//!   routed between them, the checks on `initialize` and the revision it
//!   answers.
//! - [`stateless`]: the 2026-07-28 rules: per-request `_meta`
//!   ([`stateless::RequestMeta`]), `server/discover`, `resultType`,
//!   `input_required` rounds, the `subscriptions/listen` filter, the
//!   HTTP status of each error.
//! - [`logging`]: log levels for `logging/setLevel` and `_meta` `logLevel`.
//! - [`outgoing`]: the one queue from a core to its driver ([`Outgoing`]),
//!   each message tagged with the client request it belongs to, so a
//!   Streamable HTTP driver can put it on that request's stream.
//! - [`stdio`]: newline-delimited framing with a line cap; the driver.
//! - `http` (feature `http`): response bodies, resumable SSE streams with
//!   event ids, the DNS rebinding guard (`Origin` and `Host`), body caps
//!   and deadlines, the stateless era's header checks, and the accept loop
//!   (HTTP/1.1, HTTPS with HTTP/2 by ALPN, header and handshake deadlines).
//!
//! Hooks that exist for test servers (documented as such): the
//! [`Outgoing::RawLine`] and [`Outgoing::Exit`] items, and cutting an SSE
//! connection without a clean end.
//!
//! ## Example
//!
//! A stdio server that answers every line with a parse error, as a server
//! answers text that is not JSON-RPC:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! use mcp_proto::jsonrpc::{ErrorObject, ErrorResponse, Message, error_code};
//! use mcp_server_io::stdio::{Ended, Input, serve};
//! use mcp_server_io::{Outgoing, outgoing};
//!
//! let (tx, queue) = outgoing::queue();
//! let mut stdout = Vec::new();
//! let ended = serve(&b"not json\n"[..], &mut stdout, 1 << 20, queue, |input| {
//!     if let Input::Line(_) = input {
//!         let error = ErrorObject::new(error_code::PARSE_ERROR, "Parse error");
//!         let message = Message::Error(ErrorResponse::new(None, error));
//!         let _ = tx.send(Outgoing::message(message, None, 0));
//!     }
//! })
//! .await?;
//! assert_eq!(ended, Ended::InputClosed);
//! assert!(stdout.starts_with(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700"#));
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

pub mod era;
mod error;
#[cfg(feature = "http")]
pub mod http;
pub mod logging;
pub mod outgoing;
pub mod stateless;
pub mod stdio;

pub use era::ServeEra;

/// The README's example, compiled as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
pub use error::Error;
pub use outgoing::{Outgoing, OutgoingQueue};
