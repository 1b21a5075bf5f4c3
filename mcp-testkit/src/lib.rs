//! # mcp-testkit
//!
//! A scriptable Model Context Protocol server for testing MCP *clients*: the
//! toolkit's integration tests, its benchmarks and the CLI's demo talk to it.
//! Its tools misbehave on request (hang, crash, flood stdout with garbage,
//! ask the client questions mid-call), so a client's handling of each fault
//! can be tested against a real process.
//!
//! ## What it is not
//!
//! Not a production server, and not a framework for writing one: the tools
//! are fixed, there is no authentication, and the `crash` tool ends the
//! process on request. It speaks revisions 2024-11-05 to 2025-11-25 (it
//! answers with the client's revision when it knows it, else 2025-11-25).
//!
//! ## Design
//!
//! ```text
//!  stdin ─lines─▶ run_stdio ──handle_json()──▶ Server ──▶ Outgoing queue ─▶ stdout
//!                (driver: moves bytes)        (core: decides, spawns     (one writer:
//!                                              waiting tools as tasks)    no interleaving)
//! ```
//!
//! [`Server`] is the transport-independent core: a driver feeds it each
//! message ([`Server::handle`], [`Server::handle_json`]) and delivers each
//! [`Outgoing`] item from the queue [`Server::new`] returns. Every outgoing
//! message names the client request it belongs to, so a Streamable HTTP
//! driver can put it on that request's response stream. [`run_stdio`] is the
//! stdio driver; the `mcp-testkit` binary runs it (`mcp-testkit stdio`).
//!
//! ## Tools
//!
//! | tool | arguments | does |
//! |---|---|---|
//! | `echo` | `message: string` | text = message; nothing else (the benchmark's hot path) |
//! | `add` | `a: number, b: number` | text of the sum, `structuredContent {sum}`, with an `outputSchema` |
//! | `slow` | `ms: integer, steps?: integer` | sleeps `ms`, sending `steps` progress notifications when the request has a progress token; text `done` |
//! | `hang` | | never answers (until cancelled) |
//! | `fail` | `message?: string` | a result with `isError: true` |
//! | `crash` | `code?: integer, stderr?: string` | writes `stderr` (default `testkit: crashing on purpose`) to stderr and exits with `code` (default 3), unanswered |
//! | `big` | `bytes: integer` | one text block of exactly `bytes` ASCII bytes |
//! | `noisy` | `lines?: integer, long_line_bytes?: integer` | garbage lines on stdout (non-JSON, non-JSON-RPC JSON, a reply to an unknown id, an over-long line), `lines` lines on stderr, then a normal answer |
//! | `ask` | `what: "ping" \| "roots" \| "elicit" \| "sample"` | sends the client that request mid-call, returns its answer as JSON text `{"result":…}` or `{"error":…}` |
//! | `change` | | switches the tool `extra` in or out of the list, sends `notifications/tools/list_changed` |
//! | `cancelled_log` | | JSON text: the request ids of every `notifications/cancelled` received |
//! | `spawn_child` | `inherit_stdio?: boolean` | starts `sleep 300` in the server's process group, returns its pid |
//! | `env` | `name: string` | JSON text: the variable's value in the server, or `null` |
//! | `log` | `level: string, message: string` | sends `notifications/message` (if `logging/setLevel` allows), then answers |
//! | `extra` | | listed only after `change`; text `extra` |
//!
//! Invalid arguments give a tool error (`isError: true`); an unknown tool,
//! `-32602`. Besides `tools/*` the server answers `initialize`, `ping` and
//! `logging/setLevel`; any other method gets `-32601`, and anything but
//! `initialize` and `ping` before `initialize` gets `-32600`. A
//! `notifications/cancelled` aborts the call it names (no reply is sent) and
//! is recorded for `cancelled_log`. Server-to-client requests have the ids
//! `"srv-1"`, `"srv-2"`, ...; `ask` sends its request even when the client
//! did not declare the capability, so a test can check that the client
//! answers `-32601`.
//!
//! ## Options (`mcp-testkit stdio [options]`, or the fields of [`Config`])
//!
//! | option | effect |
//! |---|---|
//! | `--page-size N` | `tools/list` pages of N tools, `nextCursor` `"page:2"`, ...; a cursor the server did not issue gets `-32602` (default: one page) |
//! | `--send-list-changed-before-init` | sends `notifications/tools/list_changed` before the `initialize` reply |
//! | `--stderr-banner TEXT` | writes TEXT to stderr at start |
//! | `--exit-after N` | exits (code 0) after answering N requests |
//! | `--version-override V` | answers `initialize` with `protocolVersion` V |
//! | `--max-line-bytes N` | longest input line; longer ones are discarded and answered `-32700` (default 16 MiB) |
//! | `--ask-timeout-ms N` | how long `ask` waits for the client (default 10 000) |
//!
//! ## Example
//!
//! ```
//! use mcp_testkit::{Config, Outgoing, Server};
//! use mcp_proto::jsonrpc::Message;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (server, mut queue) = Server::new(Config::default());
//! server.handle_json(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
//! let Some(Outgoing::Message { message: Message::Response(reply), related }) = queue.recv().await
//! else {
//!     panic!("expected a reply")
//! };
//! assert_eq!(reply.result, serde_json::json!({}));
//! assert_eq!(related, Some(1.into()));
//! # }
//! ```

pub mod config;
mod locate;
mod server;
mod stdio;
mod tools;

pub use config::{ArgError, Command, Config, USAGE, parse_args};
pub use locate::binary_path;
pub use server::{Outgoing, OutgoingQueue, Server};
pub use stdio::run_stdio;
