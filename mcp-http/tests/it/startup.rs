//! Start-up in the handshake era: the standalone GET stream is open before
//! `initialize` returns (after `notifications/initialized`), so a server's
//! first message has somewhere to go and the first request follows the
//! GET. Against a small server here that orders what it sees.

use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_http::{EventStreamState, HttpOptions};
use mcp_proto::client::{ListKind, ServerEvent};
use mcp_test_support::bounded_by;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Every test is bounded by this.
const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What the server saw, in order: `GET`, or the JSON-RPC method of a POST.
type Log = Arc<Mutex<Vec<String>>>;

/// An event-stream body that stays open while its sender lives.
struct Events(mpsc::UnboundedReceiver<Bytes>);

impl hyper::body::Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

/// Sends once when dropped.
struct Ended(mpsc::UnboundedSender<()>);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

struct Server {
    log: Log,
    /// Answer the GET with 405.
    no_stream: bool,
    /// Never answer the GET; told when its handler ends (the client gave
    /// the request up and its connection closed).
    hang: Option<mpsc::UnboundedSender<()>>,
    /// The open standalone streams' senders (kept so they stay open).
    streams: Mutex<Vec<mpsc::UnboundedSender<Bytes>>>,
}

/// A handshake-era server that sends a `notifications/tools/list_changed`
/// on the standalone stream as soon as it opens.
async fn server(no_stream: bool) -> (SocketAddr, Arc<Server>) {
    serve(Server { log: Log::default(), no_stream, hang: None, streams: Mutex::new(Vec::new()) })
        .await
}

async fn serve(state: Server) -> (SocketAddr, Arc<Server>) {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = Arc::new(state);
    let shared = state.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let shared = shared.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| answer(shared.clone(), req));
                let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    (addr, state)
}

fn full(status: StatusCode, body: Value) -> Response<BoxBody<Bytes, Infallible>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert("content-type", "application/json".parse().unwrap());
    r.headers_mut().insert("mcp-session-id", "s-1".parse().unwrap());
    r
}

fn empty(status: StatusCode) -> Response<BoxBody<Bytes, Infallible>> {
    let mut r = Response::new(Full::new(Bytes::new()).boxed());
    *r.status_mut() = status;
    r
}

async fn answer(
    server: Arc<Server>,
    req: Request<Incoming>,
) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    if req.method() == Method::GET {
        let session = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok());
        let version = req.headers().get("mcp-protocol-version").and_then(|v| v.to_str().ok());
        let seen =
            format!("GET session={} version={}", session.unwrap_or("-"), version.unwrap_or("-"));
        server.log.lock().unwrap().push(seen);
        if server.no_stream {
            return Ok(empty(StatusCode::METHOD_NOT_ALLOWED));
        }
        if let Some(ended) = &server.hang {
            let _told = Ended(ended.clone());
            std::future::pending::<()>().await;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let first = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        let _ = tx.send(Bytes::from(format!("event: message\ndata: {first}\n\n")));
        server.streams.lock().unwrap().push(tx);
        let mut r = Response::new(Events(rx).boxed());
        r.headers_mut().insert("content-type", "text/event-stream".parse().unwrap());
        return Ok(r);
    }
    if req.method() == Method::DELETE {
        return Ok(empty(StatusCode::OK));
    }
    let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or("?").to_owned();
    server.log.lock().unwrap().push(method.clone());
    match method.as_str() {
        "initialize" => Ok(full(
            StatusCode::OK,
            json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": true}},
                "serverInfo": {"name": "startup", "version": "1"},
            }}),
        )),
        _ if message.get("id").is_none() => Ok(empty(StatusCode::ACCEPTED)),
        _ => Ok(full(StatusCode::OK, json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}))),
    }
}

fn options() -> HttpOptions {
    let mut o = HttpOptions::new("startup");
    o.request_timeout = Duration::from_secs(10);
    o.client.era = mcp_peer::EraChoice::Legacy;
    o
}

#[tokio::test]
async fn the_stream_is_open_before_initialize_returns_and_delivers_the_first_notification() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, server) = server(false).await;
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut o = options();
        o.on_event = Some(Arc::new(move |e: &ServerEvent| {
            let _ = tx.send(e.clone());
        }));
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        client.initialize().await.unwrap();
        // Open before `initialize` returned, in the new session, with the
        // negotiated version.
        assert_eq!(*client.transport().watch_event_stream().borrow(), EventStreamState::Open);
        let log = server.log.lock().unwrap().clone();
        let want =
            ["initialize", "notifications/initialized", "GET session=s-1 version=2025-11-25"];
        assert_eq!(log, want, "{log:?}");

        // What the server sent the moment the stream opened arrives.
        let event = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.unwrap();
        assert_eq!(event, Some(ServerEvent::ListChanged(ListKind::Tools)));

        // The first request goes out after the stream was open.
        client.ping().await.unwrap();
        let log = server.log.lock().unwrap().clone();
        assert_eq!(log.last().map(String::as_str), Some("ping"), "{log:?}");
        assert_eq!(log.iter().filter(|m| m.starts_with("GET")).count(), 1, "{log:?}");
        client.close().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_405_to_the_get_is_remembered_and_does_not_hold_up_the_handshake() {
    bounded_by(TEST_TIMEOUT, async {
        let (addr, server) = server(true).await;
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), options()).unwrap();
        client.initialize().await.unwrap();
        assert_eq!(*client.transport().watch_event_stream().borrow(), EventStreamState::NotOffered);
        client.ping().await.unwrap();
        // Asked once: the answer is final for the session.
        assert!(!client.transport().open_event_stream().await.unwrap());
        let log = server.log.lock().unwrap().clone();
        assert_eq!(log.iter().filter(|m| m.starts_with("GET")).count(), 1, "{log:?}");
        assert_eq!(log.last().map(String::as_str), Some("ping"), "{log:?}");
    })
    .await;
}

#[tokio::test]
async fn a_get_never_answered_does_not_hold_up_the_handshake_and_is_given_up_at_the_request_timeout()
 {
    bounded_by(TEST_TIMEOUT, async {
        let (ended, mut gave_up) = mpsc::unbounded_channel();
        let (addr, server) = serve(Server {
            log: Log::default(),
            no_stream: false,
            hang: Some(ended),
            streams: Mutex::new(Vec::new()),
        })
        .await;
        let mut o = options();
        // Longer than the handshake's wait for the stream (one second).
        o.request_timeout = Duration::from_secs(2);
        let client = mcp_http::connect(&format!("http://{addr}/mcp"), o).unwrap();
        client.initialize().await.unwrap();
        assert_ne!(*client.transport().watch_event_stream().borrow(), EventStreamState::Open);
        // The opening went on in a task of its own, and gave the GET up at
        // the request timeout: its connection closed, the server's
        // handler ended.
        assert_eq!(gave_up.recv().await, Some(()));
        let log = server.log.lock().unwrap().clone();
        assert_eq!(log.iter().filter(|m| m.starts_with("GET")).count(), 1, "{log:?}");
        assert_ne!(*client.transport().watch_event_stream().borrow(), EventStreamState::Open);
        client.ping().await.unwrap();
        client.close().await.unwrap();
    })
    .await;
}
