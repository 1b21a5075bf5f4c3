//! Integration tests against real servers on loopback: the project's
//! `mcp-testkit` Streamable HTTP server (with its fault switches), and a
//! tiny hyper server here that counts connections.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_http::{Error, HttpClient, HttpOptions, StaticAuth};
use mcp_proto::client::{ListKind, RequestOptions, ServerEvent, StaticRoots};
use mcp_proto::types::Root;
use mcp_test_support::{bounded_by, text_blocks};
use mcp_testkit::{HttpConfig, HttpServerHandle, ReplyMode, serve_http};
use serde_json::{Value, json};

/// Every test is bounded by this.
const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Options pinned to the handshake era: these tests count and inspect its
/// exchanges (the era tests say what they choose).
fn options() -> HttpOptions {
    let mut o = HttpOptions::new("testkit");
    o.request_timeout = Duration::from_secs(10);
    o.client.era = mcp_peer::EraChoice::Legacy;
    o
}

async fn server(config: HttpConfig) -> HttpServerHandle {
    serve_http(config).await.expect("the test server starts")
}

fn args(v: Value) -> Option<serde_json::Map<String, Value>> {
    v.as_object().cloned()
}

async fn echo(client: &HttpClient, message: &str) -> Result<String, Error> {
    let r = client
        .call_tool_with("echo", args(json!({"message": message})), RequestOptions::default())
        .await?;
    Ok(text_blocks(&r))
}

fn header<'a>(h: &'a http::HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

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
async fn an_expired_session_is_renewed_and_the_request_retried() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { expire_session_after: Some(4), ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        for i in 0..6 {
            assert_eq!(echo(&client, &format!("s{i}")).await.unwrap(), format!("s{i}"));
        }
        let inits = server.rpc_methods().iter().filter(|m| *m == "initialize").count();
        assert!(inits >= 2, "{inits}");
    })
    .await;
}

#[tokio::test]
async fn a_session_that_expires_again_at_once_is_an_error() {
    bounded_by(TEST_TIMEOUT, async {
        // initialize and notifications/initialized use up the session.
        let config = HttpConfig { expire_session_after: Some(2), ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let err = client.list_tools().await.unwrap_err();
        assert!(matches!(err, Error::SessionExpired { .. }), "{err:?}");
        assert_eq!(server.rpc_methods().iter().filter(|m| *m == "initialize").count(), 2);
    })
    .await;
}

#[tokio::test]
async fn unauthorized_reports_the_parsed_challenge() {
    bounded_by(TEST_TIMEOUT, async {
        let challenge = r#"Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="mcp:tools""#;
        let config = HttpConfig {
            require_auth: Some("s3cr3t-token".into()),
            challenge: Some(challenge.into()),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let err = client.initialize().await.unwrap_err();
        let Error::Unauthorized { ref bearer, ref challenges, .. } = err else {
            panic!("{err:?}")
        };
        assert_eq!(challenges.len(), 1);
        assert_eq!(bearer.as_ref().unwrap().scope.as_deref(), Some(&["mcp:tools".to_owned()][..]));
        assert_eq!(
            err.resource_metadata(),
            Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(err.status(), Some(StatusCode::UNAUTHORIZED));

        let mut o = options();
        o.auth = StaticAuth::Bearer("s3cr3t-token".into());
        let client = mcp_http::connect(&server.url(), o).unwrap();
        assert_eq!(echo(&client, "in").await.unwrap(), "in");
        for r in server.requests().iter().rev().take(3) {
            assert_eq!(header(&r.headers, "authorization"), Some("Bearer s3cr3t-token"));
        }
    })
    .await;
}

#[tokio::test]
async fn forbidden_scope_is_its_own_error() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig {
            require_auth: Some("tok-abcd".into()),
            forbid_scope: true,
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let mut o = options();
        o.auth = StaticAuth::Bearer("tok-abcd".into());
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert!(matches!(err, Error::InsufficientScope { .. }), "{err:?}");
        assert!(err.bearer_challenge().unwrap().is_insufficient_scope());
        assert!(!err.to_string().contains("tok-abcd"));
    })
    .await;
}

#[tokio::test]
async fn status_errors_are_redacted_and_carry_an_excerpt() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { status: Some(500), ..HttpConfig::default() };
        let server = server(config).await;
        let mut o = options();
        o.auth = StaticAuth::Query { name: "api_key".into(), value: "qu3ry-s3cret".into() };
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert_eq!(err.status(), Some(StatusCode::INTERNAL_SERVER_ERROR), "{err:?}");
        let text = err.to_string();
        let base = format!("http://{}", server.local_addr());
        assert!(text.contains(&base), "{text}");
        assert!(!text.contains("/mcp") && !text.contains("qu3ry-s3cret"), "{text}");
        assert_eq!(err.endpoint(), Some(base.as_str()));
        let debug = format!("{client:?} {err:?}");
        assert!(!debug.contains("qu3ry-s3cret") && !debug.contains("/mcp"), "{debug}");
        // The query parameter reached the server, appended to the URL.
        let target = &server.requests()[0].target;
        assert_eq!(target, "/mcp?api_key=qu3ry-s3cret");
    })
    .await;
}

#[tokio::test]
async fn custom_headers_go_on_every_request() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let mut o = options();
        o.auth = StaticAuth::Headers(vec![
            ("X-Api-Key".into(), "k-1234".into()),
            ("X-Tenant".into(), "blue".into()),
        ]);
        let client = mcp_http::connect(&server.url(), o).unwrap();
        client.ping().await.unwrap();
        client.close().await.unwrap();
        let requests = server.requests();
        assert!(requests.len() >= 3);
        for r in requests {
            assert_eq!(header(&r.headers, "x-api-key"), Some("k-1234"), "{}", r.method);
            assert_eq!(header(&r.headers, "x-tenant"), Some("blue"));
        }
    })
    .await;
}

#[tokio::test]
async fn bad_configuration_is_refused_up_front() {
    let mut o = options();
    o.auth = StaticAuth::Bearer("abc\r\nInjected: yes".into());
    let err = mcp_http::connect("http://127.0.0.1:9/mcp", o).unwrap_err();
    assert!(matches!(err, Error::InvalidAuth { .. }), "{err:?}");
    assert!(!err.to_string().contains("Injected"));
    let err = mcp_http::connect("http://user:pw@127.0.0.1:9/mcp", options()).unwrap_err();
    assert!(matches!(err, Error::InvalidEndpoint { .. }));
    assert!(!err.to_string().contains("pw"));
    let err = mcp_http::connect("ftp://127.0.0.1/", options()).unwrap_err();
    assert!(matches!(err, Error::InvalidEndpoint { .. }));
}

