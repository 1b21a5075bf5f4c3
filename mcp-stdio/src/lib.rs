//! # mcp-client-stdio
//!
//! The Model Context Protocol's stdio transport, client side: spawn an MCP
//! server as a child process and speak newline-delimited JSON-RPC on its
//! stdin and stdout.
//!
//! [`spawn`] gives a [`StdioClient`], the one [`mcp_peer::Client`] over this crate's
//! [`StdioTransport`]: the protocol logic (ids, handshake, timeouts, server
//! requests) and every typed method come from [`mcp_peer`] and
//! [`mcp_proto::client`]. A Tokio runtime is required (or the `blocking`
//! feature, `blocking::spawn`). This crate only moves bytes and minds the
//! process:
//!
//! - the command is resolved before spawning, with a PATH rebuilt by
//!   `mcp-spawn-env`, and a missing command is an error that says what to
//!   install;
//! - many requests may be in flight at once; writes never interleave; a slow
//!   tool never blocks a `ping`; the requests sent in one scheduler turn
//!   while others await their answers leave in one write to the server
//!   (a lone call is written at once, with no yield);
//! - lines that are not JSON-RPC, or longer than the limit, are logged and
//!   skipped, never fatal;
//! - after handing over a message, while the client awaits an answer, the
//!   reader polls for the next one for a few tens of µs before it parks ([`StdioOptions::reply_spin`]): where
//!   client and server sit on different CPUs that halt when idle, that
//!   spares a round trip one of its two slow wake-ups; it turns itself off
//!   for a while when it does not pay, and never polls where its thread
//!   may run on one CPU only;
//! - opt-in ([`StdioOptions::reader_thread`]), stdout is read on a thread
//!   of its own blocking in `read`, each line handed to the client from
//!   there: for a bridge, whose answers are consumed where they are read,
//!   with no turn of the async runtime;
//! - stderr is drained continuously into `tracing` and a bounded tail, never
//!   inherited by default;
//! - when the server exits, every waiting request fails at once with its exit
//!   status and the tail of its stderr;
//! - the server runs in its own process group; [`close`](mcp_peer::Client::close) closes
//!   stdin, then sends SIGTERM, then SIGKILL to the group, and dropping the
//!   client kills the group too.
//!
//! The same framing runs over any reader and writer a host already holds
//! (a pipe, a socket, an SSH channel): [`connect_stream`] gives a
//! [`StreamClient`] over a [`StreamTransport`], with the same line limit,
//! garbage handling and one-write-per-message rule, and no process to
//! mind; the end of the stream fails what waits ([`Error::StreamEnded`]).
//!
//! ## What this crate does not do
//!
//! No HTTP, no OAuth (stdio servers take credentials from their
//! environment), and it never writes to the host's own stdout.
//!
//! ## Example
//!
//! ```no_run
//! use mcp_client_stdio::{ServerCommand, StdioOptions};
//!
//! # async fn run() -> Result<(), mcp_client_stdio::Error> {
//! let command = ServerCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]);
//! let client = mcp_client_stdio::spawn(command, StdioOptions::new("everything")).await?;
//! for tool in client.list_tools().await?.iter() {
//!     println!("{}", tool.name);
//! }
//! let args = serde_json::json!({"message": "hi"});
//! let result = client.call_tool("echo", &args).await?;
//! println!("{}", mcp_proto::render_tool_result(&result).text);
//! client.close().await?;
//! # Ok(()) }
//! ```

mod batch;
#[cfg(feature = "blocking")]
pub mod blocking;
mod client;
mod codec;
mod conn;
mod error;
mod lines;
mod options;
mod spin;
mod stdin;
mod stream;

pub use client::{StdioClient, StdioTransport, spawn};

pub use codec::{Frame, LineCodec};
pub use error::{Error, ExitInfo};
pub use mcp_peer::{self, Client, ClientOptions, Notifications, RequestOptions};
pub use mcp_proto;
pub use options::{
    CLEAN_ENV_ALLOWLIST, CLEAN_ENV_ALLOWLIST_WINDOWS, DEFAULT_MAX_LINE_LENGTH, DEFAULT_REPLY_SPIN,
    DEFAULT_STDERR_TAIL, EnvMode, ProbeCache, RestartPolicy, ServerCommand, StderrMode,
    StdioOptions,
};
pub use serde_json;
pub use stream::{StreamClient, StreamOptions, StreamTransport, connect_stream};

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
