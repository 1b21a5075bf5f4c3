//! What a result asks for, what may be cached, and when a task is polled
//! next.

use std::time::Duration;

use crate::client::{ClientError, RequestOptions};
use crate::methods;
use crate::types::CacheHint;

/// What a result asks of the client ([`EraRules::on_result`](super::EraRules::on_result)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResultStep {
    /// The final result: give it to the caller; with `cache`, keep it in
    /// the result cache for that long, with that hint.
    Deliver {
        /// The hint and freshness to cache it with.
        cache: Option<(CacheHint, Duration)>,
    },
    /// `input_required`: fulfil it and send the request again
    /// ([`InputRounds`](super::InputRounds)).
    InputRequired,
    /// A task handle (the tasks extension): follow it to its end, or give
    /// it to a caller who asked for the handle.
    Task,
    /// The request fails with this error.
    Invalid(ClientError),
}

/// What [`EraRules::on_result`](super::EraRules::on_result) needs to know
/// of the request beyond its method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResultContext {
    /// Whether the client declared the tasks extension.
    pub tasks_declared: bool,
    /// Whether the request's result may be cached ([`may_cache`]).
    pub cacheable: bool,
    /// Whether the caller takes the request's `input_required` rounds
    /// ([`CallerRound`](crate::client::CallerRound)): such an answer is
    /// then delivered as it came.
    pub rounds_to_caller: bool,
}

/// The methods whose results the stateless era marks cacheable (besides
/// `server/discover`, which the client asks only once a connection).
pub fn is_cacheable(method: &str) -> bool {
    matches!(
        method,
        methods::TOOLS_LIST
            | methods::PROMPTS_LIST
            | methods::RESOURCES_LIST
            | methods::RESOURCES_TEMPLATES_LIST
            | methods::RESOURCES_READ
    )
}

/// Whether a request's answer may come from (and go to) the result cache:
/// a cacheable method, and nothing in the call beyond method and
/// parameters that could change the answer (progress, extra `_meta`, a
/// caller's input rounds). The era decides too
/// ([`EraRules::caches_results`](super::EraRules::caches_results)).
pub fn may_cache(method: &str, options: &RequestOptions) -> bool {
    is_cacheable(method)
        && options.meta.is_none()
        && options.on_progress.is_none()
        && !options.reset_timeout_on_progress
        && options.caller_round.is_none()
}

/// The caching hint of a result's JSON text (`ttlMs`, `cacheScope`), read
/// without decoding the rest.
pub fn cache_hint(raw: &str) -> CacheHint {
    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(rename = "ttlMs", default)]
        ttl: Option<serde_json::Value>,
        #[serde(rename = "cacheScope", default)]
        scope: Option<String>,
    }
    match serde_json::from_str::<Peek>(raw) {
        Ok(p) => CacheHint {
            ttl_ms: p.ttl.as_ref().and_then(serde_json::Value::as_u64),
            private: p.scope.as_deref() != Some("public"),
        },
        Err(_) => CacheHint::default(),
    }
}

/// How long a result with `hint` stays fresh: its positive `ttlMs`, else
/// `None` (stale at once: not kept).
pub fn ttl(hint: &CacheHint) -> Option<Duration> {
    hint.ttl_ms.filter(|t| *t > 0).map(Duration::from_millis)
}

/// The polling interval of a task when the server suggests none.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// The shortest polling interval followed, whatever the server suggests.
pub const MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest polling interval followed, whatever the server suggests.
pub const MAX_POLL_INTERVAL: Duration = Duration::from_secs(60);

/// When a task followed for `elapsed` of its `limit` is polled next: the
/// interval the server suggests (`pollIntervalMs`), clamped to
/// [`MIN_POLL_INTERVAL`]..[`MAX_POLL_INTERVAL`] and to the time left;
/// `None` once the limit is reached (the task is given up).
pub fn poll_interval(
    suggested_ms: Option<u64>,
    elapsed: Duration,
    limit: Duration,
) -> Option<Duration> {
    let left = limit.checked_sub(elapsed).filter(|left| !left.is_zero())?;
    let interval = suggested_ms
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_POLL_INTERVAL)
        .clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL);
    Some(interval.min(left))
}