#[tokio::test]
async fn a_timeout_names_the_method_and_cancels() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let err = client
            .call_tool_with(
                "slow",
                args(json!({"ms": 5000})),
                RequestOptions::with_timeout(Duration::from_millis(200)),
            )
            .await
            .unwrap_err();
        let Error::Timeout { ref method, .. } = err else { panic!("{err:?}") };
        assert_eq!(method, "tools/call");
        assert!(err.to_string().contains(&format!("http://{}", server.local_addr())));
        // notifications/cancelled is POSTed in the background.
        let mut cancelled = false;
        for _ in 0..100 {
            if server.rpc_methods().iter().any(|m| m == "notifications/cancelled") {
                cancelled = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(cancelled);
        // The client still works.
        assert_eq!(echo(&client, "after").await.unwrap(), "after");
    })
    .await;
}

#[tokio::test]
async fn an_oversized_body_is_refused() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { oversized_body: Some(200_000), ..HttpConfig::default() };
        let server = server(config).await;
        let mut o = options();
        o.max_body = 50_000;
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert!(matches!(err, Error::BodyTooLarge { limit: 50_000, .. }), "{err:?}");
    })
    .await;
}

#[tokio::test]
async fn redirects_are_not_followed() {
    bounded_by(TEST_TIMEOUT, async {
        let config =
            HttpConfig { redirect: mcp_testkit::Redirect::SameOrigin, ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert_eq!(err.status(), Some(StatusCode::TEMPORARY_REDIRECT), "{err:?}");
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
async fn falls_back_to_the_2024_11_05_transport() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { legacy: true, ..HttpConfig::default() };
        let server = server(config).await;
        let mut o = options();
        o.auth = StaticAuth::Header { name: "X-Key".into(), value: "legacy-key".into() };
        let client = mcp_http::connect(&server.url(), o).unwrap();
        client.initialize().await.unwrap();
        assert!(client.list_tools().await.unwrap().iter().any(|t| t.name == "add"));
        assert_eq!(echo(&client, "old").await.unwrap(), "old");
        let pong = client.call_tool_with("ask", args(json!({"what": "ping"})), Default::default());
        assert!(text_blocks(&pong.await.unwrap()).contains("\"result\""));
        let requests = server.requests();
        assert_eq!(requests[0].target, "/mcp");
        assert_eq!(requests[1].method, Method::GET);
        let later: Vec<_> = requests[2..].iter().filter(|r| r.method == Method::POST).collect();
        assert!(later.len() >= 4);
        for r in later {
            assert!(r.target.starts_with("/message?sessionId="), "{}", r.target);
            assert_eq!(header(&r.headers, "x-key"), Some("legacy-key"));
        }
        // The SSE stream that carries every reply is the event stream: asking
        // for one opens no second GET (which would start an orphan session).
        assert!(client.transport().is_legacy());
        assert!(client.transport().open_event_stream().await.unwrap());
        assert_eq!(server.request_count(&Method::GET), 1);
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_cross_origin_legacy_endpoint_is_refused() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig {
            legacy: true,
            legacy_endpoint: Some("http://localhost:1/message?token=leak".into()),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let mut o = options();
        o.auth = StaticAuth::Bearer("never-sent-elsewhere".into());
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::InvalidResponse { .. }), "{err:?}");
        assert!(text.contains("another origin") && !text.contains("leak"), "{text}");
    })
    .await;
}

/// A minimal Streamable HTTP server that counts TCP connections.
async fn counting_server() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let service = service_fn(answer);
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    (addr, connections)
}

async fn answer(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let Some(id) = message.get("id").cloned() else {
        let mut r = Response::new(Full::new(Bytes::new()));
        *r.status_mut() = StatusCode::ACCEPTED;
        return Ok(r);
    };
    if message["method"] == "unparsable" {
        let reply =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#;
        let mut r = Response::new(Full::new(Bytes::from_static(reply.as_bytes())));
        r.headers_mut().insert("content-type", "application/json".parse().unwrap());
        return Ok(r);
    }
    if message["method"] == "lose_reply" {
        // A reply stream that ends with no reply and no event id to resume from.
        let mut r = Response::new(Full::new(Bytes::from_static(
            b": nothing here\n\nevent: other\ndata: x\n\n",
        )));
        r.headers_mut().insert("content-type", "text/event-stream".parse().unwrap());
        return Ok(r);
    }
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "serverInfo": {"name": "counting", "version": "1"},
        }),
        _ => json!({}),
    };
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
    let mut r = Response::new(Full::new(Bytes::from(reply.to_string())));
    r.headers_mut().insert("content-type", "application/json; charset=utf-8".parse().unwrap());
    Ok(r)
}

#[tokio::test]
async fn sequential_calls_reuse_one_connection() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, connections) = counting_server().await;
        // Connections are counted: no standalone stream to hold one open.
        let mut o = options();
        o.event_stream = false;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        for _ in 0..50 {
            client.ping().await.unwrap();
        }
        assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::V2025_06_18));
        // No session id was given: none is sent, and close sends no DELETE.
        assert!(!client.transport().has_session());
        client.close().await.unwrap();
        assert_eq!(connections.load(Ordering::SeqCst), 1);
    })
    .await;
}

#[tokio::test]
async fn clients_sharing_a_pool_share_its_connection() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, connections) = counting_server().await;
        let pool = mcp_http::HttpPool::new(&options()).unwrap();
        assert_eq!(pool.connections(), 0);
        let shared = || {
            // Connections are counted: no standalone stream to hold one open.
            let mut o = options().with_pool(pool.clone());
            o.event_stream = false;
            mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap()
        };
        let (a, b) = (shared(), shared());
        for _ in 0..5 {
            a.ping().await.unwrap();
            b.ping().await.unwrap();
        }
        // Two sessions (each initialized), one connection between them.
        assert_eq!(a.protocol_version(), Some(mcp_proto::ProtocolVersion::V2025_06_18));
        assert_eq!(b.protocol_version(), Some(mcp_proto::ProtocolVersion::V2025_06_18));
        assert_eq!(connections.load(Ordering::SeqCst), 1);
        assert_eq!(pool.connections(), 1);
        // A client that closes (and is dropped) leaves the pool to the
        // others, and to clients made from it later.
        a.close().await.unwrap();
        drop(a);
        b.ping().await.unwrap();
        let c = shared();
        c.ping().await.unwrap();
        b.close().await.unwrap();
        drop(b);
        c.ping().await.unwrap();
        c.close().await.unwrap();
        assert_eq!(connections.load(Ordering::SeqCst), 1);
        // A client without the pool opens its own connection.
        let mut o = options();
        o.event_stream = false;
        let own = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        own.ping().await.unwrap();
        assert_eq!(connections.load(Ordering::SeqCst), 2);
        assert_eq!(pool.connections(), 1);
    })
    .await;
}

