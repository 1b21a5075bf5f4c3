//! Lost streams: a reply stream resumed with `Last-Event-ID` and the reply
//! delivered once, resumption bounded by `max_reconnects` and the backoff
//! (no reconnection storm), and a stateless-era answer stream sent again
//! only when the request is safe to repeat.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use http::{Method, Request};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use mcp_http::Error;
use mcp_proto::client::RequestOptions;
use mcp_test_support::bounded_by;
use mcp_testkit::{HttpConfig, ReplyMode};
use serde_json::{Value, json};

use crate::client_support::{
    TEST_TIMEOUT, args, auto, counting_server, echo, header, options, reply, serve_fn, server,
};

#[tokio::test]
async fn a_stream_closed_after_priming_is_resumed_with_get() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig {
            reply: ReplyMode::Sse,
            close_after_priming: true,
            retry_ms: Some(20),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        assert_eq!(echo(&client, "again").await.unwrap(), "again");
        let gets: Vec<_> =
            server.requests().into_iter().filter(|r| r.method == Method::GET).collect();
        // The reply stream was resumed (the standalone stream's GET, if it
        // opened yet, carries no Last-Event-ID).
        assert!(gets.iter().any(|g| g.headers.get("last-event-id").is_some()), "{gets:?}");
        for get in &gets {
            assert!(get.headers.get("mcp-session-id").is_some());
            assert_eq!(header(&get.headers, "accept"), Some("text/event-stream"));
        }
        // The request itself was POSTed once.
        assert_eq!(server.rpc_methods().iter().filter(|m| *m == "tools/call").count(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_cut_stream_is_resumed_and_the_reply_delivered_once() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig {
            reply: ReplyMode::Sse,
            priming: true,
            retry_ms: Some(10),
            close_after_events: Some(1),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        for i in 0..3 {
            assert_eq!(echo(&client, &format!("cut{i}")).await.unwrap(), format!("cut{i}"));
        }
        assert!(server.request_count(&Method::GET) >= 3);
    })
    .await;
}

#[tokio::test]
async fn a_reply_stream_that_cannot_be_resumed_is_reported() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, _) = counting_server().await;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), options()).unwrap();
        let err = client.request("lose_reply", None, RequestOptions::default()).await.unwrap_err();
        let Error::StreamLost { ref method, attempts, .. } = err else { panic!("{err:?}") };
        assert_eq!((method.as_str(), attempts), ("lose_reply", 0));
        assert!(err.to_string().contains("no event id"), "{err}");
        // The client goes on.
        client.ping().await.unwrap();
    })
    .await;
}

/// A handshake-era server whose standalone stream, on every GET, sends a
/// priming event with a fresh id and `retry: 0`, then ends; counts GETs.
async fn storm_server() -> (SocketAddr, Arc<AtomicUsize>) {
    let gets = Arc::new(AtomicUsize::new(0));
    let count = gets.clone();
    let addr = serve_fn(move |req: Request<Incoming>| {
        let count = count.clone();
        async move {
            let mut r = if req.method() == Method::GET {
                let n = count.fetch_add(1, Ordering::SeqCst);
                reply(200, "text/event-stream", format!("id: e{n}\nretry: 0\ndata:\n\n"))
            } else if req.method() == Method::DELETE {
                reply(200, "application/json", "")
            } else {
                let body = req.into_body().collect().await.unwrap().to_bytes();
                let m: Value = serde_json::from_slice(&body).unwrap();
                match m.get("id") {
                    None => reply(202, "application/json", ""),
                    Some(id) => {
                        let result = if m["method"] == "initialize" {
                            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                                   "serverInfo": {"name": "storm", "version": "1"}})
                        } else {
                            json!({})
                        };
                        let r = json!({"jsonrpc": "2.0", "id": id, "result": result});
                        reply(200, "application/json", r.to_string())
                    }
                }
            };
            r.headers_mut().insert("mcp-session-id", "s-1".parse().unwrap());
            r
        }
    })
    .await;
    (addr, gets)
}

#[tokio::test]
async fn a_stream_that_brings_nothing_but_fresh_ids_and_retry_0_is_no_storm() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, gets) = storm_server().await;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), options()).unwrap();
        client.initialize().await.unwrap();
        tokio::time::sleep(Duration::from_secs(4)).await;
        // The first GET and at most `max_reconnects` (5) more, each after a
        // delay of at least 100 ms that grows from the third on; then the
        // client stops asking (it used to make thousands of GETs).
        let made = gets.load(Ordering::SeqCst);
        assert!((2..=6).contains(&made), "{made} GETs");
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(gets.load(Ordering::SeqCst), made, "the client stopped reconnecting");
        client.ping().await.unwrap();
        client.close().await.unwrap();
    })
    .await;
}

