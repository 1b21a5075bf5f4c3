//! What a request is made with: [`RequestOptions`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::types::ProgressNotificationParams;

/// A callback that receives the progress notifications of one request.
pub type ProgressCallback = Arc<dyn Fn(&ProgressNotificationParams) + Send + Sync>;

/// Per-request options.
#[derive(Clone, Default)]
pub struct RequestOptions {
    /// How long to wait for the answer; the configured default when `None`.
    pub timeout: Option<Duration>,
    /// Whether each progress notification restarts the timeout.
    pub reset_timeout_on_progress: bool,
    /// With `reset_timeout_on_progress`, the most the request may wait in all.
    pub max_total_timeout: Option<Duration>,
    /// Receives the request's progress notifications. When set (or when
    /// `reset_timeout_on_progress` is), the request carries a
    /// `_meta.progressToken`.
    pub on_progress: Option<ProgressCallback>,
    /// Extra `_meta` members for this request (W3C trace context
    /// `traceparent`/`tracestate`/`baggage`, a per-call
    /// `io.modelcontextprotocol/logLevel`, ...), merged into the
    /// parameters' `_meta`. The protocol's own members (version,
    /// capabilities, client identity) take precedence; a log level given
    /// here replaces the client's for this request.
    pub meta: Option<Map<String, Value>>,
    /// Stateless era: ask the server even when a fresh cached result is
    /// held (the answer still refreshes the cache).
    pub no_cache: bool,
    /// Extra HTTP headers for this request, `(name, value)` (Streamable
    /// HTTP; other transports carry none). The transport's own headers
    /// (`Content-Type`, `Accept`, `Host`, `Authorization`, `Mcp-*`, ...)
    /// cannot be set here: such a request fails before it is sent. Values
    /// are sent marked sensitive.
    pub headers: Vec<(String, String)>,
}

impl RequestOptions {
    /// Options with the given timeout.
    pub fn with_timeout(timeout: Duration) -> Self {
        RequestOptions { timeout: Some(timeout), ..Default::default() }
    }
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("reset_timeout_on_progress", &self.reset_timeout_on_progress)
            .field("max_total_timeout", &self.max_total_timeout)
            .field("on_progress", &self.on_progress.as_ref().map(|_| "<callback>"))
            .field("meta", &self.meta)
            .field("no_cache", &self.no_cache)
            .field("headers", &self.headers.iter().map(|(n, _)| n).collect::<Vec<_>>())
            .finish()
    }
}