#[tokio::test]
async fn a_pool_outlives_its_clients() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, connections) = counting_server().await;
        let pool = mcp_http::HttpPool::new(&options()).unwrap();
        let shared = || {
            let mut o = options().with_pool(pool.clone());
            o.event_stream = false;
            mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap()
        };
        // Concurrent calls of two clients open a few connections; later
        // clients find them kept after their makers are gone.
        let (a, b) = (shared(), shared());
        a.initialize().await.unwrap();
        b.initialize().await.unwrap();
        let calls = (0..8).map(|i| {
            let client = if i % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move { client.ping().await })
        });
        for call in calls {
            call.await.unwrap().unwrap();
        }
        let opened = connections.load(Ordering::SeqCst);
        assert!((1..=9).contains(&opened), "{opened} connections for 8 concurrent calls");
        drop((a, b));
        let c = shared();
        for _ in 0..10 {
            c.ping().await.unwrap();
        }
        assert_eq!(connections.load(Ordering::SeqCst), opened);
        assert!(format!("{pool:?}").starts_with("HttpPool"));
    })
    .await;
}

#[tokio::test]
async fn concurrent_calls_open_connections_that_later_calls_reuse() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, connections) = counting_server().await;
        let mut o = options();
        o.event_stream = false;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        client.ping().await.unwrap();
        let burst = || async {
            let mut calls = tokio::task::JoinSet::new();
            for _ in 0..8 {
                let client = client.clone();
                calls.spawn(async move { client.ping().await });
            }
            while let Some(result) = calls.join_next().await {
                result.unwrap().unwrap();
            }
        };
        burst().await;
        let opened = connections.load(Ordering::SeqCst);
        assert!((1..=9).contains(&opened), "{opened} connections for 8 concurrent calls");
        // The connections are kept: more bursts and calls open none.
        burst().await;
        for _ in 0..20 {
            client.ping().await.unwrap();
        }
        assert_eq!(connections.load(Ordering::SeqCst), opened);
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_connection_idle_longer_than_the_pool_timeout_is_not_reused() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, connections) = counting_server().await;
        let mut o = options();
        o.event_stream = false;
        o.pool_idle_timeout = Duration::from_millis(50);
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        client.ping().await.unwrap();
        client.ping().await.unwrap();
        assert_eq!(connections.load(Ordering::SeqCst), 1);
        tokio::time::sleep(Duration::from_millis(120)).await;
        client.ping().await.unwrap();
        assert_eq!(connections.load(Ordering::SeqCst), 2);
        client.close().await.unwrap();
    })
    .await;
}

/// A server that answers one request per connection (JSON, keep-alive
/// implied) and then closes the connection silently after `linger`.
async fn one_shot_server(linger: Duration) -> (SocketAddr, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                // Headers, then a body of Content-Length bytes.
                let (head_end, length) = loop {
                    let Ok(n) = stream.read(&mut chunk).await else { return };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        let length = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        break (end + 4, length);
                    }
                };
                while buf.len() < head_end + length {
                    let Ok(n) = stream.read(&mut chunk).await else { return };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                let message: Value = serde_json::from_slice(&buf[head_end..head_end + length])
                    .unwrap_or(Value::Null);
                let reply = match message.get("id") {
                    None => String::new(),
                    Some(id) => {
                        let result = if message["method"] == "initialize" {
                            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                                   "serverInfo": {"name": "one-shot", "version": "1"}})
                        } else {
                            json!({})
                        };
                        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
                    }
                };
                let status = if reply.is_empty() { "202 Accepted" } else { "200 OK" };
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{reply}",
                    reply.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
                tokio::time::sleep(linger).await;
            });
        }
    });
    (addr, connections)
}

#[tokio::test]
async fn a_kept_connection_the_server_closed_is_replaced() {
    bounded_by(TEST_TIMEOUT, async {
        // The server closes each connection after its reply (at once, or a
        // little later) without saying so; by the next call the client has
        // seen the close, drops the connection and opens another.
        for linger in [Duration::ZERO, Duration::from_millis(5)] {
            let (addr, connections) = one_shot_server(linger).await;
            let client = mcp_http::connect(&format!("http://{addr}/mcp"), options()).unwrap();
            client.initialize().await.unwrap();
            for i in 0..10 {
                tokio::time::sleep(linger + Duration::from_millis(20)).await;
                client.ping().await.unwrap_or_else(|e| panic!("call {i} (linger {linger:?}): {e}"));
            }
            // One connection per exchange: initialize, 10 pings, and
            // `notifications/initialized`, sent right after initialize's
            // reply, unless it met the connection the server was closing
            // at that moment (the keep-alive race: it was written, so it is
            // not sent again, and its failure is only logged).
            let opened = connections.load(Ordering::SeqCst);
            assert!((11..=12).contains(&opened), "linger {linger:?}: {opened} connections");
            client.close().await.unwrap();
        }
    })
    .await;
}

