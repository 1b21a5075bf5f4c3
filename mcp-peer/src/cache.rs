//! The result cache of the stateless era (2026-07-28): results of
//! `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list` and `resources/read` carry `ttlMs` (how long
//! they stay fresh) and `cacheScope` (`public` or `private`); a client may
//! answer the same request from a fresh copy instead of asking again.
//!
//! [`ClientOptions::cache`](crate::ClientOptions::cache) holds the cache: a
//! [`MemoryCache`] of the client's own by default, `None` to turn caching
//! off, or the host's [`ResultCache`] (shared between clients, persisted,
//! ...). The client:
//! - looks a request up only when nothing of the call could change its
//!   answer beyond the method and parameters (no progress, no extra
//!   `_meta`, not an `input_required` retry, not
//!   [`RequestOptions::no_cache`](mcp_proto::client::RequestOptions::no_cache));
//! - stores a complete result whose `ttlMs` is positive (absent, zero or
//!   negative: stale at once, not stored);
//! - drops entries when the server says they changed: a `list_changed`
//!   notification drops its list's pages, `resources/updated` drops the
//!   reads of that resource.
//!
//! A shared cache must honour [`CacheHint::private`]: such a result may be
//! reused only within the same authorization context.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use mcp_proto::methods;
use mcp_proto::types::CacheHint;
use serde_json::value::RawValue;

/// What identifies a cached result: the server, the method and the
/// parameters that decide the answer (the cursor of a page, the URI of a
/// read), as compact JSON without `_meta`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// The server: its name in the client's options, and the era cache
    /// key of its transport when it has one (an HTTP origin).
    pub server: String,
    /// The method.
    pub method: String,
    /// The parameters, as compact JSON text without `_meta`.
    pub params: String,
}

/// What a notification says is no longer fresh.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Invalidation {
    /// Every result of this method from this server (a list changed).
    Method {
        /// The server, as in [`CacheKey::server`].
        server: String,
        /// The method.
        method: &'static str,
    },
    /// The reads of one resource (`resources/updated`).
    Resource {
        /// The server, as in [`CacheKey::server`].
        server: String,
        /// The resource's URI.
        uri: String,
    },
    /// Everything from this server (its connection started again).
    Server {
        /// The server, as in [`CacheKey::server`].
        server: String,
    },
}

/// A store of cacheable results. Implement it to share or persist the
/// cache; [`MemoryCache`] is the default.
pub trait ResultCache: Send + Sync + fmt::Debug {
    /// A fresh result for `key` at `now`, if one is held.
    fn get(&self, key: &CacheKey, now: Instant) -> Option<Box<RawValue>>;
    /// Holds `result` for `key` until `now + ttl`. `hint.private` says the
    /// result is the caller's own: not to be served to another
    /// authorization context.
    fn put(&self, key: CacheKey, result: &RawValue, hint: CacheHint, ttl: Duration, now: Instant);
    /// Drops what the server said is no longer fresh.
    fn invalidate(&self, what: &Invalidation);
}

pub use mcp_proto::client::decide::result::is_cacheable;

/// The default cache: in memory, bounded, for one client.
#[derive(Debug)]
pub struct MemoryCache {
    capacity: usize,
    entries: Mutex<HashMap<CacheKey, Entry>>,
}

#[derive(Debug)]
struct Entry {
    result: Box<RawValue>,
    expires: Instant,
    uri: Option<String>,
}

/// The default capacity of a [`MemoryCache`].
pub const DEFAULT_CACHE_ENTRIES: usize = 256;

impl MemoryCache {
    /// A cache holding at most `capacity` results (when full, expired ones
    /// go first, then those expiring soonest).
    pub fn new(capacity: usize) -> MemoryCache {
        MemoryCache { capacity: capacity.max(1), entries: Mutex::new(HashMap::new()) }
    }

    /// How many results are held (fresh or not yet swept).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for MemoryCache {
    fn default() -> Self {
        MemoryCache::new(DEFAULT_CACHE_ENTRIES)
    }
}

