//! The client core, written once for every transport.
//!
//! - [`ClientCore`]: the sans-IO state machine (ids, matching, handshake,
//!   timeouts, routing of server requests and notifications).
//! - [`Handlers`]: the host's answers to `roots/list`,
//!   `sampling/createMessage` and `elicitation/create`.
//! - [`headers`]: `x-mcp-header` annotations (which tools are valid, the
//!   `Mcp-Param-*` headers of a call).
//! - [`decide`]: the client's decisions on data (which era to open, the
//!   era probe, recovery after a failed attempt, input-round bounds,
//!   result kinds and caching), one module per protocol era behind
//!   [`decide::EraRules`].
//! - [`ops`]: the typed operations (`list_tools` with pagination and cache,
//!   `call_tool`, ...) over any transport that implements [`ops::Requester`].
//!
//! A transport is a small driver: it owns the bytes (a pipe, HTTP requests),
//! feeds what arrives to the core, sends what the core gives, and delivers
//! [`Event`]s.

mod core;
pub mod decide;
mod error;
mod handler;
pub mod headers;
pub mod notification;
pub mod ops;

pub use self::core::{
    ClientCore, CoreConfig, DEFAULT_REQUEST_TIMEOUT, DriverWork, Event, EventCallback, ListKind,
    ProgressCallback, RequestOptions, ServerEvent, ServerRequest,
};
pub use error::ClientError;
pub use handler::{
    BoxFuture, ElicitationHandler, Handlers, RootsHandler, SamplingHandler, StaticRoots,
};
pub use notification::{InvalidNotification, ServerNotification};