#[tokio::test]
async fn a_read_that_met_a_closing_kept_connection_is_sent_again() {
    bounded_by(TEST_TIMEOUT, async {
        // Back to back, with no pause: a ping often goes out on the
        // connection the server is closing (the keep-alive race). A ping is
        // idempotent, so it is sent again on a new connection, and every
        // one is answered.
        let (addr, connections) = one_shot_server(Duration::ZERO).await;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), options()).unwrap();
        client.initialize().await.unwrap();
        for i in 0..50 {
            client.ping().await.unwrap_or_else(|e| panic!("ping {i}: {e}"));
        }
        assert!(connections.load(Ordering::SeqCst) >= 51);
        client.close().await.unwrap();
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

#[tokio::test]
async fn a_caller_tls_config_is_used_and_connect_errors_are_typed() {
    bounded_by(TEST_TIMEOUT, async {
        // A port nothing listens on (bound, then released).
        let port = {
            let l = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
            l.local_addr().unwrap().port()
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        let mut o = options();
        o.tls = Some(Arc::new(tls));
        o.auth = StaticAuth::Bearer("tls-token".into());
        let url = format!("https://127.0.0.1:{port}/mcp?k=v");
        let client = mcp_http::connect(&url, o).unwrap();
        let err = client.ping().await.unwrap_err();
        assert!(matches!(err, Error::Connect { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.starts_with(&format!("MCP server https://127.0.0.1:{port}: ")), "{text}");
        assert!(!text.contains("tls-token") && !text.contains("k=v"), "{text}");
    })
    .await;
}

#[cfg(feature = "proxy")]
/// A CONNECT proxy that only tunnels to loopback, and logs each CONNECT
/// line with its Proxy-Authorization value.
async fn connect_proxy() -> (SocketAddr, Arc<std::sync::Mutex<Vec<(String, Option<String>)>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = log.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let seen = seen.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
                    match client.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let target = head.split_whitespace().nth(1).unwrap_or("").to_owned();
                let auth = head
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix("proxy-authorization: ")
                            .or_else(|| l.strip_prefix("Proxy-Authorization: "))
                    })
                    .map(str::to_owned);
                seen.lock().unwrap().push((target.clone(), auth));
                if !head.starts_with("CONNECT ") || !target.starts_with("127.0.0.1:") {
                    let _ = client.write_all(b"HTTP/1.1 403 Forbidden\r\n\r\n").await;
                    return;
                }
                let Ok(mut upstream) = tokio::net::TcpStream::connect(&target).await else {
                    return;
                };
                if client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await.is_err() {
                    return;
                }
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (addr, log)
}

#[cfg(feature = "proxy")]
#[tokio::test]
async fn a_configured_proxy_tunnels_with_connect() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let (proxy, log) = connect_proxy().await;
        let mut o = options();
        o.proxy = mcp_http::ProxyConfig::Url {
            url: format!("http://scott:tiger@{proxy}"),
            no_proxy: None,
        };
        // Tunnels are counted: the standalone stream would hold one of its own.
        o.event_stream = false;
        let client = mcp_http::connect(&server.url(), o).unwrap();
        assert!(client.transport().is_proxied());
        for i in 0..5 {
            assert_eq!(echo(&client, &format!("p{i}")).await.unwrap(), format!("p{i}"));
        }
        let log = log.lock().unwrap().clone();
        // One tunnel, kept alive for every call.
        assert_eq!(log.len(), 1, "{log:?}");
        assert_eq!(log[0].0, server.local_addr().to_string());
        assert_eq!(log[0].1.as_deref(), Some("Basic c2NvdHQ6dGlnZXI="));

        // no_proxy bypasses it; a bad proxy URL is refused without echoing it.
        let mut o = options();
        o.proxy = mcp_http::ProxyConfig::Url {
            url: format!("http://{proxy}"),
            no_proxy: Some("127.0.0.1".into()),
        };
        let client = mcp_http::connect(&server.url(), o).unwrap();
        assert!(!client.transport().is_proxied());
        client.ping().await.unwrap();
        let mut o = options();
        o.proxy = mcp_http::ProxyConfig::Url {
            url: "socks4://u:hidden@127.0.0.1:1".into(),
            no_proxy: None,
        };
        let err = mcp_http::connect(&server.url(), o).unwrap_err();
        assert!(matches!(err, Error::InvalidProxy { .. }) && !err.to_string().contains("hidden"));
    })
    .await;
}

#[cfg(feature = "proxy")]
#[tokio::test]
async fn a_refused_tunnel_is_a_connect_error() {
    bounded_by(TEST_TIMEOUT, async {
        let (proxy, _) = connect_proxy().await;
        let mut o = options();
        o.proxy = mcp_http::ProxyConfig::Url { url: format!("http://{proxy}"), no_proxy: None };
        // The test proxy only tunnels to 127.0.0.1; nothing is contacted there.
        let client = mcp_http::connect("http://localhost:9/mcp", o).unwrap();
        let err = client.ping().await.unwrap_err();
        assert!(matches!(err, Error::Connect { .. }), "{err:?}");
        assert!(err.to_string().starts_with("MCP server http://localhost:9: "), "{err}");
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

#[tokio::test]
async fn dropping_a_call_cancels_it() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        client.initialize().await.unwrap();
        let call = client.call_tool_with("hang", (), RequestOptions::default());
        assert!(tokio::time::timeout(Duration::from_millis(200), call).await.is_err());
        let mut cancelled = false;
        for _ in 0..100 {
            if server.rpc_methods().iter().any(|m| m == "notifications/cancelled") {
                cancelled = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(cancelled, "{:?}", server.rpc_methods());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_share_one_session_renewal() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig { expire_session_after: Some(12), ..HttpConfig::default() };
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        client.initialize().await.unwrap();
        for round in 0..3 {
            // Pings: a read may be sent again when a concurrent renewal
            // ended its session while it was out.
            let calls = (0..8).map(|_| {
                let client = client.clone();
                tokio::spawn(async move { client.ping().await })
            });
            for call in calls {
                call.await.unwrap().unwrap();
            }
            assert_eq!(echo(&client, &format!("r{round}")).await.unwrap(), format!("r{round}"));
        }
        let inits = server.rpc_methods().iter().filter(|m| *m == "initialize").count();
        // 27 calls and 2 handshake messages per session of 12 POSTs: a few
        // renewals, never one per request.
        assert!((2..=6).contains(&inits), "{inits}");
    })
    .await;
}

#[tokio::test]
async fn a_refused_initialize_without_a_legacy_server_reports_the_refusal() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig { status: Some(400), ..HttpConfig::default() }).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        let err = client.initialize().await.unwrap_err();
        let Error::Status { status, ref body, ref method, .. } = err else { panic!("{err:?}") };
        assert_eq!((status, method.as_str()), (StatusCode::BAD_REQUEST, "initialize"));
        assert!(body.contains("on purpose"), "{body}");
        // The fallback was tried once.
        assert_eq!(server.request_count(&Method::GET), 1);
    })
    .await;
}

