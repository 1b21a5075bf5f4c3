//! Replies the client cannot use: a body over `max_body`, an error without
//! an id, an SSE answer that is not JSON-RPC or over `max_event_size`, a
//! body that stalls; each fails its call at once or at its deadline.

use std::convert::Infallible;
use std::net::Ipv4Addr;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_http::Error;
use mcp_proto::client::RequestOptions;
use mcp_test_support::bounded_by;
use mcp_testkit::HttpConfig;
use serde_json::{Value, json};

use crate::client_support::{
    TEST_TIMEOUT, args, auto, counting_server, options, reply, serve_fn, server,
};

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
