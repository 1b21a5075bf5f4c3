//! `mcpc serve` and what a server asks the host (elicitation, sampling):
//! sent to a host that declared it, in input rounds of a stateless-era
//! host's request, refused for a host that did not.

use std::sync::Arc;

use mcp_peer::EraChoice;
use mcp_proto::client::{CallerRound, RequestOptions};
use mcp_test_support::text_blocks;
use serde_json::{Map, Value, json};

use crate::run::Sandbox;
use crate::serve_support::{Ada, Hello, args, call, host, host_options, host_with, server_spec};

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
    // (a handshake-era server's request, in a round of the bridge's), twice
    // (a stateless-era server's own two rounds, passed on as they came).
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

/// A stateless-era server's input rounds reach a stateless-era host as the
/// server sent them (its keys, its `requestState`), and what the host sends
/// back goes to the server as it came: a retry's answers and state, and
/// answers given up front with no round. A round needing a capability the
/// host did not declare is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_servers_rounds_pass_through_to_a_stateless_host() {
    let s = Sandbox::new("serve-rounds-pass");
    let modern = server_spec("--era modern");
    let c = host(&s, &["--server", &modern], EraChoice::Modern, Some(Arc::new(Ada))).await;
    // The host's client takes the rounds itself, to see them.
    let own =
        |round: CallerRound| RequestOptions { caller_round: Some(round), ..Default::default() };
    let params = json!({"name": "ask", "arguments": {"what": "elicit"}});
    let asked = c.request("tools/call", Some(params.clone()), own(CallerRound::default()));
    let asked = asked.await.unwrap();
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    assert_eq!(asked["inputRequests"]["ask"]["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["requestState"], "ask:elicit", "{asked}");
    let answer = json!({"action": "accept", "content": {"name": "Bo"}});
    let answers = |extra: bool| {
        let mut m = Map::from_iter([("ask".to_owned(), answer.clone())]);
        if extra {
            m.insert("unasked".into(), json!({"action": "decline"}));
        }
        Some(m)
    };
    let retry = CallerRound { input_responses: answers(false), request_state: asked_state(&asked) };
    let done = c.request("tools/call", Some(params.clone()), own(retry)).await.unwrap();
    let text = done["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("Bo") && text.contains("accept"), "{done}");
    // Answers given up front, with no round: the server gets them as they
    // are (this tool takes answers only with its state, so it asks again).
    let up_front = CallerRound { input_responses: answers(true), request_state: None };
    let again = c.request("tools/call", Some(params.clone()), own(up_front)).await.unwrap();
    assert_eq!(again["resultType"], "input_required", "{again}");
    let log = text_blocks(&call(&c, "received_log", json!({})).await);
    let log: Value = serde_json::from_str(&log).unwrap();
    let sent = log
        .as_array()
        .and_then(|l| l.iter().rev().find(|r| r["method"] == "tools/call" && r["name"] == "ask"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(sent["inputResponses"]["unasked"]["action"], "decline", "{sent}");
    assert!(sent.get("requestState").is_none(), "{sent}");
    // A state the server never issued goes to it too, which refuses it.
    let forged = CallerRound { input_responses: answers(false), request_state: Some("x".into()) };
    let refused = c.request("tools/call", Some(params.clone()), own(forged)).await.unwrap_err();
    assert!(refused.to_string().contains("was not issued for this call"), "{refused}");
    c.close().await.unwrap();

    // A host that cannot answer the round is not handed it.
    let c = host(&s, &["--server", &modern], EraChoice::Modern, None).await;
    let refused =
        c.call_tool_with("ask", args(json!({"what": "elicit"})), RequestOptions::default());
    let refused = refused.await.unwrap_err().to_string();
    assert!(refused.contains("did not declare the elicitation capability"), "{refused}");
    c.close().await.unwrap();
}

fn asked_state(asked: &Value) -> Option<String> {
    asked["requestState"].as_str().map(str::to_owned)
}