#[tokio::test]
async fn a_session_the_server_ended_is_replaced() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        client.ping().await.unwrap();
        // `crash` ends the server's session (and the connection of the call).
        let crashed = client.call_tool_with("crash", (), RequestOptions::default()).await;
        assert!(crashed.is_err());
        assert_eq!(echo(&client, "after crash").await.unwrap(), "after crash");
        assert_eq!(server.rpc_methods().iter().filter(|m| *m == "initialize").count(), 2);
    })
    .await;
}

#[tokio::test]
async fn a_legacy_session_the_server_ended_is_replaced() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig { legacy: true, ..HttpConfig::default() }).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        client.ping().await.unwrap();
        let crashed = client.call_tool_with("crash", (), RequestOptions::default()).await;
        // A tools/call is never sent twice.
        assert!(matches!(crashed, Err(Error::SessionLost { .. })), "{crashed:?}");
        assert_eq!(echo(&client, "legacy again").await.unwrap(), "legacy again");
        assert!(server.request_count(&Method::GET) >= 2);
    })
    .await;
}

#[tokio::test]
async fn an_error_without_an_id_answers_the_request() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, _) = counting_server().await;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), options()).unwrap();
        let err = client.request("unparsable", None, RequestOptions::default()).await.unwrap_err();
        assert_eq!(err.rpc_error().map(|e| e.code), Some(-32700), "{err:?}");
        client.ping().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn x_mcp_header_arguments_become_mcp_param_headers() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        // No list_tools first: the call lists the tools once to find the schema.
        let calls = [
            (
                json!({"region": "eu-west-1", "priority": 7, "dry_run": true, "note": "n"}),
                vec![
                    ("eu-west-1", "mcp-param-region"),
                    ("7", "mcp-param-priority"),
                    ("true", "mcp-param-dry-run"),
                ],
            ),
            (
                json!({"region": " Zürich", "priority": null, "dry_run": false}),
                vec![
                    ("=?base64?IFrDvHJpY2g=?=", "mcp-param-region"),
                    ("false", "mcp-param-dry-run"),
                ],
            ),
            (json!({"note": "only a note"}), vec![]),
        ];
        for (arguments, expected) in calls {
            let result = client
                .call_tool_with("annotated", args(arguments.clone()), Default::default())
                .await
                .unwrap();
            // The body is unchanged: the server got the arguments as sent.
            let echoed: Value = serde_json::from_str(&text_blocks(&result)).unwrap();
            assert_eq!(echoed, arguments);
            let post = server
                .requests()
                .into_iter()
                .rev()
                .find(|r| {
                    r.method == Method::POST
                        && header(&r.headers, "mcp-method") == Some("tools/call")
                })
                .unwrap();
            let sent: Vec<(&str, &str)> = post
                .headers
                .iter()
                .filter(|(n, _)| n.as_str().starts_with("mcp-param-"))
                .map(|(n, v)| (v.to_str().unwrap(), n.as_str()))
                .collect();
            let mut sent = sent;
            sent.sort();
            let mut expected = expected;
            expected.sort();
            assert_eq!(sent, expected, "{arguments}");
            assert_eq!(header(&post.headers, "mcp-name"), Some("annotated"));
        }
        // One tools/list for the three calls; other tools get no param headers.
        let methods = server.rpc_methods();
        assert_eq!(methods.iter().filter(|m| *m == "tools/list").count(), 1, "{methods:?}");
        assert_eq!(echo(&client, "plain").await.unwrap(), "plain");
        let last = server.last_request_headers().unwrap();
        assert!(last.keys().all(|n| !n.as_str().starts_with("mcp-param-")), "{last:?}");
    })
    .await;
}

#[tokio::test]
async fn same_origin_redirects_are_followed_when_asked() {
    bounded_by(TEST_TIMEOUT, async {
        let config = HttpConfig {
            redirect: mcp_testkit::Redirect::SameOrigin,
            require_auth: Some("redirect-token".into()),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let mut o = options();
        o.follow_redirects = true;
        o.auth = StaticAuth::Bearer("redirect-token".into());
        let client = mcp_http::connect(&server.url(), o).unwrap();
        assert_eq!(echo(&client, "moved").await.unwrap(), "moved");
        client.close().await.unwrap();

        let posts: Vec<_> =
            server.requests().into_iter().filter(|r| r.method == Method::POST).collect();
        assert!(posts.len() >= 6, "{}", posts.len());
        // Every POST to /mcp is answered 307 and sent again, the same, to /mcp/.
        for pair in posts.chunks(2) {
            let [first, second] = pair else { panic!("an unpaired POST") };
            assert_eq!((first.target.as_str(), second.target.as_str()), ("/mcp", "/mcp/"));
            for name in ["mcp-method", "authorization", "content-type", "accept", "mcp-session-id"]
            {
                assert_eq!(header(&first.headers, name), header(&second.headers, name), "{name}");
            }
        }
        assert_eq!(server.rpc_methods().iter().filter(|m| *m == "tools/call").count(), 1);
    })
    .await;
}

#[tokio::test]
async fn cross_origin_redirects_are_refused_and_get_no_credentials() {
    bounded_by(TEST_TIMEOUT, async {
        let elsewhere = server(HttpConfig::default()).await;
        let config = HttpConfig {
            redirect: mcp_testkit::Redirect::CrossOrigin(format!("{}?stolen=1", elsewhere.url())),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let mut o = options();
        o.follow_redirects = true;
        o.auth = StaticAuth::Bearer("stay-home-token".into());
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert!(matches!(err, Error::Redirect { .. }), "{err:?}");
        assert_eq!(err.status(), Some(StatusCode::TEMPORARY_REDIRECT));
        let text = format!("{err} {err:?}");
        assert!(text.contains("another origin"), "{text}");
        let port = elsewhere.local_addr().port().to_string();
        assert!(!text.contains(&port) && !text.contains("stolen"), "{text}");
        assert!(elsewhere.requests().is_empty(), "the other origin got a request");
        assert_eq!(server.request_count(&Method::POST), 1);
    })
    .await;
}

#[tokio::test]
async fn redirect_loops_are_bounded() {
    bounded_by(TEST_TIMEOUT, async {
        // A Location that names the endpoint itself: a loop.
        let config = HttpConfig {
            redirect: mcp_testkit::Redirect::CrossOrigin("/mcp".into()),
            ..HttpConfig::default()
        };
        let server = server(config).await;
        let mut o = options();
        o.follow_redirects = true;
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let err = client.initialize().await.unwrap_err();
        assert!(matches!(err, Error::Redirect { .. }), "{err:?}");
        assert!(err.to_string().contains("more than 5 redirects"), "{err}");
        assert_eq!(server.request_count(&Method::POST), 6);
    })
    .await;
}

// The stateless era (2026-07-28) and the era probe over HTTP.

fn auto() -> HttpOptions {
    let mut o = options();
    o.client.era = mcp_peer::EraChoice::Auto;
    o
}

#[tokio::test]
async fn a_stateless_server_gets_stateless_posts() {
    bounded_by(TEST_TIMEOUT, async {
        let mut config = HttpConfig::default();
        config.server.era = mcp_testkit::ServeEra::Modern;
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), auto()).unwrap();
        assert_eq!(echo(&client, "stateless").await.unwrap(), "stateless");
        assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::V2026_07_28));
        assert!(!client.transport().has_session());
        assert!(!client.transport().open_event_stream().await.unwrap());
        client.close().await.unwrap();
        let methods = server.rpc_methods();
        assert_eq!(methods[0], "server/discover");
        assert!(!methods.iter().any(|m| m == "initialize"), "{methods:?}");
        assert_eq!(server.request_count(&Method::GET), 0);
        assert_eq!(server.deletes(), 0);
        for post in server.requests().iter().filter(|r| r.method == Method::POST) {
            let h = &post.headers;
            assert_eq!(header(h, "mcp-protocol-version"), Some("2026-07-28"));
            assert!(h.get("mcp-session-id").is_none());
            assert!(h.get("mcp-method").is_some());
        }
        let calls = server.received_log();
        let echo_call = calls.iter().find(|r| r["name"] == "echo").unwrap();
        assert_eq!(echo_call["protocolVersion"], "2026-07-28");
    })
    .await;
}

