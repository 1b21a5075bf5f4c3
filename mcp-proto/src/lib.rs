//! # mcp-proto
//!
//! The Model Context Protocol on the wire, with no I/O: JSON-RPC 2.0 framing,
//! every MCP type of revision 2025-11-25 (and what older revisions need),
//! protocol-version negotiation, method names, error codes, and the pure
//! helpers both transports share.
//!
//! ## What this crate does not do
//!
//! It opens no socket, spawns no process, reads no file and starts no task.
//! Bytes and `serde_json::Value`s go in, typed messages come out, and the
//! other way round. The transports (`mcp-stdio`, `mcp-http`) move the bytes.
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

pub mod jsonrpc;
pub mod methods;
pub mod version;

pub use jsonrpc::{
    DecodeError, ErrorObject, ErrorResponse, Incoming, Message, Notification, Request, RequestId,
    Response, error_code,
};
pub use version::{ProtocolVersion, UnsupportedVersion, negotiate};
