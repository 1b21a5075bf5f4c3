//! `mcpc serve` forwarding one server: a host in either era, through the
//! bridge, to the testkit over stdio and to the embedded demo server (calls,
//! progress, cancellation, resources, prompts, Apps metadata, caching hints).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_peer::EraChoice;
use mcp_proto::client::RequestOptions;
use mcp_test_support::text_blocks;
use serde_json::{Value, json};

use crate::run::Sandbox;
use crate::serve_support::{
    args, assert_arguments_arrive_as_written, call, counting_progress, host, server_spec,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handshake_era_host_lists_calls_and_sees_progress() {
    let s = Sandbox::new("serve-legacy");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    let init = c.initialize().await.unwrap();
    // The upstream's identity and what it declared, of what is forwarded.
    assert_eq!(init.server_info.name, "mcp-testkit");
    let caps = serde_json::to_value(&init.capabilities).unwrap();
    assert!(caps["tools"].is_object() && caps["resources"]["subscribe"] == true, "{caps}");
    assert!(caps.get("tasks").is_none(), "{caps}");
    let tools = c.list_tools().await.unwrap();
    // Names unchanged; annotations and `_meta` as the server gave them.
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": "hi"})).await), "hi");
    // Arguments with escapes and non-ASCII text reach the tool as sent.
    let odd = "tab\t \"quoted\" back\\slash \u{1} é ✓ 😀 \u{2028}";
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": odd})).await), odd);

    let seen = Arc::new(Mutex::new(Vec::new()));
    let options = RequestOptions {
        on_progress: Some({
            let seen = seen.clone();
            Arc::new(move |p| seen.lock().unwrap().push((p.progress, p.message.clone())))
        }),
        ..Default::default()
    };
    let r = c.call_tool_with("slow", args(json!({"ms": 300, "steps": 3})), options).await.unwrap();
    assert_eq!(text_blocks(&r), "done");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[2], (3.0, Some("step 3 of 3".to_owned())));

    // A JSON-RPC error of the server comes back as that error.
    let err = c.call_tool_with("nosuch", (), RequestOptions::default()).await.unwrap_err();
    assert_eq!(err.rpc_error().map(|e| e.code), Some(-32602), "{err}");

    // Resources and prompts pass through.
    let read = c.read_resource("test://static/text/1").await.unwrap();
    assert!(serde_json::to_string(&read).unwrap().contains("test://static/text/1"));
    assert!(!c.list_prompts().await.unwrap().is_empty());
    c.close().await.unwrap();
}