#[tokio::test]
async fn the_probe_falls_back_to_a_session_and_to_the_2024_11_05_transport() {
    bounded_by(TEST_TIMEOUT, async {
        let legacy = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&legacy.url(), auto()).unwrap();
        assert_eq!(echo(&client, "old").await.unwrap(), "old");
        assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
        assert!(client.transport().has_session());
        client.close().await.unwrap();
        // The origin is remembered: the next client sends initialize first.
        let again = mcp_http::connect(&legacy.url(), auto()).unwrap();
        let before = legacy.request_count(&Method::POST);
        again.initialize().await.unwrap();
        let first = &legacy.requests()[before as usize..];
        assert!(first.iter().all(|r| header(&r.headers, "mcp-method") != Some("server/discover")));
        again.close().await.unwrap();

        let config = HttpConfig { legacy: true, ..HttpConfig::default() };
        let sse = server(config).await;
        let client = mcp_http::connect(&sse.url(), auto()).unwrap();
        assert_eq!(echo(&client, "older").await.unwrap(), "older");
        assert!(client.transport().is_legacy());
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_dual_era_server_is_spoken_to_statelessly_unless_pinned() {
    bounded_by(TEST_TIMEOUT, async {
        let mut config = HttpConfig::default();
        config.server.era = mcp_testkit::ServeEra::Both;
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), auto()).unwrap();
        client.list_tools().await.unwrap();
        assert_eq!(client.protocol_version(), Some(mcp_proto::ProtocolVersion::V2026_07_28));
        let pinned = mcp_http::connect(&server.url(), options()).unwrap();
        pinned.list_tools().await.unwrap();
        assert_eq!(pinned.protocol_version(), Some(mcp_proto::ProtocolVersion::LATEST_LEGACY));
        assert!(pinned.transport().has_session());
    })
    .await;
}

#[tokio::test]
async fn subscriptions_listen_on_a_post_stream_of_their_own() {
    bounded_by(TEST_TIMEOUT, async {
        use mcp_proto::client::ServerNotification;
        use mcp_proto::types::SubscriptionFilter;
        let mut config = HttpConfig::default();
        config.server.era = mcp_testkit::ServeEra::Modern;
        let server = server(config).await;
        let client = mcp_http::connect(&server.url(), auto()).unwrap();
        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            ..Default::default()
        };
        let mut first = client.listen(filter.clone()).await.unwrap();
        let mut second = client.listen(filter).await.unwrap();
        client
            .call_tool_with("change", args(json!({"list": "prompts"})), Default::default())
            .await
            .unwrap();
        assert_eq!(first.recv().await, Some(ServerNotification::PromptListChanged));
        assert_eq!(second.recv().await, Some(ServerNotification::PromptListChanged));
        // Closing one closes its stream; the other goes on.
        drop(first);
        client.call_tool_with("change", args(json!({})), Default::default()).await.unwrap();
        assert_eq!(second.recv().await, Some(ServerNotification::ToolListChanged));
        let listens = server
            .requests()
            .into_iter()
            .filter(|r| header(&r.headers, "mcp-method") == Some("subscriptions/listen"))
            .count();
        assert_eq!(listens, 2);
        client
            .call_tool_with("close_subscriptions", args(json!({})), Default::default())
            .await
            .unwrap();
        assert_eq!(second.recv().await, None);
        assert_eq!(second.end_reason().as_deref(), Some("the server ended the subscription"));
    })
    .await;
}

/// Serves `answer` over HTTP/1.1 on a loopback port (a scripted server
/// for one test), for the life of the test runtime.
async fn serve_fn<F, Fut>(answer: F) -> SocketAddr
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response<Full<Bytes>>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let reply = answer(req);
                    async move { Ok::<_, Infallible>(reply.await) }
                });
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    addr
}

/// A response with `status`, `content-type` and `body`.
fn reply(status: u16, kind: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap();
    r.headers_mut().insert("content-type", kind.parse().unwrap());
    r
}

