//! The Streamable HTTP transport against the testkit: the headers of every
//! POST, JSON and SSE replies, server requests answered by POST, progress,
//! the standalone GET stream, many calls in flight, close.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::Method;
use mcp_http::Error;
use mcp_proto::client::{ListKind, RequestOptions, ServerEvent, StaticRoots};
use mcp_proto::types::Root;
use mcp_test_support::{bounded_by, text_blocks};
use mcp_testkit::{HttpConfig, ReplyMode};
use serde_json::json;

use crate::client_support::{TEST_TIMEOUT, args, echo, header, options, server};

#[tokio::test]
async fn json_replies_carry_the_streamable_http_headers() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let init = client.initialize().await.unwrap();
        assert_eq!(init.protocol_version, "2025-11-25");
        assert!(client.transport().has_session());
        let tools = client.list_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "echo"));
        assert_eq!(echo(&client, "hello").await.unwrap(), "hello");
        client.ping().await.unwrap();
        client.close().await.unwrap();
        assert_eq!(server.deletes(), 1);

        let posts: Vec<_> =
            server.requests().into_iter().filter(|r| r.method == Method::POST).collect();
        let methods = server.rpc_methods();
        assert_eq!(methods[..2], ["initialize", "notifications/initialized"]);
        assert_eq!(posts.len(), methods.len());
        for (i, (post, rpc)) in posts.iter().zip(&methods).enumerate() {
            let h = &post.headers;
            assert_eq!(post.target, "/mcp");
            assert_eq!(header(h, "content-type"), Some("application/json"));
            assert_eq!(header(h, "accept"), Some("application/json, text/event-stream"));
            assert_eq!(header(h, "mcp-method"), Some(rpc.as_str()), "{rpc}");
            if i == 0 {
                assert!(h.get("mcp-session-id").is_none());
                assert!(h.get("mcp-protocol-version").is_none());
            } else {
                assert!(h.get("mcp-session-id").is_some(), "{rpc}");
                assert_eq!(header(h, "mcp-protocol-version"), Some("2025-11-25"), "{rpc}");
            }
            let name = header(h, "mcp-name");
            assert_eq!(name, if rpc == "tools/call" { Some("echo") } else { None }, "{rpc}");
        }
        let delete = server.requests().into_iter().find(|r| r.method == Method::DELETE).unwrap();
        assert!(delete.headers.get("mcp-session-id").is_some());
        // Closed means closed.
        assert!(matches!(client.ping().await, Err(Error::Closed { .. })));
    })
    .await;
}

#[tokio::test]
async fn sse_replies_with_priming_events() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { reply: ReplyMode::Sse, priming: true, ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        for i in 0..5 {
            assert_eq!(echo(&client, &format!("m{i}")).await.unwrap(), format!("m{i}"));
        }
        // No reconnection was needed: the one GET is the standalone stream.
        let resumed = server
            .requests()
            .into_iter()
            .filter(|r| r.method == Method::GET && r.headers.get("last-event-id").is_some())
            .count();
        assert_eq!(resumed, 0);
        assert!(server.request_count(&Method::GET) <= 1);
    })
    .await;
}

#[tokio::test]
async fn server_requests_on_the_stream_are_answered_by_post() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { reply: ReplyMode::Sse, priming: true, ..HttpConfig::default() };
        let server = server(config).await;
        let mut o = options();
        let root: Root = serde_json::from_value(json!({"uri": "file:///work/project"})).unwrap();
        o.handlers.roots = Some(Arc::new(StaticRoots(vec![root])));
        let client = mcp_http::connect(&server.url(), o).unwrap();

        let pong = client.call_tool_with("ask", args(json!({"what": "ping"})), Default::default());
        let pong = text_blocks(&pong.await.unwrap());
        assert!(pong.contains("\"result\""), "{pong}");
        let roots =
            client.call_tool_with("ask", args(json!({"what": "roots"})), Default::default());
        let roots = text_blocks(&roots.await.unwrap());
        assert!(roots.contains("file:///work/project"), "{roots}");
        // Not declared: the core answers -32601 itself, and that goes back too.
        let elicit =
            client.call_tool_with("ask", args(json!({"what": "elicit"})), Default::default());
        let elicit = text_blocks(&elicit.await.unwrap());
        assert!(elicit.contains("-32601"), "{elicit}");
        assert_eq!(server.rpc_methods().iter().filter(|m| *m == "(response)").count(), 3);
    })
    .await;
}

#[tokio::test]
async fn close_accepts_405_for_delete() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig { delete: false, ..HttpConfig::default() }).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        client.ping().await.unwrap();
        client.close().await.unwrap();
        client.close().await.unwrap();
        assert_eq!(server.deletes(), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_requests_in_flight() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { reply: ReplyMode::Sse, ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let calls = (0..32).map(|i| {
            let client = client.clone();
            tokio::spawn(async move { (i, echo(&client, &format!("c{i}")).await) })
        });
        for call in calls {
            let (i, r) = call.await.unwrap();
            assert_eq!(r.unwrap(), format!("c{i}"));
        }
    })
    .await;
}

#[tokio::test]
async fn the_get_stream_carries_messages_that_belong_to_no_reply_stream() {
    bounded_by(TEST_TIMEOUT, async {
        // JSON replies: what the server sends during a call goes on the GET stream.
        let server = server(HttpConfig::default()).await;
        let mut o = options();
        let root: Root = serde_json::from_value(json!({"uri": "file:///srv"})).unwrap();
        o.handlers.roots = Some(Arc::new(StaticRoots(vec![root])));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        o.on_event = Some(Arc::new(move |e: &ServerEvent| {
            let _ = tx.send(e.clone());
        }));
        let client = mcp_http::connect(&server.url(), o).unwrap();
        client.initialize().await.unwrap();
        assert!(client.transport().open_event_stream().await.unwrap());
        assert!(client.transport().open_event_stream().await.unwrap());
        let get = server.requests().into_iter().find(|r| r.method == Method::GET).unwrap();
        assert!(get.headers.get("mcp-session-id").is_some());
        assert!(get.headers.get("last-event-id").is_none());

        let roots =
            client.call_tool_with("ask", args(json!({"what": "roots"})), Default::default());
        let roots = text_blocks(&roots.await.unwrap());
        assert!(roots.contains("file:///srv"), "{roots}");

        client.call_tool_with("change", (), Default::default()).await.unwrap();
        let event = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await.unwrap();
        assert_eq!(event, Some(ServerEvent::ListChanged(ListKind::Tools)));
        assert_eq!(server.request_count(&Method::GET), 1);
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn no_get_stream_is_not_an_error_and_not_retried() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig { get_stream: false, ..HttpConfig::default() }).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        client.initialize().await.unwrap();
        assert!(!client.transport().open_event_stream().await.unwrap());
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(server.request_count(&Method::GET), 1);
        assert_eq!(echo(&client, "still").await.unwrap(), "still");
    })
    .await;
}

#[tokio::test]
async fn progress_arrives_on_the_reply_stream() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { reply: ReplyMode::Sse, ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let seen = Arc::new(AtomicUsize::new(0));
        let counter = seen.clone();
        let options = RequestOptions {
            on_progress: Some(Arc::new(move |_| {
                counter.fetch_add(1, Ordering::SeqCst);
            })),
            ..RequestOptions::default()
        };
        let r = client.call_tool_with("slow", args(json!({"ms": 60, "steps": 3})), options);
        assert_eq!(text_blocks(&r.await.unwrap()), "done");
        assert_eq!(seen.load(Ordering::SeqCst), 3);
    })
    .await;
}
