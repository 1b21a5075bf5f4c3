//! Feature `otel`: the current OpenTelemetry context on every request.
//!
//! The W3C trace context (`traceparent`, `tracestate`) and `baggage` of
//! [`opentelemetry::Context::current`] are written by the globally
//! installed propagator (`opentelemetry::global::set_text_map_propagator`,
//! typically the SDK's `TraceContextPropagator`) into the request's `_meta`,
//! where the 2026-07-28 revision reserves them (earlier servers see them as
//! ordinary `_meta` members). Members the call sets itself
//! ([`RequestOptions::meta`]) are left as they are. Without a propagator or
//! without a current span nothing is added, and the request keeps its fast
//! path.

use mcp_proto::client::RequestOptions;
use mcp_proto::types::TRACE_CONTEXT_META_KEYS;
use opentelemetry::propagation::Injector;
use serde_json::{Map, Value};

struct MetaInjector(Map<String, Value>);

impl Injector for MetaInjector {
    fn set(&mut self, key: &str, value: String) {
        if TRACE_CONTEXT_META_KEYS.contains(&key) {
            self.0.insert(key.to_owned(), Value::String(value));
        }
    }
}

/// The trace-context members of the current context, if the propagator
/// gives any.
pub fn current_trace_meta() -> Option<Map<String, Value>> {
    let mut meta = MetaInjector(Map::new());
    opentelemetry::global::get_text_map_propagator(|p| {
        p.inject_context(&opentelemetry::Context::current(), &mut meta)
    });
    (!meta.0.is_empty()).then_some(meta.0)
}

/// Adds the current trace context to `options`' `_meta` (members it
/// already has win).
pub(crate) fn add_trace_context(options: &mut RequestOptions) {
    if let Some(trace) = current_trace_meta() {
        let meta = options.meta.get_or_insert_with(Map::new);
        for (k, v) in trace {
            meta.entry(k).or_insert(v);
        }
    }
}
