//! The session layer against the testkit server, both in memory: no process,
//! no socket, tokio's clock paused (deadlines pass at once when everything
//! waits). One binary; a module a job, the pairs and handlers they share in
//! `it/common.rs`.

#[path = "it/cache.rs"]
mod cache;
#[path = "it/common.rs"]
mod common;
#[path = "it/deadlines.rs"]
mod deadlines;
#[path = "it/era.rs"]
mod era;
#[path = "it/features.rs"]
mod features;
#[path = "it/forward.rs"]
mod forward;
#[path = "it/input.rs"]
mod input;
#[path = "it/meta.rs"]
mod meta;
#[path = "it/middleware.rs"]
mod middleware;
#[path = "it/opening_read_once.rs"]
mod opening_read_once;
#[cfg(feature = "otel")]
#[path = "it/otel.rs"]
mod otel;
#[path = "it/results.rs"]
mod results;
#[path = "it/session.rs"]
mod session;
#[path = "it/subscriptions.rs"]
mod subscriptions;
#[path = "it/tasks.rs"]
mod tasks;