/// A reply stream that ends after each event carrying only a new id and
/// `retry: 0` (no data) is resumed `max_reconnects` times, at least 100 ms
/// apart, then the request fails with the typed error, long before its
/// timeout (it used to be resumed about ten times a second until then:
/// such an event counted as progress).
#[tokio::test]
async fn a_reply_stream_of_id_only_events_is_lost_after_max_reconnects() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig { id_only_events: true, ..HttpConfig::default() }).await;
        let mut o = options();
        o.max_reconnects = 3;
        o.request_timeout = Duration::from_secs(25);
        // Only the reply stream's GETs.
        o.event_stream = false;
        let client = mcp_http::connect(&server.url(), o).unwrap();
        client.initialize().await.unwrap();
        let start = tokio::time::Instant::now();
        let outcome = tokio::time::timeout(Duration::from_secs(10), client.ping()).await;
        let err = outcome.expect("the request failed well before its timeout").unwrap_err();
        let took = start.elapsed();
        let Error::StreamLost { attempts, .. } = &err else { panic!("{err:?}") };
        assert_eq!(*attempts, 3);
        let text = err.to_string();
        assert!(
            text.contains("ping lost its reply stream after 3 reconnection attempts"),
            "{text}"
        );
        // Three resumptions (GET with Last-Event-ID), after the backoff's
        // 100 ms floor each; nothing more.
        let gets: Vec<_> =
            server.requests().into_iter().filter(|r| r.method == Method::GET).collect();
        assert_eq!(gets.len(), 3, "{gets:?}");
        assert!(gets.iter().all(|g| g.headers.contains_key("last-event-id")), "{gets:?}");
        assert!(took >= Duration::from_millis(300), "{took:?}");
        assert_eq!(server.rpc_methods().iter().filter(|m| *m == "ping").count(), 1);
        client.close().await.unwrap();
    })
    .await;
}

/// The standalone GET stream under the same fault is reopened
/// `max_reconnects` times and given up, and the transport says so.
#[tokio::test]
async fn a_standalone_stream_of_id_only_events_is_given_up_and_reported_ended() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig { id_only_events: true, ..HttpConfig::default() }).await;
        let mut o = options();
        o.max_reconnects = 2;
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let mut state = client.transport().watch_event_stream();
        assert_eq!(*state.borrow(), mcp_http::EventStreamState::NotOpen);
        client.initialize().await.unwrap();
        let ended = tokio::time::timeout(
            Duration::from_secs(10),
            state.wait_for(|s| matches!(s, mcp_http::EventStreamState::Ended { .. })),
        )
        .await
        .expect("the stream was given up in time")
        .expect("the transport is alive")
        .clone();
        let mcp_http::EventStreamState::Ended { reason } = ended else { unreachable!() };
        assert!(reason.contains("2 times in a row without a message"), "{reason}");
        assert!(reason.contains("max_reconnects"), "{reason}");
        // The first GET and two more; then nothing.
        assert_eq!(server.request_count(&Method::GET), 3);
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(server.request_count(&Method::GET), 3);
        client.close().await.unwrap();
    })
    .await;
}

/// A stateless-era server whose answer streams all break before the
/// answer; counts the POSTs of each method.
async fn breaking_stream_server() -> (SocketAddr, Arc<std::sync::Mutex<Vec<String>>>) {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    let addr = serve_fn(move |req: Request<Incoming>| {
        let log = log.clone();
        async move {
            let body = req.into_body().collect().await.unwrap().to_bytes();
            let m: Value = serde_json::from_slice(&body).unwrap();
            let method = m["method"].as_str().unwrap().to_owned();
            log.lock().unwrap().push(method.clone());
            if method == "server/discover" {
                let r = json!({"jsonrpc": "2.0", "id": m["id"], "result": {
                    "resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}}}});
                return reply(200, "application/json", r.to_string());
            }
            // A progress event, then the end: no answer.
            let p = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": 0, "progress": 1}});
            reply(200, "text/event-stream", format!("event: message\ndata: {p}\n\n"))
        }
    })
    .await;
    (addr, seen)
}

#[tokio::test]
async fn a_broken_answer_stream_is_sent_again_with_a_new_id_only_when_safe() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, seen) = breaking_stream_server().await;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), auto()).unwrap();
        let err = client.list_tools().await.unwrap_err();
        assert!(matches!(err, Error::StreamLost { .. }), "{err:?}");
        let count = |m: &str| seen.lock().unwrap().iter().filter(|s| *s == m).count();
        // A read: once more (new id), then the error; no GET resumption.
        assert_eq!(count("tools/list"), 2);
        let err = client.call_tool_with("anything", args(json!({})), Default::default()).await;
        assert!(matches!(err, Err(Error::StreamLost { .. })), "{err:?}");
        // A call may have acted: not sent again.
        assert_eq!(count("tools/call"), 1);
        client.close().await.unwrap();
    })
    .await;
}
