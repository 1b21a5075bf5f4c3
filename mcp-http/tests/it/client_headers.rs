//! Headers the client sends: static auth headers, `Mcp-Param-*` from
//! `x-mcp-header` arguments (and a relisting on a mismatch), extra headers
//! from a middleware or the caller, never the transport's own.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use http::{Method, Request};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use mcp_http::{Error, StaticAuth};
use mcp_proto::client::RequestOptions;
use mcp_test_support::{bounded_by, text_blocks};
use mcp_testkit::HttpConfig;
use serde_json::{Value, json};

use crate::client_support::{
    TEST_TIMEOUT, args, auto, echo, header, options, reply, serve_fn, server,
};

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

/// Each kind of request carries its own `Accept` and `Content-Type`: a POST
/// both media types and JSON, the standalone stream's GET the event stream
/// alone, the session's DELETE neither; the credentials go on all three.
#[tokio::test]
async fn each_method_carries_its_own_media_types() {
    bounded_by(TEST_TIMEOUT, async {
        let server = server(HttpConfig::default()).await;
        let mut o = options();
        o.auth = StaticAuth::Headers(vec![("X-Api-Key".into(), "k-1234".into())]);
        let client = mcp_http::connect(&server.url(), o).unwrap();
        client.ping().await.unwrap();
        client.close().await.unwrap();
        let requests = server.requests();
        for method in [Method::POST, Method::GET, Method::DELETE] {
            let seen: Vec<_> = requests.iter().filter(|r| r.method == method).collect();
            assert!(!seen.is_empty(), "no {method}");
            for r in seen {
                let (accept, content_type) = match method {
                    Method::POST => {
                        (Some("application/json, text/event-stream"), Some("application/json"))
                    }
                    Method::GET => (Some("text/event-stream"), None),
                    _ => (None, None),
                };
                assert_eq!(header(&r.headers, "accept"), accept, "{method}");
                assert_eq!(header(&r.headers, "content-type"), content_type, "{method}");
                assert_eq!(header(&r.headers, "x-api-key"), Some("k-1234"), "{method}");
                assert_eq!(
                    r.headers.get_all("accept").iter().count(),
                    usize::from(accept.is_some())
                );
            }
        }
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