/// A stateless-era server whose tool `t` gains an `x-mcp-header`
/// annotation after the first listing, and that refuses a call without the
/// header (-32020).
async fn changing_header_server() -> (SocketAddr, Arc<AtomicUsize>) {
    let lists = Arc::new(AtomicUsize::new(0));
    let count = lists.clone();
    let addr = serve_fn(move |req: Request<Incoming>| {
        let count = count.clone();
        async move {
            let region = req.headers().get("mcp-param-region").cloned();
            let body = req.into_body().collect().await.unwrap().to_bytes();
            let m: Value = serde_json::from_slice(&body).unwrap();
            let (status, result) = match m["method"].as_str().unwrap() {
                "server/discover" => (
                    200,
                    json!({"result": {"resultType": "complete",
                    "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}}),
                ),
                "tools/list" => {
                    let n = count.fetch_add(1, Ordering::SeqCst);
                    let mut region = json!({"type": "string"});
                    if n > 0 {
                        region["x-mcp-header"] = json!("Region");
                    }
                    (
                        200,
                        json!({"result": {"resultType": "complete", "ttlMs": 0,
                        "tools": [{"name": "t", "inputSchema": {"type": "object",
                            "properties": {"region": region}}}]}}),
                    )
                }
                "tools/call" if region.is_none() => (
                    400,
                    json!({"error": {
                    "code": -32020, "message": "Mcp-Param-Region is missing"}}),
                ),
                _ => (
                    200,
                    json!({"result": {"resultType": "complete",
                    "content": [{"type": "text", "text": "ok"}]}}),
                ),
            };
            let mut answer = json!({"jsonrpc": "2.0", "id": m["id"]});
            answer.as_object_mut().unwrap().extend(result.as_object().unwrap().clone());
            reply(status, "application/json", answer.to_string())
        }
    })
    .await;
    (addr, lists)
}

#[tokio::test]
async fn a_header_mismatch_relists_the_tools_and_sends_once_more() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, lists) = changing_header_server().await;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), auto()).unwrap();
        let r = client
            .call_tool_with("t", args(json!({"region": "eu-west"})), Default::default())
            .await
            .unwrap();
        assert_eq!(text_blocks(&r), "ok");
        // Listed before the call (for its headers), then again after -32020.
        assert_eq!(lists.load(Ordering::SeqCst), 2);
        // A mismatch that a new listing does not explain is the caller's.
        let err = client.call_tool_with("t", args(json!({})), Default::default()).await;
        let err = err.unwrap_err();
        assert!(
            matches!(
                err,
                Error::Protocol {
                    source: mcp_proto::client::ClientError::HeaderMismatch { .. },
                    ..
                }
            ),
            "{err:?}"
        );
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

#[tokio::test]
async fn an_sse_answer_that_is_not_json_rpc_fails_its_call_at_once() {
    bounded_by(TEST_TIMEOUT, async {
        // The answer event's JSON is cut short: its id can still be read.
        let addr = serve_fn(|req: Request<Incoming>| async move {
            let body = req.into_body().collect().await.unwrap().to_bytes();
            let m: Value = serde_json::from_slice(&body).unwrap();
            if m["method"] == "server/discover" {
                let r = json!({"jsonrpc": "2.0", "id": m["id"], "result": {"resultType": "complete",
                    "supportedVersions": ["2026-07-28"], "capabilities": {}}});
                return reply(200, "application/json", r.to_string());
            }
            let cut = format!(
                "event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"content\":[\n\n",
                m["id"]
            );
            reply(200, "text/event-stream", cut)
        })
        .await;
        let mut o = auto();
        o.request_timeout = Duration::from_secs(30);
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        client.initialize().await.unwrap();
        let started = std::time::Instant::now();
        let err = client.call_tool_with("x", args(json!({})), Default::default()).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10), "not a timeout: {err}");
        assert!(err.to_string().contains("not a valid JSON-RPC message"), "{err}");
    })
    .await;
}

#[tokio::test]
async fn a_stalled_body_ends_at_the_deadline() {
    bounded_by(TEST_TIMEOUT, async {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        // Headers and half a JSON body (or half an SSE reply), then nothing.
        for kind in ["application/json", "text/event-stream"] {
            let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
            let addr = listener.local_addr().unwrap();
            tokio::spawn(async move {
                while let Ok((mut stream, _)) = listener.accept().await {
                    tokio::spawn(async move {
                        let mut buf = vec![0u8; 65536];
                        let _ = stream.read(&mut buf).await;
                        let head = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: 1000\r\n\r\n"
                        );
                        let part = if kind == "application/json" {
                            r#"{"jsonrpc":"2.0","id":1,"result":{"proto"#
                        } else {
                            "event: message\ndata: {\"jsonrpc\":\"2.0\""
                        };
                        let _ = stream.write_all(format!("{head}{part}").as_bytes()).await;
                        tokio::time::sleep(Duration::from_secs(60)).await;
                    });
                }
            });
            let mut o = options();
            o.request_timeout = Duration::from_millis(500);
            let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
            let started = std::time::Instant::now();
            let err = client.initialize().await.unwrap_err();
            assert!(err.is_timeout(), "{kind}: {err:?}");
            assert!(started.elapsed() < Duration::from_secs(5), "{kind}: {:?}", started.elapsed());
        }
    })
    .await;
}

#[tokio::test]
async fn calls_to_an_unlisted_tool_do_not_list_the_tools_each_time() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let client = mcp_http::connect(&server.url(), options()).unwrap();
        for _ in 0..3 {
            let r =
                client.call_tool_with("no-such-tool", args(json!({})), Default::default()).await;
            assert!(r.is_err() || r.unwrap().is_error == Some(true));
        }
        let lists = server
            .requests()
            .into_iter()
            .filter(|r| header(&r.headers, "mcp-method") == Some("tools/list"))
            .count();
        // Listed once (for the first call's headers), not before each call.
        assert_eq!(lists, 1);
        client.close().await.unwrap();
    })
    .await;
}

/// A body that sends its one frame and then stays open (the server holds
/// the stream), or ends after it.
struct Held {
    data: Option<Bytes>,
    open: bool,
}

impl hyper::body::Body for Held {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        match self.data.take() {
            Some(data) => std::task::Poll::Ready(Some(Ok(hyper::body::Frame::data(data)))),
            None if self.open => std::task::Poll::Pending,
            None => std::task::Poll::Ready(None),
        }
    }
}