impl ResultCache for MemoryCache {
    fn get(&self, key: &CacheKey, now: Instant) -> Option<Box<RawValue>> {
        let mut entries = self.lock();
        match entries.get(key) {
            Some(e) if now < e.expires => Some(e.result.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    fn put(&self, key: CacheKey, result: &RawValue, _: CacheHint, ttl: Duration, now: Instant) {
        let mut entries = self.lock();
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, e| now < e.expires);
            if entries.len() >= self.capacity
                && let Some(soonest) =
                    entries.iter().min_by_key(|(_, e)| e.expires).map(|(k, _)| k.clone())
            {
                entries.remove(&soonest);
            }
        }
        let uri = (key.method == methods::RESOURCES_READ)
            .then(|| serde_json::from_str::<serde_json::Value>(&key.params).ok())
            .flatten()
            .and_then(|p| p.get("uri").and_then(|u| u.as_str()).map(str::to_owned));
        let expires = now.checked_add(ttl).unwrap_or(now + Duration::from_secs(365 * 24 * 3600));
        entries.insert(key, Entry { result: result.to_owned(), expires, uri });
    }

    fn invalidate(&self, what: &Invalidation) {
        let mut entries = self.lock();
        match what {
            Invalidation::Method { server, method } => {
                entries.retain(|k, _| !(k.server == *server && k.method == *method))
            }
            Invalidation::Resource { server, uri } => entries
                .retain(|k, e| !(k.server == *server && e.uri.as_deref() == Some(uri.as_str()))),
            Invalidation::Server { server } => entries.retain(|k, _| k.server != *server),
        }
    }
}

/// The parameters of a key: the request's, as compact JSON, without
/// `_meta`.
pub(crate) fn key_params(params: Option<&serde_json::Value>) -> String {
    match params {
        Some(serde_json::Value::Object(obj)) if obj.contains_key("_meta") => {
            let mut obj = obj.clone();
            obj.remove("_meta");
            serde_json::Value::Object(obj).to_string()
        }
        Some(v) => v.to_string(),
        None => "null".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).unwrap()
    }

    fn key(method: &str, params: &str) -> CacheKey {
        CacheKey { server: "s".into(), method: method.into(), params: params.into() }
    }

    #[test]
    fn fresh_until_the_ttl_then_gone() {
        let cache = MemoryCache::new(8);
        let t0 = Instant::now();
        let k = key("tools/list", "{}");
        cache.put(
            k.clone(),
            &raw("{\"tools\":[]}"),
            CacheHint::default(),
            Duration::from_millis(100),
            t0,
        );
        assert!(cache.get(&k, t0 + Duration::from_millis(99)).is_some());
        assert!(cache.get(&k, t0 + Duration::from_millis(100)).is_none());
        assert!(cache.is_empty());
    }

    #[test]
    fn invalidations_drop_what_they_name() {
        let cache = MemoryCache::new(8);
        let t0 = Instant::now();
        let ttl = Duration::from_secs(60);
        let h = CacheHint::default();
        cache.put(key("tools/list", "{}"), &raw("{}"), h, ttl, t0);
        cache.put(key("resources/read", r#"{"uri":"a://1"}"#), &raw("{}"), h, ttl, t0);
        cache.put(key("resources/read", r#"{"uri":"a://2"}"#), &raw("{}"), h, ttl, t0);
        cache.invalidate(&Invalidation::Resource { server: "s".into(), uri: "a://1".into() });
        assert!(cache.get(&key("resources/read", r#"{"uri":"a://1"}"#), t0).is_none());
        assert!(cache.get(&key("resources/read", r#"{"uri":"a://2"}"#), t0).is_some());
        cache.invalidate(&Invalidation::Method { server: "s".into(), method: "tools/list" });
        assert!(cache.get(&key("tools/list", "{}"), t0).is_none());
        cache.invalidate(&Invalidation::Server { server: "s".into() });
        assert!(cache.is_empty());
    }

    #[test]
    fn bounded_dropping_the_soonest_to_expire() {
        let cache = MemoryCache::new(2);
        let t0 = Instant::now();
        let h = CacheHint::default();
        cache.put(key("m", "1"), &raw("1"), h, Duration::from_secs(1), t0);
        cache.put(key("m", "2"), &raw("2"), h, Duration::from_secs(9), t0);
        cache.put(key("m", "3"), &raw("3"), h, Duration::from_secs(5), t0);
        assert_eq!(cache.len(), 2);
        assert!(cache.get(&key("m", "1"), t0).is_none());
        assert!(cache.get(&key("m", "2"), t0).is_some());
    }

    #[test]
    fn key_parameters_leave_meta_out() {
        let p = serde_json::json!({"cursor": "c", "_meta": {"x": 1}});
        assert_eq!(key_params(Some(&p)), r#"{"cursor":"c"}"#);
        assert_eq!(key_params(None), "null");
    }
}
