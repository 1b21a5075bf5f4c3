//! The current OpenTelemetry context rides in each request's `_meta`
//! (feature `otel`).

use std::sync::Arc;

use mcp_peer::Client;
use mcp_peer::memory;
use serde_json::{Value, json};

use crate::common::options;

#[cfg(feature = "otel")]
#[tokio::test]
async fn the_current_opentelemetry_context_rides_in_meta() {
    use opentelemetry::propagation::{
        Extractor, Injector, TextMapPropagator, text_map_propagator::FieldIter,
    };
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };

    /// The W3C `traceparent` of the current span (what the SDK's
    /// propagator writes), for the test.
    #[derive(Debug)]
    struct W3c(Vec<String>);
    impl TextMapPropagator for W3c {
        fn inject_context(&self, cx: &opentelemetry::Context, injector: &mut dyn Injector) {
            let span = cx.span();
            let sc = span.span_context();
            if sc.is_valid() {
                let flags = sc.trace_flags().to_u8();
                injector.set(
                    "traceparent",
                    format!("00-{}-{}-{flags:02x}", sc.trace_id(), sc.span_id()),
                );
                injector.set("not-trace-context", "dropped".into());
            }
        }
        fn extract_with_context(
            &self,
            cx: &opentelemetry::Context,
            _: &dyn Extractor,
        ) -> opentelemetry::Context {
            cx.clone()
        }
        fn fields(&self) -> FieldIter<'_> {
            FieldIter::new(&self.0)
        }
    }
    opentelemetry::global::set_text_map_propagator(W3c(vec!["traceparent".into()]));

    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Some(bytes) = end.recv().await {
            let m: Value = serde_json::from_slice(&bytes).unwrap();
            log.lock().unwrap().push(m.clone());
            let Some(id) = m.get("id").cloned() else { continue };
            let result = match m["method"].as_str().unwrap() {
                "initialize" => json!({"protocolVersion": "2025-11-25", "capabilities": {},
                    "serverInfo": {"name": "s", "version": "1"}}),
                _ => json!({"content": [{"type": "text", "text": "ok"}]}),
            };
            end.send(json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string().as_bytes());
        }
    });
    client.initialize().await.unwrap();
    client.call_tool("untraced", ()).await.unwrap();
    let span = SpanContext::new(
        TraceId::from_hex("0af7651916cd43dd8448eb211c80319c").unwrap(),
        SpanId::from_hex("00f067aa0ba902b7").unwrap(),
        TraceFlags::SAMPLED,
        true,
        TraceState::default(),
    );
    let cx = opentelemetry::Context::new().with_remote_span_context(span);
    {
        let _attached = cx.attach();
        client.call_tool("traced", ()).await.unwrap();
    }
    let log = seen.lock().unwrap();
    let call = |name: &str| log.iter().find(|m| m["params"]["name"] == name).unwrap().clone();
    assert!(call("untraced")["params"].get("_meta").is_none());
    let meta = &call("traced")["params"]["_meta"];
    assert_eq!(meta["traceparent"], "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01");
    assert!(meta.get("not-trace-context").is_none());
}