#[tokio::test]
async fn an_oversized_sse_answer_fails_its_call_at_once() {
    bounded_by(TEST_TIMEOUT, async {
        // A stateless-era server whose answer event is over the client's
        // event size cap, on a stream it keeps open: the answer's id is at
        // its start, so the call fails with the cause, not at its deadline.
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let service = service_fn(|req: Request<Incoming>| async move {
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let m: Value = serde_json::from_slice(&body).unwrap();
                        let (kind, data, open) = if m["method"] == "server/discover" {
                            let r = json!({"jsonrpc": "2.0", "id": m["id"], "result": {
                                "resultType": "complete", "supportedVersions": ["2026-07-28"],
                                "capabilities": {"tools": {}}}});
                            ("application/json", r.to_string(), false)
                        } else if m["method"] == "tools/list" {
                            let r = json!({"jsonrpc": "2.0", "id": m["id"], "result": {
                                "resultType": "complete", "tools": []}});
                            ("application/json", r.to_string(), false)
                        } else {
                            let big = "x".repeat(8192);
                            let r = json!({"jsonrpc": "2.0", "id": m["id"], "result": {
                                "content": [{"type": "text", "text": big}]}});
                            ("text/event-stream", format!("event: message\ndata: {r}\n\n"), true)
                        };
                        let mut resp = Response::new(Held { data: Some(data.into()), open });
                        resp.headers_mut().insert("content-type", kind.parse().unwrap());
                        Ok::<_, Infallible>(resp)
                    });
                    let _ =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        let mut o = auto();
        o.max_event_size = 4096;
        o.request_timeout = Duration::from_secs(8);
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        let started = std::time::Instant::now();
        let err =
            client.call_tool_with("x", args(json!({})), Default::default()).await.unwrap_err();
        assert!(!err.is_timeout(), "{err}");
        assert!(started.elapsed() < Duration::from_secs(4), "took {:?}", started.elapsed());
        assert!(
            matches!(
                &err,
                Error::Protocol {
                    source: mcp_proto::client::ClientError::AnswerUnreadable { .. },
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("4096-byte"), "{err}");
    })
    .await;
}

// `notifications/cancelled` reaches the server on every timeout and every
// dropped call, in both eras, even when the host closes the client at once
// (as `mcpc` does after a failed call).

/// How a test stops waiting for a call.
#[derive(Clone, Copy, Debug)]
enum GiveUp {
    /// The call's own timeout expires.
    Timeout,
    /// The caller drops the call's future.
    Drop,
}

/// Runs `hang`, gives up on it, closes the client at once, and says
/// whether the server then received `notifications/cancelled` (waiting
/// for it at most two seconds).
async fn cancelled_after_close(era: mcp_testkit::ServeEra, how: GiveUp) -> bool {
    let mut config = HttpConfig::default();
    config.server.era = era;
    let server = server(config).await;
    let client = mcp_http::connect(&server.url(), auto()).unwrap();
    client.initialize().await.unwrap();
    let quick = RequestOptions::with_timeout(Duration::from_millis(300));
    match how {
        GiveUp::Timeout => {
            let err = client.call_tool_with("hang", (), quick).await.unwrap_err();
            assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
        }
        GiveUp::Drop => {
            let call = client.call_tool_with("hang", (), RequestOptions::default());
            assert!(tokio::time::timeout(Duration::from_millis(300), call).await.is_err());
        }
    }
    client.close().await.unwrap();
    for _ in 0..100 {
        if server.rpc_methods().iter().any(|m| m == "notifications/cancelled") {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn a_timed_out_call_is_cancelled_before_the_client_closes() {
    bounded_by(TEST_TIMEOUT, async {
        assert!(cancelled_after_close(mcp_testkit::ServeEra::Legacy, GiveUp::Timeout).await);
    })
    .await;
}

#[tokio::test]
async fn a_dropped_call_is_cancelled_before_the_client_closes() {
    bounded_by(TEST_TIMEOUT, async {
        assert!(cancelled_after_close(mcp_testkit::ServeEra::Legacy, GiveUp::Drop).await);
    })
    .await;
}

#[tokio::test]
async fn a_timed_out_stateless_call_is_cancelled_before_the_client_closes() {
    bounded_by(TEST_TIMEOUT, async {
        assert!(cancelled_after_close(mcp_testkit::ServeEra::Modern, GiveUp::Timeout).await);
    })
    .await;
}

#[tokio::test]
async fn a_dropped_stateless_call_is_cancelled_before_the_client_closes() {
    bounded_by(TEST_TIMEOUT, async {
        assert!(cancelled_after_close(mcp_testkit::ServeEra::Modern, GiveUp::Drop).await);
    })
    .await;
}

/// Adds a header to every request.
#[derive(Debug)]
struct TraceHeader;

impl mcp_peer::middleware::Middleware for TraceHeader {
    fn before(
        &self,
        request: &mut mcp_peer::middleware::Outgoing<'_>,
    ) -> mcp_peer::middleware::Before {
        request.add_header("X-Trace-Id", format!("trace-{}", request.method()));
        mcp_peer::middleware::Before::Send
    }
}

#[tokio::test]
async fn extra_headers_from_a_middleware_or_the_caller_go_out_and_own_ones_are_refused() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let mut o = options();
        o.client = o.client.clone().with_middleware(Arc::new(TraceHeader));
        let client = mcp_http::connect(&server.url(), o).unwrap();
        let call = RequestOptions {
            headers: vec![("X-Tenant".into(), "acme".into())],
            ..Default::default()
        };
        let r = client.call_tool_with("echo", args(json!({"message": "h"})), call).await.unwrap();
        assert_eq!(text_blocks(&r), "h");
        let log = server.requests();
        let post = log
            .iter()
            .rfind(|r| header(&r.headers, "mcp-method") == Some("tools/call"))
            .expect("the call was sent");
        assert_eq!(header(&post.headers, "x-trace-id"), Some("trace-tools/call"));
        assert_eq!(header(&post.headers, "x-tenant"), Some("acme"));
        // The transport's own headers cannot be set.
        let sent = server.requests().len();
        for (name, value) in [
            ("Mcp-Session-Id", "forged"),
            ("Authorization", "Bearer x"),
            ("Bad Name", "value-never-shown"),
        ] {
            let call =
                RequestOptions { headers: vec![(name.into(), value.into())], ..Default::default() };
            let err = client
                .call_tool_with("echo", args(json!({"message": "h"})), call)
                .await
                .unwrap_err();
            assert!(err.to_string().contains("parameters are invalid"), "{name}: {err}");
            assert!(!err.to_string().contains(value), "{err}");
        }
        assert_eq!(server.requests().len(), sent, "nothing was sent");
        client.close().await.unwrap();
        server.shutdown().await;
    })
    .await;
}
