//! Request middleware: an ordered chain of hooks around each request the
//! client sends through its typed operations and [`Client::request`]
//! (the era probe and `initialize` excepted).
//!
//! Before a request leaves, each middleware in turn may look at it, add to
//! its `_meta` or its HTTP headers, refuse it, or answer it itself (then
//! nothing is sent, and the middlewares after it are not asked). After the
//! answer (or the failure), each is told, in reverse order. The hooks are
//! plain functions, called with no lock held; a hook that panics fails its
//! request with [`ClientError::Refused`] and the client goes on.
//!
//! With no middleware (the default) the send path does not change.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use mcp_peer::middleware::{After, Before, Middleware, Outgoing};
//! use mcp_peer::ClientOptions;
//!
//! /// Counts the requests, the failures and the time spent waiting.
//! #[derive(Debug, Default)]
//! struct Metrics {
//!     requests: AtomicU64,
//!     failures: AtomicU64,
//!     micros: AtomicU64,
//! }
//!
//! impl Middleware for Metrics {
//!     fn before(&self, request: &mut Outgoing<'_>) -> Before {
//!         self.requests.fetch_add(1, Ordering::Relaxed);
//!         request.add_header("x-request-source", "metrics-example");
//!         Before::Send
//!     }
//!
//!     fn after(&self, answer: &After<'_>) {
//!         if answer.error.is_some() {
//!             self.failures.fetch_add(1, Ordering::Relaxed);
//!         }
//!         let micros = u64::try_from(answer.elapsed.as_micros()).unwrap_or(u64::MAX);
//!         self.micros.fetch_add(micros, Ordering::Relaxed);
//!     }
//! }
//!
//! let metrics = Arc::new(Metrics::default());
//! let options = ClientOptions::new("files").with_middleware(metrics.clone());
//! # drop(options);
//! ```
//!
//! [`Client::request`]: crate::Client::request

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use mcp_proto::client::{ClientError, RequestOptions};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// One middleware: hooks before a request leaves and after its answer.
pub trait Middleware: Send + Sync + fmt::Debug {
    /// Called before the request leaves (before the result cache is asked).
    fn before(&self, request: &mut Outgoing<'_>) -> Before {
        let _ = request;
        Before::Send
    }

    /// Called once the request ended, answered or not (also when a
    /// middleware answered or refused it).
    fn after(&self, answer: &After<'_>) {
        let _ = answer;
    }
}

/// What happens to a request after [`Middleware::before`].
#[derive(Debug)]
#[non_exhaustive]
pub enum Before {
    /// Ask the next middleware, then send it.
    Send,
    /// Do not send it: this is its result (JSON text of the method's
    /// result, decoded as the server's would be).
    Answer(Box<RawValue>),
    /// Do not send it: it fails with [`ClientError::Refused`] and this
    /// reason.
    Refuse(String),
}

/// A request about to leave, as a middleware may change it.
pub struct Outgoing<'a> {
    method: &'a str,
    options: &'a mut RequestOptions,
}

impl fmt::Debug for Outgoing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outgoing").field("method", &self.method).finish_non_exhaustive()
    }
}

impl Outgoing<'_> {
    /// The request's method.
    pub fn method(&self) -> &str {
        self.method
    }

    /// The extra `_meta` members the request will carry (merged into its
    /// parameters' `_meta`; the protocol's own members win), to read or
    /// change: W3C trace context, a per-call log level, ...
    pub fn meta(&mut self) -> &mut Map<String, Value> {
        self.options.meta.get_or_insert_with(Map::new)
    }

    /// Adds an HTTP header to the request (Streamable HTTP; other
    /// transports carry none). The transport's own headers cannot be set:
    /// such a request fails before it is sent.
    pub fn add_header(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.options.headers.push((name.into(), value.into()));
    }

    /// The request's timeout, when one was set for it.
    pub fn timeout(&self) -> Option<Duration> {
        self.options.timeout
    }
}

/// A request that ended, as [`Middleware::after`] sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct After<'a> {
    /// The request's method.
    pub method: &'a str,
    /// Its result as JSON text, when it has one.
    pub result: Option<&'a RawValue>,
    /// Its error, when it failed.
    pub error: Option<&'a (dyn std::error::Error + 'static)>,
    /// How long it took, middlewares included.
    pub elapsed: Duration,
}

/// The chain's verdict before sending.
pub(crate) enum Verdict {
    Send,
    Answer(Box<RawValue>),
    Refuse(ClientError),
}

/// Runs every middleware's `before`, in order, until one answers or
/// refuses; a panic refuses.
pub(crate) fn before(
    chain: &[Arc<dyn Middleware>],
    method: &str,
    options: &mut RequestOptions,
) -> Verdict {
    for middleware in chain {
        let mut request = Outgoing { method, options };
        let refuse = |reason: String| {
            Verdict::Refuse(ClientError::Refused { method: method.into(), reason })
        };
        match catch_unwind(AssertUnwindSafe(|| middleware.before(&mut request))) {
            Ok(Before::Send) => {}
            Ok(Before::Answer(raw)) => return Verdict::Answer(raw),
            Ok(Before::Refuse(reason)) => return refuse(reason),
            Err(_) => {
                tracing::error!(
                    method,
                    ?middleware,
                    "a request middleware panicked; the request fails"
                );
                return refuse(format!("the middleware {middleware:?} panicked"));
            }
        }
    }
    Verdict::Send
}

/// Tells every middleware, in reverse order, how the request ended; a
/// panic is logged and the others are still told.
pub(crate) fn after(chain: &[Arc<dyn Middleware>], answer: &After<'_>) {
    for middleware in chain.iter().rev() {
        if catch_unwind(AssertUnwindSafe(|| middleware.after(answer))).is_err() {
            tracing::error!(
                method = answer.method,
                ?middleware,
                "a request middleware panicked after the answer"
            );
        }
    }
}
