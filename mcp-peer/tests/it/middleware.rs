//! Request middleware: `_meta` added, requests answered or refused before
//! they are sent, a panic that fails its request only.

use std::sync::Arc;

use mcp_peer::memory::MemoryError;
use mcp_peer::{ClientOptions, RequestOptions};
use mcp_proto::client::ClientError;
use mcp_testkit::ServeEra;
use serde_json::{Value, json};

use crate::common::{Pair, modern_config, pair_filtered, text};

/// A middleware that records what it saw, adds `_meta`, and answers,
/// refuses or panics on the tools named so.
#[derive(Debug)]
struct Recorder {
    name: &'static str,
    seen: Arc<std::sync::Mutex<Vec<String>>>,
}

impl mcp_peer::middleware::Middleware for Recorder {
    fn before(
        &self,
        request: &mut mcp_peer::middleware::Outgoing<'_>,
    ) -> mcp_peer::middleware::Before {
        use mcp_peer::middleware::Before;
        self.seen.lock().unwrap().push(format!("{} before {}", self.name, request.method()));
        request.meta().insert(format!("x-{}", self.name), json!(true));
        let tool = request.meta().get("x-tool").and_then(Value::as_str).map(str::to_owned);
        match tool.as_deref() {
            Some("answer") if self.name == "outer" => {
                let canned = r#"{"content":[{"type":"text","text":"from the middleware"}]}"#;
                Before::Answer(serde_json::value::RawValue::from_string(canned.into()).unwrap())
            }
            Some("refuse") if self.name == "outer" => Before::Refuse("not today".into()),
            Some("panic") if self.name == "inner" => panic!("a middleware bug"),
            _ => Before::Send,
        }
    }

    fn after(&self, answer: &mcp_peer::middleware::After<'_>) {
        let how = if answer.error.is_some() { "failed" } else { "answered" };
        self.seen.lock().unwrap().push(format!("{} after {} {how}", self.name, answer.method));
    }
}

#[tokio::test(start_paused = true)]
async fn middleware_adds_meta_answers_refuses_and_survives_a_panic() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let metas = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = metas.clone();
    let record = move |v: &Value| {
        if v["method"] == "tools/call" {
            sink.lock().unwrap().push(v["params"]["_meta"].clone());
        }
        true
    };
    let options = ClientOptions::new("testkit")
        .with_middleware(Arc::new(Recorder { name: "outer", seen: seen.clone() }))
        .with_middleware(Arc::new(Recorder { name: "inner", seen: seen.clone() }));
    let Pair { client, .. } = pair_filtered(options, modern_config(ServeEra::Modern), record);
    let with = |tool: &str| RequestOptions {
        meta: Some([("x-tool".to_owned(), json!(tool))].into_iter().collect()),
        ..Default::default()
    };
    // Sent, with both middlewares' `_meta`; told in reverse order.
    let r = client.call_tool_with("echo", json!({"message": "hi"}), with("echo")).await.unwrap();
    assert_eq!(text(&r), "hi");
    let sent = metas.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        (sent["x-outer"].clone(), sent["x-inner"].clone()),
        (json!(true), json!(true)),
        "{sent}"
    );
    let order: Vec<String> = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(
        order,
        [
            "outer before tools/call",
            "inner before tools/call",
            "inner after tools/call answered",
            "outer after tools/call answered"
        ]
    );
    let calls = metas.lock().unwrap().len();
    // Answered by the middleware: nothing sent, the next one not asked.
    let r = client.call_tool_with("echo", json!({"message": "x"}), with("answer")).await.unwrap();
    assert_eq!(text(&r), "from the middleware");
    // Refused: a typed error, nothing sent.
    let err =
        client.call_tool_with("echo", json!({"message": "x"}), with("refuse")).await.unwrap_err();
    assert!(
        matches!(&err, MemoryError::Protocol(ClientError::Refused { reason, .. }) if reason == "not today"),
        "{err:?}"
    );
    // A panic fails its request only.
    let err =
        client.call_tool_with("echo", json!({"message": "x"}), with("panic")).await.unwrap_err();
    assert!(matches!(&err, MemoryError::Protocol(ClientError::Refused { .. })), "{err:?}");
    assert_eq!(metas.lock().unwrap().len(), calls, "nothing reached the server");
    let r = client.call_tool_with("echo", json!({"message": "after"}), with("echo")).await.unwrap();
    assert_eq!(text(&r), "after");
    let order = seen.lock().unwrap().clone();
    assert!(order.contains(&"outer after tools/call failed".to_owned()), "{order:?}");
}