/// A host's `tools/call` arguments reach the server byte for byte through
/// the bridge, in either era: integers past 64 bits, decimals past a
/// double's precision, a number no double holds, trailing zeros, escapes
/// and non-ASCII text, as written (the testkit's `annotated` tool answers
/// its arguments' text as it came).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_reach_the_server_as_the_host_wrote_them() {
    let spec = server_spec("");
    for era in [EraChoice::Legacy, EraChoice::Modern] {
        let s = Sandbox::new("serve-arguments");
        let c = host(&s, &["--server", &spec], era, None).await;
        assert_arguments_arrive_as_written(&c, era).await;
        c.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_era_host_reaches_the_embedded_demo() {
    let s = Sandbox::new("serve-modern");
    let c = host(&s, &[], EraChoice::Modern, None).await;
    let tools = c.list_tools().await.unwrap();
    assert_eq!(c.protocol_version().map(|v| v.is_modern()), Some(true));
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    assert_eq!(text_blocks(&call(&c, "echo", json!({"message": "now"})).await), "now");
    let (seen, options) = counting_progress();
    let r = c.call_tool_with("slow", args(json!({"ms": 200, "steps": 2})), options).await.unwrap();
    assert_eq!(text_blocks(&r), "done");
    assert_eq!(*seen.lock().unwrap(), 2);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_cancelled_upstream() {
    let s = Sandbox::new("serve-cancel");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    c.initialize().await.unwrap();
    let before = text_blocks(&call(&c, "cancelled_log", json!({})).await);
    assert_eq!(before, "[]");
    // The host gives up: its client sends notifications/cancelled.
    let hang = c
        .call_tool_with("hang", (), RequestOptions::with_timeout(Duration::from_millis(300)))
        .await;
    assert!(hang.is_err(), "{hang:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = text_blocks(&call(&c, "cancelled_log", json!({})).await);
        let ids: Vec<Value> = serde_json::from_str(&log).unwrap();
        if ids.len() == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the server saw no cancellation: {log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_metadata_icons_annotations_and_meta_pass_untouched() {
    let s = Sandbox::new("serve-apps");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/apps_server.py");
    let spec = format!("python3 {}", script.display());
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    let tools = c.list_tools().await.unwrap();
    let show = serde_json::to_value(tools.iter().find(|t| t.name == "show").unwrap()).unwrap();
    assert_eq!(
        show["_meta"],
        json!({"ui": {"resourceUri": "ui://apps/view", "visibility": ["model", "app"]}, "vendor/x": 1})
    );
    assert_eq!(show["icons"][0]["src"], "https://example.com/icon.png");
    assert_eq!(show["annotations"], json!({"readOnlyHint": true, "title": "Show it"}));
    let shown = c.call_tool_with("show", (), RequestOptions::default()).await.unwrap();
    let shown = serde_json::to_value(shown).unwrap();
    assert_eq!(shown["_meta"]["ui"]["resourceUri"], "ui://apps/view");
    let view = serde_json::to_value(c.read_resource("ui://apps/view").await.unwrap()).unwrap();
    assert_eq!(view["contents"][0]["uri"], "ui://apps/view");
    assert_eq!(view["contents"][0]["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(
        view["contents"][0]["_meta"]["ui"]["csp"]["connectDomains"][0],
        "https://api.example.com"
    );
    // The host's `_meta` reaches the server (its progress token mapped to
    // the bridge's own).
    let mut meta = serde_json::Map::new();
    meta.insert(
        "traceparent".into(),
        json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
    );
    let options = RequestOptions {
        meta: Some(meta),
        on_progress: Some(Arc::new(|_| {})),
        ..Default::default()
    };
    let got = c.call_tool_with("meta", (), options).await.unwrap();
    let got: Value = serde_json::from_str(&text_blocks(&got)).unwrap();
    assert_eq!(got["traceparent"], "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    assert!(got.get("progressToken").is_some(), "{got}");
    c.close().await.unwrap();
}

/// A stateless-era host's lists and reads carry the caching hints its era
/// requires (the official SDK clients reject a result without them), also
/// from a handshake-era upstream, which gives none: immediately stale and
/// private. A stateless-era upstream's own hints pass as they are, but a
/// tool list is the bridge's own (policy and pins may change it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_era_host_gets_caching_hints_whatever_the_upstream_era() {
    let s = Sandbox::new("serve-cache-hints");
    let hints = |r: &Value| (r["ttlMs"].clone(), r["cacheScope"].clone());
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Modern, None).await;
    let read = json!({"uri": "test://static/text/1"});
    for (method, params) in [
        ("tools/list", None),
        ("resources/list", None),
        ("resources/templates/list", None),
        ("prompts/list", None),
        ("resources/read", Some(read.clone())),
    ] {
        let r = c.request(method, params, RequestOptions::default()).await.unwrap();
        assert_eq!(hints(&r), (json!(0), json!("private")), "{method}: {r}");
    }
    // Not on what is not cacheable, nor for a handshake-era host.
    let simple = Some(json!({"name": "simple"}));
    let r = c.request("prompts/get", simple, RequestOptions::default()).await.unwrap();
    assert_eq!(hints(&r), (Value::Null, Value::Null), "{r}");
    c.close().await.unwrap();
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    let r = c.request("resources/list", None, RequestOptions::default()).await.unwrap();
    assert_eq!(hints(&r), (Value::Null, Value::Null), "{r}");
    c.close().await.unwrap();

    let modern = server_spec("--era modern --ttl-ms=5000");
    let c = host(&s, &["--server", &modern], EraChoice::Modern, None).await;
    let r = c.request("resources/list", None, RequestOptions::default()).await.unwrap();
    assert_eq!(hints(&r), (json!(5000), json!("public")), "{r}");
    let r = c.request("resources/read", Some(read), RequestOptions::default()).await.unwrap();
    assert_eq!(hints(&r), (json!(5000), json!("private")), "{r}");
    let r = c.request("tools/list", None, RequestOptions::default()).await.unwrap();
    assert_eq!(hints(&r), (json!(0), json!("private")), "{r}");
    c.close().await.unwrap();
}
