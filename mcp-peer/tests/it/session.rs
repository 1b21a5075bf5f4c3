//! The session: the handshake and calls, one handshake for concurrent
//! first requests, server requests to the handlers, notifications to
//! every stream, a lost connection, raw requests, an unreadable id.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mcp_peer::memory::{self, MemoryError};
use mcp_peer::{CallError, Client, RequestOptions, ServerEvent, ServerNotification};
use mcp_proto::client::{ClientError, ListKind, StaticRoots};
use mcp_proto::types::{ClientCapabilities, Root, RootsCapability};
use serde_json::{Value, json};

use crate::common::{Pair, Wrapped, options, pair, text};

#[tokio::test(start_paused = true)]
async fn handshake_tools_and_calls() {
    let Pair { client, .. } = pair(options());
    assert!(client.initialize_result().is_none());
    client.ping().await.unwrap();
    let info = client.server_info().unwrap();
    assert_eq!(info.name, "mcp-testkit");
    assert!(client.server_capabilities().unwrap().tools.is_some());
    assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    // Cached: the same list, not asked again.
    assert!(Arc::ptr_eq(&tools, &client.list_tools().await.unwrap()));
    let r = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(text(&r), "hi");
    // Arguments of any serialisable type; none at all is `()` or `None`.
    #[derive(serde::Serialize)]
    struct Add {
        a: i64,
        b: i64,
    }
    let r = client.call_tool("add", Add { a: 2, b: 40 }).await.unwrap();
    assert_eq!(text(&r), "42");
    let r = client.call_tool("cancelled_log", ()).await.unwrap();
    assert_eq!(text(&r), "[]");
    let r = client.call_tool("cancelled_log", None::<Value>).await.unwrap();
    assert_eq!(text(&r), "[]");
    // Arguments that are not an object are refused before anything is sent.
    let err = client.call_tool("echo", json!([1, 2])).await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::InvalidParams { .. })), "{err:?}");
    // A typed result from structuredContent.
    #[derive(serde::Deserialize)]
    struct Sum {
        sum: f64,
    }
    let sum: Sum = client.call_tool_as("add", json!({"a": 1, "b": 2})).await.unwrap();
    assert_eq!(sum.sum, 3.0);
    // Or from the single text block's JSON, when there is no structuredContent.
    let echoed: Vec<u32> = client.call_tool_as("echo", json!({"message": "[1,2]"})).await.unwrap();
    assert_eq!(echoed, [1, 2]);
    // A tool error is an error of the typed call, carrying the tool's text.
    let err = client.call_tool_as::<Value>("fail", json!({"message": "boom"})).await.unwrap_err();
    assert!(err.to_string().contains("boom"), "{err}");
    client.close().await.unwrap();
    assert!(client.is_closed());
    let err = client.ping().await.unwrap_err();
    assert!(matches!(err, MemoryError::Protocol(ClientError::Closed { .. })), "{err:?}");
}

#[tokio::test(start_paused = true)]
async fn concurrent_first_requests_share_one_handshake() {
    let Pair { client, received, .. } = pair(options());
    let calls: Vec<_> = (0..8).map(|_| client.ping()).collect();
    for r in futures_util::future::join_all(calls).await {
        r.unwrap();
    }
    // initialize, notifications/initialized, 8 pings.
    assert_eq!(received.load(Ordering::SeqCst), 10);
}

