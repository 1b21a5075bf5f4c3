//! What the HTTP client's tests share: the bound on every test, the
//! client's options (pinned to the handshake era, or probing), the testkit's
//! Streamable HTTP server, and small scripted servers on loopback.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_http::{Error, HttpClient, HttpOptions};
use mcp_proto::client::RequestOptions;
use mcp_test_support::text_blocks;
use mcp_testkit::{HttpConfig, HttpServerHandle, serve_http};
use serde_json::{Value, json};

/// Every test is bounded by this.
pub(crate) const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Options pinned to the handshake era: these tests count and inspect its
/// exchanges (the era tests say what they choose).
pub(crate) fn options() -> HttpOptions {
    let mut o = HttpOptions::new("testkit");
    o.request_timeout = Duration::from_secs(10);
    o.client.era = mcp_peer::EraChoice::Legacy;
    o
}

pub(crate) fn auto() -> HttpOptions {
    let mut o = options();
    o.client.era = mcp_peer::EraChoice::Auto;
    o
}

pub(crate) async fn server(config: HttpConfig) -> HttpServerHandle {
    serve_http(config).await.expect("the test server starts")
}

pub(crate) fn args(v: Value) -> Option<serde_json::Map<String, Value>> {
    v.as_object().cloned()
}

pub(crate) async fn echo(client: &HttpClient, message: &str) -> Result<String, Error> {
    let r = client
        .call_tool_with("echo", args(json!({"message": message})), RequestOptions::default())
        .await?;
    Ok(text_blocks(&r))
}

pub(crate) fn header<'a>(h: &'a http::HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// A minimal Streamable HTTP server that counts TCP connections.
pub(crate) async fn counting_server() -> (SocketAddr, Arc<AtomicUsize>) {
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

/// Serves `answer` over HTTP/1.1 on a loopback port (a scripted server
/// for one test), for the life of the test runtime.
pub(crate) async fn serve_fn<F, Fut>(answer: F) -> SocketAddr
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
pub(crate) fn reply(status: u16, kind: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = StatusCode::from_u16(status).unwrap();
    r.headers_mut().insert("content-type", kind.parse().unwrap());
    r
}

/// A proxy's view of what a client sends first: the request head, read up
/// to its blank line (at most 8 KiB); `None` when the client went away.
#[cfg(feature = "proxy")]
pub(crate) async fn read_head<S: tokio::io::AsyncRead + Unpin>(client: &mut S) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// The `Proxy-Authorization` value of a request head (the name in any case).
#[cfg(feature = "proxy")]
pub(crate) fn proxy_authorization(head: &str) -> Option<&str> {
    head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("proxy-authorization").then(|| value.trim())
    })
}
