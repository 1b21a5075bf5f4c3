//! Two parsers an HTTP client of the Model Context Protocol needs, exact to
//! their specifications, fast, and fuzzed:
//!
//! - [`sse`]: an incremental decoder for `text/event-stream` (server-sent
//!   events), following the "Interpreting an event stream" algorithm of the
//!   WHATWG HTML standard, with a bound on event size. [`SseCodec`] puts it
//!   behind `tokio_util::codec::Decoder`.
//! - [`www_authenticate`]: the `WWW-Authenticate` challenge grammar of RFC
//!   9110 (several challenges per value, several values, token68,
//!   quoted-strings), and the typed Bearer challenge of RFC 6750 and RFC
//!   9728 that MCP's authorization flow reads (`scope`, `error`,
//!   `resource_metadata`, ...).
//!
//! # What this crate does not do
//!
//! No I/O: it opens no socket, reads no file, starts no task and looks at no
//! clock. Bytes and strings go in, events and challenges come out; the HTTP
//! transport that owns the connection feeds it body frames and header
//! values. It does not reconnect (it tells you the last event ID and the
//! `retry` time to do so), and it does not decide what to do with a
//! challenge (that is the OAuth client's job).
//!
//! # Guarantees
//!
//! - It never panics on input, whatever the bytes (the fuzz targets in the
//!   repository's `fuzz/` folder check that, and that the decoder gives the
//!   same events however the input is split into chunks).
//! - It is bounded: the event-stream decoder holds at most about
//!   [`sse::Decoder::max_event_size`] bytes of one event, skips larger ones
//!   and says so, and goes on with the stream.
//! - Malformed input is reported as data ([`sse::DecodeError`] items,
//!   [`www_authenticate::ChallengeError`] entries) rather than ending the
//!   stream or the list.
//!
//! # Event stream
//!
//! ```
//! use mcp_sse::{Decoder, Item};
//!
//! let mut decoder = Decoder::new();
//! let mut events = Vec::new();
//! // Chunks can split anything, even a CRLF.
//! for chunk in [&b"id: 1\r\ndata:\r\n\r"[..], b"\nid: 2\r\ndata: {\"jsonrpc\"", b":\"2.0\"}\r\n\r\n"] {
//!     for item in decoder.decode(chunk) {
//!         events.push(item);
//!     }
//! }
//! // `data:` with an empty value dispatches an event whose data is empty...
//! let Item::Event(first) = &events[0] else { panic!() };
//! assert_eq!((first.data.as_str(), first.id.as_deref()), ("", Some("1")));
//! let Item::Event(second) = &events[1] else { panic!() };
//! assert_eq!(second.event, "message");
//! assert_eq!(second.data, r#"{"jsonrpc":"2.0"}"#);
//! assert_eq!(decoder.last_event_id(), "2");
//!
//! // ...while a block with an `id` and no `data` at all dispatches nothing,
//! // but does set the last event ID (an MCP priming event).
//! let items: Vec<Item> = decoder.decode(b"id: 3\n\n").collect();
//! assert_eq!(items, [Item::NoData { id: Some("3".into()), retry: None }]);
//! assert_eq!(decoder.last_event_id(), "3");
//! ```
//!
//! # Zero-copy: borrowed items
//!
//! [`Decoder::decode_with`] hands the same items to a callback as
//! [`ItemRef`]s, borrowed instead of owned: an event's data is a
//! `Cow<str>` lent straight from the chunk when its single `data` line lies
//! whole in it (the usual MCP event), from the decoder's buffer otherwise,
//! and copied only when invalid UTF-8 had to be replaced; the id and event
//! type are lent too. Nothing is allocated per event, so a JSON parser can
//! read the body frame in place.
//!
//! ```
//! use std::borrow::Cow;
//! use mcp_sse::{Decoder, ItemRef};
//!
//! let mut decoder = Decoder::new();
//! let chunk = b"id: 9\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n\n";
//! let mut methods = Vec::new();
//! decoder.decode_with(chunk, |item| {
//!     if let ItemRef::Event(event) = item {
//!         assert!(matches!(event.data, Cow::Borrowed(_))); // no copy
//!         assert_eq!(event.id, Some("9"));
//!         let start = event.data.find("\"method\":\"").unwrap() + 10;
//!         methods.push(event.data[start..event.data.len() - 2].to_owned());
//!     }
//! });
//! assert_eq!(methods, ["ping"]);
//! // Either API, same items: `ItemRef::into_owned` gives the `Item`.
//! ```
//!
//! # WWW-Authenticate
//!
//! ```
//! use mcp_sse::www_authenticate;
//!
//! let values = [
//!     r#"Basic realm="legacy""#,
//!     r#"Bearer error_description="bad scope=admin given", scope="mcp:read", error="insufficient_scope""#,
//! ];
//! let bearer = www_authenticate::find_bearer(values).unwrap();
//! assert_eq!(bearer.scope.as_deref(), Some(&["mcp:read".to_owned()][..]));
//! assert!(bearer.is_insufficient_scope());
//!
//! // Every challenge, or why it is malformed.
//! let all = www_authenticate::parse(r#"Negotiate abc==, Bearer realm="a", realm="b""#);
//! assert_eq!(all[0].as_ref().unwrap().token68.as_deref(), Some("abc=="));
//! assert!(all[1].is_err()); // realm given twice
//! ```
//!
//! # Optional features
//!
//! - `codec` (default): [`SseCodec`], a `tokio_util::codec::Decoder`. Adds
//!   `tokio-util` and `bytes`.

#[cfg(feature = "codec")]
mod codec;
pub mod sse;
pub mod www_authenticate;

#[cfg(feature = "codec")]
pub use codec::SseCodec;
pub use sse::{DecodeError, Decoder, Event, EventRef, Item, ItemRef};
pub use www_authenticate::{BearerChallenge, Challenge, ChallengeError};

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
