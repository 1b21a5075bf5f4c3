//! Streamable HTTP (2025-03-26 and later): every client message its own
//! POST, replies as JSON or an event stream; the session
//! (`Mcp-Session-Id`; a 404 on a request that carried it is
//! [`Error::SessionExpired`](crate::Error::SessionExpired), on which the
//! client starts a new session), the standalone GET stream, resumption
//! with `Last-Event-ID`, and `DELETE` on close. Stands on
//! [`request`](crate::request) alone; knows nothing of the 2024-11-05
//! transport.
//!
//! - `session.rs`: the state (session, epochs, the standalone stream's
//!   [`EventStreamState`]) and the session's end;
//! - `exchange.rs`: a request's POST and its reply;
//! - `events.rs`: the standalone GET stream;
//! - `resume.rs`: the one reconnect loop.

mod events;
mod exchange;
mod resume;
mod session;

pub use session::EventStreamState;
pub(crate) use session::Streamable;
