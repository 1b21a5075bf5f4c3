//! The server half's tests, one binary: the session core on data (no
//! sockets, tokio's paused clock), and the drivers spoken to by the
//! toolkit's own clients.

#[path = "it/backlog.rs"]
mod backlog;
#[path = "it/beside.rs"]
mod beside;
#[path = "it/beside_cancel.rs"]
mod beside_cancel;
#[path = "it/forward.rs"]
mod forward;
#[cfg(feature = "http")]
#[path = "it/http.rs"]
mod http;
#[path = "it/inflight.rs"]
mod inflight;
#[path = "it/session.rs"]
mod session;
#[cfg(feature = "http")]
#[path = "it/sse_bound.rs"]
mod sse_bound;
#[path = "it/stdio.rs"]
mod stdio;
