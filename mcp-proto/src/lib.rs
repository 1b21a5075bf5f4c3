//! # mcp-proto
//!
//! The Model Context Protocol on the wire, with no I/O: JSON-RPC 2.0 framing,
//! every MCP type of revisions 2025-11-25 and 2026-07-28 (and what older
//! revisions need), protocol versions and their two eras, negotiation,
//! method names, error codes, and the pure helpers every transport shares
//! (the client core among them).
//!
//! ## What this crate does not do
//!
//! It opens no socket, spawns no process, reads no file and starts no task.
//! Bytes and `serde_json::Value`s go in, typed messages come out, and the
//! other way round. The transports (`mcp-stdio`, `mcp-http`) move the bytes.
//!
//! The decoder reads a message's text once and never builds a `Value` of the
//! whole message; [`jsonrpc::decode_slice_as`] with `Box<RawValue>` keeps a
//! result as its JSON text, and [`client::ops::parse_result`] decodes it once,
//! straight into the result's type. Where a driver knows the type a request
//! waits for, [`jsonrpc::usual_answer`] finds the usual answer's result
//! without reading it, so the result's text is read only once, by its
//! type's decoder ([`client::ClientCore::take_answered`] finishes the
//! request then; the opening's answers have
//! [`client::decide::ProbeState::handle_discovery`] and
//! [`client::ClientCore::take_usual_initialize`]; both read a result of
//! the usual shape by a scan of its text that checks all it reads). A
//! server's
//! [`jsonrpc::decode_received`] keeps a request's parameters as the text
//! the client wrote (for a `tools/call`, with where its name and arguments
//! lie in it, found while that text was checked). Requests are written by [`jsonrpc::write_json`]:
//! serde_json's text, with strings that need no escaping copied whole.
//!
//! ## Getting started
//!
//! ```
//! use mcp_proto::jsonrpc::{self, Incoming, Message};
//!
//! let line = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
//! match jsonrpc::decode_slice(line).unwrap() {
//!     Incoming::Single(Message::Response(r)) => assert_eq!(r.id, 1.into()),
//!     other => panic!("unexpected {other:?}"),
//! }
//!
//! let version = mcp_proto::negotiate("2025-06-18", mcp_proto::ProtocolVersion::SUPPORTED).unwrap();
//! assert!(version.sends_protocol_version_header());
//! ```
//!
//! ## Wire types and rendering
//!
//! - [`types`]: every type of the 2025-11-25 and 2026-07-28 schemas under
//!   its schema name ([`types::InitializeRequestParams`], [`types::Tool`],
//!   [`types::CallToolResult`], [`types::ContentBlock`],
//!   [`types::ElicitRequestParams`], [`types::Task`],
//!   [`types::DiscoverResult`], [`types::InputRequiredResult`], ...). Decoding then
//!   encoding gives back what the peer sent: unknown members are kept in
//!   `extra`, `_meta` in `meta`, and what a newer server adds (a content
//!   block `type`, an enum value, a capability) decodes instead of failing.
//! - [`render`]: [`render_tool_result`] turns a `tools/call` result into the
//!   text a host shows a model (text blocks verbatim, embedded text resources
//!   with their URI, resource links as URI and name, images, audio and blobs
//!   summarised with their MIME type and decoded size), beside the structured
//!   content, the error flag and the raw result. [`render_tool_result_value`]
//!   does the same, best effort, for a raw JSON result that does not decode.
//! - [`display`]: server-controlled text made safe to show on a terminal
//!   ([`display::terminal_safe`]: control sequences and bidirectional
//!   controls shown as visible escapes) and the rules for handing a
//!   server's URL to a browser ([`display::openable_url`]).
//!
//! ```
//! use mcp_proto::render_tool_result;
//! use mcp_proto::types::CallToolResult;
//!
//! let result: CallToolResult = serde_json::from_value(serde_json::json!({
//!     "content": [
//!         {"type": "text", "text": "Here is the chart."},
//!         {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
//!         {"type": "resource_link", "uri": "file:///data.csv", "name": "data.csv"}
//!     ],
//!     "isError": false
//! }))
//! .unwrap();
//! let rendered = render_tool_result(&result);
//! assert_eq!(
//!     rendered.text,
//!     "Here is the chart.\n[image: image/png, 8 B]\n[resource link: file:///data.csv, name: data.csv]"
//! );
//! assert!(!rendered.is_error);
//! ```
//!
//! ## Extensions
//!
//! [`apps`]: MCP Apps (`io.modelcontextprotocol/ui`) read from the wire
//! types: a tool's view and visibility ([`Tool::ui`](types::Tool::ui),
//! [`Tool::is_visible_to_model`](types::Tool::is_visible_to_model)), a
//! view's content security policy and permissions, the capability a host
//! declares.
//!
//! ## Retries
//!
//! [`backoff`]: the one backoff of the workspace (exponential, full jitter,
//! capped, a server's `retry` honoured above a floor, the randomness passed
//! in) and [`backoff::Retries`], the count of failures in a row against a
//! limit; the HTTP transport's stream reconnections, the stateless era's
//! re-listening and the registry's supervision all wait by it.
//!
//! ## Hash maps
//!
//! [`hash`]: [`hash::SeededMap`], a hash map with a fast hasher seeded at
//! random, for maps looked up on every request whose size is capped
//! otherwise (the module says why that makes it safe for keys a peer
//! chooses).

pub mod apps;
pub mod backoff;
pub mod client;
pub mod display;
pub mod hash;
pub mod jsonrpc;
pub mod methods;
pub mod render;
pub mod types;
pub mod version;

pub use jsonrpc::{
    DecodeError, ErrorObject, ErrorResponse, Incoming, Message, Notification, Request, RequestId,
    Response, error_code,
};
pub use render::{RenderedToolResult, render_tool_result, render_tool_result_value};
pub use version::{Era, ProtocolVersion, UnsupportedVersion, negotiate, select_version};

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
