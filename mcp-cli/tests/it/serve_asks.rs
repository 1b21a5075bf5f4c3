//! `mcpc serve` and what a server asks the host (elicitation, sampling):
//! sent to a host that declared it, in input rounds of a stateless-era
//! host's request, refused for a host that did not.

use std::sync::Arc;

use mcp_peer::EraChoice;
use mcp_proto::client::RequestOptions;
use mcp_test_support::text_blocks;
use serde_json::json;

use crate::run::Sandbox;
use crate::serve_support::{Ada, Hello, call, host, host_options, host_with, server_spec};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elicitation_goes_to_a_host_that_declared_it_and_is_refused_otherwise() {
    let s = Sandbox::new("serve-elicit");
    let spec = server_spec("");
    let c = host(&s, &["--server", &spec], EraChoice::Legacy, Some(Arc::new(Ada))).await;
    let r = text_blocks(&call(&c, "ask", json!({"what": "elicit"})).await);
    assert!(r.contains("Ada") && r.contains("accept"), "{r}");
    c.close().await.unwrap();

    let c = host(&s, &["--server", &spec], EraChoice::Legacy, None).await;
    let r = text_blocks(&call(&c, "ask", json!({"what": "elicit"})).await);
    assert!(r.contains("did not declare the elicitation capability"), "{r}");
    let r = text_blocks(&call(&c, "ask", json!({"what": "sample"})).await);
    assert!(r.contains("did not declare the sampling capability"), "{r}");
    c.close().await.unwrap();

    // A stateless-era host is asked in input rounds of its call: once
    // (a handshake-era server's request), twice (a stateless-era server's
    // own two rounds, each turned into a request by the bridge's client).
    let c = host(&s, &["--server", &spec], EraChoice::Modern, Some(Arc::new(Ada))).await;
    let r = text_blocks(&call(&c, "ask", json!({"what": "elicit"})).await);
    assert!(r.contains("Ada") && r.contains("accept"), "{r}");
    c.close().await.unwrap();
    let modern = server_spec("--era modern");
    let mut o = host_options(EraChoice::Modern);
    o.handlers.elicitation = Some(Arc::new(Ada));
    o.handlers.sampling = Some(Arc::new(Hello));
    let c = host_with(&s, &["--server", &modern], o).await;
    let r = text_blocks(&call(&c, "ask_twice", json!({})).await);
    assert!(r.starts_with("Ada: Hello"), "{r}");
    c.close().await.unwrap();
    let c = host(&s, &["--server", &spec], EraChoice::Modern, None).await;
    let r = text_blocks(&call(&c, "ask", json!({"what": "elicit"})).await);
    assert!(r.contains("request did not declare the elicitation capability"), "{r}");
    c.close().await.unwrap();
}

/// What a server asks while it reads a resource or gets a prompt reaches
/// the host too: a stateless-era host in an input round of that request
/// (its retry takes the parked request up), a handshake-era host as a
/// request of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_asks_the_host_during_resources_read_and_prompts_get() {
    let s = Sandbox::new("serve-ask-read");
    let modern = server_spec("--era modern");
    for era in [EraChoice::Modern, EraChoice::Legacy] {
        let c = host(&s, &["--server", &modern], era, Some(Arc::new(Ada))).await;
        let read = json!({"uri": "test://ask/elicit"});
        let r = c.request("resources/read", Some(read), RequestOptions::default()).await.unwrap();
        let text = r["contents"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains("Ada") && text.contains("accept"), "{era:?}: {r}");
        let get = json!({"name": "ask"});
        let r = c.request("prompts/get", Some(get), RequestOptions::default()).await.unwrap();
        let text = r["messages"][0]["content"]["text"].as_str().unwrap_or_default();
        assert!(text.contains("Ada") && text.contains("accept"), "{era:?}: {r}");
        c.close().await.unwrap();
    }
}
