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
//! - [`ops`]: list and lookup operations the typed API shares (pagination,
//!   the tool cache, result decoding), over [`ops::Requester`].
//!
//! Nothing here runs: `mcp-peer` drives the core (it feeds what a transport
//! receives, sends what the core queues, waits under the core's deadlines,
//! performs what [`decide`] decides and delivers the [`Event`]s); the
//! transports (`mcp-stdio`, `mcp-http`) only move messages.

mod core;
pub mod decide;
mod error;
mod handler;
pub mod headers;
pub mod notification;
pub mod ops;

pub use self::core::{
    CallerRound, ClientCore, CoreConfig, DEFAULT_REQUEST_TIMEOUT, DriverWork, Event, EventCallback,
    ListKind, ProgressCallback, RequestOptions, ServerEvent, ServerRequest,
};
pub use error::ClientError;
pub use handler::{
    BoxFuture, ElicitationHandler, Handlers, RootsHandler, SamplingHandler, StaticRoots,
};
pub use notification::{InvalidNotification, ServerNotification};
