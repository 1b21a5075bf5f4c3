//! The request layer both protocol variants stand on, knowing neither:
//! building a request to the endpoint (headers, credentials, the session
//! and version headers a caller gives), sending it through the connection
//! pool (OAuth rounds, same-origin redirects), turning a refusal into its
//! [`Error`](crate::Error), and reading a reply body under its bounds (a
//! JSON body, an event stream's messages, a GET for an event stream); and
//! the door `mcp-auth`'s OAuth client talks through.
//!
//! It never imports [`streamable`](crate::streamable),
//! [`legacy`](crate::legacy) or the transport front: what a variant does
//! with a reply is the variant's.

mod base;
mod fetch;
mod send;
mod sse;

pub(crate) use base::{ExtraHeaders, Http, Snapshot, lock};
pub(crate) use send::EXCERPT_WAIT;
pub(crate) use sse::{GetError, Pumped, drain, pump};
