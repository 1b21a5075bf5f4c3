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
    /// Stateless era: the request's `input_required` rounds are its
    /// caller's ([`CallerRound`]), not the host's handlers'. `None`: the
    /// client fulfils them itself.
    pub caller_round: Option<CallerRound>,
}

/// A request whose `input_required` rounds its caller takes: a bridge
/// passing them on to the host it serves, which answers them itself. Such
/// an answer goes to the caller as it came (its text), counted against no
/// round limit of this client, and the request carries the caller's
/// `inputResponses` and `requestState` as they are. Only the stateless era
/// has such rounds: a connection of the handshake era sends neither member
/// (see [`sends_caller_round`](crate::client::decide::input::sends_caller_round))
/// and asks its server's questions through the handlers as ever.
#[derive(Clone, Default, PartialEq)]
pub struct CallerRound {
    /// `inputResponses` for this request (a retry's answers, or answers
    /// given up front), passed on as the caller got them.
    pub input_responses: Option<Map<String, Value>>,
    /// `requestState` for this request, exactly as the server gave it.
    pub request_state: Option<String>,
}

impl CallerRound {
    /// Whether the request carries anything of the caller's round.
    pub fn carries_input(&self) -> bool {
        self.input_responses.is_some() || self.request_state.is_some()
    }
}

/// What the answers and the state hold is the host's and the server's:
/// only which of them are there is shown.
impl fmt::Debug for CallerRound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallerRound")
            .field(
                "input_responses",
                &self.input_responses.as_ref().map(|r| r.keys().collect::<Vec<_>>()),
            )
            .field("request_state", &self.request_state.as_ref().map(|_| "<state>"))
            .finish()
    }
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
            .field("caller_round", &self.caller_round)
            .finish()
    }
}