#[tokio::test(start_paused = true)]
async fn server_requests_go_to_the_handlers_and_undeclared_ones_get_32601() {
    let mut o = options();
    let root = Root::new("file:///work/project").with_name("project");
    o.handlers.roots = Some(Arc::new(StaticRoots(vec![root])));
    // roots.listChanged declared explicitly; tasks too.
    o.capabilities = ClientCapabilities {
        roots: Some(RootsCapability { list_changed: Some(true), ..Default::default() }),
        tasks: Some(Default::default()),
        ..Default::default()
    };
    let declared = o.declared_capabilities();
    assert_eq!(declared.roots.as_ref().and_then(|r| r.list_changed), Some(true));
    assert!(declared.tasks.is_some());
    assert!(declared.sampling.is_none());
    let Pair { client, .. } = pair(o);
    let roots = client.call_tool("ask", json!({"what": "roots"})).await.unwrap();
    assert!(text(&roots).contains("file:///work/project"), "{}", text(&roots));
    let sample = client.call_tool("ask", json!({"what": "sample"})).await.unwrap();
    assert!(text(&sample).contains("-32601"), "{}", text(&sample));
    client.notify_roots_changed().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn notifications_reach_every_stream_and_the_callback() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut o = options();
    o.on_event = Some(Arc::new(move |e: &ServerEvent| {
        let _ = tx.send(e.clone());
    }));
    let Pair { client, .. } = pair(o);
    client.initialize().await.unwrap();
    let mut first = client.notifications();
    let mut second = client.notifications();
    let before = client.list_tools().await.unwrap();
    client.call_tool("change", ()).await.unwrap();
    assert_eq!(first.recv().await, Some(ServerNotification::ToolListChanged));
    assert_eq!(second.recv().await, Some(ServerNotification::ToolListChanged));
    assert_eq!(rx.recv().await, Some(ServerEvent::ListChanged(ListKind::Tools)));
    // The cache was dropped: the new list has the extra tool.
    let after = client.list_tools().await.unwrap();
    assert_eq!(after.len(), before.len() + 1);
    // Log messages arrive too, after logging/setLevel.
    client.set_log_level(mcp_proto::types::LoggingLevel::Debug).await.unwrap();
    client.call_tool("log", json!({"level": "info", "message": "hello"})).await.unwrap();
    match first.recv().await {
        Some(ServerNotification::LogMessage(log)) => assert_eq!(log.data, json!("hello")),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_lost_connection_fails_waiters_and_the_next_request_starts_again() {
    let Pair { client, received, restart } = pair(options());
    client.initialize().await.unwrap();
    let tools = client.list_tools().await.unwrap();
    let waiting = client.spawn_call_tool("hang", (), RequestOptions::default());
    tokio::time::sleep(Duration::from_millis(10)).await;
    restart.now();
    match waiting.await {
        Err(CallError::Failed(MemoryError::Protocol(ClientError::Closed { .. }))) => {}
        other => panic!("{other:?}"),
    }
    // The handshake and the caches are forgotten.
    assert!(client.initialize_result().is_none());
    let before = received.load(Ordering::SeqCst);
    client.ping().await.unwrap();
    // initialize, notifications/initialized, ping: a new session.
    assert_eq!(received.load(Ordering::SeqCst), before + 3);
    assert!(client.initialize_result().is_some());
    let again = client.list_tools().await.unwrap();
    assert!(!Arc::ptr_eq(&tools, &again));
    assert_eq!(tools.len(), again.len());
}

#[tokio::test(start_paused = true)]
async fn raw_requests_and_unknown_methods() {
    let Pair { client, .. } = pair(options());
    let v = client.request("tools/list", None, RequestOptions::default()).await.unwrap();
    assert!(v["tools"].is_array());
    let err = client.request("no/such", None, RequestOptions::default()).await.unwrap_err();
    match err {
        MemoryError::Protocol(ClientError::Rpc { error, .. }) => assert_eq!(error.code, -32601),
        other => panic!("{other:?}"),
    }
    // A page at a time.
    let page = client.list_tools_page(None).await.unwrap();
    assert!(!page.tools.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_server_request_whose_id_cannot_be_read_is_answered_32600() {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    let sender = end.sender();
    let server = tokio::spawn(async move {
        let mut answers = Vec::new();
        while let Some(bytes) = end.recv().await {
            let msg: Value = serde_json::from_slice(&bytes).unwrap();
            if msg["method"] == "initialize" {
                let reply = json!({"jsonrpc": "2.0", "id": msg["id"], "result": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "serverInfo": {"name": "odd", "version": "1"}}});
                sender.send(reply.to_string().as_bytes());
            } else if msg["method"] == "notifications/initialized" {
                // A request with an object as its id.
                let bad = json!({"jsonrpc": "2.0", "id": {"n": 1}, "method": "roots/list"});
                assert!(!sender.send(bad.to_string().as_bytes()));
            } else if msg.get("error").is_some() {
                answers.push(msg);
                return answers;
            }
        }
        answers
    });
    client.initialize().await.unwrap();
    let answers = tokio::time::timeout(Duration::from_secs(5), server).await.unwrap().unwrap();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], Value::Null);
    assert_eq!(answers[0]["error"]["code"], -32600);
}

/// The answer to `initialize` no longer spawns a flush: the handshake
/// sends `notifications/initialized` itself. When the opening is dropped
/// between its answer and that send, the notification still goes out (in
/// a task of its own), before anything else.
#[tokio::test]
async fn initialized_goes_out_when_the_opening_is_dropped_after_its_answer() {
    let (transport, mut end) = memory::pair();
    let client = Client::new(transport, options());
    let mut opening = Box::pin(client.initialize());
    let first = tokio::select! {
        _ = &mut opening => panic!("the handshake finished unanswered"),
        sent = end.recv() => sent.unwrap(),
    };
    let request: Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(request["method"], "initialize");
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}}});
    assert!(end.send(answer.to_string().as_bytes()));
    // Answered (the session is open), and given up before it ran again.
    drop(opening);
    assert!(client.initialize_result().is_some());
    let next = tokio::time::timeout(Duration::from_secs(10), end.recv()).await.unwrap().unwrap();
    let next: Value = serde_json::from_slice(&next).unwrap();
    assert_eq!(next["method"], "notifications/initialized", "{next}");
}

#[tokio::test(start_paused = true)]
async fn the_link_tells_whether_an_answer_is_awaited() {
    let (transport, mut end) = memory::pair();
    let wrapped = Wrapped::new(transport);
    let slot = wrapped.link.clone();
    let client = Client::new(wrapped, options());
    let link = || slot.lock().unwrap().clone().expect("attached");
    assert!(!link().awaits_answers(), "nothing asked yet");
    let sender = end.sender();
    let server = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(bytes) = end.recv().await {
            let message: Value = serde_json::from_slice(&bytes).unwrap();
            let Some(id) = message.get("id").cloned() else { continue };
            let result = match message["method"].as_str() {
                Some("initialize") => json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "serverInfo": {"name": "watched", "version": "1"}
                }),
                _ => json!({}),
            };
            seen.push(message["method"].as_str().unwrap_or_default().to_owned());
            // The client waits for this answer while it is not yet sent.
            tokio::time::sleep(Duration::from_millis(10)).await;
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
            sender.send(answer.to_string().as_bytes());
            if seen.len() == 2 {
                return seen;
            }
        }
        seen
    });
    let ping = tokio::spawn({
        let client = client.clone();
        async move { client.ping().await }
    });
    let mut waited = false;
    while !ping.is_finished() {
        waited |= link().awaits_answers();
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    ping.await.unwrap().unwrap();
    assert!(waited, "an answer was awaited while the requests ran");
    assert!(!link().awaits_answers(), "none once both were answered");
    assert_eq!(server.await.unwrap(), ["initialize", "ping"]);
}
